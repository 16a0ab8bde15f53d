#include "common/metrics.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace hcashare::metrics {
namespace {

// Misuse of the registry is a programming error: report it and abort (also under NDEBUG).
[[noreturn]] void Fatal(const std::string& msg) {
  std::fprintf(stderr, "hcashare metrics: %s\n", msg.c_str());
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

std::string Registry::Render() const {
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

}  // namespace hcashare::metrics
