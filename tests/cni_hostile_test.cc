// The hostile input matrix (issue 9), against the real hcashare-cni binary: path traversal
// ("../", absolute paths, NUL bytes) in deviceID, CNI_CONTAINERID, CNI_IFNAME, CNI_NETNS,
// stateDir and resourceName, oversized inputs, invalid UTF-8, deeply nested JSON and wrong
// types. Each must end in a spec error object on stdout with the right code (4 bad
// environment, 6 undecodable, 7 bad configuration), exit 1 (no crash), and leave every
// file of the test's tree and every netdev as it was. The VF named by the configuration
// exists, so an input that slipped through would really attach it.
// Issue 24 adds rows per adversary, each test naming it: the device-plugin pod (the pool
// description it writes) and the pod (its interface's MAC, name and namespace).
#include <sys/stat.h>

#include <functional>
#include <map>

#include "cni/env.h"
#include "interop/pool_info.h"
#include "tests/cni_binary_fixture.h"
#include "tests/support/tree_diff.h"

namespace hcashare::cni {
namespace {

using json = nlohmann::json;

constexpr int kEnv = kErrInvalidEnv, kDecode = kErrDecode, kConf = kErrInvalidNetConf;

// One row: a verb, changes to the CNI environment ("" unsets), changes to a valid
// configuration (null removes a key) or a raw stdin replacing it, and the code expected.
struct Case {
  std::string what;
  int code;
  std::map<std::string, std::string> env = {};
  json conf = json::object();
  std::string raw = "";
  std::string verb = "ADD";
  // Longer than this fails the row: a safety net, far above a passing run.
  std::chrono::milliseconds limit = std::chrono::milliseconds(30000);
};

class CniHostileTest : public CniBinaryTest {
 protected:
  // Runs `c`, checks its outcome and returns the run; the tree and the netdevs are
  // compared by the caller.
  CniRun RunCase(const Case& c) {
    SCOPED_TRACE(c.what);
    std::map<std::string, std::string> vars = {
        {"CNI_COMMAND", c.verb},
        {"CNI_CONTAINERID", "ctr1"},
        {"CNI_NETNS", pod_},
        {"CNI_IFNAME", "net1"},
        {"CNI_PATH", kIpamDir},
        {"CNI_ARGS", "K8S_POD_NAMESPACE=ns;K8S_POD_NAME=pod-a;K8S_POD_UID=uid-a"},
        {"PATH", "/usr/sbin:/usr/bin:/sbin:/bin"},
        {"HCASHARE_CNI_CONFIG", NodeConfigPath()}};
    for (const auto& [k, v] : c.env) vars[k] = v;
    std::vector<std::string> env;
    for (const auto& [k, v] : vars) {
      if (!v.empty()) env.push_back(k + "=" + v);
    }
    json conf = good_;
    for (const auto& [k, v] : c.conf.items()) {
      if (v.is_null()) {
        conf.erase(k);
      } else {
        conf[k] = v;
      }
    }
    CniRun run = RunEnv(env, c.raw.empty() ? conf.dump() : c.raw, c.limit);
    EXPECT_EQ(run.exit_code, 1) << "an error, not a crash: " << run.raw << run.err;
    EXPECT_TRUE(run.out.is_object()) << "stdout is one JSON object: " << run.raw;
    if (!run.out.is_object()) return run;
    EXPECT_EQ(run.out["code"], c.code) << run.raw;
    EXPECT_TRUE(run.out["msg"].is_string()) << run.raw;
    return run;
  }

  void SetUp() override {
    CniBinaryTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    pod_ = AddPod();
    good_ = Conf("1.1.0", AddVf(2));
    good_["ipam"] = HostLocal();
    fs::create_directories(Outside());
  }
  // A directory next to the state dir that no input may reach.
  std::string Outside() const { return tmp_.path() + "/outside"; }

