// The defects of issue 14, each reproduced against the real hcashare-cni binary and
// judged by the state-diff oracle (tests/cni_oracle.h): a failed ADD changes nothing that
// anyone can observe, DEL returns what ADD took, and every error is spec JSON with the
// right code. Each test failed on the binary before the fix (docs/reliability.md).
#include <signal.h>
#include <sys/mount.h>

#include "cni/error.h"
#include "cni/link_identity.h"
#include "tests/cni_binary_fixture.h"
#include "tests/cni_oracle.h"

namespace hcashare::cni {
namespace {

using json = nlohmann::json;
using hcashare::testing::DiffSnapshots;
using hcashare::testing::OracleScope;
using hcashare::testing::TakeSnapshot;

class CniFailureTest : public CniPodTest {
 protected:
  void SetUp() override {
    CniPodTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    vf0_ = AddVf(2);
    vf1_ = AddVf(3);
    conf_ = Conf("1.1.0", vf0_);
    conf_["ipam"] = HostLocal();
  }

  OracleScope Scope() const {
    return {
        {{"host", host_ns_}, {"pod", pod_name_}}, {{"state", StateDir()}, {"ipam", IpamDir()}}, {}};
  }

  // The error object of a failed run: exit 1, spec JSON, and the code.
  void ExpectError(const CniRun& run, int code, const std::string& mentions) {
    EXPECT_EQ(run.exit_code, 1) << run.raw << run.err;
    ASSERT_TRUE(run.out.is_object()) << "not JSON: " << run.raw << run.err;
    EXPECT_EQ(run.out.value("code", -1), code) << run.raw;
    EXPECT_NE((run.out.value("msg", "") + run.out.value("details", "")).find(mentions),
              std::string::npos)
        << run.raw;
  }

