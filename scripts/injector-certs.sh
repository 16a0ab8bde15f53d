#!/usr/bin/env bash
# The injector's serving certificate on a cluster without cert-manager: makes a CA and a
# server certificate signed by it with openssl, then (with --apply) stores them in the
# webhook's Secret and writes the CA into the MutatingWebhookConfiguration's caBundle.
#
# Usage: scripts/injector-certs.sh [--out-dir DIR] [--apply] [options]
#   --out-dir DIR        write the files here (default: a temporary directory, removed at
#                        the end unless given): ca.crt, ca.key, tls.crt, tls.key, the
#                        Secret (secret.yaml) and the caBundle patch (webhook-patch.json)
#   --apply              kubectl apply the Secret and patch the webhook configuration;
#                        without it nothing touches a cluster (the files are the output)
#   --namespace NS       the webhook's namespace (default kube-system)
#   --service NAME       its Service, whose DNS names the certificate is for
#                        (default hcashare-injector)
#   --secret NAME        the Secret the Deployment mounts (default hcashare-injector-tls)
#   --webhook-config NAME  the MutatingWebhookConfiguration (default hcashare-injector)
#   --days N             validity of the server certificate (default 365, at most 3650);
#                        the CA gets ten times as long, at most 36500 days
#   --cluster-domain D   the cluster's DNS domain (default cluster.local)
#   --ip ADDR            also an IP address the certificate is for (IPv4 or IPv6; may be
#                        repeated): a webhook configured with clientConfig.url naming an
#                        address rather than a Service
#
# Run it again before the certificate expires: each run makes a new CA and certificate.
# With --apply, a renewal has no moment in which the API server refuses the webhook: the
# caBundle is set first to the new CA *and* the CA in use (the first of the bundle there,
# while it is unexpired), and only then the Secret changes; the webhook reloads it when the
# kubelet updates the pods' volume (a minute or two later), and either certificate
# verifies meanwhile. The next renewal drops the older CA. (webhook-patch.json holds that
# bundle; ca-bundle.crt too.) cert-manager (deploy/k8s/injector) renews on its own.
set -euo pipefail

out_dir=""
apply=0
namespace=kube-system
service=hcashare-injector
secret=hcashare-injector-tls
webhook_config=hcashare-injector
days=365
cluster_domain=cluster.local
ips=()

usage() { sed -n '/^# Usage:/,/rather than a Service$/p' "$0" | sed 's/^# \{0,1\}//'; }
die() {
  echo "injector-certs: error: $*" >&2
  exit 1
}

while [ $# -gt 0 ]; do
  case $1 in
    --out-dir) out_dir=${2:?--out-dir needs a value}; shift 2 ;;
    --apply) apply=1; shift ;;
    --namespace) namespace=${2:?--namespace needs a value}; shift 2 ;;
    --service) service=${2:?--service needs a value}; shift 2 ;;
    --secret) secret=${2:?--secret needs a value}; shift 2 ;;
    --webhook-config) webhook_config=${2:?--webhook-config needs a value}; shift 2 ;;
    --days) days=${2:?--days needs a value}; shift 2 ;;
    --cluster-domain) cluster_domain=${2:?--cluster-domain needs a value}; shift 2 ;;
    --ip) ips+=("${2:?--ip needs a value}"); shift 2 ;;
    -h | --help) usage; exit 0 ;;
    *) echo "injector-certs: unknown argument: $1" >&2; usage >&2; exit 2 ;;
  esac
done

