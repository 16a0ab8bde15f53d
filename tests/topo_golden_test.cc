// Golden-output tests of `hcashare topo` on the canned snapshots (tests/canned_snapshots.h):
// the table, JSON and dot renderings, the key matrix cells, and the same output from the CLI
// with --snapshot. Topology is logic on the host model, so nothing here writes a fixture
// tree; snapshot_golden_test keeps the snapshots equal to what the trees read as.
// Regenerate the golden files with HCASHARE_UPDATE_GOLDEN=1 (then review the diff).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "common/temp_dir.h"
#include "tests/canned_snapshots.h"
#include "tests/cli_fixtures.h"
#include "tests/test_util.h"
#include "topo/endpoints.h"
#include "topo/format.h"
#include "topo/report.h"

namespace hcashare::topo {
namespace {

using testing::CannedHost;
using testing::CannedSnapshotPath;
using testing::ExpectGolden;
using testing::GoldenPath;
using ::testing::HasSubstr;
using testing::RunHcashare;

// The report of a canned snapshot.
struct Fixture {
  TopoReport report;

  explicit Fixture(const std::string& name) {
    auto endpoints = EndpointsOf(testing::LoadCanned(name));
    EXPECT_TRUE(endpoints.ok()) << name << ": " << endpoints.status().ToString();
    if (endpoints.ok()) report = BuildReport(*endpoints);
  }

