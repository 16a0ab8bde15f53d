// Device health follows what makes a device unusable (issue 15): a function or char device
// that vanished without a uevent is Unhealthy at once, never handed out again, and a
// shared pool's Allocate leaves out its unhealthy HCAs while healthy ones remain. A VF's
// health follows its physical port (the PF's carrier, or an InfiniBand VF's own port),
// not the admin state of its idle host netdev.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "common/env_names.h"
#include "common/host.h"
#include "common/temp_dir.h"
#include "common/uevent.h"
#include "config/config.h"
#include "daemon/control_loop.h"
#include "deviceplugin/allocation.h"
#include "nl/rdma_netlink.h"
#include "node/discovery.h"
#include "node/health.h"
#include "node/pool.h"
#include "testing/fake_kubelet.h"
#include "testing/fake_rdma_system.h"
#include "testing/fake_uevent_source.h"
#include "testing/sim_node.h"

namespace hcashare::dp {
namespace {

using std::chrono::milliseconds;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr const char* kPf = "0000:3b:00.0";
constexpr const char* kVf = "0000:3b:00.2";
constexpr const char* kIbPf = "0000:86:00.0";
constexpr const char* kIbVf = "0000:86:00.2";

config::ResourceConfig Resource(const std::string& json) {
  auto out = config::ParseConfig(R"({"configList": [)" + json + "]}");
  EXPECT_TRUE(out.ok()) << config::FormatIssues(out);
  return out.ok() ? out.config->resources.at(0) : config::ResourceConfig{};
}

class DeviceHealthTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fake::SimPciFunction pf;
    pf.address = kPf;
    pf.netdevs = {"ens1f0np0"};
    pf.rdma_device = "mlx5_0";
    ASSERT_TRUE(sim_.AddPciFunction(pf).ok());
    fake::SimPciFunction vf = pf;
    vf.address = kVf;
    vf.netdevs = {"ens1f0v0"};
    vf.rdma_device = "mlx5_2";
    vf.physfn = kPf;
    ASSERT_TRUE(sim_.AddPciFunction(vf).ok());
    fake::SimPciFunction ib = fake::SimNode::IbHca(kIbPf, "ib0", "mlx5_1", 1);
    ASSERT_TRUE(sim_.AddPciFunction(ib).ok());
    ib.address = kIbVf;
    ib.netdevs = {"ib0v0"};
    ib.rdma_device = "mlx5_3";
    ib.physfn = kIbPf;
    ASSERT_TRUE(sim_.AddPciFunction(ib).ok());
  }

  // The function at `address` after a scan and a health refresh.
  node::PciFunction Refreshed(const std::string& address) {
    node::PciFunction fn = Find(address);
    node::Discoverer(*host_).RefreshHealth(&fn);
    return fn;
  }
  // The function at `address` as the last scan saw it.
  node::PciFunction Find(const std::string& address) {
    for (const auto& f : node::Discoverer(*host_).Scan().functions) {
      if (f.address == address) return f;
    }
    ADD_FAILURE() << address << " not discovered";
    return {};
  }

  TempDir tmp_{"hcashare-health-"};
  fake::SimNode sim_{tmp_.path()};
  std::unique_ptr<Host> host_ = NewRootedHost(tmp_.path());
};

// An idle VF is admin-down on the host (and the CNI hands it back down): it stays Healthy.
TEST_F(DeviceHealthTest, IdleVfWithItsNetdevDownIsHealthy) {
  ASSERT_TRUE(sim_.SetOperState(kVf, "ens1f0v0", "down").ok());
  ASSERT_TRUE(sim_.SetPortState(kVf, 1, "1: DOWN").ok());  // a RoCE port follows its netdev
  const node::PciFunction vf = Refreshed(kVf);
  EXPECT_TRUE(vf.healthy) << vf.health_reason;
}

// An Ethernet VF is unusable when its PF's physical port has no carrier.
TEST_F(DeviceHealthTest, EthernetVfFollowsItsPfCarrier) {
  ASSERT_TRUE(sim_.SetOperState(kPf, "ens1f0np0", "down").ok());
  const node::PciFunction vf = Refreshed(kVf);
  EXPECT_FALSE(vf.healthy);
  EXPECT_EQ(vf.health_reason, "PF netdev ens1f0np0 is down");
  // The PF itself keeps its own rule.
  EXPECT_EQ(Refreshed(kPf).health_reason, "netdev ens1f0np0 is down");
}

// An InfiniBand VF has its own port on the fabric (it needs a GUID and the subnet manager):
// its port state decides, its IPoIB netdev's admin state does not.
TEST_F(DeviceHealthTest, InfinibandVfFollowsItsOwnPort) {
  ASSERT_TRUE(sim_.SetOperState(kIbVf, "ib0v0", "down").ok());
  EXPECT_TRUE(Refreshed(kIbVf).healthy);
  ASSERT_TRUE(sim_.SetPortState(kIbVf, 1, "1: DOWN").ok());
  const node::PciFunction vf = Refreshed(kIbVf);
  EXPECT_FALSE(vf.healthy);
  EXPECT_EQ(vf.health_reason, "mlx5_3 port 1 is 1: DOWN");
}

