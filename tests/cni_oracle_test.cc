// The failure-path proof of issue 14: for every attachment mode, every fault point that
// ADD and DEL reach (cni/fault_points.h, enumerated, not sampled) is hit twice, once as an
// error return and once as SIGKILL, and the state-diff oracle (tests/cni_oracle.h) must
// find the node exactly as it was:
//   - an ADD that failed at a point leaves the snapshot of before the ADD;
//   - an ADD killed at a point, then the runtime's DEL, leaves the snapshot of before the
//     ADD; so does the kill followed by `hcashare cni-gc` (which releases an ADD that never
//     finished) and, separately, by the CNI GC verb with no valid attachments;
//   - a DEL that failed or was killed at a point keeps the attachment (nothing is
//     forgotten while the VF is away), and the retried DEL leaves the snapshot of before
//     the ADD.
// Every pod also has an eth0 of its own, as a real pod has: no outcome may touch it.
#include <signal.h>
#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <random>
#include <set>
#include <sstream>
#include <thread>

#include "cni/error.h"
#include "cni/fault_points.h"
#include "interop/pool_info.h"
#include "tests/cni_binary_fixture.h"
#include "tests/cni_oracle.h"

namespace hcashare::cni {
namespace {

using json = nlohmann::json;
using hcashare::testing::DiffSnapshots;
using hcashare::testing::OracleScope;
using hcashare::testing::Snapshot;
using hcashare::testing::TakeSnapshot;

// The attachment modes the oracle covers.
enum class Mode {
  kVf,           // a VF: MAC, MTU, host-local IPAM, a device-info file
  kVfPfOptions,  // a VF with every PF-side option (file-backed PF VF table)
  kVfRdma,       // a VF whose RDMA device moves with it (file-backed RDMA subsystem)
  kVfGuid,       // an InfiniBand VF given a GUID: set on the PF, applied by a rebind
  kDpdk,         // a DPDK VF: PF-side settings only, IPAM reported
  kIpamFailure,  // a VF whose IPAM plugin fails: ADD must fail and change nothing
  kMacvlan,      // a shared pool's macvlan child on a host netdev
  kIpoib,        // an IPoIB child of a non-IB parent: ADD must fail and change nothing
  kSecondInPod,  // a second VF attachment in a pod that already has one
  kChained,      // chained after another plugin's prevResult
};

std::string ModeName(const ::testing::TestParamInfo<Mode>& info) {
  switch (info.param) {
    case Mode::kVf:
      return "Vf";
    case Mode::kVfPfOptions:
      return "VfWithEveryPfOption";
    case Mode::kVfRdma:
      return "VfWithRdmaDevice";
    case Mode::kVfGuid:
      return "InfinibandVfWithGuid";
    case Mode::kDpdk:
      return "DpdkVf";
    case Mode::kIpamFailure:
      return "IpamFailure";
    case Mode::kMacvlan:
      return "Macvlan";
    case Mode::kIpoib:
      return "IpoibOnNonIbParent";
    case Mode::kSecondInPod:
      return "SecondAttachmentInPod";
    case Mode::kChained:
      return "ChainedPrevResult";
  }
  return "?";
}

class CniOracleTest : public CniPodTest, public ::testing::WithParamInterface<Mode> {
 protected:
  void SetUp() override {
    CniPodTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    GivePodInterface(pod_name_, "eth0", "10.244.1.5/24");
    fs::create_directories(tmp_.path() + "/pf");
    fs::create_directories(tmp_.path() + "/rdma");
    ASSERT_NO_FATAL_FAILURE(Prepare(GetParam()));
  }

