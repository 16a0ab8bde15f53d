// Fuzzes the RDMA netlink reply parsers, ParseSysGetAttributes and ParseDevGetAttributes,
// on the attribute bytes that follow the nlmsghdr.
// Invariants beyond "no crash": a parsed device has a non-empty name without NUL that is
// no longer than the input; re-encoding it (index and name attributes, as the kernel does)
// parses to the same device; SysGet accepts the encoding of both modes.
#include <linux/netlink.h>
#include <rdma/rdma_netlink.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "fuzz/fuzz_check.h"
#include "nl/rdma_netlink.h"

namespace {

// Appends one netlink attribute (header, payload, padding to 4 bytes) to `out`.
void PutAttr(uint16_t type, const void* payload, size_t len, std::vector<uint8_t>* out) {
  nlattr hdr{};
  hdr.nla_len = static_cast<uint16_t>(NLA_HDRLEN + len);
  hdr.nla_type = type;
  const size_t start = out->size();
  out->resize(start + NLA_ALIGN(hdr.nla_len));
  std::memcpy(out->data() + start, &hdr, sizeof(hdr));
  std::memcpy(out->data() + start + NLA_HDRLEN, payload, len);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto mode = hcashare::ParseSysGetAttributes(data, size);
  (void)mode;

  const auto dev = hcashare::ParseDevGetAttributes(data, size);
  if (!dev.ok()) return 0;
  FUZZ_CHECK(!dev->name.empty());
  FUZZ_CHECK(dev->name.size() <= size);
  FUZZ_CHECK(dev->name.find('\0') == std::string::npos);

  if (NLA_HDRLEN + dev->name.size() + 1 > UINT16_MAX) return 0;  // no room for the NUL
  std::vector<uint8_t> encoded;
  PutAttr(RDMA_NLDEV_ATTR_DEV_INDEX, &dev->index, sizeof(dev->index), &encoded);
  PutAttr(RDMA_NLDEV_ATTR_DEV_NAME, dev->name.c_str(), dev->name.size() + 1, &encoded);
  const auto again = hcashare::ParseDevGetAttributes(encoded.data(), encoded.size());
  FUZZ_CHECK(again.ok());
  FUZZ_CHECK(again->index == dev->index && again->name == dev->name);

  for (uint8_t value : {0, 1}) {
    std::vector<uint8_t> sys;
    PutAttr(RDMA_NLDEV_SYS_ATTR_NETNS_MODE, &value, 1, &sys);
    const auto parsed = hcashare::ParseSysGetAttributes(sys.data(), sys.size());
    FUZZ_CHECK(parsed.ok());
    FUZZ_CHECK(*parsed == (value == 1 ? hcashare::RdmaNetnsMode::kShared
                                      : hcashare::RdmaNetnsMode::kExclusive));
  }
  return 0;
}
