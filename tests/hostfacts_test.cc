// Tests for hostfacts (the one reader of the node) and the snapshot it dumps: the JSON form
// round-trips on every fixture, `hcashare snapshot` then `--snapshot FILE` gives the same
// topo and discover output as the live node, loading names the JSON path of a bad field,
// every view agrees on a malformed attribute, and `validate --against` reports what each
// resource selects on a node's snapshot.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <functional>

#include <nlohmann/json.hpp>

#include "common/host.h"
#include "common/temp_dir.h"
#include "hostfacts/attrs.h"
#include "hostfacts/reader.h"
#include "hostfacts/snapshot_json.h"
#include "node/discovery.h"
#include "testing/sim_node.h"
#include "tests/cli_fixtures.h"
#include "tests/test_util.h"
#include "topo/endpoints.h"

namespace hcashare::hostfacts {
namespace {

using ::testing::HasSubstr;
using testing::RunHcashare;

void WriteText(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

// A canned host, by name.
struct NamedFixture {
  const char* name;
  std::function<Status(fake::SimNode*)> build;
};

std::vector<NamedFixture> Fixtures() {
  return {{"two-socket", testing::BuildTwoSocketHost},
          {"workstation", testing::BuildWorkstation},
          {"sr-iov", testing::BuildVfHost},
          {"demo", [](fake::SimNode* n) { return n->PopulateDemo(); }}};
}

// A fixture on disk.
struct OnDisk {
  TempDir tmp;
  std::string root = tmp.path() + "/host";
  fake::SimNode node{root};
  explicit OnDisk(const NamedFixture& f) { EXPECT_TRUE(f.build(&node).ok()) << f.name; }
  HostSnapshot Read(const ReadOptions& opts = {}) const {
    return ReadHostSnapshot(*NewRootedHost(root), opts);
  }
};

constexpr const char* kConfig = R"({"configList": [
  {"resourceName": "shared_a", "rdmaHcaMax": 4, "selectors": {"vendors": ["15b3"]}},
  {"resourceName": "excl_b", "mode": "exclusive", "selectors": {"vendors": ["15b3"]}}]})";

TEST(SnapshotJsonTest, RoundTripsOnEveryFixture) {
  for (const auto& f : Fixtures()) {
    OnDisk d(f);
    ReadOptions full;
    full.gid_tables = true;
    full.verbs_owners = true;
    const HostSnapshot snap = d.Read(full);
    EXPECT_TRUE(snap.pci_listed) << f.name;
    EXPECT_FALSE(snap.pci.empty()) << f.name;
    EXPECT_FALSE(snap.rdma.empty()) << f.name;
    const std::string text = SnapshotToJson(snap).dump(1);
    auto back = SnapshotFromJson(nlohmann::json::parse(text));
    ASSERT_TRUE(back.ok()) << f.name << ": " << back.status().ToString();
    EXPECT_TRUE(*back == snap) << f.name;
    EXPECT_EQ(SnapshotToJson(*back).dump(1), text) << f.name;
  }
}

// `hcashare snapshot` on the node, then topo and discover on another machine with
// --snapshot: the same bytes as on the node itself.
TEST(SnapshotCliTest, SnapshotFileGivesTheLiveOutputOnEveryFixture) {
  for (const auto& f : Fixtures()) {
    OnDisk d(f);
    const std::string file = d.tmp.path() + "/snap.json";
    const std::string config = d.tmp.path() + "/config.json";
    WriteText(config, kConfig);
    auto snap = RunHcashare(d.tmp, {"snapshot", "--host-root", d.root, "-o", file});
    ASSERT_EQ(snap.code, 0) << f.name << ": " << snap.output;
    ASSERT_TRUE(LoadSnapshotFile(file).ok()) << f.name;
    for (const char* format : {"table", "json", "dot"}) {
      auto live = RunHcashare(d.tmp, {"topo", "--format", format, "--host-root", d.root});
      auto saved = RunHcashare(d.tmp, {"topo", "--format", format, "--snapshot", file});
      EXPECT_EQ(live.code, 0) << f.name << " " << format << ": " << live.output;
      EXPECT_EQ(saved.code, 0) << f.name << " " << format << ": " << saved.output;
      EXPECT_EQ(saved.output, live.output) << f.name << " " << format;
    }
    for (const char* json : {"--json", "--use-cdi"}) {
      auto live = RunHcashare(d.tmp, {"discover", json, "--config", config, "--host-root", d.root});
      auto saved = RunHcashare(d.tmp, {"discover", json, "--config", config, "--snapshot", file});
      EXPECT_EQ(live.code, 0) << f.name << ": " << live.output;
      EXPECT_EQ(saved.output, live.output) << f.name << " " << json;
      EXPECT_THAT(live.output, HasSubstr("shared_a")) << f.name;
    }
  }
}

