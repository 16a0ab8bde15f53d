#include "nl/vf_guid.h"

#include <linux/if_link.h>
#include <linux/rtnetlink.h>
#include <netlink/attr.h>
#include <netlink/msg.h>

#include <cstdio>
#include <cstring>

namespace hcashare {
namespace {

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

Result<uint64_t> ParseGuid(std::string_view text) {
  constexpr size_t kLength = 8 * 2 + 7;
  const auto bad = [&](const std::string& why) {
    return Status::InvalidArgument("GUID \"" + std::string(text.substr(0, 64)) +
                                   (text.size() > 64 ? "..." : "") + "\" " + why +
                                   " (expected 8 hex bytes joined by ':', e.g. "
                                   "02:00:00:00:00:00:00:01)");
  };
  if (text.size() != kLength) {
    return bad("has " + std::to_string(text.size()) + " characters, not " +
               std::to_string(kLength));
  }
  uint64_t guid = 0;
  for (size_t i = 0; i < 8; ++i) {
    const size_t at = i * 3;
    if (i > 0 && text[at - 1] != ':') return bad("is not separated by ':'");
    const int hi = HexDigit(text[at]), lo = HexDigit(text[at + 1]);
    if (hi < 0 || lo < 0) return bad("has a character that is not a hex digit");
    guid = (guid << 8) | static_cast<uint64_t>(hi << 4 | lo);
  }
  return guid;
}

std::string FormatGuid(uint64_t guid) {
  char buf[24];
  std::snprintf(buf, sizeof(buf), "%02x:%02x:%02x:%02x:%02x:%02x:%02x:%02x",
                static_cast<unsigned>(guid >> 56 & 0xff), static_cast<unsigned>(guid >> 48 & 0xff),
                static_cast<unsigned>(guid >> 40 & 0xff), static_cast<unsigned>(guid >> 32 & 0xff),
                static_cast<unsigned>(guid >> 24 & 0xff), static_cast<unsigned>(guid >> 16 & 0xff),
                static_cast<unsigned>(guid >> 8 & 0xff), static_cast<unsigned>(guid & 0xff));
  return buf;
}

VfGuids ParseVfGuids(const nlmsghdr* hdr, uint32_t vf) {
  VfGuids out;
  if (hdr == nullptr || hdr->nlmsg_type != RTM_NEWLINK) return out;
  nlattr* tb[IFLA_MAX + 1] = {};
  // libnl's parser takes a non-const header but does not write to it.
  auto* msg = const_cast<nlmsghdr*>(hdr);
  if (nlmsg_parse(msg, sizeof(ifinfomsg), tb, IFLA_MAX, nullptr) < 0) return out;
  if (tb[IFLA_VFINFO_LIST] == nullptr) return out;
  nlattr* info = nullptr;
  int rem = 0;
  nla_for_each_nested(info, tb[IFLA_VFINFO_LIST], rem) {
    if (nla_type(info) != IFLA_VF_INFO) continue;
    nlattr* vf_tb[IFLA_VF_MAX + 1] = {};
    if (nla_parse_nested(vf_tb, IFLA_VF_MAX, info, nullptr) < 0) continue;
    for (auto [type, field] :
         {std::pair{IFLA_VF_IB_NODE_GUID, &out.node}, std::pair{IFLA_VF_IB_PORT_GUID, &out.port}}) {
      const nlattr* a = vf_tb[type];
      if (a == nullptr || nla_len(a) < static_cast<int>(sizeof(ifla_vf_guid))) continue;
      ifla_vf_guid g;
      std::memcpy(&g, nla_data(a), sizeof(g));
      if (g.vf == vf) *field = g.guid;
    }
  }
  return out;
}

}  // namespace hcashare
