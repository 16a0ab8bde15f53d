// Exclusive pools never hand out what belongs to others (issue 15): a PF whose VFs are
// enabled (a pod given it controls VFs that other pods own) and the netdev that carries
// the host's default route (the node's uplink). Discovery reads both facts from a fixture
// tree in the real Linux layout; the pool refuses them unless the resource opts in; shared
// pools keep the PF's HCA; `discover` names each refusal with the key that would allow it.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <string>

#include "common/host.h"
#include "common/temp_dir.h"
#include "config/config.h"
#include "hostfacts/routes.h"
#include "nl/rdma_netlink.h"
#include "node/discovery.h"
#include "node/pool.h"
#include "testing/fake_rdma_system.h"
#include "testing/sim_node.h"
#include "tools/discover_report.h"
#include "tools/snapshot_source.h"

namespace hcashare {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr const char* kPf = "0000:3b:00.0";
constexpr const char* kVf0 = "0000:3b:00.2";
constexpr const char* kVf1 = "0000:3b:00.3";
constexpr const char* kUplink = "0000:18:00.0";

// A RoCE function with one netdev and one RDMA device.
fake::SimPciFunction Roce(const std::string& address, const std::string& netdev,
                          const std::string& rdma, const std::string& physfn = "") {
  fake::SimPciFunction f;
  f.address = address;
  f.netdevs = {netdev};
  f.link_type = "ether";
  f.rdma_device = rdma;
  f.physfn = physfn;
  return f;
}

// /proc/net/route with a default route through `iface` (and a connected route on it).
std::string Ipv4Routes(const std::string& iface, const std::string& flags = "0003") {
  return "Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n" +
         iface + "\t00000000\t0101A8C0\t" + flags + "\t0\t0\t100\t00000000\t0\t0\t0\n" + iface +
         "\t0001A8C0\t00000000\t0001\t0\t0\t100\t00FFFFFF\t0\t0\t0\n";
}

// One /proc/net/ipv6_route line for ::/0 through `iface` with `flags`.
std::string Ipv6Default(const std::string& iface, const std::string& flags) {
  const std::string zero(32, '0');
  return zero + " 00 " + zero + " 00 fe800000000000000000000000000001 00000400 00000001 " +
         "00000000 " + flags + " " + iface + "\n";
}

class ExclusiveSafetyTest : public ::testing::Test {
 protected:
  // Writes host path `path` of the fixture tree.
  void Write(const std::string& path, const std::string& content) {
    const std::filesystem::path file = tmp_.path() + path;
    std::filesystem::create_directories(file.parent_path());
    std::ofstream(file) << content;
    ASSERT_TRUE(std::filesystem::exists(file)) << path;
  }

  void SetUp() override {
    ASSERT_TRUE(sim_.AddPciFunction(Roce(kPf, "ens1f0np0", "mlx5_0")).ok());
    ASSERT_TRUE(sim_.AddPciFunction(Roce(kVf0, "ens1f0v0", "mlx5_2", kPf)).ok());
    ASSERT_TRUE(sim_.AddPciFunction(Roce(kVf1, "ens1f0v1", "mlx5_3", kPf)).ok());
    ASSERT_TRUE(sim_.AddPciFunction(Roce(kUplink, "eno1", "mlx5_1")).ok());
    Write("/proc/net/route", Ipv4Routes("eno1"));
  }

  node::Inventory Scan() const { return node::Discoverer(*host_).Scan(); }

  static config::ResourceConfig Resource(const std::string& json) {
    config::ParseOutcome out = config::ParseConfig(R"({"configList": [)" + json + "]}");
    EXPECT_TRUE(out.ok()) << config::FormatIssues(out);
    return out.config ? out.config->resources.at(0) : config::ResourceConfig{};
  }

  static std::vector<std::string> Offered(const node::PoolState& pool) {
    std::vector<std::string> out;
    for (const auto& h : pool.hcas) out.push_back(h.address);
    return out;
  }

