#include "metrics/registry.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "common/log.h"
#include "common/unique_fd.h"

namespace hcashare::metrics {
namespace {

// Misuse of the registry is a programming error: report it and abort (also under NDEBUG).
[[noreturn]] void Fatal(const std::string& msg) {
  LogError("metrics registry misuse; aborting", {{"error", msg}});
  std::abort();
}

void AtomicAdd(std::atomic<double>& a, double v) {
  double cur = a.load(std::memory_order_relaxed);
  while (!a.compare_exchange_weak(cur, cur + v, std::memory_order_relaxed)) {
  }
}

bool IsNameStart(char c, bool allow_colon) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || (allow_colon && c == ':');
}
bool IsNameChar(char c, bool allow_colon) {
  return IsNameStart(c, allow_colon) || (c >= '0' && c <= '9');
}

// Metric names: [a-zA-Z_:][a-zA-Z0-9_:]*; label names: [a-zA-Z_][a-zA-Z0-9_]*.
bool ValidName(const std::string& s, bool allow_colon) {
  if (s.empty() || !IsNameStart(s[0], allow_colon)) return false;
  return std::all_of(s.begin(), s.end(), [&](char c) { return IsNameChar(c, allow_colon); });
}

// Validates `labels` and returns them sorted by name (the series key).
Labels Canonical(const std::string& metric, const Labels& labels, bool histogram) {
  Labels out = labels;
  std::sort(out.begin(), out.end());
  for (size_t i = 0; i < out.size(); ++i) {
    const std::string& n = out[i].first;
    if (!ValidName(n, false) || n.compare(0, 2, "__") == 0) {
      Fatal("invalid label name \"" + n + "\" for " + metric);
    }
    if (histogram && n == "le") Fatal("histogram " + metric + " may not use the label \"le\"");
    if (i > 0 && out[i - 1].first == n) Fatal("duplicate label \"" + n + "\" for " + metric);
  }
  return out;
}

void AppendEscaped(std::string& out, const std::string& s, bool quotes) {
  for (char c : s) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else if (quotes && c == '"') {
      out += "\\\"";
    } else {
      out += c;
    }
  }
}

// Appends `{a="x",b="y"}` (with `le` last if given), or nothing for no labels.
void AppendLabels(std::string& out, const Labels& labels, const std::string* le = nullptr) {
  if (labels.empty() && le == nullptr) return;
  out += '{';
  bool first = true;
  for (const auto& [name, value] : labels) {
    if (!first) out += ',';
    first = false;
    out += name;
    out += "=\"";
    AppendEscaped(out, value, true);
    out += '"';
  }
  if (le != nullptr) {
    if (!first) out += ',';
    out += "le=\"";
    out += *le;
    out += '"';
  }
  out += '}';
}

void AppendSample(std::string& out, const std::string& name, const Labels& labels, double v,
                  const std::string* le = nullptr) {
  out += name;
  AppendLabels(out, labels, le);
  out += ' ';
  out += FormatValue(v);
  out += '\n';
}

}  // namespace

void Counter::Inc(double v) {
  if (!(v >= 0)) return;  // negative or NaN
  AtomicAdd(value_, v);
}

void Counter::RaiseTo(double v) {
  double cur = value_.load(std::memory_order_relaxed);
  while (v > cur && !value_.compare_exchange_weak(cur, v, std::memory_order_relaxed)) {
  }
}

void Gauge::Add(double v) { AtomicAdd(value_, v); }

Histogram::Histogram(std::vector<double> bounds) : bounds_(std::move(bounds)) {
  if (!bounds_.empty() && std::isinf(bounds_.back()) && bounds_.back() > 0) bounds_.pop_back();
  for (size_t i = 0; i < bounds_.size(); ++i) {
    if (std::isnan(bounds_[i]) || (std::isinf(bounds_[i]) && bounds_[i] > 0)) {
      Fatal("histogram bucket bound " + FormatValue(bounds_[i]) + " is not allowed");
    }
    if (i > 0 && !(bounds_[i - 1] < bounds_[i])) {
      Fatal("histogram bucket bounds must be strictly increasing");
    }
  }
  counts_ = std::vector<std::atomic<uint64_t>>(bounds_.size() + 1);
}

void Histogram::Observe(double v) {
  // The first bucket whose upper bound is >= v; NaN and values above every bound land in +Inf.
  size_t i = std::isnan(v)
                 ? bounds_.size()
                 : static_cast<size_t>(std::lower_bound(bounds_.begin(), bounds_.end(), v) -
                                       bounds_.begin());
  counts_[i].fetch_add(1, std::memory_order_relaxed);
  AtomicAdd(sum_, v);
}

std::vector<uint64_t> Histogram::CumulativeCounts() const {
  std::vector<uint64_t> out;
  out.reserve(counts_.size());
  uint64_t total = 0;
  for (const auto& c : counts_) {
    total += c.load(std::memory_order_relaxed);
    out.push_back(total);
  }
  return out;
}

