// The canned snapshots (tests/golden/snapshots/, tests/canned_snapshots.h) and the views the
// tests about logic compute from them.
//
// First the files are kept honest: `hcashare snapshot` on the fixture tree each stands for
// writes exactly it, and the reader's snapshot of the tree is == the loaded file, so a
// reader change that alters a fact shows up as a diff of the file. HCASHARE_UPDATE_GOLDEN=1
// regenerates them (and every other golden file of this test); review the diff.
//
// Then the logic, on the loaded files and no tree: `discover` (golden text and JSON, from
// the library and from `hcashare discover --snapshot`), `validate --against`, the device
// plugin's discovery and the CNI's VF resolution.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

#include <nlohmann/json.hpp>

#include "cni/vf.h"
#include "common/env_names.h"
#include "common/host.h"
#include "common/temp_dir.h"
#include "config/config.h"
#include "hostfacts/reader.h"
#include "hostfacts/snapshot_json.h"
#include "node/discovery.h"
#include "tests/canned_snapshots.h"
#include "tests/cli_fixtures.h"
#include "tests/test_util.h"
#include "tools/allocate_json.h"
#include "tools/discover_report.h"

namespace hcashare {
namespace {

using hostfacts::HostSnapshot;
using testing::CannedHost;
using testing::CannedSnapshotPath;
using ::testing::ElementsAre;
using testing::ExpectGolden;
using ::testing::HasSubstr;
using testing::LoadCanned;
using testing::RunHcashare;

// The text `hcashare snapshot` writes for `snap`.
std::string SnapshotText(const HostSnapshot& snap) {
  return hostfacts::SnapshotToJson(snap).dump(1) + "\n";
}

// The RDMA netns mode is the one fact a fixture tree cannot hold: `hcashare snapshot` asks
// RDMA netlink of the machine the test runs on. The canned hosts are in mode shared.
void AsOnASharedModeNode(HostSnapshot* snap) {
  snap->rdma_netns_mode = "shared";
  snap->rdma_netns_error.clear();
}

// A canned host's fixture tree on disk.
struct Tree {
  TempDir tmp;
  std::string root = tmp.path() + "/host";
  explicit Tree(const CannedHost& h) {
    fake::SimNode node(root);
    Status st = h.build(&node);
    EXPECT_TRUE(st.ok()) << h.name << ": " << st.ToString();
  }
};

class CannedSnapshotTest : public ::testing::TestWithParam<CannedHost> {};

// `hcashare snapshot` on the tree writes the checked-in file (its netns mode aside); with
// HCASHARE_UPDATE_GOLDEN=1 this is the generator of the file.
TEST_P(CannedSnapshotTest, IsWhatHcashareSnapshotWritesForItsTree) {
  Tree tree(GetParam());
  const std::string file = tree.tmp.path() + "/snapshot.json";
  auto run = RunHcashare(tree.tmp, {"snapshot", "--host-root", tree.root, "-o", file});
  ASSERT_EQ(run.code, 0) << run.output;
  const std::string written = testing::ReadTextFile(file);
  auto snap = hostfacts::LoadSnapshotFile(file);
  ASSERT_TRUE(snap.ok()) << snap.status().ToString();
  // SnapshotText is the writer's own form, so the file stays as `hcashare snapshot` emits it.
  ASSERT_EQ(SnapshotText(*snap), written);
  EXPECT_EQ(written.find(tree.root), std::string::npos) << "the file names the fixture's path";
  AsOnASharedModeNode(&*snap);
  ExpectGolden("snapshots/" + std::string(GetParam().name) + ".json", SnapshotText(*snap));
}

// The reader's snapshot of the tree (as `hcashare snapshot` reads it) is == the loaded file:
// every fact survives the file, and the file holds no fact the reader does not give.
TEST_P(CannedSnapshotTest, ReaderGivesTheFilesFacts) {
  Tree tree(GetParam());
  hostfacts::ReadOptions full;
  full.gid_tables = true;
  full.verbs_owners = true;
  HostSnapshot live = hostfacts::ReadHostSnapshot(*NewRootedHost(tree.root), full);
  AsOnASharedModeNode(&live);
  const HostSnapshot canned = LoadCanned(GetParam().name);
  EXPECT_TRUE(live == canned) << GetParam().name;
  EXPECT_EQ(SnapshotText(live), testing::ReadTextFile(CannedSnapshotPath(GetParam().name)));
}

INSTANTIATE_TEST_SUITE_P(Hosts, CannedSnapshotTest, ::testing::ValuesIn(testing::CannedHosts()),
                         [](const auto& info) { return std::string(info.param.name); });

// One config for every canned host: a shared pool of every Mellanox function, a
// topology-aware one of the PFs, an InfiniBand-only one and an exclusive pool of VFs.
constexpr const char* kConfig = R"({"configList": [
  {"resourceName": "hca_shared", "rdmaHcaMax": 4, "selectors": {"vendors": ["15b3"]}},
  {"resourceName": "hca_numa", "rdmaHcaMax": 2, "topologyAware": true,
   "selectors": {"vendors": ["15b3"], "isVF": false}},
  {"resourceName": "ib_only", "rdmaHcaMax": 1, "selectors": {"linkTypes": ["infiniband"]}},
  {"resourceName": "vfs", "mode": "exclusive", "selectors": {"isVF": true}}]})";

