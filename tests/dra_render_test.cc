// The DRA driver's renderer (issue 27) as a pure function on host snapshots: golden
// ResourceSlices on the canned hosts (tests/golden/dra_*.json, also what `hcashare discover
// --dra` prints), device names as DNS labels, the API's per-device limit, refused devices,
// and the done-when of the issue: on the two-socket host each HCA's pcieRoot and numaNode
// are what `topo` reports, so a GPU that topo puts PIX/PXB to an HCA shares its pcieRoot.
// HCASHARE_UPDATE_GOLDEN=1 rewrites the golden files (review the diff).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "common/host.h"
#include "common/temp_dir.h"
#include "config/config.h"
#include "config/names.h"
#include "dra/devices.h"
#include "dra/render.h"
#include "dra/slices.h"
#include "hostfacts/reader.h"
#include "node/discovery.h"
#include "testing/resource_slice_schema.h"
#include "testing/sim_node.h"
#include "tests/canned_snapshots.h"
#include "tests/cli_fixtures.h"
#include "tests/test_util.h"
#include "topo/endpoints.h"
#include "topo/paths.h"
#include "topo/report.h"

namespace hcashare::dra {
namespace {

using hostfacts::HostSnapshot;
using nlohmann::json;
using testing::CannedHost;
using ::testing::ElementsAre;
using testing::ExpectGolden;
using ::testing::HasSubstr;

// Every Mellanox function, one device each, through DRA.
constexpr const char* kExclusive = R"({"configList": [
  {"resourceName": "hca_dra", "resourcePrefix": "hcashare.io", "mode": "exclusive",
   "api": "dra", "selectors": {"vendors": ["15b3"]}}]})";
// Every Mellanox HCA shared by 100 claims, numaNode in the list form.
constexpr const char* kSharedList = R"({"draNumaNode": "list", "configList": [
  {"resourceName": "hca_shared", "rdmaHcaMax": 100, "api": "dra",
   "selectors": {"vendors": ["15b3"]}}]})";

config::PluginConfig Parse(const std::string& text) {
  auto out = config::ParseConfig(text);
  EXPECT_TRUE(out.ok()) << config::FormatIssues(out);
  return out.config.value_or(config::PluginConfig{});
}

DraInventory Select(const std::string& config, const HostSnapshot& snap) {
  return SelectDraDevices(Parse(config), node::Discover(snap), snap);
}

PoolContent Render(const std::string& config, const HostSnapshot& snap) {
  const config::PluginConfig cfg = Parse(config);
  return RenderPool(SelectDraDevices(cfg, node::Discover(snap), snap), cfg.dra_driver, "node-a",
                    RenderOptionsOf(cfg));
}

// The text `hcashare discover --dra` prints for `pool`.
std::string SlicesText(const PoolContent& pool) {
  return json(SliceObjects(pool, SliceHeader{ApiVersion::kV1, "", 1})).dump(2) + "\n";
}

// Every device's name is a DNS label and it has at most 32 attributes and capacities.
void ExpectWithinApiLimits(const PoolContent& pool) {
  std::set<std::string> names;
  for (const json& d : pool.devices) {
    const std::string name = d.at("name");
    EXPECT_EQ(config::DnsLabelProblem(name), "") << name;
    EXPECT_TRUE(names.insert(name).second) << "duplicate " << name;
    const size_t n =
        d.at("attributes").size() + (d.contains("capacity") ? d["capacity"].size() : 0);
    EXPECT_LE(n, kMaxAttributesAndCapacities) << name;
    for (const auto& [key, value] : d.at("attributes").items()) {
      if (value.contains("string")) {
        EXPECT_LE(value["string"].get<std::string>().size(), kMaxAttributeStringLength) << key;
      }
    }
  }
}

class DraGoldenTest : public ::testing::TestWithParam<CannedHost> {};

TEST_P(DraGoldenTest, ExclusiveSlices) {
  const PoolContent pool = Render(kExclusive, testing::LoadCanned(GetParam().name));
  ExpectWithinApiLimits(pool);
  ExpectGolden(std::string("dra_") + GetParam().name + ".json", SlicesText(pool));
}

