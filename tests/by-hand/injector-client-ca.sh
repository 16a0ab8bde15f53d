#!/bin/bash
# By hand, never in CI (it needs a kube-apiserver and etcd that CI cannot fetch): checks the
# injector's client authentication (docs/injector.md) on a real API server, with the recipe
# the docs give: the API server presents a client certificate to the webhook through an
# AdmissionConfiguration kubeConfigFile; hcashare-webhook runs with --client-ca-file and
# --probe-address. Prints each case. Setup (kube-apiserver, etcd, pki, kubeconfig) as
# tests/by-hand/dra-slice-policy.sh; BIN is the build's bin directory.
set -u
. "$(dirname "$0")/control-plane.sh"
BIN=${BIN:-$(cd "$(dirname "$0")/../.." && pwd)/build/bin}
W=$KL/client-ca
rm -rf "$W" && mkdir -p "$W"
# The webhook's serving pair (IP SAN 127.0.0.1), and a client CA with the API server's
# client certificate.
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=serving-ca -keyout $W/sca.key -out $W/sca.crt 2>/dev/null
openssl req -newkey rsa:2048 -nodes -subj /CN=hcashare-injector -keyout $W/tls.key -out $W/tls.csr 2>/dev/null
printf 'subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth\n' >$W/san.ext
openssl x509 -req -in $W/tls.csr -CA $W/sca.crt -CAkey $W/sca.key -CAcreateserial -days 2 -extfile $W/san.ext -out $W/tls.crt 2>/dev/null
openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=webhook-client-ca -keyout $W/cca.key -out $W/client-ca.crt 2>/dev/null
openssl req -newkey rsa:2048 -nodes -subj /CN=kube-apiserver-webhook-client -keyout $W/apiserver.key -out $W/apiserver.csr 2>/dev/null
printf 'extendedKeyUsage=clientAuth\n' >$W/client.ext
openssl x509 -req -in $W/apiserver.csr -CA $W/client-ca.crt -CAkey $W/cca.key -CAcreateserial -days 2 -extfile $W/client.ext -out $W/apiserver.crt 2>/dev/null
cat >$W/webhook-kubeconfig <<EOF
apiVersion: v1
kind: Config
users:
  - name: "127.0.0.1:18443"
    user: {client-certificate: $W/apiserver.crt, client-key: $W/apiserver.key}
EOF
cat >$W/admission.yaml <<EOF
apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
  - name: MutatingAdmissionWebhook
    configuration:
      apiVersion: apiserver.config.k8s.io/v1
      kind: WebhookAdmissionConfiguration
      kubeConfigFile: $W/webhook-kubeconfig
EOF
start_etcd
start_apiserver --admission-control-config-file=$W/admission.yaml || exit 1
$K version 2>&1 | tail -1
cat <<EOF | $K apply -f - >/dev/null
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: network-attachment-definitions.k8s.cni.cncf.io}
spec:
  group: k8s.cni.cncf.io
  scope: Namespaced
  names: {plural: network-attachment-definitions, singular: network-attachment-definition, kind: NetworkAttachmentDefinition, shortNames: [net-attach-def]}
  versions:
    - name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec: {type: object, properties: {config: {type: string}}}
EOF
$K create namespace team-a >/dev/null
$K -n team-a create serviceaccount default >/dev/null  # no controller-manager here
sleep 2
cat <<EOF | $K apply -f - >/dev/null
apiVersion: k8s.cni.cncf.io/v1
kind: NetworkAttachmentDefinition
metadata:
  name: rdma-a
  namespace: team-a
  annotations: {k8s.v1.cni.cncf.io/resourceName: rdma/vfs_a}
spec: {config: '{"cniVersion": "1.0.0", "type": "hcashare-cni"}'}
EOF
"$BIN/hcashare-webhook" --tls-cert-file=$W/tls.crt --tls-private-key-file=$W/tls.key \
  --client-ca-file=$W/client-ca.crt --listen-address=127.0.0.1:18443 \
  --probe-address=127.0.0.1:18444 --kubeconfig=$KL/kubeconfig > $W/webhook.log 2>&1 &
WH=$!
EXTRA_PIDS=$WH
for i in $(seq 1 50); do curl -s --cacert $W/sca.crt https://127.0.0.1:18444/readyz 2>/dev/null | grep -q ok && break; sleep 0.2; done
echo "-- 1 probes without a certificate: $(curl -s -o /dev/null -w '%{http_code}' --cacert $W/sca.crt https://127.0.0.1:18444/readyz)"
echo "-- 2 a review on the probes' port: $(curl -s -o /dev/null -w '%{http_code}' --cacert $W/sca.crt -X POST -d '{}' https://127.0.0.1:18444/mutate)"
echo "-- 3 a review without a certificate: $(curl -s -o /dev/null -w '%{http_code}' --cacert $W/sca.crt -X POST -d '{}' https://127.0.0.1:18443/mutate 2>&1; echo " curl exit $?")"
CA_B64=$(base64 -w0 $W/sca.crt)
cat <<EOF | $K apply -f - >/dev/null
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata: {name: hcashare-injector}
webhooks:
  - name: injector.hcashare.io
    admissionReviewVersions: ["v1"]
    sideEffects: None
    failurePolicy: Fail
    reinvocationPolicy: IfNeeded
    timeoutSeconds: 5
    clientConfig: {url: "https://127.0.0.1:18443/mutate", caBundle: "$CA_B64"}
    rules: [{apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE"], resources: ["pods"], scope: Namespaced}]
    namespaceSelector: {matchExpressions: [{key: kubernetes.io/metadata.name, operator: NotIn, values: ["kube-system", "kube-public", "kube-node-lease"]}]}
    matchConditions:
      - name: names-networks
        expression: "has(object.metadata.annotations) && 'k8s.v1.cni.cncf.io/networks' in object.metadata.annotations"
EOF
sleep 2
pod() {
  cat <<EOF | $K create --dry-run=server -o jsonpath='{.spec.containers[0].resources}' -f - 2>&1
apiVersion: v1
kind: Pod
metadata: {name: trainer, namespace: team-a, annotations: {k8s.v1.cni.cncf.io/networks: rdma-a}}
spec: {containers: [{name: main, image: x}]}
EOF
}
echo "-- 4 a pod through the API server, which presents its certificate: $(pod)"
echo "-- 5 the same API server without the AdmissionConfiguration:"
kill $KAS; wait $KAS 2>/dev/null
start_apiserver
echo "   $(pod)"
echo "-- 6 the network-policy component applied without setting the API server's addresses:"
$K create namespace kube-system >/dev/null 2>&1
$K apply -f "$(dirname "$0")/../../deploy/k8s/injector/components/network-policy/networkpolicy.yaml" 2>&1 | sed 's/^/   /'
