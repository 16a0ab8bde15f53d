// The config reader's memory on hostile input (issue 25, "bounded memory"). For each shape
// of tests/support/hostile_configs.h at each size, writes the config file and measures
//   - the parse alone: config::LoadConfigFile in a forked child, the growth of its peak
//     resident set (VmHWM after, VmRSS before) and its wall time;
//   - the whole daemon: hcashare-device-plugin --config FILE on the demo node, its peak
//     resident set (wait4's ru_maxrss), which is what the DaemonSet's 64 MiB limit sees.
//     An invalid config ends it with exit 2; a valid one is stopped with SIGTERM.
// With --at-limits, each shape is instead made as large as the reader accepts (at most
// config::kMaxConfigBytes, below kMaxConfigValues values and kMaxConfigDepth levels): the
// worst the bound has to hold for.
// Run: build/bin/config_mem_bench [--bytes 1048576 --bytes 16777216] [--at-limits]
//      [--shape NAME] [--no-daemon]
#include <malloc.h>
#include <signal.h>

#include <cstdio>
#include <fstream>
#include <iostream>

#include <CLI/CLI.hpp>

#include "common/process.h"
#include "testing/daemon_env.h"
#include "tests/support/hostile_configs.h"

namespace hcashare {
namespace {

using std::chrono::milliseconds;

// The daemon's peak resident set in KiB on `config` (-1 when it could not be run), and how
// it ended in `how`.
long DaemonPeakKib(const std::string& plugin, const fake::DaemonEnv& env, const std::string& config,
                   std::string* how) {
  auto proc = env.Spawn(plugin, {"--config", config, "--log-level", "error"},
                        env.tmp.path() + "/plugin.log");
  if (!proc.ok()) return -1;
  long peak = -1;
  Result<int> rc = proc->Wait(milliseconds(120000), &peak);
  if (!rc.ok()) {  // a valid config: the daemon runs on
    (void)proc->Signal(SIGTERM);
    rc = proc->Wait(milliseconds(10000), &peak);
    *how = "ran";
  } else {
    *how = "exit" + std::to_string(*rc);
  }
  return rc.ok() ? peak : -1;
}

int Main(int argc, char** argv) {
  std::vector<size_t> sizes = {size_t{1} << 20, size_t{16} << 20};
  std::string only;
  bool daemon = true;
  bool at_limits = false;
  std::string plugin = SelfDir() + "/hcashare-device-plugin";
  CLI::App app{"config_mem_bench: memory of parsing hostile configs"};
  app.add_option("--bytes", sizes, "config sizes")->capture_default_str();
  app.add_option("--shape", only, "only this shape (default: all)");
  app.add_flag("!--no-daemon", daemon, "measure the parse alone, not the daemon");
  app.add_flag("--at-limits", at_limits, "each shape as large as the reader accepts");
  app.add_option("--plugin", plugin, "daemon binary")->capture_default_str();
  CLI11_PARSE(app, argc, argv);

  fake::DaemonEnv env("hcashare-cfgmem-");
  if (!env.Prepare().ok()) return 1;
  for (const testing::HostileShape& shape : testing::HostileShapes()) {
    if (!only.empty() && only != shape.name) continue;
    const std::string path = env.tmp.path() + "/config" + shape.extension;
    std::vector<size_t> shape_sizes = sizes;
    if (at_limits) shape_sizes = {testing::LargestAccepted(shape, path)};
    for (size_t bytes : shape_sizes) {
      size_t size = 0;
      {
        const std::string text = shape.make(bytes);
        size = text.size();
        std::ofstream(path, std::ios::trunc) << text;
      }
      // The daemon's child starts as a copy of this process: keep it small.
      ::malloc_trim(0);
      // 8 GiB of address space and two minutes: enough for the unbounded parse to finish.
      const auto m = testing::MeasureLoad(path, milliseconds(120000), size_t{8} << 30);
      std::string how = "skipped";
      const long daemon_kib = daemon ? DaemonPeakKib(plugin, env, path, &how) : -1;
      std::printf(
          "shape=%s bytes=%zu parse_ms=%.1f parse_peak_growth_kib=%ld errors=%zu "
          "daemon=%s daemon_maxrss_kib=%ld first_error=\"%.100s\"\n",
          shape.name, size, m ? m->ms : -1.0, m ? m->peak_growth_kib : -1L, m ? m->errors : 0,
          how.c_str(), daemon_kib, m ? m->first_error.c_str() : "(child died)");
      std::fflush(stdout);
    }
  }
  return 0;
}

}  // namespace
}  // namespace hcashare

int main(int argc, char** argv) { return hcashare::Main(argc, argv); }
