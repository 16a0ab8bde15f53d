// Test fixture for hcashare-cni as a process: a per-test "host" network namespace whose
// veths stand in for the VFs' netdevs of a simulated host tree, pod namespaces, and a
// helper that runs the real binary (through `ip netns exec`) with a CNI environment and
// stdin. The machine's own network is untouched.
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cni/syntax.h"
#include "common/process.h"
#include "common/temp_dir.h"
#include "common/unique_fd.h"
#include "testing/sim_node.h"
#include "tests/cni_fixture.h"
#include "tests/support/vf_driver_model.h"
#include "tests/test_util.h"

namespace hcashare::cni {

// One finished hcashare-cni invocation.
struct CniRun {
  int exit_code = -1;  // 128 + signal when killed
  nlohmann::json out;  // stdout parsed (discarded when it is not JSON)
  std::string raw;     // stdout
  std::string err;     // stderr
  long max_rss_kib = 0;
};

// A netdev as `ip -j link` reports it.
struct LinkInfo {
  std::string name;
  std::string mac;
  unsigned mtu = 0;
  bool up = false;
};
inline bool operator==(const LinkInfo& a, const LinkInfo& b) {
  return a.name == b.name && a.mac == b.mac && a.mtu == b.mtu && a.up == b.up;
}
inline std::ostream& operator<<(std::ostream& os, const LinkInfo& l) {
  return os << l.name << " " << l.mac << " mtu " << l.mtu << (l.up ? " up" : " down");
}

// The fault points (cni/fault_points.h) a run with HCASHARE_CNI_CRASH_LIST=1 reached, in
// order, from its stderr.
inline std::vector<std::string> CrashPointsIn(const std::string& err) {
  std::vector<std::string> points;
  const std::string prefix = "hcashare-cni crash point: ";
  std::istringstream lines(err);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind(prefix, 0) == 0) points.push_back(line.substr(prefix.size()));
  }
  return points;
}

class CniBinaryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root (network namespaces)";
    host_ns_ = Unique("hbh");
    ASSERT_TRUE(Sh("ip netns add " + host_ns_));
    node_ = std::make_unique<fake::SimNode>(tmp_.path() + "/host");
    fake::SimPciFunction pf;
    pf.address = "0000:5e:00.0";
    pf.netdevs = {"pf0"};
    ASSERT_TRUE(node_->AddPciFunction(pf).ok());
    WriteNodeConfig();
    WriteCheckpoint();
  }
  void TearDown() override {
    for (const auto& ns : netns_) Sh("ip netns del " + ns);
    if (!host_ns_.empty()) Sh("ip netns del " + host_ns_);
  }

  // A VF at PCI `address` whose netdev is a new veth in the host namespace.
  std::string AddVfAt(const std::string& address) {
    const std::string veth = Unique("hb");
    EXPECT_TRUE(
        Sh("ip -n " + host_ns_ + " link add " + veth + " type veth peer name " + veth + "p"));
    fake::SimPciFunction vf;
    vf.address = address;
    vf.physfn = "0000:5e:00.0";
    vf.netdevs = {veth};
    EXPECT_TRUE(node_->AddPciFunction(vf).ok());
    vf_netdevs_.push_back(veth);
    AllocateToPod(vf.address);
    return vf.address;
  }
  // An InfiniBand PF (0000:7e:00.0, netdev `*pf_netdev`, added with its first VF) and its
  // VF 0000:7e:00.<fn> on mlx5_core, whose netdev is the driver model's link in the host
  // namespace standing in for its IPoIB one (tests/support/vf_driver_model.h), with the
  // MAC the model derives from `bound_guid`, and RDMA device `rdma` ("" for none); the
  // driver's bind and unbind are regular files. Returns the VF.
  std::string AddIbVf(std::string* pf_netdev, const std::string& bound_guid, int fn = 1,
                      const std::string& rdma = "") {
    if (ib_pf_netdev_.empty()) {
      fake::SimPciFunction pf;
      pf.address = "0000:7e:00.0";
      pf.netdevs = {Unique("ib")};
      pf.link_type = "infiniband";
      EXPECT_TRUE(node_->AddPciFunction(pf).ok());
      ib_pf_netdev_ = pf.netdevs[0];
    }
    fake::SimPciFunction vf;
    vf.address = "0000:7e:00." + std::to_string(fn);
    vf.physfn = "0000:7e:00.0";
    vf.link_type = "infiniband";
    vf.netdevs = {Unique("hb")};
    vf.rdma_device = rdma;
    std::string add = "ip -n " + host_ns_;
    for (const auto& arg :
         testing::ModelNetdevAddArgs(vf.netdevs[0], testing::ModelMacForGuid(bound_guid))) {
      add += " " + arg;
    }
    EXPECT_TRUE(Sh(add));
    EXPECT_TRUE(node_->AddPciFunction(vf).ok());
    for (const char* f : {"bind", "unbind"}) {
      std::ofstream(tmp_.path() + "/host/sys/bus/pci/drivers/mlx5_core/" + f);
    }
    *pf_netdev = ib_pf_netdev_;
    vf_netdevs_.push_back(vf.netdevs[0]);
    AllocateToPod(vf.address);
    return vf.address;
  }
  // A VF at function `fn` of the PF's device.
  std::string AddVf(int fn) { return AddVfAt("0000:5e:00." + std::to_string(fn)); }
  // VF number `i` of many: bus 5f, devices 1.., eight functions each.
  std::string AddVfNumber(int i) {
    char addr[32];
    std::snprintf(addr, sizeof(addr), "0000:5f:%02x.%d", 1 + i / 8, i % 8);
    return AddVfAt(addr);
  }
  // A new pod network namespace; returns its path.
  std::string AddPod() {
    netns_.push_back(Unique("hbp"));
    EXPECT_TRUE(Sh("ip netns add " + netns_.back()));
    return "/var/run/netns/" + netns_.back();
  }

  nlohmann::json Conf(const std::string& version, const std::string& device) {
    return {{"cniVersion", version},
            {"name", "rdma-net"},
            {"type", "hcashare-cni"},
            {"deviceID", device}};
  }

  // The node's settings (cni/node_config.h), which the node's administrator writes: the
  // test's host tree, state dir and kubelet root, and `extra` members. Every run reads it
  // through HCASHARE_CNI_CONFIG (NodeEnv()), the runtime's channel, never the NAD's.
  void WriteNodeConfig(const nlohmann::json& extra = nlohmann::json::object()) {
    nlohmann::json node = {{"hostRoot", tmp_.path() + "/host"},
                           {"stateDir", StateDir()},
                           {"kubeletRootDir", tmp_.path() + "/kubelet"},
                           {"devicePluginDir", tmp_.path() + "/kubelet/device-plugins"},
                           {"poolInfoDir", PoolInfoDir()},
                           {"deviceInfoDir", tmp_.path() + "/devinfo"}};
    node.update(extra);
    fs::create_directories(tmp_.path() + "/node");
    std::ofstream(NodeConfigPath()) << node.dump();
  }
  std::string NodeConfigPath() const { return tmp_.path() + "/node/cni.json"; }
  std::string NodeEnv() const { return "HCASHARE_CNI_CONFIG=" + NodeConfigPath(); }

  // Records `device` as allocated by the kubelet to the runs' pod (CNI_ARGS K8S_POD_UID
  // uid-a) in the kubelet's checkpoint, which the allocation check reads while there is no
  // pod-resources socket.
  void AllocateToPod(const std::string& device, const std::string& resource = "rdma/fixture_vfs") {
    allocated_[resource].push_back(device);
    WriteCheckpoint();
  }
  void WriteCheckpoint() {
    nlohmann::json entries = nlohmann::json::array();
    for (const auto& [resource, ids] : allocated_) {
      entries.push_back({{"PodUID", "uid-a"},
                         {"ContainerName", "main"},
                         {"ResourceName", resource},
                         {"DeviceIDs", {{"-1", ids}}}});
    }
    const nlohmann::json checkpoint = {
        {"Data", {{"PodDeviceEntries", entries}, {"RegisteredDevices", nlohmann::json::object()}}},
        {"Checksum", 0}};
    fs::create_directories(tmp_.path() + "/kubelet/device-plugins");
    std::ofstream(tmp_.path() + "/kubelet/device-plugins/kubelet_internal_checkpoint")
        << checkpoint.dump();
  }
  // host-local IPAM with its leases under the test's directory.
  nlohmann::json HostLocal(const std::string& subnet = "10.66.0.0/24") {
    return {{"type", "host-local"}, {"subnet", subnet}, {"dataDir", IpamDir()}};
  }

  // Runs the binary in the host namespace. `raw_stdin` replaces `conf` when not empty;
  // `extra_env` entries ("K=V") are added to the CNI environment, replacing a variable of
  // the same name.
  CniRun Run(const std::string& verb, const std::string& netns, const nlohmann::json& conf,
             const std::string& ifname = "net1", const std::string& container = "ctr1",
             const std::string& raw_stdin = "", const std::vector<std::string>& extra_env = {}) {
    std::vector<std::string> env = {"CNI_COMMAND=" + verb,
                                    "CNI_CONTAINERID=" + container,
                                    "CNI_NETNS=" + netns,
                                    "CNI_IFNAME=" + ifname,
                                    "CNI_PATH=" + std::string(kIpamDir),
                                    "CNI_ARGS=IgnoreUnknown=1;K8S_POD_NAMESPACE=ns;"
                                    "K8S_POD_NAME=pod-a;K8S_POD_UID=uid-a",
                                    "PATH=/usr/sbin:/usr/bin:/sbin:/bin",
                                    NodeEnv()};
    env.insert(env.end(), base_env_.begin(), base_env_.end());
    for (const std::string& kv : extra_env) {
      const std::string name = kv.substr(0, kv.find('=') + 1);
      auto same = std::find_if(env.begin(), env.end(),
                               [&](const std::string& e) { return e.rfind(name, 0) == 0; });
      if (same != env.end()) {
        *same = kv;
      } else {
        env.push_back(kv);
      }
    }
    return RunEnv(env, raw_stdin.empty() ? conf.dump() : raw_stdin);
  }
  // Runs the binary in the host namespace with exactly `env` and `input`; a run longer than
  // `limit` is killed and fails the test.
  CniRun RunEnv(const std::vector<std::string>& env, const std::string& input,
                std::chrono::milliseconds limit = std::chrono::milliseconds(30000)) {
    const std::string bin = testing::BinDir() + "/" + binary_;
    auto out = Execute("/usr/sbin/ip", {"ip", "netns", "exec", host_ns_, bin}, env, input, limit);
    CniRun run;
    if (!out.ok()) {
      ADD_FAILURE() << out.status().ToString();
      return run;
    }
    run.exit_code = out->exit_code;
    run.raw = out->out;
    run.err = out->err;
    run.max_rss_kib = out->max_rss_kib;
    run.out = nlohmann::json::parse(out->out, nullptr, false);
    return run;
  }

  // `hcashare cni-gc` over the state dir and the host tree, in the host namespace.
  Result<ExecOutput> CniGc(bool dry_run) {
    std::vector<std::string> argv = {
        "ip",     "netns",       "exec",     host_ns_,      testing::BinDir() + "/hcashare",
        "cni-gc", "--state-dir", StateDir(), "--host-root", tmp_.path() + "/host"};
    if (dry_run) argv.push_back("--dry-run");
    return Execute("/usr/sbin/ip", argv, {"PATH=/usr/sbin:/usr/bin:/sbin:/bin", NodeEnv()}, "",
                   std::chrono::milliseconds(30000));
  }

  std::string StateDir() const { return tmp_.path() + "/state"; }
  std::string PoolInfoDir() const { return tmp_.path() + "/pools"; }
  std::string IpamDir() const { return tmp_.path() + "/ipam"; }
  size_t StateFiles() const { return CountStateFiles(StateDir()); }

  // Lock files under the state dir; `held` counts those another process holds.
  size_t LockFiles(size_t* held = nullptr) const {
    size_t n = 0;
    std::error_code ec;
    for (auto it = fs::directory_iterator(StateDir() + "/locks", ec);
         !ec && it != fs::directory_iterator(); ++it) {
      ++n;
      UniqueFd fd(::open(it->path().c_str(), O_RDONLY | O_CLOEXEC));
      if (held && (!fd.valid() || ::flock(fd.get(), LOCK_EX | LOCK_NB) != 0)) ++*held;
    }
    return n;
  }
  // host-local leases (files named by an IP address) under the IPAM data dir.
  size_t IpamLeases() const {
    size_t n = 0;
    std::error_code ec;
    for (auto it = fs::recursive_directory_iterator(IpamDir(), ec);
         !ec && it != fs::recursive_directory_iterator(); ++it) {
      if (IsIpAddress(it->path().filename().string())) ++n;
    }
    return n;
  }

  // The netdevs of namespace `ns` (by name), loopback included.
  std::vector<LinkInfo> Links(const std::string& ns) const {
    auto out = Execute("/usr/sbin/ip", {"ip", "-j", "-n", ns, "link", "show"},
                       {"PATH=/usr/sbin:/usr/bin"}, "", std::chrono::milliseconds(10000));
    std::vector<LinkInfo> links;
    if (!out.ok() || out->exit_code != 0) {
      ADD_FAILURE() << "ip -n " << ns << " link: " << (out.ok() ? out->err : "not run");
      return links;
    }
    for (const auto& l : nlohmann::json::parse(out->out, nullptr, false)) {
      const auto flags = l.value("flags", std::vector<std::string>{});
      links.push_back({l.value("ifname", ""), l.value("address", ""), l.value("mtu", 0u),
                       std::find(flags.begin(), flags.end(), "UP") != flags.end()});
    }
    return links;
  }
  // Gives pod namespace `ns` an interface `name` of its own (a veth whose peer stays in
  // the host), up, with address `cidr`, as the pod network's plugin would.
  void GivePodInterface(const std::string& ns, const std::string& name, const std::string& cidr) {
    const std::string peer = Unique("hq");
    ASSERT_TRUE(Sh("ip -n " + host_ns_ + " link add " + peer + " type veth peer name " + name +
                   " netns " + ns));
    ASSERT_TRUE(Sh("ip -n " + ns + " addr add " + cidr + " dev " + name));
    ASSERT_TRUE(Sh("ip -n " + ns + " link set " + name + " up"));
  }

  // Netdevs in the host namespace (loopback included).
  int HostLinks() const { return static_cast<int>(Links(host_ns_).size()); }

  TempDir tmp_{"hcashare-cnibin-"};
  std::string host_ns_;
  std::vector<std::string> netns_;  // pod namespace names
  std::unique_ptr<fake::SimNode> node_;
  std::vector<std::string> vf_netdevs_;  // host names of the VFs' netdevs, in AddVf order
  std::string ib_pf_netdev_;             // the InfiniBand PF's netdev, once AddIbVf made it
  std::string binary_ = "hcashare-cni";  // under the build's bin dir
  std::vector<std::string> base_env_;    // added to every Run's environment
  // Resource -> the devices the kubelet's checkpoint gives uid-a.
  std::map<std::string, std::vector<std::string>> allocated_;
};

// CniBinaryTest with host-local IPAM required and one pod namespace made: `pod_` is its
// path, `pod_name_` its `ip netns` name.
class CniPodTest : public CniBinaryTest {
 protected:
  void SetUp() override {
    CniBinaryTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    if (!fs::exists(std::string(kIpamDir) + "/host-local")) {
      GTEST_SKIP() << "needs containernetworking-plugins";
    }
    pod_ = AddPod();
    pod_name_ = netns_.back();
  }

  std::string pod_, pod_name_;
};

}  // namespace hcashare::cni