// Every slice the renderer makes on the canned hosts validates against the API server's
// schema and rules of each version (the list form of numaNode: v1 with list attributes).
TEST_P(DraGoldenTest, SlicesValidateAgainstTheSchemaOfEachVersion) {
  const HostSnapshot snap = testing::LoadCanned(GetParam().name);
  const std::string shared_scalar = R"({"configList": [{"resourceName": "s", "rdmaHcaMax": 7,
      "api": "dra", "selectors": {"vendors": ["15b3"]}}]})";
  for (const std::string& config : {std::string(kExclusive), shared_scalar}) {
    const PoolContent pool = Render(config, snap);
    ASSERT_FALSE(pool.devices.empty()) << config;
    for (ApiVersion v : {ApiVersion::kV1, ApiVersion::kV1beta2, ApiVersion::kV1beta1}) {
      for (const json& slice : SliceObjects(pool, SliceHeader{v, "uid-1", 3})) {
        EXPECT_THAT(testing::ValidateResourceSlice(slice), ::testing::IsEmpty())
            << ApiVersionName(v) << "\n"
            << slice.dump(1);
      }
    }
  }
  for (const json& slice : SliceObjects(Render(kSharedList, snap), SliceHeader{})) {
    EXPECT_THAT(
        testing::ValidateResourceSlice(slice, testing::SliceSchemaExtension::kListAttributes),
        ::testing::IsEmpty())
        << slice.dump(1);
  }
}

INSTANTIATE_TEST_SUITE_P(Canned, DraGoldenTest, ::testing::ValuesIn(testing::CannedHosts()),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(DraRenderTest, SharedSlicesWithListNumaNodes) {
  const PoolContent pool = Render(kSharedList, testing::LoadCanned("two_socket"));
  ExpectWithinApiLimits(pool);
  ASSERT_EQ(pool.devices.size(), 2u);
  const json& d = pool.devices[0];
  EXPECT_EQ(d["name"], "shared-0000-19-00-0");
  EXPECT_EQ(d["allowMultipleAllocations"], true);
  EXPECT_EQ(d["capacity"]["shares"]["value"], "100");
  EXPECT_EQ(d["capacity"]["shares"]["requestPolicy"]["default"], "1");
  EXPECT_EQ(d["attributes"]["resource.kubernetes.io/numaNode"], json({{"ints", {0}}}));
  EXPECT_EQ(pool.devices[1]["attributes"]["resource.kubernetes.io/numaNode"],
            json({{"ints", {1}}}));
  // List attributes halve the devices per slice (dra/slices.h).
  ExpectGolden("dra_two_socket_shared.json", SlicesText(pool));
}

// The attributes of one exclusive HCA, value by value.
TEST(DraRenderTest, AttributesOfAnHca) {
  const DraInventory inv = Select(kExclusive, testing::LoadCanned("two_socket"));
  const DraDevice* d = inv.Find("pci-0000-9b-00-0");
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->pcie_root, "pci0000:97");
  EXPECT_EQ(d->fw_version, "16.35.2000");
  EXPECT_EQ(d->port_state, "ACTIVE");
  EXPECT_EQ(d->port_rate_gbps, 100);
  EXPECT_EQ(inv.Find("pci-0000-00-00-0"), nullptr);
  const json a = RenderDevice(*d, {})["attributes"];
  EXPECT_EQ(a["resource.kubernetes.io/pcieRoot"], json({{"string", "pci0000:97"}}));
  EXPECT_EQ(a["resource.kubernetes.io/pciBusID"], json({{"string", "0000:9b:00.0"}}));
  EXPECT_EQ(a["resource.kubernetes.io/numaNode"], json({{"int", 1}}));
  EXPECT_EQ(a["resourceName"], json({{"string", "hcashare.io/hca_dra"}}));
  EXPECT_EQ(a["rdmaDevice"], json({{"string", "mlx5_1"}}));
  EXPECT_EQ(a["netdev"], json({{"string", "ib1"}}));
  EXPECT_EQ(a["linkType"], json({{"string", "infiniband"}}));
  EXPECT_EQ(a["pciVendor"], json({{"string", "15b3"}}));
  EXPECT_EQ(a["isVF"], json({{"bool", false}}));
  EXPECT_FALSE(a.contains("pfPciAddress"));
  EXPECT_EQ(a["portRateGbps"], json({{"int", 100}}));
  EXPECT_EQ(a["healthy"], json({{"bool", true}}));
  EXPECT_EQ(a["k8s.cni.cncf.io/deviceID"], json({{"string", "0000:9b:00.0"}}));
  EXPECT_EQ(a["k8s.cni.cncf.io/resourceName"], json({{"string", "hcashare.io/hca_dra"}}));
  EXPECT_FALSE(RenderDevice(*d, {}).contains("capacity"));
}

