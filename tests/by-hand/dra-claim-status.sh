#!/bin/bash
# By hand, never in CI (it needs a kube-apiserver and etcd that CI cannot fetch): checks the
# DRA driver's claim device status write (dra/claim_status.cc) on a real API server: the
# request the writer sends (PATCH <claim>/status, application/apply-patch+yaml,
# fieldManager=rdma.hcashare.io, force=true), as the driver's ServiceAccount with the
# shipped RBAC (deploy/k8s/overlays/dra/rbac.yaml), and without it; another manager's entry
# kept; an emptied apply removing ours; a device not allocated refused. Prints each case's
# HTTP code and the claim's status.devices. Setup as tests/by-hand/dra-slice-policy.sh.
set -u
O=$(cd "$(dirname "$0")/../.." && pwd)/deploy/k8s/overlays/dra
. "$(dirname "$0")/control-plane.sh"
start_etcd
start_apiserver || exit 1
$K version 2>&1 | tail -1
$K create namespace ml >/dev/null
$K create namespace kube-system >/dev/null 2>&1
cat <<EOF | $K apply -f - >/dev/null
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: rails, namespace: ml}
spec:
  devices:
    requests:
      - name: nic
        exactly: {deviceClassName: rdma-vf.hcashare.io}
      - name: gpu
        exactly: {deviceClassName: gpu.nvidia.com}
EOF
# The scheduler's allocation, written as the scheduler would (status subresource).
$K -n ml patch resourceclaim rails --subresource=status --type=merge -p '{"status": {"allocation":
  {"devices": {"results": [
    {"request": "nic", "driver": "rdma.hcashare.io", "pool": "node-a", "device": "pci-0000-5e-00-2"},
    {"request": "gpu", "driver": "gpu.nvidia.com", "pool": "node-a", "device": "gpu-0"}]},
   "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["node-a"]}]}]}}}}' >/dev/null
# apply AS MANAGER BODY: one PATCH as the writer sends it; prints the HTTP code and message.
apply() {
  local as=$1 manager=$2 body=$3
  local hdr=()
  [ "$as" = admin ] || hdr=(-H "Impersonate-User: system:serviceaccount:kube-system:hcashare"
    -H "Impersonate-Group: system:serviceaccounts" -H "Impersonate-Group: system:authenticated")
  curl -s -o $KL/cs/out.json -w '%{http_code}' --cacert $KL/pki/ca.crt --cert $KL/pki/admin.crt \
    --key $KL/pki/admin.key "${hdr[@]}" -X PATCH -H 'Content-Type: application/apply-patch+yaml' \
    --data-binary "$body" \
    "https://127.0.0.1:6443/apis/resource.k8s.io/v1/namespaces/ml/resourceclaims/rails/status?fieldManager=$manager&force=true"
  echo " $(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d.get("message","") if d.get("kind")=="Status" else "")' $KL/cs/out.json)"
}
devices() { $K -n ml get resourceclaim rails -o jsonpath='{.status.devices}'; echo; }
ours='{"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim","metadata":{"name":"rails","namespace":"ml"},"status":{"devices":[{"driver":"rdma.hcashare.io","pool":"node-a","device":"pci-0000-5e-00-2","networkData":{"interfaceName":"rdma0","hardwareAddress":"02:00:00:00:00:01","ips":["10.0.0.5/24","fd00::5/64"]}}]}}'
empty='{"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim","metadata":{"name":"rails","namespace":"ml"},"status":{"devices":[]}}'
gpu='{"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim","metadata":{"name":"rails","namespace":"ml"},"status":{"devices":[{"driver":"gpu.nvidia.com","pool":"node-a","device":"gpu-0"}]}}'
unallocated='{"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim","metadata":{"name":"rails","namespace":"ml"},"status":{"devices":[{"driver":"rdma.hcashare.io","pool":"node-a","device":"pci-0000-5e-00-9","networkData":{"interfaceName":"rdma9"}}]}}'
badip='{"apiVersion":"resource.k8s.io/v1","kind":"ResourceClaim","metadata":{"name":"rails","namespace":"ml"},"status":{"devices":[{"driver":"rdma.hcashare.io","pool":"node-a","device":"pci-0000-5e-00-2","networkData":{"ips":["10.0.0.5"]}}]}}'
echo "-- 1 the driver's SA without the shipped RBAC: $(apply sa rdma.hcashare.io "$ours")"
$K apply -f $O/rbac.yaml >/dev/null; sleep 2
echo "-- 2 the GPU driver's entry (admin): $(apply admin gpu.nvidia.com "$gpu")"
echo "-- 3 ours, as the SA with the shipped RBAC: $(apply sa rdma.hcashare.io "$ours")"
echo "   devices: $(devices)"
echo "-- 4 a device not allocated: $(apply sa rdma.hcashare.io "$unallocated")"
echo "-- 5 an address without a prefix: $(apply sa rdma.hcashare.io "$badip")"
echo "-- 6 emptied (the CNI's DEL removed the file): $(apply sa rdma.hcashare.io "$empty")"
echo "   devices: $(devices)"
echo "-- 7 the SA writing the claim itself (not status): $(curl -s -o /dev/null -w '%{http_code}' --cacert $KL/pki/ca.crt --cert $KL/pki/admin.crt --key $KL/pki/admin.key -H "Impersonate-User: system:serviceaccount:kube-system:hcashare" -X PATCH -H 'Content-Type: application/merge-patch+json' --data-binary '{"metadata":{"labels":{"x":"y"}}}' https://127.0.0.1:6443/apis/resource.k8s.io/v1/namespaces/ml/resourceclaims/rails)"
