// Churn (issue 15): a rescan that changes one pool sends nothing to the others. Periodic
// rescans used to re-send every pool's list, so each hot-plug cycle of pool b's HCA sent
// pool a, whose devices did not change, a message per rescan.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>

#include "common/host.h"
#include "common/temp_dir.h"
#include "common/uevent.h"
#include "config/config.h"
#include "daemon/control_loop.h"
#include "deviceplugin/allocation.h"
#include "nl/rdma_netlink.h"
#include "testing/fake_kubelet.h"
#include "testing/fake_rdma_system.h"
#include "testing/fake_uevent_source.h"
#include "testing/sim_node.h"
#include "tests/test_util.h"

namespace hcashare::dp {
namespace {

using std::chrono::milliseconds;

constexpr const char* kHcaA = "0000:3b:00.0";
constexpr const char* kHcaB = "0000:86:00.0";

TEST(DpChurnTest, HotPlugInOnePoolSendsNothingToAnother) {
  TempDir tmp("hcashare-churn-");
  fake::SimNode node(tmp.path() + "/host");
  ASSERT_TRUE(node.AddPciFunction(fake::SimNode::IbHca(kHcaA, "ib0", "mlx5_0", 0)).ok());
  ASSERT_TRUE(node.AddPciFunction(fake::SimNode::IbHca(kHcaB, "ib1", "mlx5_1", 1)).ok());
  auto host = NewRootedHost(tmp.path() + "/host");
  fake::FakeKubelet kubelet(tmp.path() + "/kubelet");
  ASSERT_TRUE(kubelet.Start().ok());
  fake::FakeRdmaSystem rdma(Status::Unavailable("no RDMA netlink in tests"));
  fake::FakeUeventSource uevents;
  daemon::ControlLoopOptions opts;
  opts.server.kubelet_root = tmp.path() + "/kubelet";
  opts.server.device_plugin_dir = opts.server.kubelet_root + "/device-plugins";
  opts.server.mode = RegistrationMode::kKubelet;
  opts.health_poll_interval = milliseconds(100);
  daemon::ControlLoop manager(opts, *host, rdma, &uevents);
  // Rescans every second, as in the Mellanox plugin comparison.
  auto cfg = config::ParseConfig(R"({"periodicUpdateInterval": 1, "configList": [
    {"resourceName": "a", "rdmaHcaMax": 4, "selectors": {"rdmaDevices": ["mlx5_0"]}},
    {"resourceName": "b", "rdmaHcaMax": 4, "selectors": {"rdmaDevices": ["mlx5_1"]}}]})");
  ASSERT_TRUE(cfg.ok()) << config::FormatIssues(cfg);
  ASSERT_TRUE(manager.Start(*cfg.config).ok());
  auto healthy = [](const fake::ResourceView& v) { return fake::AllDevices(v, kHealthy); };
  auto unhealthy = [](const fake::ResourceView& v) { return fake::AllDevices(v, kUnhealthy); };
  ASSERT_TRUE(kubelet.WaitFor("rdma/a", healthy, milliseconds(5000)));
  ASSERT_TRUE(kubelet.WaitFor("rdma/b", healthy, milliseconds(5000)));
  const int a_before = kubelet.View("rdma/a").lists_received;
  const int b_before = kubelet.View("rdma/b").lists_received;
  for (int cycle = 0; cycle < 2; ++cycle) {
    ASSERT_TRUE(node.RemovePciFunction(kHcaB).ok());
    ASSERT_TRUE(kubelet.WaitFor("rdma/b", unhealthy, milliseconds(5000)));
    // Held until a rescan has run with b's HCA gone (a rescan every second).
    const uint64_t scans = manager.scans();
    ASSERT_TRUE(testing::WaitUntil([&] { return manager.scans() > scans; }, milliseconds(5000)));
    ASSERT_TRUE(node.AddPciFunction(fake::SimNode::IbHca(kHcaB, "ib1", "mlx5_1", 1)).ok());
    ASSERT_TRUE(kubelet.WaitFor("rdma/b", healthy, milliseconds(5000)));
  }
  EXPECT_GE(kubelet.View("rdma/b").lists_received - b_before, 4) << "b's changes were sent";
  EXPECT_EQ(kubelet.View("rdma/a").lists_received, a_before)
      << "pool a did not change and must not be re-sent";
  manager.Stop();
  kubelet.Stop();
}

}  // namespace
}  // namespace hcashare::dp
