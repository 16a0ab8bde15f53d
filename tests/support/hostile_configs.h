// Hostile device-plugin configs of a given size, and the memory a parse of one takes:
// shared by tests/config_memory_test.cc and bench/config_mem_bench.cc (issue 25, "bounded
// memory"). Each shape is one way a config's text can make the parse allocate far more
// than its size: many values that each cost a tree node, an error or a resource, duplicate
// keys that each cost an error, deep nesting, YAML aliases that expand.
#pragma once

#include <malloc.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "config/config.h"
#include "tests/run_in_child.h"
#include "tests/support/proc_status.h"

namespace hcashare::testing {

// One hostile shape: `make(bytes)` is a config of about `bytes` bytes (never more), in the
// format its `extension` names (".json" or ".yaml").
struct HostileShape {
  const char* name;
  const char* extension;
  std::string (*make)(size_t bytes);
};

// `head` + `item` joined by `sep` as many times as fit in `bytes` with `tail`.
inline std::string Repeat(const std::string& head, const std::string& item, const std::string& sep,
                          const std::string& tail, size_t bytes) {
  std::string out = head;
  const size_t room = bytes > head.size() + tail.size() ? bytes - head.size() - tail.size() : 0;
  for (size_t used = 0; used + item.size() + sep.size() <= room; used += item.size() + sep.size()) {
    if (used > 0) out += sep;
    out += item;
  }
  return out + tail;
}

// The shapes, JSON then YAML.
inline const std::vector<HostileShape>& HostileShapes() {
  static const std::vector<HostileShape> shapes = {
      {"json-duplicate-keys", ".json",
       [](size_t n) { return Repeat("{", R"("a":0)", ",", "}", n); }},
      {"json-distinct-keys", ".json",
       [](size_t n) {
         std::string out = "{";
         for (size_t i = 0; out.size() + 16 < n; ++i) {
           out += (i ? ",\"" : "\"") + std::to_string(i) + "\":0";
         }
         return out + "}";
       }},
      {"json-empty-objects", ".json",
       [](size_t n) { return Repeat(R"({"configList":[)", "{}", ",", "]}", n); }},
      {"json-tiny-values", ".json",
       [](size_t n) { return Repeat(R"({"configList":[)", "0", ",", "]}", n); }},
      {"json-empty-strings", ".json",
       [](size_t n) {
         return Repeat(R"({"configList":[{"resourceName":"r","rdmaHcaMax":1,)"
                       R"("selectors":{"ifNames":[)",
                       R"("")", ",", "]}}]}", n);
       }},
      {"json-deep", ".json",
       [](size_t n) {
         const size_t depth = (n - 16) / 2;
         return R"({"configList":)" + std::string(depth, '[') + std::string(depth, ']') + "}";
       }},
      {"json-long-string", ".json",
       [](size_t n) {
         return R"({"configList":[{"resourceName":")" + std::string(n - 80, 'a') +
                R"(","rdmaHcaMax":1,"devices":["ib0"]}]})";
       }},
      // Valid: 64 resources (the most allowed), each selecting a long list of netdevs.
      {"json-64-long-lists", ".json",
       [](size_t n) {
         std::string out = R"({"configList":[)";
         for (int r = 0; r < 64; ++r) {
           const size_t end = (r + 1) * (n / 64);
           out += (r ? "," : "") + std::string(R"({"resourceName":"r)") + std::to_string(r) +
                  R"(","rdmaHcaMax":1,"selectors":{"ifNames":["ib0")";
           for (int i = 1; out.size() + 32 < end; ++i) out += ",\"ib" + std::to_string(i) + "\"";
           out += "]}}";
         }
         return out + "]}";
       }},
      {"yaml-duplicate-keys", ".yaml", [](size_t n) { return Repeat("", "a: 0", "\n", "\n", n); }},
      {"yaml-empty-maps", ".yaml",
       [](size_t n) { return Repeat("configList: [", "{}", ",", "]\n", n); }},
      {"yaml-tiny-values", ".yaml",
       [](size_t n) { return Repeat("configList: [", "0", ",", "]\n", n); }},
      {"yaml-block-list", ".yaml",
       [](size_t n) { return Repeat("configList:\n", "- 0", "\n", "\n", n); }},
      // 20,000 values fill a MiB: the most values, each as long as the size allows.
      {"yaml-long-values", ".yaml",
       [](size_t n) {
         return Repeat("configList:\n", "- " + std::string(48, 'a'), "\n", "\n", n);
       }},
      {"yaml-long-string", ".yaml",
       [](size_t n) {
         return "configList:\n- resourceName: " + std::string(n - 64, 'a') +
                "\n  rdmaHcaMax: 1\n  devices: [ib0]\n";
       }},
      {"yaml-many-aliases", ".yaml",
       [](size_t n) {
         return Repeat("configList: [&a {resourceName: r}, ", "*a", ", ", "]\n", n);
       }},
      // "Billion laughs": nine levels of ten aliases of the level below, 10^9 values once
      // expanded, in a few hundred bytes (whatever `bytes` asks).
      {"yaml-alias-bomb", ".yaml",
       [](size_t) {
         std::string yaml = "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n";
         for (int i = 1; i < 10; ++i) {
           const std::string prev = "*a" + std::to_string(i - 1);
           yaml += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [" + prev;
           for (int j = 0; j < 9; ++j) yaml += ", " + prev;
           yaml += "]\n";
         }
         return yaml;
       }},
  };
  return shapes;
}

