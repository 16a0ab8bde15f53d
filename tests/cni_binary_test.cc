// hcashare-cni as a process: the CNI exec protocol end to end (environment, stdin, stdout,
// exit code) for every spec version, hostile input, a pod-resources lookup through the
// fake kubelet, and 200 parallel ADD/DEL cycles over 20 network namespaces.
// The binary runs through `ip netns exec` inside a per-test "host" namespace whose veths
// stand in for the VFs' netdevs, so the machine's own network is untouched.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <thread>

#include <nlohmann/json.hpp>

#include "common/exec.h"
#include "common/sim_node.h"
#include "common/temp_dir.h"
#include "tests/cni_fixture.h"
#include "tests/test_util.h"
#include "tools/fake_podresources.h"

namespace hcashare {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using std::chrono::milliseconds;

bool Sh(const std::string& cmd) { return std::system((cmd + " >/dev/null 2>&1").c_str()) == 0; }

std::string Unique(const std::string& prefix) {
  static std::atomic<int> n{0};
  return prefix + std::to_string(::getpid() % 100000) + "y" + std::to_string(n++);
}

struct CniRun {
  int exit_code = -1;
  json out;
  std::string raw;
};

class CniBinaryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root (network namespaces)";
    host_ns_ = Unique("hbh");
    ASSERT_TRUE(Sh("ip netns add " + host_ns_));
    node_ = std::make_unique<SimNode>(tmp_.path() + "/host");
    SimPciFunction pf;
    pf.address = "0000:5e:00.0";
    pf.netdevs = {"pf0"};
    ASSERT_TRUE(node_->AddPciFunction(pf).ok());
  }
  void TearDown() override {
    for (const auto& ns : netns_) Sh("ip netns del " + ns);
    if (!host_ns_.empty()) Sh("ip netns del " + host_ns_);
  }

  // A VF at function `fn` whose netdev is a new veth in the host namespace.
  std::string AddVf(int fn) {
    const std::string veth = Unique("hb");
    EXPECT_TRUE(
        Sh("ip -n " + host_ns_ + " link add " + veth + " type veth peer name " + veth + "p"));
    SimPciFunction vf;
    vf.address = "0000:5e:00." + std::to_string(fn);
    vf.physfn = "0000:5e:00.0";
    vf.netdevs = {veth};
    EXPECT_TRUE(node_->AddPciFunction(vf).ok());
    return vf.address;
  }
  std::string AddPod() {
    netns_.push_back(Unique("hbp"));
    EXPECT_TRUE(Sh("ip netns add " + netns_.back()));
    return "/var/run/netns/" + netns_.back();
  }

  json Conf(const std::string& version, const std::string& device) {
    return {{"cniVersion", version},
            {"name", "rdma-net"},
            {"type", "hcashare-cni"},
            {"deviceID", device},
            {"hostRoot", tmp_.path() + "/host"},
            {"stateDir", tmp_.path() + "/state"},
            {"kubeletRootDir", tmp_.path() + "/kubelet"}};
  }

  CniRun Run(const std::string& verb, const std::string& netns, const json& conf,
             const std::string& ifname = "net1", const std::string& container = "ctr1",
             const std::string& raw_stdin = "") {
    std::vector<std::string> env = {"CNI_COMMAND=" + verb,
                                    "CNI_CONTAINERID=" + container,
                                    "CNI_NETNS=" + netns,
                                    "CNI_IFNAME=" + ifname,
                                    "CNI_PATH=/usr/lib/cni",
                                    "CNI_ARGS=IgnoreUnknown=1;K8S_POD_NAMESPACE=ns;"
                                    "K8S_POD_NAME=pod-a;K8S_POD_UID=uid-a",
                                    "PATH=/usr/sbin:/usr/bin:/sbin:/bin"};
    const std::string bin = testing::BinDir() + "/hcashare-cni";
    auto out = Execute("/usr/sbin/ip", {"ip", "netns", "exec", host_ns_, bin}, env,
                       raw_stdin.empty() ? conf.dump() : raw_stdin, milliseconds(30000));
    CniRun run;
    if (!out.ok()) {
      ADD_FAILURE() << out.status().ToString();
      return run;
    }
    run.exit_code = out->exit_code;
    run.raw = out->out;
    run.out = json::parse(out->out, nullptr, false);
    return run;
  }

  size_t StateFiles() { return cni::CountStateFiles(tmp_.path() + "/state"); }
  // Netdevs in the host namespace (loopback included).
  int HostLinks() {
    auto out = Execute("/usr/sbin/ip", {"ip", "-n", host_ns_, "-o", "link"},
                       {"PATH=/usr/sbin:/usr/bin"}, "", milliseconds(5000));
    if (!out.ok()) return -1;
    return static_cast<int>(std::count(out->out.begin(), out->out.end(), '\n'));
  }

  TempDir tmp_{"hcashare-cnibin-"};
  std::string host_ns_;
  std::vector<std::string> netns_;
  std::unique_ptr<SimNode> node_;
};

