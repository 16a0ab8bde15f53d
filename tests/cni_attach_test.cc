// The CNI attachment steps against real network namespaces: a simulated host tree whose
// VFs' netdevs are real veth interfaces, a real pod namespace, real IPAM (host-local from
// containernetworking-plugins) and a recording double for the PF-side VF settings.
// Each test runs inside its own "host" namespace, so the machine's network is untouched.
#include "tests/cni_fixture.h"

namespace hcashare::cni {
namespace {

using json = nlohmann::json;

TEST_F(CniAttachTest, AddMovesTheNetdevAndDelRestoresIt) {
  auto before = LinkIn(*host_ns_, vf_netdevs_[0]);
  ASSERT_TRUE(before.ok());
  Result<json> added = Status::Internal("not run");
  RunIn(*host_ns_, [&] {
    added = CmdAdd(Env("ADD"), Conf({{"mac", "02:11:22:33:44:55"}, {"mtu", 1400}}), Context());
  });
  ASSERT_TRUE(added.ok()) << added.status().message() << ": " << added.status().details();
  EXPECT_EQ((*added)["cniVersion"], "1.0.0");
  EXPECT_EQ((*added)["interfaces"][0]["name"], "net1");
  EXPECT_EQ((*added)["interfaces"][0]["mac"], "02:11:22:33:44:55");
  EXPECT_EQ((*added)["interfaces"][0]["sandbox"], pod_ns_->path());
  EXPECT_FALSE((*added)["interfaces"][0].contains("pciID")) << "pciID is a 1.1.0 field";

  auto in_pod = LinkIn(*pod_ns_, "net1");
  ASSERT_TRUE(in_pod.ok()) << in_pod.status().ToString();
  EXPECT_EQ(in_pod->mac, "02:11:22:33:44:55");
  EXPECT_EQ(in_pod->mtu, 1400u) << "mtu is applied";
  EXPECT_TRUE(in_pod->admin_up);
  EXPECT_TRUE(LinkIn(*host_ns_, vf_netdevs_[0]).status().IsNotFound());
  EXPECT_TRUE(vf_ops_.calls().empty() || vf_ops_.calls() == std::vector<std::string>{"get pf0/0"})
      << "only the MAC was asked for: the PF is at most queried";
  EXPECT_EQ(StateFiles(), 2u);

  Status deleted;
  RunIn(*host_ns_, [&] { deleted = CmdDel(Env("DEL"), Conf({}, Verb::kDel), Context()); });
  ASSERT_TRUE(deleted.ok()) << deleted.message() << ": " << deleted.details();
  auto after = LinkIn(*host_ns_, vf_netdevs_[0]);
  ASSERT_TRUE(after.ok()) << "the netdev is back under its host name";
  EXPECT_EQ(after->mac, before->mac);
  EXPECT_EQ(after->mtu, before->mtu);
  EXPECT_FALSE(after->admin_up);
  EXPECT_TRUE(LinkIn(*pod_ns_, "net1").status().IsNotFound());
  EXPECT_EQ(StateFiles(), 0u);

  // DEL again: nothing left to do, still success.
  RunIn(*host_ns_, [&] { deleted = CmdDel(Env("DEL"), Conf({}, Verb::kDel), Context()); });
  EXPECT_TRUE(deleted.ok());
}

// The state store's records are root's only: directories 0700, files 0600.
TEST_F(CniAttachTest, StateIsPrivate) {
  Result<json> added = Status::Internal("not run");
  RunIn(*host_ns_, [&] { added = CmdAdd(Env("ADD"), Conf(), Context()); });
  ASSERT_TRUE(added.ok()) << added.status().message();
  const std::string dir = tmp_.path() + "/state";
  for (const char* sub : {"", "/attachments", "/owners", "/locks"}) {
    EXPECT_EQ(fs::status(dir + sub).permissions(), fs::perms::owner_all) << sub;
  }
  for (const char* sub : {"/attachments", "/owners", "/locks"}) {
    for (const auto& e : fs::directory_iterator(dir + sub)) {
      EXPECT_EQ(e.status().permissions(), fs::perms::owner_read | fs::perms::owner_write)
          << e.path();
    }
  }
  Status deleted;
  RunIn(*host_ns_, [&] { deleted = CmdDel(Env("DEL"), Conf({}, Verb::kDel), Context()); });
  EXPECT_TRUE(deleted.ok());
}

TEST_F(CniAttachTest, NoPfSettingMeansThePfIsNeverQueried) {
  Result<json> added = Status::Internal("not run");
  RunIn(*host_ns_, [&] { added = CmdAdd(Env("ADD"), Conf(), Context()); });
  ASSERT_TRUE(added.ok()) << added.status().message() << ": " << added.status().details();
  EXPECT_TRUE(vf_ops_.calls().empty());
  Status deleted;
  RunIn(*host_ns_, [&] { deleted = CmdDel(Env("DEL"), Conf({}, Verb::kDel), Context()); });
  EXPECT_TRUE(deleted.ok());
  EXPECT_TRUE(vf_ops_.calls().empty());
}

TEST_F(CniAttachTest, HostLocalIpamAddressesInThePodAnd11ResultShape) {
  Result<json> added = Status::Internal("not run");
  RunIn(*host_ns_, [&] {
    added = CmdAdd(Env("ADD"), Conf({{"cniVersion", "1.1.0"}, {"ipam", HostLocal()}}), Context());
  });
  ASSERT_TRUE(added.ok()) << added.status().message() << ": " << added.status().details();
  EXPECT_EQ((*added)["interfaces"][0]["pciID"], "0000:3b:00.2");
  ASSERT_EQ((*added)["ips"].size(), 1u);
  EXPECT_EQ((*added)["ips"][0]["address"], "10.77.0.2/24");
  EXPECT_EQ((*added)["ips"][0]["interface"], 0);
  EXPECT_TRUE(Sh("ip -n " + pod_ns_->name() + " addr show dev net1 | grep -q 10.77.0.2/24"));
  EXPECT_TRUE(Sh("ip -n " + pod_ns_->name() + " route show 10.88.0.0/16 | grep -q 10.77.0.1"));
  EXPECT_TRUE(fs::exists(tmp_.path() + "/ipam/rdma-net/10.77.0.2"));

  Status deleted;
  RunIn(*host_ns_, [&] {
    deleted = CmdDel(Env("DEL"), Conf({{"ipam", HostLocal()}}, Verb::kDel), Context());
  });
  ASSERT_TRUE(deleted.ok()) << deleted.message();
  EXPECT_FALSE(fs::exists(tmp_.path() + "/ipam/rdma-net/10.77.0.2")) << "IPAM released";
}

TEST_F(CniAttachTest, IpamFailureRollsEverythingBack) {
  // An IPAM plugin that fails with a CNI error.
  cni_path_ = tmp_.path() + "/bin";
  fs::create_directories(cni_path_);
  const std::string plugin = cni_path_ + "/failing-ipam";
  std::ofstream(plugin)
      << "#!/bin/sh\ncat >/dev/null\n"
         "echo '{\"cniVersion\":\"1.0.0\",\"code\":11,\"msg\":\"no addresses left\"}'\n"
         "exit 1\n";
  fs::permissions(plugin, fs::perms::owner_all);
  vf_ops_.AddVf(
      "pf0", 0,
      VfSettings{0u, 0u, "802.1q", "00:00:00:00:00:00", true, false, "auto", 0u, 0u, {}, {}});
  const VfSettings original = vf_ops_.settings("pf0", 0);
  auto before = LinkIn(*host_ns_, vf_netdevs_[0]);
  Result<json> added = json();
  RunIn(*host_ns_, [&] {
    added = CmdAdd(
        Env("ADD"),
        Conf({{"vlan", 100}, {"mac", "02:00:00:00:00:aa"}, {"ipam", {{"type", "failing-ipam"}}}}),
        Context());
  });
  ASSERT_FALSE(added.ok());
  EXPECT_EQ(CniCodeOf(added.status()), 11) << "the IPAM plugin's own code is passed on";
  EXPECT_NE(added.status().message().find("failing-ipam"), std::string::npos);
  auto after = LinkIn(*host_ns_, vf_netdevs_[0]);
  ASSERT_TRUE(after.ok()) << "the netdev is back in the host under its name";
  EXPECT_EQ(after->mac, before->mac);
  EXPECT_TRUE(LinkIn(*pod_ns_, "net1").status().IsNotFound());
  EXPECT_TRUE(vf_ops_.settings("pf0", 0) == original) << "PF-side settings restored";
  EXPECT_EQ(StateFiles(), 0u);
}

TEST_F(CniAttachTest, PfSettingFailureMidwayRollsBackTheEarlierOnes) {
  const VfSettings original{0u, 0u, "802.1q", "00:00:00:00:00:00", true, false, "auto", 0u,
                            0u, {}, {}};
  vf_ops_.AddVf("pf0", 0, original);
  vf_ops_.FailSet(3, Status::IoError("simulated driver failure"));  // vlan, spoofchk, then trust
  Result<json> added = json();
  RunIn(*host_ns_, [&] {
    added = CmdAdd(Env("ADD"),
                   Conf({{"vlan", 100}, {"vlanQoS", 3}, {"spoofchk", "off"}, {"trust", "on"}}),
                   Context());
  });
  ASSERT_FALSE(added.ok());
  EXPECT_EQ(CniCodeOf(added.status()), kErrIo);
  EXPECT_NE(added.status().message().find("cannot set trust"), std::string::npos)
      << added.status().message();
  EXPECT_TRUE(vf_ops_.settings("pf0", 0) == original);
  EXPECT_TRUE(LinkIn(*host_ns_, vf_netdevs_[0]).ok()) << "the netdev never moved";
  EXPECT_EQ(StateFiles(), 0u);
}

TEST_F(CniAttachTest, PfSettingsAppliedAndResetOnDel) {
  const VfSettings original{0u, 0u, "802.1q", "00:00:00:00:00:00", true, false, "auto", 0u,
                            0u, {}, {}};
  vf_ops_.AddVf("pf0", 0, original);
  json extra = {{"vlan", 100},        {"vlanQoS", 3},        {"vlanProto", "802.1ad"},
                {"spoofchk", "off"},  {"trust", "on"},       {"link_state", "enable"},
                {"min_tx_rate", 100}, {"max_tx_rate", 1000}, {"mac", "02:00:00:00:00:bb"}};
  Result<json> added = Status::Internal("not run");
  RunIn(*host_ns_, [&] { added = CmdAdd(Env("ADD"), Conf(extra), Context()); });
  ASSERT_TRUE(added.ok()) << added.status().message() << ": " << added.status().details();
  const VfSettings& now = vf_ops_.settings("pf0", 0);
  EXPECT_EQ(now.vlan, 100u);
  EXPECT_EQ(now.qos, 3u);
  EXPECT_EQ(now.vlan_proto, "802.1ad");
  EXPECT_EQ(now.spoofchk, false);
  EXPECT_EQ(now.trust, true);
  EXPECT_EQ(now.link_state, "enable");
  EXPECT_EQ(now.min_tx_rate, 100u);
  EXPECT_EQ(now.max_tx_rate, 1000u);
  EXPECT_EQ(now.mac, "02:00:00:00:00:bb") << "the admin MAC too, as the PF reports the VF";
  Status deleted;
  RunIn(*host_ns_, [&] { deleted = CmdDel(Env("DEL"), Conf({}, Verb::kDel), Context()); });
  ASSERT_TRUE(deleted.ok()) << deleted.message();
  EXPECT_TRUE(vf_ops_.settings("pf0", 0) == original);
}

TEST_F(CniAttachTest, DelWithTheNetnsGoneOrEmptySucceedsAndClearsState) {
  for (const char* how : {"deleted", "empty"}) {
    SCOPED_TRACE(how);
    if (!pod_ns_->ok()) pod_ns_ = std::make_unique<NamedNetns>(Unique("hcp"));
    Result<json> added = Status::Internal("not run");
    RunIn(*host_ns_, [&] { added = CmdAdd(Env("ADD"), Conf(), Context()); });
    ASSERT_TRUE(added.ok()) << added.status().message() << ": " << added.status().details();
    const std::string netns = pod_ns_->path();
    pod_ns_->Delete();  // a veth is destroyed with its namespace
    Status deleted;
    RunIn(*host_ns_, [&] {
      deleted = CmdDel(Env("DEL", "net1", "c0ffee", std::string(how) == "empty" ? "-" : netns),
                       Conf({}, Verb::kDel), Context());
    });
    ASSERT_TRUE(deleted.ok()) << deleted.message() << ": " << deleted.details();
    EXPECT_EQ(StateFiles(), 0u);
    // The next test round needs a VF netdev again.
    ASSERT_TRUE(node_->RemovePciFunction("0000:3b:00.2").ok());
    AddVf(0);
  }
}

// Chained after another plugin: its interfaces and addresses are kept, ours appended, and
// our addresses point at our interface.
TEST_F(CniAttachTest, PrevResultIsKeptWhenChained) {
  json prev = {{"cniVersion", "1.0.0"},
               {"interfaces", json::array({{{"name", "eth0"}, {"sandbox", pod_ns_->path()}}})},
               {"ips", json::array({{{"address", "10.0.0.5/24"}, {"interface", 0}}})},
               {"dns", {{"nameservers", json::array({"10.0.0.10"})}}}};
  Result<json> added = Status::Internal("not run");
  RunIn(*host_ns_, [&] {
    added = CmdAdd(Env("ADD"), Conf({{"prevResult", prev}, {"ipam", HostLocal()}}), Context());
  });
  ASSERT_TRUE(added.ok()) << added.status().message() << ": " << added.status().details();
  ASSERT_EQ((*added)["interfaces"].size(), 2u);
  EXPECT_EQ((*added)["interfaces"][0]["name"], "eth0");
  EXPECT_EQ((*added)["interfaces"][1]["name"], "net1");
  ASSERT_EQ((*added)["ips"].size(), 2u);
  EXPECT_EQ((*added)["ips"][0]["interface"], 0);
  EXPECT_EQ((*added)["ips"][1]["interface"], 1);
  EXPECT_EQ((*added)["dns"]["nameservers"][0], "10.0.0.10");
  Status checked;
  RunIn(*host_ns_, [&] {
    checked =
        CmdCheck(Env("CHECK"), Conf({{"prevResult", *added}, {"ipam", HostLocal()}}, Verb::kCheck),
                 Context());
  });
  EXPECT_TRUE(checked.ok()) << checked.message() << ": " << checked.details();
}

// A DEL that fails keeps the state, so that a retry completes it.
TEST_F(CniAttachTest, FailedDelKeepsStateAndRetryCompletes) {
  const VfSettings original{0u, 0u, "802.1q", "00:00:00:00:00:00", true, false, "auto", 0u,
                            0u, {}, {}};
  vf_ops_.AddVf("pf0", 0, original);
  Result<json> added = Status::Internal("not run");
  RunIn(*host_ns_, [&] { added = CmdAdd(Env("ADD"), Conf({{"vlan", 7}}), Context()); });
  ASSERT_TRUE(added.ok()) << added.status().message();
  vf_ops_.FailSet(1, Status::Unavailable("PF busy"));
  Status deleted;
  RunIn(*host_ns_, [&] { deleted = CmdDel(Env("DEL"), Conf({}, Verb::kDel), Context()); });
  ASSERT_FALSE(deleted.ok());
  EXPECT_NE(deleted.message().find("PF-side settings"), std::string::npos) << deleted.message();
  EXPECT_EQ(StateFiles(), 2u) << "state and marker kept for the retry";
  RunIn(*host_ns_, [&] { deleted = CmdDel(Env("DEL"), Conf({}, Verb::kDel), Context()); });
  EXPECT_TRUE(deleted.ok());
  EXPECT_TRUE(vf_ops_.settings("pf0", 0) == original);
  EXPECT_EQ(StateFiles(), 0u);
  EXPECT_TRUE(LinkIn(*host_ns_, vf_netdevs_[0]).ok()) << "the netdev came back on the first try";
}

// CNI_NETNS naming something that is not a network namespace: DEL still succeeds.
TEST_F(CniAttachTest, DelWithANetnsPathThatIsNotANetns) {
  Result<json> added = Status::Internal("not run");
  RunIn(*host_ns_, [&] { added = CmdAdd(Env("ADD"), Conf(), Context()); });
  ASSERT_TRUE(added.ok()) << added.status().message();
  const std::string not_netns = tmp_.path() + "/not-a-netns";
  std::ofstream(not_netns) << "x";
  Status deleted;
  RunIn(*host_ns_, [&] {
    deleted = CmdDel(Env("DEL", "net1", "c0ffee", not_netns), Conf({}, Verb::kDel), Context());
  });
  EXPECT_TRUE(deleted.ok()) << deleted.message();
  EXPECT_EQ(StateFiles(), 0u);
}

TEST_F(CniAttachTest, TwoAttachmentsOfOneResourceGetDifferentDevices) {
  pod_devices_.source = "test";
  pod_devices_.by_resource["rdma/vf_pool_a"] = {"0000:3b:00.2", "0000:3b:00.3"};
  json by_resource = {{"deviceID", nullptr}, {"resourceName", "rdma/vf_pool_a"}};
  Result<json> a = Status::Internal("not run"), b = Status::Internal("not run"), c = json();
  RunIn(*host_ns_, [&] {
    a = CmdAdd(Env("ADD", "net1"), Conf(by_resource), Context());
    b = CmdAdd(Env("ADD", "net2"), Conf(by_resource), Context());
    c = CmdAdd(Env("ADD", "net3"), Conf(by_resource), Context());
  });
  ASSERT_TRUE(a.ok()) << a.status().message();
  ASSERT_TRUE(b.ok()) << b.status().message();
  EXPECT_EQ((*a)["interfaces"][0]["name"], "net1");
  EXPECT_TRUE(LinkIn(*pod_ns_, "net1").ok());
  EXPECT_TRUE(LinkIn(*pod_ns_, "net2").ok());
  EXPECT_EQ(store_->OwnerOf("0000:3b:00.2")->ifname, "net1");
  EXPECT_EQ(store_->OwnerOf("0000:3b:00.3")->ifname, "net2");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(CniCodeOf(c.status()), kErrDeviceBusy);
}

TEST_F(CniAttachTest, MissingResourceErrorNamesPodResourceAndWhatWasFound) {
  pod_devices_.source = "v1 Get";
  pod_devices_.by_resource = {{"nvidia.com/gpu", {"GPU-1"}}};
  Result<json> added = json();
  RunIn(*host_ns_, [&] {
    added = CmdAdd(Env("ADD"), Conf({{"deviceID", nullptr}, {"resourceName", "rdma/vf_pool_a"}}),
                   Context());
  });
  ASSERT_FALSE(added.ok());
  EXPECT_EQ(CniCodeOf(added.status()), kErrDeviceNotFound);
  EXPECT_EQ(added.status().message(),
            "pod ns/p has no devices of rdma/vf_pool_a (resources present: nvidia.com/gpu (1)); "
            "does the pod request it and does the NAD carry the "
            "k8s.v1.cni.cncf.io/resourceName annotation?");
  EXPECT_EQ(StateFiles(), 0u);
}

TEST_F(CniAttachTest, NotAVfAndDpdkDriverAreClearErrors) {
  pod_devices_.by_resource["example.com/pfs"] = {"0000:3b:00.0", "0000:99:00.1"};
  Result<json> pf = json();
  RunIn(*host_ns_, [&] {
    pf = CmdAdd(Env("ADD"), Conf({{"deviceID", "0000:3b:00.0"}}), Context());
  });
  ASSERT_FALSE(pf.ok());
  EXPECT_NE(pf.status().details().find("not an SR-IOV VF"), std::string::npos)
      << pf.status().details();
  Result<json> missing = json();
  RunIn(*host_ns_, [&] {
    missing = CmdAdd(Env("ADD"), Conf({{"deviceID", "0000:99:00.1"}}), Context());
  });
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(CniCodeOf(missing.status()), kErrDeviceNotFound);
  EXPECT_EQ(StateFiles(), 0u);
}

TEST_F(CniAttachTest, ConcurrentAddsOnOneVfOneWins) {
  std::atomic<int> ok{0}, busy{0};
  std::vector<std::unique_ptr<NamedNetns>> pods;
  for (int i = 0; i < 4; ++i) pods.push_back(std::make_unique<NamedNetns>(Unique("hcq")));
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&, i] {
      RunIn(*host_ns_, [&] {
        auto r = CmdAdd(Env("ADD", "net1", "ctr" + std::to_string(i), pods[i]->path()), Conf(),
                        Context());
        if (r.ok()) {
          ++ok;
        } else if (CniCodeOf(r.status()) == kErrDeviceBusy ||
                   CniCodeOf(r.status()) == kErrTryAgainLater) {
          ++busy;
        }
      });
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok.load(), 1);
  EXPECT_EQ(busy.load(), 3);
  EXPECT_EQ(StateFiles(), 2u) << "the winner's state and owner marker only";
}

// Issue 14, defect 5: a shared pool's ID ("0") in netdev mode used to answer "auxiliary
// device 0 not found under /sys/bus/auxiliary/devices/". It says the resource is a shared
// pool and points to the macvlan/ipoib modes, and changes nothing.
TEST_F(CniAttachTest, SharedPoolIdInNetdevModePointsToTheChildLinkModes) {
  pod_devices_.source = "v1 Get";
  pod_devices_.by_resource["rdma/hca_shared_devices_a"] = {"0"};
  Result<json> added = json();
  RunIn(*host_ns_, [&] {
    added = CmdAdd(Env("ADD"),
                   Conf({{"deviceID", nullptr}, {"resourceName", "rdma/hca_shared_devices_a"}}),
                   Context());
  });
  ASSERT_FALSE(added.ok());
  EXPECT_EQ(CniCodeOf(added.status()), kErrInvalidNetConf);
  EXPECT_NE(added.status().message().find("rdma/hca_shared_devices_a is a shared pool"),
            std::string::npos)
      << added.status().message();
  EXPECT_NE(added.status().details().find("\"mode\": \"macvlan\""), std::string::npos);
  EXPECT_NE(added.status().details().find("\"mode\": \"ipoib\""), std::string::npos);
  EXPECT_EQ(added.status().message().find("auxiliary"), std::string::npos);
  EXPECT_EQ(StateFiles(), 0u);
}

}  // namespace
}  // namespace hcashare::cni
