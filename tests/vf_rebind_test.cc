// cni/vf_rebind.h's naming of a rebound VF's netdev (issue 24): the bind gives the VF a new
// netdev under a name of the kernel's choosing, and AdoptVfNetdev renames it to the recorded
// host name while others rename too. Before, the rename was one try by name: udev renaming
// the same netdev first (ENODEV), or an IPoIB sibling holding the name (EEXIST), left the
// host netdev under another name. Real links in a namespace of the test's own; the sysfs
// tree follows renames as the kernel's does (tests/support/vf_driver_model.h).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <thread>

#include "cni/steps.h"
#include "cni/vf_rebind.h"
#include "common/netns.h"
#include "common/temp_dir.h"
#include "hostfacts/live.h"
#include "nl/netdev.h"
#include "nl/rdma_netlink.h"
#include "nl/sriov.h"
#include "testing/fake_rdma_system.h"
#include "testing/recording_vf_ops.h"
#include "testing/sim_node.h"
#include "tests/cni_fixture.h"
#include "tests/support/vf_driver_model.h"

namespace hcashare::cni {
namespace {

// Forwards every call to `inner`; tests override what they race.
class ForwardingNetdevOps : public NetdevOps {
 public:
  explicit ForwardingNetdevOps(NetdevOps& inner) : inner_(inner) {}
  Result<hcashare::LinkState> Get(const std::string& n) override { return inner_.Get(n); }
  Status MoveToNetns(const std::string& n, const Netns& t) override {
    return inner_.MoveToNetns(n, t);
  }
  Status MoveAndChange(int i, const Netns& t, const LinkChanges& c) override {
    return inner_.MoveAndChange(i, t, c);
  }
  Result<std::vector<hcashare::LinkState>> List() override { return inner_.List(); }
  Status Rename(const std::string& n, const std::string& to) override {
    return inner_.Rename(n, to);
  }
  Status SetMac(const std::string& n, const std::string& m) override { return inner_.SetMac(n, m); }
  Status SetMtu(const std::string& n, uint32_t m) override { return inner_.SetMtu(n, m); }
  Status SetUp(const std::string& n, bool up) override { return inner_.SetUp(n, up); }
  Status CreateMacvlan(const std::string& m, const std::string& n, const Netns& t) override {
    return inner_.CreateMacvlan(m, n, t);
  }
  Status CreateIpoibChild(const std::string& p, const std::string& n, uint16_t k,
                          const Netns& t) override {
    return inner_.CreateIpoibChild(p, n, k, t);
  }
  Status Delete(const std::string& n) override { return inner_.Delete(n); }
  Result<std::vector<std::string>> ListAddresses(const std::string& n) override {
    return inner_.ListAddresses(n);
  }
  Status AddAddress(const std::string& n, const std::string& c) override {
    return inner_.AddAddress(n, c);
  }
  Status AddRoute(const std::string& n, const std::string& d, const std::string& g) override {
    return inner_.AddRoute(n, d, g);
  }

 protected:
  NetdevOps& inner_;
};

// udev: renames the netdev itself just before our first rename reaches the kernel.
class UdevRenamesFirst final : public ForwardingNetdevOps {
 public:
  using ForwardingNetdevOps::ForwardingNetdevOps;
  Status Rename(const std::string& n, const std::string& to) override {
    if (!raced_.exchange(true)) {
      EXPECT_TRUE(inner_.Rename(n, "udev0").ok());
    }
    return inner_.Rename(n, to);
  }

