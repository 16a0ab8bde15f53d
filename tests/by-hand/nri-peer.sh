#!/bin/bash
# By hand, never in CI (it builds NRI's own Go code, which CI cannot fetch): hcashare-nri
# against a container runtime's NRI side made of NRI's mux, its generated ttrpc API and the
# real ttrpc library (tests/by-hand/nri-peer/main.go), once as NRI v0.6-v0.11 runtimes
# deliver pod events (StateChange) and once as v0.12+ do (dedicated RPCs). The CNI is a
# stub that records each run, so no device is needed: what is checked is the wire and the
# plugin's decisions. Outcomes recorded in tests/data/nri-peer/recorded.txt.
#
# Needs: the NRI and ttrpc sources as bare repositories in NRI_REPO and TTRPC_REPO (e.g. the
# `fetch` mirrors /work/.mirror/containerd+{nri,ttrpc}/repo), Debian's golang-go,
# golang-google-protobuf-dev, golang-google-grpc-dev, golang-github-sirupsen-logrus-dev,
# and build/bin/hcashare-nri.
set -eu
HERE=$(cd "$(dirname "$0")" && pwd)
BIN=$(cd "$HERE/../.." && pwd)/build/bin
NRI_REPO=${NRI_REPO:-/work/.mirror/containerd+nri/repo}
TTRPC_REPO=${TTRPC_REPO:-/work/.mirror/containerd+ttrpc/repo}
P=$(mktemp -d)
trap 'pkill -f "hcashare-nri --socket $P" 2>/dev/null; rm -rf "$P"' EXIT

# A GOPATH of NRI v0.6.1's generated API and mux, ttrpc v1.2.3, and Debian's packages.
G=$P/gopath/src
mkdir -p "$G/github.com/containerd/nri/pkg/api" "$G/github.com/containerd/ttrpc" "$G/peer"
git -C "$TTRPC_REPO" archive v1.2.3 | tar -x -C "$G/github.com/containerd/ttrpc"
for f in api.pb.go api_ttrpc.pb.go; do
  git -C "$NRI_REPO" show "v0.6.1:pkg/api/$f" >"$G/github.com/containerd/nri/pkg/api/$f"
done
for f in $(git -C "$NRI_REPO" ls-tree -r --name-only v0.6.1 pkg/net | grep '\.go$' | grep -v _test); do
  mkdir -p "$G/github.com/containerd/nri/$(dirname "$f")"
  git -C "$NRI_REPO" show "v0.6.1:$f" >"$G/github.com/containerd/nri/$f"
done
cp "$HERE/nri-peer/main.go" "$G/peer/"
(cd "$G/peer" && GO111MODULE=off GOPATH=$P/gopath:/usr/share/gocode GOPROXY=off GOFLAGS= \
  go build -o "$P/nri-peer" .)

# The CNI's node file and a DRA checkpoint with a claim in the pod's namespace, so that the
# plugin runs the CNI for it; the stub CNI records each run.
mkdir -p "$P/node" "$P/state/attachments" "$P/kubelet/plugins/rdma.hcashare.io"
chmod 755 "$P" "$P/node"
echo "{\"stateDir\": \"$P/state\", \"kubeletRootDir\": \"$P/kubelet\"}" >"$P/node/cni.json"
chmod 644 "$P/node/cni.json"
cat >"$P/kubelet/plugins/rdma.hcashare.io/checkpoint.json" <<'JSON'
{"version": 1, "claims": {"uid-peer": {"namespace": "peer-ns", "name": "rails", "cdiSpecFile": "",
  "devices": [{"requests": ["nic"], "pool": "n", "device": "d", "pciAddress": "0000:01:00.1",
  "resource": "rdma/x", "rdmaDevices": [], "cdiDeviceIds": []}]}}}
JSON
chmod 600 "$P/kubelet/plugins/rdma.hcashare.io/checkpoint.json"
cat >"$P/cni" <<STUB
#!/bin/sh
echo "\$CNI_COMMAND id=\$CNI_CONTAINERID if=\$CNI_IFNAME netns=\$CNI_NETNS args=\$CNI_ARGS stdin=\$(cat)" >>$P/calls
[ "\$CNI_COMMAND" = ADD ] && echo '{"cniVersion":"1.1.0","interfaces":[]}'
exit 0
STUB
chmod 755 "$P/cni"

HCASHARE_CNI_CONFIG=$P/node/cni.json "$BIN/hcashare-nri" --socket "$P/nri.sock" \
  --cni-bin "$P/cni" >"$P/nri.log" 2>&1 &
for mode in "" -dedicated; do
  : >"$P/calls"
  # The pod has an attachment (so that stop and remove run DEL).
  touch "$P/state/attachments/peer-sandbox-1-rdma0.json"
  echo "== runtime ${mode:-(StateChange)}"
  "$P/nri-peer" -socket "$P/nri.sock" -sync-pod -config '{"mtu": 1400}' $mode
  echo "-- CNI runs"
  cat "$P/calls"
done
echo "-- hcashare-nri's log"
cat "$P/nri.log"
