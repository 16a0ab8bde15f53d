// The demo (`hcashare-demo`, which `hcashare demo` runs): the real device plugin on a
// simulated node (SimNode) against a fake kubelet. A test binary: never shipped.
#pragma once

#include <string>

namespace hcashare::fake {

// What `hcashare-demo` takes on its command line.
struct DemoOptions {
  std::string plugin_binary;  // "" = hcashare-device-plugin next to this executable
  bool keep = false;          // keep the temp directory
  bool json = false;          // print the summary as JSON
};

// Runs the real device plugin against a simulated node and a fake kubelet, shows
// discovery, registration, the resources and an Allocate, then stops the plugin with
// SIGTERM. 0 when every step worked.
int RunDemo(const DemoOptions& opts);

}  // namespace hcashare::fake
