// The device plugin's metrics (issue 15): hcashare_build_info, the process metrics, every
// counter series at 0 from the start, the per-resource registered gauge, and the real
// daemon's scrape linted by promtool.
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <memory>
#include <optional>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "common/host.h"
#include "common/process.h"
#include "common/temp_dir.h"
#include "common/version.h"
#include "config/config.h"
#include "daemon/control_loop.h"
#include "deviceplugin/dp_metrics.h"
#include "metrics/registry.h"
#include "nl/rdma_netlink.h"
#include "testing/fake_kubelet.h"
#include "testing/fake_rdma_system.h"
#include "testing/sim_node.h"
#include "tests/daemon_fixture.h"
#include "tests/metrics_test_util.h"
#include "tests/test_util.h"

namespace hcashare {
namespace {

using metrics::Registry;
using std::chrono::milliseconds;
using testing::HttpGet;
using testing::OurCounters;
using testing::SampleValue;
using testing::WaitUntil;

// ---------------------------------------------------------------------------------------------
// DpMetrics: the device plugin's series

constexpr const char* kResA = "rdma/hca_a";
constexpr const char* kResB = "rdma/hca_b";

// The series of the "registered" gauge of `resource`.
std::string RegisteredSeries(const std::string& resource) {
  return "hcashare_resource_registered{resource=\"" + resource + "\"}";
}

// DpMetrics adds hcashare_build_info and the process metrics.
TEST(DpMetricsTest, BuildInfoAndProcessMetrics) {
  Registry r;
  dp::DpMetrics m(r);
  const std::string text = r.Render();
  const std::string v = VersionString();  // "<semver> (<git describe>)"
  const size_t paren = v.find(" (");
  ASSERT_NE(paren, std::string::npos) << v;
  const std::string labels = ",revision=\"" + v.substr(paren + 2, v.size() - paren - 3) +
                             "\",version=\"" + v.substr(0, paren) + "\"} 1\n";
  const std::string start = "\nhcashare_build_info{compiler=\"";
  const size_t at = text.find(start);
  ASSERT_NE(at, std::string::npos) << text;
  const std::string line = text.substr(at + 1, text.find('\n', at + 1) - at);
  EXPECT_NE(line.find(labels), std::string::npos) << line;
  const std::string compiler = line.substr(start.size() - 1);
  EXPECT_TRUE(compiler.rfind("gcc ", 0) == 0 || compiler.rfind("clang ", 0) == 0) << line;
  EXPECT_NE(text.find("# TYPE hcashare_build_info gauge\n"), std::string::npos);
  EXPECT_GT(SampleValue(text, "process_resident_memory_bytes").value_or(0), 0) << text;
  EXPECT_GT(SampleValue(text, "process_open_fds").value_or(0), 0);
  EXPECT_GE(SampleValue(text, "process_threads").value_or(0), 1);
}

// Every counter series, one per result label, exists at 0 before anything is counted: the
// global ones from the start, a resource's from its first publish.
TEST(DpMetricsTest, EveryCounterSeriesStartsAtZero) {
  Registry r;
  dp::DpMetrics m(r);
  std::map<std::string, double> want = {
      {"hcashare_config_reloads_total{result=\"failed\"}", 0},
      {"hcashare_config_reloads_total{result=\"ok\"}", 0},
      {"hcashare_kubelet_restarts_total", 0},
      {"hcashare_rescans_total", 0},
  };
  EXPECT_EQ(OurCounters(r.Render()), want);
  EXPECT_EQ(SampleValue(r.Render(), "hcashare_rescan_duration_seconds_count"), 0);

  m.Published(kResA, 8, 8);
  m.Published(kResB, 4, 3);
  std::string text = r.Render();
  for (const std::string res : {kResA, kResB}) {
    const std::string l = "{resource=\"" + res + "\"";
    want["hcashare_allocations_total" + l + ",result=\"error\"}"] = 0;
    want["hcashare_allocations_total" + l + ",result=\"ok\"}"] = 0;
    want["hcashare_registrations_total" + l + "}"] = 0;
    EXPECT_EQ(SampleValue(text, RegisteredSeries(res)), 0) << text;
    EXPECT_EQ(SampleValue(text, "hcashare_allocate_duration_seconds_count" + l + "}"), 0);
  }
  EXPECT_EQ(OurCounters(text), want) << text;
  EXPECT_EQ(SampleValue(text, "hcashare_devices_healthy{resource=\"rdma/hca_b\"}"), 3);

  // Counting one result leaves the other at 0; registering sets the gauge.
  m.Allocated(kResA, true, 0.001);
  m.Registered(kResA);
  text = r.Render();
  EXPECT_EQ(SampleValue(text, "hcashare_allocations_total{resource=\"rdma/hca_a\",result=\"ok\"}"),
            1);
  EXPECT_EQ(
      SampleValue(text, "hcashare_allocations_total{resource=\"rdma/hca_a\",result=\"error\"}"), 0);
  EXPECT_EQ(SampleValue(text, RegisteredSeries(kResA)), 1);
  m.Unregistered(kResA);
  EXPECT_EQ(SampleValue(r.Render(), RegisteredSeries(kResA)), 0);

  // Forget drops every series of the resource, and only those; named again, it starts over.
  m.Forget(kResA);
  text = r.Render();
  EXPECT_EQ(text.find("\"rdma/hca_a\""), std::string::npos) << text;
  EXPECT_EQ(SampleValue(text, RegisteredSeries(kResB)), 0);
  m.Registered(kResA);
  text = r.Render();
  EXPECT_EQ(
      SampleValue(text, "hcashare_allocations_total{resource=\"rdma/hca_a\",result=\"error\"}"), 0);
  EXPECT_EQ(SampleValue(text, "hcashare_registrations_total{resource=\"rdma/hca_a\"}"), 1);
}

// Two resources over two IB HCAs (ib0/mlx5_0 and ib1/mlx5_1).
constexpr const char* kTwoResources = R"({"configList": [
  {"resourceName": "hca_a", "rdmaHcaMax": 8, "selectors": {"ifNames": ["ib0", "ib1"]}},
  {"resourceName": "hca_b", "rdmaHcaMax": 4, "selectors": {"rdmaDevices": ["mlx5_1"]}}]})";

