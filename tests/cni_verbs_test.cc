// The CNI verbs beyond plain netdev attachment: the RDMA device moved into the pod (and
// back first on DEL, and on rollback), DPDK VFs, CHECK detecting drift, GC, STATUS and the
// Multus device-info file.
#include "cni/gc.h"
#include "cni/recover.h"
#include "cni/status.h"
#include "cni/steps.h"
#include "interop/pool_info.h"
#include "tests/cni_fixture.h"
#include "tests/test_util.h"

namespace hcashare::cni {
namespace {

using json = nlohmann::json;

constexpr const char* kRdmaVf = "0000:3b:00.4";  // VF 2, with RDMA device mlx5_vf2

class CniVerbsTest : public CniAttachTest {
 protected:
  void SetUp() override {
    CniAttachTest::SetUp();
    if (IsSkipped()) return;
    AddVf(2, "mlx5_vf2");
    rdma_.set_answer(RdmaNetnsMode::kExclusive);
  }
  // The RDMA devices the fake shows inside `ns`.
  std::vector<std::string> RdmaIn(const NamedNetns& ns) {
    std::vector<std::string> names;
    RunIn(ns, [&] {
      auto list = rdma_.ListDevices();
      ASSERT_TRUE(list.ok());
      for (const auto& d : *list) names.push_back(d.name);
    });
    return names;
  }
  Result<json> Add(json extra, const std::string& ifname = "net1",
                   const std::string& container = "c0ffee") {
    Result<json> out = Status::Internal("not run");
    RunIn(*host_ns_, [&] { out = CmdAdd(Env("ADD", ifname, container), Conf(extra), Context()); });
    return out;
  }
  Status Del(json extra = json::object(), const std::string& ifname = "net1",
             const std::string& container = "c0ffee") {
    Status out;
    RunIn(*host_ns_,
          [&] { out = CmdDel(Env("DEL", ifname, container), Conf(extra, Verb::kDel), Context()); });
    return out;
  }
  Status Check(json extra) {
    Status out;
    RunIn(*host_ns_, [&] { out = CmdCheck(Env("CHECK"), Conf(extra, Verb::kCheck), Context()); });
    return out;
  }
};

TEST_F(CniVerbsTest, RdmaDeviceFollowsTheNetdevIntoThePodAndBack) {
  auto added = Add({{"deviceID", kRdmaVf}});
  ASSERT_TRUE(added.ok()) << added.status().message() << ": " << added.status().details();
  EXPECT_EQ(RdmaIn(*pod_ns_), std::vector<std::string>{"mlx5_vf2"});
  EXPECT_TRUE(RdmaIn(*host_ns_).empty());
  EXPECT_EQ(store_->Load("c0ffee", "net1")->rdma_device, "mlx5_vf2");
  EXPECT_TRUE(Check({{"deviceID", kRdmaVf}, {"prevResult", *added}}).ok());
  ASSERT_TRUE(Del().ok());
  EXPECT_EQ(RdmaIn(*host_ns_), std::vector<std::string>{"mlx5_vf2"});
  EXPECT_EQ(rdma_.moves(), (std::vector<std::string>{"mlx5_vf2", "mlx5_vf2"}));
}

TEST_F(CniVerbsTest, FailedRdmaMoveRollsTheNetdevBack) {
  rdma_.FailMove(1, Status::FailedPrecondition("simulated: device in use"));
  auto added = Add({{"deviceID", kRdmaVf}, {"mtu", 1500}});
  ASSERT_FALSE(added.ok());
  EXPECT_NE(added.status().message().find("cannot move RDMA device mlx5_vf2"), std::string::npos);
  EXPECT_TRUE(LinkIn(*host_ns_, vf_netdevs_[2]).ok()) << "the netdev is back in the host";
  EXPECT_TRUE(LinkIn(*pod_ns_, "net1").status().IsNotFound());
  EXPECT_EQ(RdmaIn(*host_ns_), std::vector<std::string>{"mlx5_vf2"});
  EXPECT_EQ(StateFiles(), 0u);
}

TEST_F(CniVerbsTest, RdmaModeSharedAutoLeavesItMoveRefuses) {
  rdma_.set_answer(RdmaNetnsMode::kShared);
  auto refused = Add({{"deviceID", kRdmaVf}, {"rdma", "move"}});
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(CniCodeOf(refused.status()), kErrHostSetupFailed);
  EXPECT_NE(refused.status().details().find("rdma system set netns exclusive"), std::string::npos);
  EXPECT_TRUE(LinkIn(*host_ns_, vf_netdevs_[2]).ok()) << "refused before touching anything";
  EXPECT_EQ(StateFiles(), 0u);

  auto added = Add({{"deviceID", kRdmaVf}});  // auto
  ASSERT_TRUE(added.ok()) << added.status().message();
  EXPECT_TRUE(rdma_.moves().empty());
  EXPECT_EQ(store_->Load("c0ffee", "net1")->rdma_device, "");
  EXPECT_TRUE(Del().ok());
}

// A Soft-RoCE device on the VF's netdev is the VF's RDMA device; the kernel cannot move it,
// so in exclusive mode ADD is refused (auto and move alike) before anything changes, and
// in shared mode `auto` leaves it.
TEST_F(CniVerbsTest, SoftRoceOnTheVfNetdevCannotMoveAndNothingChanges) {
  AddVf(3);
  ASSERT_TRUE(node_->AddVirtualRdma({"rxe0", vf_netdevs_[3], "0000:3b:00.5"}).ok());
  for (const char* mode : {"auto", "move"}) {
    auto refused = Add({{"deviceID", "0000:3b:00.5"}, {"rdma", mode}, {"mtu", 1400}});
    ASSERT_FALSE(refused.ok()) << mode;
    EXPECT_EQ(CniCodeOf(refused.status()), kErrHostSetupFailed);
    EXPECT_EQ(refused.status().message(), "cannot move RDMA device rxe0 into the pod");
    EXPECT_NE(refused.status().details().find("Soft-RoCE"), std::string::npos);
    EXPECT_TRUE(LinkIn(*host_ns_, vf_netdevs_[3]).ok()) << "refused before touching anything";
    EXPECT_TRUE(LinkIn(*pod_ns_, "net1").status().IsNotFound());
    EXPECT_EQ(StateFiles(), 0u);
    EXPECT_TRUE(rdma_.moves().empty());
  }
  rdma_.set_answer(RdmaNetnsMode::kShared);
  auto added = Add({{"deviceID", "0000:3b:00.5"}});
  ASSERT_TRUE(added.ok()) << added.status().message();
  EXPECT_EQ(store_->Load("c0ffee", "net1")->rdma_device, "");
  EXPECT_TRUE(Del().ok());
}

// When the pod's namespace was deleted before DEL, the kernel hands a physical VF back to
// the host under its pod name (down, with the pod's MAC and MTU): DEL finds it through
// the VF's sysfs net/ entry and restores its host name, MAC and MTU.
TEST_F(CniVerbsTest, RestoresAVfTheKernelReturnedUnderItsPodName) {
  ASSERT_TRUE(Sh("ip -n " + host_ns_->name() +
                 " link add net1 mtu 1400 address 02:11:22:33:44:55 type veth peer name net1p"));
  fake::SimPciFunction vf;
  vf.address = "0000:3b:00.7";
  vf.physfn = "0000:3b:00.0";
  vf.netdevs = {"net1"};
  ASSERT_TRUE(node_->AddPciFunction(vf).ok());
  AttachmentState state;
  state.device = vf.address;
  state.host_ifname = "hvback";
  state.host_mac = "02:00:00:00:00:aa";
  state.host_mtu = 1500;
  state.steps = {"netdev"};
  RunIn(*host_ns_, [&] {
    EXPECT_TRUE(RestoreReturnedNetdev(state, *host_, *netdev_, std::chrono::milliseconds(0)).ok());
  });
  auto back = LinkIn(*host_ns_, "hvback");
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_EQ(back->mac, "02:00:00:00:00:aa");
  EXPECT_EQ(back->mtu, 1500u);
  EXPECT_TRUE(LinkIn(*host_ns_, "net1").status().IsNotFound());

  // A device whose netdev never comes back (or a veth that died with the namespace) is
  // nothing to restore: DEL goes on.
  state.device = "0000:3b:00.6";  // no such function: no netdev ever shows up
  RunIn(*host_ns_, [&] {
    EXPECT_TRUE(RestoreReturnedNetdev(state, *host_, *netdev_, std::chrono::milliseconds(50)).ok());
  });
}

TEST_F(CniVerbsTest, RdmaOffNeverTouchesIt) {
  auto added = Add({{"deviceID", kRdmaVf}, {"rdma", "off"}});
  ASSERT_TRUE(added.ok()) << added.status().message();
  EXPECT_TRUE(rdma_.moves().empty());
  EXPECT_TRUE(Del().ok());
}

TEST_F(CniVerbsTest, DpdkVfGetsPfSettingsOnlyAndDelResetsThem) {
  AddVf(3, "", "vfio-pci");  // 0000:3b:00.5, VF index 3
  const VfSettings original{0u, 0u, "802.1q", "00:00:00:00:00:00", true, false, "auto", 0u,
                            0u, {}, {}};
  vf_ops_.AddVf("pf0", 3, original);
  auto added = Add({{"deviceID", "0000:3b:00.5"}, {"vlan", 42}, {"ipam", HostLocal()}});
  ASSERT_TRUE(added.ok()) << added.status().message() << ": " << added.status().details();
  EXPECT_EQ(vf_ops_.settings("pf0", 3).vlan, 42u);
  EXPECT_EQ((*added)["interfaces"][0]["name"], "net1");
  EXPECT_FALSE((*added)["interfaces"][0].contains("mac"));
  ASSERT_EQ((*added)["ips"].size(), 1u) << "IPAM is reported";
  EXPECT_TRUE(LinkIn(*pod_ns_, "net1").status().IsNotFound()) << "and not applied";
  EXPECT_TRUE(store_->Load("c0ffee", "net1")->dpdk);
  ASSERT_TRUE(Del({{"deviceID", "0000:3b:00.5"}, {"ipam", HostLocal()}}).ok());
  EXPECT_TRUE(vf_ops_.settings("pf0", 3) == original);
  EXPECT_EQ(StateFiles(), 0u);
}

TEST_F(CniVerbsTest, CheckDetectsEachKindOfDrift) {
  const VfSettings original{0u, 0u, "802.1q", "00:00:00:00:00:00", true, false, "auto", 0u,
                            0u, {}, {}};
  vf_ops_.AddVf("pf0", 0, original);
  const json conf = {{"mtu", 1400}, {"spoofchk", "off"}, {"ipam", HostLocal()}};
  auto added = Add(conf);
  ASSERT_TRUE(added.ok()) << added.status().message() << ": " << added.status().details();
  json check = conf;
  check["prevResult"] = *added;
  ASSERT_TRUE(Check(check).ok()) << "fresh attachment passes";

  auto expect_drift = [&](const std::string& text) {
    Status e = Check(check);
    ASSERT_FALSE(e.ok()) << "expected drift: " << text;
    EXPECT_EQ(CniCodeOf(e), kErrHostSetupFailed);
    EXPECT_NE(e.details().find(text), std::string::npos) << e.details();
  };
  // An address removed.
  ASSERT_TRUE(Sh("ip -n " + pod_ns_->name() + " addr del 10.77.0.2/24 dev net1"));
  expect_drift("address 10.77.0.2/24 is not configured on net1");
  ASSERT_TRUE(Sh("ip -n " + pod_ns_->name() + " addr add 10.77.0.2/24 dev net1"));
  // The MAC changed.
  const std::string mac = (*added)["interfaces"][0]["mac"];
  ASSERT_TRUE(Sh("ip -n " + pod_ns_->name() + " link set net1 address 02:99:99:99:99:99"));
  expect_drift("net1 has MAC 02:99:99:99:99:99, ADD set " + mac);
  ASSERT_TRUE(Sh("ip -n " + pod_ns_->name() + " link set net1 address " + mac));
  // The MTU changed.
  ASSERT_TRUE(Sh("ip -n " + pod_ns_->name() + " link set net1 mtu 1300"));
  expect_drift("net1 has MTU 1300, expected 1400");
  ASSERT_TRUE(Sh("ip -n " + pod_ns_->name() + " link set net1 mtu 1400"));
  // A PF-side setting changed behind our back.
  VfSettings spoof_on;
  spoof_on.spoofchk = true;
  ASSERT_TRUE(vf_ops_.Set("pf0", 0, spoof_on).ok());
  expect_drift("the PF-side spoofchk of VF 0 on pf0 no longer matches");
  VfSettings spoof_off;
  spoof_off.spoofchk = false;
  ASSERT_TRUE(vf_ops_.Set("pf0", 0, spoof_off).ok());
  // The interface renamed.
  ASSERT_TRUE(Sh("ip -n " + pod_ns_->name() + " link set net1 down"));
  ASSERT_TRUE(Sh("ip -n " + pod_ns_->name() + " link set net1 name other0"));
  expect_drift("interface net1 is missing from the pod's network namespace");
  ASSERT_TRUE(Sh("ip -n " + pod_ns_->name() + " link set other0 name net1"));
}

TEST_F(CniVerbsTest, CheckDetectsAMissingRdmaDevice) {
  auto added = Add({{"deviceID", kRdmaVf}});
  ASSERT_TRUE(added.ok()) << added.status().message();
  RunIn(*pod_ns_, [&] {
    auto host = Netns::Open(host_ns_->path());
    ASSERT_TRUE(host.ok());
    ASSERT_TRUE(rdma_.MoveToNetns("mlx5_vf2", host->fd()).ok());
  });
  Status e = Check({{"deviceID", kRdmaVf}, {"prevResult", *added}});
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.details().find("RDMA device mlx5_vf2 is not in the pod"), std::string::npos)
      << e.details();
}

TEST_F(CniVerbsTest, GcReleasesStaleAttachmentsAndKeepsLiveOnes) {
  ASSERT_TRUE(Add({{"deviceID", "0000:3b:00.2"}}, "net1", "live").ok());
  ASSERT_TRUE(Add({{"deviceID", "0000:3b:00.3"}}, "net2", "gone").ok());
  json gc = {
      {"cniVersion", "1.1.0"},
      {"name", "rdma-net"},
      {"type", "hcashare-cni"},
      {"cni.dev/valid-attachments", json::array({{{"containerID", "live"}, {"ifname", "net1"}}})}};
  auto conf = ParseNetConf(gc.dump(), Verb::kGc);
  ASSERT_TRUE(conf.ok()) << conf.status().details();
  Status e;
  RunIn(*host_ns_, [&] { e = CmdGc(Env("GC"), *conf, Context()); });
  ASSERT_TRUE(e.ok()) << e.message();
  EXPECT_TRUE(store_->Load("live", "net1").ok());
  EXPECT_TRUE(store_->Load("gone", "net2").status().IsNotFound());
  EXPECT_TRUE(LinkIn(*pod_ns_, "net1").ok());
  EXPECT_TRUE(LinkIn(*pod_ns_, "net2").status().IsNotFound());
  EXPECT_TRUE(LinkIn(*host_ns_, vf_netdevs_[1]).ok()) << "the stale VF is back in the host";
}

// `hcashare cni-gc`: attachments whose namespace is gone, or whose ADD never finished (a
// crash left the VF moved and renamed), are released; live ones are kept.
TEST_F(CniVerbsTest, RecoveryReleasesStaleAndUnfinishedAttachments) {
  ASSERT_TRUE(Add({{"deviceID", "0000:3b:00.2"}}, "net1", "live").ok());
  NamedNetns doomed(Unique("hcp"));
  ASSERT_TRUE(doomed.ok());
  Result<json> second = Status::Internal("not run");
  RunIn(*host_ns_, [&] {
    second = CmdAdd(Env("ADD", "net1", "gone", doomed.path()), Conf({{"deviceID", "0000:3b:00.3"}}),
                    Context());
  });
  ASSERT_TRUE(second.ok()) << second.status().message();
  doomed.Delete();
  ASSERT_TRUE(Add({{"deviceID", kRdmaVf}}, "net2", "crashed").ok());
  auto crashed = store_->Load("crashed", "net2");
  ASSERT_TRUE(crashed.ok());
  crashed->result = json();  // as if the process died before its last save
  ASSERT_TRUE(store_->Save(*crashed).ok());

  std::vector<RecoveryItem> dry;
  RunIn(*host_ns_, [&] {
    dry = RecoverAttachments(Context(), DefaultNodeSettings(), kIpamDir, /*apply=*/false);
  });
  ASSERT_EQ(dry.size(), 3u);
  std::map<std::string, std::string> reasons;
  for (const auto& item : dry) reasons[item.container_id] = item.reason;
  EXPECT_EQ(reasons["live"], "");
  EXPECT_NE(reasons["gone"].find("is gone"), std::string::npos);
  EXPECT_EQ(reasons["crashed"], "its ADD never finished");
  EXPECT_EQ(StateFiles(), 6u) << "a dry run changes nothing";

  std::vector<RecoveryItem> done;
  RunIn(*host_ns_, [&] {
    done = RecoverAttachments(Context(), DefaultNodeSettings(), kIpamDir, /*apply=*/true);
  });
  for (const auto& item : done) EXPECT_EQ(item.error, "") << item.container_id;
  EXPECT_TRUE(store_->Load("live", "net1").ok());
  EXPECT_TRUE(store_->Load("gone", "net1").status().IsNotFound());
  EXPECT_TRUE(store_->Load("crashed", "net2").status().IsNotFound());
  EXPECT_TRUE(LinkIn(*host_ns_, vf_netdevs_[2]).ok()) << "the crashed ADD's VF is back";
  EXPECT_EQ(RdmaIn(*host_ns_), std::vector<std::string>{"mlx5_vf2"});
  EXPECT_TRUE(LinkIn(*pod_ns_, "net1").ok());
}

TEST_F(CniVerbsTest, StatusBothWays) {
  json base = {{"cniVersion", "1.1.0"}, {"name", "rdma-net"}, {"type", "hcashare-cni"}};
  NodeSettings node = DefaultNodeSettings();
  node.state_dir = tmp_.path() + "/state";
  auto status = [&](json conf, const NodeSettings& on) {
    auto parsed = ParseNetConf(conf.dump(), Verb::kStatus, on);
    EXPECT_TRUE(parsed.ok()) << (parsed.ok() ? "" : parsed.status().details());
    return CmdStatus(Env("STATUS"), *parsed);
  };
  EXPECT_TRUE(status(base, node).ok());
  NodeSettings unwritable = node;
  unwritable.state_dir = "/proc/hcashare-no-such-dir";
  Status e = status(base, unwritable);
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(CniCodeOf(e), kErrPluginNotAvailable);
  json no_ipam = base;
  no_ipam["ipam"] = {{"type", "no-such-ipam"}};
  e = status(no_ipam, node);
  ASSERT_FALSE(e.ok());
  EXPECT_NE(e.message().find("no-such-ipam"), std::string::npos);
  json no_kubelet = base;
  no_kubelet["resourceName"] = "rdma/vf_pool_a";
  NodeSettings no_kubelet_node = node;
  no_kubelet_node.kubelet_root_dir = tmp_.path() + "/no-kubelet";
  no_kubelet_node.device_plugin_dir = tmp_.path() + "/no-kubelet/device-plugins";
  e = status(no_kubelet, no_kubelet_node);
  ASSERT_FALSE(e.ok());
  EXPECT_EQ(CniCodeOf(e), kErrPluginNotAvailable);
  EXPECT_NE(e.message().find("resourceName"), std::string::npos);
}

TEST_F(CniVerbsTest, DeviceInfoFileWrittenOnAddRemovedOnDel) {
  const std::string file = tmp_.path() + "/devinfo/net1.json";
  auto added = Add({{"deviceID", kRdmaVf}, {"runtimeConfig", {{"CNIDeviceInfoFile", file}}}});
  ASSERT_TRUE(added.ok()) << added.status().message();
  EXPECT_EQ(testing::ReadTextFile(file),
            R"({"type":"pci","version":"1.1.0","pci":{"pci-address":"0000:3b:00.4",)"
            R"("rdma-device":"mlx5_vf2","pf-pci-address":"0000:3b:00.0"}})");
  ASSERT_TRUE(Del().ok());
  EXPECT_FALSE(fs::exists(file));
}

// A state recorded with a device-info file outside the node's device-info directory (by a
// version that took any path a NAD gave): DEL leaves that file alone.
TEST_F(CniVerbsTest, DelNeverRemovesADeviceInfoFileOutsideTheDirectory) {
  const std::string file = tmp_.path() + "/devinfo/net1.json";
  auto added = Add({{"deviceID", kRdmaVf}, {"runtimeConfig", {{"CNIDeviceInfoFile", file}}}});
  ASSERT_TRUE(added.ok()) << added.status().message();
  ASSERT_TRUE(fs::exists(file));
  node_settings_.device_info_dir = tmp_.path() + "/elsewhere";  // the node file changed
  ASSERT_TRUE(Del().ok());
  EXPECT_TRUE(fs::exists(file)) << "removed a file outside " << node_settings_.device_info_dir;
  EXPECT_EQ(StateFiles(), 0u);
}

// Shared-pool attachment: a macvlan on the pool HCA's netdev (a veth here), one per pod,
// several pods on one master; DEL deletes it.
TEST_F(CniVerbsTest, MacvlanOnAPoolNetdevForSeveralPods) {
  node_settings_.check_allocation = false;  // an explicit master without a shared resource
  const std::string master = vf_netdevs_[0];
  ASSERT_TRUE(Sh("ip -n " + host_ns_->name() + " link set " + master + " up"));
  const json conf = {{"deviceID", nullptr},
                     {"mode", "macvlan"},
                     {"master", master},
                     {"mtu", 1400},
                     {"ipam", HostLocal()}};
  auto added = Add(conf);
  ASSERT_TRUE(added.ok()) << added.status().message() << ": " << added.status().details();
  auto link = LinkIn(*pod_ns_, "net1");
  ASSERT_TRUE(link.ok());
  EXPECT_EQ(link->mtu, 1400u);
  EXPECT_TRUE(Sh("ip -n " + pod_ns_->name() + " -d link show net1 | grep -q macvlan"));
  EXPECT_TRUE(Sh("ip -n " + pod_ns_->name() + " addr show dev net1 | grep -q 10.77.0.2/24"));
  json check = conf;
  check["prevResult"] = *added;
  EXPECT_TRUE(Check(check).ok());

  NamedNetns other(Unique("hcp"));
  ASSERT_TRUE(other.ok());
  Result<json> second = Status::Internal("not run");
  RunIn(*host_ns_,
        [&] { second = CmdAdd(Env("ADD", "net1", "other", other.path()), Conf(conf), Context()); });
  ASSERT_TRUE(second.ok()) << second.status().message() << ": " << second.status().details();
  EXPECT_TRUE(LinkIn(other, "net1").ok()) << "a shared master serves several pods";
  EXPECT_TRUE(LinkIn(*host_ns_, master).ok()) << "the master stays in the host";

  ASSERT_TRUE(Del(conf).ok());
  EXPECT_TRUE(LinkIn(*pod_ns_, "net1").status().IsNotFound());
  Status e;
  RunIn(*host_ns_, [&] {
    e = CmdDel(Env("DEL", "net1", "other", other.path()), Conf(conf, Verb::kDel), Context());
  });
  EXPECT_TRUE(e.ok());
  EXPECT_EQ(StateFiles(), 0u);
}

// Without `master`, the pool description the device plugin publishes picks the parent: a
// healthy HCA on the NUMA node of the pod's granted ID.
TEST_F(CniVerbsTest, MacvlanParentFromThePoolDescription) {
  const std::string pools = tmp_.path() + "/pools";
  fs::create_directories(pools);
  PoolInfo info;
  info.resource = "rdma/hca_a";
  info.hcas = {{"0000:3b:00.2", {vf_netdevs_[0]}, {"mlx5_0"}, 0, true},
               {"0000:3b:00.3", {vf_netdevs_[1]}, {"mlx5_1"}, 1, true}};
  info.id_numa = {{"0", 0}, {"1", 1}};
  std::ofstream(pools + "/" + PoolInfoFileName("rdma/hca_a")) << PoolInfoToJson(info);
  for (const auto& nd : vf_netdevs_) {
    ASSERT_TRUE(Sh("ip -n " + host_ns_->name() + " link set " + nd + " up"));
  }
  pod_devices_.by_resource["rdma/hca_a"] = {"1"};  // granted ID 1: NUMA node 1
  node_settings_.pool_info_dir = pools;
  const json conf = {{"deviceID", nullptr}, {"mode", "macvlan"}, {"resourceName", "rdma/hca_a"}};
  auto added = Add(conf);
  ASSERT_TRUE(added.ok()) << added.status().message() << ": " << added.status().details();
  EXPECT_EQ(store_->Load("c0ffee", "net1")->device, vf_netdevs_[1]);
  EXPECT_TRUE(Sh("ip -n " + pod_ns_->name() + " -d link show net1 | grep -q macvlan"));
  ASSERT_TRUE(Del(conf).ok());

  pod_devices_.by_resource["rdma/other"] = {"0"};
  auto missing = Add({{"deviceID", nullptr}, {"mode", "macvlan"}, {"resourceName", "rdma/other"}});
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(CniCodeOf(missing.status()), kErrDeviceNotFound);
  EXPECT_NE(missing.status().details().find("--pool-info-dir"), std::string::npos);
}

// IPoIB mode needs InfiniBand: on a veth parent the kernel refuses the child, and ADD
// fails cleanly with nothing left behind (the request itself is unit-tested in common_test).
TEST_F(CniVerbsTest, IpoibChildOnANonIbParentFailsCleanly) {
  node_settings_.check_allocation = false;  // an explicit master without a shared resource
  auto added =
      Add({{"deviceID", nullptr}, {"mode", "ipoib"}, {"master", vf_netdevs_[0]}, {"pkey", 0x8001}});
  ASSERT_FALSE(added.ok());
  EXPECT_NE(added.status().message().find("cannot create an IPoIB child of " + vf_netdevs_[0]),
            std::string::npos)
      << added.status().message();
  EXPECT_TRUE(LinkIn(*pod_ns_, "net1").status().IsNotFound());
  EXPECT_EQ(StateFiles(), 0u);
}

TEST_F(CniVerbsTest, MacvlanNeedsAnExistingMaster) {
  node_settings_.check_allocation = false;  // an explicit master without a shared resource
  auto missing = Add({{"deviceID", nullptr}, {"mode", "macvlan"}, {"master", "nosuchdev0"}});
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(CniCodeOf(missing.status()), kErrDeviceNotFound);
  auto no_master = ParseNetConf(
      R"({"cniVersion":"1.0.0","name":"n","type":"hcashare-cni","mode":"macvlan"})", Verb::kAdd);
  ASSERT_FALSE(no_master.ok());
  EXPECT_EQ(CniCodeOf(no_master.status()), kErrInvalidNetConf);
  EXPECT_NE(no_master.status().details().find("master: required"), std::string::npos);
  EXPECT_EQ(StateFiles(), 0u);
}

}  // namespace
}  // namespace hcashare::cni
