// Subcommands of the `hcashare` CLI. Each returns the process exit code.
#pragma once

#include <string>

namespace hcashare::cli {

// `hcashare validate FILE`: prints the same report the daemon prints (text or JSON).
// 0 when valid, 2 when not (an unreadable file is an error at "$").
int RunValidate(const std::string& file, bool json);

struct DemoOptions {
  std::string plugin_binary;  // "" = next to this executable
  bool keep = false;          // keep the temp directory
  bool json = false;          // print the summary as JSON
};

// `hcashare demo`: runs the real device plugin against a simulated node and a built-in
// fake kubelet, shows discovery, registration, the resources and an Allocate, then stops
// the plugin with SIGTERM. 0 when every step worked.
int RunDemo(const DemoOptions& opts);

}  // namespace hcashare::cli