// A function removed without a uevent: its sysfs directory is gone, and so are its nodes.
// Before, an unreadable port state counted as "no news" and it stayed Healthy.
TEST_F(DeviceHealthTest, VanishedFunctionIsUnhealthyAtOnce) {
  node::PciFunction fn = Find(kIbPf);
  ASSERT_TRUE(fn.healthy);
  ASSERT_TRUE(sim_.RemovePciFunction(kIbPf).ok());
  node::Discoverer(*host_).RefreshHealth(&fn);
  EXPECT_FALSE(fn.healthy);
  EXPECT_TRUE(fn.gone);
  EXPECT_THAT(fn.health_reason, HasSubstr("function 0000:86:00.0 vanished"));
}

// A char device node that vanished (the function still in sysfs) is caught too.
TEST_F(DeviceHealthTest, VanishedCharDeviceIsUnhealthy) {
  node::PciFunction fn = Find(kPf);
  ASSERT_FALSE(fn.rdma.empty());
  const std::string uverbs = fn.rdma[0].char_devices.back();
  ASSERT_THAT(uverbs, HasSubstr("uverbs"));
  std::filesystem::remove(tmp_.path() + uverbs);
  node::Discoverer(*host_).RefreshHealth(&fn);
  EXPECT_FALSE(fn.healthy);
  EXPECT_EQ(fn.health_reason, "device node " + uverbs + " vanished");
}

// The debouncer holds a flapping port, but not a device that vanished: it cannot flap.
TEST(HealthDebouncerTest, VanishedDeviceIsPublishedAtOnce) {
  node::HealthDebouncer debouncer(std::chrono::hours(1));
  const auto t0 = node::HealthDebouncer::Clock::now();
  std::vector<node::PciFunction> fns(1);
  fns[0].address = kPf;
  debouncer.Apply(&fns, t0);
  fns[0].healthy = false;  // first change: at once
  debouncer.Apply(&fns, t0);
  fns[0].healthy = true;  // recovery within the window: held
  debouncer.Apply(&fns, t0 + milliseconds(1));
  ASSERT_FALSE(fns[0].healthy);
  fns[0].healthy = true;
  debouncer.Apply(&fns, t0 + std::chrono::hours(2));  // the recovery is published
  ASSERT_TRUE(fns[0].healthy);
  fns[0].healthy = false;
  fns[0].gone = true;
  fns[0].health_reason = "function vanished";
  debouncer.Apply(&fns, t0 + std::chrono::hours(2) + milliseconds(1));
  EXPECT_FALSE(fns[0].healthy);
  EXPECT_EQ(fns[0].health_reason, "function vanished");
}

// A shared pool's Allocate hands out only the healthy HCAs while one is healthy, and never
// a device node that vanished.
class SharedAllocateTest : public DeviceHealthTest {
 protected:
  void SetUp() override {
    DeviceHealthTest::SetUp();
    rc_ = Resource(R"({"resourceName": "both", "rdmaHcaMax": 4,
                       "selectors": {"rdmaDevices": ["mlx5_0", "mlx5_1"]}})");
  }
  // Allocate of ID 0 against the pool built from a fresh scan.
  Result<v1beta1::AllocateResponse> Allocate() {
    node::Discoverer d(*host_);
    node::Inventory inv = d.Scan();
    node::PoolState pool = node::BuildPool(rc_, inv);
    v1beta1::AllocateRequest req;
    req.add_container_requests()->add_devices_ids("0");
    return BuildAllocateResponse(rc_, pool, req, *host_);
  }
  static std::vector<std::string> Paths(const v1beta1::AllocateResponse& r) {
    std::vector<std::string> out;
    for (const auto& d : r.container_responses(0).devices()) out.push_back(d.host_path());
    return out;
  }
  config::ResourceConfig rc_;
};

