#include "cni/link_identity.h"

namespace hcashare::cni {

bool IsAttachedLink(const hcashare::LinkState& link, const AttachmentState& state) {
  if (!link.parent_dev.empty()) return link.parent_dev == state.device;
  if (!link.bus_info.empty()) return link.bus_info == state.device;
  // The kernel keeps the ifindex across a move only when it is free in the target, so the
  // names this attachment gave the link stand in for it (and carry a state written before
  // ifindexes were recorded); the MAC is required either way.
  const bool index_or_name_matches =
      (state.pod_ifindex != 0 && link.ifindex == state.pod_ifindex) ||
      (state.host_ifindex != 0 && link.ifindex == state.host_ifindex) ||
      link.name == state.owner.ifname || link.name == state.host_ifname;
  if (!index_or_name_matches) return false;
  for (const std::string* mac : {&state.pod_mac, &state.host_mac}) {
    if (!mac->empty() && link.mac == *mac) return true;
  }
  // The pod changed the MAC: the ifindex it has in the pod and the name ADD gave it there.
  return state.pod_ifindex != 0 && link.ifindex == state.pod_ifindex &&
         link.name == state.owner.ifname;
}

bool IsAttachedDevice(const hcashare::LinkState& link, const AttachmentState& state) {
  if (!link.parent_dev.empty()) return link.parent_dev == state.device;
  if (!link.bus_info.empty()) return link.bus_info == state.device;
  return state.pod_ifindex == 0 || link.ifindex == state.pod_ifindex;
}

Result<hcashare::LinkState> FindAttachedLink(const std::vector<hcashare::LinkState>& links,
                                             const AttachmentState& state) {
  for (const auto& link : links) {
    if (IsAttachedLink(link, state)) return link;
  }
  return Status::NotFound("no netdev of " + state.device + " in this network namespace");
}

Result<hcashare::LinkState> FindAttachedLink(NetdevOps& netdev, const AttachmentState& state) {
  ASSIGN_OR_RETURN(std::vector<hcashare::LinkState> links, netdev.List());
  return FindAttachedLink(links, state);
}

Result<hcashare::LinkState> FindChildLink(NetdevOps& netdev, const AttachmentState& state) {
  ASSIGN_OR_RETURN(std::vector<hcashare::LinkState> links, netdev.List());
  for (const auto& l : links) {
    if (state.host_ifindex == 0) {
      if (l.name == state.owner.ifname) return l;  // a state written before identities
      continue;
    }
    if ((l.kind != "macvlan" && l.kind != "ipoib") || l.link_ifindex != state.host_ifindex) {
      continue;
    }
    if (state.pod_ifindex != 0 ? l.ifindex == state.pod_ifindex : l.name == state.owner.ifname) {
      return l;
    }
  }
  return Status::NotFound("no child link " + state.owner.ifname + " of " + state.device +
                          " in this network namespace");
}

const hcashare::LinkState* LinkNamed(const std::vector<hcashare::LinkState>& links,
                                     const std::string& name) {
  for (const auto& link : links) {
    if (link.name == name) return &link;
  }
  return nullptr;
}

}  // namespace hcashare::cni
