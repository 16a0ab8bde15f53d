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
O=$(cd "$(dirname "$0")/../.." && pwd)/deploy/k8s/overlays/dra
. "$(dirname "$0")/control-plane.sh"
start_etcd
start_apiserver || exit 1
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
