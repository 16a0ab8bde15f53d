// DaemonEnv: the surroundings the real hcashare-device-plugin runs in for the process-level
// tests (tests/daemon_fixture.h) and the whole-process benchmarks (bench/daemon_env.h): a
// temporary directory holding a simulated node, a config file, a kubelet root and a
// pool-info directory, and the daemon's command line over them.
#pragma once

#include <string>
#include <vector>

#include "common/process.h"
#include "common/status.h"
#include "common/temp_dir.h"
#include "testing/sim_node.h"

namespace hcashare::fake {

class DaemonEnv {
 public:
  // A fresh temporary directory named after `temp_prefix`; nothing in it yet.
  explicit DaemonEnv(const std::string& temp_prefix = "hcashare-");
  DaemonEnv(const DaemonEnv&) = delete;
  DaemonEnv& operator=(const DaemonEnv&) = delete;

  // Lays out the demo node (SimNode::PopulateDemo) and, unless `config_json` is empty,
  // writes the config file.
  Status Prepare(const std::string& config_json = "");
  // Replaces the config file.
  void WriteConfig(const std::string& config_json) const;
  // The daemon's command line: `plugin` on this node, kubelet root, device-plugin and
  // pool-info directories, then `extra` (which names the config, if any).
  std::vector<std::string> Argv(const std::string& plugin,
                                const std::vector<std::string>& extra) const;
  // Starts Argv(plugin, extra) with its output in `log_path`.
  Result<Subprocess> Spawn(const std::string& plugin, const std::vector<std::string>& extra,
                           const std::string& log_path) const;

  TempDir tmp;
  const std::string host = tmp.path() + "/host";        // the node's host root
  const std::string kubelet = tmp.path() + "/kubelet";  // --kubelet-root-dir
  // --device-plugin-dir: where a kubelet rooted at `kubelet` has it by default.
  const std::string device_plugins = kubelet + "/device-plugins";
  const std::string config = tmp.path() + "/config.json";  // the config file
  const std::string pools = tmp.path() + "/pools";         // --pool-info-dir
  SimNode node{host};  // hot-plug through this one: it numbers the char devices
};

}  // namespace hcashare::fake