  TempDir tmp_;
  fake::SimNode sim_{tmp_.path()};
  std::unique_ptr<Host> host_ = NewRootedHost(tmp_.path());
};

// Discovery reads the PF's enabled VF count and which function is the host's uplink.
TEST_F(ExclusiveSafetyTest, DiscoveryRecordsVfCountAndUplink) {
  const node::Inventory inv = Scan();
  ASSERT_EQ(inv.functions.size(), 4u);
  for (const auto& f : inv.functions) {
    EXPECT_EQ(f.num_vfs, f.address == kPf ? 2 : 0) << f.address;
    EXPECT_EQ(f.host_uplink, f.address == kUplink) << f.address;
  }
  // Without sriov_numvfs (an older tree), the virtfnN links still count the VFs.
  ASSERT_TRUE(
      std::filesystem::remove(tmp_.path() + "/sys/bus/pci/devices/" + kPf + "/sriov_numvfs"));
  for (const auto& f : Scan().functions) EXPECT_EQ(f.num_vfs, f.address == kPf ? 2 : 0);
}

// The defect: `pfNames: ["ens1f0np0"]` in an exclusive pool offered the PF beside its VFs.
// Now it selects the VFs only, and says why the PF is not offered.
TEST_F(ExclusiveSafetyTest, PfNamesInExclusivePoolOffersTheVfsNotThePf) {
  const auto rc = Resource(
      R"({"resourceName": "vfs", "mode": "exclusive", "selectors": {"pfNames": ["ens1f0np0"]}})");
  const node::PoolState pool = node::BuildPool(rc, Scan());
  EXPECT_THAT(Offered(pool), ElementsAre(kVf0, kVf1));
  ASSERT_EQ(pool.refused.size(), 1u);
  EXPECT_EQ(pool.refused[0].address, kPf);
  EXPECT_THAT(pool.refused[0].reason, HasSubstr("a PF with 2 VF(s) enabled"));
  EXPECT_THAT(pool.refused[0].reason, HasSubstr("allowPfWithVfs"));
}

// The netdev of the default route is never offered by an exclusive pool by default.
TEST_F(ExclusiveSafetyTest, HostUplinkIsNotOffered) {
  const auto rc = Resource(
      R"({"resourceName": "all", "mode": "exclusive", "selectors": {"vendors": ["15b3"]}})");
  const node::PoolState pool = node::BuildPool(rc, Scan());
  EXPECT_THAT(Offered(pool), ElementsAre(kVf0, kVf1));
  ASSERT_EQ(pool.refused.size(), 2u);
  EXPECT_EQ(pool.refused[0].address, kUplink);
  EXPECT_THAT(pool.refused[0].reason, HasSubstr("default route"));
  EXPECT_EQ(pool.refused[1].address, kPf);
}

// Each opt-in allows exactly its own case.
TEST_F(ExclusiveSafetyTest, OptInsAllowOnlyTheirOwnCase) {
  const node::Inventory inv = Scan();
  const auto pf_ok = Resource(R"({"resourceName": "a", "mode": "exclusive",
      "allowPfWithVfs": true, "selectors": {"vendors": ["15b3"]}})");
  EXPECT_THAT(Offered(node::BuildPool(pf_ok, inv)), ElementsAre(kPf, kVf0, kVf1));
  const auto uplink_ok = Resource(R"({"resourceName": "a", "mode": "exclusive",
      "allowHostUplink": true, "selectors": {"vendors": ["15b3"]}})");
  EXPECT_THAT(Offered(node::BuildPool(uplink_ok, inv)), ElementsAre(kUplink, kVf0, kVf1));
  const auto both = Resource(R"({"resourceName": "a", "mode": "exclusive",
      "allowPfWithVfs": true, "allowHostUplink": true, "selectors": {"vendors": ["15b3"]}})");
  const node::PoolState all = node::BuildPool(both, inv);
  EXPECT_THAT(Offered(all), ElementsAre(kUplink, kPf, kVf0, kVf1));
  EXPECT_THAT(all.refused, IsEmpty());
}

// Shared pools keep using the PF's HCA (and the uplink's): that is what they are for.
TEST_F(ExclusiveSafetyTest, SharedPoolKeepsThePf) {
  const auto rc =
      Resource(R"({"resourceName": "shared", "rdmaHcaMax": 8, "selectors": {"isVF": false}})");
  const node::PoolState pool = node::BuildPool(rc, Scan());
  EXPECT_THAT(Offered(pool), ElementsAre(kUplink, kPf));
  EXPECT_THAT(pool.refused, IsEmpty());
}

