// InfiniBand VF GUIDs in netlink (nl/vf_guid.h, issue 17): the text form, reading a VF's
// GUIDs from a PF's RTM_NEWLINK message, and that what libnl encodes for VfOps::Set is what
// the reader decodes (the byte order of the u64 is the risk). Messages are built in memory.
#include <linux/if_link.h>
#include <linux/rtnetlink.h>
#include <netlink/attr.h>
#include <netlink/msg.h>
#include <netlink/route/link.h>
#include <netlink/route/link/sriov.h>

#include <memory>

#include <gtest/gtest.h>

#include "nl/sriov.h"
#include "nl/vf_guid.h"

namespace hcashare {
namespace {

struct MsgFree {
  void operator()(nl_msg* m) const { nlmsg_free(m); }
};
using Msg = std::unique_ptr<nl_msg, MsgFree>;

// An RTM_NEWLINK message whose VF table lists, for each (vf, node, port), the two GUIDs.
Msg PfMessage(const std::vector<std::tuple<uint32_t, uint64_t, uint64_t>>& vfs) {
  Msg m(nlmsg_alloc_simple(RTM_NEWLINK, 0));
  ifinfomsg ifi{};
  EXPECT_EQ(nlmsg_append(m.get(), &ifi, sizeof(ifi), NLMSG_ALIGNTO), 0);
  nlattr* list = nla_nest_start(m.get(), IFLA_VFINFO_LIST);
  for (const auto& [vf, node, port] : vfs) {
    nlattr* info = nla_nest_start(m.get(), IFLA_VF_INFO);
    ifla_vf_guid n{};
    n.vf = vf;
    n.guid = node;
    ifla_vf_guid p = n;
    p.guid = port;
    EXPECT_EQ(nla_put(m.get(), IFLA_VF_IB_NODE_GUID, sizeof(n), &n), 0);
    EXPECT_EQ(nla_put(m.get(), IFLA_VF_IB_PORT_GUID, sizeof(p), &p), 0);
    nla_nest_end(m.get(), info);
  }
  nla_nest_end(m.get(), list);
  return m;
}

TEST(VfGuidTest, TextFormRoundTrips) {
  auto g = ParseGuid("02:00:00:00:00:00:00:01");
  ASSERT_TRUE(g.ok()) << g.status().ToString();
  EXPECT_EQ(*g, 0x0200000000000001ull);
  EXPECT_EQ(FormatGuid(*g), "02:00:00:00:00:00:00:01");
  auto upper = ParseGuid("AB:CD:EF:01:23:45:67:89");
  ASSERT_TRUE(upper.ok());
  EXPECT_EQ(FormatGuid(*upper), "ab:cd:ef:01:23:45:67:89");
}

TEST(VfGuidTest, MalformedTextSaysWhat) {
  for (const auto& [text, why] : std::vector<std::pair<std::string, std::string>>{
           {"02:00:00:00:00:00:01", "has 20 characters, not 23"},
           {"02-00-00-00-00-00-00-01", "not separated by ':'"},
           {"02:00:00:00:00:00:00:0g", "not a hex digit"},
           {"", "has 0 characters"},
           {"0200:0000:0000:0001::::", "not separated by ':'"}}) {
    auto g = ParseGuid(text);
    ASSERT_FALSE(g.ok()) << text;
    EXPECT_EQ(g.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(g.status().message().find(why), std::string::npos) << g.status().message();
    EXPECT_NE(g.status().message().find("8 hex bytes"), std::string::npos);
  }
}

TEST(VfGuidTest, TheRightVfsGuidsAreRead) {
  Msg m = PfMessage({{0, 0x1111, 0x2222}, {1, 0x0200000000000001ull, 0x0200000000000002ull}});
  const VfGuids one = ParseVfGuids(nlmsg_hdr(m.get()), 1);
  ASSERT_TRUE(one.node && one.port);
  EXPECT_EQ(*one.node, 0x0200000000000001ull);
  EXPECT_EQ(*one.port, 0x0200000000000002ull);
  const VfGuids zero = ParseVfGuids(nlmsg_hdr(m.get()), 0);
  EXPECT_EQ(zero.node, 0x1111u);
  EXPECT_EQ(zero.port, 0x2222u);
  const VfGuids absent = ParseVfGuids(nlmsg_hdr(m.get()), 7);
  EXPECT_FALSE(absent.node || absent.port);
}

// An Ethernet PF (no GUID attributes), a message without a VF table, a truncated GUID
// attribute and a message of another type: nothing is reported, nothing is read past.
TEST(VfGuidTest, MissingOrShortAttributesReportNothing) {
  Msg none(nlmsg_alloc_simple(RTM_NEWLINK, 0));
  ifinfomsg ifi{};
  ASSERT_EQ(nlmsg_append(none.get(), &ifi, sizeof(ifi), NLMSG_ALIGNTO), 0);
  EXPECT_FALSE(ParseVfGuids(nlmsg_hdr(none.get()), 0).node);

  Msg shortattr(nlmsg_alloc_simple(RTM_NEWLINK, 0));
  ASSERT_EQ(nlmsg_append(shortattr.get(), &ifi, sizeof(ifi), NLMSG_ALIGNTO), 0);
  nlattr* list = nla_nest_start(shortattr.get(), IFLA_VFINFO_LIST);
  nlattr* info = nla_nest_start(shortattr.get(), IFLA_VF_INFO);
  const uint32_t vf_only = 0;
  ASSERT_EQ(nla_put(shortattr.get(), IFLA_VF_IB_NODE_GUID, sizeof(vf_only), &vf_only), 0);
  nla_nest_end(shortattr.get(), info);
  nla_nest_end(shortattr.get(), list);
  EXPECT_FALSE(ParseVfGuids(nlmsg_hdr(shortattr.get()), 0).node);

  Msg other = PfMessage({{0, 1, 2}});
  nlmsg_hdr(other.get())->nlmsg_type = RTM_DELLINK;
  EXPECT_FALSE(ParseVfGuids(nlmsg_hdr(other.get()), 0).node);
  EXPECT_FALSE(ParseVfGuids(nullptr, 0).node);
}

// What libnl puts in the RTM_SETLINK request for a GUID parsed by ParseGuid (as VfOps::Set
// does) reads back as the same text.
TEST(VfGuidTest, LibnlEncodingReadsBackTheSameGuid) {
  auto node = ParseGuid("02:00:00:00:00:00:00:0a");
  auto port = ParseGuid("02:00:00:00:00:00:00:0b");
  ASSERT_TRUE(node.ok() && port.ok());
  std::unique_ptr<rtnl_link, void (*)(rtnl_link*)> orig(rtnl_link_alloc(), rtnl_link_put);
  std::unique_ptr<rtnl_link, void (*)(rtnl_link*)> changes(rtnl_link_alloc(), rtnl_link_put);
  rtnl_link_set_ifindex(orig.get(), 5);
  rtnl_link_set_name(orig.get(), "ib0");
  rtnl_link_vf* vf = rtnl_link_vf_alloc();
  rtnl_link_vf_set_index(vf, 3);
  rtnl_link_vf_set_ib_node_guid(vf, *node);
  rtnl_link_vf_set_ib_port_guid(vf, *port);
  ASSERT_EQ(rtnl_link_vf_add(changes.get(), vf), 0);
  rtnl_link_vf_put(vf);
  nl_msg* raw = nullptr;
  ASSERT_EQ(rtnl_link_build_change_request(orig.get(), changes.get(), 0, &raw), 0);
  Msg req(raw);
  // The request is an RTM_NEWLINK (libnl's change request); read it as a reply would be.
  const VfGuids got = ParseVfGuids(nlmsg_hdr(req.get()), 3);
  ASSERT_TRUE(got.node && got.port);
  EXPECT_EQ(FormatGuid(*got.node), "02:00:00:00:00:00:00:0a");
  EXPECT_EQ(FormatGuid(*got.port), "02:00:00:00:00:00:00:0b");
}

// GUIDs take part in equality and merging like every other VF setting.
TEST(VfGuidTest, SettingsCompareAndMergeGuids) {
  VfSettings a;
  a.trust = true;
  VfSettings b;
  b.node_guid = "02:00:00:00:00:00:00:01";
  b.port_guid = "02:00:00:00:00:00:00:02";
  EXPECT_FALSE(a == b);
  a.MergeFrom(b);
  EXPECT_EQ(a.node_guid, b.node_guid);
  EXPECT_EQ(a.port_guid, b.port_guid);
  EXPECT_EQ(a.trust, true);
  VfSettings c = a;
  c.port_guid = "02:00:00:00:00:00:00:03";
  EXPECT_FALSE(a == c);
}

}  // namespace
}  // namespace hcashare