// NUMA -1 (the workstation) leaves numaNode out; the PF with VFs is refused, its VFs are
// offered with their PF's address.
TEST(DraRenderTest, UnknownNumaOmittedAndPfWithVfsRefused) {
  const PoolContent ws = Render(kExclusive, testing::LoadCanned("workstation"));
  ASSERT_EQ(ws.devices.size(), 2u);
  EXPECT_FALSE(ws.devices[0]["attributes"].contains("resource.kubernetes.io/numaNode"));

  const DraInventory inv = Select(kExclusive, testing::LoadCanned("vfs"));
  std::vector<std::string> names;
  for (const auto& d : inv.devices) names.push_back(d.name);
  EXPECT_THAT(names, ElementsAre("pci-0000-03-00-2", "pci-0000-03-00-3"));
  ASSERT_EQ(inv.refused.size(), 1u);
  EXPECT_EQ(inv.refused[0].address, "0000:03:00.0");
  EXPECT_EQ(inv.refused[0].resource, "hcashare.io/hca_dra");
  EXPECT_THAT(inv.refused[0].reason, HasSubstr("allowPfWithVfs"));
  const json a = RenderDevice(inv.devices[0], {})["attributes"];
  EXPECT_EQ(a["isVF"], json({{"bool", true}}));
  EXPECT_EQ(a["pfPciAddress"], json({{"string", "0000:03:00.0"}}));
  EXPECT_EQ(a["linkType"], json({{"string", "ethernet"}}));
  // With the opt-in the PF is a device too.
  const DraInventory opted = Select(R"({"configList": [{"resourceName": "x", "mode": "exclusive",
      "api": "dra", "allowPfWithVfs": true, "selectors": {"vendors": ["15b3"]}}]})",
                                    testing::LoadCanned("vfs"));
  EXPECT_NE(opted.Find("pci-0000-03-00-0"), nullptr);
  EXPECT_TRUE(opted.refused.empty());
}

// A VF handed to a pod whose RDMA device moved into the pod's namespace is gone from the
// host's functions while its PCI function is present: it stays published (in use) with its
// last details, as the device plugin's exclusive pools keep it; not once its function is
// gone, nor when its resource changed.
TEST(DraRenderTest, AnExclusiveDeviceInUseStaysPublished) {
  const HostSnapshot snap = testing::LoadCanned("vfs");
  const config::PluginConfig cfg = Parse(kExclusive);
  const node::Inventory all = node::Discover(snap);
  const DraInventory before = SelectDraDevices(cfg, all, snap);
  ASSERT_NE(before.Find("pci-0000-03-00-2"), nullptr);

  node::Inventory moved = all;  // 03:00.2's RDMA device is in a pod: not a usable function
  moved.functions.erase(
      std::remove_if(moved.functions.begin(), moved.functions.end(),
                     [](const node::PciFunction& f) { return f.address == "0000:03:00.2"; }),
      moved.functions.end());
  DraInventory next = SelectDraDevices(cfg, moved, snap);
  EXPECT_EQ(next.Find("pci-0000-03-00-2"), nullptr);
  KeepDevicesInUse(before, cfg, moved, &next);
  ASSERT_NE(next.Find("pci-0000-03-00-2"), nullptr);
  EXPECT_EQ(next.devices, before.devices);  // same details, in name order

  node::Inventory unplugged = moved;  // the function itself is gone
  unplugged.present.erase("0000:03:00.2");
  DraInventory gone = SelectDraDevices(cfg, unplugged, snap);
  KeepDevicesInUse(before, cfg, unplugged, &gone);
  EXPECT_EQ(gone.Find("pci-0000-03-00-2"), nullptr);

  const config::PluginConfig other = Parse(R"({"configList": [{"resourceName": "hca_dra",
      "resourcePrefix": "hcashare.io", "mode": "exclusive", "api": "dra",
      "selectors": {"vendors": ["15b3"], "isVF": true}}]})");
  DraInventory changed = SelectDraDevices(other, moved, snap);
  KeepDevicesInUse(before, other, moved, &changed);
  EXPECT_EQ(changed.Find("pci-0000-03-00-2"), nullptr);
}