// The opt-ins are exclusive-only keys; in a shared resource they are an error at their path.
TEST(ExclusiveOptInConfigTest, SharedResourceRejectsOptIns) {
  for (const char* key : {"allowPfWithVfs", "allowHostUplink"}) {
    const config::ParseOutcome out = config::ParseConfig(
        std::string(R"({"configList": [{"resourceName": "r", "rdmaHcaMax": 1, ")") + key +
        R"(": true, "selectors": {"vendors": ["15b3"]}}]})");
    ASSERT_EQ(out.errors.size(), 1u) << key;
    EXPECT_EQ(out.errors[0].path, std::string("$.configList[0].") + key);
    EXPECT_THAT(out.errors[0].message, HasSubstr("only allowed in exclusive mode"));
  }
  const config::ParseOutcome typed = config::ParseConfig(
      R"({"configList": [{"resourceName": "r", "mode": "exclusive", "allowPfWithVfs": "yes",
          "selectors": {"vendors": ["15b3"]}}]})");
  ASSERT_EQ(typed.errors.size(), 1u);
  EXPECT_EQ(typed.errors[0].path, "$.configList[0].allowPfWithVfs");
}

// `discover` names each refusal with the key that would allow it.
TEST_F(ExclusiveSafetyTest, DiscoverNamesTheRefusalAndItsOptIn) {
  config::ParseOutcome out = config::ParseConfig(
      R"({"configList": [{"resourceName": "vfs", "mode": "exclusive",
          "selectors": {"vendors": ["15b3"]}}]})");
  ASSERT_TRUE(out.ok());
  fake::FakeRdmaSystem rdma{RdmaNetnsMode::kShared};
  const cli::DiscoverReport rep =
      cli::BuildDiscoverReport(*out.config, cli::ReadNodeSnapshot(*host_, rdma), /*use_cdi=*/false);
  ASSERT_EQ(rep.resources.size(), 1u);
  std::map<std::string, std::string> rules;
  for (const auto& e : rep.resources[0].excluded) rules[e.address] = e.why.rule;
  EXPECT_EQ(rules[kPf], "allowPfWithVfs");
  EXPECT_EQ(rules[kUplink], "allowHostUplink");
}

// The uplink is found through IPv6 too, and through an upper device (a bond the netdev is
// enslaved to); "lo", reject routes and routes that are down are not uplinks.
TEST_F(ExclusiveSafetyTest, UplinkThroughIpv6AndUpperDevices) {
  Write("/proc/net/route", Ipv4Routes("eno1", "0002"));  // not up
  EXPECT_THAT(hostfacts::ReadDefaultRouteNetdevs(*host_), IsEmpty());
  Write("/proc/net/ipv6_route", Ipv6Default("lo", "00200201") + Ipv6Default("bond0", "00000003"));
  EXPECT_THAT(hostfacts::ReadDefaultRouteNetdevs(*host_), ElementsAre("bond0"));
  Write("/sys/class/net/bond0/type", "1\n");
  ASSERT_EQ(::symlink("../bond0", (tmp_.path() + "/sys/class/net/eno1/upper_bond0").c_str()), 0);
  for (const auto& f : Scan().functions) {
    EXPECT_EQ(f.host_uplink, f.address == kUplink) << f.address;
  }
}

// A host root without /proc (the DaemonSet's /host) reads the routes of the daemon's own
// network namespace: the same default-route devices `ip route` shows.
TEST(HostUplinkTest, RootWithoutProcReadsTheLiveNamespace) {
  TempDir empty;
  const std::unique_ptr<Host> host = NewRootedHost(empty.path());
  std::set<std::string> want;
  for (const char* family : {"-4", "-6"}) {
    FILE* p =
        ::popen((std::string("ip ") + family + " -o route show default 2>/dev/null").c_str(), "r");
    ASSERT_NE(p, nullptr);
    char line[512];
    while (std::fgets(line, sizeof line, p) != nullptr) {
      const std::string l = line;
      const size_t dev = l.find(" dev ");
      if (dev == std::string::npos || l.rfind("unreachable", 0) == 0) continue;
      const size_t start = dev + 5;
      want.insert(l.substr(start, l.find(' ', start) - start));
    }
    ::pclose(p);
  }
  want.erase("lo");
  if (want.empty()) GTEST_SKIP() << "this machine has no default route";
  EXPECT_EQ(hostfacts::ReadDefaultRouteNetdevs(*host),
            std::vector<std::string>(want.begin(), want.end()));
}

}  // namespace
}  // namespace hcashare