uint64_t Histogram::Count() const { return CumulativeCounts().back(); }

std::string FormatValue(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  if (v == 0) return "0";  // also -0
  // Large enough for any double in fixed notation (at most 309 integer digits).
  char buf[400];
  std::to_chars_result r = std::trunc(v) == v
                               ? std::to_chars(buf, buf + sizeof(buf), v, std::chars_format::fixed)
                               : std::to_chars(buf, buf + sizeof(buf), v);
  if (r.ec != std::errc()) return "NaN";  // cannot happen with this buffer
  return std::string(buf, r.ptr);
}

Registry::Family& Registry::FamilyFor(const std::string& name, const std::string& help, Type type) {
  auto it = families_.find(name);
  if (it == families_.end()) {
    if (!ValidName(name, true)) Fatal("invalid metric name \"" + name + "\"");
    Family f;
    f.help = help;
    f.type = type;
    it = families_.emplace(name, std::move(f)).first;
  } else if (it->second.type != type) {
    Fatal("metric " + name + " registered again with another type");
  }
  return it->second;
}

Counter& Registry::GetCounter(const std::string& name, const std::string& help,
                              const Labels& labels) {
  std::lock_guard<std::mutex> lock(mu_);
  Family& f = FamilyFor(name, help, Type::kCounter);
  auto& slot = f.counters[Canonical(name, labels, false)];
  if (!slot) slot = std::make_unique<Counter>();
  return *slot;
}

Gauge& Registry::GetGauge(const std::string& name, const std::string& help, const Labels& labels) {
  std::lock_guard<std::mutex> lock(mu_);
  Family& f = FamilyFor(name, help, Type::kGauge);
  auto& slot = f.gauges[Canonical(name, labels, false)];
  if (!slot) slot = std::make_unique<Gauge>();
  return *slot;
}

Histogram& Registry::GetHistogram(const std::string& name, const std::string& help,
                                  std::vector<double> buckets, const Labels& labels) {
  std::lock_guard<std::mutex> lock(mu_);
  bool is_new = families_.find(name) == families_.end();
  Family& f = FamilyFor(name, help, Type::kHistogram);
  if (is_new) {
    // Validates the bounds once (aborts on bad ones) and keeps their normalised form.
    f.buckets = Histogram(std::move(buckets)).bounds();
  }
  auto& slot = f.histograms[Canonical(name, labels, true)];
  if (!slot) slot = std::make_unique<Histogram>(f.buckets);
  return *slot;
}

void Registry::Remove(const std::string& name, const Labels& labels) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = families_.find(name);
  if (it == families_.end()) return;
  Labels key = labels;
  std::sort(key.begin(), key.end());
  Family& f = it->second;
  f.counters.erase(key);
  f.gauges.erase(key);
  f.histograms.erase(key);
}

void Registry::AddCollector(std::function<void()> collect) {
  std::lock_guard<std::mutex> lock(collect_mu_);
  collectors_.push_back(std::move(collect));
}

