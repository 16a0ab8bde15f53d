// The NetworkAttachmentDefinition author's rows of the hostile matrix (issue 24), against the
// real hcashare-cni binary. Under Multus a NAD is a namespaced object that a tenant may
// write, and its `config` reaches the root plugin as is. Whatever a tenant puts there, the
// plugin must not reach past the pod's own devices: no host path of its choosing, no device
// the kubelet did not allocate to the pod, never the node's uplink, no child link of a
// netdev outside the pod's shared pool. Each refused row leaves every file of the test's
// tree and every netdev of the host and the pod as it was.
#include <sys/stat.h>

#include <fstream>

#include "interop/pool_info.h"
#include "testing/fake_podresources.h"
#include "tests/cni_binary_fixture.h"
#include "tests/support/tree_diff.h"

namespace hcashare::cni {
namespace {

using json = nlohmann::json;

class CniTenantTest : public CniPodTest {
 protected:
  void SetUp() override {
    CniPodTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    vf_ = AddVf(2);  // allocated to the pod (the fixture's checkpoint)
  }

  // Runs ADD of `conf` and expects a code-`code` error whose msg or details contain
  // `part`, with nothing changed: the test's tree, the host's and the pod's netdevs.
  void ExpectRefused(const json& conf, int code, const std::string& part,
                     const std::vector<std::string>& env = {}) {
    const Tree tree = Snapshot(tmp_.path());
    const std::vector<LinkInfo> host = Links(host_ns_), pod = Links(pod_name_);
    CniRun add = Run("ADD", pod_, conf, "net1", "ctr1", "", env);
    EXPECT_EQ(add.exit_code, 1) << add.raw << add.err;
    ASSERT_TRUE(add.out.is_object()) << add.raw;
    EXPECT_EQ(add.out.value("code", 0), code) << add.raw;
    const std::string text = add.out.value("msg", "") + " | " + add.out.value("details", "");
    EXPECT_NE(text.find(part), std::string::npos) << text;
    EXPECT_EQ(TreeChanges(tree, Snapshot(tmp_.path())), "");
    EXPECT_EQ(Links(host_ns_), host);
    EXPECT_EQ(Links(pod_name_), pod);
  }

