# Sourced by the by-hand checks (never in CI): starts etcd and a kube-apiserver from $KL
# (default /tmp/kl; built as shared/reference/kube-api-and-dra.md §14 says: kube-apiserver,
# root/usr/bin/etcd from Debian trixie's etcd-server, pki/{ca,server,admin}.{crt,key},
# pki/sa.{key,pub}, a kubeconfig whose admin context holds the admin certificate) on
# 127.0.0.1:6443, and stops them (and $EXTRA_PIDS) when the script exits.
#   start_etcd                a fresh, empty etcd
#   start_apiserver [FLAG]... the API server with FLAGs added, once /readyz answers
KL=${KL:-/tmp/kl}
K="kubectl --kubeconfig $KL/kubeconfig"
ETCD=
KAS=
EXTRA_PIDS=
trap 'kill $EXTRA_PIDS $KAS $ETCD 2>/dev/null; wait' EXIT
start_etcd() {
  rm -rf "$KL/etcd-data"
  "$KL/root/usr/bin/etcd" --data-dir "$KL/etcd-data" --listen-client-urls http://127.0.0.1:2379 \
    --advertise-client-urls http://127.0.0.1:2379 --listen-peer-urls http://127.0.0.1:2380 \
    >"$KL/etcd.log" 2>&1 &
  ETCD=$!
}
start_apiserver() {
  "$KL/kube-apiserver" --etcd-servers=http://127.0.0.1:2379 --bind-address=127.0.0.1 \
    --advertise-address=127.0.0.1 --secure-port=6443 --tls-cert-file="$KL/pki/server.crt" \
    --tls-private-key-file="$KL/pki/server.key" --client-ca-file="$KL/pki/ca.crt" \
    --service-account-issuer=https://kubernetes.default.svc \
    --service-account-key-file="$KL/pki/sa.pub" --service-account-signing-key-file="$KL/pki/sa.key" \
    --service-cluster-ip-range=10.96.0.0/16 --authorization-mode=Node,RBAC \
    --endpoint-reconciler-type=none "$@" >"$KL/apiserver.log" 2>&1 &
  KAS=$!
  for _ in $(seq 1 60); do $K get --raw /readyz >/dev/null 2>&1 && return 0; sleep 1; done
  echo "kube-apiserver not ready after 60 s: see $KL/apiserver.log" >&2
  return 1
}