// What one LoadConfigFile of a file cost, measured in a child process.
struct LoadMeasure {
  long peak_growth_kib = 0;  // VmHWM after the load minus VmRSS before it
  double ms = 0;             // wall time of the load
  size_t errors = 0;         // ParseOutcome::errors.size()
  std::string first_error;   // errors[0].ToString(), "" when none
};

// Loads `path` with config::LoadConfigFile in a child (RunInChild: killed after `limit`,
// address space capped at `max_memory` outside the sanitizers) and measures it. The
// child first hands its free heap back (malloc_trim: memory the parent freed would
// otherwise be reused unseen) and resets its VmHWM (/proc/self/clear_refs, "5"), so the
// growth is the load's own. std::nullopt when the child ran out of time or memory.
inline std::optional<LoadMeasure> MeasureLoad(const std::string& path,
                                              std::chrono::milliseconds limit,
                                              size_t max_memory = size_t{1} << 30) {
  const std::optional<std::string> out = RunInChild(
      [&] {
        ::malloc_trim(0);
        std::ofstream("/proc/self/clear_refs") << "5";
        const long before = ProcStatusKib(::getpid(), "VmRSS:");
        const auto start = std::chrono::steady_clock::now();
        const config::ParseOutcome outcome = config::LoadConfigFile(path);
        const double ms =
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                .count();
        const long peak = ProcStatusKib(::getpid(), "VmHWM:");
        char head[64];
        std::snprintf(head, sizeof(head), "%ld %.3f %zu\n", peak - before, ms,
                      outcome.errors.size());
        return head + (outcome.errors.empty() ? "" : outcome.errors[0].ToString());
      },
      limit, max_memory);
  if (!out) return std::nullopt;
  LoadMeasure m;
  const size_t eol = out->find('\n');
  if (eol == std::string::npos ||
      std::sscanf(out->c_str(), "%ld %lf %zu", &m.peak_growth_kib, &m.ms, &m.errors) != 3) {
    return std::nullopt;
  }
  m.first_error = out->substr(eol + 1);
  return m;
}

// Whether the reader refused the text before parsing it (its size, values or depth).
inline bool RefusedUnparsed(const std::optional<LoadMeasure>& m) {
  if (!m) return true;
  for (const char* what : {"the limit is", "values and keys", "levels deep"}) {
    if (m->first_error.find(what) != std::string::npos) return true;
  }
  return false;
}

// The largest size up to config::kMaxConfigBytes whose text of `shape`, written to `path`,
// the reader does not refuse unparsed (by bisection, to 16 bytes; 0 when none is accepted).
inline size_t LargestAccepted(const HostileShape& shape, const std::string& path) {
  size_t ok = 0, refused = config::kMaxConfigBytes + 1;
  while (refused - ok > 16) {
    const size_t mid = ok + (refused - ok) / 2;
    std::ofstream(path, std::ios::trunc) << shape.make(mid);
    (RefusedUnparsed(MeasureLoad(path, std::chrono::seconds(60))) ? refused : ok) = mid;
  }
  return ok;
}

}  // namespace hcashare::testing