// Issue 33: after a restart there is no previous view, and a device whose RDMA device sits
// in a pod's namespace dropped out of the slice. The checkpoint's held devices bring it
// back, described by what the host still shows of the function; not once the function is
// gone, its resource changed, or the name is not the one the function gets.
TEST(DraRenderTest, AHeldDeviceIsPublishedAfterARestart) {
  const HostSnapshot snap = testing::LoadCanned("vfs");
  const config::PluginConfig cfg = Parse(kExclusive);
  const node::Inventory all = node::Discover(snap);
  const DraInventory before = SelectDraDevices(cfg, all, snap);
  const DraDevice* was = before.Find("pci-0000-03-00-2");
  ASSERT_NE(was, nullptr);
  node::Inventory moved = all;
  moved.functions.erase(
      std::remove_if(moved.functions.begin(), moved.functions.end(),
                     [](const node::PciFunction& f) { return f.address == "0000:03:00.2"; }),
      moved.functions.end());
  const std::vector<HeldDevice> held = {
      {"pci-0000-03-00-2", "0000:03:00.2", was->resource.FullName(), {was->fn.rdma[0].name}}};

  DraInventory next = SelectDraDevices(cfg, moved, snap);
  KeepDevicesInUse(DraInventory(), cfg, moved, &next);  // a fresh start: nothing kept
  ASSERT_EQ(next.Find("pci-0000-03-00-2"), nullptr);
  KeepHeldDevices(held, cfg, moved, snap, &next);
  const DraDevice* back = next.Find("pci-0000-03-00-2");
  ASSERT_NE(back, nullptr);
  const json a = RenderDevice(*back, {})["attributes"];
  const json b = RenderDevice(*was, {})["attributes"];
  for (const char* key : {"resource.kubernetes.io/pcieRoot", "resource.kubernetes.io/numaNode",
                          "resource.kubernetes.io/pciBusID", "k8s.cni.cncf.io/deviceID",
                          "k8s.cni.cncf.io/resourceName", "rdmaDevice", "pciVendor", "pciDevice",
                          "isVF", "pfPciAddress", "healthy"}) {
    ASSERT_TRUE(b.contains(key)) << key << " is not an attribute: " << b.dump();
    EXPECT_EQ(a.value(key, json()), b.at(key)) << key;
  }
  EXPECT_TRUE(
      std::is_sorted(next.devices.begin(), next.devices.end(),
                     [](const DraDevice& x, const DraDevice& y) { return x.name < y.name; }));
  // Held twice (two claims of one device): published once.
  DraInventory twice = SelectDraDevices(cfg, moved, snap);
  KeepHeldDevices({held[0], held[0]}, cfg, moved, snap, &twice);
  EXPECT_EQ(twice.devices.size(), next.devices.size());

  // Its function gone while a claim holds it: kept, gone (tainted NoExecute below), so that
  // the pods holding it are moved rather than wait on a device that will not come back.
  node::Inventory unplugged = moved;
  unplugged.present.erase("0000:03:00.2");
  HostSnapshot without = snap;
  without.pci.erase(
      std::remove_if(without.pci.begin(), without.pci.end(),
                     [](const hostfacts::PciFunction& f) { return f.address == "0000:03:00.2"; }),
      without.pci.end());
  DraInventory gone = SelectDraDevices(cfg, unplugged, without);
  KeepHeldDevices(held, cfg, unplugged, without, &gone);
  const DraDevice* lost = gone.Find("pci-0000-03-00-2");
  ASSERT_NE(lost, nullptr);
  EXPECT_TRUE(lost->fn.gone);
  EXPECT_FALSE(lost->fn.healthy);
  EXPECT_EQ(RenderDevice(*lost, {})["attributes"]["healthy"], json({{"bool", false}}));
  const config::PluginConfig other = Parse(R"({"configList": [{"resourceName": "other",
      "mode": "exclusive", "api": "dra", "selectors": {"vendors": ["15b3"], "isVF": true}}]})");
  DraInventory changed = SelectDraDevices(other, moved, snap);
  KeepHeldDevices(held, other, moved, snap, &changed);
  EXPECT_EQ(changed.Find("pci-0000-03-00-2"), nullptr);
  DraInventory renamed = SelectDraDevices(cfg, moved, snap);
  KeepHeldDevices({{"pci-0000-03-00-9", "0000:03:00.2", held[0].resource, {}}}, cfg, moved, snap,
                  &renamed);
  EXPECT_EQ(renamed.Find("pci-0000-03-00-9"), nullptr);
  // Another kind of function in its slot (hot-swapped) is not the held device.
  HostSnapshot swapped = snap;
  for (auto& f : swapped.pci) {
    if (f.address == "0000:03:00.2") f.class_code = 0x030000;  // a display controller
  }
  DraInventory replaced = SelectDraDevices(cfg, moved, swapped);
  KeepHeldDevices(held, cfg, moved, swapped, &replaced);
  EXPECT_EQ(replaced.Find("pci-0000-03-00-2"), nullptr);
}