TEST_F(SharedAllocateTest, LeavesOutAnUnhealthyHcaWhileAHealthyOneRemains) {
  auto both = Allocate();
  ASSERT_TRUE(both.ok()) << both.status().ToString();
  EXPECT_EQ(both->container_responses(0).envs().at(RdmaDevicesEnvName(rc_.FullName())),
            "mlx5_0,mlx5_1");
  ASSERT_TRUE(sim_.SetPortState(kIbPf, 1, "1: DOWN").ok());
  auto one = Allocate();
  ASSERT_TRUE(one.ok()) << one.status().ToString();
  EXPECT_EQ(one->container_responses(0).envs().at(RdmaDevicesEnvName(rc_.FullName())), "mlx5_0");
  const node::PciFunction down = Find(kIbPf);
  ASSERT_FALSE(down.rdma.empty());
  for (const auto& p : Paths(*one)) {
    for (const auto& node : down.rdma[0].char_devices) EXPECT_NE(p, node);
  }
  // With no healthy HCA the pool's IDs are Unhealthy and the kubelet does not allocate
  // them; an Allocate that still comes gets everything there is.
  ASSERT_TRUE(sim_.SetOperState(kPf, "ens1f0np0", "down").ok());
  auto none = Allocate();
  ASSERT_TRUE(none.ok()) << none.status().ToString();
  EXPECT_EQ(none->container_responses(0).envs().at(RdmaDevicesEnvName(rc_.FullName())),
            "mlx5_0,mlx5_1");
}

// An HCA whose node vanished since the scan is left out; before, the whole Allocate failed.
TEST_F(SharedAllocateTest, LeavesOutAnHcaWhoseNodeVanished) {
  node::Discoverer d(*host_);
  node::Inventory inv = d.Scan();
  node::PoolState pool = node::BuildPool(rc_, inv);
  ASSERT_EQ(pool.hcas.size(), 2u);
  const std::string gone = pool.hcas[1].rdma[0].char_devices.back();
  std::filesystem::remove(tmp_.path() + gone);
  v1beta1::AllocateRequest req;
  req.add_container_requests()->add_devices_ids("1");
  auto resp = BuildAllocateResponse(rc_, pool, req, *host_);
  ASSERT_TRUE(resp.ok()) << resp.status().ToString();
  EXPECT_EQ(resp->container_responses(0).envs().at(RdmaDevicesEnvName(rc_.FullName())), "mlx5_0");
  for (const auto& p : Paths(*resp)) EXPECT_NE(p, gone);
  // Every HCA gone: a clear error naming the node.
  for (const auto& cd : pool.hcas[0].rdma[0].char_devices) {
    std::filesystem::remove(tmp_.path() + cd);
  }
  auto failed = BuildAllocateResponse(rc_, pool, req, *host_);
  ASSERT_FALSE(failed.ok());
  EXPECT_THAT(failed.status().message(), HasSubstr("vanished since the last scan"));
}

// The daemon end to end: with rescans an hour apart, an exclusive device removed without
// a uevent is Unhealthy at the kubelet within one health poll, and Allocate refuses it.
TEST_F(DeviceHealthTest, DaemonSeesARemovalWithoutUeventWithinOnePoll) {
  fake::FakeKubelet kubelet(tmp_.path() + "/kubelet");
  ASSERT_TRUE(kubelet.Start().ok());
  fake::FakeRdmaSystem rdma(Status::Unavailable("no RDMA netlink in tests"));
  fake::FakeUeventSource uevents;
  daemon::ControlLoopOptions opts;
  opts.server.kubelet_root = tmp_.path() + "/kubelet";
  opts.server.device_plugin_dir = opts.server.kubelet_root + "/device-plugins";
  opts.server.mode = RegistrationMode::kKubelet;
  opts.health_poll_interval = milliseconds(100);
  daemon::ControlLoop manager(opts, *host_, rdma, &uevents);
  auto cfg = config::ParseConfig(R"({"periodicUpdateInterval": 3600, "configList": [
    {"resourceName": "vfs", "resourcePrefix": "rdma", "mode": "exclusive",
     "selectors": {"pciAddresses": ["0000:3b:00.2", "0000:86:00.2"]}}]})");
  ASSERT_TRUE(cfg.ok()) << config::FormatIssues(cfg);
  ASSERT_TRUE(manager.Start(*cfg.config).ok());
  auto health_of = [](const fake::ResourceView& v, const std::string& id) {
    for (const auto& d : v.devices) {
      if (d.id() == id) return d.health();
    }
    return std::string("absent");
  };
  ASSERT_TRUE(kubelet.WaitFor(
      "rdma/vfs",
      [&](const fake::ResourceView& v) {
        return v.devices.size() == 2 && health_of(v, kVf) == kHealthy &&
               health_of(v, kIbVf) == kHealthy;
      },
      milliseconds(5000)));
  ASSERT_TRUE(sim_.RemovePciFunction(kVf).ok());
  EXPECT_TRUE(kubelet.WaitFor(
      "rdma/vfs", [&](const fake::ResourceView& v) { return health_of(v, kVf) == kUnhealthy; },
      milliseconds(5000)))
      << "a removal without a uevent must reach the kubelet within a health poll";
  auto resp = kubelet.Allocate("rdma/vfs", {kVf});
  ASSERT_FALSE(resp.ok());
  EXPECT_THAT(resp.status().message(), HasSubstr("vanished"));
  manager.Stop();
  kubelet.Stop();
}

}  // namespace
}  // namespace hcashare::dp
