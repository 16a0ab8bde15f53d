// Golden-output tests of `hcashare topo` on the canned hosts (tests/cli_fixtures.h): the
// table, JSON and dot renderings, the key matrix cells, and the same output from the CLI.
// Regenerate the golden files with HCASHARE_UPDATE_GOLDEN=1 (then review the diff).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

#include <nlohmann/json.hpp>

#include "common/host.h"
#include "tests/cli_fixtures.h"
#include "tests/test_util.h"
#include "topo/endpoints.h"
#include "topo/format.h"
#include "topo/report.h"

namespace hcashare::topo {
namespace {

using ::testing::HasSubstr;
using testing::RunHcashare;

std::string GoldenPath(const std::string& file) {
  return std::string(HCASHARE_GOLDEN_DIR) + "/" + file;
}

void ExpectGolden(const std::string& file, const std::string& actual) {
  if (std::getenv("HCASHARE_UPDATE_GOLDEN") != nullptr) {
    std::ofstream(GoldenPath(file)) << actual;
    return;
  }
  const std::string want = testing::ReadTextFile(GoldenPath(file));
  ASSERT_FALSE(want.empty()) << "missing golden file " << GoldenPath(file);
  EXPECT_EQ(actual, want) << "differs from " << file << " (HCASHARE_UPDATE_GOLDEN=1 rewrites it)";
}

// A canned host on disk with its report.
struct Fixture {
  TempDir tmp;
  std::string root = tmp.path() + "/host";
  TopoReport report;

  explicit Fixture(Status (*build)(fake::SimNode*)) {
    fake::SimNode node(root);
    Status st = build(&node);
    EXPECT_TRUE(st.ok()) << st.ToString();
    auto snap = ReadEndpoints(*NewRootedHost(root));
    EXPECT_TRUE(snap.ok()) << snap.status().ToString();
    if (snap.ok()) report = BuildReport(*snap);
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

TEST(TopoGoldenTest, TwoSocketCells) {
  Fixture f(testing::BuildTwoSocketHost);
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
}

TEST(TopoGoldenTest, WorkstationCells) {
  Fixture f(testing::BuildWorkstation);
  EXPECT_EQ(f.Cell("0000:01:00.0", "0000:02:00.0"), "PHB");  // two root ports
  EXPECT_EQ(f.Cell("0000:01:00.0", "0000:06:00.0"), "PHB");
  EXPECT_EQ(f.Cell("0000:06:00.0", "0000:06:00.1"), "PIX");  // two ports of one NIC
  EXPECT_EQ(f.report.devices[0].device.numa_node, -1);
  EXPECT_EQ(f.report.best_nics[0].nic_name, "mlx5_0");
}

TEST(TopoGoldenTest, VfCells) {
  Fixture f(testing::BuildVfHost);
  EXPECT_EQ(f.Cell("0000:03:00.0", "0000:03:00.2"), "PIX");  // a VF sits next to its PF
  EXPECT_EQ(f.Cell("0000:04:00.0", "0000:03:00.3"), "PIX");
  EXPECT_EQ(f.Cell("0000:05:00.0", "0000:03:00.2"), "PHB");
  EXPECT_EQ(f.report.best_nics[0].nic_name, "mlx5_0");  // the PF before its VFs
}

struct GoldenCase {
  const char* name;
  Status (*build)(fake::SimNode*);
};

// Names the case in test output.
void PrintTo(const GoldenCase& c, std::ostream* os) { *os << c.name; }

class TopoGoldenFileTest : public ::testing::TestWithParam<GoldenCase> {};

TEST_P(TopoGoldenFileTest, TableJsonDot) {
  Fixture f(GetParam().build);
  const std::string base = std::string("topo_") + GetParam().name;
  ExpectGolden(base + ".txt", FormatTable(f.report));
  ExpectGolden(base + ".json", ToJson(f.report).dump(2) + "\n");
  ExpectGolden(base + ".dot", FormatDot(f.report));
}

// The CLI prints exactly the library's output, in each format.
TEST_P(TopoGoldenFileTest, CliMatchesGolden) {
  Fixture f(GetParam().build);
  const std::string base = GoldenPath(std::string("topo_") + GetParam().name);
  auto table = RunHcashare(f.tmp, {"topo", "--host-root", f.root});
  EXPECT_EQ(table.code, 0);
  EXPECT_EQ(table.output, testing::ReadTextFile(base + ".txt"));
  auto json = RunHcashare(f.tmp, {"topo", "--json", "--host-root", f.root});
  EXPECT_EQ(json.code, 0);
  EXPECT_EQ(json.output, testing::ReadTextFile(base + ".json"));
  auto dot = RunHcashare(f.tmp, {"topo", "--format", "dot", "--host-root", f.root});
  EXPECT_EQ(dot.code, 0);
  EXPECT_EQ(dot.output, testing::ReadTextFile(base + ".dot"));
}

INSTANTIATE_TEST_SUITE_P(Hosts, TopoGoldenFileTest,
                         ::testing::Values(GoldenCase{"two_socket", testing::BuildTwoSocketHost},
                                           GoldenCase{"workstation", testing::BuildWorkstation},
                                           GoldenCase{"vfs", testing::BuildVfHost}),
                         [](const auto& info) { return std::string(info.param.name); });

// The JSON schema the issue fixes: devices with exactly these keys, matrix keyed by PCI.
TEST(TopoGoldenTest, JsonSchema) {
  Fixture f(testing::BuildTwoSocketHost);
  auto j = nlohmann::json::parse(ToJson(f.report).dump());
  ASSERT_TRUE(j["devices"].is_array());
  for (const auto& d : j["devices"]) {
    EXPECT_EQ(d.size(), 5u) << d.dump();
    for (const char* key : {"pci", "kind", "name", "numa", "cpus"}) {
      EXPECT_TRUE(d.contains(key)) << key;
    }
  }
  EXPECT_EQ(j["devices"][0]["name"], "GPU0");
  EXPECT_EQ(j["devices"][0]["kind"], "gpu");
  EXPECT_EQ(j["devices"][4]["name"], "mlx5_0");
  EXPECT_EQ(j["devices"][4]["kind"], "nic");
  EXPECT_EQ(j["matrix"][kGpu0][kMlx0], "PIX");
  EXPECT_EQ(j["matrix"][kGpu0][kGpu2], "SYS");
}

TEST(TopoCliTest, HelpAndBadFormat) {
  TempDir tmp;
  auto help = RunHcashare(tmp, {"topo", "--help"});
  EXPECT_EQ(help.code, 0);
  EXPECT_THAT(help.output, HasSubstr("--format"));
  EXPECT_THAT(help.output, HasSubstr("--json"));
  EXPECT_THAT(help.output, HasSubstr("--host-root"));
  auto bad = RunHcashare(tmp, {"topo", "--format", "xml"});
  EXPECT_NE(bad.code, 0);
  auto empty = RunHcashare(tmp, {"topo", "--host-root", tmp.path()});
  EXPECT_EQ(empty.code, 1) << empty.output;
  EXPECT_THAT(empty.output, HasSubstr("/sys/bus/pci/devices"));
}

}  // namespace
}  // namespace hcashare::topo
