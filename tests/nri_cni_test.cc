// hcashare-nri, the real binary, against the fake NRI runtime (testing/fake_nri_runtime.h:
// NRI's mux and ttrpc on a real unix socket), running the real hcashare-cni on real netns
// and veths: a pod whose claims hold VFs gets them at sandbox start with no CNI
// configuration change, and the stop restores everything the CNI oracle sees. Also: a
// refused attach fails the pod's start and leaves the node as it was; a plugin killed and
// restarted catches up from the runtime's pod list (pods started and removed while it was
// away); the CNI step and NRI together give each device once; the pre-installed mode.
#include <gmock/gmock.h>

#include "common/process.h"
#include "testing/fake_nri_runtime.h"
#include "tests/cni_dra_fixture.h"
#include "tests/cni_oracle.h"

namespace hcashare::cni {
namespace {

using json = nlohmann::json;
using ::testing::HasSubstr;

class NriCniTest : public CniDraPodTest {
 protected:
  void SetUp() override {
    CniDraPodTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    AddRailsPod();
    PutClaim(RailsClaim());
    pod_sandbox_ = {"5b1d0c0ffee", "pod-a", "uid-a", "ns", pod_};
  }
  void TearDown() override {
    plugin_.reset();
    CniDraPodTest::TearDown();
  }

  // The plugin's environment: what the CNI needs (its node file) and PATH.
  std::vector<std::string> PluginEnv(const std::vector<std::string>& extra = {}) {
    std::vector<std::string> env = {"PATH=/usr/sbin:/usr/bin:/sbin:/bin", NodeEnv()};
    env.insert(env.end(), base_env_.begin(), base_env_.end());
    env.insert(env.end(), extra.begin(), extra.end());
    return env;
  }
  // A CNI that records each run ("VERB SANDBOX") in calls.log, then runs the real one;
  // `first` (shell lines) runs before.
  std::string RecordingCni(const std::string& first = "") {
    const std::string path = tmp_.path() + "/cni-recorder";
    std::ofstream(path) << "#!/bin/sh\n"
                        << first << "echo \"$CNI_COMMAND $CNI_CONTAINERID\" >> " << tmp_.path()
                        << "/calls.log\nexec " << testing::BinDir() << "/" << binary_ << "\n";
    fs::permissions(path, fs::perms::owner_all);
    cni_bin_ = path;
    return path;
  }
  std::vector<std::string> Calls() const {
    std::vector<std::string> out;
    std::ifstream in(tmp_.path() + "/calls.log");
    for (std::string line; std::getline(in, line);) out.push_back(line);
    return out;
  }
  std::vector<std::string> PluginArgv(const std::vector<std::string>& extra = {}) {
    std::vector<std::string> argv = {
        "ip",
        "netns",
        "exec",
        host_ns_,
        testing::BinDir() + "/hcashare-nri",
        "--socket",
        Socket(),
        "--cni-bin",
        cni_bin_.empty() ? testing::BinDir() + "/" + binary_ : cni_bin_,
        "--cni-path",
        std::string(kIpamDir)};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return argv;
  }
  std::string Socket() const { return tmp_.path() + "/nri.sock"; }
  std::string Log() const { return tmp_.path() + "/nri.log"; }

