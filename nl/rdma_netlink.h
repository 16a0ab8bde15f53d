// RDMA subsystem queries over RDMA netlink (NETLINK_RDMA, libnl), behind a small
// interface (the test double is testing/fake_rdma_system.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"

namespace hcashare {

// The RDMA subsystem network-namespace mode (`rdma system`).
enum class RdmaNetnsMode { kShared, kExclusive };

// "shared" or "exclusive".
const char* RdmaNetnsModeName(RdmaNetnsMode mode);

// One RDMA device as RDMA_NLDEV_CMD_GET reports it.
struct RdmaDeviceRef {
  uint32_t index = 0;
  std::string name;
};

class RdmaSystem {
 public:
  virtual ~RdmaSystem() = default;
  // Returns the netns mode. Unavailable when the kernel has no RDMA netlink (no RDMA
  // modules loaded); other errors for failed or malformed replies.
  virtual Result<RdmaNetnsMode> GetNetnsMode() = 0;
  // The RDMA devices visible in the calling thread's network namespace.
  virtual Result<std::vector<RdmaDeviceRef>> ListDevices() = 0;
  // Moves RDMA device `name` (visible in the calling thread's namespace) into the network
  // namespace `netns_fd`. Needs netns mode exclusive. NotFound when `name` is not visible.
  virtual Status MoveToNetns(const std::string& name, int netns_fd) = 0;
};

// The real implementation. Thread-safe: each call uses its own socket.
std::unique_ptr<RdmaSystem> NewRdmaNetlink();

// Parses the payload of an RDMA_NLDEV_CMD_SYS_GET reply: `data` points at the first
// netlink attribute after the nlmsghdr, `len` bytes long. InvalidArgument when the
// attributes are malformed or the mode attribute is missing or out of range.
Result<RdmaNetnsMode> ParseSysGetAttributes(const uint8_t* data, size_t len);

// Parses one RDMA_NLDEV_CMD_GET reply's attributes (as ParseSysGetAttributes). Both the
// index and the name must be present.
Result<RdmaDeviceRef> ParseDevGetAttributes(const uint8_t* data, size_t len);

// The attributes of an RDMA_NLDEV_CMD_SET request that moves device `index` into
// `netns_fd` (what follows the nlmsghdr), in wire format.
std::vector<uint8_t> BuildSetNetnsAttributes(uint32_t index, uint32_t netns_fd);

}  // namespace hcashare
