// The fixture of the process-level tests of hcashare-device-plugin: a simulated node
// (SimNode::PopulateDemo), a config file, the fake kubelet, and the real daemon binary
// spawned against them.
#pragma once

#include <chrono>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "common/subprocess.h"
#include "common/temp_dir.h"
#include "testing/fake_kubelet.h"
#include "testing/sim_node.h"
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
    host_root_ = tmp_.path() + "/host";
    kubelet_root_ = tmp_.path() + "/kubelet";
    config_ = tmp_.path() + "/config.json";
    fake::SimNode node(host_root_);
    ASSERT_TRUE(node.PopulateDemo().ok());
    kubelet_ = std::make_unique<fake::FakeKubelet>(kubelet_root_);
  }

  // Replaces the config file.
  void WriteConfig(const std::string& text) { std::ofstream(config_) << text; }

  // Starts the daemon on the simulated node and the kubelet root, with `extra` flags; its
  // output goes to `log` in the temporary directory.
  Result<Subprocess> Spawn(const std::vector<std::string>& extra, const std::string& log) {
    std::vector<std::string> argv = {BinDir() + "/hcashare-device-plugin",
                                     "--host-root",
                                     host_root_,
                                     "--kubelet-root-dir",
                                     kubelet_root_,
                                     "--pool-info-dir",
                                     tmp_.path() + "/pools"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return Subprocess::Spawn(argv, tmp_.path() + "/" + log);
  }

  // Waits until the kubelet follows kDaemonRes with `n` devices.
  bool WaitDevices(size_t n, std::chrono::milliseconds t = std::chrono::milliseconds(10000)) {
    return kubelet_->WaitFor(
        kDaemonRes,
        [&](const fake::ResourceView& v) { return v.connected && v.devices.size() == n; }, t);
  }

  TempDir tmp_;
  std::string host_root_, kubelet_root_, config_;
  std::unique_ptr<fake::FakeKubelet> kubelet_;
};

}  // namespace hcashare::testing