  // Starts hcashare-nri as an external plugin, and accepts it on `runtime` with `pods`.
  void StartPlugin(fake::FakeNriRuntime& runtime, const std::vector<fake::NriPod>& pods = {}) {
    env_ = PluginEnv();
    SpawnOptions o;
    o.path = "/usr/sbin/ip";
    o.env = &env_;
    log_.Reset(::open(Log().c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644));
    o.stdout_fd = log_.get();
    o.stderr_fd = log_.get();
    o.die_with_parent = true;
    auto p = Subprocess::Spawn(PluginArgv(), o);
    ASSERT_TRUE(p.ok()) << p.status().ToString();
    plugin_ = std::make_unique<Subprocess>(std::move(*p));
    Status st = runtime.AcceptPlugin(pods, std::chrono::milliseconds(20000));
    ASSERT_TRUE(st.ok()) << st.ToString() << "\n" << ReadLog();
  }
  std::string ReadLog() const {
    std::ifstream in(Log());
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  // Waits until the plugin has finished the work of its `n`th synchronization (the GC and
  // the catch-up run after the answer), as its log tells.
  bool CaughtUp(size_t n) const {
    return testing::WaitUntil(
        [&] {
          const std::string log = ReadLog();
          size_t count = 0;
          for (size_t at = log.find("caught up with the runtime"); at != std::string::npos;
               at = log.find("caught up with the runtime", at + 1)) {
            ++count;
          }
          return count >= n;
        },
        std::chrono::milliseconds(30000));
  }
  fake::FakeNriRuntimeOptions RuntimeOptions() const {
    fake::FakeNriRuntimeOptions o;
    o.request_timeout = std::chrono::milliseconds(30000);
    return o;
  }

  std::map<std::string, std::string> PodLinks() {
    std::map<std::string, std::string> out;
    for (const auto& l : Links(pod_name_)) out[l.name] = l.mac + "/" + std::to_string(l.mtu);
    return out;
  }

  testing::OracleScope Scope() {
    return {{{"host", host_ns_}, {"pod", pod_name_}},
            {{"state", StateDir()}, {"dra-network", NetworkStatusDir()}},
            {}};
  }

  fake::NriPod pod_sandbox_;
  std::string cni_bin_;  // "" for the real one
  std::vector<std::string> env_;
  UniqueFd log_;
  std::unique_ptr<Subprocess> plugin_;
};

TEST_F(NriCniTest, AClaimAloneGivesThePodItsVfsAtSandboxStartAndTheStopRestoresEverything) {
  const testing::Snapshot before = testing::TakeSnapshot(Scope());
  fake::FakeNriRuntime runtime(Socket(), RuntimeOptions());
  ASSERT_TRUE(runtime.Listen().ok());
  StartPlugin(runtime);
  EXPECT_EQ(runtime.plugin_idx() + "-" + runtime.plugin_name(), "90-hcashare");

  Status st = runtime.RunPodSandbox(pod_sandbox_);
  ASSERT_TRUE(st.ok()) << st.ToString() << ReadLog();
  auto links = PodLinks();
  ASSERT_EQ(links.count("rdma0"), 1u) << ReadLog();
  EXPECT_THAT(links.at("rdma0"), ::testing::EndsWith("/9000"));
  EXPECT_EQ(links.count(vf_netdevs_[1]), 1u);
  for (const LinkInfo& l : Links(host_ns_)) {
    EXPECT_NE(l.name, vf_netdevs_[0]);
    EXPECT_NE(l.name, vf_netdevs_[1]);
  }
  // The claim's status data, as through the CNI step.
  EXPECT_TRUE(dra::ReadNetworkStatus(
                  dra::NetworkStatusPath(NetworkStatusDir(), "uid-claim", "pci-0000-5e-00-2"))
                  .ok());

  ASSERT_TRUE(runtime.StopPodSandbox(pod_sandbox_).ok());
  EXPECT_EQ(testing::DiffSnapshots(before, testing::TakeSnapshot(Scope())), "");
  ASSERT_TRUE(runtime.RemovePodSandbox(pod_sandbox_).ok());
  EXPECT_EQ(testing::DiffSnapshots(before, testing::TakeSnapshot(Scope())), "");
}

TEST_F(NriCniTest, ARefusedAttachFailsThePodsStartAndLeavesTheNodeAsItWas) {
  // The pod already has an rdma0 (the pod network's, say): the claim's name cannot be used.
  GivePodInterface(pod_name_, "rdma0", "10.9.0.2/24");
  const testing::Snapshot before = testing::TakeSnapshot(Scope());
  fake::FakeNriRuntime runtime(Socket(), RuntimeOptions());
  ASSERT_TRUE(runtime.Listen().ok());
  StartPlugin(runtime);
  Status st = runtime.RunPodSandbox(pod_sandbox_);
  EXPECT_THAT(st.message(), HasSubstr("hcashare-cni ADD failed"));
  EXPECT_THAT(st.message(), HasSubstr("rdma0"));
  EXPECT_EQ(testing::DiffSnapshots(before, testing::TakeSnapshot(Scope())), "");
  // The runtime's undo of a failed start: stop and remove, which find nothing.
  EXPECT_TRUE(runtime.StopPodSandbox(pod_sandbox_).ok());
  EXPECT_TRUE(runtime.RemovePodSandbox(pod_sandbox_).ok());
  EXPECT_TRUE(runtime.connected());
}

TEST_F(NriCniTest, AHostNetworkPodIsLeftAlone) {
  const testing::Snapshot before = testing::TakeSnapshot(Scope());
  fake::FakeNriRuntime runtime(Socket(), RuntimeOptions());
  ASSERT_TRUE(runtime.Listen().ok());
  StartPlugin(runtime);
  fake::NriPod host_pod = pod_sandbox_;
  host_pod.netns = "";
  EXPECT_TRUE(runtime.RunPodSandbox(host_pod).ok());
  EXPECT_TRUE(runtime.StopPodSandbox(host_pod).ok());
  EXPECT_EQ(testing::DiffSnapshots(before, testing::TakeSnapshot(Scope())), "");
}

TEST_F(NriCniTest, AKilledPluginCatchesUpFromTheRuntimesPodsWhenItReconnects) {
  const testing::Snapshot before = testing::TakeSnapshot(Scope());
  fake::FakeNriRuntime runtime(Socket(), RuntimeOptions());
  ASSERT_TRUE(runtime.Listen().ok());
  // A pod started while no plugin was there: the first synchronization attaches its VFs.
  StartPlugin(runtime, {pod_sandbox_});
  ASSERT_TRUE(CaughtUp(1)) << ReadLog();
  ASSERT_EQ(PodLinks().count("rdma0"), 1u) << ReadLog();

  // Killed with the pod running; the pod is then removed while no plugin is there.
  ASSERT_TRUE(plugin_->Signal(SIGKILL).ok());
  ASSERT_TRUE(plugin_->Wait(std::chrono::milliseconds(10000)).ok());
  runtime.Disconnect();
  EXPECT_TRUE(runtime.StopPodSandbox(pod_sandbox_).ok()) << "no plugin: nothing to call";

  // Restarted: the runtime no longer has the pod, so its attachments are collected.
  StartPlugin(runtime, {});
  ASSERT_TRUE(CaughtUp(2)) << ReadLog();
  EXPECT_EQ(testing::DiffSnapshots(before, testing::TakeSnapshot(Scope())), "") << ReadLog();
}

// The runtime bounds each call (containerd: 2 s), a synchronization with all of a node's
// pods included, and most pods have no claim: the CNI runs only for pods whose namespace
// holds a prepared claim (ADD) or that have an attachment (DEL).
TEST_F(NriCniTest, TheCniRunsOnlyForPodsThatMayHaveClaimsOrAttachments) {
  RecordingCni();
  std::vector<fake::NriPod> pods = {pod_sandbox_};
  for (int i = 0; i < 20; ++i) {
    pods.push_back({"other" + std::to_string(i), "web", "uid-web", "team-b", pod_});
  }
  fake::FakeNriRuntime runtime(Socket(), RuntimeOptions());
  ASSERT_TRUE(runtime.Listen().ok());
  StartPlugin(runtime, pods);
  ASSERT_TRUE(CaughtUp(1)) << ReadLog();
  EXPECT_EQ(Calls(), (std::vector<std::string>{"STATUS ", "GC ", "ADD 5b1d0c0ffee"}));
  EXPECT_EQ(PodLinks().count("rdma0"), 1u);
  ASSERT_TRUE(runtime.RunPodSandbox(pods[3]).ok());
  ASSERT_TRUE(runtime.StopPodSandbox(pods[3]).ok());
  EXPECT_EQ(Calls().size(), 3u) << "a pod without claims or attachments costs no CNI run";
  ASSERT_TRUE(runtime.StopPodSandbox(pod_sandbox_).ok());
  EXPECT_EQ(Calls().back(), "DEL 5b1d0c0ffee");
  ASSERT_TRUE(runtime.RemovePodSandbox(pod_sandbox_).ok());
  EXPECT_EQ(Calls().size(), 4u) << "nothing left to delete: no second DEL";
}

// containerd drops a plugin that has not answered within its request timeout (2 s by
// default): catching up many pods after an outage must not hold Synchronize's answer. Here
// the catch-up's ADD waits for the test, and the plugin stays connected meanwhile.
TEST_F(NriCniTest, ASlowCatchUpRunsAfterTheSynchronizationIsAnswered) {
  const std::string gate = tmp_.path() + "/gate";
  ASSERT_EQ(::mkfifo(gate.c_str(), 0600), 0);
  UniqueFd release(::open(gate.c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC));
  ASSERT_TRUE(release.valid());
  // An ADD waits for a line on the gate. A test that fails before it releases the gate
  // closes it at its end: the EOF ends the run before the real CNI could touch the node.
  RecordingCni("if [ \"$CNI_COMMAND\" = ADD ]; then read go < " + gate + " || exit 1; fi\n");
  fake::FakeNriRuntimeOptions o = RuntimeOptions();
  o.request_timeout = std::chrono::milliseconds(2000);  // containerd's default
  fake::FakeNriRuntime runtime(Socket(), o);
  ASSERT_TRUE(runtime.Listen().ok());
  StartPlugin(runtime, {pod_sandbox_});
  EXPECT_TRUE(runtime.connected()) << "Synchronize answered in time\n" << ReadLog();
  EXPECT_EQ(PodLinks().count("rdma0"), 0u) << "the catch-up waits at the gate";
  ASSERT_EQ(::write(release.get(), "go\n", 3), 3);
  ASSERT_TRUE(CaughtUp(1)) << ReadLog();
  EXPECT_TRUE(runtime.connected());
  EXPECT_EQ(Calls(), (std::vector<std::string>{"STATUS ", "GC ", "ADD 5b1d0c0ffee"}));
  EXPECT_EQ(PodLinks().count("rdma0"), 1u) << ReadLog();
  ASSERT_TRUE(runtime.StopPodSandbox(pod_sandbox_).ok());
  EXPECT_EQ(PodLinks().count("rdma0"), 0u);
}

TEST_F(NriCniTest, TheRuntimesRestartIsFollowedByAReconnection) {
  RecordingCni();
  fake::FakeNriRuntime runtime(Socket(), RuntimeOptions());
  ASSERT_TRUE(runtime.Listen().ok());
  StartPlugin(runtime);
  ASSERT_TRUE(CaughtUp(1)) << ReadLog();  // else the restart cuts the first GC short
  runtime.Disconnect();                   // the runtime restarts; the plugin process stays
  Status st = runtime.AcceptPlugin({pod_sandbox_}, std::chrono::milliseconds(20000));
  ASSERT_TRUE(st.ok()) << st.ToString() << ReadLog();
  ASSERT_TRUE(CaughtUp(2)) << ReadLog();
  EXPECT_EQ(PodLinks().count("rdma0"), 1u) << "caught up after the synchronization";
  EXPECT_EQ(Calls().back(), "ADD 5b1d0c0ffee");
  // Once more: the pod has its attachments now, so the synchronization runs no ADD.
  runtime.Disconnect();
  ASSERT_TRUE(runtime.AcceptPlugin({pod_sandbox_}, std::chrono::milliseconds(20000)).ok());
  ASSERT_TRUE(CaughtUp(3)) << ReadLog();
  EXPECT_EQ(Calls().back(), "GC ") << "an attached pod is not attached again";
  ASSERT_TRUE(runtime.StopPodSandbox(pod_sandbox_).ok());
  EXPECT_EQ(PodLinks().count("rdma0"), 0u);
}

TEST_F(NriCniTest, WithTheCniStepToo_EachDeviceEntersThePodOnce) {
  const testing::Snapshot before = testing::TakeSnapshot(Scope());
  const json step = {{"cniVersion", "1.1.0"},
                     {"name", "cluster"},
                     {"type", "hcashare-cni"},
                     {"mode", "dra"},
                     {"prevResult", {{"cniVersion", "1.1.0"}, {"interfaces", json::array()}}}};
  // The runtime sets up the pod's network first (the CNI step attaches both VFs)...
  CniRun add = Run("ADD", pod_, step, "eth0", pod_sandbox_.id);
  ASSERT_EQ(add.exit_code, 0) << add.raw << add.err;
  // ...then tells NRI plugins: nothing is left to attach.
  fake::FakeNriRuntime runtime(Socket(), RuntimeOptions());
  ASSERT_TRUE(runtime.Listen().ok());
  StartPlugin(runtime);
  ASSERT_TRUE(runtime.RunPodSandbox(pod_sandbox_).ok()) << ReadLog();
  EXPECT_EQ(PodLinks().count("rdma0"), 1u);
  // The stop reaches NRI first; the step's devices stay until the network's DEL.
  ASSERT_TRUE(runtime.StopPodSandbox(pod_sandbox_).ok());
  EXPECT_EQ(PodLinks().count("rdma0"), 1u);
  ASSERT_EQ(Run("DEL", pod_, step, "eth0", pod_sandbox_.id).exit_code, 0);
  EXPECT_EQ(testing::DiffSnapshots(before, testing::TakeSnapshot(Scope())), "");
}

TEST_F(NriCniTest, PreInstalledTheRuntimeOwnsTheConnectionAndTheConfiguration) {
  fake::FakeNriRuntimeOptions o = RuntimeOptions();
  o.config = R"({"name": "rails-nri", "mtu": 1400})";
  fake::FakeNriRuntime runtime(Socket(), o);
  auto plugin_end = runtime.PluginSocketPair();
  ASSERT_TRUE(plugin_end.ok());
  const int fd = plugin_end->get();
  env_ = PluginEnv(
      {"NRI_PLUGIN_SOCKET=" + std::to_string(fd), "NRI_PLUGIN_NAME=rdma", "NRI_PLUGIN_IDX=42"});
  SpawnOptions so;
  so.path = "/usr/sbin/ip";
  so.env = &env_;
  so.die_with_parent = true;
  auto p = Subprocess::Spawn({"ip", "netns", "exec", host_ns_, testing::BinDir() + "/hcashare-nri",
                              "--cni-bin", testing::BinDir() + "/" + binary_},
                             so);
  ASSERT_TRUE(p.ok());
  plugin_end->Reset();
  ASSERT_TRUE(runtime.AcceptPlugin({}, std::chrono::milliseconds(20000)).ok());
  EXPECT_EQ(runtime.plugin_idx() + "-" + runtime.plugin_name(), "42-rdma");
  ASSERT_TRUE(runtime.RunPodSandbox(pod_sandbox_).ok());
  // The configuration's MTU for the device whose claim sets none.
  EXPECT_THAT(PodLinks().at(vf_netdevs_[1]), ::testing::EndsWith("/1400"));
  ASSERT_TRUE(runtime.StopPodSandbox(pod_sandbox_).ok());
  runtime.Disconnect();
  auto code = p->Wait(std::chrono::milliseconds(10000));
  ASSERT_TRUE(code.ok());
  EXPECT_EQ(*code, 0) << "a pre-installed plugin ends with its connection";
}

TEST_F(NriCniTest, ABadConfigurationIsRefusedWithTheCnisReasons) {
  fake::FakeNriRuntimeOptions o = RuntimeOptions();
  o.config = R"({"mtu": "big"})";
  fake::FakeNriRuntime runtime(Socket(), o);
  ASSERT_TRUE(runtime.Listen().ok());
  env_ = PluginEnv();
  SpawnOptions so;
  so.path = "/usr/sbin/ip";
  so.env = &env_;
  so.die_with_parent = true;
  auto p = Subprocess::Spawn(PluginArgv(), so);
  ASSERT_TRUE(p.ok());
  plugin_ = std::make_unique<Subprocess>(std::move(*p));
  EXPECT_FALSE(runtime.AcceptPlugin({}, std::chrono::milliseconds(20000)).ok());
  EXPECT_THAT(runtime.configure_error(), HasSubstr("mtu"));

  // The command line's is checked before anything starts.
  auto bad = Execute(testing::BinDir() + "/hcashare-nri",
                     {"hcashare-nri", "--netconf", "/nonexistent.json"}, {}, "",
                     std::chrono::milliseconds(10000));
  ASSERT_TRUE(bad.ok());
  EXPECT_EQ(bad->exit_code, 2);
  EXPECT_THAT(bad->err, HasSubstr("--netconf"));
}

}  // namespace
}  // namespace hcashare::cni
