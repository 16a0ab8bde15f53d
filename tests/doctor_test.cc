// Tests for doctor/: every check passing and every check failing on fixture trees, each
// check's other branches, NCCL_IB_HCA parsing, the report, the real libibverbs (no RDMA
// hardware here: a clear FAIL), and the CLI.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <memory>

#include <nlohmann/json.hpp>

#include "common/host.h"
#include "common/temp_dir.h"
#include "doctor/check.h"
#include "doctor/limits.h"
#include "doctor/nccl_env.h"
#include "doctor/rdma_sysfs.h"
#include "doctor/report.h"
#include "doctor/verbs.h"
#include "nl/rdma_netlink.h"
#include "testing/fake_process_limits.h"
#include "testing/fake_rdma_system.h"
#include "testing/fake_verbs.h"
#include "testing/sim_node.h"
#include "tests/cli_fixtures.h"

namespace hcashare::doctor {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr const char* kIbAddr = "0000:3b:00.0";
constexpr const char* kRoceAddr = "0000:5e:00.0";

// A node or pod to examine: a fixture tree plus fakes for every other seam.
struct World {
  TempDir tmp;
  fake::SimNode node{tmp.path() + "/host"};
  std::unique_ptr<Host> host = NewRootedHost(tmp.path() + "/host");
  fake::FakeVerbs verbs;
  fake::FakeRdmaSystem rdma{RdmaNetnsMode::kShared};
  fake::FakeProcessLimits limits{kUnlimited, false};
  std::map<std::string, std::string> env;
  hostfacts::HostSnapshot snap;

