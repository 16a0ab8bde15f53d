// hcashare-demo (`hcashare demo`): the device plugin, for real, on a simulated node.
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fstream>
#include <iostream>

#include <nlohmann/json.hpp>

#include "common/host.h"
#include "common/process.h"
#include "common/strings.h"
#include "common/temp_dir.h"
#include "node/discovery.h"
#include "testing/demo.h"
#include "testing/fake_kubelet.h"
#include "testing/sim_node.h"
#include "tools/allocate_json.h"

namespace hcashare::fake {
namespace {

using std::chrono::milliseconds;

// The example config from the Mellanox plugin's README and ConfigMap, unchanged.
constexpr const char* kMellanoxExample = R"({
  "periodicUpdateInterval": 300,
  "configList": [
    {
      "resourceName": "hca_shared_devices_a",
      "rdmaHcaMax": 1000,
      "devices": ["ib0", "ib1"]
    },
    {
      "resourceName": "hca_shared_devices_b",
      "rdmaHcaMax": 500,
      "selectors": {
        "vendors": ["15b3"],
        "deviceIDs": ["1017"],
        "ifNames": ["ib3", "ib4"]
      }
    }
  ]
}
)";

void Step(const std::string& s) { std::cout << "\n==> " << s << "\n" << std::flush; }

int Fail(const std::string& why) {
  std::cout << "demo FAILED: " << why << "\n";
  return 1;
}

// Comma-joined, or "-" when empty.
std::string List(const std::vector<std::string>& v) { return v.empty() ? "-" : Join(v); }

}  // namespace

int RunDemo(const DemoOptions& opts) {
  TempDir tmp("hcashare-demo-");
  if (tmp.path().empty()) return Fail("cannot create a temp directory");
  if (opts.keep) tmp.Keep();
  const std::string host_root = tmp.path() + "/host";
  const std::string kubelet_root = tmp.path() + "/kubelet";
  const std::string config_path = tmp.path() + "/config.json";
  const std::string plugin =
      opts.plugin_binary.empty() ? SelfDir() + "/hcashare-device-plugin" : opts.plugin_binary;

  Step("1. Simulated node: sysfs and /dev laid out under " + host_root);
  SimNode node(host_root);
  if (Status st = node.PopulateDemo(); !st.ok()) return Fail(st.ToString());
  auto host = NewRootedHost(host_root);
  node::Inventory inv = node::Discoverer(*host).Scan();
  std::cout << "  discovered " << inv.functions.size() << " RDMA PCI functions:\n";
  for (const auto& f : inv.functions) {
    std::vector<std::string> rdma, chars;
    for (const auto& r : f.rdma) {
      rdma.push_back(r.name);
      chars.insert(chars.end(), r.char_devices.begin(), r.char_devices.end());
    }
    std::cout << "  " << f.address << "  " << f.vendor << ":" << f.device << "  driver=" << f.driver
              << "  netdevs=" << List(f.netdevs) << "  link=" << List(f.link_types)
              << "  numa=" << f.numa_node << "  rdma=" << List(rdma) << "  chardevs=" << List(chars)
              << "\n";
  }
  std::cout << "  (the Intel NIC 0000:18:00.0 has no RDMA and the SATA controller is not a NIC:"
               " both skipped)\n";

  Step("2. Config: the Mellanox example ConfigMap, unchanged");
  std::ofstream(config_path) << kMellanoxExample;
  std::cout << kMellanoxExample;

  Step("3. Fake kubelet serving " + kubelet_root + "/device-plugins/kubelet.sock");
  FakeKubelet kubelet(kubelet_root);
  if (Status st = kubelet.Start(); !st.ok()) return Fail(st.ToString());

  Step("4. Starting " + plugin);
  if (::access(plugin.c_str(), X_OK) != 0) return Fail(plugin + " not found or not executable");
  auto proc = Subprocess::Spawn({plugin, "--config", config_path, "--host-root", host_root,
                                 "--kubelet-root-dir", kubelet_root, "--device-plugin-dir",
                                 kubelet.DevicePluginDir(), "--registration", "kubelet",
                                 "--pool-info-dir", tmp.path() + "/pools"});
  if (!proc.ok()) return Fail(proc.status().ToString());

  const std::vector<std::string> resources = {"rdma/hca_shared_devices_a",
                                              "rdma/hca_shared_devices_b"};
  for (const auto& r : resources) {
    bool ok = false;
    for (int i = 0; i < 150 && !ok; ++i) {
      ok = kubelet.WaitFor(
          r, [](const ResourceView& v) { return v.connected && !v.devices.empty(); },
          milliseconds(100));
      if (auto rc = proc->Wait(milliseconds(0)); rc.ok()) {
        return Fail("the plugin exited early with code " + std::to_string(*rc));
      }
    }
    if (!ok) return Fail("resource " + r + " did not register with a device list");
  }

  Step("5. Registered resources, as the kubelet sees them");
  for (const auto& r : resources) {
    ResourceView v = kubelet.View(r);
    int healthy = 0;
    for (const auto& d : v.devices) healthy += d.health() == "Healthy";
    std::cout << "  " << r << ": " << v.devices.size() << " devices (" << healthy
              << " Healthy), IDs " << v.devices.front().id() << ".." << v.devices.back().id()
              << ", preferred allocation "
              << (v.options.get_preferred_allocation_available() ? "on" : "off") << ", endpoint "
              << v.endpoint << "\n";
  }

  Step("6. Allocate rdma/hca_shared_devices_a, device ID 0");
  auto resp = kubelet.Allocate(resources[0], {"0"});
  if (!resp.ok()) return Fail("Allocate: " + resp.status().ToString());
  std::cout << cli::AllocateResponseJson(*resp).dump(2) << "\n";

  Step("7. Allocate with an ID the resource does not have (\"1000\")");
  auto bad = kubelet.Allocate(resources[0], {"1000"});
  if (bad.ok()) return Fail("Allocate accepted an unknown ID");
  std::cout << "  rejected: " << bad.status().ToString() << "\n";

  Step("8. SIGTERM: clean shutdown");
  (void)proc->Signal(SIGTERM);
  auto rc = proc->Wait(milliseconds(10000));
  if (!rc.ok()) return Fail("plugin did not stop: " + rc.status().ToString());
  struct stat st {};
  bool sockets_gone =
      ::stat((kubelet_root + "/device-plugins/hca_shared_devices_a.sock").c_str(), &st) != 0 &&
      ::stat((kubelet_root + "/device-plugins/hca_shared_devices_b.sock").c_str(), &st) != 0;
  std::cout << "  exit code " << *rc << ", sockets removed: " << (sockets_gone ? "yes" : "no")
            << "\n";
  kubelet.Stop();
  if (*rc != 0 || !sockets_gone) return Fail("unclean shutdown");
  if (opts.keep) std::cout << "\nkept " << tmp.path() << "\n";
  std::cout << "\ndemo OK\n";
  return 0;
}

}  // namespace hcashare::fake