// Issue 33: unhealthy devices were still handed out. An unhealthy device is tainted
// NoSchedule, a vanished one NoExecute, each from the time it first was so (kept across
// views, restarted when the effect changes); a healthy one has no taint. The keys are the
// driver's.
TEST(DraRenderTest, UnhealthyAndVanishedDevicesAreTainted) {
  const HostSnapshot snap = testing::LoadCanned("vfs");
  const config::PluginConfig cfg = Parse(kExclusive);
  DraInventory inv = SelectDraDevices(cfg, node::Discover(snap), snap);
  ASSERT_GE(inv.devices.size(), 2u);
  TaintTimes times;
  MarkTaints(&inv, &times, 1000);
  for (const DraDevice& d : inv.devices) {
    EXPECT_EQ(d.taint_effect, "");
    EXPECT_FALSE(RenderDevice(d, {}).contains("taints"));
  }
  inv.devices[0].fn.healthy = false;
  MarkTaints(&inv, &times, 2000);
  EXPECT_EQ(inv.devices[0].taint_effect, "NoSchedule");
  EXPECT_EQ(inv.devices[0].taint_since, 2000);
  MarkTaints(&inv, &times, 3000);  // still unhealthy: the time it became so
  EXPECT_EQ(inv.devices[0].taint_since, 2000);
  RenderOptions options;
  options.driver = "rdma.example.com";
  EXPECT_EQ(RenderDevice(inv.devices[0], options)["taints"],
            json::parse(R"([{"key": "rdma.example.com/unhealthy", "effect": "NoSchedule",
                             "timeAdded": "1970-01-01T00:33:20Z"}])"));
  inv.devices[0].fn.gone = true;
  MarkTaints(&inv, &times, 4000);
  EXPECT_EQ(inv.devices[0].taint_effect, "NoExecute");
  EXPECT_EQ(inv.devices[0].taint_since, 4000);
  EXPECT_EQ(RenderDevice(inv.devices[0], options)["taints"][0]["key"], "rdma.example.com/gone");
  inv.devices[0].fn.gone = false;
  inv.devices[0].fn.healthy = true;
  MarkTaints(&inv, &times, 5000);
  EXPECT_EQ(inv.devices[0].taint_effect, "");
  EXPECT_TRUE(times.empty());
  // The config's driver names the keys.
  EXPECT_EQ(RenderOptionsOf(Parse(R"({"draDriver": "rdma.example.com", "configList": [
      {"resourceName": "a", "mode": "exclusive", "api": "dra",
       "selectors": {"vendors": ["15b3"]}}]})"))
                .driver,
            "rdma.example.com");
}