// ADD, CHECK (from 0.4.0) and DEL in every supported version, each with its result shape.
TEST_F(CniBinaryTest, AddCheckDelPerSpecVersion) {
  const std::string device = AddVf(2);
  for (const std::string version : {"0.3.0", "0.3.1", "0.4.0", "1.0.0", "1.1.0"}) {
    SCOPED_TRACE(version);
    const std::string netns = AddPod();
    json conf = Conf(version, device);
    conf["ipam"] = {
        {"type", "host-local"}, {"subnet", "10.66.0.0/24"}, {"dataDir", tmp_.path() + "/ipam"}};
    CniRun add = Run("ADD", netns, conf);
    ASSERT_EQ(add.exit_code, 0) << add.raw;
    EXPECT_EQ(add.out["cniVersion"], version);
    EXPECT_EQ(add.out["interfaces"][0]["name"], "net1");
    EXPECT_EQ(add.out["interfaces"][0]["sandbox"], netns);
    ASSERT_EQ(add.out["ips"].size(), 1u);
    EXPECT_EQ(add.out["ips"][0].contains("version"), version < "1.0.0") << add.raw;
    EXPECT_EQ(add.out["interfaces"][0].contains("pciID"), version == "1.1.0") << add.raw;
    if (version >= "0.4.0") {
      json check = conf;
      check["prevResult"] = add.out;
      CniRun ok = Run("CHECK", netns, check);
      EXPECT_EQ(ok.exit_code, 0) << ok.raw;
    }
    CniRun del = Run("DEL", netns, conf);
    EXPECT_EQ(del.exit_code, 0) << del.raw;
    EXPECT_TRUE(del.raw.empty()) << "DEL prints nothing on success";
    EXPECT_EQ(StateFiles(), 0u);
  }
}

TEST_F(CniBinaryTest, VersionAndStatus) {
  CniRun v = Run("VERSION", "", json(), "net1", "ctr1", R"({"cniVersion":"1.0.0"})");
  ASSERT_EQ(v.exit_code, 0);
  EXPECT_EQ(v.out["supportedVersions"], json::array({"0.3.0", "0.3.1", "0.4.0", "1.0.0", "1.1.0"}));
  json conf = Conf("1.1.0", "0000:5e:00.2");
  CniRun status = Run("STATUS", "", conf);
  EXPECT_EQ(status.exit_code, 0) << status.raw;
}