TEST(SnapshotJsonTest, LoadNamesTheProblem) {
  OnDisk d(Fixtures()[0]);
  nlohmann::json good = nlohmann::json::parse(SnapshotToJson(d.Read()).dump());
  auto expect_error = [](const nlohmann::json& j, const std::string& want) {
    auto s = SnapshotFromJson(j);
    ASSERT_FALSE(s.ok()) << want;
    EXPECT_EQ(s.status().code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(s.status().message(), HasSubstr(want));
  };
  nlohmann::json j = good;
  j["kind"] = "something-else";
  expect_error(j, "/kind");
  j = good;
  j["version"] = 2;
  expect_error(j, "/version: 2 is not supported");
  j = good;
  j["pci"][0]["numa_node"] = "0";
  expect_error(j, "/pci/0/numa_node");
  j = good;
  j["pci"][1]["virtfns"] = {{"x", "0000:01:00.1"}};
  expect_error(j, "/pci/1/virtfns/x");
  j = good;
  j["rdma"][0]["ports"][0]["state"] = 4;
  expect_error(j, "/rdma/0/ports/0/state");
  j = good;
  std::swap(j["pci"][0], j["pci"][1]);
  expect_error(j, "/pci: not sorted");
  expect_error(nlohmann::json::array(), "/: expected an object");

  const std::string file = d.tmp.path() + "/bad.json";
  WriteText(file, "{not json");
  auto bad = LoadSnapshotFile(file);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr(file + ": not JSON"));
  EXPECT_EQ(LoadSnapshotFile(d.tmp.path() + "/missing.json").status().code(),
            StatusCode::kNotFound);
}

// numa_node is parsed in one place: a malformed value is unknown (-1) to topo and to
// discovery alike. topo used to read it with atoi, which made "junk" NUMA node 0.
TEST(HostFactsTest, MalformedNumaNodeIsUnknownInEveryView) {
  OnDisk d(Fixtures()[0]);
  const std::string gpu = "0000:18:00.0";
  const std::string hca = "0000:19:00.0";
  for (const auto& addr : {gpu, hca}) {
    WriteText(d.root + "/sys/bus/pci/devices/" + addr + "/numa_node", "junk\n");
  }
  const HostSnapshot snap = d.Read();
  auto endpoints = topo::EndpointsOf(snap);
  ASSERT_TRUE(endpoints.ok());
  int seen = 0;
  for (const auto& ep : endpoints->devices) {
    if (ep.address == gpu || ep.address == hca) {
      EXPECT_EQ(ep.numa_node, -1) << ep.address;
      ++seen;
    }
  }
  EXPECT_EQ(seen, 2);
  const node::Inventory inv = node::Discover(snap);
  bool found = false;
  for (const auto& fn : inv.functions) {
    if (fn.address != hca) continue;
    found = true;
    EXPECT_EQ(fn.numa_node, -1);
  }
  EXPECT_TRUE(found);
}

// The device plugin reads only what discovery needs; discovery finds the same devices in it
// as in the full snapshot `discover` and `hcashare snapshot` read.
TEST(HostFactsTest, TheDevicePluginsReadDiscoversWhatTheFullReadDoes) {
  for (const auto& f : Fixtures()) {
    OnDisk d(f);
    ReadOptions minimal;
    minimal.all_functions = false;
    const node::Inventory full = node::Discover(d.Read());
    const node::Inventory scan = node::Discover(d.Read(minimal));
    EXPECT_FALSE(full.functions.empty()) << f.name;
    EXPECT_TRUE(scan.functions == full.functions) << f.name;
    EXPECT_TRUE(scan.excluded == full.excluded) << f.name;
    EXPECT_EQ(scan.present, full.present) << f.name;
  }
}

