// Test fixture for the CNI verbs against real network namespaces: a simulated host tree
// whose VFs' netdevs are real veth interfaces, a real pod namespace, real IPAM (host-local
// from containernetworking-plugins), a recording double for the PF-side VF settings and a
// fake RDMA subsystem. Each test runs inside its own "host" namespace, so the machine's
// network is untouched.
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include "cni/attach.h"
#include "cni/env.h"
#include "cni/error.h"
#include "cni/netconf.h"
#include "common/host.h"
#include "common/netns.h"
#include "common/temp_dir.h"
#include "nl/netdev.h"
#include "nl/rdma_netlink.h"
#include "testing/fake_rdma_system.h"
#include "testing/recording_vf_ops.h"
#include "testing/sim_node.h"

namespace hcashare::cni {

namespace fs = std::filesystem;
using json = nlohmann::json;

inline constexpr const char* kIpamDir = "/usr/lib/cni";

inline bool Sh(const std::string& cmd) {
  return std::system((cmd + " >/dev/null 2>&1").c_str()) == 0;
}

// A named network namespace, deleted on destruction.
class NamedNetns {
 public:
  explicit NamedNetns(std::string name) : name_(std::move(name)) {
    ok_ = Sh("ip netns add " + name_);
  }
  ~NamedNetns() {
    if (ok_) Sh("ip netns del " + name_);
  }
  NamedNetns(const NamedNetns&) = delete;
  NamedNetns& operator=(const NamedNetns&) = delete;
  bool ok() const { return ok_; }
  const std::string& name() const { return name_; }
  std::string path() const { return "/var/run/netns/" + name_; }
  // Deletes it now (a pod that went away).
  void Delete() {
    if (ok_) Sh("ip netns del " + name_);
    ok_ = false;
  }