// Hostile or broken input: the right code, and nothing on the host touched.
TEST_F(CniBinaryTest, HostileInputIsRejectedAndTouchesNothing) {
  const std::string device = AddVf(2);
  const std::string netns = AddPod();
  const int links = HostLinks();
  struct Case {
    const char* what;
    std::string ifname, container, stdin_text;
    json conf;
    int code;
  };
  json good = Conf("1.0.0", device);
  json traversal = good;
  traversal["deviceID"] = "../../../etc/passwd";
  json traversal2 = good;
  traversal2["deviceID"] = "0000:5e:00.2/../../x";
  json bad_vlan = good;
  bad_vlan["vlan"] = 5000;
  const std::vector<Case> cases = {
      {"traversal in deviceID", "net1", "ctr1", "", traversal, 7},
      {"suffix after a PCI address", "net1", "ctr1", "", traversal2, 7},
      {"traversal in CNI_CONTAINERID", "net1", "../../etc", "", good, 4},
      {"slash in CNI_CONTAINERID", "net1", "a/b", "", good, 4},
      {"16-byte ifname", "abcdefghijklmnop", "ctr1", "", good, 4},
      {"ifname with a slash", "a/b", "ctr1", "", good, 4},
      {"ifname ..", "..", "ctr1", "", good, 4},
      {"ifname with a space", "et h0", "ctr1", "", good, 4},
      {"invalid JSON", "net1", "ctr1", "{\"cniVersion\": ", good, 6},
      {"huge stdin", "net1", "ctr1", std::string(2 << 20, ' '), good, 6},
      {"bad vlan", "net1", "ctr1", "", bad_vlan, 7},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    CniRun run = Run("ADD", netns, c.conf, c.ifname, c.container, c.stdin_text);
    EXPECT_NE(run.exit_code, 0);
    ASSERT_FALSE(run.out.is_discarded()) << run.raw;
    EXPECT_EQ(run.out["code"], c.code) << run.raw;
    EXPECT_TRUE(run.out["msg"].is_string());
  }
  EXPECT_EQ(StateFiles(), 0u);
  EXPECT_FALSE(fs::exists(tmp_.path() + "/state/attachments"));
  EXPECT_EQ(HostLinks(), links);
}

// Standalone use: no deviceID, a resourceName, and the pod-resources API of the (fake)
// kubelet; two attachments of one resource get different devices.
TEST_F(CniBinaryTest, ResourceNameLookupThroughPodResources) {
  const std::string a = AddVf(2);
  const std::string b = AddVf(3);
  fake::FakePodResources kubelet(tmp_.path() + "/kubelet/pod-resources/kubelet.sock");
  ASSERT_TRUE(kubelet.Start().ok());
  kubelet.AddPod("ns", "pod-a", "uid-a", {{"main", {{"rdma/vf_pool_a", {a, b}, {0, 1}}}}});
  kubelet.SetGetMode(fake::FakePodResources::GetMode::kDisabled);  // exercises List
  const std::string netns = AddPod();
  json conf = Conf("1.0.0", "");
  conf.erase("deviceID");
  conf["resourceName"] = "rdma/vf_pool_a";
  CniRun first = Run("ADD", netns, conf, "net1");
  ASSERT_EQ(first.exit_code, 0) << first.raw;
  CniRun second = Run("ADD", netns, conf, "net2");
  ASSERT_EQ(second.exit_code, 0) << second.raw;
  CniRun third = Run("ADD", netns, conf, "net3");
  EXPECT_EQ(third.out["code"], 101) << third.raw;
  conf["resourceName"] = "rdma/other";
  CniRun missing = Run("ADD", netns, conf, "net4");
  EXPECT_EQ(missing.out["code"], 100);
  EXPECT_EQ(missing.out["msg"],
            "pod ns/pod-a has no devices of rdma/other (resources present: rdma/vf_pool_a (2)); "
            "does the pod request it and does the NAD carry the "
            "k8s.v1.cni.cncf.io/resourceName annotation?");
  conf["resourceName"] = "rdma/vf_pool_a";
  EXPECT_EQ(Run("DEL", netns, conf, "net1").exit_code, 0);
  EXPECT_EQ(Run("DEL", netns, conf, "net2").exit_code, 0);
  EXPECT_EQ(StateFiles(), 0u);
}