// Discovery records why a network function is not offered; `discover` prints that record.
TEST(HostFactsTest, DiscoveryRecordsWhyFunctionsAreNotOffered) {
  OnDisk d(Fixtures()[1]);  // the workstation: enp5s0 has no RDMA device
  const node::Inventory inv = node::Discover(d.Read());
  ASSERT_EQ(inv.not_offered.size(), 1u);
  EXPECT_EQ(inv.not_offered[0].address, "0000:05:00.0");
  EXPECT_THAT(inv.not_offered[0].reason, HasSubstr("no RDMA device"));
}

// /proc/cpuinfo: the first processor's block only, and `model`, not `model name`.
TEST(CpuFactsTest, ParsesTheFirstProcessorBlockOnly) {
  const CpuIdentity intel = ParseCpuInfo(
      "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel name\t: Xeon 8480+\n"
      "model\t\t: 143\nstepping\t: 8\n\nprocessor\t: 1\nvendor_id\t: AuthenticAMD\n"
      "cpu family\t: 25\nmodel\t\t: 17\n");
  EXPECT_EQ(intel.vendor, "GenuineIntel");
  EXPECT_EQ(intel.family, 6);
  EXPECT_EQ(intel.model, 143);
  // The next `processor` line ends the block even without a blank line before it.
  const CpuIdentity first = ParseCpuInfo(
      "\nprocessor : 0\nvendor_id : GenuineIntel\nprocessor : 1\ncpu family : 25\nmodel : 1\n");
  EXPECT_EQ(first.vendor, "GenuineIntel");
  EXPECT_EQ(first.family, -1);
  EXPECT_EQ(first.model, -1);
  // `model name` alone is no model; a malformed family is unknown; arm64 has neither.
  const CpuIdentity odd = ParseCpuInfo("processor : 0\nmodel name : X\ncpu family : six\n");
  EXPECT_EQ(odd.model, -1);
  EXPECT_EQ(odd.family, -1);
  const CpuIdentity arm =
      ParseCpuInfo("processor\t: 0\nBogoMIPS\t: 50.00\nCPU implementer\t: 0x41\n");
  EXPECT_EQ(arm.vendor, "");
  EXPECT_EQ(arm.model, -1);
}

// Before Linux 6.1 there is no /proc/sys/kernel/arch: the CPU modalias names the type.
TEST(CpuFactsTest, ArchFromTheCpuModaliasWhenTheSysctlIsMissing) {
  EXPECT_EQ(ParseCpuModaliasArch("cpu:type:x86,ven0002fam001Amod0002:feature:,0000,0001\n"),
            "x86_64");
  EXPECT_EQ(ParseCpuModaliasArch("cpu:type:aarch64:feature:,0000,0001\n"), "aarch64");
  EXPECT_EQ(ParseCpuModaliasArch("cpu:type:power9:feature:"), "");
  EXPECT_EQ(ParseCpuModaliasArch("x86"), "");
  EXPECT_EQ(ParseCpuModaliasArch(""), "");
  TempDir tmp;
  fake::SimNode node(tmp.path() + "/host");
  ASSERT_TRUE(node.WriteHostFile("/sys/devices/system/cpu/modalias",
                                 "cpu:type:x86,ven0000fam0006mod008F:feature:,0000\n")
                  .ok());
  auto host = NewRootedHost(tmp.path() + "/host");
  EXPECT_EQ(ReadHostSnapshot(*host).cpu_arch, "x86_64");
  ASSERT_TRUE(node.WriteHostFile("/proc/sys/kernel/arch", "aarch64\n").ok());
  EXPECT_EQ(ReadHostSnapshot(*host).cpu_arch, "aarch64");  // the sysctl wins
}

