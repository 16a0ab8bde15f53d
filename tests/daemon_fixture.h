// The fixture of the process-level tests of hcashare-device-plugin: the daemon environment
// shared with the benchmarks (testing/daemon_env.h: the demo node, a config file, a kubelet
// root), the fake kubelet, and the real daemon binary spawned against them.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/process.h"
#include "common/temp_dir.h"
#include "testing/daemon_env.h"
#include "testing/fake_kubelet.h"
#include "tests/test_util.h"

namespace hcashare::testing {

// The resource Config() defines.
inline constexpr const char* kDaemonRes = "rdma/hca_shared_devices_a";

// One shared resource of `max` IDs over ib0 and ib1.
inline std::string Config(int max) {
  return R"({"configList": [{"resourceName": "hca_shared_devices_a", "rdmaHcaMax": )" +
         std::to_string(max) + R"(, "devices": ["ib0", "ib1"]}]})";
}

class DaemonTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(env_.Prepare().ok());
    kubelet_ = std::make_unique<fake::FakeKubelet>(kubelet_root_);
  }

  // Replaces the config file.
  void WriteConfig(const std::string& text) { env_.WriteConfig(text); }

  // Starts the daemon on the simulated node and the kubelet root, with `extra` flags; its
  // output goes to `log` in the temporary directory.
  Result<Subprocess> Spawn(const std::vector<std::string>& extra, const std::string& log) {
    return env_.Spawn(BinDir() + "/hcashare-device-plugin", extra, tmp_.path() + "/" + log);
  }

  // Waits until the kubelet follows kDaemonRes with `n` devices.
  bool WaitDevices(size_t n, std::chrono::milliseconds t = std::chrono::milliseconds(10000)) {
    return kubelet_->WaitFor(
        kDaemonRes,
        [&](const fake::ResourceView& v) { return v.connected && v.devices.size() == n; }, t);
  }

  fake::DaemonEnv env_;
  // The environment's parts, by the names the tests use.
  TempDir& tmp_ = env_.tmp;
  const std::string& host_root_ = env_.host;
  const std::string& kubelet_root_ = env_.kubelet;
  const std::string& config_ = env_.config;
  std::unique_ptr<fake::FakeKubelet> kubelet_;
};

}  // namespace hcashare::testing
