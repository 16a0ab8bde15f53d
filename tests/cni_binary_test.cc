// hcashare-cni as a process: the CNI exec protocol end to end (environment, stdin, stdout,
// exit code) for every spec version, a pod-resources lookup through the fake kubelet,
// `hcashare cni-gc`, peak RSS per invocation, and 200 parallel ADD/DEL cycles over 20
// network namespaces. Hostile input is in cni_hostile_test.cc, crashes in
// cni_crash_test.cc, the long soak in cni_soak_test.cc.
#include <atomic>
#include <csignal>
#include <thread>

#include "testing/fake_podresources.h"
#include "tests/cni_binary_fixture.h"

namespace hcashare::cni {
namespace {

using json = nlohmann::json;
using std::chrono::milliseconds;

// ADD, CHECK (from 0.4.0) and DEL in every supported version, each with its result shape.
TEST_F(CniBinaryTest, AddCheckDelPerSpecVersion) {
  const std::string device = AddVf(2);
  for (const std::string version : {"0.3.0", "0.3.1", "0.4.0", "1.0.0", "1.1.0"}) {
    SCOPED_TRACE(version);
    const std::string netns = AddPod();
    json conf = Conf(version, device);
    conf["ipam"] = HostLocal();
    CniRun add = Run("ADD", netns, conf);
    ASSERT_EQ(add.exit_code, 0) << add.raw;
    EXPECT_EQ(add.out["cniVersion"], version);
    EXPECT_EQ(add.out["interfaces"][0]["name"], "net1");
    EXPECT_EQ(add.out["interfaces"][0]["sandbox"], netns);
    ASSERT_EQ(add.out["ips"].size(), 1u);
    EXPECT_EQ(add.out["ips"][0].contains("version"), version < "1.0.0") << add.raw;
    EXPECT_EQ(add.out["interfaces"][0].contains("pciID"), version == "1.1.0") << add.raw;
    if (version >= "0.4.0") {
      json check = conf;
      check["prevResult"] = add.out;
      CniRun ok = Run("CHECK", netns, check);
      EXPECT_EQ(ok.exit_code, 0) << ok.raw;
    }
    CniRun del = Run("DEL", netns, conf);
    EXPECT_EQ(del.exit_code, 0) << del.raw;
    EXPECT_TRUE(del.raw.empty()) << "DEL prints nothing on success";
    EXPECT_EQ(StateFiles(), 0u);
  }
}

// Issue 36: the real Multus thin plugin sends its own IgnoreUnknown and pod keys, then the
// runtime's (which repeat every one of them). ADD, CHECK and DEL all take it, as libcni's
// plugins do; the same string naming another namespace is refused before anything changes.
TEST_F(CniBinaryTest, TheMultusThinPluginsCniArgsAreAccepted) {
  const std::string device = AddVf(2);
  const std::string netns = AddPod();
  const std::string multus =
      "CNI_ARGS=IgnoreUnknown=true;K8S_POD_NAMESPACE=ns;K8S_POD_NAME=pod-a;"
      "K8S_POD_INFRA_CONTAINER_ID=ctr1;K8S_POD_UID=uid-a;"
      "IgnoreUnknown=1;K8S_POD_NAMESPACE=ns;K8S_POD_NAME=pod-a;"
      "K8S_POD_INFRA_CONTAINER_ID=ctr1;K8S_POD_UID=uid-a";
  const json conf = Conf("1.0.0", device);
  CniRun add = Run("ADD", netns, conf, "net1", "ctr1", "", {multus});
  ASSERT_EQ(add.exit_code, 0) << add.raw;
  EXPECT_EQ(add.out["interfaces"][0]["sandbox"], netns);
  json check = conf;
  check["prevResult"] = add.out;
  CniRun ok = Run("CHECK", netns, check, "net1", "ctr1", "", {multus});
  EXPECT_EQ(ok.exit_code, 0) << ok.raw;
  CniRun del = Run("DEL", netns, conf, "net1", "ctr1", "", {multus});
  EXPECT_EQ(del.exit_code, 0) << del.raw;
  EXPECT_EQ(StateFiles(), 0u);

  CniRun two = Run("ADD", netns, conf, "net1", "ctr2", "", {multus + ";K8S_POD_NAMESPACE=other"});
  EXPECT_EQ(two.exit_code, 1);
  EXPECT_EQ(two.out["code"], kErrInvalidNetConf) << two.raw;
  EXPECT_NE(two.raw.find("CNI_ARGS names two pods"), std::string::npos) << two.raw;
  EXPECT_EQ(StateFiles(), 0u);
}

TEST_F(CniBinaryTest, VersionAndStatus) {
  CniRun v = Run("VERSION", "", json(), "net1", "ctr1", R"({"cniVersion":"1.0.0"})");
  ASSERT_EQ(v.exit_code, 0);
  EXPECT_EQ(v.out["supportedVersions"], json::array({"0.3.0", "0.3.1", "0.4.0", "1.0.0", "1.1.0"}));
  json conf = Conf("1.1.0", "0000:5e:00.2");
  CniRun status = Run("STATUS", "", conf);
  EXPECT_EQ(status.exit_code, 0) << status.raw;
}

// Standalone use: no deviceID, a resourceName, and the pod-resources API of the (fake)
// kubelet; two attachments of one resource get different devices.
TEST_F(CniBinaryTest, ResourceNameLookupThroughPodResources) {
  const std::string a = AddVf(2);
  const std::string b = AddVf(3);
  fake::FakePodResources kubelet(tmp_.path() + "/kubelet/pod-resources/kubelet.sock");
  ASSERT_TRUE(kubelet.Start().ok());
  kubelet.AddPod("ns", "pod-a", "uid-a", {{"main", {{"rdma/vf_pool_a", {a, b}, {0, 1}}}}});
  kubelet.SetGetMode(fake::FakePodResources::GetMode::kDisabled);  // exercises List
  const std::string netns = AddPod();
  json conf = Conf("1.0.0", "");
  conf.erase("deviceID");
  conf["resourceName"] = "rdma/vf_pool_a";
  CniRun first = Run("ADD", netns, conf, "net1");
  ASSERT_EQ(first.exit_code, 0) << first.raw;
  CniRun second = Run("ADD", netns, conf, "net2");
  ASSERT_EQ(second.exit_code, 0) << second.raw;
  CniRun third = Run("ADD", netns, conf, "net3");
  EXPECT_EQ(third.out["code"], 101) << third.raw;
  conf["resourceName"] = "rdma/other";
  CniRun missing = Run("ADD", netns, conf, "net4");
  EXPECT_EQ(missing.out["code"], 100);
  EXPECT_EQ(missing.out["msg"],
            "pod ns/pod-a has no devices of rdma/other (resources present: rdma/vf_pool_a (2)); "
            "does the pod request it and does the NAD carry the "
            "k8s.v1.cni.cncf.io/resourceName annotation?");
  conf["resourceName"] = "rdma/vf_pool_a";
  EXPECT_EQ(Run("DEL", netns, conf, "net1").exit_code, 0);
  EXPECT_EQ(Run("DEL", netns, conf, "net2").exit_code, 0);
  EXPECT_EQ(StateFiles(), 0u);
}

// `hcashare cni-gc` after a pod's namespace vanished without a DEL (as after a reboot).
TEST_F(CniBinaryTest, CniGcReleasesAttachmentsOfVanishedPods) {
  const std::string device = AddVf(2);
  const std::string netns = AddPod();
  ASSERT_EQ(Run("ADD", netns, Conf("1.0.0", device)).exit_code, 0);
  ASSERT_TRUE(Sh("ip netns del " + netns_.back()));
  netns_.pop_back();
  auto dry = CniGc(/*dry_run=*/true);
  ASSERT_TRUE(dry.ok());
  EXPECT_EQ(dry->exit_code, 0) << dry->out << dry->err;
  EXPECT_NE(dry->out.find("stale    ctr1/net1 (" + device + ")"), std::string::npos) << dry->out;
  EXPECT_EQ(StateFiles(), 2u);
  auto done = CniGc(/*dry_run=*/false);
  ASSERT_TRUE(done.ok());
  EXPECT_EQ(done->exit_code, 0) << done->out << done->err;
  EXPECT_NE(done->out.find("released ctr1/net1"), std::string::npos) << done->out;
  EXPECT_EQ(StateFiles(), 0u);
}

// `hcashare cni-gc` leaves an ADD that is still running alone: its state has no result yet,
// like a crashed ADD's, but the ADD holds its running mark. (It used to wait for the
// device's lock and then undo the ADD that had just succeeded.)
TEST_F(CniBinaryTest, CniGcLeavesARunningAddAlone) {
  const std::string device = AddVf(2);
  const std::string netns = AddPod();
  // A crashed ADD's leftovers: a state without a result and the owner marker.
  CniRun add = Run("ADD", netns, Conf("1.0.0", device), "net1", "ctr1", "",
                   {"HCASHARE_CNI_CRASH_AT=add:owner-marked"});
  ASSERT_EQ(add.exit_code, 128 + SIGKILL) << add.raw << add.err;
  ASSERT_EQ(StateFiles(), 2u);
  {
    // An ADD of ctr1/net1 running now, as far as anyone can tell.
    auto running = cni::StateStore(StateDir()).MarkAddRunning("ctr1", "net1");
    ASSERT_TRUE(running.ok()) << running.status().ToString();
    auto kept = CniGc(/*dry_run=*/false);
    ASSERT_TRUE(kept.ok());
    EXPECT_EQ(kept->exit_code, 0) << kept->out << kept->err;
    EXPECT_NE(kept->out.find("keep     ctr1/net1"), std::string::npos) << kept->out;
    EXPECT_EQ(StateFiles(), 2u);
  }
  // Once nobody holds it, the ADD is one that crashed: released.
  auto released = CniGc(/*dry_run=*/false);
  ASSERT_TRUE(released.ok());
  EXPECT_EQ(released->exit_code, 0) << released->out << released->err;
  EXPECT_NE(released->out.find("released ctr1/net1"), std::string::npos) << released->out;
  EXPECT_EQ(StateFiles(), 0u);
}

// A SIGKILLed ADD leaves the lock file of its mark; the runtime's DEL then removes the
// state, not that file: one more per killed ADD, for ever. cni-gc removes the lock files
// nobody holds, and keeps the one an ADD running now holds (this test holds it: the race
// rule of common/lock_file.h, made deterministic), and the device locks.
TEST_F(CniBinaryTest, CniGcRemovesLockFilesOfKilledAdds) {
  const std::string device = AddVf(2);
  const std::string netns = AddPod();
  const json conf = Conf("1.0.0", device);
  CniRun add =
      Run("ADD", netns, conf, "net1", "ctr1", "", {"HCASHARE_CNI_CRASH_AT=add:owner-marked"});
  ASSERT_EQ(add.exit_code, 128 + SIGKILL) << add.raw << add.err;
  CniRun del = Run("DEL", netns, conf);
  ASSERT_EQ(del.exit_code, 0) << del.raw << del.err;
  ASSERT_EQ(StateFiles(), 0u);
  const std::string killed = StateDir() + "/locks/add-ctr1-net1.lock";
  const std::string running = StateDir() + "/locks/add-ctr2-net1.lock";
  const std::string device_lock = StateDir() + "/locks/" + device + ".lock";
  ASSERT_TRUE(fs::exists(killed)) << "the killed ADD's lock file is left";
  auto mark = cni::StateStore(StateDir()).MarkAddRunning("ctr2", "net1");
  ASSERT_TRUE(mark.ok()) << mark.status().ToString();
  ASSERT_TRUE(fs::exists(running));

  auto dry = CniGc(/*dry_run=*/true);
  ASSERT_TRUE(dry.ok());
  EXPECT_EQ(dry->exit_code, 0) << dry->out << dry->err;
  EXPECT_NE(dry->out.find("stale    lock file " + killed), std::string::npos) << dry->out;
  EXPECT_TRUE(fs::exists(killed));
  auto done = CniGc(/*dry_run=*/false);
  ASSERT_TRUE(done.ok());
  EXPECT_EQ(done->exit_code, 0) << done->out << done->err;
  EXPECT_NE(done->out.find("removed  lock file " + killed), std::string::npos) << done->out;
  EXPECT_EQ(done->out.find(running), std::string::npos) << done->out;
  EXPECT_FALSE(fs::exists(killed));
  EXPECT_TRUE(fs::exists(running)) << "held: its ADD is running";
  EXPECT_TRUE(fs::exists(device_lock)) << "device locks are not collected";
  // The held mark still works as one: a second ADD of ctr2/net1 would see it running.
  EXPECT_TRUE(cni::StateStore(StateDir()).IsAddRunning("ctr2", "net1").value_or(false));
}

// Peak RSS of one ADD and one DEL below 10 MiB. The figure is wait4's ru_maxrss of the
// `ip netns exec` process, which execs the binary: the larger of the two. Without IPAM,
// whose plugin (host-local, a Go binary) would count too.
TEST_F(CniBinaryTest, PeakRssPerInvocationBelow10MiB) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "a sanitizer's shadow memory and the shared libraries it needs are not "
                  "the plugin's footprint; measured in the release build";
#endif
  constexpr long kLimitKib = 10 * 1024;
  const std::string device = AddVf(2);
  const std::string netns = AddPod();
  const json conf = Conf("1.0.0", device);
  CniRun add = Run("ADD", netns, conf);
  ASSERT_EQ(add.exit_code, 0) << add.raw;
  CniRun del = Run("DEL", netns, conf);
  ASSERT_EQ(del.exit_code, 0) << del.raw;
  std::printf("[ peak RSS ] ADD %ld KiB, DEL %ld KiB (limit %ld KiB)\n", add.max_rss_kib,
              del.max_rss_kib, kLimitKib);
  RecordProperty("add_max_rss_kib", std::to_string(add.max_rss_kib));
  RecordProperty("del_max_rss_kib", std::to_string(del.max_rss_kib));
  EXPECT_GT(add.max_rss_kib, 0);
  EXPECT_LT(add.max_rss_kib, kLimitKib);
  EXPECT_LT(del.max_rss_kib, kLimitKib);
}

// 200 ADD/DEL cycles, 20 pods in parallel (one VF each): no interface leaks, no state left.
TEST_F(CniBinaryTest, ParallelCyclesLeakNothing) {
  constexpr int kPods = 20;
  constexpr int kCycles = 10;
  std::vector<std::string> devices, pods;
  for (int i = 0; i < kPods; ++i) {
    devices.push_back(AddVfNumber(i));
    pods.push_back(AddPod());
  }
  const int links = HostLinks();
  std::atomic<int> failures{0};
  std::vector<std::thread> workers;
  for (int i = 0; i < kPods; ++i) {
    workers.emplace_back([&, i] {
      json conf = Conf("1.0.0", devices[i]);
      conf["mtu"] = 1300;
      for (int c = 0; c < kCycles; ++c) {
        const std::string ctr = "ctr" + std::to_string(i) + "c" + std::to_string(c);
        CniRun add = Run("ADD", pods[i], conf, "net1", ctr);
        CniRun del = Run("DEL", pods[i], conf, "net1", ctr);
        if (add.exit_code != 0 || del.exit_code != 0) {
          ++failures;
          ADD_FAILURE() << "pod " << i << " cycle " << c << ": " << add.raw << " / " << del.raw;
        }
      }
    });
  }
  for (auto& w : workers) w.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(HostLinks(), links) << "every VF netdev is back in the host";
  EXPECT_EQ(StateFiles(), 0u);
}

}  // namespace
}  // namespace hcashare::cni