// A ControlLoop counting into a registry, against the fake kubelet.
class DpMetricsManagerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    host_root_ = tmp_.path() + "/host";
    fake::SimNode node(host_root_);
    ASSERT_TRUE(node.AddPciFunction(fake::SimNode::IbHca("0000:3b:00.0", "ib0", "mlx5_0", 0)).ok());
    ASSERT_TRUE(node.AddPciFunction(fake::SimNode::IbHca("0000:86:00.0", "ib1", "mlx5_1", 1)).ok());
    host_ = NewRootedHost(host_root_);
    kubelet_ = std::make_unique<fake::FakeKubelet>(tmp_.path() + "/kubelet");
  }
  void TearDown() override {
    if (manager_) manager_->Stop();
    kubelet_->Stop();
  }

  void StartManager(const std::string& json) {
    daemon::ControlLoopOptions o;
    o.server.kubelet_root = tmp_.path() + "/kubelet";
    o.server.device_plugin_dir = o.server.kubelet_root + "/device-plugins";
    o.server.mode = dp::RegistrationMode::kKubelet;
    o.server.backoff_initial = milliseconds(20);
    o.server.backoff_max = milliseconds(200);
    o.server.metrics = &metrics_;
    manager_ = std::make_unique<daemon::ControlLoop>(o, *host_, rdma_);
    ASSERT_TRUE(manager_->Start(Parse(json)).ok());
  }

  static config::PluginConfig Parse(const std::string& json) {
    auto out = config::ParseConfig(json);
    EXPECT_TRUE(out.ok()) << config::FormatIssues(out);
    return out.config.value_or(config::PluginConfig{});
  }

  // Waits until the registered gauge of `resource` is `want` (nullopt: no series).
  bool WaitRegistered(const std::string& resource, std::optional<double> want) {
    return WaitUntil(
        [&] { return SampleValue(registry_.Render(), RegisteredSeries(resource)) == want; });
  }

  TempDir tmp_;
  std::string host_root_;
  std::unique_ptr<Host> host_;
  fake::FakeRdmaSystem rdma_{Status::Unavailable("no RDMA netlink in tests")};
  Registry registry_;
  dp::DpMetrics metrics_{registry_};
  std::unique_ptr<fake::FakeKubelet> kubelet_;
  std::unique_ptr<daemon::ControlLoop> manager_;  // last: destroyed before what it uses
};

// hcashare_resource_registered is 1 once registered, 0 from a kubelet restart until the
// re-registration succeeds (here: while the new kubelet rejects it), 1 again after; a
// resource removed by a reload loses the series.
TEST_F(DpMetricsManagerTest, RegisteredGaugeFollowsTheKubelet) {
  ASSERT_TRUE(kubelet_->Start().ok());
  StartManager(kTwoResources);
  for (const char* res : {kResA, kResB}) {
    ASSERT_TRUE(WaitRegistered(res, 1)) << res << "\n" << registry_.Render();
    EXPECT_TRUE(manager_->Servers()[res].registered);
  }

  kubelet_->SetRegisterError("rejected by the test");
  ASSERT_TRUE(kubelet_->Restart().ok());
  for (const char* res : {kResA, kResB}) {
    ASSERT_TRUE(WaitRegistered(res, 0)) << res << "\n" << registry_.Render();
    EXPECT_FALSE(manager_->Servers()[res].registered);
  }
  kubelet_->SetRegisterError("");
  for (const char* res : {kResA, kResB}) {
    ASSERT_TRUE(WaitRegistered(res, 1)) << res << "\n" << registry_.Render();
  }
  const std::string text = registry_.Render();
  EXPECT_GE(SampleValue(text, "hcashare_registrations_total{resource=\"rdma/hca_a\"}"), 2);
  EXPECT_TRUE(WaitUntil(
      [&] { return SampleValue(registry_.Render(), "hcashare_kubelet_restarts_total") >= 1; }));

  manager_->Reload(Parse(R"({"configList": [
      {"resourceName": "hca_b", "rdmaHcaMax": 4, "selectors": {"rdmaDevices": ["mlx5_1"]}}]})"));
  ASSERT_TRUE(WaitRegistered(kResA, std::nullopt)) << registry_.Render();
  // The registered series is the third of the resource's series to go.
  EXPECT_TRUE(WaitUntil([&] {
    return registry_.Render().find("\"rdma/hca_a\"") == std::string::npos;
  })) << registry_.Render();
  EXPECT_EQ(SampleValue(registry_.Render(), RegisteredSeries(kResB)), 1);

  manager_->Stop();
  EXPECT_EQ(SampleValue(registry_.Render(), RegisteredSeries(kResB)), 0);
}