config::PluginConfig Parse(const std::string& text) {
  config::ParseOutcome out = config::ParseConfig(text);
  EXPECT_TRUE(out.ok()) << config::FormatIssues(out);
  return out.config.value_or(config::PluginConfig{});
}

cli::DiscoverReport Discover(const std::string& host, const std::string& config = kConfig) {
  return cli::BuildDiscoverReport(Parse(config), LoadCanned(host), /*use_cdi=*/false);
}

// The resource named `name` in `rep`; fails the test when absent.
const cli::ResourceReport& Resource(const cli::DiscoverReport& rep, const std::string& name) {
  for (const auto& r : rep.resources) {
    if (r.rc.resource_name == name) return r;
  }
  ADD_FAILURE() << "no resource " << name;
  static const cli::ResourceReport kNone;
  return kNone;
}

std::vector<std::string> Selected(const cli::ResourceReport& r) {
  std::vector<std::string> out;
  for (const auto& h : r.pool.hcas) out.push_back(h.address);
  return out;
}

const cli::ExcludedDevice* Excluded(const cli::ResourceReport& r, const std::string& address) {
  for (const auto& e : r.excluded) {
    if (e.address == address) return &e;
  }
  return nullptr;
}

class DiscoverGoldenTest : public ::testing::TestWithParam<CannedHost> {};

// The report of kConfig on each canned host, as text and JSON, equals its golden files.
TEST_P(DiscoverGoldenTest, TextAndJson) {
  const cli::DiscoverReport rep = Discover(GetParam().name);
  const std::string base = std::string("discover_") + GetParam().name;
  ExpectGolden(base + ".txt", cli::FormatDiscoverText(rep));
  ExpectGolden(base + ".json", cli::DiscoverJson(rep).dump(2) + "\n");
}

// `hcashare discover --snapshot FILE` prints exactly the library's report.
TEST_P(DiscoverGoldenTest, CliOnSnapshotMatchesGolden) {
  TempDir tmp;
  const std::string config = tmp.path() + "/config.json";
  std::ofstream(config) << kConfig;
  const std::string snap = CannedSnapshotPath(GetParam().name);
  const std::string base = testing::GoldenPath(std::string("discover_") + GetParam().name);
  auto text = RunHcashare(tmp, {"discover", "--config", config, "--snapshot", snap});
  EXPECT_EQ(text.code, 0);
  EXPECT_EQ(text.output, testing::ReadTextFile(base + ".txt"));
  auto json = RunHcashare(tmp, {"discover", "--json", "--config", config, "--snapshot", snap});
  EXPECT_EQ(json.code, 0);
  EXPECT_EQ(json.output, testing::ReadTextFile(base + ".json"));
}