  std::string vf_;
};

// The NAD author points hostRoot at a tree it controls (an emptyDir, seen from the host)
// that claims a VF's netdev is the host's uplink; before issue 24 ADD moved the uplink into
// the pod. Host paths now come only from the node file: every one of them, set by the NAD
// to anything but the node's value, is refused naming the key and the node file.
TEST_F(CniTenantTest, HostPathsFromTheNadAreRefused) {
  // The forged tree: "VF 0000:7e:00.1 has netdev <the host's uplink>".
  const std::string forged = tmp_.path() + "/tenant-emptydir";
  fake::SimNode fake(forged);
  fake::SimPciFunction pf;
  pf.address = "0000:7e:00.0";
  pf.netdevs = {"pf9"};
  ASSERT_TRUE(fake.AddPciFunction(pf).ok());
  fake::SimPciFunction vf;
  vf.address = "0000:7e:00.1";
  vf.physfn = pf.address;
  vf.netdevs = {vf_netdevs_[0]};
  ASSERT_TRUE(fake.AddPciFunction(vf).ok());
  json conf = Conf("1.1.0", "0000:7e:00.1");
  conf["hostRoot"] = forged;
  ExpectRefused(conf, kErrInvalidNetConf,
                "hostRoot: \"" + forged + "\" is not this node's setting");
  ExpectRefused(conf, kErrInvalidNetConf, "from " + NodeConfigPath());
  const struct {
    const char* key;
    std::string value;
  } others[] = {{"stateDir", tmp_.path() + "/tenant-state"},
                {"logFile", tmp_.path() + "/tenant.log"},
                {"kubeletRootDir", tmp_.path() + "/tenant-kubelet"},
                {"poolInfoDir", tmp_.path() + "/tenant-pools"}};
  for (const auto& other : others) {
    SCOPED_TRACE(other.key);
    json c = Conf("1.1.0", vf_);
    c[other.key] = other.value;
    ExpectRefused(c, kErrInvalidNetConf, std::string(other.key) + ": \"" + other.value);
  }
  // The node's own values, repeated by an older NAD, are accepted.
  json same = Conf("1.1.0", vf_);
  same["hostRoot"] = tmp_.path() + "/host/";
  same["stateDir"] = StateDir();
  CniRun add = Run("ADD", pod_, same);
  EXPECT_EQ(add.exit_code, 0) << add.raw << add.err;
  EXPECT_EQ(Run("DEL", pod_, same).exit_code, 0);
}

// The node file is the administrator's: one that someone else could write is refused.
TEST_F(CniTenantTest, ANodeFileOthersCanWriteIsRefused) {
  ASSERT_EQ(::chmod(NodeConfigPath().c_str(), 0666), 0);
  ExpectRefused(Conf("1.1.0", vf_), kErrInvalidNetConf,
                "refusing the node configuration " + NodeConfigPath());
  ASSERT_EQ(::chmod(NodeConfigPath().c_str(), 0644), 0);
  CniRun add = Run("ADD", pod_, Conf("1.1.0", vf_));
  EXPECT_EQ(add.exit_code, 0) << add.raw << add.err;
  EXPECT_EQ(Run("DEL", pod_, Conf("1.1.0", vf_)).exit_code, 0);
}

// The NAD author names a VF the kubelet allocated to no pod, or to another pod (that has
// not started yet): refused, naming the pod, the device and what the pod holds.
TEST_F(CniTenantTest, ADeviceNotAllocatedToThePodIsRefused) {
  const std::string other = AddVf(3);
  allocated_["rdma/fixture_vfs"].pop_back();  // 0000:5e:00.3 is another pod's
  WriteCheckpoint();
  ExpectRefused(Conf("1.1.0", other), kErrInvalidNetConf,
                "device " + other + " is not allocated to pod ns/pod-a");
  ExpectRefused(
      Conf("1.1.0", other), kErrInvalidNetConf,
      "the kubelet allocated it rdma/fixture_vfs: " + vf_ + " (looked up through checkpoint)");
  // Also when the runtime passes it (capability args) rather than the NAD's deviceID.
  json runtime = Conf("1.1.0", other);
  runtime.erase("deviceID");
  runtime["runtimeConfig"] = {{"deviceID", other}};
  ExpectRefused(runtime, kErrInvalidNetConf, "is not allocated to pod ns/pod-a");
  // Without the pod's identity the allocation cannot be checked.
  ExpectRefused(Conf("1.1.0", vf_), kErrInvalidEnv, "checkAllocation",
                {"CNI_ARGS=IgnoreUnknown=1"});
  // The device the pod holds attaches.
  CniRun add = Run("ADD", pod_, Conf("1.1.0", vf_));
  EXPECT_EQ(add.exit_code, 0) << add.raw << add.err;
  EXPECT_EQ(Run("DEL", pod_, Conf("1.1.0", vf_)).exit_code, 0);
}

// The kubelet's checkpoint is only the quick look: what it does not show, the kubelet's
// pod-resources API answers (a VF allocated since, or a kubelet whose checkpoint is
// elsewhere), and its refusal names what the kubelet said.
TEST_F(CniTenantTest, PodResourcesDecidesWhatTheCheckpointDoesNotShow) {
  const std::string later = AddVf(3);
  allocated_["rdma/fixture_vfs"].pop_back();  // not in the checkpoint
  WriteCheckpoint();
  fake::FakePodResources kubelet(tmp_.path() + "/kubelet/pod-resources/kubelet.sock");
  ASSERT_TRUE(kubelet.Start().ok());
  kubelet.AddPod("ns", "pod-a", "uid-a", {{"main", {{"rdma/vfs", {later}, {}}}}});
  CniRun add = Run("ADD", pod_, Conf("1.1.0", later));
  EXPECT_EQ(add.exit_code, 0) << add.raw << add.err;
  EXPECT_EQ(Run("DEL", pod_, Conf("1.1.0", later)).exit_code, 0);
  kubelet.ClearPods();
  kubelet.AddPod("ns", "pod-a", "uid-a", {{"main", {{"rdma/vfs", {vf_}, {}}}}});
  ExpectRefused(Conf("1.1.0", later), kErrInvalidNetConf,
                "the kubelet allocated it rdma/vfs: " + vf_ + " (looked up through v1 Get)");
}

// A node without pod-resources may turn the check off (documented with its risk).
TEST_F(CniTenantTest, TheNodeMayTurnTheAllocationCheckOff) {
  const std::string other = AddVf(3);
  allocated_["rdma/fixture_vfs"].pop_back();
  WriteCheckpoint();
  WriteNodeConfig({{"checkAllocation", false}});
  CniRun add =
      Run("ADD", pod_, Conf("1.1.0", other), "net1", "ctr1", "", {"CNI_ARGS=IgnoreUnknown=1"});
  EXPECT_EQ(add.exit_code, 0) << add.raw << add.err;
  EXPECT_EQ(Run("DEL", pod_, Conf("1.1.0", other)).exit_code, 0);
}

// The node's own uplink is never attached, even when the kubelet allocated it (a device
// plugin without hcashare's uplink rule may advertise it).
TEST_F(CniTenantTest, AVfCarryingTheHostsDefaultRouteIsRefused) {
  const std::string uplink = vf_netdevs_[0];
  // The routes are the host namespace's own (as with a DaemonSet that mounts no /proc):
  // the simulated node's empty route files go.
  fs::remove(tmp_.path() + "/host/proc/net/route");
  fs::remove(tmp_.path() + "/host/proc/net/ipv6_route");
  // TEST-NET-1 (RFC 5737): documentation addresses in the test's own namespace; no packet
  // is sent.
  ASSERT_TRUE(Sh("ip -n " + host_ns_ + " link set " + uplink + " up"));
  ASSERT_TRUE(Sh("ip -n " + host_ns_ + " addr add 192.0.2.10/24 dev " + uplink));
  ASSERT_TRUE(Sh("ip -n " + host_ns_ + " route add default via 192.0.2.1 dev " + uplink));
  ExpectRefused(Conf("1.1.0", vf_), kErrInvalidNetConf,
                "device " + vf_ + " is the node's uplink and is never attached");
  // (Through a bond, VLAN or macvlan on top of it: the same hostfacts::CarriesDefaultRoute
  // the device plugin uses, tested on fixture trees with upper_* links in
  // exclusive_safety_test.cc.)
}

// A child link (macvlan/IPoIB mode) is for pods of a shared pool, on one of its HCAs: the
// NAD author cannot put a child of another host netdev into a pod, nor give one to a pod
// that holds no share of the pool.
TEST_F(CniTenantTest, AChildLinkOnlyOnThePodsPool) {
  const std::string hca = vf_netdevs_[0];
  ASSERT_TRUE(Sh("ip -n " + host_ns_ + " link set " + hca + " up"));
  ASSERT_TRUE(Sh("ip -n " + host_ns_ + " link add notpool type veth peer name notpoolp"));
  ASSERT_TRUE(Sh("ip -n " + host_ns_ + " link set notpool up"));
  PoolInfo pool;
  pool.resource = "rdma/hca_a";
  pool.hcas = {{"0000:5e:00.2", {hca}, {"mlx5_0"}, 0, true}};
  fs::create_directories(PoolInfoDir());
  std::ofstream(PoolInfoDir() + "/" + PoolInfoFileName(pool.resource)) << PoolInfoToJson(pool);
  json conf = {{"cniVersion", "1.1.0"},
               {"name", "shared"},
               {"type", "hcashare-cni"},
               {"mode", "macvlan"},
               {"resourceName", "rdma/hca_a"}};
  ExpectRefused(conf, kErrInvalidNetConf, "pod ns/pod-a holds no devices of rdma/hca_a");
  AllocateToPod("0", "rdma/hca_a");
  json other = conf;
  other["master"] = "notpool";
  ExpectRefused(other, kErrInvalidNetConf,
                "master notpool is not an HCA netdev of pool rdma/hca_a");
  json unnamed = other;
  unnamed.erase("resourceName");
  ExpectRefused(unnamed, kErrInvalidNetConf, "\"master\" needs \"resourceName\"");
  // The pool's own HCA, named or chosen, attaches.
  json named = conf;
  named["master"] = hca;
  for (const json& c : {conf, named}) {
    CniRun add = Run("ADD", pod_, c);
    EXPECT_EQ(add.exit_code, 0) << add.raw << add.err;
    EXPECT_EQ(Run("DEL", pod_, c).exit_code, 0);
  }
}

}  // namespace
}  // namespace hcashare::cni