TEST(NvidiaFactsTest, ParsesInformationWithAndWithoutUuid) {
  const std::string head = "Model: \t\t NVIDIA H100 80GB HBM3\nIRQ:   \t\t 180\n";
  const std::string tail =
      "Bus Type: \t PCIe\nBus Location: \t 0000:18:00.0\nDevice Minor: \t 3\n"
      "GPU Excluded:\t No\n";
  const NvidiaGpu gpu = ParseNvidiaGpuInformation(
      head + "GPU UUID: \t GPU-8c3d1f2a-0b4e-4c6d-9e7f-0a1b2c3d4e50\n" + tail);
  EXPECT_EQ(gpu.model, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(gpu.uuid, "GPU-8c3d1f2a-0b4e-4c6d-9e7f-0a1b2c3d4e50");
  EXPECT_EQ(gpu.minor, 3);
  EXPECT_EQ(gpu.address, "");
  const NvidiaGpu no_uuid = ParseNvidiaGpuInformation(head + tail);
  EXPECT_EQ(no_uuid.uuid, "");
  EXPECT_EQ(no_uuid.minor, 3);
  EXPECT_EQ(ParseNvidiaGpuInformation("Model: X\n").minor, -1);
}

// A full read has the NUMA nodes (by id, not by name), the CPU and the NVIDIA GPUs; the
// device plugin's scan reads none of them.
TEST(CpuFactsTest, FullReadHasNumaNodesCpuAndGpus) {
  TempDir tmp;
  const std::string root = tmp.path() + "/host";
  fake::SimNode node(root);
  ASSERT_TRUE(node.AddNumaNode(10, "00ff0000,00000000,00000000", "80-87").ok());
  ASSERT_TRUE(node.AddNumaNode(2, "0000ff00", "8-15").ok());
  ASSERT_TRUE(node.AddNumaNode(0, "000000ff", "0-7").ok());
  ASSERT_TRUE(node.WriteHostFile("/sys/devices/system/node/possible", "0-10\n").ok());
  ASSERT_TRUE(node.SetCpu("x86_64", "GenuineIntel", 6, 143).ok());
  ASSERT_TRUE(node.AddNvidiaGpuInfo("0000:9a:00.0", "NVIDIA A100-SXM4-80GB", "", 1).ok());
  ASSERT_TRUE(node.AddNvidiaGpuInfo("0000:18:00.0", "NVIDIA A100-SXM4-80GB",
                                    "GPU-8c3d1f2a-0b4e-4c6d-9e7f-0a1b2c3d4e50", 0)
                  .ok());
  auto host = NewRootedHost(root);
  const HostSnapshot snap = ReadHostSnapshot(*host);
  ASSERT_EQ(snap.numa_nodes.size(), 3u);
  EXPECT_EQ(snap.numa_nodes[0].id, 0);
  EXPECT_EQ(snap.numa_nodes[1].id, 2);
  EXPECT_EQ(snap.numa_nodes[2].id, 10);
  EXPECT_EQ(snap.numa_nodes[2].cpumap, "00ff0000,00000000,00000000");
  EXPECT_EQ(snap.numa_nodes[1].cpulist, "8-15");
  EXPECT_EQ(snap.cpu_arch, "x86_64");
  EXPECT_EQ(snap.cpu_vendor, "GenuineIntel");
  EXPECT_EQ(snap.cpu_family, 6);
  EXPECT_EQ(snap.cpu_model, 143);
  ASSERT_EQ(snap.nvidia_gpus.size(), 2u);
  EXPECT_EQ(snap.nvidia_gpus[0].address, "0000:18:00.0");
  EXPECT_EQ(snap.nvidia_gpus[0].minor, 0);
  EXPECT_EQ(snap.nvidia_gpus[1].address, "0000:9a:00.0");
  EXPECT_EQ(snap.nvidia_gpus[1].uuid, "");
  EXPECT_EQ(snap.nvidia_gpus[1].model, "NVIDIA A100-SXM4-80GB");
  EXPECT_EQ(ReadNvidiaGpus(*host), snap.nvidia_gpus);
  // By UUID, whatever its case; the prefix is part of it; no match for "" (no UUID line).
  EXPECT_EQ(snap.FindGpuByUuid("GPU-8C3D1F2A-0B4E-4C6D-9E7F-0A1B2C3D4E50"), &snap.nvidia_gpus[0]);
  EXPECT_EQ(snap.FindGpuByUuid("8c3d1f2a-0b4e-4c6d-9e7f-0a1b2c3d4e50"), nullptr);
  EXPECT_EQ(snap.FindGpuByUuid(""), nullptr);
  const std::string text = SnapshotToJson(snap).dump(1);
  auto back = SnapshotFromJson(nlohmann::json::parse(text));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_TRUE(*back == snap);
  EXPECT_EQ(SnapshotToJson(*back).dump(1), text);
  ReadOptions scan;
  scan.all_functions = false;
  const HostSnapshot lean = ReadHostSnapshot(*host, scan);
  EXPECT_TRUE(lean.numa_nodes.empty());
  EXPECT_TRUE(lean.nvidia_gpus.empty());
  EXPECT_EQ(lean.cpu_family, -1);
  EXPECT_EQ(lean.cpu_arch, "");
}

// A snapshot written before the CPU, GPU and ACS facts existed still loads, as unknown.
TEST(SnapshotJsonTest, FilesWithoutTheNewerKeysLoad) {
  OnDisk d(Fixtures()[0]);
  const HostSnapshot snap = d.Read();
  ASSERT_FALSE(snap.numa_nodes.empty());
  nlohmann::json j = nlohmann::json::parse(SnapshotToJson(snap).dump());
  for (const char* key :
       {"numa_nodes", "cpu_arch", "cpu_vendor", "cpu_family", "cpu_model", "nvidia_gpus"}) {
    ASSERT_EQ(j.erase(key), 1u) << key;
  }
  for (auto& f : j["pci"]) ASSERT_EQ(f.erase("acs_ctrl"), 1u);
  auto old = SnapshotFromJson(j);
  ASSERT_TRUE(old.ok()) << old.status().ToString();
  EXPECT_TRUE(old->numa_nodes.empty());
  EXPECT_TRUE(old->nvidia_gpus.empty());
  EXPECT_EQ(old->cpu_family, -1);
  EXPECT_EQ(old->cpu_model, -1);
  for (const auto& f : old->pci) EXPECT_EQ(f.acs_ctrl, kAcsUnread) << f.address;
  // The new arrays are checked like the old ones.
  nlohmann::json swapped = nlohmann::json::parse(SnapshotToJson(snap).dump());
  std::swap(swapped["numa_nodes"][0], swapped["numa_nodes"][1]);
  auto bad = SnapshotFromJson(swapped);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("/numa_nodes: not sorted"));
  nlohmann::json wrong = nlohmann::json::parse(SnapshotToJson(snap).dump());
  wrong["nvidia_gpus"][0]["minor"] = "0";
  bad = SnapshotFromJson(wrong);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("/nvidia_gpus/0/minor"));
}