INSTANTIATE_TEST_SUITE_P(Hosts, DiscoverGoldenTest, ::testing::ValuesIn(testing::CannedHosts()),
                         [](const auto& info) { return std::string(info.param.name); });

// The two-NUMA server: a topology-aware pool is allocated once per NUMA node, each answer
// granting that node's HCA; the onboard NIC without RDMA is left out as a requirement.
TEST(DiscoverOnSnapshotTest, TwoSocketTopologyAwarePoolPerNumaNode) {
  const cli::DiscoverReport rep = Discover("two_socket");
  EXPECT_EQ(rep.netns_mode, "shared");
  const cli::ResourceReport& numa = Resource(rep, "hca_numa");
  EXPECT_THAT(Selected(numa), ElementsAre("0000:19:00.0", "0000:9b:00.0"));
  ASSERT_EQ(numa.allocations.size(), 2u);
  const char* want[] = {"mlx5_0", "mlx5_1"};
  for (size_t i = 0; i < 2; ++i) {
    ASSERT_TRUE(numa.allocations[i].status.ok()) << numa.allocations[i].status.ToString();
    const auto j = cli::AllocateResponseJson(numa.allocations[i].response);
    EXPECT_EQ(j["container_responses"][0]["envs"][RdmaDevicesEnvName(numa.rc.FullName())], want[i]);
  }
  const cli::ExcludedDevice* eno1 = Excluded(numa, "0000:37:00.0");
  ASSERT_NE(eno1, nullptr);
  EXPECT_EQ(eno1->why.rule, "requirement");
  EXPECT_THAT(eno1->why.detail, HasSubstr("no RDMA device"));
  EXPECT_THAT(Selected(Resource(rep, "ib_only")), ElementsAre("0000:19:00.0", "0000:9b:00.0"));
}

// The workstation's RoCE NIC: linkTypes infiniband selects nothing, and says why.
TEST(DiscoverOnSnapshotTest, WorkstationRoceIsNotInfiniband) {
  const cli::DiscoverReport rep = Discover("workstation");
  EXPECT_THAT(Selected(Resource(rep, "hca_shared")), ElementsAre("0000:06:00.0", "0000:06:00.1"));
  const cli::ResourceReport& ib = Resource(rep, "ib_only");
  EXPECT_TRUE(ib.pool.hcas.empty());
  const cli::ExcludedDevice* port0 = Excluded(ib, "0000:06:00.0");
  ASSERT_NE(port0, nullptr);
  EXPECT_EQ(port0->why.rule, "selectors.linkTypes");
}

// The SR-IOV host: the exclusive pool offers each VF by its PCI address, the PF is left out
// by isVF, and the topology-aware pool of PFs holds only the PF.
TEST(DiscoverOnSnapshotTest, VfsInTheExclusivePoolPfInTheOthers) {
  const cli::DiscoverReport rep = Discover("vfs");
  const cli::ResourceReport& vfs = Resource(rep, "vfs");
  EXPECT_THAT(Selected(vfs), ElementsAre("0000:03:00.2", "0000:03:00.3"));
  ASSERT_EQ(vfs.devices.size(), 2u);
  EXPECT_EQ(vfs.devices[0].id(), "0000:03:00.2");
  const cli::ExcludedDevice* pf = Excluded(vfs, "0000:03:00.0");
  ASSERT_NE(pf, nullptr);
  EXPECT_EQ(pf->why.rule, "selectors.isVF");
  EXPECT_EQ(pf->why.detail, "has false; wants true");
  EXPECT_THAT(Selected(Resource(rep, "hca_numa")), ElementsAre("0000:03:00.0"));
  EXPECT_THAT(Selected(Resource(rep, "hca_shared")),
              ElementsAre("0000:03:00.0", "0000:03:00.2", "0000:03:00.3"));
}

