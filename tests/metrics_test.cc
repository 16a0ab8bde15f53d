// Tests for deviceplugin/metrics (the Prometheus registry, its text format and the process
// metrics) and the device plugin's metrics (DpMetrics, on a ControlLoop and in the real
// daemon, whose scrape `promtool check metrics` must accept). The server: http_server_test.
#include "metrics/registry.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <chrono>
#include <cmath>
#include <ctime>
#include <functional>
#include <future>
#include <limits>
#include <map>
#include <mutex>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "tests/daemon_fixture.h"
#include "tests/metrics_test_util.h"
#include "tests/test_util.h"

#include "common/host.h"
#include "common/process.h"
#include "common/temp_dir.h"
#include "common/unique_fd.h"
#include "common/version.h"
#include "config/config.h"
#include "daemon/control_loop.h"
#include "deviceplugin/dp_metrics.h"
#include "nl/rdma_netlink.h"
#include "testing/fake_kubelet.h"
#include "testing/sim_node.h"

namespace hcashare {
namespace {

using metrics::Counter;
using metrics::FormatValue;
using metrics::Gauge;
using metrics::Histogram;
using metrics::Registry;
using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

using testing::SampleValue;

// ---------------------------------------------------------------------------------------------
// Registry

TEST(MetricsTest, CounterAndGaugeValues) {
  Registry r;
  Counter& c = r.GetCounter("c_total", "A counter.");
  EXPECT_EQ(c.Value(), 0);
  c.Inc();
  c.Inc(2.5);
  c.Inc(-1);  // ignored: counters only go up
  c.Inc(std::nan(""));
  EXPECT_EQ(c.Value(), 3.5);

  Gauge& g = r.GetGauge("g", "A gauge.");
  g.Set(5);
  g.Add(-7);
  EXPECT_EQ(g.Value(), -2);
}

TEST(MetricsTest, SameNameAndLabelsReturnTheSameObject) {
  Registry r;
  Counter& a = r.GetCounter("x_total", "X.", {{"resource", "a"}, {"node", "n1"}});
  Counter& b = r.GetCounter("x_total", "ignored", {{"node", "n1"}, {"resource", "a"}});
  Counter& other = r.GetCounter("x_total", "X.", {{"resource", "b"}, {"node", "n1"}});
  EXPECT_EQ(&a, &b);
  EXPECT_NE(&a, &other);
  a.Inc();
  EXPECT_EQ(b.Value(), 1);
  EXPECT_EQ(other.Value(), 0);
  // Still the same after more series were added (stable addresses).
  for (int i = 0; i < 100; ++i) r.GetCounter("x_total", "X.", {{"resource", std::to_string(i)}});
  EXPECT_EQ(&a, &r.GetCounter("x_total", "X.", {{"node", "n1"}, {"resource", "a"}}));

  Histogram& h1 = r.GetHistogram("h", "H.", {1, 2});
  Histogram& h2 = r.GetHistogram("h", "H.", {5});  // buckets fixed by the first call
  EXPECT_EQ(&h1, &h2);
  EXPECT_EQ(h2.bounds(), (std::vector<double>{1, 2}));
  EXPECT_EQ(&r.GetGauge("g", "G."), &r.GetGauge("g", "G."));
}

TEST(MetricsTest, RenderExact) {
  Registry r;
  // Registered out of order: the output is sorted by family name, then by labels.
  Histogram& h = r.GetHistogram("hcashare_latency_seconds", "Latency.", {0.001, 0.01, 0.1});
  r.GetGauge("hcashare_free_devices", "Free devices.").Set(7);
  r.GetCounter("hcashare_allocations_total", "Allocate calls.", {{"resource", "rdma/hca_b"}}).Inc();
  r.GetCounter("hcashare_allocations_total", "Allocate calls.", {{"resource", "rdma/hca_a"}})
      .Inc(3);
  h.Observe(0.0005);
  h.Observe(0.005);
  h.Observe(0.5);

  EXPECT_EQ(r.Render(),
            "# HELP hcashare_allocations_total Allocate calls.\n"
            "# TYPE hcashare_allocations_total counter\n"
            "hcashare_allocations_total{resource=\"rdma/hca_a\"} 3\n"
            "hcashare_allocations_total{resource=\"rdma/hca_b\"} 1\n"
            "# HELP hcashare_free_devices Free devices.\n"
            "# TYPE hcashare_free_devices gauge\n"
            "hcashare_free_devices 7\n"
            "# HELP hcashare_latency_seconds Latency.\n"
            "# TYPE hcashare_latency_seconds histogram\n"
            "hcashare_latency_seconds_bucket{le=\"0.001\"} 1\n"
            "hcashare_latency_seconds_bucket{le=\"0.01\"} 2\n"
            "hcashare_latency_seconds_bucket{le=\"0.1\"} 2\n"
            "hcashare_latency_seconds_bucket{le=\"+Inf\"} 3\n"
            "hcashare_latency_seconds_sum 0.5055\n"
            "hcashare_latency_seconds_count 3\n");
  EXPECT_EQ(h.Count(), 3u);
  EXPECT_EQ(h.CumulativeCounts(), (std::vector<uint64_t>{1, 2, 2, 3}));
}

TEST(MetricsTest, HistogramWithLabelsAndBoundaryValues) {
  Registry r;
  Histogram& h =
      r.GetHistogram("d", "D.", {1, 2, std::numeric_limits<double>::infinity()}, {{"op", "scan"}});
  h.Observe(1);  // bounds are inclusive
  h.Observe(2);
  h.Observe(3);
  EXPECT_EQ(r.Render(),
            "# HELP d D.\n"
            "# TYPE d histogram\n"
            "d_bucket{op=\"scan\",le=\"1\"} 1\n"
            "d_bucket{op=\"scan\",le=\"2\"} 2\n"
            "d_bucket{op=\"scan\",le=\"+Inf\"} 3\n"
            "d_sum{op=\"scan\"} 6\n"
            "d_count{op=\"scan\"} 3\n");
}

TEST(MetricsTest, EscapesLabelValuesAndHelp) {
  Registry r;
  r.GetGauge("e", "Line one\nback\\slash \"quoted\".", {{"path", "a\\b\"c\nd"}}).Set(1);
  EXPECT_EQ(r.Render(),
            "# HELP e Line one\\nback\\\\slash \"quoted\".\n"
            "# TYPE e gauge\n"
            "e{path=\"a\\\\b\\\"c\\nd\"} 1\n");
}

TEST(MetricsTest, SortsSeriesByLabelsAndLabelsByName) {
  Registry r;
  r.GetGauge("s", "S.", {{"z", "1"}, {"a", "2"}}).Set(1);
  r.GetGauge("s", "S.", {{"a", "1"}, {"z", "9"}}).Set(2);
  r.GetGauge("s", "S.").Set(3);
  EXPECT_EQ(r.Render(),
            "# HELP s S.\n"
            "# TYPE s gauge\n"
            "s 3\n"
            "s{a=\"1\",z=\"9\"} 2\n"
            "s{a=\"2\",z=\"1\"} 1\n");
}

TEST(MetricsTest, RemoveDropsOnlyThatSeries) {
  Registry r;
  r.GetCounter("r_total", "R.", {{"resource", "a"}}).Inc(5);
  r.GetCounter("r_total", "R.", {{"resource", "b"}}).Inc(1);
  r.GetHistogram("rh", "RH.", {1}, {{"resource", "a"}}).Observe(1);
  r.Remove("r_total", {{"resource", "a"}});
  r.Remove("rh", {{"resource", "a"}});
  r.Remove("r_total", {{"resource", "nope"}});  // no such series: no-op
  r.Remove("nope", {});
  EXPECT_EQ(r.Render(),
            "# HELP r_total R.\n"
            "# TYPE r_total counter\n"
            "r_total{resource=\"b\"} 1\n");
  // Asking again creates a fresh series.
  EXPECT_EQ(r.GetCounter("r_total", "R.", {{"resource", "a"}}).Value(), 0);
  r.Remove("r_total", {{"resource", "a"}});
  r.Remove("r_total", {{"resource", "b"}});
  EXPECT_EQ(r.Render(), "");
}

TEST(MetricsTest, ConcurrentIncIsExact) {
  Registry r;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&r] {
      for (int i = 0; i < 10000; ++i) {
        r.GetCounter("hits_total", "Hits.", {{"k", "v"}}).Inc();
        r.GetHistogram("obs", "Obs.", {0.5}).Observe(i % 2);
        if (i % 1000 == 0) (void)r.Render();
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(r.GetCounter("hits_total", "Hits.", {{"k", "v"}}).Value(), 40000);
  Histogram& h = r.GetHistogram("obs", "Obs.", {0.5});
  EXPECT_EQ(h.CumulativeCounts(), (std::vector<uint64_t>{20000, 40000}));
  EXPECT_EQ(h.Sum(), 20000);
}

TEST(MetricsTest, FormatValue) {
  EXPECT_EQ(FormatValue(42), "42");
  EXPECT_EQ(FormatValue(-3), "-3");
  EXPECT_EQ(FormatValue(0), "0");
  EXPECT_EQ(FormatValue(-0.0), "0");
  EXPECT_EQ(FormatValue(0.005), "0.005");
  EXPECT_EQ(FormatValue(1.5), "1.5");
  EXPECT_EQ(FormatValue(1e21), "1000000000000000000000");
  EXPECT_EQ(FormatValue(12345678901234.0), "12345678901234");
  EXPECT_EQ(FormatValue(std::numeric_limits<double>::infinity()), "+Inf");
  EXPECT_EQ(FormatValue(-std::numeric_limits<double>::infinity()), "-Inf");
  EXPECT_EQ(FormatValue(std::nan("")), "NaN");
  EXPECT_EQ(std::stod(FormatValue(0.1 + 0.2)), 0.1 + 0.2);  // round-trips exactly
}

TEST(MetricsDeathTest, MisuseAborts) {
  Registry r;
  r.GetCounter("clash", "C.");
  EXPECT_DEATH(r.GetGauge("clash", "C."), "another type");
  EXPECT_DEATH(r.GetCounter("bad-name", "B."), "invalid metric name");
  EXPECT_DEATH(r.GetCounter("ok", "B.", {{"a", "1"}, {"a", "2"}}), "duplicate label");
  EXPECT_DEATH(r.GetHistogram("h", "H.", {1}, {{"le", "1"}}), "le");
  EXPECT_DEATH(r.GetHistogram("h2", "H.", {2, 1}), "strictly increasing");
}

TEST(MetricsTest, CounterRaiseToNeverLowers) {
  Registry r;
  Counter& c = r.GetCounter("cpu_seconds_total", "CPU.");
  c.RaiseTo(1.5);
  c.RaiseTo(1.25);  // lower: ignored
  c.RaiseTo(std::nan(""));
  EXPECT_EQ(c.Value(), 1.5);
  c.RaiseTo(2.75);
  EXPECT_EQ(c.Value(), 2.75);
}

TEST(MetricsTest, CollectorsRunAtEveryRenderAndMayCreateSeries) {
  Registry r;
  int runs = 0;
  r.AddCollector([&] {
    ++runs;
    r.GetGauge("scrapes", "Scrapes.").Set(runs);  // may use Get* (no registry lock held)
  });
  EXPECT_EQ(runs, 0);
  EXPECT_EQ(r.Render(), "# HELP scrapes Scrapes.\n# TYPE scrapes gauge\nscrapes 1\n");
  EXPECT_EQ(SampleValue(r.Render(), "scrapes"), 2);
  EXPECT_EQ(runs, 2);
}

TEST(MetricsTest, ParseProcStat) {
  // The command name may hold spaces and parentheses: fields count from the last ')'.
  const std::string text =
      "4242 (a) b (c) S 1 4242 4242 0 -1 4194560 500 0 0 0 "
      "250 75 0 0 20 0 7 0 123456 987654321 1234 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0\n";
  auto st = metrics::ParseProcStat(text);
  ASSERT_TRUE(st.has_value());
  EXPECT_EQ(st->cpu_ticks, 325u);
  EXPECT_EQ(st->threads, 7);
  EXPECT_EQ(st->start_ticks, 123456u);
  EXPECT_EQ(st->vsize_bytes, 987654321u);
  EXPECT_EQ(st->rss_pages, 1234);
  EXPECT_FALSE(metrics::ParseProcStat("").has_value());
  EXPECT_FALSE(metrics::ParseProcStat("1 (x) S 1 2 3").has_value());  // truncated
  std::string bad = text;
  bad.replace(bad.find(" 250 "), 5, " 2x0 ");
  EXPECT_FALSE(metrics::ParseProcStat(bad).has_value());
}

// The process metrics are read at scrape time and follow the process: one more thread and
// two more fds show at the next scrape.
TEST(MetricsTest, ProcessMetricsArePlausible) {
  // Some CPU time to see.
  auto cpu_now = [] {
    rusage ru{};
    ::getrusage(RUSAGE_SELF, &ru);
    return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
           (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
  };
  volatile double sink = 0;
  while (cpu_now() < 0.05) sink = sink + std::sqrt(sink + 1);

  Registry r;
  metrics::AddProcessMetrics(r);
  const double cpu_before = cpu_now();
  const std::string text = r.Render();
  const double cpu_after = cpu_now();
  auto value = [&](const std::string& series) {
    auto v = SampleValue(text, series);
    EXPECT_TRUE(v.has_value()) << series << " missing in:\n" << text;
    return v.value_or(-1);
  };
  const double rss = value("process_resident_memory_bytes");
  EXPECT_GT(rss, 1 << 20);
  EXPECT_GE(value("process_virtual_memory_bytes"), rss);
  rusage ru{};
  ::getrusage(RUSAGE_SELF, &ru);
  EXPECT_LE(rss, ru.ru_maxrss * 1024.0 + 4096);  // the peak is at least the current
  const double cpu = value("process_cpu_seconds_total");
  EXPECT_GE(cpu, cpu_before - 0.05);
  EXPECT_LE(cpu, cpu_after + 0.05);
  const double fds = value("process_open_fds");
  EXPECT_GE(fds, 3);  // stdin, stdout, stderr
  rlimit rl{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &rl), 0);
  EXPECT_EQ(value("process_max_fds"), static_cast<double>(rl.rlim_cur));
  const double threads = value("process_threads");
  EXPECT_GE(threads, 1);
  const double start = value("process_start_time_seconds");
  const double now = static_cast<double>(std::time(nullptr));
  EXPECT_LE(start, now + 1);
  EXPECT_GT(start, now - 86400);
  EXPECT_NE(text.find("# TYPE process_cpu_seconds_total counter\n"), std::string::npos);

  // One more thread and two more fds; the start time stays, CPU time never goes down.
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  std::promise<void> release;
  std::thread extra([f = release.get_future()]() mutable { f.wait(); });
  const std::string again = r.Render();
  release.set_value();
  extra.join();
  ::close(pipe_fds[0]);
  ::close(pipe_fds[1]);
  EXPECT_EQ(SampleValue(again, "process_threads"), threads + 1);
  EXPECT_EQ(SampleValue(again, "process_open_fds"), fds + 2);
  EXPECT_EQ(SampleValue(again, "process_start_time_seconds"), start);
  EXPECT_GE(SampleValue(again, "process_cpu_seconds_total").value_or(-1), cpu);
}

}  // namespace
}  // namespace hcashare