  // Builds conf_ (and whatever the mode needs on the node) for `mode`.
  void Prepare(Mode mode) {
    const std::string vf = AddVf(2);
    conf_ = Conf("1.1.0", vf);
    conf_["mac"] = "02:00:00:00:00:5a";
    conf_["mtu"] = 1400;
    conf_["ipam"] = HostLocal();
    conf_["runtimeConfig"] = {{"CNIDeviceInfoFile", tmp_.path() + "/devinfo/net1.json"}};
    switch (mode) {
      case Mode::kVf:
      case Mode::kIpamFailure:
        if (mode == Mode::kIpamFailure) conf_["ipam"] = {{"type", "no-such-ipam"}};
        break;
      case Mode::kVfPfOptions:
        UseTestHost();
        WriteVfTable({{"pf0/0",
                       {{"mac", "00:00:00:00:00:00"},
                        {"vlan", 0},
                        {"qos", 0},
                        {"vlanProto", "802.1q"},
                        {"spoofchk", true},
                        {"trust", false},
                        {"linkState", "auto"},
                        {"minTxRate", 0},
                        {"maxTxRate", 0}}}});
        conf_.update({{"vlan", 100},
                      {"vlanQoS", 3},
                      {"vlanProto", "802.1ad"},
                      {"spoofchk", "off"},
                      {"trust", "on"},
                      {"link_state", "disable"},
                      {"min_tx_rate", 10},
                      {"max_tx_rate", 100}});
        break;
      case Mode::kVfRdma: {
        UseTestHost();
        fake::SimPciFunction with_rdma;
        with_rdma.address = "0000:5e:00.3";
        with_rdma.physfn = "0000:5e:00.0";
        const std::string veth = Unique("hb");
        ASSERT_TRUE(
            Sh("ip -n " + host_ns_ + " link add " + veth + " type veth peer name " + veth + "p"));
        with_rdma.netdevs = {veth};
        with_rdma.rdma_device = "mlx5_7";
        ASSERT_TRUE(node_->AddPciFunction(with_rdma).ok());
        AllocateToPod(with_rdma.address);
        struct stat host {};
        ASSERT_EQ(::stat(("/var/run/netns/" + host_ns_).c_str(), &host), 0);
        std::ofstream(tmp_.path() + "/rdma/rdma.json")
            << json{{"mode", "exclusive"},
                    {"devices", {{"mlx5_7", static_cast<uint64_t>(host.st_ino)}}}}
                   .dump(1);
        conf_["deviceID"] = with_rdma.address;
        conf_["rdma"] = "move";
        break;
      }
      case Mode::kVfGuid: {
        UseTestHost();
        std::string pf;
        // Its GUIDs before: set and applied (a restore to anything else would show).
        const std::string before = "02:00:00:00:00:00:00:01";
        // The driver model's VF (tests/support/vf_driver_model.h): a rebind destroys its
        // netdev and RDMA device and makes new ones, ib<N> (renamed back to its host name)
        // and mlx5_<lowest free> (mlx5_0 again: the node has no other).
        const std::string vf = AddIbVf(&pf, before, 1, "mlx5_0");
        renumbered_.insert("ns host link " + vf_netdevs_.back());
        WriteVfTable({{pf + "/0",
                       {{"nodeGuid", before},
                        {"portGuid", before},
                        {"boundNodeGuid", before},
                        {"boundPortGuid", before},
                        {"rdma", true}}}});
        struct stat host {};
        ASSERT_EQ(::stat(("/var/run/netns/" + host_ns_).c_str(), &host), 0);
        std::ofstream(tmp_.path() + "/rdma/rdma.json")
            << json{{"mode", "exclusive"},
                    {"devices", {{"mlx5_0", static_cast<uint64_t>(host.st_ino)}}}}
                   .dump(1);
        conf_["deviceID"] = vf;
        conf_["rdma"] = "move";
        conf_.erase("mac");
        conf_["guid"] = "02:00:00:00:00:00:00:5a";
        break;
      }
      case Mode::kDpdk: {
        UseTestHost();
        fake::SimPciFunction dpdk;
        dpdk.address = "0000:5e:00.4";
        dpdk.physfn = "0000:5e:00.0";
        dpdk.driver = "vfio-pci";
        ASSERT_TRUE(node_->AddPciFunction(dpdk).ok());
        AllocateToPod(dpdk.address);
        WriteVfTable({{"pf0/1", {{"vlan", 0}, {"qos", 0}, {"vlanProto", "802.1q"}}}});
        conf_["deviceID"] = dpdk.address;
        conf_.erase("mtu");
        conf_.erase("mac");
        conf_["vlan"] = 200;
        break;
      }
      case Mode::kMacvlan:
      case Mode::kIpoib: {
        ASSERT_TRUE(Sh("ip -n " + host_ns_ + " link add hcamaster type veth peer name hcamp"));
        ASSERT_TRUE(Sh("ip -n " + host_ns_ + " link set hcamaster up"));
        conf_.erase("deviceID");
        conf_.erase("runtimeConfig");
        conf_["mode"] = mode == Mode::kMacvlan ? "macvlan" : "ipoib";
        conf_["master"] = "hcamaster";
        conf_["resourceName"] = "rdma/hca_shared_devices_a";
        // The pod holds a share of the pool, whose HCA hcamaster is.
        AllocateToPod("0", "rdma/hca_shared_devices_a");
        PoolInfo pool;
        pool.resource = "rdma/hca_shared_devices_a";
        pool.hcas = {{"0000:5e:00.0", {"hcamaster"}, {"mlx5_0"}, 0, true}};
        fs::create_directories(PoolInfoDir());
        std::ofstream(PoolInfoDir() + "/" + PoolInfoFileName(pool.resource))
            << PoolInfoToJson(pool);
        break;
      }
      case Mode::kSecondInPod: {
        json first = Conf("1.1.0", AddVf(3));
        first["ipam"] = HostLocal();
        CniRun add = Run("ADD", pod_, first, "net9", "first");
        ASSERT_EQ(add.exit_code, 0) << add.raw << add.err;
        break;
      }
      case Mode::kChained:
        conf_["prevResult"] = {{"cniVersion", "1.1.0"},
                               {"interfaces", {{{"name", "eth0"}, {"sandbox", pod_}}}},
                               {"ips", {{{"address", "10.244.1.5/24"}, {"interface", 0}}}}};
        break;
    }
  }

