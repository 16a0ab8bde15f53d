#!/bin/bash
# By hand, never in CI (it needs a kube-apiserver and etcd that CI cannot fetch): checks
# deploy/k8s/overlays/dra's ResourceSlice policy and DeviceClasses on a real API server and
# prints each case's outcome; tests/data/dra-slice-policy/recorded.json records the outcomes
# and the policy they were seen with (deploy_dra_test compares the shipped policy with it).
# Needs, under $KL (default $KL): kube-apiserver (v1.34.9 built as
# shared/reference/kube-api-and-dra.md §14 says), root/usr/bin/etcd (Debian trixie
# etcd-server), pki/{ca,server,admin}.{crt,key} and pki/sa.{key,pub} (openssl; the admin
# certificate with O=system:masters), a kubeconfig with contexts admin, agent-node-a
# (impersonating system:serviceaccount:kube-system:hcashare with the user extra
# authentication.kubernetes.io/node-name=node-a) and agent-no-node (the same without it),
# and cases/ with the slices it creates (slice-a, slice-a2, slice-b, slice-other-driver).
set -u
KL=${KL:-/tmp/kl}
K="kubectl --kubeconfig $KL/kubeconfig"
O=$(cd "$(dirname "$0")/../.." && pwd)/deploy/k8s/overlays/dra
rm -rf $KL/etcd-data
$KL/root/usr/bin/etcd --data-dir $KL/etcd-data --listen-client-urls http://127.0.0.1:2379 \
  --advertise-client-urls http://127.0.0.1:2379 --listen-peer-urls http://127.0.0.1:2380 > $KL/etcd.log 2>&1 &
ETCD=$!
$KL/kube-apiserver --etcd-servers=http://127.0.0.1:2379 --bind-address=127.0.0.1 --advertise-address=127.0.0.1 \
  --secure-port=6443 --tls-cert-file=$KL/pki/server.crt --tls-private-key-file=$KL/pki/server.key \
  --client-ca-file=$KL/pki/ca.crt --service-account-issuer=https://kubernetes.default.svc \
  --service-account-key-file=$KL/pki/sa.pub --service-account-signing-key-file=$KL/pki/sa.key \
  --service-cluster-ip-range=10.96.0.0/16 --authorization-mode=Node,RBAC --endpoint-reconciler-type=none \
  > $KL/apiserver.log 2>&1 &
KAS=$!
trap 'kill $KAS $ETCD 2>/dev/null; wait' EXIT
for i in $(seq 1 60); do $K get --raw /readyz >/dev/null 2>&1 && break; sleep 1; done
$K version 2>&1 | tail -1
echo "== apply RBAC, DeviceClasses, slice policy"
$K apply -f $O/rbac.yaml -f $O/deviceclasses.yaml -f $O/slice-policy.yaml 2>&1
sleep 3
$K get validatingadmissionpolicy hcashare-dra-resourceslices -o jsonpath='{.status}'; echo
run() { # name, context, verb args...
  local name=$1 ctx=$2; shift 2
  echo "-- $name"
  $K --context "$ctx" "$@" 2>&1 | sed 's/^/   /'
}
C=$KL/cases
run "agent of node-a creates node-a's slice (allowed)" agent-node-a create -f $C/slice-a.yaml
run "agent of node-a creates node-b's slice (refused)" agent-node-a create -f $C/slice-b.yaml
run "agent of node-a creates another driver's slice on node-a (refused)" agent-node-a create -f $C/slice-other-driver.yaml
run "agent without node info creates a node-a slice (refused)" agent-no-node create -f $C/slice-a2.yaml
run "admin creates node-b's slice (not matched: allowed)" admin create -f $C/slice-b.yaml
run "agent of node-a deletes node-b's slice (refused)" agent-node-a delete resourceslice node-b-rdma
$K get resourceslice node-b-rdma -o json | sed 's/"generation": 1/"generation": 2/' > $KL/cases/update-b.json
$K get resourceslice node-a-rdma -o json | sed 's/"generation": 1/"generation": 2/' > $KL/cases/update-a.json
run "agent of node-a updates node-b's slice with PUT (refused)" agent-node-a replace -f $KL/cases/update-b.json
run "agent of node-a updates its own slice with PUT (allowed)" agent-node-a replace -f $KL/cases/update-a.json
run "agent of node-a deletes its own slice (allowed)" agent-node-a delete resourceslice node-a-rdma
echo "== taints as stored by default gates (admin's node-b slice)"
$K get resourceslice node-b-rdma -o jsonpath='{.spec.devices[0]}'; echo
echo "== DeviceClass selectors compiled"
$K get deviceclass -o name
