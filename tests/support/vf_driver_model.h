// A model of a VF's PCI driver binding for hcashare-cni-testhost (test-only, never linked
// into a shipped binary), standing in for the kernel's in the failure-path tests and the
// state-diff oracle. It writes the real sysfs files first (cni/vf_driver.h's confined
// writes, on the fixture tree's regular `bind`/`unbind` files), then does what the kernel
// does after them:
//   - unbind: the VF's netdev (a link of the calling thread's namespace, named as the
//     tree's device net/ directory names it) is deleted, its net/ entries, class links and
//     `driver` link leave the tree, and so does its RDMA device (and the RDMA file's entry);
//   - bind: the VF's node and port GUIDs (the VF table's nodeGuid, portGuid) apply
//     (boundNodeGuid, boundPortGuid), the `driver` link comes back, and a NEW netdev
//     appears under the kernel's kind of name, ib<lowest free number> (a VXLAN link whose
//     MAC is derived from the bound port GUID, as an IPoIB address carries it), with its
//     net/ entry and class link, and, when the VF's table entry says "rdma": true, a NEW RDMA
//     device mlx5_<lowest free> in the tree and in the RDMA file (in this namespace);
//   - a bind fails (EIO, as a failed probe) while the VF's table entry counts
//     "bindFailures" (one less per failed bind; the key leaves at zero).
// Renames through the netdev backend are mirrored into the tree, as sysfs follows them.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cni/vf_driver.h"
#include "common/host.h"
#include "nl/netdev.h"

namespace hcashare::testing {

// A test table file (the VF table, the RDMA file): a JSON object. NotFound when absent.
Result<nlohmann::json> LoadTestTable(const std::string& path);

// The tree the model keeps in step with the links: set when the VF driver is made (the
// plugin's Host is known then), read by the netdev decorator.
struct ModelTree {
  std::string root;  // the host root on disk ("" until known)
};

// The driver model on the VF table in `table` and the RDMA file `rdma` ("" for none; see
// file_backends.h) and `host`'s tree.
std::unique_ptr<cni::VfDriver> NewVfDriverModel(std::string table, std::string rdma,
                                                const Host& host, std::shared_ptr<ModelTree> tree);

// `inner`, with every successful Rename mirrored into the tree's net/ entries.
std::unique_ptr<NetdevOps> NewTreeMirroringNetdevOps(std::unique_ptr<NetdevOps> inner,
                                                     std::shared_ptr<ModelTree> tree);

// The MAC the model gives a VF netdev whose bound port GUID is `guid`: 02 and the GUID's
// last five bytes ("02:00:00:00:00:00:00:5a" -> "02:00:00:00:00:5a").
inline std::string ModelMacForGuid(const std::string& guid) {
  return guid.size() == 23 ? "02:" + guid.substr(9) : "02:00:00:00:00:00";
}

// The arguments of `ip` that create the model's stand-in for a VF's IPoIB netdev: a link
// without a peer whose MAC can be set and that can move between namespaces (a VXLAN link;
// veth has a peer, ifb takes no MAC). Its VNI comes from `name` and `attempt`: a VXLAN link
// keeps its VNI across renames, so a creation that finds it taken tries the next attempt.
inline std::vector<std::string> ModelNetdevAddArgs(const std::string& name, const std::string& mac,
                                                   int attempt = 0) {
  uint32_t h = 2166136261u;
  for (unsigned char c : name) h = (h ^ c) * 16777619u;
  return {
      "link",    "add", name,
      "address", mac,   "type",
      "vxlan",   "id",  std::to_string(1 + (h + static_cast<uint32_t>(attempt) * 7919u) % 16000000),
      "dstport", "4789"};
}

}  // namespace hcashare::testing