// An RDMA device's fw_ver and each port's rate (issue 27: the DRA attributes fwVersion and
// portRateGbps) are read, dumped and loaded; a snapshot written before them still loads,
// with the rate unknown, and one with only the rate text gets its Gb/s from it.
TEST(SnapshotJsonTest, FirmwareAndPortRate) {
  OnDisk d(Fixtures()[0]);
  const HostSnapshot snap = d.Read();
  const RdmaDevice* mlx = snap.FindRdma("mlx5_0");
  ASSERT_NE(mlx, nullptr);
  EXPECT_EQ(mlx->fw_ver, "16.35.2000");
  ASSERT_EQ(mlx->ports.size(), 1u);
  EXPECT_EQ(mlx->ports[0].rate, "100 Gb/sec (4X EDR)");
  EXPECT_EQ(mlx->ports[0].rate_gbps, 100);
  auto loaded = SnapshotFromJson(SnapshotToJson(snap));
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_TRUE(*loaded == snap);

  nlohmann::json j = nlohmann::json::parse(SnapshotToJson(snap).dump());
  for (auto& r : j["rdma"]) {
    ASSERT_EQ(r.erase("fw_ver"), 1u);
    for (auto& p : r["ports"]) {
      ASSERT_EQ(p.erase("rate"), 1u);
      ASSERT_EQ(p.erase("rate_gbps"), 1u);
    }
  }
  auto old = SnapshotFromJson(j);
  ASSERT_TRUE(old.ok()) << old.status().ToString();
  EXPECT_EQ(old->FindRdma("mlx5_0")->fw_ver, "");
  EXPECT_EQ(old->FindRdma("mlx5_0")->ports[0].rate, "");
  EXPECT_EQ(old->FindRdma("mlx5_0")->ports[0].rate_gbps, -1);
  j["rdma"][0]["ports"][0]["rate"] = "56 Gb/sec (4X FDR)";
  old = SnapshotFromJson(j);
  ASSERT_TRUE(old.ok()) << old.status().ToString();
  EXPECT_EQ(old->rdma[0].ports[0].rate_gbps, 56);
}