 private:
  std::atomic<bool> raced_{false};
};

class VfRebindRenameTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root (network namespaces)";
    ns_ = Unique("hbr");
    ASSERT_TRUE(Sh("ip netns add " + ns_));
    fake::SimPciFunction pf;
    pf.address = "0000:7e:00.0";
    pf.netdevs = {"ibpf"};
    pf.link_type = "infiniband";
    ASSERT_TRUE(node_.AddPciFunction(pf).ok());
    tree_->root = tmp_.path() + "/host";
  }
  void TearDown() override {
    if (!ns_.empty()) Sh("ip netns del " + ns_);
  }
  // A VF at 0000:7e:00.<fn> whose netdev, as the bind made it, is `name` (in the tree and
  // in the test's namespace).
  std::string AddVf(int fn, const std::string& name) {
    fake::SimPciFunction vf;
    vf.address = "0000:7e:00." + std::to_string(fn);
    vf.physfn = "0000:7e:00.0";
    vf.link_type = "infiniband";
    vf.netdevs = {name};
    EXPECT_TRUE(node_.AddPciFunction(vf).ok());
    std::string add = "ip -n " + ns_;
    for (const auto& a :
         testing::ModelNetdevAddArgs(name, "02:00:00:00:00:0" + std::to_string(fn))) {
      add += " " + a;
    }
    EXPECT_TRUE(Sh(add));
    return vf.address;
  }
  AttachmentState StateOf(const std::string& pci, const std::string& host_ifname) {
    AttachmentState s;
    s.device = pci;
    s.host_ifname = host_ifname;
    s.host_up = true;
    s.vf_driver = "mlx5_core";
    return s;
  }
  // AdoptVfNetdev of `state` inside the test's namespace, through `netdev`.
  Status Adopt(const AttachmentState& state, NetdevOps& netdev) {
    auto ns = Netns::Open("/var/run/netns/" + ns_);
    if (!ns.ok()) return ns.status();
    AttachContext ctx{*host_, netdev, vf_, rdma_, store_, nullptr};
    return InNetns(*ns, [&] { return AdoptVfNetdev(state, ctx); });
  }
  // The names of the namespace's links.
  std::vector<std::string> Names() {
    std::vector<std::string> names;
    auto ns = Netns::Open("/var/run/netns/" + ns_);
    EXPECT_TRUE(ns.ok());
    (void)InNetns(*ns, [&]() -> Status {
      auto links = base_->List();
      if (links.ok()) {
        for (const auto& l : *links) names.push_back(l.name);
      }
      return Status::Ok();
    });
    std::sort(names.begin(), names.end());
    return names;
  }

  std::string ns_;
  TempDir tmp_;
  fake::SimNode node_{tmp_.path() + "/host"};
  std::unique_ptr<Host> host_ = NewRootedHost(tmp_.path() + "/host");
  std::shared_ptr<testing::ModelTree> tree_ = std::make_shared<testing::ModelTree>();
  std::unique_ptr<NetdevOps> base_ =
      testing::NewTreeMirroringNetdevOps(NewNetlinkNetdevOps(), tree_);
  fake::RecordingVfOps vf_;
  fake::FakeRdmaSystem rdma_{RdmaNetnsMode::kShared};
  StateStore store_{tmp_.path() + "/state"};
};

TEST_F(VfRebindRenameTest, AUdevRenameOfTheSameNetdevIsFollowed) {
  const std::string vf = AddVf(1, "ib0");
  UdevRenamesFirst racing(*base_);
  const Status st = Adopt(StateOf(vf, "hbhost"), racing);
  EXPECT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(Names(), (std::vector<std::string>{"hbhost", "lo"}));
  EXPECT_EQ(hostfacts::LiveFacts(*host_).Netdevs(hostfacts::PciOrAux(vf, false)),
            std::vector<std::string>{"hbhost"});
}

// IPoIB siblings rebound at once: the kernel gave each the other's host name. Each steps
// aside to a temporary name when its name is held, so both end under their own.
TEST_F(VfRebindRenameTest, SiblingsHoldingEachOthersNameBothGetTheirOwn) {
  const std::string a = AddVf(1, "ib1");  // A's host name is ib0
  const std::string b = AddVf(2, "ib0");  // B's host name is ib1
  Status sa, sb;
  std::thread ta([&] { sa = Adopt(StateOf(a, "ib0"), *base_); });
  std::thread tb([&] { sb = Adopt(StateOf(b, "ib1"), *base_); });
  ta.join();
  tb.join();
  EXPECT_TRUE(sa.ok()) << sa.ToString();
  EXPECT_TRUE(sb.ok()) << sb.ToString();
  EXPECT_EQ(hostfacts::LiveFacts(*host_).Netdevs(hostfacts::PciOrAux(a, false)),
            std::vector<std::string>{"ib0"});
  EXPECT_EQ(hostfacts::LiveFacts(*host_).Netdevs(hostfacts::PciOrAux(b, false)),
            std::vector<std::string>{"ib1"});
  EXPECT_EQ(Names(), (std::vector<std::string>{"ib0", "ib1", "lo"}));
}

}  // namespace
}  // namespace hcashare::cni