 private:
  std::string name_;
  bool ok_ = false;
};

// Attachment state files plus owner markers under CNI state dir `dir`.
inline size_t CountStateFiles(const std::string& dir) {
  size_t n = 0;
  for (const char* sub : {"attachments", "owners"}) {
    std::error_code ec;
    for (auto it = fs::directory_iterator(dir + "/" + sub, ec);
         !ec && it != fs::directory_iterator(); ++it) {
      ++n;
    }
  }
  return n;
}

// Runs `fn` on a thread inside `ns` and waits for it.
template <typename F>
void RunIn(const NamedNetns& ns, F fn) {
  std::thread t([&] {
    auto handle = Netns::Open(ns.path());
    ASSERT_TRUE(handle.ok()) << handle.status().ToString();
    NetnsGuard guard(*handle);
    ASSERT_TRUE(guard.status().ok());
    fn();
  });
  t.join();
}

inline std::string Unique(const std::string& prefix) {
  static std::atomic<int> n{0};
  return prefix + std::to_string(::getpid() % 100000) + "x" + std::to_string(n++);
}

// One simulated node: a PF with `vfs` VFs whose netdevs are veths in the test's host
// namespace, a pod namespace, a state dir and the CNI context.
class CniAttachTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root (network namespaces)";
    if (!fs::exists(std::string(kIpamDir) + "/host-local")) {
      GTEST_SKIP() << "needs containernetworking-plugins";
    }
    host_ns_ = std::make_unique<NamedNetns>(Unique("hch"));
    pod_ns_ = std::make_unique<NamedNetns>(Unique("hcp"));
    ASSERT_TRUE(host_ns_->ok() && pod_ns_->ok());
    node_ = std::make_unique<fake::SimNode>(tmp_.path() + "/host");
    fake::SimPciFunction pf;
    pf.address = "0000:3b:00.0";
    pf.netdevs = {"pf0"};
    ASSERT_TRUE(node_->AddPciFunction(pf).ok());
    for (int i = 0; i < 2; ++i) AddVf(i);
    host_ = NewRootedHost(tmp_.path() + "/host");
    store_ = std::make_unique<StateStore>(tmp_.path() + "/state");
  }

  // VF i: PCI 0000:3b:00.(2+i), netdev a veth "<prefix>v<i>" in the host namespace.
  // With `rdma`, the VF also has that RDMA device (in sysfs; the fake RDMA subsystem
  // knows it in the host namespace). With a DPDK `driver` it has no netdev.
  void AddVf(int i, const std::string& rdma = "", const std::string& driver = "mlx5_core") {
    const bool dpdk = driver == "vfio-pci";
    const std::string veth = Unique("hv");
    if (!dpdk) {
      ASSERT_TRUE(Sh("ip -n " + host_ns_->name() + " link add " + veth + " type veth peer name " +
                     veth + "p"));
    }
    fake::SimPciFunction vf;
    vf.address = "0000:3b:00." + std::to_string(2 + i);
    vf.physfn = "0000:3b:00.0";
    vf.driver = driver;
    if (!dpdk) vf.netdevs = {veth};
    vf.rdma_device = rdma;
    if (!rdma.empty()) RunIn(*host_ns_, [&] { rdma_.AddDevice(rdma); });
    ASSERT_TRUE(node_->AddPciFunction(vf).ok());
    vf_netdevs_.push_back(veth);
    // The kubelet allocated it to the pod (the allocation check asks pod_devices).
    pod_devices_.by_resource["rdma/fixture_vfs"].push_back(vf.address);
  }

  AttachContext Context() {
    AttachContext ctx{*host_, *netdev_, vf_ops_, rdma_, *store_, nullptr};
    ctx.pod_devices = [this]() -> Result<PodDeviceMap> { return pod_devices_; };
    ctx.lock_wait = std::chrono::milliseconds(2000);
    return ctx;
  }

  CniEnv Env(const std::string& verb, const std::string& ifname = "net1",
             const std::string& container = "c0ffee", std::string netns = "") {
    EnvMap m = {{"CNI_COMMAND", verb},
                {"CNI_CONTAINERID", container},
                {"CNI_NETNS", netns.empty() ? pod_ns_->path() : netns},
                {"CNI_IFNAME", ifname},
                {"CNI_PATH", cni_path_},
                {"CNI_ARGS", "K8S_POD_NAMESPACE=ns;K8S_POD_NAME=p;K8S_POD_UID=uid-1"}};
    if (netns == "-") m.erase("CNI_NETNS");
    auto env = ParseCniEnv(m);
    EXPECT_TRUE(env.ok()) << env.status().ToString();
    return env.ok() ? *env : CniEnv{};
  }

  NetConf Conf(json extra = json::object(), Verb verb = Verb::kAdd) {
    json conf = {{"cniVersion", "1.0.0"},
                 {"name", "rdma-net"},
                 {"type", "hcashare-cni"},
                 {"deviceID", "0000:3b:00.2"}};
    for (auto& [k, v] : extra.items()) {
      if (v.is_null()) {
        conf.erase(k);
      } else {
        conf[k] = v;
      }
    }
    auto parsed = ParseNetConf(conf.dump(), verb, node_settings_);
    EXPECT_TRUE(parsed.ok()) << parsed.status().ToString();
    return parsed.ok() ? *parsed : NetConf{};
  }

  json HostLocal() {
    return {{"type", "host-local"},
            {"subnet", "10.77.0.0/24"},
            {"routes", json::array({{{"dst", "10.88.0.0/16"}}})},
            {"gateway", "10.77.0.1"},
            {"dataDir", tmp_.path() + "/ipam"}};
  }

  // The link `name` in `ns`, or NotFound.
  Result<hcashare::LinkState> LinkIn(const NamedNetns& ns, const std::string& name) {
    Result<hcashare::LinkState> out = Status::Internal("not run");
    RunIn(ns, [&] { out = netdev_->Get(name); });
    return out;
  }

  size_t StateFiles() { return CountStateFiles(tmp_.path() + "/state"); }

  TempDir tmp_{"hcashare-cni-"};
  std::unique_ptr<NamedNetns> host_ns_, pod_ns_;
  std::unique_ptr<fake::SimNode> node_;
  std::unique_ptr<Host> host_;
  std::unique_ptr<StateStore> store_;
  std::unique_ptr<NetdevOps> netdev_ = NewNetlinkNetdevOps();
  fake::RecordingVfOps vf_ops_;
  fake::FakeRdmaSystem rdma_{RdmaNetnsMode::kShared};
  PodDeviceMap pod_devices_;
  // The node file's settings, for Conf(): device-info files under the test's directory.
  NodeSettings node_settings_ = [this] {
    NodeSettings s = DefaultNodeSettings();
    s.device_info_dir = tmp_.path() + "/devinfo";
    return s;
  }();
  std::vector<std::string> vf_netdevs_;
  std::string cni_path_ = kIpamDir;
};

}  // namespace hcashare::cni