// `hcashare cni-gc` after a pod's namespace vanished without a DEL (as after a reboot).
TEST_F(CniBinaryTest, CniGcReleasesAttachmentsOfVanishedPods) {
  const std::string device = AddVf(2);
  const std::string netns = AddPod();
  ASSERT_EQ(Run("ADD", netns, Conf("1.0.0", device)).exit_code, 0);
  ASSERT_TRUE(Sh("ip netns del " + netns_.back()));
  netns_.pop_back();
  auto gc = [&](bool dry) {
    std::vector<std::string> argv = {"ip",
                                     "netns",
                                     "exec",
                                     host_ns_,
                                     testing::BinDir() + "/hcashare",
                                     "cni-gc",
                                     "--state-dir",
                                     tmp_.path() + "/state",
                                     "--host-root",
                                     tmp_.path() + "/host"};
    if (dry) argv.push_back("--dry-run");
    return Execute("/usr/sbin/ip", argv, {"PATH=/usr/sbin:/usr/bin:/sbin:/bin"}, "",
                   milliseconds(30000));
  };
  auto dry = gc(true);
  ASSERT_TRUE(dry.ok());
  EXPECT_EQ(dry->exit_code, 0) << dry->out << dry->err;
  EXPECT_NE(dry->out.find("stale    ctr1/net1 (" + device + ")"), std::string::npos) << dry->out;
  EXPECT_EQ(StateFiles(), 2u);
  auto done = gc(false);
  ASSERT_TRUE(done.ok());
  EXPECT_EQ(done->exit_code, 0) << done->out << done->err;
  EXPECT_NE(done->out.find("released ctr1/net1"), std::string::npos) << done->out;
  EXPECT_EQ(StateFiles(), 0u);
}

// 200 ADD/DEL cycles, 20 pods in parallel (one VF each): no interface leaks, no state left.
TEST_F(CniBinaryTest, ParallelCyclesLeakNothing) {
  constexpr int kPods = 20;
  constexpr int kCycles = 10;
  std::vector<std::string> devices, pods;
  for (int i = 0; i < kPods; ++i) {
    // Functions 0..7 per slot: spread VFs over devices 0x01..0x03 of bus 5f.
    SimPciFunction vf;
    const std::string veth = Unique("hq");
    ASSERT_TRUE(
        Sh("ip -n " + host_ns_ + " link add " + veth + " type veth peer name " + veth + "p"));
    char addr[32];
    std::snprintf(addr, sizeof(addr), "0000:5f:%02x.%d", 1 + i / 8, i % 8);
    vf.address = addr;
    vf.physfn = "0000:5e:00.0";
    vf.netdevs = {veth};
    ASSERT_TRUE(node_->AddPciFunction(vf).ok());
    devices.push_back(addr);
    pods.push_back(AddPod());
  }
  const int links = HostLinks();
  std::atomic<int> failures{0};
  std::vector<std::thread> workers;
  for (int i = 0; i < kPods; ++i) {
    workers.emplace_back([&, i] {
      json conf = Conf("1.0.0", devices[i]);
      conf["mtu"] = 1300;
      for (int c = 0; c < kCycles; ++c) {
        const std::string ctr = "ctr" + std::to_string(i) + "c" + std::to_string(c);
        CniRun add = Run("ADD", pods[i], conf, "net1", ctr);
        CniRun del = Run("DEL", pods[i], conf, "net1", ctr);
        if (add.exit_code != 0 || del.exit_code != 0) {
          ++failures;
          ADD_FAILURE() << "pod " << i << " cycle " << c << ": " << add.raw << " / " << del.raw;
        }
      }
    });
  }
  for (auto& w : workers) w.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(HostLinks(), links) << "every VF netdev is back in the host";
  EXPECT_EQ(StateFiles(), 0u);
}

}  // namespace
}  // namespace hcashare
