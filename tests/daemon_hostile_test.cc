// The daemon in hostile and broken environments (issue 15), as a process: a config that is
// a FIFO or far too large, bad flag values, and SIGTERM at every phase of its life. Each
// test failed before its fix: a FIFO hung the daemon (and `validate`) forever, 10,000 x
// 50,000 IDs grew the daemon past 3 GB, a bad --metrics-address exited 1 after writing
// files, and `--pool-info-dir=` swallowed the next argument.
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "common/unique_fd.h"
#include "testing/stuck_process.h"
#include "tests/daemon_fixture.h"
#include "tests/support/dp_configs.h"

namespace hcashare::testing {
namespace {

using std::chrono::milliseconds;
using ::testing::HasSubstr;

// How long a test lets the daemon take to end or to refuse a config: a safety net, not a
// measure of speed (bench/prompt_bench measures SIGTERM against the issue's 100 ms). It
// stays below what the bugs waited for: a FIFO's open() blocks for ever, and a stalled
// registration runs into its 40 s deadline (10 s to connect + 30 s for the call).
constexpr milliseconds kSafety{10000};

class DaemonHostileTest : public DaemonTest {
 protected:
  // Runs the daemon with `extra` to its end (at most `limit`); returns its exit code.
  int RunToEnd(const std::vector<std::string>& extra, milliseconds limit = milliseconds(10000)) {
    auto p = Spawn(extra, "plugin.log");
    EXPECT_TRUE(p.ok());
    if (!p.ok()) return -1;
    auto rc = p->Wait(limit);
    if (!rc.ok()) (void)p->Signal(SIGKILL);
    return rc.value_or(-1);
  }
  std::string Log() const { return ReadTextFile(tmp_.path() + "/plugin.log"); }