  std::string pod_;
  json good_;
};

TEST_F(CniHostileTest, EveryHostileInputGetsItsCodeAndTouchesNothing) {
  const std::string state = StateDir(), out = Outside();
  const std::string nul("a\0b", 3);
  const std::string big(64 << 10, 'a');
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  // 900 KB of `{}`: nlohmann's callback parser walked the whole array after each object,
  // which held the binary for 28-37 s; it took 0.1 s once the parser was linear (1.6 s under
  // ASan; 20 s is the safety net), and is now refused as it passes 100,000 values
  // (jsonin::kMaxJsonValues), before the tree's memory (~20 MiB) is spent.
  const json empty_objects(300000, json::object());
  const std::vector<Case> cases = {
      // deviceID (and its other spellings).
      {"deviceID ../", kConf, {}, {{"deviceID", "../../../etc/passwd"}}},
      {"deviceID absolute", kConf, {}, {{"deviceID", out}}},
      {"deviceID PCI address then ../", kConf, {}, {{"deviceID", "0000:5e:00.2/../../x"}}},
      {"deviceID NUL", kConf, {}, {{"deviceID", "0000:5e:00.2" + nul}}},
      {"deviceID oversized", kConf, {}, {{"deviceID", big}}},
      {"deviceID a number", kConf, {}, {{"deviceID", 2}}},
      {"pciBusID ../", kConf, {}, {{"deviceID", nullptr}, {"pciBusID", "../x"}}},
      {"runtimeConfig.deviceID absolute",
       kConf,
       {},
       {{"deviceID", nullptr}, {"runtimeConfig", {{"deviceID", "/etc/passwd"}}}}},
      // CNI_CONTAINERID.
      {"CNI_CONTAINERID ../", kEnv, {{"CNI_CONTAINERID", "../../outside/x"}}},
      {"CNI_CONTAINERID absolute", kEnv, {{"CNI_CONTAINERID", out + "/x"}}},
      {"CNI_CONTAINERID with a slash", kEnv, {{"CNI_CONTAINERID", "a/b"}}},
      {"CNI_CONTAINERID oversized", kEnv, {{"CNI_CONTAINERID", std::string(300, 'a')}}},
      {"CNI_CONTAINERID invalid UTF-8", kEnv, {{"CNI_CONTAINERID", "a\xff\xfe"}}},
      {"CNI_CONTAINERID ../ on DEL", kEnv, {{"CNI_CONTAINERID", "../x"}}, {}, "", "DEL"},
      // CNI_IFNAME.
      {"CNI_IFNAME ../", kEnv, {{"CNI_IFNAME", "../x"}}},
      {"CNI_IFNAME ..", kEnv, {{"CNI_IFNAME", ".."}}},
      {"CNI_IFNAME absolute", kEnv, {{"CNI_IFNAME", "/x"}}},
      {"CNI_IFNAME 16 bytes", kEnv, {{"CNI_IFNAME", "abcdefghijklmnop"}}},
      {"CNI_IFNAME with a space", kEnv, {{"CNI_IFNAME", "et h0"}}},
      {"CNI_IFNAME control character", kEnv, {{"CNI_IFNAME", "a\x01"}}},
      {"CNI_IFNAME invalid UTF-8", kEnv, {{"CNI_IFNAME", "n\xc3\x28"}}},
      {"CNI_IFNAME invalid UTF-8 on DEL", kEnv, {{"CNI_IFNAME", "n\xff"}}, {}, "", "DEL"},
      // CNI_NETNS.
      {"CNI_NETNS relative", kEnv, {{"CNI_NETNS", "var/run/netns/x"}}},
      {"CNI_NETNS ../", kEnv, {{"CNI_NETNS", "/var/run/netns/../../../etc/passwd"}}},
      {"CNI_NETNS invalid UTF-8", kEnv, {{"CNI_NETNS", "/var/run/netns/\xff"}}},
      {"CNI_NETNS oversized", kEnv, {{"CNI_NETNS", "/" + std::string(5000, 'a')}}},
      {"CNI_NETNS ../ on DEL", kEnv, {{"CNI_NETNS", "/a/../b"}}, {}, "", "DEL"},
      // The rest of the environment.
      {"CNI_PATH ../", kEnv, {{"CNI_PATH", "/usr/lib/cni/../../../tmp"}}},
      {"CNI_PATH relative", kEnv, {{"CNI_PATH", "bin"}}},
      {"CNI_ARGS invalid UTF-8", kEnv, {{"CNI_ARGS", "K8S_POD_NAME=p\xff"}}},
      {"CNI_ARGS malformed", kEnv, {{"CNI_ARGS", "a=b=c"}}},
      {"CNI_ARGS unknown keys without IgnoreUnknown", kEnv, {{"CNI_ARGS", "K8S_POD_NAME=p;X=1"}}},
      {"CNI_ARGS naming two pods",
       kConf,
       {{"CNI_ARGS",
         "IgnoreUnknown=1;K8S_POD_NAMESPACE=ns;K8S_POD_NAME=pod-a;K8S_POD_UID=uid-a;"
         "K8S_POD_NAMESPACE=other"}}},
      {"CNI_ARGS naming two pods on DEL",
       kConf,
       {{"CNI_ARGS", "K8S_POD_UID=uid-a;K8S_POD_UID=uid-b"}},
       {},
       "",
       "DEL"},
      {"CNI_COMMAND lower case", kEnv, {{"CNI_COMMAND", "add"}}},
      {"CNI_COMMAND unset", kEnv, {{"CNI_COMMAND", ""}}},
      // stateDir and the other paths of the configuration.
      {"stateDir relative", kConf, {}, {{"stateDir", "state"}}},
      {"stateDir ../", kConf, {}, {{"stateDir", state + "/../outside"}}},
      {"stateDir NUL", kConf, {}, {{"stateDir", state + nul}}},
      {"stateDir oversized", kConf, {}, {{"stateDir", "/" + std::string(5000, 'a')}}},
      {"stateDir a number", kConf, {}, {{"stateDir", 1}}},
      {"hostRoot ../", kConf, {}, {{"hostRoot", tmp_.path() + "/host/../outside"}}},
      {"kubeletRootDir relative", kConf, {}, {{"kubeletRootDir", "../kubelet"}}},
      {"logFile ../", kConf, {}, {{"logFile", state + "/../outside/log"}}},
      {"CNIDeviceInfoFile ../",
       kConf,
       {},
       {{"runtimeConfig", {{"CNIDeviceInfoFile", state + "/../outside/d.json"}}}}},
      // A NAD's own runtimeConfig reaches the plugin when libcni injects no capability:
      // a device-info file anywhere but the node's device-info directory is refused.
      {"CNIDeviceInfoFile outside the device-info directory",
       kConf,
       {},
       {{"runtimeConfig", {{"CNIDeviceInfoFile", out + "/ld.so.preload"}}}}},
      {"CNIDeviceInfoFile the directory itself",
       kConf,
       {},
       {{"runtimeConfig", {{"CNIDeviceInfoFile", tmp_.path() + "/devinfo"}}}}},
      {"poolInfoDir NUL", kConf, {}, {{"poolInfoDir", out + nul}}},
      {"ipam.type a path", kConf, {}, {{"ipam", {{"type", "../../bin/sh"}}}}},
      // resourceName (no deviceID, so it would be looked up).
      {"resourceName ../", kConf, {}, {{"deviceID", nullptr}, {"resourceName", "../../etc/x"}}},
      {"resourceName absolute", kConf, {}, {{"deviceID", nullptr}, {"resourceName", out}}},
      {"resourceName NUL", kConf, {}, {{"deviceID", nullptr}, {"resourceName", "rdma/x" + nul}}},
      {"resourceName oversized", kConf, {}, {{"deviceID", nullptr}, {"resourceName", big}}},
      {"resourceName no prefix", kConf, {}, {{"deviceID", nullptr}, {"resourceName", "vfs"}}},
      {"resourceName a list", kConf, {}, {{"deviceID", nullptr}, {"resourceName", {"a/b"}}}},
      {"resourceName ../ in macvlan mode",
       kConf,
       {},
       {{"deviceID", nullptr}, {"mode", "macvlan"}, {"resourceName", "rdma/../../outside/x"}}},
      // Oversized input.
      {"stdin over the cap", kDecode, {}, {}, std::string(2 << 20, ' ')},
      {"network name oversized", kConf, {}, {{"name", std::string(300, 'n')}}},
      // Invalid UTF-8 and bad JSON.
      {"invalid UTF-8 in a string",
       kDecode,
       {},
       {},
       "{\"cniVersion\":\"1.1.0\",\"name\":\"\xff\"}"},
      {"lone surrogate escape", kDecode, {}, {}, R"({"cniVersion":"1.1.0","name":"\ud800"})"},
      {"truncated JSON", kDecode, {}, {}, "{\"cniVersion\": "},
      {"empty stdin", kDecode, {}, {}, " "},
      {"deeply nested JSON", kDecode, {}, {}, deep},
      {"deeply nested value", kDecode, {}, {}, R"({"cniVersion":"1.1.0","x":)" + deep + "}"},
      {"300,000 empty objects",
       kDecode,
       {},
       {{"deviceID", nullptr}, {"x", empty_objects}},
       "",
       "ADD",
       std::chrono::milliseconds(20000)},
      // Wrong types.
      {"top level an array", kDecode, {}, {}, "[]"},
      {"top level a string", kDecode, {}, {}, "\"x\""},
      {"cniVersion a number", kConf, {}, {{"cniVersion", 1}}},
      {"name a number", kConf, {}, {{"name", 5}}},
      {"mtu a string", kConf, {}, {{"mtu", "1500"}}},
      {"vlan a fraction", kConf, {}, {{"vlan", 1.5}}},
      {"vlan out of range", kConf, {}, {{"vlan", 5000}}},
      {"ipam a list", kConf, {}, {{"ipam", json::array()}}},
      {"runtimeConfig a string", kConf, {}, {{"runtimeConfig", "x"}}},
      {"prevResult a number", kConf, {}, {{"prevResult", 1}}},
  };
  Tree tree = Snapshot(tmp_.path());
  const std::vector<LinkInfo> host = Links(host_ns_), pod = Links(netns_.back());
  for (const Case& c : cases) {
    RunCase(c);
    const Tree now = Snapshot(tmp_.path());
    EXPECT_EQ(TreeChanges(tree, now), "") << c.what;
    tree = now;  // one failure is reported once
  }
  EXPECT_EQ(Links(host_ns_), host);
  EXPECT_EQ(Links(netns_.back()), pod);
  std::printf("[ hostile ] %zu inputs\n", cases.size());
}

// The control: the same configuration unchanged attaches (so the rows above fail for their
// one change, not for something else).
TEST_F(CniHostileTest, TheUnchangedConfigurationAttaches) {
  CniRun add = Run("ADD", pod_, good_);
  EXPECT_EQ(add.exit_code, 0) << add.raw << add.err;
  EXPECT_EQ(Run("DEL", pod_, good_).exit_code, 0);
  EXPECT_EQ(StateFiles(), 0u);
  EXPECT_EQ(IpamLeases(), 0u);
}

// The device-plugin pod writes the pool directory (unprivileged, yet the root CNI reads
// what it puts there). A FIFO nobody writes held ADD until the runtime killed it; a symlink
// to /dev/zero took the CNI to 266 MB. Each now fails at once with code 5 naming the file
// and what is wrong with it, in little memory, changing nothing.
TEST_F(CniHostileTest, PoolDescriptionThatIsAFifoOrDevZeroFailsFast) {
  const std::string pools = PoolInfoDir();  // the node file's poolInfoDir
  const std::string file = pools + "/" + PoolInfoFileName("rdma/hca_a");
  fs::create_directories(pools);
  AllocateToPod("0", "rdma/hca_a");  // the pod holds a share of the pool
  const json conf = {{"deviceID", nullptr}, {"mode", "macvlan"}, {"resourceName", "rdma/hca_a"}};
  const std::vector<LinkInfo> host = Links(host_ns_), pod = Links(netns_.back());
  struct Row {
    std::string what, wrong;
    std::function<bool()> make;
  };
  const std::vector<Row> rows = {
      {"a FIFO", "is a FIFO, not a regular file",
       [&] { return ::mkfifo(file.c_str(), 0644) == 0; }},
      {"a symlink to /dev/zero", "is a symlink",
       [&] { return ::symlink("/dev/zero", file.c_str()) == 0; }},
  };
  // The peak RSS of an ADD that finds no description, for comparison: a child forked from
  // this test process starts from its high-water mark, which earlier tests raised.
  const CniRun baseline = RunCase({"no pool description", kErrDeviceNotFound, {}, conf});
  for (const Row& row : rows) {
    SCOPED_TRACE(row.what);
    ::unlink(file.c_str());
    ASSERT_TRUE(row.make());
    Tree before = Snapshot(tmp_.path());
    // 10 s: a safety net far above a passing run (milliseconds); the FIFO blocked for ever.
    CniRun run = RunCase({row.what, kErrIo, {}, conf, "", "ADD", std::chrono::milliseconds(10000)});
    // Every ADD takes its mark (a lock file in state/locks/, removed when it returns)
    // first: those two directories are its own; every file in them is compared.
    Tree after = Snapshot(tmp_.path());
    for (Tree* t : {&before, &after}) {
      t->erase(StateDir());
      t->erase(StateDir() + "/locks");
    }
    EXPECT_EQ(TreeChanges(before, after), "");
    EXPECT_LT(run.max_rss_kib, baseline.max_rss_kib + 8 * 1024) << "the file was read";
    if (!run.out.is_object()) continue;
    EXPECT_EQ(run.out.value("msg", ""), "cannot read the description of pool rdma/hca_a")
        << run.raw;
    EXPECT_NE(run.out.value("details", "").find("pool description " + file + " " + row.wrong),
              std::string::npos)
        << run.raw;
  }
  EXPECT_EQ(Links(host_ns_), host);
  EXPECT_EQ(Links(netns_.back()), pod);
}

// The pod rows. The adversary: the pod, with CAP_NET_ADMIN in its netns, which may change
// its interface's MAC, rename it, or move it elsewhere. The veth stand-ins have no parent
// device, as a VF's netdev has none before Linux 5.15 (RHEL 8's 4.18).

// The pod changes its VF's MAC. DEL returned 102 and left the VF in the pod for ever,
// although CHECK reported that very drift: the identity rule needed a recorded MAC. The
// ifindex and the name ADD gave it suffice now; the VF is back under its host name and MAC.
TEST_F(CniHostileTest, PodChangedTheMacDelReturnsTheVf) {
  const std::vector<LinkInfo> host = Links(host_ns_);
  CniRun add = Run("ADD", pod_, good_);
  ASSERT_EQ(add.exit_code, 0) << add.raw << add.err;
  ASSERT_TRUE(Sh("ip -n " + netns_.back() + " link set net1 address 02:12:34:56:78:9a"));
  json check = good_;
  check["prevResult"] = add.out;
  CniRun drift = Run("CHECK", pod_, check);
  EXPECT_EQ(drift.exit_code, 1) << drift.raw;
  EXPECT_NE(drift.raw.find("has MAC 02:12:34:56:78:9a"), std::string::npos) << drift.raw;
  CniRun del = Run("DEL", pod_, good_);
  EXPECT_EQ(del.exit_code, 0) << del.raw << del.err;
  EXPECT_EQ(Links(host_ns_), host);
  EXPECT_EQ(StateFiles(), 0u);
  EXPECT_EQ(IpamLeases(), 0u);
}

// The pod renames its VF (MAC kept): DEL finds it by its MAC and ifindex and returns it
// under its host name. (This worked before; the row keeps it working.)
TEST_F(CniHostileTest, PodRenamedTheInterfaceDelReturnsTheVf) {
  const std::vector<LinkInfo> host = Links(host_ns_);
  ASSERT_EQ(Run("ADD", pod_, good_).exit_code, 0);
  ASSERT_TRUE(Sh("ip -n " + netns_.back() + " link set net1 down"));
  ASSERT_TRUE(Sh("ip -n " + netns_.back() + " link set net1 name renamed0"));
  CniRun del = Run("DEL", pod_, good_);
  EXPECT_EQ(del.exit_code, 0) << del.raw << del.err;
  EXPECT_EQ(Links(host_ns_), host);
  EXPECT_EQ(StateFiles(), 0u);
}

// The pod moves its VF into another namespace it can reach. DEL cannot return what it
// cannot see: it fails with 102 saying so and keeps the state, the owner marker and the
// lease, so that a later DEL (once the VF is back in the pod, or its namespace is gone)
// releases it. Documented outcome, not a silent success that would leak the VF.
TEST_F(CniHostileTest, PodMovedTheInterfaceAwayDelKeepsTheStateUntilItIsBack) {
  const std::vector<LinkInfo> host = Links(host_ns_);
  const std::string pod = netns_.back();
  ASSERT_EQ(Run("ADD", pod_, good_).exit_code, 0);
  AddPod();
  const std::string elsewhere = netns_.back();
  ASSERT_TRUE(Sh("ip -n " + pod + " link set net1 netns " + elsewhere));
  CniRun del = Run("DEL", pod_, good_);
  EXPECT_EQ(del.exit_code, 1) << del.raw << del.err;
  EXPECT_EQ(del.out.value("code", 0), kErrHostSetupFailed) << del.raw;
  EXPECT_NE(del.raw.find("neither in the host nor in the pod"), std::string::npos) << del.raw;
  EXPECT_NE(del.raw.find("moved to another namespace"), std::string::npos) << del.raw;
  EXPECT_EQ(StateFiles(), 2u) << "the attachment and the owner marker are kept";
  EXPECT_EQ(IpamLeases(), 1u);
  ASSERT_TRUE(Sh("ip -n " + elsewhere + " link set net1 netns " + pod));
  CniRun retried = Run("DEL", pod_, good_);
  EXPECT_EQ(retried.exit_code, 0) << retried.raw << retried.err;
  EXPECT_EQ(Links(host_ns_), host);
  EXPECT_EQ(StateFiles(), 0u);
  EXPECT_EQ(IpamLeases(), 0u);
}

// NUL bytes cannot reach the binary through its environment (execve ends each entry at
// the first NUL), so the parser is given them directly.
TEST(CniHostileEnvTest, NulBytesInTheEnvironmentAreCode4) {
  const std::string nul("\0/../x", 6);
  for (const char* var : {"CNI_CONTAINERID", "CNI_IFNAME", "CNI_NETNS", "CNI_PATH"}) {
    SCOPED_TRACE(var);
    EnvMap env = {{"CNI_COMMAND", "ADD"},
                  {"CNI_CONTAINERID", "c"},
                  {"CNI_NETNS", "/var/run/x"},
                  {"CNI_IFNAME", "net1"},
                  {"CNI_PATH", "/opt/cni/bin"}};
    env[var] += nul;
    auto parsed = ParseCniEnv(env);
    ASSERT_FALSE(parsed.ok());
    EXPECT_EQ(CniCodeOf(parsed.status()), kErrInvalidEnv);
  }
}

}  // namespace
}  // namespace hcashare::cni