# Names go into certificate extensions, YAML and JSON unquoted: DNS labels only.
label='[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?'
for pair in "namespace:$namespace" "service:$service" "secret:$secret" \
  "webhook-config:$webhook_config"; do
  value=${pair#*:}
  [[ $value =~ ^$label(\.$label)*$ ]] && [ ${#value} -le 253 ] ||
    die "--${pair%%:*} \"$value\" is not a DNS name (lower-case letters, digits, - and .)"
done
[[ $namespace =~ ^$label$ && $service =~ ^$label$ ]] ||
  die "--namespace and --service must be DNS labels (no dots, at most 63 characters)"
[[ $cluster_domain =~ ^$label(\.$label)*$ ]] ||
  die "--cluster-domain \"$cluster_domain\" is not a DNS name"
octet='(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9]?[0-9])'
for ip in "${ips[@]}"; do
  # IPv4 dotted quads; IPv6 in hex groups (openssl checks the rest: a bad one fails signing).
  [[ $ip =~ ^$octet(\.$octet){3}$ ]] || [[ $ip =~ ^[0-9a-fA-F:]{2,39}$ && $ip == *:*:* ]] ||
    die "--ip \"$ip\" is not an IPv4 or IPv6 address"
done
[[ $days =~ ^[1-9][0-9]{0,3}$ ]] && [ "$days" -le 3650 ] ||
  die "--days \"$days\" is not a number of days from 1 to 3650"
ca_days=$((days * 10 > 36500 ? 36500 : days * 10))

command -v openssl >/dev/null || die "openssl is not installed"
command -v base64 >/dev/null || die "base64 is not installed"
if [ "$apply" -eq 1 ]; then
  command -v kubectl >/dev/null || die "--apply needs kubectl on PATH"
fi

cleanup=""
if [ -z "$out_dir" ]; then
  out_dir=$(mktemp -d)
  cleanup=$out_dir
  trap 'rm -rf -- "$cleanup"' EXIT
else
  mkdir -p -- "$out_dir"
fi
umask 077

# The names the API server may dial: <service>.<namespace>.svc is what it uses for a
# service reference; the others cover clients inside the namespace and the full name.
dns_names=("$service" "$service.$namespace" "$service.$namespace.svc"
  "$service.$namespace.svc.$cluster_domain")
san=""
for n in "${dns_names[@]}"; do san+="${san:+,}DNS:$n"; done
for ip in "${ips[@]}"; do san+=",IP:$ip"; done

openssl req -x509 -new -nodes -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 \
  -keyout "$out_dir/ca.key" -out "$out_dir/ca.crt" -days "$ca_days" -sha256 \
  -subj "/CN=$service-ca" \
  -addext "basicConstraints=critical,CA:TRUE,pathlen:0" \
  -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null ||
  die "openssl could not make the CA"
openssl req -new -nodes -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 \
  -keyout "$out_dir/tls.key" -out "$out_dir/tls.csr" -subj "/CN=$service.$namespace.svc" \
  2>/dev/null || die "openssl could not make the server key"
# An ECDSA key signs (the TLS handshake); it does not encipher keys (RFC 5480).
printf '%s\n' "basicConstraints=critical,CA:FALSE" \
  "keyUsage=critical,digitalSignature" \
  "extendedKeyUsage=serverAuth" "subjectAltName=$san" >"$out_dir/tls.ext"
openssl x509 -req -in "$out_dir/tls.csr" -CA "$out_dir/ca.crt" -CAkey "$out_dir/ca.key" \
  -CAcreateserial -CAserial "$out_dir/ca.srl" -out "$out_dir/tls.crt" -days "$days" \
  -sha256 -extfile "$out_dir/tls.ext" 2>/dev/null || die "openssl could not sign the certificate"
rm -f -- "$out_dir/tls.csr" "$out_dir/tls.ext" "$out_dir/ca.srl"
openssl verify -CAfile "$out_dir/ca.crt" "$out_dir/tls.crt" >/dev/null ||
  die "the new certificate does not verify against the new CA"

b64() { base64 -w0 <"$1"; }
cat >"$out_dir/secret.yaml" <<EOF
apiVersion: v1
kind: Secret
metadata:
  name: $secret
  namespace: $namespace
  labels:
    app.kubernetes.io/name: hcashare-injector
    app.kubernetes.io/part-of: hcashare
    app.kubernetes.io/component: webhook
type: kubernetes.io/tls
data:
  tls.crt: $(b64 "$out_dir/tls.crt")
  tls.key: $(b64 "$out_dir/tls.key")
  ca.crt: $(b64 "$out_dir/ca.crt")
EOF
# "add" sets the member whether or not it is there already (RFC 6902).
printf '[{"op": "add", "path": "/webhooks/0/clientConfig/caBundle", "value": "%s"}]\n' \
  "$(b64 "$out_dir/ca.crt")" >"$out_dir/webhook-patch.json"

echo "injector-certs: certificate for ${dns_names[*]}, valid $days days, CA $ca_days days"
if [ "$apply" -eq 0 ]; then
  if [ -n "$cleanup" ]; then
    echo "injector-certs: nothing written or applied (--out-dir keeps the files, --apply applies them)"
  else
    echo "injector-certs: wrote $out_dir; nothing applied (--apply applies it)"
  fi
  exit 0
fi
# The CA in use: the first certificate of the caBundle there now, kept beside the new one
# while it is unexpired, so that both the running webhook's certificate and the new one
# verify until the pods have the new Secret.
current=$(kubectl get mutatingwebhookconfiguration "$webhook_config" \
  -o 'jsonpath={.webhooks[0].clientConfig.caBundle}') ||
  die "no MutatingWebhookConfiguration $webhook_config: apply deploy/k8s/injector/webhook first"
cp -- "$out_dir/ca.crt" "$out_dir/ca-bundle.crt"
if [ -n "$current" ]; then
  if base64 -d <<<"$current" >"$out_dir/ca-current.pem" 2>/dev/null &&
    openssl x509 -in "$out_dir/ca-current.pem" -out "$out_dir/ca-current.crt" 2>/dev/null; then
    if openssl x509 -in "$out_dir/ca-current.crt" -noout -checkend 0 >/dev/null; then
      cat -- "$out_dir/ca-current.crt" >>"$out_dir/ca-bundle.crt"
      echo "injector-certs: the caBundle keeps the CA in use beside the new one"
    else
      echo "injector-certs: the CA in use has expired: the caBundle holds the new CA only"
    fi
  else
    echo "injector-certs: the caBundle there is no PEM certificate: replaced by the new CA"
  fi
  rm -f -- "$out_dir/ca-current.pem" "$out_dir/ca-current.crt"
fi
printf '[{"op": "add", "path": "/webhooks/0/clientConfig/caBundle", "value": "%s"}]\n' \
  "$(b64 "$out_dir/ca-bundle.crt")" >"$out_dir/webhook-patch.json"
kubectl patch mutatingwebhookconfiguration "$webhook_config" --type=json \
  --patch-file "$out_dir/webhook-patch.json"
kubectl apply -f "$out_dir/secret.yaml"
echo "injector-certs: the caBundle of $webhook_config and Secret $namespace/$secret are set"
