// A tiny Prometheus metrics registry: counters, gauges and histograms rendered in the text
// exposition format 0.0.4.
//
// We do not use prometheus-cpp: Debian ships it only as shared libraries, and the daemon is
// linked fully statically to meet its RSS target (docs/benchmarks.md).
//
// Thread safety: updating a metric (Inc, RaiseTo, Set, Add, Observe) is lock-free. Registry
// lookups, Remove and Render take one registry mutex; Render first runs the collectors, one
// at a time, without it. Misuse (a type clash, an invalid name, unsorted histogram buckets)
// is a programming error and aborts the process.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace hcashare::metrics {

// A set of label name/value pairs, e.g. {{"resource","rdma/hca_a"}}. Order does not matter:
// the registry sorts labels by name, so {a,b} and {b,a} name the same series.
using Labels = std::vector<std::pair<std::string, std::string>>;

// A monotonically increasing value.
class Counter {
 public:
  Counter() = default;
  Counter(const Counter&) = delete;
  Counter& operator=(const Counter&) = delete;

  // Adds `v`. Negative or NaN values are ignored (a counter never goes down).
  void Inc(double v = 1);
  // Raises the value to `v` if `v` is higher; lower or NaN values are ignored. For a counter
  // that mirrors a monotonic value kept elsewhere (e.g. CPU time read from /proc).
  void RaiseTo(double v);
  // The current value.
  double Value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0};
};

// A value that can go up and down.
class Gauge {
 public:
  Gauge() = default;
  Gauge(const Gauge&) = delete;
  Gauge& operator=(const Gauge&) = delete;

  // Replaces the value.
  void Set(double v) { value_.store(v, std::memory_order_relaxed); }
  // Adds `v` (may be negative).
  void Add(double v);
  // The current value.
  double Value() const { return value_.load(std::memory_order_relaxed); }

 private:
  std::atomic<double> value_{0};
};

// Counts observations into buckets fixed at creation, and tracks their count and sum.
class Histogram {
 public:
  // `bounds` are the bucket upper bounds (inclusive), strictly increasing; a trailing +Inf may
  // be given and is implied otherwise. Aborts on NaN or unsorted bounds.
  explicit Histogram(std::vector<double> bounds);
  Histogram(const Histogram&) = delete;
  Histogram& operator=(const Histogram&) = delete;

  // Records one observation of `v`.
  void Observe(double v);
  // The finite bucket upper bounds (the +Inf bucket is implied).
  const std::vector<double>& bounds() const { return bounds_; }
  // Cumulative counts per bucket: one per bound, then the +Inf bucket (== Count()).
  std::vector<uint64_t> CumulativeCounts() const;
  // Number of observations.
  uint64_t Count() const;
  // Sum of all observations.
  double Sum() const { return sum_.load(std::memory_order_relaxed); }

 private:
  std::vector<double> bounds_;
  // Non-cumulative per bucket, the last one for +Inf; the count is their sum, so the +Inf
  // bucket and _count always agree even while Observe runs concurrently with Render.
  std::vector<std::atomic<uint64_t>> counts_;
  std::atomic<double> sum_{0};
};

// Formats a sample value: integers without exponent ("42"), others in the shortest form that
// reads back exactly ("0.005"), and "+Inf", "-Inf", "NaN".
std::string FormatValue(double v);

// A set of metric families. Metrics returned by the Get* methods live as long as the registry,
// or until Remove() removes them.
class Registry {
 public:
  Registry() = default;
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;

  // Families are created on first use; the same name+labels returns the same object (stable
  // address). Name and help are fixed by the first call; a type clash aborts.
  Counter& GetCounter(const std::string& name, const std::string& help, const Labels& labels = {});
  // As GetCounter, for a gauge.
  Gauge& GetGauge(const std::string& name, const std::string& help, const Labels& labels = {});
  // As GetCounter, for a histogram. The first call for `name` fixes the buckets of every series
  // of the family; later calls' `buckets` are ignored.
  Histogram& GetHistogram(const std::string& name, const std::string& help,
                          std::vector<double> buckets, const Labels& labels = {});

  // Removes the series of `name` with exactly these labels (e.g. a resource removed by a config
  // reload). References to it dangle afterwards. No-op if there is no such series.
  void Remove(const std::string& name, const Labels& labels);

  // Runs `collect` at the start of every Render(), so that it can update metrics whose value
  // is read at scrape time (e.g. AddProcessMetrics). Collectors run one at a time, in the
  // order added, without the registry mutex held: they may call Get* and Remove, but not
  // AddCollector or Render. They live as long as the registry.
  void AddCollector(std::function<void()> collect);

  // The Prometheus text exposition format 0.0.4: families sorted by name, series by labels.
  // Families without series are left out. Runs the collectors first.
  std::string Render() const;

 private:
  enum class Type { kCounter, kGauge, kHistogram };
  // One metric name: its metadata and series keyed by sorted labels.
  struct Family {
    std::string help;
    Type type = Type::kCounter;
    std::vector<double> buckets;  // histograms only
    std::map<Labels, std::unique_ptr<Counter>> counters;
    std::map<Labels, std::unique_ptr<Gauge>> gauges;
    std::map<Labels, std::unique_ptr<Histogram>> histograms;
  };

  // Finds or creates the family `name` (mu_ held); aborts if it exists with another type.
  Family& FamilyFor(const std::string& name, const std::string& help, Type type);

  mutable std::mutex mu_;
  std::map<std::string, Family> families_;
  mutable std::mutex collect_mu_;                  // held while collectors run
  std::vector<std::function<void()>> collectors_;  // guarded by collect_mu_
};

// The fields of /proc/<pid>/stat that the process metrics use.
struct ProcStat {
  uint64_t cpu_ticks = 0;    // utime + stime, in clock ticks
  int64_t threads = 0;       // num_threads
  uint64_t start_ticks = 0;  // starttime: clock ticks after boot
  uint64_t vsize_bytes = 0;  // vsize
  int64_t rss_pages = 0;     // rss
};

// Parses the text of /proc/<pid>/stat. The command name (in parentheses) may hold spaces and
// parentheses; nullopt when a field is missing or not a number.
std::optional<ProcStat> ParseProcStat(const std::string& text);

// Adds the standard process metrics of the calling process, read at every Render from
// /proc/self/stat, /proc/self/fd and getrlimit (each read bounded): process_cpu_seconds_total,
// process_resident_memory_bytes, process_virtual_memory_bytes, process_open_fds,
// process_max_fds, process_start_time_seconds (computed at the first Render, as it never
// changes) and process_threads. A source that cannot be read leaves its series out until it
// can.
void AddProcessMetrics(Registry& registry);

}  // namespace hcashare::metrics