  std::string vf0_, vf1_;
  json conf_;
};

// Defect 1: an ADD whose CNI_IFNAME the pod already has must fail before touching
// anything. Before the fix it renamed the pod's eth0 to the VF's name, gave it the VF's
// MAC, took it down and stripped its address (the rollback looked the VF up by name).
TEST_F(CniFailureTest, IfnameClashLeavesThePodsInterfaceAlone) {
  GivePodInterface(pod_name_, "eth0", "10.244.1.5/24");
  const auto before = TakeSnapshot(Scope());
  CniRun add = Run("ADD", pod_, conf_, "eth0");
  ExpectError(add, kErrInvalidEnv, "eth0");
  EXPECT_EQ(DiffSnapshots(before, TakeSnapshot(Scope())), "");
}

// Defect 1, second form: container B asks for VF1 as net1 where VF0 already is net1. The
// failed ADD must leave VF0 alone, and VF0's own DEL must still return it.
TEST_F(CniFailureTest, SecondAttachmentUnderATakenNameLeavesTheFirstAlone) {
  const auto clean = TakeSnapshot(Scope());
  CniRun a = Run("ADD", pod_, conf_, "net1", "ctrA");
  ASSERT_EQ(a.exit_code, 0) << a.raw << a.err;
  const auto attached = TakeSnapshot(Scope());
  json conf_b = Conf("1.1.0", vf1_);
  conf_b["ipam"] = HostLocal();
  CniRun b = Run("ADD", pod_, conf_b, "net1", "ctrB");
  ExpectError(b, kErrInvalidEnv, "net1");
  EXPECT_EQ(DiffSnapshots(attached, TakeSnapshot(Scope())), "") << "B's ADD touched A's VF";
  CniRun del_a = Run("DEL", pod_, conf_, "net1", "ctrA");
  EXPECT_EQ(del_a.exit_code, 0) << del_a.raw;
  CniRun del_b = Run("DEL", pod_, conf_b, "net1", "ctrB");
  EXPECT_EQ(del_b.exit_code, 0) << del_b.raw;
  EXPECT_EQ(DiffSnapshots(clean, TakeSnapshot(Scope())), "") << "A's DEL did not return VF0";
}

// Defect 2: a PF that reports no VF table (a veth stands in for it) used to crash the
// plugin inside libnl for every PF-side key. Each must be a spec error that names the PF
// and the VF index, and change nothing; a MAC alone still works (the netdev gets it).
TEST_F(CniFailureTest, PfSideOptionsOnAPfWithoutVfTableAreAnErrorNotACrash) {
  ASSERT_TRUE(Sh("ip -n " + host_ns_ + " link add pf0 type veth peer name pf0p"));
  const auto before = TakeSnapshot(Scope());
  const std::vector<json> options = {
      {{"vlan", 100}},        {{"vlan", 100}, {"vlanQoS", 3}}, {{"spoofchk", "off"}},
      {{"trust", "on"}},      {{"link_state", "enable"}},      {{"max_tx_rate", 1000}},
      {{"min_tx_rate", 100}},
  };
  for (const json& option : options) {
    SCOPED_TRACE(option.dump());
    json conf = conf_;
    conf.update(option);
    CniRun add = Run("ADD", pod_, conf);
    EXPECT_NE(add.exit_code, 128 + SIGSEGV) << "crashed";
    ExpectError(add, kErrDeviceNotFound, "PF pf0 reports no VF 0");
    EXPECT_EQ(DiffSnapshots(before, TakeSnapshot(Scope())), "");
  }
  json with_mac = conf_;
  with_mac["mac"] = "02:00:00:00:00:77";
  CniRun add = Run("ADD", pod_, with_mac);
  EXPECT_EQ(add.exit_code, 0) << add.raw << add.err;
  EXPECT_EQ(add.out["interfaces"][0].value("mac", ""), "02:00:00:00:00:77") << add.raw;
  json check_conf = with_mac;
  check_conf["prevResult"] = add.out;
  CniRun check = Run("CHECK", pod_, check_conf);
  EXPECT_EQ(check.exit_code, 0) << check.raw << check.err;
  EXPECT_EQ(Run("DEL", pod_, with_mac).exit_code, 0);
  EXPECT_EQ(DiffSnapshots(before, TakeSnapshot(Scope())), "");
}

// Defect 3: DEL with CNI_NETNS="" while the pod's namespace still exists used to answer
// success, drop the state and the lease, and leave the VF in the pod. It must return the
// VF from the namespace ADD recorded.
TEST_F(CniFailureTest, DelWithoutNetnsReturnsTheVfFromTheRecordedNamespace) {
  const auto before = TakeSnapshot(Scope());
  CniRun add = Run("ADD", pod_, conf_);
  ASSERT_EQ(add.exit_code, 0) << add.raw << add.err;
  CniRun del = Run("DEL", "", conf_);
  EXPECT_EQ(del.exit_code, 0) << del.raw << del.err;
  EXPECT_EQ(DiffSnapshots(before, TakeSnapshot(Scope())), "");
}

// Defect 3, the rule behind it: DEL forgets an attachment only once its VF is back on
// the host or its namespace is gone. A VF the pod moved on (here: into a third
// namespace) keeps the attachment and answers an error; once it is back, DEL completes.
TEST_F(CniFailureTest, DelKeepsTheAttachmentWhileTheVfIsNeitherInThePodNorBack) {
  const auto before = TakeSnapshot(Scope());
  ASSERT_EQ(Run("ADD", pod_, conf_).exit_code, 0);
  const std::string elsewhere = AddPod();
  const std::string elsewhere_name = netns_.back();
  ASSERT_TRUE(Sh("ip -n " + pod_name_ + " link set net1 netns " + elsewhere_name));
  CniRun del = Run("DEL", pod_, conf_);
  ExpectError(del, kErrHostSetupFailed, "neither in the host nor in the pod");
  EXPECT_EQ(StateFiles(), 2u) << "the attachment and its owner marker are kept";
  EXPECT_EQ(IpamLeases(), 1u) << "the lease is kept until the VF is back";
  ASSERT_TRUE(Sh("ip -n " + elsewhere_name + " link set net1 netns " + pod_name_));
  CniRun retry = Run("DEL", pod_, conf_);
  EXPECT_EQ(retry.exit_code, 0) << retry.raw << retry.err;
  EXPECT_EQ(DiffSnapshots(before, TakeSnapshot(Scope())), "");
}

// A configuration edited after ADD into one that no longer validates (or a stricter plugin
// after an upgrade) used to fail DEL with code 7 on every retry, so the pod's teardown never
// finished. DEL undoes what ADD recorded, with the configuration ADD recorded, as sriov-cni's
// DEL reads its cache; with nothing recorded it has nothing to do. A configuration that is not
// JSON at all is still refused.
TEST_F(CniFailureTest, DelWithAConfigurationThatNoLongerValidatesUndoesWhatAddRecorded) {
  const auto before = TakeSnapshot(Scope());
  ASSERT_EQ(Run("ADD", pod_, conf_).exit_code, 0);
  EXPECT_EQ(IpamLeases(), 1u);
  json edited = conf_;
  edited["vlan"] = 5000;
  edited["stateDir"] = "/tmp/elsewhere";  // a node setting the node file does not have
  CniRun refused = Run("ADD", pod_, edited, "net2", "ctr2");
  ExpectError(refused, kErrInvalidNetConf, "vlan");
  CniRun del = Run("DEL", pod_, edited);
  EXPECT_EQ(del.exit_code, 0) << del.raw << del.err;
  EXPECT_NE(del.err.find("no longer validates"), std::string::npos) << del.err;
  EXPECT_EQ(DiffSnapshots(before, TakeSnapshot(Scope())), "") << "the VF back, the lease released";
  CniRun again = Run("DEL", pod_, edited);
  EXPECT_EQ(again.exit_code, 0) << again.raw << again.err;
  EXPECT_EQ(DiffSnapshots(before, TakeSnapshot(Scope())), "");
  CniRun garbage = Run("DEL", pod_, conf_, "net1", "ctr1", "{\"cniVersion\": ");
  ExpectError(garbage, kErrDecode, "");
}

// Defect 4: DEL used to hand a VF back admin-down whatever it was before ADD, and the
// device plugin then counted it Unhealthy. The host's admin state is restored.
TEST_F(CniFailureTest, DelRestoresTheAdminStateTheVfHadBeforeAdd) {
  ASSERT_TRUE(Sh("ip -n " + host_ns_ + " link set " + vf_netdevs_[0] + " up"));
  const auto before = TakeSnapshot(Scope());
  ASSERT_EQ(Run("ADD", pod_, conf_).exit_code, 0);
  ASSERT_EQ(Run("DEL", pod_, conf_).exit_code, 0);
  EXPECT_EQ(DiffSnapshots(before, TakeSnapshot(Scope())), "");
  // And the rollback of a failed ADD restores it too.
  CniRun failed =
      Run("ADD", pod_, conf_, "net1", "ctr1", "", {"HCASHARE_CNI_FAIL_AT=add:ipam-applied"});
  EXPECT_EQ(failed.exit_code, 1) << failed.raw;
  EXPECT_EQ(DiffSnapshots(before, TakeSnapshot(Scope())), "");
}

// Defect 6: a read-only state dir is not "try again later" (11) but an I/O failure (5);
// a lock held by another invocation past the wait is the transient case (11).
TEST_F(CniFailureTest, StateDirErrorsHaveTheirSpecCodes) {
  const std::string ro = tmp_.path() + "/ro-state";
  fs::create_directories(ro);
  ASSERT_EQ(::mount("tmpfs", ro.c_str(), "tmpfs", MS_RDONLY, "size=64k"), 0);
  WriteNodeConfig({{"stateDir", ro}});
  const auto before = TakeSnapshot(Scope());
  CniRun add = Run("ADD", pod_, conf_);
  ::umount(ro.c_str());
  ExpectError(add, kErrIo, "Read-only file system");
  EXPECT_EQ(DiffSnapshots(before, TakeSnapshot(Scope())), "");
}

// The identity rule itself (cni/link_identity.h), on the cases the defects came from.
TEST(LinkIdentity, ParentDeviceDecidesWhateverTheNameOrMac) {
  AttachmentState s;
  s.device = "0000:5e:00.2";
  s.owner.ifname = "net1";
  s.host_ifname = "ens1f0v0";
  s.host_mac = "02:00:00:00:00:01";
  s.host_ifindex = 7;
  hcashare::LinkState vf;
  vf.name = "renamed-by-pod";
  vf.mac = "02:99:99:99:99:99";
  vf.ifindex = 42;
  vf.parent_dev = "0000:5e:00.2";
  EXPECT_TRUE(IsAttachedLink(vf, s));
  hcashare::LinkState other_vf = vf;
  other_vf.name = "net1";
  other_vf.mac = s.host_mac;
  other_vf.ifindex = 7;
  other_vf.parent_dev = "0000:5e:00.3";
  EXPECT_FALSE(IsAttachedLink(other_vf, s)) << "another VF under our name, MAC and ifindex";
}

TEST(LinkIdentity, WithoutParentDeviceAMacAndAnIndexOrOurNameAreNeeded) {
  AttachmentState s;
  s.device = "0000:5e:00.2";
  s.owner.ifname = "eth0";
  s.host_ifname = "hb1";
  s.host_mac = "02:00:00:00:00:01";
  s.pod_mac = "02:00:00:00:00:5a";
  s.host_ifindex = 4;
  hcashare::LinkState foreign;  // the pod's own eth0 (defect 1)
  foreign.name = "eth0";
  foreign.mac = "1e:5b:45:bb:61:e6";
  foreign.ifindex = 2;
  EXPECT_FALSE(IsAttachedLink(foreign, s)) << "a name alone is never enough";
  hcashare::LinkState moved;  // ours, kept its ifindex, rename failed
  moved.name = "hb1";
  moved.mac = s.pod_mac;
  moved.ifindex = 4;
  EXPECT_TRUE(IsAttachedLink(moved, s));
  moved.ifindex = 9;  // the kernel had to give it another ifindex: our name and MAC
  EXPECT_TRUE(IsAttachedLink(moved, s));
  moved.name = "x";  // neither our index nor our name
  EXPECT_FALSE(IsAttachedLink(moved, s));
  foreign.ifindex = 4;  // our ifindex, not our MAC
  EXPECT_FALSE(IsAttachedLink(foreign, s));
}

// The identity rules row by row, for every kind of kernel: with a parent device (>= 5.15),
// with only ethtool's bus address (older kernels: RHEL 8's 4.18), and with neither (the
// veth stand-ins). The pod, with CAP_NET_ADMIN in its namespace, may rename the interface
// or change its MAC, not both: one of the two must still be ours.
TEST(LinkIdentity, RulesOnEveryKernel) {
  AttachmentState s;
  s.device = "0000:5e:00.2";
  s.owner.ifname = "net1";
  s.host_ifname = "ens1f0v2";
  s.host_mac = "02:00:00:00:00:01";
  s.pod_mac = "02:00:00:00:00:5a";
  s.host_ifindex = 7;
  s.pod_ifindex = 9;  // 7 was taken in the pod
  struct Row {
    std::string what;
    std::string name, mac;
    int ifindex;
    std::string parent_dev, bus_info;
    bool link;    // IsAttachedLink
    bool device;  // IsAttachedDevice (CHECK: the MAC aside)
  };
  const std::string kOtherMac = "02:99:99:99:99:99";
  const std::vector<Row> rows = {
      {"parent present: ours whatever the name and MAC", "x", kOtherMac, 42, s.device, "", true,
       true},
      {"parent present: another VF under our name, MAC and ifindex", "net1", s.pod_mac, 9,
       "0000:5e:00.3", "", false, false},
      {"bus address ours: renamed, MAC changed, another ifindex", "x", kOtherMac, 42, "", s.device,
       true, true},
      {"bus address another VF's, our name, MAC and ifindex", "net1", s.pod_mac, 9, "",
       "0000:5e:00.3", false, false},
      {"stand-in, MAC changed, pod ifindex and our name", "net1", kOtherMac, 9, "", "", true, true},
      {"stand-in, renamed, MAC kept", "eth5", s.pod_mac, 9, "", "", true, true},
      {"stand-in, renamed, host MAC kept", "eth5", s.host_mac, 9, "", "", true, true},
      {"stand-in, renamed AND MAC changed", "eth5", kOtherMac, 9, "", "", false, true},
      {"stand-in, MAC changed, our name, another ifindex", "net1", kOtherMac, 12, "", "", false,
       false},
      {"stand-in, MAC changed, our name, the host's ifindex only", "net1", kOtherMac, 7, "", "",
       false, false},
      {"stand-in, a name alone", "net1", "1e:5b:45:bb:61:e6", 2, "", "", false, false},
  };
  for (const Row& r : rows) {
    SCOPED_TRACE(r.what);
    hcashare::LinkState l;
    l.name = r.name;
    l.mac = r.mac;
    l.ifindex = r.ifindex;
    l.parent_dev = r.parent_dev;
    l.bus_info = r.bus_info;
    EXPECT_EQ(IsAttachedLink(l, s), r.link);
    EXPECT_EQ(IsAttachedDevice(l, s), r.device);
  }
  // Before ADD confirmed the move (no pod ifindex yet), a changed MAC is never ours.
  AttachmentState unconfirmed = s;
  unconfirmed.pod_ifindex = 0;
  hcashare::LinkState l;
  l.name = "net1";
  l.mac = kOtherMac;
  l.ifindex = 9;
  EXPECT_FALSE(IsAttachedLink(l, unconfirmed));
}

}  // namespace
}  // namespace hcashare::cni