// Within DRA the first resource that selects a function owns it; a later one lists it as
// refused, naming the owner. Device-plugin resources are not DRA devices.
TEST(DraRenderTest, FirstDraResourceOwnsAFunction) {
  const DraInventory inv = Select(R"({"configList": [
    {"resourceName": "dp", "rdmaHcaMax": 5, "selectors": {"vendors": ["15b3"]}},
    {"resourceName": "one", "mode": "exclusive", "api": "dra",
     "selectors": {"rdmaDevices": ["mlx5_1"]}},
    {"resourceName": "all", "rdmaHcaMax": 3, "api": "dra", "selectors": {"vendors": ["15b3"]}}]})",
                                  testing::LoadCanned("two_socket"));
  std::vector<std::string> names;
  for (const auto& d : inv.devices) names.push_back(d.name + " " + d.resource.FullName());
  EXPECT_THAT(names, ElementsAre("pci-0000-9b-00-0 rdma/one", "shared-0000-19-00-0 rdma/all"));
  ASSERT_EQ(inv.refused.size(), 1u);
  EXPECT_EQ(inv.refused[0],
            (DraRefusal{"0000:9b:00.0", "rdma/all", "offered through DRA by resource rdma/one"}));
}

TEST(DraRenderTest, SharedRefusedInExclusiveNetnsMode) {
  HostSnapshot snap = testing::LoadCanned("two_socket");
  snap.rdma_netns_mode = "exclusive";
  const DraInventory shared = Select(kSharedList, snap);
  EXPECT_TRUE(shared.devices.empty());
  ASSERT_EQ(shared.refused.size(), 2u);
  EXPECT_THAT(shared.refused[0].reason, HasSubstr("RDMA netns mode is exclusive"));
  EXPECT_EQ(Select(kExclusive, snap).devices.size(), 2u);
}

TEST(DraRenderTest, PcieRootOfPaths) {
  EXPECT_EQ(PcieRootOf("/sys/devices/pci0000:3a/0000:3a:00.0/0000:3b:00.0"), "pci0000:3a");
  EXPECT_EQ(PcieRootOf("/sys/devices/pci0000:00/0000:00:0e.5/pci10000:e0/10000:e0:01.0"),
            "pci0000:00");
  EXPECT_EQ(PcieRootOf("/sys/devices/virtual/infiniband/rxe0"), "");
  EXPECT_EQ(PcieRootOf("/sys/devices/pci0000:3a"), "pci0000:3a");
  EXPECT_EQ(PcieRootOf(""), "");
  EXPECT_EQ(PcieRootOf("/sys/bus/pci/devices/0000:3b:00.0"), "");
}

