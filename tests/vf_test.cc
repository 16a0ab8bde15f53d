// The isVF/pfNames selectors, VF discovery from virtfn links, and the Multus device-info
// files of exclusive allocations.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "common/host.h"
#include "common/temp_dir.h"
#include "deviceplugin/device_info.h"
#include "node/discovery.h"
#include "node/selectors.h"
#include "testing/sim_node.h"
#include "tests/support/dp_functions.h"

namespace hcashare::dp {
namespace {

using namespace node::testfns;  // Hca, Exclusive, Pf, Vf
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::UnorderedElementsAre;

namespace fs = std::filesystem;

// ---------------------------------------------------------------------------------------
// Selectors: isVF and pfNames

// isVF true matches only VFs, false only non-VFs, unset both.
TEST(SelectorsVfTest, IsVf) {
  const node::PciFunction pf = Pf("0000:3b:00.0", "pf0");
  const node::PciFunction vf = Vf("0000:3b:00.2", "0000:3b:00.0", "pf0", 0);
  config::Selectors only_vf;
  only_vf.is_vf = true;
  config::Selectors no_vf;
  no_vf.is_vf = false;
  EXPECT_FALSE(node::Matches(only_vf, pf));
  EXPECT_TRUE(node::Matches(only_vf, vf));
  EXPECT_TRUE(node::Matches(no_vf, pf));
  EXPECT_FALSE(node::Matches(no_vf, vf));
  EXPECT_TRUE(node::Matches(config::Selectors{}, pf));
  EXPECT_TRUE(node::Matches(config::Selectors{}, vf));
}

// pfNames without a range matches the PF itself and all of its VFs.
TEST(SelectorsVfTest, PfNameWithoutRange) {
  config::Selectors sel;
  sel.pf_names = {{"pf0"}};
  EXPECT_TRUE(node::Matches(sel, Pf("0000:3b:00.0", "pf0")));
  for (int i = 0; i < 3; ++i) {
    EXPECT_TRUE(
        node::Matches(sel, Vf("0000:3b:00." + std::to_string(i + 2), "0000:3b:00.0", "pf0", i)))
        << i;
  }
  EXPECT_FALSE(node::Matches(sel, Pf("0000:3b:00.1", "pf1")));
  EXPECT_FALSE(node::Matches(sel, Vf("0000:3b:01.2", "0000:3b:00.1", "pf1", 0)));
}

// pfNames with a range matches only those VFs, never the PF.
TEST(SelectorsVfTest, PfNameWithRange) {
  config::Selectors sel;
  sel.pf_names = {{"pf0", 0, 1}};
  EXPECT_TRUE(node::Matches(sel, Vf("0000:3b:00.2", "0000:3b:00.0", "pf0", 0)));
  EXPECT_TRUE(node::Matches(sel, Vf("0000:3b:00.3", "0000:3b:00.0", "pf0", 1)));
  EXPECT_FALSE(node::Matches(sel, Vf("0000:3b:00.4", "0000:3b:00.0", "pf0", 2)));
  EXPECT_FALSE(node::Matches(sel, Pf("0000:3b:00.0", "pf0")));
  // A VF of unknown index is outside every range.
  EXPECT_FALSE(node::Matches(sel, Vf("0000:3b:00.5", "0000:3b:00.0", "pf0", -1)));
}

// A VF of another PF never matches, whatever its index.
TEST(SelectorsVfTest, OtherPfsVfNeverMatches) {
  for (const config::PfNameSelector& s :
       {config::PfNameSelector{"pf0"}, config::PfNameSelector{"pf0", 0, 1}}) {
    config::Selectors sel;
    sel.pf_names = {s};
    EXPECT_FALSE(node::Matches(sel, Vf("0000:3b:01.2", "0000:3b:00.1", "pf1", 0))) << s.first_vf;
    EXPECT_FALSE(node::Matches(sel, Vf("0000:3b:01.3", "0000:3b:00.1", "pf1", 1))) << s.first_vf;
  }
}

// pfNames entries are ORed; combined with isVF they are ANDed.
TEST(SelectorsVfTest, PfNamesOredAndIsVfAnded) {
  config::Selectors sel;
  sel.pf_names = {{"pf0", 2, 2}, {"pf1"}};
  EXPECT_TRUE(node::Matches(sel, Vf("0000:3b:00.4", "0000:3b:00.0", "pf0", 2)));
  EXPECT_FALSE(node::Matches(sel, Vf("0000:3b:00.2", "0000:3b:00.0", "pf0", 0)));
  EXPECT_TRUE(node::Matches(sel, Pf("0000:3b:00.1", "pf1")));
  sel.is_vf = true;
  EXPECT_FALSE(node::Matches(sel, Pf("0000:3b:00.1", "pf1")));
  EXPECT_TRUE(node::Matches(sel, Vf("0000:3b:01.2", "0000:3b:00.1", "pf1", 0)));
}

// ---------------------------------------------------------------------------------------
// Discovery of VFs

// Discovery sets is_vf, pf_address, pf_netdevs and vf_index from the PF's virtfnN links.
TEST(VfDiscoveryTest, VfIndexFromVirtfnLinks) {
  TempDir tmp;
  ASSERT_FALSE(tmp.path().empty());
  fake::SimNode sim(tmp.path());
  ASSERT_TRUE(sim.AddPciFunction(fake::SimNode::IbHca("0000:3b:00.0", "ib0", "mlx5_0", 1)).ok());
  for (int i = 0; i < 3; ++i) {
    fake::SimPciFunction vf =
        fake::SimNode::IbHca("0000:3b:00." + std::to_string(i + 2), "ib0v" + std::to_string(i),
                             "mlx5_" + std::to_string(i + 1), 1);
    vf.device = "101c";
    vf.physfn = "0000:3b:00.0";
    ASSERT_TRUE(sim.AddPciFunction(vf).ok()) << i;
  }
  auto host = NewRootedHost(tmp.path());
  node::Inventory inv = node::Discoverer(*host).Scan();
  ASSERT_THAT(Addresses(inv.functions),
              ElementsAre("0000:3b:00.0", "0000:3b:00.2", "0000:3b:00.3", "0000:3b:00.4"));
  const node::PciFunction& pf = inv.functions[0];
  EXPECT_FALSE(pf.is_vf);
  EXPECT_EQ(pf.vf_index, -1);
  EXPECT_EQ(pf.pf_address, "");
  EXPECT_THAT(pf.pf_netdevs, ElementsAre("ib0"));
  for (int i = 0; i < 3; ++i) {
    const node::PciFunction& vf = inv.functions[static_cast<size_t>(i + 1)];
    EXPECT_TRUE(vf.is_vf) << vf.address;
    EXPECT_EQ(vf.pf_address, "0000:3b:00.0") << vf.address;
    EXPECT_EQ(vf.vf_index, i) << vf.address;
    EXPECT_THAT(vf.pf_netdevs, ElementsAre("ib0")) << vf.address;
    EXPECT_THAT(vf.netdevs, ElementsAre("ib0v" + std::to_string(i))) << vf.address;
    EXPECT_EQ(vf.numa_node, 1) << vf.address;
  }

  // The discovered VFs drive the pfNames range selector.
  config::Selectors sel;
  sel.pf_names = {{"ib0", 1, 2}};
  std::vector<std::string> matched;
  for (const auto& f : inv.functions) {
    if (node::Matches(sel, f)) matched.push_back(f.address);
  }
  EXPECT_THAT(matched, ElementsAre("0000:3b:00.3", "0000:3b:00.4"));
}

// ---------------------------------------------------------------------------------------
// Multus device-info files

// The file name is "<prefix>-<name>-<id>-device.json".
TEST(DeviceInfoTest, FileName) {
  EXPECT_EQ(DeviceInfoFileName(Exclusive("rdma", "hca_vfs"), "0000:3b:00.2"),
            "rdma-hca_vfs-0000:3b:00.2-device.json");
  EXPECT_EQ(DeviceInfoFileName(Exclusive("nvidia.com", "hca_vfs"), "0000:3b:00.2"),
            "nvidia.com-hca_vfs-0000:3b:00.2-device.json");
}

// A VF's JSON: type pci, version 1.1.0, its address, RDMA device and PF address.
TEST(DeviceInfoTest, VfJson) {
  const node::PciFunction vf = Vf("0000:3b:00.2", "0000:3b:00.0", "pf0", 0);
  const auto doc = nlohmann::json::parse(DeviceInfoJson(vf), nullptr, false);
  ASSERT_TRUE(doc.is_object()) << DeviceInfoJson(vf);
  EXPECT_EQ(doc.at("type"), "pci");
  EXPECT_EQ(doc.at("version"), "1.1.0");
  EXPECT_EQ(doc.at("pci").at("pci-address"), "0000:3b:00.2");
  EXPECT_EQ(doc.at("pci").at("rdma-device"), "mlx5_2");
  EXPECT_EQ(doc.at("pci").at("pf-pci-address"), "0000:3b:00.0");
  EXPECT_EQ(doc.size(), 3u);
  EXPECT_EQ(doc.at("pci").size(), 3u);
}

// A PF's JSON has no pf-pci-address.
TEST(DeviceInfoTest, PfJsonHasNoPfAddress) {
  const auto doc = nlohmann::json::parse(DeviceInfoJson(Pf("0000:3b:00.0", "pf0")), nullptr, false);
  ASSERT_TRUE(doc.is_object());
  EXPECT_EQ(doc.at("pci").at("pci-address"), "0000:3b:00.0");
  EXPECT_EQ(doc.at("pci").at("rdma-device"), "mlx5_0");
  EXPECT_FALSE(doc.at("pci").contains("pf-pci-address"));
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Writing into a directory that does not exist yet creates it, writes one valid JSON file
// per function and leaves no temporary files.
TEST(DeviceInfoTest, WriteCreatesDirAndFiles) {
  TempDir tmp;
  ASSERT_FALSE(tmp.path().empty());
  const std::string dir = tmp.path() + "/devinfo/dp";
  ASSERT_FALSE(fs::exists(dir));
  const config::ResourceConfig rc = Exclusive("rdma", "hca_vfs");
  const node::PciFunction vf0 = Vf("0000:3b:00.2", "0000:3b:00.0", "pf0", 0);
  const node::PciFunction vf1 = Vf("0000:3b:00.3", "0000:3b:00.0", "pf0", 1);
  Status st = WriteDeviceInfoFiles(dir, rc, {&vf0, &vf1});
  ASSERT_TRUE(st.ok()) << st.ToString();
  ASSERT_TRUE(fs::is_directory(dir));

  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  EXPECT_THAT(names, UnorderedElementsAre("rdma-hca_vfs-0000:3b:00.2-device.json",
                                          "rdma-hca_vfs-0000:3b:00.3-device.json"));
  for (const auto& n : names) EXPECT_EQ(n.find(".tmp."), std::string::npos) << n;

  for (const node::PciFunction* fn : {&vf0, &vf1}) {
    const std::string body = Slurp(dir + "/" + DeviceInfoFileName(rc, fn->address));
    EXPECT_EQ(body, DeviceInfoJson(*fn)) << fn->address;
    const auto doc = nlohmann::json::parse(body, nullptr, false);
    ASSERT_TRUE(doc.is_object()) << body;
    EXPECT_EQ(doc.at("pci").at("pci-address"), fn->address);
    EXPECT_EQ(doc.at("pci").at("pf-pci-address"), "0000:3b:00.0");
  }

  // Rewriting replaces the files in place.
  st = WriteDeviceInfoFiles(dir, rc, {&vf0});
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(std::distance(fs::directory_iterator(dir), fs::directory_iterator()), 2);
}

// A directory path below a regular file is an error, not a crash.
TEST(DeviceInfoTest, DirUnderRegularFileFails) {
  TempDir tmp;
  ASSERT_FALSE(tmp.path().empty());
  const std::string file = tmp.path() + "/plain";
  std::ofstream(file) << "x";
  const node::PciFunction vf = Vf("0000:3b:00.2", "0000:3b:00.0", "pf0", 0);
  Status st = WriteDeviceInfoFiles(file + "/sub", Exclusive(), {&vf});
  EXPECT_FALSE(st.ok());
  EXPECT_THAT(st.message(), HasSubstr(file + "/sub"));
  // Nothing was created next to the file.
  EXPECT_EQ(std::distance(fs::directory_iterator(tmp.path()), fs::directory_iterator()), 1);
}

}  // namespace
}  // namespace hcashare::dp