  // The inputs, with the node as it is now.
  DoctorInputs In() {
    snap = ReadDoctorSnapshot(*host);
    return {snap, verbs, rdma, limits, env};
  }
};

// Two HCAs (mlx5_0 InfiniBand, mlx5_1 RoCE with a RoCE v2 GID), verbs seeing both with
// ACTIVE ports, shared netns mode, unlimited memlock, and the env of a pod that got both.
void MakeHealthy(World* w) {
  ASSERT_TRUE(w->node.AddPciFunction(fake::SimNode::IbHca(kIbAddr, "ib0", "mlx5_0")).ok());
  fake::SimPciFunction roce;
  roce.address = kRoceAddr;
  roce.netdevs = {"ens2f0np0"};
  roce.rdma_device = "mlx5_1";
  ASSERT_TRUE(w->node.AddPciFunction(roce).ok());
  const std::string link_local = "fe80:0000:0000:0000:0a00:27ff:fe00:0001";
  const std::string v4 = "0000:0000:0000:0000:0000:ffff:0a00:0005";
  ASSERT_TRUE(w->node.SetGid(kRoceAddr, 1, 0, {link_local, "IB/RoCE v1", "ens2f0np0"}).ok());
  ASSERT_TRUE(w->node.SetGid(kRoceAddr, 1, 1, {link_local, "RoCE v2", "ens2f0np0"}).ok());
  ASSERT_TRUE(w->node.SetGid(kRoceAddr, 1, 2, {v4, "IB/RoCE v1", "ens2f0np0"}).ok());
  ASSERT_TRUE(w->node.SetGid(kRoceAddr, 1, 3, {v4, "RoCE v2", "ens2f0np0"}).ok());
  w->verbs.set_devices(std::vector<std::string>{"mlx5_0", "mlx5_1"});
  w->verbs.set_ports("mlx5_0", std::vector<VerbsPort>{{1, "ACTIVE", "InfiniBand"}});
  w->verbs.set_ports("mlx5_1", std::vector<VerbsPort>{{1, "ACTIVE", "Ethernet"}});
  w->env = {{"HCASHARE_RDMA_DEVICES", "mlx5_0,mlx5_1"},
            {"PCIDEVICE_RDMA_HCA_ROCE", kRoceAddr},
            {"PCIDEVICE_RDMA_HCA_ROCE_INFO", "{}"},
            {"NCCL_IB_HCA", "=mlx5_0:1,mlx5_1"},
            {"NCCL_NET", "IB"},
            {"NCCL_IB_DISABLE", "0"}};
}

const CheckResult& Find(const std::vector<CheckResult>& results, const std::string& name) {
  for (const auto& r : results) {
    if (r.name == name) return r;
  }
  static const CheckResult kMissing{"missing", Verdict::kFail, "no such check", "", ""};
  return kMissing;
}

TEST(DoctorTest, EveryCheckPasses) {
  World w;
  MakeHealthy(&w);
  const std::vector<CheckResult> results = RunChecks(w.In());
  ASSERT_EQ(results.size(), 15u);
  for (const auto& r : results) {
    EXPECT_EQ(r.verdict, Verdict::kPass) << r.name << ": " << r.reason;
    EXPECT_EQ(r.fix, "") << r.name;
  }
  EXPECT_FALSE(AnyFailed(results));
  EXPECT_THAT(Find(results, "uverbs").reason, HasSubstr("uverbs0 (mlx5_0), uverbs1 (mlx5_1)"));
  EXPECT_THAT(Find(results, "verbs-ports").reason, HasSubstr("mlx5_1 port 1 ACTIVE Ethernet"));
  // The IPv4-mapped RoCE v2 GID is the one NCCL would pick.
  EXPECT_THAT(Find(results, "roce-gid").reason, HasSubstr("mlx5_1 port 1 GID index 3"));
  EXPECT_THAT(Find(results, "nccl-ib-hca").reason, HasSubstr("selects mlx5_0:1, mlx5_1:1"));
}

// Every check at its worst: FAIL, except the NCCL knobs, which the issue has WARN.
TEST(DoctorTest, EveryCheckFails) {
  World w;  // an empty tree: no devices, no /dev/infiniband nodes
  ASSERT_TRUE(w.node.SetRdmaCm(false).ok());
  w.verbs.set_load(Status::FailedPrecondition("cannot load libibverbs.so.1: not found"));
  w.rdma.set_answer(Status::Unavailable("RDMA netlink not available"));
  w.limits = fake::FakeProcessLimits(64 << 10, false);
  w.env = {{"NCCL_IB_DISABLE", "1"},
           {"NCCL_NET", "Socket"},
           {"NCCL_IB_HCA", "mlx5_9"},
           {"HCASHARE_RDMA_DEVICES", "mlx5_0"}};
  const std::vector<CheckResult> results = RunChecks(w.In());
  ASSERT_EQ(results.size(), 15u);
  for (const auto& r : results) {
    // The GPU path checks have nothing to judge on a host without GPUs or RDMA devices.
    // Nor the runtime check on a tree without a runtime's config.
    if (r.name == "pcie-link" || r.name == "gpudirect-rdma" || r.name == "iommu" ||
        r.name == "acs" || r.name == "runtime-cdi") {
      EXPECT_EQ(r.verdict, Verdict::kPass) << r.name << ": " << r.reason;
      continue;
    }
    const bool nccl = r.name.rfind("nccl-", 0) == 0;
    EXPECT_EQ(r.verdict, nccl ? Verdict::kWarn : Verdict::kFail) << r.name << ": " << r.reason;
    EXPECT_NE(r.fix, "") << r.name;
  }
  EXPECT_TRUE(AnyFailed(results));
  EXPECT_THAT(Find(results, "libibverbs").reason, HasSubstr("NCCL will use NET/Socket"));
  EXPECT_THAT(Find(results, "memlock").reason, HasSubstr("64 KiB"));
  EXPECT_THAT(Find(results, "nccl-ib-hca").reason,
              AllOf(HasSubstr("mlx5_9"), HasSubstr("uses sockets")));
  EXPECT_THAT(Find(results, "plugin-env").reason, HasSubstr("not in /sys/class/infiniband"));
}

TEST(DoctorTest, UverbsWithoutRdmaCmWarns) {
  World w;
  MakeHealthy(&w);
  ASSERT_TRUE(w.node.SetRdmaCm(false).ok());
  const CheckResult r = CheckUverbsNodes(w.In());
  EXPECT_EQ(r.verdict, Verdict::kWarn);
  EXPECT_THAT(r.fix, HasSubstr("rdma_ucm"));
}

TEST(DoctorTest, LibibverbsEmptyOrFailingList) {
  World w;
  w.verbs.set_devices(std::vector<std::string>{});
  CheckResult r = CheckLibibverbs(w.In());
  EXPECT_EQ(r.verdict, Verdict::kFail);
  EXPECT_THAT(r.reason, HasSubstr("found no RDMA devices"));
  w.verbs.set_devices(ErrnoStatus(ENOSYS, "ibv_get_device_list failed"));
  r = CheckLibibverbs(w.In());
  EXPECT_EQ(r.verdict, Verdict::kFail);
  EXPECT_THAT(r.fix, HasSubstr("ENOSYS"));
  EXPECT_EQ(CheckVerbsPorts(w.In()).verdict, Verdict::kFail);
}

TEST(DoctorTest, VerbsPortsOpenErrorDownPortAndBadLinkLayer) {
  World w;
  MakeHealthy(&w);
  w.verbs.set_ports("mlx5_1", ErrnoStatus(EACCES, "ibv_open_device(mlx5_1)"));
  CheckResult r = CheckVerbsPorts(w.In());
  EXPECT_EQ(r.verdict, Verdict::kFail);
  EXPECT_THAT(r.reason, HasSubstr("ibv_open_device(mlx5_1)"));

  // One of two ports down: still usable, a warning.
  w.verbs.set_ports("mlx5_1",
                    std::vector<VerbsPort>{{1, "ACTIVE", "Ethernet"}, {2, "DOWN", "Ethernet"}});
  r = CheckVerbsPorts(w.In());
  EXPECT_EQ(r.verdict, Verdict::kWarn);
  EXPECT_THAT(r.reason, HasSubstr("mlx5_1 port 2 is DOWN"));

  // No usable port on a device: FAIL.
  w.verbs.set_ports("mlx5_0", std::vector<VerbsPort>{{1, "ACTIVE", "Unknown"}});
  r = CheckVerbsPorts(w.In());
  EXPECT_EQ(r.verdict, Verdict::kFail);
  EXPECT_THAT(r.reason, HasSubstr("link layer \"Unknown\""));
}

TEST(DoctorTest, RoceGidBranches) {
  World w;
  MakeHealthy(&w);
  // A RoCE port with only a RoCE v1 GID fails.
  fake::SimPciFunction v1only;
  v1only.address = "0000:af:00.0";
  v1only.netdevs = {"ens3f0np0"};
  v1only.rdma_device = "mlx5_2";
  ASSERT_TRUE(w.node.AddPciFunction(v1only).ok());
  ASSERT_TRUE(w.node
                  .SetGid("0000:af:00.0", 1, 0,
                          {"fe80:0000:0000:0000:0a00:27ff:fe00:0009", "IB/RoCE v1", ""})
                  .ok());
  CheckResult r = CheckRoceGid(w.In());
  EXPECT_EQ(r.verdict, Verdict::kFail);
  EXPECT_THAT(r.reason, HasSubstr("mlx5_2 port 1 has no RoCE v2 GID"));
  EXPECT_THAT(r.reason, Not(HasSubstr("mlx5_1")));

  // InfiniBand only: nothing to check.
  World ib;
  ASSERT_TRUE(ib.node.AddPciFunction(fake::SimNode::IbHca(kIbAddr, "ib0", "mlx5_0")).ok());
  r = CheckRoceGid(ib.In());
  EXPECT_EQ(r.verdict, Verdict::kPass);
  EXPECT_THAT(r.reason, HasSubstr("InfiniBand only"));
}

TEST(DoctorTest, GidTableSkipsUnusedSlots) {
  World w;
  MakeHealthy(&w);
  ASSERT_TRUE(
      w.node.SetGid(kRoceAddr, 1, 4, {"0000:0000:0000:0000:0000:0000:0000:0000", "RoCE v2", ""})
          .ok());
  const auto table = ReadGidTable(ReadDoctorSnapshot(*w.host), "mlx5_1", "1");
  ASSERT_EQ(table.size(), 4u);
  EXPECT_EQ(table[3].index, 3);
  EXPECT_EQ(table[3].type, "RoCE v2");
  EXPECT_EQ(table[3].ndev, "ens2f0np0");
  EXPECT_TRUE(IsIpv4MappedGid(table[3].gid));
  EXPECT_FALSE(IsIpv4MappedGid(table[1].gid));
}

TEST(DoctorTest, MemlockBranches) {
  World w;
  w.limits = fake::FakeProcessLimits(64 << 10, true);  // CAP_IPC_LOCK lifts the limit
  EXPECT_EQ(CheckMemlock(w.In()).verdict, Verdict::kPass);
  w.limits = fake::FakeProcessLimits(uint64_t{2} << 30, false);
  CheckResult r = CheckMemlock(w.In());
  EXPECT_EQ(r.verdict, Verdict::kWarn);
  EXPECT_THAT(r.reason, HasSubstr("2 GiB"));
  w.limits = fake::FakeProcessLimits(8 << 20, false);
  r = CheckMemlock(w.In());
  EXPECT_EQ(r.verdict, Verdict::kFail);
  EXPECT_THAT(r.reason, HasSubstr("8 MiB"));
  EXPECT_THAT(r.fix, HasSubstr("IPC_LOCK"));
}

TEST(DoctorTest, RdmaNetnsExclusive) {
  World w;
  w.rdma.set_answer(RdmaNetnsMode::kExclusive);
  CheckResult r = CheckRdmaNetns(w.In());
  EXPECT_EQ(r.verdict, Verdict::kFail);
  EXPECT_THAT(r.fix, HasSubstr("rdma system set netns shared"));
  MakeHealthy(&w);
  r = CheckRdmaNetns(w.In());
  EXPECT_EQ(r.verdict, Verdict::kPass);
  EXPECT_THAT(r.reason, HasSubstr("exclusive: this network namespace holds mlx5_0, mlx5_1"));
}

TEST(DoctorTest, NcclIbHcaBranches) {
  World w;
  MakeHealthy(&w);
  w.env["NCCL_IB_HCA"] = "mlx5";  // a prefix matches both
  EXPECT_EQ(CheckNcclIbHca(w.In()).verdict, Verdict::kPass);
  w.env["NCCL_IB_HCA"] = "=mlx5";  // exact: no such device
  EXPECT_EQ(CheckNcclIbHca(w.In()).verdict, Verdict::kWarn);
  w.env["NCCL_IB_HCA"] = "mlx5_0:2";  // no port 2
  EXPECT_EQ(CheckNcclIbHca(w.In()).verdict, Verdict::kWarn);
  w.env["NCCL_IB_HCA"] = "^mlx5_9";  // excluding an absent device is harmless
  EXPECT_EQ(CheckNcclIbHca(w.In()).verdict, Verdict::kPass);
  w.env["NCCL_IB_HCA"] = "^mlx5";  // excludes everything
  CheckResult r = CheckNcclIbHca(w.In());
  EXPECT_EQ(r.verdict, Verdict::kWarn);
  EXPECT_THAT(r.reason, HasSubstr("excludes every RDMA device"));
  w.env["NCCL_NET"] = "socket";
  EXPECT_EQ(CheckNcclNet(w.In()).verdict, Verdict::kWarn);
  w.env["NCCL_IB_DISABLE"] = "0";
  EXPECT_EQ(CheckNcclIbDisable(w.In()).verdict, Verdict::kPass);
}

TEST(DoctorTest, ParsesNcclIbHca) {
  NcclHcaFilter f = ParseNcclIbHca("^=mlx5_0:1,,mlx5_1");
  EXPECT_TRUE(f.exclude);
  EXPECT_TRUE(f.exact);
  ASSERT_EQ(f.entries.size(), 2u);
  EXPECT_EQ(f.entries[0].ToString(), "mlx5_0:1");
  EXPECT_EQ(f.entries[1].port, -1);
  f = ParseNcclIbHca("mlx5_0:x");
  EXPECT_EQ(f.entries[0].port, 0);  // not a number: matches no port
  EXPECT_FALSE(EntryMatches(f, f.entries[0], {"mlx5_0", 1}));
  f = ParseNcclIbHca("mlx5_1");
  EXPECT_TRUE(EntryMatches(f, f.entries[0], {"mlx5_10", 1}));  // prefix, as NCCL
  EXPECT_EQ(UnmatchedEntries(f, {{"mlx5_0", 1}}), std::vector<std::string>{"mlx5_1"});
}

TEST(DoctorTest, PluginEnvBranches) {
  World w;
  MakeHealthy(&w);
  w.env = {};
  EXPECT_EQ(CheckPluginEnv(w.In()).verdict, Verdict::kWarn);
  w.env = {{"PCIDEVICE_RDMA_VFS", "0000:3b:00.5"}};
  CheckResult r = CheckPluginEnv(w.In());
  EXPECT_EQ(r.verdict, Verdict::kFail);
  EXPECT_THAT(r.reason, HasSubstr("0000:3b:00.5, which is not in /sys/bus/pci/devices"));
  // A granted function whose RDMA device the env does not name.
  w.env = {{"PCIDEVICE_RDMA_VFS", kRoceAddr}, {"HCASHARE_RDMA_DEVICES", "mlx5_0"}};
  r = CheckPluginEnv(w.In());
  EXPECT_EQ(r.verdict, Verdict::kFail);
  EXPECT_THAT(r.reason, HasSubstr("does not name mlx5_1"));
  // The uverbs node vanished from /dev.
  std::filesystem::remove(w.tmp.path() + "/host/dev/infiniband/uverbs1");
  w.env = {{"HCASHARE_RDMA_DEVICES", "mlx5_1"}};
  r = CheckPluginEnv(w.In());
  EXPECT_EQ(r.verdict, Verdict::kFail);
  EXPECT_THAT(r.reason, HasSubstr("mlx5_1 has no uverbs node"));
}

// A container holding a shared pool (mlx5_0) and an exclusive VF (mlx5_1): each resource
// names its devices in its own variable (issue 25).
TEST(DoctorTest, EnvChecksReadEveryResourcesVariable) {
  World w;
  MakeHealthy(&w);
  w.env = {{"HCASHARE_RDMA_DEVICES_RDMA_HCA_SHARED_DEVICES_A", "mlx5_0"},
           {"HCASHARE_RDMA_DEVICES_RDMA_VF_POOL_A", "mlx5_1"},
           {"PCIDEVICE_RDMA_VF_POOL_A", kRoceAddr}};
  CheckResult r = CheckPluginEnv(w.In());
  EXPECT_EQ(r.verdict, Verdict::kPass) << r.reason;
  EXPECT_THAT(r.reason, HasSubstr("HCASHARE_RDMA_DEVICES_RDMA_HCA_SHARED_DEVICES_A=mlx5_0"));
  EXPECT_THAT(r.reason, HasSubstr("HCASHARE_RDMA_DEVICES_RDMA_VF_POOL_A=mlx5_1"));
  // The VF's own resource variable must name the VF's RDMA device.
  w.env["HCASHARE_RDMA_DEVICES_RDMA_VF_POOL_A"] = "mlx5_0";
  r = CheckPluginEnv(w.In());
  EXPECT_EQ(r.verdict, Verdict::kFail);
  EXPECT_THAT(r.reason, HasSubstr("but HCASHARE_RDMA_DEVICES_RDMA_VF_POOL_A does not name mlx5_1"));
  w.env["HCASHARE_RDMA_DEVICES_RDMA_VF_POOL_A"] = "mlx5_7";
  r = CheckPluginEnv(w.In());
  EXPECT_EQ(r.verdict, Verdict::kFail);
  EXPECT_THAT(r.reason,
              HasSubstr("HCASHARE_RDMA_DEVICES_RDMA_VF_POOL_A names mlx5_7, which is not"));
  // NCCL_IB_HCA taken from one resource only: NCCL would leave the VF out.
  w.env["HCASHARE_RDMA_DEVICES_RDMA_VF_POOL_A"] = "mlx5_1";
  w.env["NCCL_IB_HCA"] = "=mlx5_0";
  r = CheckNcclIbHca(w.In());
  EXPECT_EQ(r.verdict, Verdict::kWarn);
  EXPECT_THAT(r.reason, HasSubstr("leaves out mlx5_1"));
  EXPECT_THAT(r.fix, HasSubstr("HCASHARE_RDMA_DEVICES_"));
  w.env["NCCL_IB_HCA"] = "=mlx5_0,mlx5_1";
  EXPECT_EQ(CheckNcclIbHca(w.In()).verdict, Verdict::kPass);
}

TEST(DoctorTest, ReportTextAndJson) {
  std::vector<CheckResult> results = {
      {"uverbs", Verdict::kPass, "ok", "", ""},
      {"memlock", Verdict::kFail, "too low", "raise it", ""},
      {"nccl-net", Verdict::kWarn, "socket", "unset it", ""},
  };
  EXPECT_EQ(FormatText(results),
            "PASS  uverbs    ok\n"
            "FAIL  memlock   too low\n"
            "                fix: raise it\n"
            "WARN  nccl-net  socket\n"
            "                fix: unset it\n"
            "doctor: 1 PASS, 1 WARN, 1 FAIL\n");
  auto j = ToJson(results);
  EXPECT_FALSE(j["ok"].get<bool>());
  EXPECT_EQ(j["summary"]["fail"], 1);
  EXPECT_EQ(j["checks"][1]["status"], "FAIL");
  EXPECT_TRUE(j["checks"][0]["fix"].is_null());
}

// The real libibverbs on this machine, which has no RDMA device: a clear FAIL.
TEST(DoctorRealTest, LibibverbsWithoutHardwareFails) {
  auto live = NewRootedHost("/");
  const hostfacts::HostSnapshot snap = ReadDoctorSnapshot(*live);
  if (!UverbsOwners(snap).empty()) GTEST_SKIP() << "this machine has RDMA devices";
  auto verbs = NewLibibverbs();
  World w;
  const DoctorInputs in{snap, *verbs, w.rdma, w.limits, {}};
  const CheckResult r = CheckLibibverbs(in);
  EXPECT_EQ(r.verdict, Verdict::kFail) << r.reason;
  // Either the library is missing, or it finds nothing: both say so and name the fallback.
  EXPECT_THAT(r.reason, AllOf(HasSubstr("ibv"), HasSubstr("NCCL will use NET/Socket")));
  EXPECT_EQ(CheckVerbsPorts(in).verdict, Verdict::kFail);
}

TEST(DoctorCliTest, FixtureHostExitCodeAndJson) {
  World w;
  MakeHealthy(&w);
  const std::string root = w.tmp.path() + "/host";
  auto text = testing::RunHcashare(w.tmp, {"doctor", "--host-root", root});
  // sysfs passes, but this process's libibverbs finds no hardware: non-zero exit.
  EXPECT_EQ(text.code, 1) << text.output;
  EXPECT_THAT(text.output, HasSubstr("PASS  uverbs"));
  EXPECT_THAT(text.output, HasSubstr("FAIL  libibverbs"));
  EXPECT_THAT(text.output, HasSubstr("fix: "));
  auto json = testing::RunHcashare(w.tmp, {"doctor", "--json", "--host-root", root});
  EXPECT_EQ(json.code, 1);
  auto doc = nlohmann::json::parse(json.output, nullptr, false);
  ASSERT_FALSE(doc.is_discarded()) << json.output;
  EXPECT_FALSE(doc["ok"].get<bool>());
  EXPECT_EQ(doc["checks"].size(), 15u);
  auto help = testing::RunHcashare(w.tmp, {"doctor", "--help"});
  EXPECT_EQ(help.code, 0);
  EXPECT_THAT(help.output, AllOf(HasSubstr("--json"), HasSubstr("--host-root")));
}

// The container runtime's CDI support, from its config under the host root (issue 37: on
// a runtime without CDI a DRA pod started without its devices, and nothing said so).
TEST(DoctorTest, RuntimeCdiReadsTheRuntimesConfig) {
  World w;
  const std::string etc = w.tmp.path() + "/host/etc";
  const auto containerd = [&](const std::string& toml) {
    std::filesystem::create_directories(etc + "/containerd");
    std::ofstream(etc + "/containerd/config.toml") << toml;
    return CheckRuntimeCdi(w.In());
  };
  CheckResult r = CheckRuntimeCdi(w.In());
  EXPECT_EQ(r.verdict, Verdict::kPass);
  EXPECT_THAT(r.reason, HasSubstr("no containerd or CRI-O config"));

  // containerd 1.7's way, as its docs write it.
  r = containerd(
      "version = 2\n[plugins.\"io.containerd.grpc.v1.cri\"]\n  enable_cdi = true\n"
      "  cdi_spec_dirs = [\"/etc/cdi\", \"/var/run/cdi\"]\n");
  EXPECT_EQ(r.verdict, Verdict::kPass) << r.reason;
  EXPECT_THAT(r.reason, HasSubstr("enable_cdi = true"));
  // A stock 1.x config (containerd config default of 1.6/1.7): no enable_cdi.
  r = containerd(
      "version = 2\n[plugins]\n  [plugins.\"io.containerd.grpc.v1.cri\"]\n"
      "    sandbox_image = \"registry.k8s.io/pause:3.8\"\n"
      "    [plugins.\"io.containerd.grpc.v1.cri\".containerd]\n      enable_cdi = true\n");
  EXPECT_EQ(r.verdict, Verdict::kWarn) << r.reason;  // the key in a sub-table does nothing
  EXPECT_THAT(r.reason, HasSubstr("does not set enable_cdi"));
  EXPECT_THAT(r.fix, HasSubstr("enable_cdi = true"));
  r = containerd("version = 2\n[plugins.'io.containerd.grpc.v1.cri']\nenable_cdi = false # off\n");
  EXPECT_EQ(r.verdict, Verdict::kWarn) << r.reason;
  EXPECT_THAT(r.reason, HasSubstr("enable_cdi = false"));
  // containerd 2.x: on by default.
  r = containerd(
      "version = 3\n[plugins.'io.containerd.cri.v1.runtime']\n  enable_selinux = false\n");
  EXPECT_EQ(r.verdict, Verdict::kPass) << r.reason;
  EXPECT_THAT(r.reason, HasSubstr("containerd 2.x config"));
  r = containerd("version = 2\nimports = [\"/etc/containerd/conf.d/*.toml\"]\n");
  EXPECT_EQ(r.verdict, Verdict::kWarn) << r.reason;
  EXPECT_THAT(r.reason, HasSubstr("imports other files"));

  std::filesystem::remove_all(etc + "/containerd");
  std::filesystem::create_directories(etc + "/crio/crio.conf.d");
  r = CheckRuntimeCdi(w.In());
  EXPECT_EQ(r.verdict, Verdict::kPass) << r.reason;
  EXPECT_THAT(r.reason, HasSubstr("CRI-O"));
}

}  // namespace
}  // namespace hcashare::doctor
