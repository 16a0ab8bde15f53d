// RDMA subsystem queries over RDMA netlink (NETLINK_RDMA, libnl), behind a small
// interface with a test double.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "common/status.h"

namespace hcashare {

// The RDMA subsystem network-namespace mode (`rdma system`).
enum class RdmaNetnsMode { kShared, kExclusive };

// "shared" or "exclusive".
const char* RdmaNetnsModeName(RdmaNetnsMode mode);

class RdmaSystem {
 public:
  virtual ~RdmaSystem() = default;
  // Returns the netns mode. Unavailable when the kernel has no RDMA netlink (no RDMA
  // modules loaded); other errors for failed or malformed replies.
  virtual Result<RdmaNetnsMode> GetNetnsMode() = 0;
};

// The real implementation. Thread-safe: each call uses its own socket.
std::unique_ptr<RdmaSystem> NewRdmaNetlink();

// Parses the payload of an RDMA_NLDEV_CMD_SYS_GET reply: `data` points at the first
// netlink attribute after the nlmsghdr, `len` bytes long. InvalidArgument when the
// attributes are malformed or the mode attribute is missing or out of range.
Result<RdmaNetnsMode> ParseSysGetAttributes(const uint8_t* data, size_t len);

// A double that returns a fixed answer.
class FakeRdmaSystem final : public RdmaSystem {
 public:
  explicit FakeRdmaSystem(Result<RdmaNetnsMode> answer) : answer_(std::move(answer)) {}
  Result<RdmaNetnsMode> GetNetnsMode() override { return answer_; }
  void set_answer(Result<RdmaNetnsMode> a) { answer_ = std::move(a); }

 private:
  Result<RdmaNetnsMode> answer_;
};

}  // namespace hcashare
