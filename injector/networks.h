// The pod's Multus networks annotation, k8s.v1.cni.cncf.io/networks, in both of its forms,
// read as Multus reads it (tests/data/multus-networks: Multus's own verdicts, case by case):
//
//   comma form  "net-a, other-ns/net-b@rdma1, net-a"   items [namespace/]name[@interface]
//   JSON form   [{"name": "net-b", "namespace": "other-ns", "interface": "rdma1"}, ...]
//
// The JSON form is the one whenever the value holds '[', '{' or '"'. Comma form: items split
// at ',', each part trimmed of spaces; namespace and name of [a-z0-9-], starting and ending
// with a letter or digit (Multus's pattern); an empty namespace or interface is none. JSON
// form: keys matched case-insensitively as Go's encoding/json matches them ("Name",
// "NAMESPACE"), the last of several winning, null leaving a member unset, "interfaceRequest"
// (Multus before 3.2) read when "interface" is absent; the name a DNS-1123 subdomain (any
// NetworkAttachmentDefinition's), the namespace a label. Other Multus keys (ips, mac,
// cni-args, ...) are ignored. Where Multus accepts what can only fail later, the parser
// refuses at once with the reason: an empty name (Multus would look up a definition named
// ""), an interface name the kernel refuses (':', ".", "..", over 15 bytes, '/', spaces). An
// element without a namespace is in the pod's. An empty annotation names no network. Every
// error names the item and says what to fix.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace hcashare::injector {

// The pod annotation read.
inline constexpr char kNetworksAnnotation[] = "k8s.v1.cni.cncf.io/networks";
// The largest annotation value accepted: Kubernetes' cap on all of an object's annotations
// together, so no stored pod can carry a larger one.
inline constexpr size_t kMaxNetworksAnnotationBytes = 256 * 1024;
// The most network attachments one pod may name.
inline constexpr size_t kMaxNetworks = 128;
// The longest Linux interface name (IFNAMSIZ - 1).
inline constexpr size_t kMaxInterfaceNameBytes = 15;

// One attachment the pod asks for.
struct NetworkRef {
  std::string ns;         // the NetworkAttachmentDefinition's namespace (never empty)
  std::string name;       // its name
  std::string interface;  // the interface name asked for, "" for Multus's default (net<N>)

  // "ns/name", as messages name the network.
  std::string Key() const { return ns + "/" + name; }
  bool operator==(const NetworkRef& o) const {
    return ns == o.ns && name == o.name && interface == o.interface;
  }
};

// Parses `annotation` (the value of kNetworksAnnotation) into the attachments it names, in
// order (repeats kept: each is one attachment). `pod_namespace` is used for items that name
// no namespace. InvalidArgument, naming the item and the fix, for a value over
// kMaxNetworksAnnotationBytes, more than kMaxNetworks items, an empty item, a bad name, a
// JSON value that is not an array of objects, or an item without a namespace when
// `pod_namespace` is empty.
Result<std::vector<NetworkRef>> ParseNetworks(std::string_view annotation,
                                              const std::string& pod_namespace);

// True for a DNS-1123 label: 1-63 of [a-z0-9-], starting and ending with [a-z0-9].
bool IsDns1123Label(std::string_view s);
// True for a DNS-1123 subdomain: 1-253 characters, dot-separated DNS-1123 labels.
bool IsDns1123Subdomain(std::string_view s);
// True for a name the kernel takes for a network interface: 1-15 bytes, not "." or "..", no
// '/', ':' or whitespace.
bool IsInterfaceName(std::string_view s);

}  // namespace hcashare::injector