// Scalable functions and virtual RDMA devices, read from a fixture tree: their names, the
// SF's pcieRoot (its PF's), no pciBusID for either; names that are no DNS label, or that
// two devices would share, are refused.
TEST(DraRenderTest, ScalableFunctionsAndVirtualDevices) {
  TempDir tmp;
  fake::SimNode node(tmp.path() + "/host");
  fake::SimPciBridge root;
  root.address = "0000:3a:00.0";
  root.host_bridge = "pci0000:3a";
  ASSERT_TRUE(node.AddPciBridge(root).ok());
  fake::SimPciFunction pf;
  pf.address = "0000:3b:00.0";
  pf.netdevs = {"enp59s0f0"};
  pf.rdma_device = "mlx5_0";
  pf.parent_bridge = "0000:3a:00.0";
  ASSERT_TRUE(node.AddPciFunction(pf).ok());
  fake::SimSubFunction sf;
  sf.name = "mlx5_core.sf.4";
  sf.parent = pf.address;
  sf.sfnum = 4;
  sf.netdevs = {"enp59s0f0s4"};
  sf.rdma_device = "mlx5_4";
  ASSERT_TRUE(node.AddSubFunction(sf).ok());
  ASSERT_TRUE(node.AddVirtualRdma({"rxe0", "veth0", ""}).ok());
  ASSERT_TRUE(node.AddVirtualRdma({"rxe_1", "veth1", ""}).ok());
  ASSERT_TRUE(node.AddVirtualRdma({"rxe-1", "veth2", ""}).ok());
  ASSERT_TRUE(node.AddVirtualRdma({"rxe_", "veth3", ""}).ok());
  const std::unique_ptr<Host> host = NewRootedHost(node.root());
  hostfacts::ReadOptions opts;
  opts.all_functions = false;  // as the daemon's scan reads
  const HostSnapshot snap = hostfacts::ReadHostSnapshot(*host, opts);

  const DraInventory inv = Select(R"({"configList": [{"resourceName": "all", "mode": "exclusive",
      "api": "dra", "selectors": {"rdmaDevices": ["mlx5_0", "mlx5_4", "rxe0", "rxe_1", "rxe-1",
      "rxe_"]}}]})",
                                  snap);
  std::vector<std::string> names;
  for (const auto& d : inv.devices) names.push_back(d.name);
  EXPECT_THAT(names,
              ElementsAre("pci-0000-3b-00-0", "rdma-rxe-1", "rdma-rxe0", "sf-mlx5-core-sf-4"));
  EXPECT_EQ(inv.Find("rdma-rxe-1")->fn.address, "rxe-1");
  ASSERT_EQ(inv.refused.size(), 2u);
  EXPECT_EQ(inv.refused[0].address, "rxe_");
  EXPECT_THAT(inv.refused[0].reason, HasSubstr("is not a DNS label"));
  EXPECT_EQ(inv.refused[1].address, "rxe_1");
  EXPECT_THAT(inv.refused[1].reason, HasSubstr("is already the name of rxe-1"));

  const DraDevice* sfd = inv.Find("sf-mlx5-core-sf-4");
  ASSERT_NE(sfd, nullptr);
  EXPECT_EQ(sfd->pcie_root, "pci0000:3a");
  const json sa = RenderDevice(*sfd, {})["attributes"];
  EXPECT_FALSE(sa.contains("resource.kubernetes.io/pciBusID"));
  EXPECT_EQ(sa["pfPciAddress"], json({{"string", "0000:3b:00.0"}}));
  EXPECT_EQ(sa["isSF"], json({{"bool", true}}));
  EXPECT_EQ(sa["k8s.cni.cncf.io/deviceID"], json({{"string", "mlx5_core.sf.4"}}));
  const json va = RenderDevice(*inv.Find("rdma-rxe0"), {})["attributes"];
  EXPECT_FALSE(va.contains("resource.kubernetes.io/pcieRoot"));
  EXPECT_FALSE(va.contains("resource.kubernetes.io/pciBusID"));
  EXPECT_FALSE(va.contains("fwVersion"));
  EXPECT_EQ(va["portRateGbps"], json({{"int", 10}}));
  EXPECT_EQ(inv.Find("pci-0000-3b-00-0")->pcie_root, "pci0000:3a");

  // Shared: one device per HCA, never an SF.
  const DraInventory shared = Select(R"({"configList": [{"resourceName": "s", "rdmaHcaMax": 2,
      "api": "dra", "selectors": {"rdmaDevices": ["mlx5_0", "mlx5_4", "rxe0"]}}]})",
                                     snap);
  names.clear();
  for (const auto& d : shared.devices) names.push_back(d.name);
  EXPECT_THAT(names, ElementsAre("shared-0000-3b-00-0", "shared-rdma-rxe0"));
}