TEST(AttrsTest, PortRate) {
  EXPECT_EQ(ParsePortRateGbps("100 Gb/sec (4X EDR)"), 100);
  EXPECT_EQ(ParsePortRateGbps("400 Gb/sec (4X NDR)"), 400);
  EXPECT_EQ(ParsePortRateGbps("2.5 Gb/sec (1X SDR)"), 2);
  EXPECT_EQ(ParsePortRateGbps("10 Gb/sec"), 10);
  EXPECT_EQ(ParsePortRateGbps(""), -1);
  EXPECT_EQ(ParsePortRateGbps("Unknown"), -1);
  EXPECT_EQ(ParsePortRateGbps("100Gb/sec"), -1);
  EXPECT_EQ(ParsePortRateGbps("100 Mb/sec"), -1);
  EXPECT_EQ(ParsePortRateGbps("2. Gb/sec"), -1);
  EXPECT_EQ(ParsePortRateGbps("-1 Gb/sec"), -1);
  EXPECT_EQ(ParsePortRateGbps("99999999999999999999 Gb/sec"), -1);
}

TEST(ValidateAgainstTest, ReportsWhatEachResourceSelectsOnTheSnapshot) {
  OnDisk d(Fixtures()[3]);
  const std::string file = d.tmp.path() + "/snap.json";
  ASSERT_EQ(RunHcashare(d.tmp, {"snapshot", "--host-root", d.root, "-o", file}).code, 0);
  const std::string good = d.tmp.path() + "/good.json";
  WriteText(good, kConfig);
  auto ok = RunHcashare(d.tmp, {"validate", good, "--against", file});
  EXPECT_EQ(ok.code, 0) << ok.output;
  EXPECT_THAT(ok.output, HasSubstr("rdma/shared_a selects 4 device(s)"));
  const std::string none = d.tmp.path() + "/none.json";
  WriteText(none, R"({"configList": [{"resourceName": "a", "rdmaHcaMax": 1,
                                   "selectors": {"vendors": ["abcd"]}}]})");
  auto empty = RunHcashare(d.tmp, {"validate", none, "--against", file});
  EXPECT_EQ(empty.code, 1) << empty.output;
  EXPECT_THAT(empty.output, HasSubstr("rdma/a selects 0 device(s) -- WARNING"));
  EXPECT_THAT(empty.output, HasSubstr("left out: 0000:3b:00.0: selectors.vendors"));
  auto json = RunHcashare(d.tmp, {"validate", "--json", none, "--against", file});
  EXPECT_EQ(json.code, 1);
  const auto j = nlohmann::json::parse(json.output, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << json.output;
  EXPECT_EQ(j["against"]["resources"][0]["devices"], 0);
  auto missing = RunHcashare(d.tmp, {"validate", good, "--against", d.tmp.path() + "/nope"});
  EXPECT_EQ(missing.code, 3);
  EXPECT_THAT(missing.output, HasSubstr("cannot be read"));
}

}  // namespace
}  // namespace hcashare::hostfacts
