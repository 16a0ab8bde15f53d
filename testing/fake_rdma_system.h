// FakeRdmaSystem: an RdmaSystem double for the CNI tests.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"
#include "nl/rdma_netlink.h"

namespace hcashare::fake {

// A double: a fixed netns-mode answer, plus devices that live in network namespaces
// (identified by their nsfs inode) and move between them, with every move recorded.
class FakeRdmaSystem final : public RdmaSystem {
 public:
  explicit FakeRdmaSystem(Result<RdmaNetnsMode> answer) : answer_(std::move(answer)) {}
  Result<RdmaNetnsMode> GetNetnsMode() override { return answer_; }
  Result<std::vector<RdmaDeviceRef>> ListDevices() override;
  Status MoveToNetns(const std::string& name, int netns_fd) override;

  void set_answer(Result<RdmaNetnsMode> a) { answer_ = std::move(a); }
  // Adds device `name` in the calling thread's current namespace.
  void AddDevice(const std::string& name);
  // The `n`-th MoveToNetns from now (1 = the next) fails with `error`.
  void FailMove(int n, Status error);
  // "<name>" per successful move, in order.
  const std::vector<std::string>& moves() const { return moves_; }

 private:
  Result<RdmaNetnsMode> answer_;
  std::vector<std::pair<std::string, uint64_t>> devices_;  // name, namespace inode
  std::vector<std::string> moves_;
  int fail_countdown_ = 0;
  Status fail_error_;
};

}  // namespace hcashare::fake