// The issue's done-when: each HCA's pcieRoot is the first component of topo's root complex
// and its numaNode topo's NUMA node; every GPU topo puts PIX/PXB to it has the same pcieRoot,
// and a GPU across NUMA nodes (SYS) a different one.
TEST(DraRenderTest, PcieRootAndNumaMatchTopo) {
  const HostSnapshot snap = testing::LoadCanned("two_socket");
  auto endpoints = topo::EndpointsOf(snap);
  ASSERT_TRUE(endpoints.ok()) << endpoints.status().ToString();
  const topo::TopoReport report = topo::BuildReport(*endpoints);
  const PoolContent pool = Render(kExclusive, snap);
  const DraInventory inv = Select(kExclusive, snap);
  ASSERT_EQ(inv.devices.size(), 2u);
  int aligned = 0;
  for (const DraDevice& d : inv.devices) {
    const json& attrs = pool.devices.at(&d - inv.devices.data())["attributes"];
    const topo::PciEndpoint* hca = nullptr;
    for (const auto& n : report.devices) {
      if (n.device.address == d.fn.address) hca = &n.device;
    }
    ASSERT_NE(hca, nullptr) << d.fn.address;
    const std::string topo_root = hca->root_complex.substr(0, hca->root_complex.find('/'));
    EXPECT_EQ(attrs["resource.kubernetes.io/pcieRoot"]["string"], topo_root) << d.name;
    EXPECT_EQ(attrs["resource.kubernetes.io/numaNode"]["int"], hca->numa_node) << d.name;
    for (const auto& n : report.devices) {
      if (n.device.kind != topo::DeviceKind::kGpu) continue;
      const topo::PathType path = report.matrix.at(n.device.address).at(d.fn.address);
      const std::string gpu_root = PcieRootOf(snap.FindPci(n.device.address)->sysfs_path);
      if (path <= topo::PathType::kPxb) {
        ++aligned;
        EXPECT_EQ(gpu_root, d.pcie_root) << n.name << " is " << topo::PathTypeName(path);
      } else if (path == topo::PathType::kSys) {
        EXPECT_NE(gpu_root, d.pcie_root) << n.name << " is SYS";
      }
    }
  }
  EXPECT_EQ(aligned, 3);  // GPU0 PIX and GPU1 PXB to mlx5_0, GPU2 PIX to mlx5_1
}

// `hcashare discover --dra` prints the golden slices; the node name comes from --node-name,
// else NODE_NAME.
TEST(DraRenderTest, DiscoverDraPrintsTheSlices) {
  TempDir tmp;
  const std::string config = tmp.path() + "/config.json";
  std::ofstream(config) << kExclusive;
  const std::string snapshot = testing::CannedSnapshotPath("two_socket");
  auto run = testing::RunHcashare(tmp, {"discover", "--dra", "--config", config, "--snapshot",
                                        snapshot, "--node-name", "node-a"});
  ASSERT_EQ(run.code, 0) << run.output;
  EXPECT_EQ(run.output, testing::ReadTextFile(testing::GoldenPath("dra_two_socket.json")));

  ASSERT_EQ(setenv("NODE_NAME", "node-from-env", 1), 0);
  run =
      testing::RunHcashare(tmp, {"discover", "--dra", "--config", config, "--snapshot", snapshot});
  unsetenv("NODE_NAME");
  ASSERT_EQ(run.code, 0) << run.output;
  auto slices = json::parse(run.output);
  EXPECT_EQ(slices.at(0)["spec"]["nodeName"], "node-from-env");
  EXPECT_EQ(slices.at(0)["metadata"]["generateName"], "node-from-env-rdma.hcashare.io-");

  // Refusals go to stderr; the plain report explains the DRA resource.
  run = testing::RunHcashare(tmp, {"discover", "--config", config, "--snapshot", snapshot});
  ASSERT_EQ(run.code, 0) << run.output;
  EXPECT_THAT(run.output, HasSubstr("resource hcashare.io/hca_dra (exclusive, api dra)"));
  EXPECT_THAT(run.output, HasSubstr("published 2 DRA device(s) in the ResourceSlice of driver "
                                    "rdma.hcashare.io:"));
  EXPECT_THAT(run.output, HasSubstr("pci-0000-19-00-0  0000:19:00.0  pcieRoot pci0000:15  NUMA 0"));
  run = testing::RunHcashare(tmp, {"validate", config});
  EXPECT_THAT(run.output, HasSubstr("resource hcashare.io/hca_dra exclusive, through DRA (driver "
                                    "rdma.hcashare.io)"));
}

}  // namespace
}  // namespace hcashare::dra
