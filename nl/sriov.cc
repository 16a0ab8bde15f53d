#include "nl/sriov.h"

#include <linux/if_ether.h>
#include <linux/if_link.h>
#include <linux/rtnetlink.h>
#include <netlink/msg.h>
#include <netlink/route/link/sriov.h>
#include <sys/socket.h>

#include "nl/nl_util.h"
#include "nl/vf_guid.h"

namespace hcashare {
namespace {

using NlVf = std::unique_ptr<rtnl_link_vf, NlObjectPut<rtnl_link_vf, rtnl_link_vf_put>>;

constexpr std::pair<const char*, uint32_t> kLinkStates[] = {
    {"auto", IFLA_VF_LINK_STATE_AUTO},
    {"enable", IFLA_VF_LINK_STATE_ENABLE},
    {"disable", IFLA_VF_LINK_STATE_DISABLE},
};

template <typename T>
void Merge(std::optional<T>* into, const std::optional<T>& from) {
  if (from) *into = from;
}

using NlMsg = std::unique_ptr<nl_msg, NlObjectPut<nl_msg, nlmsg_free>>;

// What the RTM_GETLINK reply callback fills in.
struct GuidQuery {
  uint32_t vf = 0;
  VfGuids guids;
};

int OnPfLink(nl_msg* msg, void* arg) {
  auto* q = static_cast<GuidQuery*>(arg);
  const VfGuids found = ParseVfGuids(nlmsg_hdr(msg), q->vf);
  if (found.node) q->guids.node = found.node;
  if (found.port) q->guids.port = found.port;
  return NL_OK;
}

// VF `vf`'s GUIDs from one RTM_GETLINK of PF `pf` with its VF table (RTEXT_FILTER_VF):
// libnl's link objects do not carry them.
Result<VfGuids> ReadVfGuids(nl_sock* sock, const std::string& pf, uint32_t vf) {
  NlMsg msg(nlmsg_alloc_simple(RTM_GETLINK, 0));
  if (!msg) return Status::Internal("cannot allocate a netlink message");
  ifinfomsg ifi{};
  ifi.ifi_family = AF_UNSPEC;
  if (nlmsg_append(msg.get(), &ifi, sizeof(ifi), NLMSG_ALIGNTO) < 0 ||
      nla_put_string(msg.get(), IFLA_IFNAME, pf.c_str()) < 0 ||
      nla_put_u32(msg.get(), IFLA_EXT_MASK, RTEXT_FILTER_VF) < 0) {
    return Status::Internal("cannot build the RTM_GETLINK request for " + pf);
  }
  GuidQuery q;
  q.vf = vf;
  int err = nl_socket_modify_cb(sock, NL_CB_VALID, NL_CB_CUSTOM, OnPfLink, &q);
  if (err >= 0) err = nl_send_auto(sock, msg.get());
  if (err >= 0) err = nl_recvmsgs_default(sock);
  if (err < 0) return NlStatus(err, "read the VF GUIDs of PF " + pf);
  return q.guids;
}

class NetlinkVfOps final : public VfOps {
 public:
  Result<VfSettings> Get(const std::string& pf, int vf) override {
    ASSIGN_OR_RETURN(NlSock sock, ConnectRoute());
    ASSIGN_OR_RETURN(NlLink link, GetKernelLink(sock.get(), pf));
    // libnl's rtnl_link_vf_get walks the VF list without checking that there is one: a
    // netdev that reports no VFs (no SR-IOV, or a veth) must not get that far.
    uint32_t num_vf = 0;
    if (vf < 0 || !rtnl_link_has_vf_list(link.get()) ||
        rtnl_link_get_num_vf(link.get(), &num_vf) < 0 || static_cast<uint32_t>(vf) >= num_vf) {
      return Status::NotFound("PF " + pf + " reports no VF " + std::to_string(vf) +
                              " (its VF table has " + std::to_string(num_vf) + " entries)");
    }
    NlVf info(rtnl_link_vf_get(link.get(), static_cast<uint32_t>(vf)));
    if (!info) return Status::NotFound("PF " + pf + " reports no VF " + std::to_string(vf));
    VfSettings s;
    nl_vf_vlans_t* vlans = nullptr;
    if (rtnl_link_vf_get_vlans(info.get(), &vlans) == 0 && vlans != nullptr && vlans->size > 0) {
      s.vlan = vlans->vlans[0].vf_vlan;
      s.qos = vlans->vlans[0].vf_vlan_qos;
      s.vlan_proto = vlans->vlans[0].vf_vlan_proto == ETH_P_8021AD ? "802.1ad" : "802.1q";
    } else {
      s.vlan = 0;
      s.qos = 0;
      s.vlan_proto = "802.1q";
    }
    nl_addr* mac = nullptr;
    if (rtnl_link_vf_get_addr(info.get(), &mac) == 0 && mac != nullptr) {
      char buf[64];
      s.mac = nl_addr2str(mac, buf, sizeof(buf));
    }
    uint32_t v = 0;
    if (rtnl_link_vf_get_spoofchk(info.get(), &v) == 0) s.spoofchk = v != 0;
    if (rtnl_link_vf_get_trust(info.get(), &v) == 0) s.trust = v != 0;
    if (rtnl_link_vf_get_linkstate(info.get(), &v) == 0) {
      for (const auto& [name, value] : kLinkStates) {
        if (value == v) s.link_state = name;
      }
    }
    nl_vf_rate rate{};
    rate.api = RTNL_LINK_VF_RATE_API_NEW;
    if (rtnl_link_vf_get_rate(info.get(), &rate) == 0) {
      s.min_tx_rate = rate.min_tx_rate;
      s.max_tx_rate = rate.max_tx_rate;
    }
    ASSIGN_OR_RETURN(const VfGuids guids, ReadVfGuids(sock.get(), pf, static_cast<uint32_t>(vf)));
    if (guids.node) s.node_guid = FormatGuid(*guids.node);
    if (guids.port) s.port_guid = FormatGuid(*guids.port);
    return s;
  }

