// The setting the whole-process drivers run the real daemon in: a temporary directory with
// the demo node (SimNode::PopulateDemo), a config file and a kubelet root.
#pragma once

#include <fstream>
#include <string>
#include <vector>

#include "common/subprocess.h"
#include "common/temp_dir.h"
#include "testing/sim_node.h"

namespace hcashare::bench {

struct DaemonEnv {
  TempDir tmp{"hcashare-bench-"};
  std::string host = tmp.path() + "/host";
  std::string kubelet = tmp.path() + "/kubelet";
  std::string config = tmp.path() + "/config.json";
  std::string log = tmp.path() + "/plugin.log";
  fake::SimNode node{host};  // hot-plug through this one: it numbers the char devices

  // Writes the demo node and `config_json`.
  Status Prepare(const std::string& config_json) {
    RETURN_IF_ERROR(node.PopulateDemo());
    WriteConfig(config_json);
    return Status::Ok();
  }
  // Replaces the config file.
  void WriteConfig(const std::string& config_json) const { std::ofstream(config) << config_json; }
  // Starts `plugin` on this node and kubelet root with `extra` flags; output to `log`.
  Result<Subprocess> Spawn(const std::string& plugin, const std::vector<std::string>& extra) const {
    std::vector<std::string> argv = {plugin,
                                     "--config",
                                     config,
                                     "--host-root",
                                     host,
                                     "--kubelet-root-dir",
                                     kubelet,
                                     "--pool-info-dir",
                                     tmp.path() + "/pools"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return Subprocess::Spawn(argv, log);
  }
};

}  // namespace hcashare::bench
