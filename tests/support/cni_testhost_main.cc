// hcashare-cni-testhost: hcashare-cni's own code (cni/plugin_main.h) on the test-only
// file backends (file_backends.h) for the PF VF table and the RDMA subsystem, and the VF
// driver model (vf_driver_model.h) with them, so that the
// failure-path tests can apply, kill and verify PF-side settings and RDMA moves on a
// machine without SR-IOV hardware. Built for the tests only; never installed or shipped.
//
//   hcashare-cni-testhost                                   a CNI invocation
//   hcashare-cni-testhost cni-gc STATE_DIR HOST_ROOT CNI_PATH   what `hcashare cni-gc` runs
#include <cstdlib>
#include <iostream>
#include <string>

#include "cni/node_config.h"
#include "cni/plugin_main.h"
#include "cni/recover.h"
#include "common/host.h"
#include "tests/support/file_backends.h"
#include "tests/support/vf_driver_model.h"

namespace {

hcashare::cni::PluginBackends Backends() {
  hcashare::cni::PluginBackends backends = hcashare::cni::NetlinkBackends();
  if (const char* table = std::getenv("HCASHARE_TEST_VF_TABLE")) {
    const std::string path = table;
    backends.vf = [path] { return hcashare::testing::NewFileVfOps(path); };
    auto tree = std::make_shared<hcashare::testing::ModelTree>();
    const char* rdma = std::getenv("HCASHARE_TEST_RDMA");
    backends.vf_driver = [path, tree,
                          rdma = std::string(rdma ? rdma : "")](const hcashare::Host& host) {
      return hcashare::testing::NewVfDriverModel(path, rdma, host, tree);
    };
    backends.netdev = [tree] {
      return hcashare::testing::NewTreeMirroringNetdevOps(hcashare::NewNetlinkNetdevOps(), tree);
    };
  }
  if (const char* rdma = std::getenv("HCASHARE_TEST_RDMA")) {
    const std::string path = rdma;
    backends.rdma = [path] { return hcashare::testing::NewFileRdmaSystem(path); };
  }
  return backends;
}

// cni::RecoverAttachments, as `hcashare cni-gc` runs it, on these backends.
int CniGc(const std::string& state_dir, const std::string& host_root, const std::string& cni_path) {
  const hcashare::cni::PluginBackends backends = Backends();
  auto host = hcashare::NewRootedHost(host_root);
  auto netdev = backends.netdev();
  auto vf = backends.vf();
  auto rdma = backends.rdma();
  hcashare::cni::StateStore store(state_dir);
  auto vf_driver = backends.vf_driver(*host);
  hcashare::cni::AttachContext ctx{*host, *netdev, *vf, *rdma, store, nullptr};
  ctx.vf_driver = vf_driver.get();
  // The node file, as `hcashare cni-gc` reads it (its deviceInfoDir bounds what DEL removes).
  auto loaded = hcashare::cni::LoadNodeSettings(hcashare::cni::ProcessEnvironment());
  if (!loaded.ok()) {
    std::cerr << loaded.status().ToString() << "\n";
    return 1;
  }
  hcashare::cni::NodeSettings node = *loaded;
  node.state_dir = state_dir;
  node.host_root = host_root;
  int failures = 0;
  for (const auto& item : hcashare::cni::RecoverAttachments(ctx, node, cni_path, /*apply=*/true)) {
    std::cout << item.container_id << "/" << item.ifname << ": "
              << (item.reason.empty() ? "keep" : item.reason) << " " << item.error << "\n";
    failures += !item.error.empty();
  }
  return failures == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 5 && std::string(argv[1]) == "cni-gc") return CniGc(argv[2], argv[3], argv[4]);
  return hcashare::cni::RunPlugin(Backends());
}