  // Runs the plugin's code on the file-backed PF VF table and RDMA subsystem.
  void UseTestHost() {
    binary_ = "hcashare-cni-testhost";
    base_env_ = {"HCASHARE_TEST_VF_TABLE=" + tmp_.path() + "/pf/vf-table.json",
                 "HCASHARE_TEST_RDMA=" + tmp_.path() + "/rdma/rdma.json"};
    std::ofstream(tmp_.path() + "/rdma/rdma.json")
        << json{{"mode", "shared"}, {"devices", json::object()}}.dump(1);
  }
  void WriteVfTable(const json& table) {
    std::ofstream(tmp_.path() + "/pf/vf-table.json") << table.dump(1);
  }

  OracleScope Scope() const {
    return {{{"host", host_ns_}, {"pod", pod_name_}},
            {{"state", StateDir()},
             {"ipam", IpamDir()},
             {"devinfo", tmp_.path() + "/devinfo"},
             {"pf-vf-table", tmp_.path() + "/pf"},
             {"rdma", tmp_.path() + "/rdma"}},
            renumbered_};
  }

  // Expects the node to be as in `want`; `what` names the case in the failure message.
  void ExpectSnapshot(const Snapshot& want, const std::string& what) {
    const std::string diff = DiffSnapshots(want, TakeSnapshot(Scope()));
    EXPECT_EQ(diff, "") << what;
  }

  // The fault points one clean ADD and DEL reach, in order, split by verb.
  std::vector<std::string> ReachedPoints(bool add_must_succeed) {
    const std::vector<std::string> list = {"HCASHARE_CNI_CRASH_LIST=1"};
    CniRun add = Run("ADD", pod_, conf_, "net1", "probe", "", list);
    CniRun del = Run("DEL", pod_, conf_, "net1", "probe", "", list);
    if (add_must_succeed) {
      EXPECT_EQ(add.exit_code, 0) << add.raw << add.err;
    }
    EXPECT_EQ(del.exit_code, 0) << del.raw << del.err;
    return CrashPointsIn(add.err + del.err);
  }

  // `hcashare cni-gc` over the state dir, in the host namespace (the test host's own
  // `cni-gc` when the mode uses the file backends: the same cni::RecoverAttachments).
  void CniGc() {
    std::vector<std::string> argv = {"ip", "netns", "exec", host_ns_};
    const std::string dir = testing::BinDir();
    if (binary_ == "hcashare-cni") {
      argv.insert(argv.end(), {dir + "/hcashare", "cni-gc", "--state-dir", StateDir(),
                               "--host-root", tmp_.path() + "/host", "--cni-path", kIpamDir});
    } else {
      argv.insert(argv.end(),
                  {dir + "/" + binary_, "cni-gc", StateDir(), tmp_.path() + "/host", kIpamDir});
    }
    std::vector<std::string> env = {"PATH=/usr/sbin:/usr/bin:/sbin:/bin", NodeEnv()};
    env.insert(env.end(), base_env_.begin(), base_env_.end());
    auto out = Execute("/usr/sbin/ip", argv, env, "", std::chrono::milliseconds(30000));
    ASSERT_TRUE(out.ok());
    EXPECT_EQ(out->exit_code, 0) << out->out << out->err;
  }