// ---------------------------------------------------------------------------------------------
// The real daemon's scrape, linted by promtool

// promtool's path on $PATH, or "".
std::string FindPromtool() {
  const char* path = std::getenv("PATH");
  std::istringstream dirs(path != nullptr ? path : "/usr/bin:/bin");
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    const std::string p = (dir.empty() ? "." : dir) + "/promtool";
    if (::access(p.c_str(), X_OK) == 0) return p;
  }
  return "";
}

using MetricsDaemonTest = testing::DaemonTest;

// `promtool check metrics` accepts the scrape of a running daemon serving two resources,
// after registrations and Allocate calls, without a single lint remark. Skipped without
// promtool (Debian package prometheus) unless HCASHARE_PROMTOOL_REQUIRED is set.
TEST_F(MetricsDaemonTest, PromtoolAcceptsTheScrape) {
  const std::string promtool = FindPromtool();
  if (promtool.empty()) {
    if (std::getenv("HCASHARE_PROMTOOL_REQUIRED") != nullptr) {
      FAIL() << "HCASHARE_PROMTOOL_REQUIRED is set, but promtool is not on PATH";
    }
    GTEST_SKIP() << "promtool is not on PATH (Debian package prometheus; "
                 << "HCASHARE_PROMTOOL_REQUIRED=1 makes this a failure)";
  }
  const std::string res_b = "rdma/hca_b";
  WriteConfig(R"({"configList": [
    {"resourceName": "hca_shared_devices_a", "rdmaHcaMax": 5, "devices": ["ib0", "ib1"]},
    {"resourceName": "hca_b", "rdmaHcaMax": 3, "devices": ["ib3"]}]})");
  ASSERT_TRUE(kubelet_->Start().ok());
  auto p = Spawn({"--config", config_, "--metrics-address", "127.0.0.1:0"}, "metrics.log");
  ASSERT_TRUE(p.ok()) << p.status().ToString();
  ASSERT_TRUE(WaitDevices(5));
  ASSERT_TRUE(kubelet_->WaitFor(
      res_b, [](const fake::ResourceView& v) { return v.connected && v.devices.size() == 3; },
      milliseconds(10000)));
  const std::string log = testing::ReadTextFile(tmp_.path() + "/metrics.log");
  const size_t at = log.find("port=", log.find("serving metrics and probes"));
  ASSERT_NE(at, std::string::npos) << log;
  const int port = std::atoi(log.c_str() + at + 5);
  ASSERT_TRUE(kubelet_->Allocate(testing::kDaemonRes, {"1"}).ok());
  ASSERT_FALSE(kubelet_->Allocate(testing::kDaemonRes, {"99"}).ok());
  ASSERT_TRUE(kubelet_->Allocate(res_b, {"0", "2"}).ok());

  // Registered is set when Register returns (the kubelet dials back inside it).
  std::string body;
  ASSERT_TRUE(WaitUntil([&] {
    body = HttpGet(port, "/metrics").body;
    return SampleValue(body, RegisteredSeries(testing::kDaemonRes)) == 1 &&
           SampleValue(body, RegisteredSeries(res_b)) == 1;
  })) << body;
  EXPECT_NE(body.find("\nhcashare_build_info{"), std::string::npos) << body;
  EXPECT_GE(SampleValue(body, "process_cpu_seconds_total").value_or(-1), 0) << body;
  for (const char* name :
       {"process_resident_memory_bytes", "process_virtual_memory_bytes", "process_open_fds",
        "process_max_fds", "process_start_time_seconds", "process_threads"}) {
    EXPECT_GT(SampleValue(body, name).value_or(-1), 0) << name;
  }
  EXPECT_EQ(
      SampleValue(body, "hcashare_allocations_total{resource=\"rdma/hca_b\",result=\"error\"}"), 0)
      << body;

  auto out = Execute(promtool, {promtool, "check", "metrics"}, {}, body, milliseconds(30000));
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->exit_code, 0) << out->out << out->err;
  EXPECT_EQ(out->out + out->err, "") << "promtool check metrics on:\n" << body;
  ASSERT_TRUE(p->Signal(SIGTERM).ok());
  EXPECT_EQ(*p->Wait(milliseconds(10000)), 0);
}
}  // namespace
}  // namespace hcashare
