// An HTTP proxy that tunnels CONNECT requests to loopback ports only, for the API client's
// proxy tests: it records each CONNECT's target and Proxy-Authorization, and can refuse
// (403) every request. One thread per connection; thread-safe.
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/status.h"
#include "common/unique_fd.h"

namespace hcashare::fake {

class FakeConnectProxy {
 public:
  // Listens on 127.0.0.1 (an ephemeral port).
  static Result<std::unique_ptr<FakeConnectProxy>> Start();
  ~FakeConnectProxy();

  int port() const { return port_; }
  // "host:port" of each CONNECT, and its Proxy-Authorization ("" when none), in order.
  std::vector<std::string> targets() const;
  std::vector<std::string> authorizations() const;
  // Answer 403 to every CONNECT from now on.
  void Refuse() { refuse_ = true; }

 private:
  FakeConnectProxy() = default;
  void Accept();
  void Serve(UniqueFd client);

  UniqueFd listener_;
  int port_ = 0;
  std::atomic<bool> refuse_{false}, stop_{false};
  mutable std::mutex mu_;
  std::vector<std::string> targets_, authorizations_;
  std::thread acceptor_;
  std::vector<std::thread> workers_;  // guarded by mu_
};

}  // namespace hcashare::fake