  // The CNI GC verb with no valid attachment of ours (the runtime's garbage collection).
  void GcVerb(const std::string& ctr) {
    json gc = conf_;
    // The second-in-pod mode's first attachment is one the runtime still knows.
    gc["cni.dev/valid-attachments"] = {{{"containerID", "first"}, {"ifname", "net9"}}};
    CniRun run = Run("GC", "", gc, "net1", ctr);
    EXPECT_EQ(run.exit_code, 0) << run.raw << run.err;
  }

  json conf_;
  std::set<std::string> renumbered_;  // links a rebind recreates (OracleScope)
};

// The round trip, then every point of ADD: error, and SIGKILL followed by each recovery.
TEST_P(CniOracleTest, EveryAddStepFailedOrKilledRestoresTheNode) {
  const bool add_fails = GetParam() == Mode::kIpamFailure || GetParam() == Mode::kIpoib;
  const Snapshot clean = TakeSnapshot(Scope());
  const size_t state_files = StateFiles();  // the second-in-pod mode's first attachment
  const std::vector<std::string> points = ReachedPoints(!add_fails);
  ExpectSnapshot(clean, "after a clean ADD and DEL");
  int tried = 0;
  for (const std::string& point : points) {
    if (point.rfind("add:", 0) != 0) continue;
    SCOPED_TRACE(point);
    ++tried;
    CniRun failed = Run("ADD", pod_, conf_, "net1", "e" + std::to_string(tried), "",
                        {"HCASHARE_CNI_FAIL_AT=" + point});
    EXPECT_EQ(failed.exit_code, 1) << failed.raw << failed.err;
    EXPECT_EQ(failed.out.value("code", -1), kErrIo) << failed.raw;
    ExpectSnapshot(clean, "an ADD failed at " + point);
    for (const char* recovery : {"DEL", "cni-gc", "GC"}) {
      const std::string ctr = "k" + std::to_string(tried) + recovery;
      CniRun killed = Run("ADD", pod_, conf_, "net1", ctr, "", {"HCASHARE_CNI_CRASH_AT=" + point});
      EXPECT_EQ(killed.exit_code, 128 + SIGKILL) << killed.raw;
      if (std::string(recovery) == "DEL") {
        CniRun del = Run("DEL", pod_, conf_, "net1", ctr);
        EXPECT_EQ(del.exit_code, 0) << del.raw << del.err;
      } else if (std::string(recovery) == "GC") {
        GcVerb(ctr);
      } else {
        CniGc();
        if (point == "add:done") {
          // The attachment is complete as far as the node can tell (the runtime may
          // have read the result): cni-gc keeps it while the pod lives; DEL releases it.
          EXPECT_EQ(StateFiles(), state_files + (GetParam() == Mode::kMacvlan ? 1u : 2u));
          EXPECT_EQ(Run("DEL", pod_, conf_, "net1", ctr).exit_code, 0);
        }
      }
      ExpectSnapshot(clean, "an ADD killed at " + point + ", then " + recovery);
    }
    if (HasFailure()) break;  // one broken point is enough to read
  }
  EXPECT_GT(tried, 0);
  std::printf("[ oracle ] %s: %d ADD points x {error, kill+DEL, kill+cni-gc, kill+GC}\n",
              ModeName({GetParam(), 0}).c_str(), tried);
}

// Every point of DEL: error, then the retried DEL; SIGKILL, then the retried DEL or GC.
TEST_P(CniOracleTest, EveryDelStepFailedOrKilledThenRetriedRestoresTheNode) {
  if (GetParam() == Mode::kIpamFailure || GetParam() == Mode::kIpoib) {
    GTEST_SKIP() << "ADD never succeeds in this mode: there is no DEL to interrupt";
  }
  const Snapshot clean = TakeSnapshot(Scope());
  int tried = 0;
  for (const std::string& point : ReachedPoints(true)) {
    if (point.rfind("del:", 0) != 0) continue;
    SCOPED_TRACE(point);
    ++tried;
    for (const char* how : {"error", "kill+DEL", "kill+GC"}) {
      std::string ctr = "d" + std::to_string(tried) + how;
      std::replace(ctr.begin(), ctr.end(), '+', '-');
      CniRun add = Run("ADD", pod_, conf_, "net1", ctr);
      ASSERT_EQ(add.exit_code, 0) << add.raw << add.err;
      const bool error = std::string(how) == "error";
      CniRun del =
          Run("DEL", pod_, conf_, "net1", ctr, "",
              {std::string(error ? "HCASHARE_CNI_FAIL_AT=" : "HCASHARE_CNI_CRASH_AT=") + point});
      EXPECT_EQ(del.exit_code, error ? 1 : 128 + SIGKILL) << del.raw << del.err;
      if (point != "del:state-removed") {
        EXPECT_GE(StateFiles(), 1u) << "a DEL that did not finish kept the attachment";
      }
      if (std::string(how) == "kill+GC") {
        GcVerb(ctr);
      } else {
        CniRun retry = Run("DEL", pod_, conf_, "net1", ctr);
        EXPECT_EQ(retry.exit_code, 0) << retry.raw << retry.err;
      }
      ExpectSnapshot(clean, std::string("a DEL ") + how + " at " + point);
    }
    if (HasFailure()) break;
  }
  EXPECT_GT(tried, 0);
  std::printf("[ oracle ] %s: %d DEL points x {error, kill+DEL, kill+GC}\n",
              ModeName({GetParam(), 0}).c_str(), tried);
}

// The driver model's injected bind failure (tests/support/vf_driver_model.h), in the
// InfinibandVfWithGuid mode: every bind of the VF fails (a probe that fails, a VF another
// driver claimed) during ADD, then during DEL. The failed verb keeps the attachment (the
// VF's driver is in it), and once the cause is gone each recovery leaves the node as before.
TEST_P(CniOracleTest, AFailingBindDuringAddOrDelIsRecovered) {
  if (GetParam() != Mode::kVfGuid) GTEST_SKIP() << "only the GUID mode rebinds";
  const Snapshot clean = TakeSnapshot(Scope());
  const auto fail_binds = [&](bool fail) {
    std::ifstream in(tmp_.path() + "/pf/vf-table.json");
    json table = json::parse(in, nullptr, false);
    for (auto& [key, entry] : table.items()) {
      (void)key;
      if (fail) {
        entry["bindFailures"] = 1000;
      } else {
        entry.erase("bindFailures");
      }
    }
    WriteVfTable(table);
  };
  for (const char* recovery : {"DEL", "cni-gc", "GC"}) {
    SCOPED_TRACE(std::string("ADD, then ") + recovery);
    const std::string ctr = std::string("b") + recovery;
    fail_binds(true);
    CniRun add = Run("ADD", pod_, conf_, "net1", ctr);
    EXPECT_EQ(add.exit_code, 1) << add.raw << add.err;
    EXPECT_EQ(add.out.value("code", -1), kErrHostSetupFailed) << add.raw;
    EXPECT_GE(StateFiles(), 1u) << "the attachment that can bind the VF again is kept";
    fail_binds(false);
    if (std::string(recovery) == "DEL") {
      CniRun del = Run("DEL", pod_, conf_, "net1", ctr);
      EXPECT_EQ(del.exit_code, 0) << del.raw << del.err;
    } else if (std::string(recovery) == "GC") {
      GcVerb(ctr);
    } else {
      CniGc();
    }
    ExpectSnapshot(clean, std::string("a failed bind in ADD, then ") + recovery);
  }
  for (const char* recovery : {"DEL", "GC"}) {
    SCOPED_TRACE(std::string("DEL, then ") + recovery);
    const std::string ctr = std::string("c") + recovery;
    CniRun add = Run("ADD", pod_, conf_, "net1", ctr);
    ASSERT_EQ(add.exit_code, 0) << add.raw << add.err;
    fail_binds(true);
    CniRun del = Run("DEL", pod_, conf_, "net1", ctr);
    EXPECT_EQ(del.exit_code, 1) << del.raw << del.err;
    EXPECT_EQ(del.raw.find("another namespace"), std::string::npos) << del.raw;
    EXPECT_GE(StateFiles(), 1u) << "a DEL that did not finish kept the attachment";
    fail_binds(false);
    if (std::string(recovery) == "GC") {
      GcVerb(ctr);
    } else {
      CniRun retry = Run("DEL", pod_, conf_, "net1", ctr);
      EXPECT_EQ(retry.exit_code, 0) << retry.raw << retry.err;
    }
    ExpectSnapshot(clean, std::string("a failed bind in DEL, then ") + recovery);
  }
}

// The points each mode reaches are known ones (kFaultPoints), in the table's order; every
// point of the table is reached by some mode but the ones that need hardware this fixture
// does not have (none, with the file-backed PF and RDMA subsystem).
TEST_P(CniOracleTest, ReachedPointsAreKnownAndInOrder) {
  const bool add_fails = GetParam() == Mode::kIpamFailure || GetParam() == Mode::kIpoib;
  size_t last = 0;
  for (const std::string& label : ReachedPoints(!add_fails)) {
    const std::string point = label.substr(0, label.find('#'));
    const auto it = std::find(kFaultPoints.begin(), kFaultPoints.end(), point);
    ASSERT_NE(it, kFaultPoints.end()) << point << " is not in kFaultPoints";
    const size_t index = static_cast<size_t>(it - kFaultPoints.begin());
    EXPECT_GE(index, last) << point << " reached out of the table's order";
    last = index;
  }
}

// Cross-process contention: 12 processes at a time ADD and DEL random VFs (4) into
// random pods (6, each with an eth0 of its own) under two interface names, so that ADDs
// collide on a device, on a name in a pod, and on the lock. An ADD that loses must say
// why (101 busy, 4 name taken, 11 lock wait), and the runtime's DEL after it must be
// harmless; at the end the oracle finds the node exactly as before.
TEST_F(CniBinaryTest, ContendedAddDelAcrossProcessesLeavesTheNodeAsItWas) {
  if (!fs::exists(std::string(kIpamDir) + "/host-local")) GTEST_SKIP() << "needs host-local";
  constexpr int kVfs = 4, kPods = 6, kWorkers = 12, kRounds = 15;
  std::vector<std::string> vfs, pods;
  OracleScope scope{{{"host", host_ns_}}, {{"state", StateDir()}, {"ipam", IpamDir()}}, {}};
  for (int i = 0; i < kVfs; ++i) vfs.push_back(AddVf(2 + i));
  for (int i = 0; i < kPods; ++i) {
    pods.push_back(AddPod());
    GivePodInterface(netns_.back(), "eth0", "10.244.1." + std::to_string(10 + i) + "/24");
    scope.netns["pod" + std::to_string(i)] = netns_.back();
  }
  const Snapshot before = TakeSnapshot(scope);
  std::atomic<int> attached{0}, lost{0};
  std::vector<std::thread> workers;
  for (int w = 0; w < kWorkers; ++w) {
    workers.emplace_back([&, w] {
      std::mt19937 rng(static_cast<unsigned>(1000 + w));
      for (int r = 0; r < kRounds; ++r) {
        json conf = Conf("1.1.0", vfs[rng() % kVfs]);
        conf["ipam"] = HostLocal();
        const std::string& pod = pods[rng() % kPods];
        const std::string ifname = rng() % 2 ? "net1" : "net2";
        const std::string ctr = "w" + std::to_string(w) + "r" + std::to_string(r);
        CniRun add = Run("ADD", pod, conf, ifname, ctr);
        if (add.exit_code == 0) {
          ++attached;
        } else {
          ++lost;
          const int code = add.out.value("code", -1);
          EXPECT_TRUE(code == kErrDeviceBusy || code == kErrInvalidEnv || code == kErrTryAgainLater)
              << add.raw << add.err;
        }
        CniRun del = Run("DEL", pod, conf, ifname, ctr);  // the runtime's DEL, either way
        EXPECT_EQ(del.exit_code, 0) << del.raw << del.err;
      }
    });
  }
  for (auto& t : workers) t.join();
  EXPECT_EQ(DiffSnapshots(before, TakeSnapshot(scope)), "");
  EXPECT_GT(attached.load(), 0);
  EXPECT_GT(lost.load(), 0) << "no collision happened: the test proved nothing";
  std::printf("[ oracle ] contention: %d ADDs attached, %d lost a race, node unchanged\n",
              attached.load(), lost.load());
}

INSTANTIATE_TEST_SUITE_P(Modes, CniOracleTest,
                         ::testing::Values(Mode::kVf, Mode::kVfPfOptions, Mode::kVfRdma,
                                           Mode::kVfGuid, Mode::kDpdk, Mode::kIpamFailure,
                                           Mode::kMacvlan, Mode::kIpoib, Mode::kSecondInPod,
                                           Mode::kChained),
                         ModeName);

}  // namespace
}  // namespace hcashare::cni
