// The setting the whole-process drivers run the real daemon in: the daemon environment
// shared with the tests (testing/daemon_env.h: the demo node, a config file and a kubelet
// root), with the daemon's output in plugin.log and the config always passed.
#pragma once

#include <string>
#include <vector>

#include "common/process.h"
#include "testing/daemon_env.h"

namespace hcashare::bench {

struct DaemonEnv : fake::DaemonEnv {
  DaemonEnv() : fake::DaemonEnv("hcashare-bench-") {}

  // Starts `plugin` with the config file and `extra` flags; output to `log`.
  Result<Subprocess> Spawn(const std::string& plugin, const std::vector<std::string>& extra) const {
    std::vector<std::string> args = {"--config", config};
    args.insert(args.end(), extra.begin(), extra.end());
    return fake::DaemonEnv::Spawn(plugin, args, log);
  }

  const std::string log = tmp.path() + "/plugin.log";
};

}  // namespace hcashare::bench