std::string Registry::Render() const {
  {
    std::lock_guard<std::mutex> lock(collect_mu_);
    for (const auto& collect : collectors_) collect();
  }
  std::string out;
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [name, f] : families_) {
    if (f.counters.empty() && f.gauges.empty() && f.histograms.empty()) continue;
    out += "# HELP " + name + " ";
    AppendEscaped(out, f.help, false);
    out += "\n# TYPE " + name + " ";
    switch (f.type) {
      case Type::kCounter:
        out += "counter\n";
        for (const auto& [labels, c] : f.counters) AppendSample(out, name, labels, c->Value());
        break;
      case Type::kGauge:
        out += "gauge\n";
        for (const auto& [labels, g] : f.gauges) AppendSample(out, name, labels, g->Value());
        break;
      case Type::kHistogram: {
        out += "histogram\n";
        std::vector<std::string> les;
        for (double b : f.buckets) les.push_back(FormatValue(b));
        les.push_back("+Inf");
        const std::string bucket = name + "_bucket";
        for (const auto& [labels, h] : f.histograms) {
          std::vector<uint64_t> counts = h->CumulativeCounts();
          for (size_t i = 0; i < counts.size(); ++i) {
            AppendSample(out, bucket, labels, static_cast<double>(counts[i]), &les[i]);
          }
          AppendSample(out, name + "_sum", labels, h->Sum());
          AppendSample(out, name + "_count", labels, static_cast<double>(counts.back()));
        }
        break;
      }
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Process metrics

namespace {

// /proc/self/stat is a few hundred bytes; a longer one is cut here and then fails to parse.
constexpr size_t kMaxStatBytes = 4096;
// The fd count stops here: 4x the kernel's default nr_open (the highest RLIMIT_NOFILE).
constexpr int64_t kMaxFdEntries = int64_t{1} << 22;

// Up to `max` bytes of the file at `path`; nullopt when it cannot be opened or read.
std::optional<std::string> ReadBounded(const char* path, size_t max) {
  UniqueFd fd(::open(path, O_RDONLY | O_CLOEXEC));
  if (!fd.valid()) return std::nullopt;
  std::string out(max, '\0');
  size_t n = 0;
  while (n < max) {
    const ssize_t r = ::read(fd.get(), &out[n], max - n);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return std::nullopt;
    if (r == 0) break;
    n += static_cast<size_t>(r);
  }
  out.resize(n);
  return out;
}

// Entries of /proc/self/fd other than the directory's own descriptor.
std::optional<int64_t> CountOpenFds() {
  DIR* dir = ::opendir("/proc/self/fd");
  if (dir == nullptr) return std::nullopt;
  const std::string own = std::to_string(::dirfd(dir));
  int64_t count = 0;
  for (int64_t seen = 0; seen < kMaxFdEntries; ++seen) {
    const dirent* e = ::readdir(dir);
    if (e == nullptr) break;
    if (e->d_name[0] != '.' && own != e->d_name) ++count;
  }
  ::closedir(dir);
  return count;
}

double Seconds(const timespec& ts) { return static_cast<double>(ts.tv_sec) + ts.tv_nsec / 1e9; }

// The wall-clock time `start_ticks` clock ticks after boot (stat's starttime counts on the
// boot-time clock, which includes suspend).
double StartTimeSeconds(uint64_t start_ticks, long hz) {
  timespec real{};
  timespec boot{};
  ::clock_gettime(CLOCK_REALTIME, &real);
  ::clock_gettime(CLOCK_BOOTTIME, &boot);
  return Seconds(real) - Seconds(boot) + static_cast<double>(start_ticks) / hz;
}

template <typename T>
bool ParseNumber(const std::string& s, T* out) {
  const char* end = s.data() + s.size();
  auto r = std::from_chars(s.data(), end, *out);
  return r.ec == std::errc() && r.ptr == end;
}

}  // namespace

std::optional<ProcStat> ParseProcStat(const std::string& text) {
  // "pid (comm) state ppid ...": comm may hold anything, so fields start after the last ')'.
  const size_t paren = text.rfind(')');
  if (paren == std::string::npos) return std::nullopt;
  std::vector<std::string> f;  // f[0] is field 3 (state), f[n - 3] is field n
  size_t pos = paren + 1;
  while (f.size() < 22) {
    pos = text.find_first_not_of(" \n", pos);
    if (pos == std::string::npos) return std::nullopt;
    const size_t end = std::min(text.find_first_of(" \n", pos), text.size());
    f.push_back(text.substr(pos, end - pos));
    pos = end;
  }
  ProcStat st;
  uint64_t utime = 0;
  uint64_t stime = 0;
  if (!ParseNumber(f[14 - 3], &utime) || !ParseNumber(f[15 - 3], &stime) ||
      !ParseNumber(f[20 - 3], &st.threads) || !ParseNumber(f[22 - 3], &st.start_ticks) ||
      !ParseNumber(f[23 - 3], &st.vsize_bytes) || !ParseNumber(f[24 - 3], &st.rss_pages)) {
    return std::nullopt;
  }
  st.cpu_ticks = utime + stime;
  return st;
}

void AddProcessMetrics(Registry& registry) {
  const long hz = ::sysconf(_SC_CLK_TCK);
  const long page = ::sysconf(_SC_PAGESIZE);
  registry.AddCollector([&registry, hz, page, start = std::optional<double>()]() mutable {
    const std::optional<std::string> text = ReadBounded("/proc/self/stat", kMaxStatBytes);
    const std::optional<ProcStat> st = text ? ParseProcStat(*text) : std::nullopt;
    if (st) {
      if (hz > 0) {
        registry
            .GetCounter("process_cpu_seconds_total",
                        "Total user and system CPU time spent in seconds.")
            .RaiseTo(static_cast<double>(st->cpu_ticks) / hz);
        if (!start) start = StartTimeSeconds(st->start_ticks, hz);  // it never changes
        registry
            .GetGauge("process_start_time_seconds",
                      "Start time of the process since unix epoch in seconds.")
            .Set(*start);
      }
      registry.GetGauge("process_virtual_memory_bytes", "Virtual memory size in bytes.")
          .Set(static_cast<double>(st->vsize_bytes));
      if (page > 0) {
        registry.GetGauge("process_resident_memory_bytes", "Resident memory size in bytes.")
            .Set(static_cast<double>(st->rss_pages) * page);
      }
      registry.GetGauge("process_threads", "Number of OS threads in the process.")
          .Set(static_cast<double>(st->threads));
    }
    if (const std::optional<int64_t> fds = CountOpenFds()) {
      registry.GetGauge("process_open_fds", "Number of open file descriptors.")
          .Set(static_cast<double>(*fds));
    }
    rlimit rl{};
    if (::getrlimit(RLIMIT_NOFILE, &rl) == 0) {
      registry.GetGauge("process_max_fds", "Maximum number of open file descriptors.")
          .Set(static_cast<double>(rl.rlim_cur));
    }
  });
}

}  // namespace hcashare::metrics