  Status Set(const std::string& pf, int vf, const VfSettings& s) override {
    ASSIGN_OR_RETURN(NlSock sock, ConnectRoute());
    ASSIGN_OR_RETURN(NlLink link, GetKernelLink(sock.get(), pf));
    uint32_t num_vf = 0;
    if (vf < 0 || rtnl_link_get_num_vf(link.get(), &num_vf) < 0 ||
        static_cast<uint32_t>(vf) >= num_vf) {
      return Status::NotFound("PF " + pf + " reports no VF " + std::to_string(vf));
    }
    NlVf info(rtnl_link_vf_alloc());
    rtnl_link_vf_set_index(info.get(), static_cast<uint32_t>(vf));
    nl_vf_vlans_t* vlans = nullptr;
    if (s.vlan) {
      if (rtnl_link_vf_vlan_alloc(&vlans, 1) < 0) return Status::Internal("vlan alloc");
      vlans->vlans[0].vf_vlan = *s.vlan;
      vlans->vlans[0].vf_vlan_qos = s.qos.value_or(0);
      vlans->vlans[0].vf_vlan_proto =
          s.vlan_proto.value_or("802.1q") == "802.1ad" ? ETH_P_8021AD : ETH_P_8021Q;
      rtnl_link_vf_set_vlans(info.get(), vlans);
      rtnl_link_vf_vlan_put(vlans);  // the VF holds its own reference
    }
    NlAddr mac;
    if (s.mac) {
      ASSIGN_OR_RETURN(mac, ParseNlAddr(*s.mac, AF_LLC));
      rtnl_link_vf_set_addr(info.get(), mac.get());
    }
    if (s.spoofchk) rtnl_link_vf_set_spoofchk(info.get(), *s.spoofchk ? 1 : 0);
    if (s.trust) rtnl_link_vf_set_trust(info.get(), *s.trust ? 1 : 0);
    if (s.link_state) {
      for (const auto& [name, value] : kLinkStates) {
        if (*s.link_state == name) rtnl_link_vf_set_linkstate(info.get(), value);
      }
    }
    if (s.min_tx_rate || s.max_tx_rate) {
      nl_vf_rate rate{};
      rate.api = RTNL_LINK_VF_RATE_API_NEW;
      rate.min_tx_rate = s.min_tx_rate.value_or(0);
      rate.max_tx_rate = s.max_tx_rate.value_or(0);
      rtnl_link_vf_set_rate(info.get(), &rate);
    }
    if (s.node_guid) {
      ASSIGN_OR_RETURN(const uint64_t guid, ParseGuid(*s.node_guid));
      rtnl_link_vf_set_ib_node_guid(info.get(), guid);
    }
    if (s.port_guid) {
      ASSIGN_OR_RETURN(const uint64_t guid, ParseGuid(*s.port_guid));
      rtnl_link_vf_set_ib_port_guid(info.get(), guid);
    }
    NlLink changes(rtnl_link_alloc());
    int err = rtnl_link_vf_add(changes.get(), info.get());
    if (err < 0) return NlStatus(err, "PF " + pf + " VF " + std::to_string(vf));
    err = rtnl_link_change(sock.get(), link.get(), changes.get(), 0);
    if (err < 0) return NlStatus(err, "set PF " + pf + " VF " + std::to_string(vf));
    return Status::Ok();
  }
};

}  // namespace

bool VfSettings::operator==(const VfSettings& o) const {
  return vlan == o.vlan && qos == o.qos && vlan_proto == o.vlan_proto && mac == o.mac &&
         spoofchk == o.spoofchk && trust == o.trust && link_state == o.link_state &&
         min_tx_rate == o.min_tx_rate && max_tx_rate == o.max_tx_rate && node_guid == o.node_guid &&
         port_guid == o.port_guid;
}

void VfSettings::MergeFrom(const VfSettings& from) {
  Merge(&vlan, from.vlan);
  Merge(&qos, from.qos);
  Merge(&vlan_proto, from.vlan_proto);
  Merge(&mac, from.mac);
  Merge(&spoofchk, from.spoofchk);
  Merge(&trust, from.trust);
  Merge(&link_state, from.link_state);
  Merge(&min_tx_rate, from.min_tx_rate);
  Merge(&max_tx_rate, from.max_tx_rate);
  Merge(&node_guid, from.node_guid);
  Merge(&port_guid, from.port_guid);
}

std::unique_ptr<VfOps> NewNetlinkVfOps() { return std::make_unique<NetlinkVfOps>(); }

}  // namespace hcashare
