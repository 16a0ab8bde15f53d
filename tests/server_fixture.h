// The device plugin's manager against the fake kubelet, on a simulated node of two
// InfiniBand HCAs (ib0/mlx5_0 on NUMA 0, ib1/mlx5_1 on NUMA 1): the fixture of
// server_test.cc and config_watch_test.cc.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/host.h"
#include "common/temp_dir.h"
#include "config/config.h"
#include "daemon/control_loop.h"
#include "testing/fake_kubelet.h"
#include "testing/fake_rdma_system.h"
#include "testing/fake_uevent_source.h"
#include "testing/sim_node.h"

namespace hcashare::dp {

using std::chrono::milliseconds;

inline constexpr const char* kResA = "rdma/hca_a";
inline constexpr const char* kResB = "rdma/hca_b";

inline config::PluginConfig ParseOrDie(const std::string& json) {
  auto out = config::ParseConfig(json);
  EXPECT_TRUE(out.ok()) << config::FormatIssues(out);
  return out.config.value_or(config::PluginConfig{});
}

// Two resources over two IB HCAs (ib0/mlx5_0 and ib1/mlx5_1).
inline std::string TwoResources(int max_a = 8, int interval = 0) {
  return R"({"periodicUpdateInterval": )" + std::to_string(interval) + R"(, "configList": [
    {"resourceName": "hca_a", "rdmaHcaMax": )" +
         std::to_string(max_a) + R"(,
     "selectors": {"ifNames": ["ib0", "ib1"]}},
    {"resourceName": "hca_b", "rdmaHcaMax": 4, "selectors": {"rdmaDevices": ["mlx5_1"]}}]})";
}

inline bool Listed(const fake::ResourceView& v, size_t n, const char* health = "Healthy") {
  if (!v.connected || v.devices.size() != n) return false;
  for (const auto& d : v.devices) {
    if (d.health() != health) return false;
  }
  return true;
}

class ServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    host_root_ = tmp_.path() + "/host";
    kubelet_root_ = tmp_.path() + "/kubelet";
    node_ = std::make_unique<fake::SimNode>(host_root_);
    ASSERT_TRUE(
        node_->AddPciFunction(fake::SimNode::IbHca("0000:3b:00.0", "ib0", "mlx5_0", 0)).ok());
    ASSERT_TRUE(
        node_->AddPciFunction(fake::SimNode::IbHca("0000:86:00.0", "ib1", "mlx5_1", 1)).ok());
    host_ = NewRootedHost(host_root_);
    kubelet_ = std::make_unique<fake::FakeKubelet>(kubelet_root_);
  }
  void TearDown() override {
    for (auto& m : managers_) m->Stop();
    kubelet_->Stop();
  }

  daemon::ControlLoopOptions Options(RegistrationMode mode = RegistrationMode::kKubelet) {
    daemon::ControlLoopOptions o;
    o.server.kubelet_root = kubelet_root_;
    o.server.device_plugin_dir = kubelet_->DevicePluginDir();
    o.server.mode = mode;
    o.server.backoff_initial = milliseconds(20);
    o.server.backoff_max = milliseconds(200);
    o.server.stream_check_delay = milliseconds(1000);
    o.health_poll_interval = milliseconds(200);
    return o;
  }

  daemon::ControlLoop* StartManager(const std::string& json, daemon::ControlLoopOptions opts) {
    // Each manager gets its own event source: a source has one reader.
    fake::FakeUeventSource* events = &uevents_;
    if (!managers_.empty()) {
      extra_events_.push_back(std::make_unique<fake::FakeUeventSource>());
      events = extra_events_.back().get();
    }
    managers_.push_back(std::make_unique<daemon::ControlLoop>(opts, *host_, rdma_, events));
    EXPECT_TRUE(managers_.back()->Start(ParseOrDie(json)).ok());
    return managers_.back().get();
  }
  daemon::ControlLoop* StartManager(const std::string& json) {
    return StartManager(json, Options());
  }

  bool WaitListed(const char* res, size_t n, milliseconds t = milliseconds(5000),
                  const char* health = "Healthy") {
    return kubelet_->WaitFor(
        res, [&](const fake::ResourceView& v) { return Listed(v, n, health); }, t);
  }

  TempDir tmp_;
  std::string host_root_, kubelet_root_;
  std::unique_ptr<fake::SimNode> node_;
  std::unique_ptr<Host> host_;
  fake::FakeRdmaSystem rdma_{Status::Unavailable("no RDMA netlink in tests")};
  fake::FakeUeventSource uevents_;  // the first manager's
  std::vector<std::unique_ptr<fake::FakeUeventSource>> extra_events_;
  std::unique_ptr<fake::FakeKubelet> kubelet_;
  std::vector<std::unique_ptr<daemon::ControlLoop>> managers_;
};

}  // namespace hcashare::dp
