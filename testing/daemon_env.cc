#include "testing/daemon_env.h"

#include <fstream>

namespace hcashare::fake {

DaemonEnv::DaemonEnv(const std::string& temp_prefix) : tmp(temp_prefix) {}

Status DaemonEnv::Prepare(const std::string& config_json) {
  RETURN_IF_ERROR(node.PopulateDemo());
  if (!config_json.empty()) WriteConfig(config_json);
  return Status::Ok();
}

void DaemonEnv::WriteConfig(const std::string& config_json) const {
  std::ofstream(config) << config_json;
}

std::vector<std::string> DaemonEnv::Argv(const std::string& plugin,
                                         const std::vector<std::string>& extra) const {
  std::vector<std::string> argv = {
      plugin,         "--host-root",     host, "--kubelet-root-dir", kubelet, "--device-plugin-dir",
      device_plugins, "--pool-info-dir", pools};
  argv.insert(argv.end(), extra.begin(), extra.end());
  return argv;
}

Result<Subprocess> DaemonEnv::Spawn(const std::string& plugin,
                                    const std::vector<std::string>& extra,
                                    const std::string& log_path) const {
  return Subprocess::Spawn(Argv(plugin, extra), log_path);
}

}  // namespace hcashare::fake
