#!/usr/bin/env bash
# Regenerates the binary seed files of fuzz/corpus (the text seeds are kept as written):
#  - podresources/: kubelet pod-resources responses, from protobuf text format with protoc
#    (first byte: 0 = v1 Get, 1 = v1 List, 2 = v1alpha1 List; see podresources_fuzz.cc);
#  - rdma_netlink/: RDMA netlink reply attributes (struct nlattr: u16 length, u16 type,
#    payload padded to 4 bytes), with the attribute numbers of <rdma/rdma_netlink.h>.
# Usage: fuzz/make_binary_seeds.sh (needs protoc and python3).
set -euo pipefail
cd "$(dirname "$0")/.."
out=fuzz/corpus

encode() {  # encode SELECTOR_BYTE PROTO MESSAGE FILE < text-format
  { printf "\\x$1"; protoc -I . --encode="$3" "$2"; } >"$out/podresources/$4"
}
v1=kubelet/api/podresources_v1.proto
alpha=kubelet/api/podresources_v1alpha1.proto
list='
pod_resources { name: "pod-1" namespace: "ns-1"
  containers { name: "c" devices { resource_name: "nvidia.com/hca_vfs" device_ids: "0000:3b:00.2" } } }
pod_resources { name: "pod-1" namespace: "ns-2"
  containers { name: "c" devices { resource_name: "nvidia.com/hca_vfs" device_ids: "0000:3b:00.3" } } }
pod_resources { name: "pod-1" namespace: "ns-1"
  containers { name: "c" devices { resource_name: "nvidia.com/hca_vfs"
                                   device_ids: "0000:3b:00.4" device_ids: "0000:3b:00.2" } } }'
encode 00 "$v1" v1.GetPodResourcesResponse v1-get.bin <<'PB'
pod_resources {
  name: "pod-1" namespace: "ns-1"
  containers { name: "trainer"
    devices { resource_name: "rdma/hca_shared_devices_a" device_ids: "3" device_ids: "7"
              topology { nodes { ID: 0 } } }
    devices { resource_name: "nvidia.com/gpu" device_ids: "GPU-1" device_ids: "GPU-1" }
    cpu_ids: 4 cpu_ids: 5 }
  containers { name: "sidecar"
    devices { resource_name: "rdma/hca_shared_devices_a" device_ids: "7" device_ids: "9" }
    devices { resource_name: "rdma/empty" } }
}
PB
encode 00 "$v1" v1.GetPodResourcesResponse v1-get-empty.bin </dev/null
encode 01 "$v1" v1.ListPodResourcesResponse v1-list.bin <<<"$list"
encode 02 "$alpha" v1alpha1.ListPodResourcesResponse v1alpha1-list.bin <<<"$list"

python3 - "$out/rdma_netlink" <<'PY'
import struct, sys
DEV_INDEX, DEV_NAME, FW_VERSION, NODE_GUID, DEV_NODE_TYPE, SYS_NETNS_MODE = 1, 2, 5, 6, 14, 66

def attr(t, payload):
    raw = struct.pack("<HH", 4 + len(payload), t) + payload
    return raw + b"\0" * (-len(raw) % 4)

seeds = {
    "dev-get.bin": attr(DEV_INDEX, struct.pack("<I", 3)) + attr(DEV_NAME, b"mlx5_vf2\0")
    + attr(DEV_NODE_TYPE, b"\1") + attr(FW_VERSION, b"20.31.1014\0")
    + attr(NODE_GUID, b"\xab" * 8),
    "dev-get-no-name.bin": attr(DEV_INDEX, struct.pack("<I", 3)),
    "sys-get-shared.bin": attr(SYS_NETNS_MODE + 1, b"\7\7\7\7") + attr(SYS_NETNS_MODE, b"\1"),
    "sys-get-exclusive.bin": attr(SYS_NETNS_MODE, b"\0"),
}
for name, data in seeds.items():
    with open(f"{sys.argv[1]}/{name}", "wb") as f:
        f.write(data)
PY