  // Sends SIGTERM to `p` and returns its exit code (-1: it did not end within kSafety; the
  // failure then shows what each of its threads was doing).
  static int TermAndWait(Subprocess& p) {
    auto rc = fake::SignalAndWait(p, SIGTERM, kSafety);
    if (!rc.ok()) ADD_FAILURE() << rc.status().ToString();
    return rc.value_or(-1);
  }
};

// Refused at once: nobody ever writes to the FIFO, so a daemon that opened it to read
// would block for ever and never exit.
TEST_F(DaemonHostileTest, FifoConfigIsRefusedAtOnce) {
  ASSERT_EQ(::mkfifo(config_.c_str(), 0600), 0);
  EXPECT_EQ(RunToEnd({"--config", config_}, kSafety), 2);
  EXPECT_THAT(Log(), HasSubstr("is a FIFO, not a regular file"));
  auto v = Subprocess::Spawn({BinDir() + "/hcashare", "validate", config_},
                             tmp_.path() + "/validate.txt");
  ASSERT_TRUE(v.ok());
  EXPECT_EQ(v->Wait(kSafety).value_or(-1), 2);
  EXPECT_THAT(ReadTextFile(tmp_.path() + "/validate.txt"), HasSubstr("a FIFO"));
}

// 10,000 resources x 50,000 IDs passed validation and then exhausted memory. Now both the
// resource count and the total are capped, and the error gives the numbers. (1,000
// resources here: 10,000 are 100,000 values, which the reader refuses before building them,
// config_memory_test.)
TEST_F(DaemonHostileTest, ConfigBeyondTheCapsIsRejectedWithTheNumbers) {
  WriteConfig(ManySharedResources(1000, 50000));
  EXPECT_EQ(RunToEnd({"--config", config_}), 2);
  EXPECT_THAT(Log(), HasSubstr("has 1000 resources; at most 64"));
  EXPECT_THAT(Log(), HasSubstr("add up to 50000000 device IDs; at most 400000"));
  WriteConfig(ManySharedResources(8, 50000));  // exactly at the cap: fine
  auto p = Spawn({"--config", config_}, "at-cap.log");
  ASSERT_TRUE(p.ok());
  EXPECT_TRUE(kubelet_->Start().ok());
  EXPECT_TRUE(kubelet_->WaitFor(
      "rdma/r7", [](const fake::ResourceView& v) { return v.devices.size() == 50000; },
      milliseconds(30000)));
  EXPECT_EQ(TermAndWait(*p), 0);
}

// A bad --metrics-address is a usage error (2) found before anything is written.
TEST_F(DaemonHostileTest, BadMetricsAddressExitsTwoBeforeAnySideEffect) {
  WriteConfig(Config(4));
  EXPECT_EQ(RunToEnd({"--config", config_, "--metrics-address", "999.1.1.1:99999"}), 2);
  EXPECT_THAT(Log(), HasSubstr("port out of range"));
  EXPECT_FALSE(std::filesystem::exists(tmp_.path() + "/pools"));
  EXPECT_FALSE(std::filesystem::exists(kubelet_->DevicePluginDir()) &&
               !std::filesystem::is_empty(kubelet_->DevicePluginDir()));
}

// `--pool-info-dir=` (docs/device-plugin.md's way to turn pool files off) no longer takes the next
// argument as its value.
TEST_F(DaemonHostileTest, EmptyEqualsValueDoesNotSwallowTheNextArgument) {
  const std::string out = tmp_.path() + "/version.txt";
  auto p = Subprocess::Spawn(
      {BinDir() + "/hcashare-device-plugin", "--pool-info-dir=", "--version"}, out);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->Wait(milliseconds(5000)).value_or(-1), 0);
  EXPECT_THAT(ReadTextFile(out), HasSubstr("hcashare-device-plugin "));
  EXPECT_THAT(ReadTextFile(out), ::testing::Not(HasSubstr("starting")));
}

// SIGTERM before the daemon has done anything: it ends.
TEST_F(DaemonHostileTest, SigtermDuringStartUpEndsPromptly) {
  WriteConfig(Config(4));
  auto p = Spawn({"--config", config_}, "plugin.log");
  ASSERT_TRUE(p.ok());
  EXPECT_NE(TermAndWait(*p), -1) << Log();
}

// SIGTERM while the kubelet accepts the registration connection but never answers: the
// call is cancelled (waiting for its 40 s deadline would outlast kSafety), exit 0.
TEST_F(DaemonHostileTest, SigtermDuringAStalledRegistrationEndsPromptly) {
  WriteConfig(Config(4));
  std::filesystem::create_directories(kubelet_->DevicePluginDir());
  const std::string sock = kubelet_->DevicePluginDir() + "/kubelet.sock";
  UniqueFd listener(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  ASSERT_LT(sock.size(), sizeof(addr.sun_path));
  sock.copy(addr.sun_path, sock.size());
  ASSERT_EQ(::bind(listener.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)), 0);
  ASSERT_EQ(::listen(listener.get(), 16), 0);
  auto p = Spawn({"--config", config_, "--log-level", "debug"}, "plugin.log");
  ASSERT_TRUE(p.ok());
  // The daemon has dialled the kubelet once its connection is queued on the listener.
  pollfd pfd{listener.get(), POLLIN, 0};
  ASSERT_EQ(::poll(&pfd, 1, 10000), 1) << Log();
  EXPECT_EQ(TermAndWait(*p), 0) << Log();
}

// SIGTERM while the first ListAndWatch of 8 x 50,000 IDs is being sent: a clean exit.
TEST_F(DaemonHostileTest, SigtermDuringAHugeFirstListAndWatchEndsPromptly) {
  WriteConfig(ManySharedResources(8, 50000));
  ASSERT_TRUE(kubelet_->Start().ok());
  auto p = Spawn({"--config", config_}, "plugin.log");
  ASSERT_TRUE(p.ok());
  ASSERT_TRUE(kubelet_->WaitFor(
      "rdma/r0", [](const fake::ResourceView& v) { return v.registrations > 0; },
      milliseconds(10000)));
  EXPECT_EQ(TermAndWait(*p), 0) << Log();
}

// A netdev whose name is not UTF-8 (a pod can leave one on the host: it renames its VF in
// its own netns, and when that netns goes the kernel returns the VF under the new name)
// crashed the daemon and `hcashare snapshot`/`discover --json`: nlohmann's dump throws on
// it. Every JSON hcashare writes now shows such bytes as U+FFFD.
TEST_F(DaemonHostileTest, ANetdevNameThatIsNotUtf8CrashesNothing) {
  const std::string name =
      "ib\xff"
      "x";
  const std::string shown =
      "ib\xef\xbf\xbd"
      "x";  // U+FFFD
  ASSERT_TRUE(env_.node.AddPciFunction(fake::SimNode::IbHca("0000:d8:00.0", name, "mlx5_9")).ok());
  WriteConfig(R"({"configList": [{"resourceName": "hca_shared_devices_a", "rdmaHcaMax": 10,
                  "selectors": {"vendors": ["15b3"]}}]})");
  ASSERT_TRUE(kubelet_->Start().ok());
  auto p = Spawn({"--config", config_}, "plugin.log");
  ASSERT_TRUE(p.ok());
  ASSERT_TRUE(WaitDevices(10)) << Log();
  const std::string pool = env_.pools + "/rdma_hca_shared_devices_a.json";
  EXPECT_TRUE(WaitUntil([&] { return ReadTextFile(pool).find(shown) != std::string::npos; }))
      << ReadTextFile(pool) << Log();
  EXPECT_EQ(TermAndWait(*p), 0) << Log();

  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"snapshot", "--host-root", host_root_},
        std::vector<std::string>{"discover", "--json", "--host-root", host_root_, "--config",
                                 config_}}) {
    auto r = Execute(
        BinDir() + "/hcashare",
        [&] {
          std::vector<std::string> argv{BinDir() + "/hcashare"};
          argv.insert(argv.end(), args.begin(), args.end());
          return argv;
        }(),
        {}, "", kSafety);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->exit_code, 0) << args[0] << ": " << r->err;
    EXPECT_NE(r->out.find(shown), std::string::npos) << args[0];
  }
}

}  // namespace
}  // namespace hcashare::testing