// `validate --against` on a snapshot: exit 0 when every resource selects something, 1 (with
// the resource and the first reason) when one would advertise nothing.
TEST(ValidateAgainstSnapshotTest, ExclusiveVfPoolNeedsVfs) {
  TempDir tmp;
  const std::string config = tmp.path() + "/config.json";
  std::ofstream(config)
      << R"({"configList": [{"resourceName": "vfs", "mode": "exclusive", "selectors": {"isVF": true}}]})";
  auto ok = RunHcashare(tmp, {"validate", config, "--against", CannedSnapshotPath("vfs")});
  EXPECT_EQ(ok.code, 0) << ok.output;
  auto empty =
      RunHcashare(tmp, {"validate", config, "--against", CannedSnapshotPath("two_socket")});
  EXPECT_EQ(empty.code, 1) << empty.output;
  EXPECT_THAT(empty.output, HasSubstr("rdma/vfs"));
  EXPECT_THAT(empty.output, HasSubstr("selectors.isVF"));
}

// The device plugin's discovery on the SR-IOV host: each VF knows its PF, its index and the
// PF's netdev; the PF counts its VFs.
TEST(DiscoveryOnSnapshotTest, VfsReportTheirPf) {
  const node::Inventory inv = node::Discover(LoadCanned("vfs"));
  ASSERT_EQ(inv.functions.size(), 3u);
  const node::PciFunction& pf = inv.functions[0];
  EXPECT_EQ(pf.address, "0000:03:00.0");
  EXPECT_FALSE(pf.is_vf);
  EXPECT_EQ(pf.num_vfs, 2);
  for (int i = 0; i < 2; ++i) {
    const node::PciFunction& vf = inv.functions[1 + i];
    EXPECT_TRUE(vf.is_vf) << vf.address;
    EXPECT_EQ(vf.pf_address, "0000:03:00.0");
    EXPECT_EQ(vf.vf_index, i);
    EXPECT_THAT(vf.pf_netdevs, ElementsAre("ens1f0np0"));
    EXPECT_EQ(vf.numa_node, 0);
  }
  EXPECT_EQ(inv.functions[2].address, "0000:03:00.3");
  EXPECT_THAT(inv.functions[2].netdevs, ElementsAre("ens1f0v1"));
}

// The CNI's VF resolution on the SR-IOV host: a VF resolves to its PF, index, netdev and
// RDMA device; a PF or a GPU is not a VF, and an absent address is NotFound.
TEST(ResolveVfOnSnapshotTest, VfPfAndAbsent) {
  const HostSnapshot snap = LoadCanned("vfs");
  auto vf = cni::ResolveVfIn(snap, "0000:03:00.3", /*is_aux=*/false);
  ASSERT_TRUE(vf.ok()) << vf.status().ToString();
  EXPECT_EQ(vf->pf_pci, "0000:03:00.0");
  EXPECT_EQ(vf->pf_netdev, "ens1f0np0");
  EXPECT_EQ(vf->vf_index, 1);
  EXPECT_EQ(vf->netdev, "ens1f0v1");
  EXPECT_THAT(vf->rdma_devices, ElementsAre("mlx5_3"));
  EXPECT_FALSE(vf->dpdk);
  EXPECT_FALSE(vf->virtual_rdma);
  EXPECT_EQ(cni::ResolveVfIn(snap, "0000:03:00.0", false).status().code(),
            StatusCode::kFailedPrecondition);
  EXPECT_EQ(cni::ResolveVfIn(snap, "0000:04:00.0", false).status().code(),
            StatusCode::kFailedPrecondition);
  EXPECT_EQ(cni::ResolveVfIn(snap, "0000:03:00.7", false).status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace hcashare