  // The class between two PCI addresses, by name.
  std::string Cell(const std::string& a, const std::string& b) const {
    return PathTypeName(report.matrix.at(a).at(b));
  }
};

constexpr const char* kGpu0 = "0000:18:00.0";
constexpr const char* kGpu1 = "0000:1c:00.0";
constexpr const char* kGpu2 = "0000:9a:00.0";
constexpr const char* kGpu3 = "0000:b9:00.0";
constexpr const char* kMlx0 = "0000:19:00.0";
constexpr const char* kMlx1 = "0000:9b:00.0";
constexpr const char* kEno1 = "0000:37:00.0";

// The two-NUMA server: every class from PIX to SYS, and the best NIC of each GPU.
TEST(TopoGoldenTest, TwoSocketCells) {
  Fixture f("two_socket");
  EXPECT_EQ(f.Cell(kGpu0, kGpu0), "X");
  EXPECT_EQ(f.Cell(kGpu0, kMlx0), "PIX");  // one switch
  EXPECT_EQ(f.Cell(kGpu2, kMlx1), "PIX");
  EXPECT_EQ(f.Cell(kGpu1, kMlx0), "PXB");  // nested switch
  EXPECT_EQ(f.Cell(kGpu0, kGpu1), "PXB");
  EXPECT_EQ(f.Cell(kGpu0, kEno1), "NODE");  // other root complex, same socket
  EXPECT_EQ(f.Cell(kGpu3, kMlx1), "NODE");
  EXPECT_EQ(f.Cell(kGpu2, kGpu3), "NODE");
  EXPECT_EQ(f.Cell(kGpu0, kGpu2), "SYS");  // other socket
  EXPECT_EQ(f.Cell(kMlx0, kMlx1), "SYS");
  EXPECT_EQ(f.Cell(kMlx1, kGpu0), "SYS");
  ASSERT_EQ(f.report.best_nics.size(), 4u);
  EXPECT_EQ(f.report.best_nics[1].nic_name, "mlx5_0");
  EXPECT_EQ(f.report.best_nics[3].nic_name, "mlx5_1");
  EXPECT_EQ(f.report.best_nics[3].path, PathType::kNode);
  EXPECT_EQ(f.report.nccl_ib_hca, "=mlx5_0,mlx5_1");
  // ACS redirect on the NUMA 0 switch ports, off on NUMA 1's; GPU3's NIC is a root complex
  // away, where ACS does not apply.
  EXPECT_EQ(f.report.best_nics[0].acs, AcsState::kRedirect);
  EXPECT_EQ(f.report.best_nics[1].acs, AcsState::kRedirect);
  EXPECT_EQ(f.report.best_nics[2].acs, AcsState::kOff);
  EXPECT_EQ(f.report.best_nics[3].acs, AcsState::kNotApplicable);
  ASSERT_EQ(f.report.acs_paths.size(), 3u);
  EXPECT_EQ(f.report.acs_paths[1].gpu, kGpu1);
  EXPECT_EQ(
      f.report.acs_paths[1].bridges,
      (std::vector<std::string>{"0000:17:02.0", "0000:1a:00.0", "0000:1b:00.0", "0000:17:01.0"}));
  EXPECT_EQ(f.report.acs_paths[1].redirecting,
            (std::vector<std::string>{"0000:17:02.0", "0000:1b:00.0", "0000:17:01.0"}));
}

// The single-root workstation: root ports are PHB apart, NUMA is unknown.
TEST(TopoGoldenTest, WorkstationCells) {
  Fixture f("workstation");
  EXPECT_EQ(f.Cell("0000:01:00.0", "0000:02:00.0"), "PHB");  // two root ports
  EXPECT_EQ(f.Cell("0000:01:00.0", "0000:06:00.0"), "PHB");
  EXPECT_EQ(f.Cell("0000:06:00.0", "0000:06:00.1"), "PIX");  // two ports of one NIC
  EXPECT_EQ(f.report.devices[0].device.numa_node, -1);
  EXPECT_EQ(f.report.best_nics[0].nic_name, "mlx5_0");
}

// The SR-IOV host: VFs are placed by their PF, which is preferred over them.
TEST(TopoGoldenTest, VfCells) {
  Fixture f("vfs");
  EXPECT_EQ(f.Cell("0000:03:00.0", "0000:03:00.2"), "PIX");  // a VF sits next to its PF
  EXPECT_EQ(f.Cell("0000:04:00.0", "0000:03:00.3"), "PIX");
  EXPECT_EQ(f.Cell("0000:05:00.0", "0000:03:00.2"), "PHB");
  EXPECT_EQ(f.report.best_nics[0].nic_name, "mlx5_0");  // the PF before its VFs
  // Its switch ports' config space was read without privilege: ACS unknown, not off.
  EXPECT_EQ(f.report.best_nics[0].acs, AcsState::kUnknown);
  EXPECT_EQ(f.report.best_nics[1].acs, AcsState::kNotApplicable);  // PHB
}

class TopoGoldenFileTest : public ::testing::TestWithParam<CannedHost> {};

// The library's three renderings of each canned host equal its golden files.
TEST_P(TopoGoldenFileTest, TableJsonDot) {
  Fixture f(GetParam().name);
  const std::string base = std::string("topo_") + GetParam().name;
  ExpectGolden(base + ".txt", FormatTable(f.report));
  ExpectGolden(base + ".json", ToJson(f.report).dump(2) + "\n");
  ExpectGolden(base + ".dot", FormatDot(f.report));
}

// `hcashare topo --snapshot FILE` prints exactly the library's output, in each format.
TEST_P(TopoGoldenFileTest, CliOnSnapshotMatchesGolden) {
  TempDir tmp;
  const std::string snap = CannedSnapshotPath(GetParam().name);
  const std::string base = GoldenPath(std::string("topo_") + GetParam().name);
  auto table = RunHcashare(tmp, {"topo", "--snapshot", snap});
  EXPECT_EQ(table.code, 0);
  EXPECT_EQ(table.output, testing::ReadTextFile(base + ".txt"));
  auto json = RunHcashare(tmp, {"topo", "--json", "--snapshot", snap});
  EXPECT_EQ(json.code, 0);
  EXPECT_EQ(json.output, testing::ReadTextFile(base + ".json"));
  auto dot = RunHcashare(tmp, {"topo", "--format", "dot", "--snapshot", snap});
  EXPECT_EQ(dot.code, 0);
  EXPECT_EQ(dot.output, testing::ReadTextFile(base + ".dot"));
}

INSTANTIATE_TEST_SUITE_P(Hosts, TopoGoldenFileTest, ::testing::ValuesIn(testing::CannedHosts()),
                         [](const auto& info) { return std::string(info.param.name); });

// The JSON schema the issue fixes: devices with exactly these keys (`pcie_link` added by
// issue 17), matrix keyed by PCI.
TEST(TopoGoldenTest, JsonSchema) {
  Fixture f("two_socket");
  auto j = nlohmann::json::parse(ToJson(f.report).dump());
  ASSERT_TRUE(j["devices"].is_array());
  for (const auto& d : j["devices"]) {
    EXPECT_EQ(d.size(), 6u) << d.dump();
    for (const char* key : {"pci", "kind", "name", "numa", "cpus", "pcie_link"}) {
      EXPECT_TRUE(d.contains(key)) << key;
    }
  }
  EXPECT_EQ(j["devices"][0]["name"], "GPU0");
  EXPECT_EQ(j["devices"][0]["kind"], "gpu");
  EXPECT_EQ(j["devices"][4]["name"], "mlx5_0");
  EXPECT_EQ(j["devices"][4]["kind"], "nic");
  EXPECT_EQ(j["matrix"][kGpu0][kMlx0], "PIX");
  EXPECT_EQ(j["matrix"][kGpu0][kGpu2], "SYS");
  EXPECT_EQ(j["best_nics"][0]["acs"], "redirect");
  EXPECT_TRUE(j["best_nics"][3]["acs"].is_null());
  ASSERT_TRUE(j["acs_paths"].is_array());
  for (const auto& p : j["acs_paths"]) {
    EXPECT_EQ(p.size(), 7u) << p.dump();
    for (const char* key : {"gpu", "nic", "name", "acs", "bridges", "redirecting", "unreadable"}) {
      EXPECT_TRUE(p.contains(key)) << key;
    }
  }
}

// Help, a bad format, an empty host root and a missing snapshot file.
TEST(TopoCliTest, HelpAndBadFormat) {
  TempDir tmp;
  auto help = RunHcashare(tmp, {"topo", "--help"});
  EXPECT_EQ(help.code, 0);
  EXPECT_THAT(help.output, HasSubstr("--format"));
  EXPECT_THAT(help.output, HasSubstr("--json"));
  EXPECT_THAT(help.output, HasSubstr("--host-root"));
  EXPECT_THAT(help.output, HasSubstr("--snapshot"));
  auto bad = RunHcashare(tmp, {"topo", "--format", "xml"});
  EXPECT_NE(bad.code, 0);
  auto empty = RunHcashare(tmp, {"topo", "--host-root", tmp.path()});
  EXPECT_EQ(empty.code, 1) << empty.output;
  EXPECT_THAT(empty.output, HasSubstr("/sys/bus/pci/devices"));
  // A snapshot that cannot be loaded is an error naming the file, not an empty host.
  const std::string missing = tmp.path() + "/missing.json";
  auto no_file = RunHcashare(tmp, {"topo", "--snapshot", missing});
  EXPECT_EQ(no_file.code, 1) << no_file.output;
  EXPECT_THAT(no_file.output, HasSubstr(missing));
}

}  // namespace
}  // namespace hcashare::topo
