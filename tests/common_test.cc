// Tests for common/: Status, the host seam, logging, inotify, netlink (real veth pairs in
// a real network namespace), RDMA netlink reply parsing and Subprocess.
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <thread>

#include <gtest/gtest.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <rdma/rdma_netlink.h>

#include "common/atomic_file.h"
#include "common/host.h"
#include "common/inotify.h"
#include "common/lock_file.h"
#include "common/log.h"
#include "common/owned_files.h"
#include "common/process.h"
#include "common/status.h"
#include "common/strings.h"
#include "common/temp_dir.h"
#include "config/config.h"
#include "config/names.h"
#include "hostfacts/attrs.h"
#include "interop/pool_info.h"
#include "nl/ipoib.h"
#include "nl/link_events.h"
#include "nl/netlink.h"
#include "nl/rdma_netlink.h"
#include "testing/stuck_process.h"
#include "tests/test_util.h"

namespace fs = std::filesystem;

namespace hcashare {
namespace {

using hostfacts::ParseSysfsInt;
using hostfacts::ReadNumaNode;
using hostfacts::VirtfnIndex;

Result<int> Half(int x) {
  if (x % 2) return Status::InvalidArgument("odd");
  return x / 2;
}

Status Quarter(int x, int* out) {
  ASSIGN_OR_RETURN(int h, Half(x));
  ASSIGN_OR_RETURN(*out, Half(h));
  return Status::Ok();
}

// Result carries values and errors; ASSIGN_OR_RETURN propagates the first error.
TEST(StatusTest, ResultAndMacros) {
  int q = 0;
  EXPECT_TRUE(Quarter(8, &q).ok());
  EXPECT_EQ(q, 2);
  Status st = Quarter(6, &q);
  EXPECT_EQ(st.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(st.WithContext("quarter").ToString(), "invalid argument: quarter: odd");
  EXPECT_EQ(Half(3).value_or(-1), -1);
}

// errno maps to codes in one place.
TEST(StatusTest, ErrnoMapping) {
  EXPECT_EQ(ErrnoStatus(ENOENT, "x").code(), StatusCode::kNotFound);
  EXPECT_EQ(ErrnoStatus(EACCES, "x").code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(ErrnoStatus(EEXIST, "x").code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(ErrnoStatus(ECONNREFUSED, "x").code(), StatusCode::kUnavailable);
  EXPECT_EQ(ErrnoStatus(EIO, "x").code(), StatusCode::kIoError);
  EXPECT_NE(ErrnoStatus(ENOENT, "open /a").message().find("open /a"), std::string::npos);
}

class HostTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = tmp_.path();
    fs::create_directories(root_ + "/sys/devices/pci0000:00/0000:00:01.0");
    fs::create_directories(root_ + "/sys/bus/pci/devices");
    std::ofstream(root_ + "/sys/devices/pci0000:00/0000:00:01.0/class") << "0x020000\n";
    fs::create_symlink("../../../devices/pci0000:00/0000:00:01.0",
                       root_ + "/sys/bus/pci/devices/0000:00:01.0");
    host_ = NewRootedHost(root_);
  }
  TempDir tmp_;
  std::string root_;
  std::unique_ptr<Host> host_;
};

// Host-absolute paths resolve under the root, through relative symlinks.
TEST_F(HostTest, ReadsUnderRoot) {
  EXPECT_EQ(*host_->ReadFile("/sys/bus/pci/devices/0000:00:01.0/class"), "0x020000\n");
  EXPECT_EQ(*host_->ReadTrimmed("/sys/bus/pci/devices/0000:00:01.0/class"), "0x020000");
  EXPECT_EQ(*host_->ReadLink("/sys/bus/pci/devices/0000:00:01.0"),
            "../../../devices/pci0000:00/0000:00:01.0");
  EXPECT_EQ(*host_->RealPath("/sys/bus/pci/devices/0000:00:01.0"),
            "/sys/devices/pci0000:00/0000:00:01.0");
  EXPECT_EQ(host_->Resolve("/sys"), root_ + "/sys");
}

// Missing paths are NotFound, never a crash; listings are sorted.
TEST_F(HostTest, ErrorsAndListing) {
  EXPECT_TRUE(host_->ReadFile("/sys/nope").status().IsNotFound());
  EXPECT_TRUE(host_->ListDir("/sys/nope").status().IsNotFound());
  EXPECT_FALSE(host_->Exists("/dev/infiniband/rdma_cm"));
  fs::create_directories(root_ + "/sys/b");
  fs::create_directories(root_ + "/sys/a");
  auto names = host_->ListDir("/sys");
  ASSERT_TRUE(names.ok());
  EXPECT_EQ(*names, (std::vector<std::string>{"a", "b", "bus", "devices"}));
  EXPECT_EQ(host_->Stat("/sys/a")->type, FileInfo::Type::kDirectory);
}

// sysfs integers parse strictly: junk, empty and out-of-range text is "unknown", never 0.
TEST(SysfsAttrTest, ParsesWholeValuesOnly) {
  EXPECT_EQ(ParseSysfsInt("1\n"), 1);
  EXPECT_EQ(ParseSysfsInt(" -1 \n"), -1);
  EXPECT_EQ(ParseSysfsInt("0x020000\n", 16), 0x020000);
  EXPECT_EQ(ParseSysfsInt("15b3", 16), 0x15b3);
  EXPECT_EQ(ParseSysfsInt("9223372036854775807"), INT64_MAX);
  EXPECT_EQ(ParseSysfsInt("-9223372036854775808"), INT64_MIN);
  for (const char* bad : {"", "\n", "-", "0x", "1a", "1 2", "abc", "9223372036854775808",
                          "-9223372036854775809", "\xff"}) {
    EXPECT_EQ(ParseSysfsInt(bad), std::nullopt) << bad;
  }
  EXPECT_EQ(ParseSysfsInt("0x1g", 16), std::nullopt);
  EXPECT_EQ(ParseSysfsInt("0x12"), std::nullopt);  // a prefix only in base 16
}

// numa_node: the kernel's -1, a missing file and junk all mean "no node".
TEST_F(HostTest, NumaNodeAndVfIndex) {
  const std::string dev = root_ + "/sys/devices/pci0000:00/0000:00:01.0";
  const std::string numa = "/sys/bus/pci/devices/0000:00:01.0/numa_node";
  EXPECT_EQ(ReadNumaNode(*host_, numa), -1);
  for (const auto& [text, node] : std::vector<std::pair<std::string, int>>{
           {"1\n", 1}, {"-1\n", -1}, {"\n", -1}, {"x\n", -1}, {"99999999999\n", -1}}) {
    std::ofstream(dev + "/numa_node") << text;
    EXPECT_EQ(ReadNumaNode(*host_, numa), node) << text;
  }
  // virtfnN entries name the VF index; odd names are skipped, not read as VF 0.
  EXPECT_EQ(VirtfnIndex("virtfn0"), 0);
  EXPECT_EQ(VirtfnIndex("virtfn12"), 12);
  EXPECT_EQ(VirtfnIndex("virtfnx"), -1);
  EXPECT_EQ(VirtfnIndex("virtfn"), -1);
  EXPECT_EQ(VirtfnIndex("physfn"), -1);
}

// Two instances writing the same file (a rollout overlap): identical content is adopted,
// not rewritten, so they never take turns replacing it; a file another instance replaced
// is never removed, and a forgotten one is left alone.
TEST(OwnedFilesTest, AdoptsIdenticalContentAndRemovesOnlyItsOwn) {
  TempDir tmp;
  const std::string path = tmp.path() + "/d/f.json";
  auto inode = [&] {
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0 ? st.st_ino : 0;
  };
  OwnedFiles old_one(tmp.path() + "/d", "/var/lib/kubelet"),
      new_one(tmp.path() + "/d", "/var/lib/kubelet");
  bool changed = false;
  ASSERT_TRUE(old_one.Write("f.json", "x", &changed).ok());
  EXPECT_TRUE(changed);
  const ino_t first = inode();
  ASSERT_TRUE(new_one.Write("f.json", "x", &changed).ok());
  EXPECT_FALSE(changed) << "identical content is adopted";
  ASSERT_TRUE(old_one.Write("f.json", "x", &changed).ok());
  EXPECT_FALSE(changed);
  EXPECT_EQ(inode(), first);

  old_one.Forget("f.json");
  old_one.RemoveAll();
  EXPECT_EQ(inode(), first) << "a forgotten file is left alone";
  ASSERT_TRUE(new_one.Write("f.json", "y", &changed).ok());
  EXPECT_TRUE(changed);
  ASSERT_TRUE(old_one.Write("f.json", "z", &changed).ok());  // replaces new_one's
  new_one.RemoveAll();
  EXPECT_NE(inode(), 0u) << "another instance's file is never removed";
  old_one.RemoveAll();
  EXPECT_EQ(inode(), 0u);
}

// Path helpers.
TEST(PathTest, JoinAndBase) {
  EXPECT_EQ(JoinPath("/a/", "/b"), "/a/b");
  EXPECT_EQ(JoinPath("/a", "b"), "/a/b");
  EXPECT_EQ(BaseName("../../bus/pci/drivers/mlx5_core"), "mlx5_core");
  EXPECT_EQ(BaseName("/a/b/"), "b");
}

class LogCapture {
 public:
  LogCapture() {
    SetLogSink([this](const std::string& l) { lines.push_back(l); });
  }
  ~LogCapture() {
    SetLogSink(nullptr);
    SetLogLevel(LogLevel::kInfo);
    SetLogFormat(LogFormat::kText);
  }
  std::vector<std::string> lines;
};

// Text records carry level, message and quoted fields; debug is dropped at info.
TEST(LogTest, TextAndLevels) {
  LogCapture cap;
  SetLogLevel(LogLevel::kInfo);
  LogDebug("hidden");
  LogInfo("hello", {{"k", "v"}, {"spaced", "a b"}});
  ASSERT_EQ(cap.lines.size(), 1u);
  EXPECT_NE(cap.lines[0].find(" info hello k=v spaced=\"a b\""), std::string::npos);
}

// JSON records are one valid object per line.
TEST(LogTest, JsonLines) {
  LogCapture cap;
  SetLogFormat(LogFormat::kJson);
  LogWarn("quote\"d", {{"pci", "0000:3b:00.0"}});
  ASSERT_EQ(cap.lines.size(), 1u);
  EXPECT_NE(cap.lines[0].find("\"level\":\"warn\""), std::string::npos);
  EXPECT_NE(cap.lines[0].find("\"msg\":\"quote\\\"d\""), std::string::npos);
  EXPECT_NE(cap.lines[0].find("\"pci\":\"0000:3b:00.0\""), std::string::npos);
  EXPECT_FALSE(ParseLogLevel("loud").ok());
  EXPECT_EQ(*ParseLogFormat("json"), LogFormat::kJson);
}

// inotify reports creations in a watched directory; Wake() interrupts a wait, whether it
// comes before the wait or while it blocks.
TEST(InotifyTest, EventsAndWake) {
  TempDir tmp;
  auto created = InotifyWatcher::Create();
  ASSERT_TRUE(created.ok());
  std::shared_ptr<InotifyWatcher> w = std::move(created).value();
  ASSERT_TRUE(w->AddWatch(tmp.path(), IN_CREATE | IN_DELETE).ok());
  std::ofstream(tmp.path() + "/kubelet.sock") << "";
  auto ev = w->Wait(testing::kBlockingTimeout);
  ASSERT_TRUE(ev.ok());
  ASSERT_FALSE(ev->empty());
  EXPECT_EQ((*ev)[0].name, "kubelet.sock");
  EXPECT_TRUE((*ev)[0].mask & IN_CREATE);
  // Waits that only the wake-up can end before kBlockingTimeout.
  using Wait = testing::BlockingCall<Result<std::vector<InotifyEvent>>>;
  auto wait = [w] { return w->Wait(testing::kBlockingTimeout); };
  w->Wake();
  Wait pending(wait);
  ASSERT_TRUE(pending.Returned()) << "a pending Wake() must end the next Wait()";
  EXPECT_TRUE(pending.result().ok() && pending.result()->empty());
  Wait blocked(wait);
  ASSERT_TRUE(blocked.Blocked());
  w->Wake();
  ASSERT_TRUE(blocked.Returned()) << "Wake() must end a blocked Wait()";
  EXPECT_TRUE(blocked.result().ok() && blocked.result()->empty());
  EXPECT_TRUE(w->AddWatch(tmp.path() + "/missing", IN_CREATE).status().IsNotFound());
}

// A named network namespace, deleted on destruction.
class NetnsFixture {
 public:
  NetnsFixture() : name_("hcashare-t" + std::to_string(::getpid())) {
    ok_ = ::geteuid() == 0 && Run("ip netns add " + name_);
  }
  ~NetnsFixture() {
    if (ok_) Run("ip netns del " + name_);
  }
  bool ok() const { return ok_; }
  bool Run(const std::string& cmd) const {
    return std::system((cmd + " 2>/dev/null").c_str()) == 0;
  }
  bool InNs(const std::string& cmd) const { return Run("ip -n " + name_ + " " + cmd); }
  // Runs `fn` on a thread that has entered the namespace.
  template <typename F>
  void Within(F fn) const {
    std::thread t([&] {
      int fd = ::open(("/var/run/netns/" + name_).c_str(), O_RDONLY | O_CLOEXEC);
      ASSERT_GE(fd, 0);
      ASSERT_EQ(::setns(fd, CLONE_NEWNET), 0);
      ::close(fd);
      fn();
    });
    t.join();
  }

 private:
  std::string name_;
  bool ok_ = false;
};

// The libnl link helper reads a real veth pair inside a real network namespace.
TEST(NetlinkTest, VethStateInNamespace) {
  NetnsFixture ns;
  if (!ns.ok()) GTEST_SKIP() << "needs root and ip netns";
  ASSERT_TRUE(ns.InNs("link add hcv0 type veth peer name hcv1"));
  ASSERT_TRUE(ns.InNs("link set hcv0 mtu 9000 address 02:00:00:00:00:01"));
  ns.Within([] {
    auto links = NewNetlinkLinkProvider();
    auto st = links->GetLink("hcv0");
    ASSERT_TRUE(st.ok()) << st.status().ToString();
    EXPECT_EQ(st->mtu, 9000u);
    EXPECT_EQ(st->mac, "02:00:00:00:00:01");
    EXPECT_EQ(st->arp_type, 1u);
    EXPECT_FALSE(st->admin_up);
    EXPECT_TRUE(links->GetLink("nope0").status().IsNotFound());
  });
  ASSERT_TRUE(ns.InNs("link set hcv0 up"));
  ns.Within([] {
    auto st = NewNetlinkLinkProvider()->GetLink("hcv0");
    ASSERT_TRUE(st.ok());
    EXPECT_TRUE(st->admin_up);
  });
}

// rtnetlink link notifications arrive for a real veth created in the source's namespace,
// and Wake() interrupts a wait.
TEST(LinkEventsTest, RealVethEventInNamespace) {
  NetnsFixture ns;
  if (!ns.ok()) GTEST_SKIP() << "needs root and ip netns";
  ns.Within([&] {
    auto links = LinkEvents::Open();
    ASSERT_TRUE(links.ok()) << links.status().ToString();
    std::shared_ptr<LinkEvents> events = std::move(links).value();
    ASSERT_TRUE(ns.InNs("link add hcle0 type veth peer name hcle1"));
    auto got = events->Wait(testing::kBlockingTimeout);  // the veth's messages end it
    ASSERT_TRUE(got.ok());
    EXPECT_TRUE(*got);
    // A wait that only Wake() can end before kBlockingTimeout.
    testing::BlockingCall<Result<bool>> woken(
        [events] { return events->Wait(testing::kBlockingTimeout); });
    ASSERT_TRUE(woken.Blocked());
    events->Wake();
    ASSERT_TRUE(woken.Returned()) << "Wake() must end a blocked Wait()";
    ASSERT_TRUE(woken.result().ok());
    EXPECT_FALSE(*woken.result());
  });
}

std::vector<uint8_t> Attr(uint16_t type, std::vector<uint8_t> payload) {
  std::vector<uint8_t> out(NLA_HDRLEN + NLA_ALIGN(payload.size()), 0);
  auto* nla = reinterpret_cast<nlattr*>(out.data());
  nla->nla_len = static_cast<uint16_t>(NLA_HDRLEN + payload.size());
  nla->nla_type = type;
  std::copy(payload.begin(), payload.end(), out.begin() + NLA_HDRLEN);
  return out;
}

// The SYS_GET reply parser reads the netns mode and rejects malformed replies.
TEST(RdmaNetlinkTest, ParsesSysGetReply) {
  auto other = Attr(RDMA_NLDEV_SYS_ATTR_NETNS_MODE + 1, {7, 7, 7, 7});
  auto shared = Attr(RDMA_NLDEV_SYS_ATTR_NETNS_MODE, {1});
  std::vector<uint8_t> buf = other;
  buf.insert(buf.end(), shared.begin(), shared.end());
  EXPECT_EQ(*ParseSysGetAttributes(buf.data(), buf.size()), RdmaNetnsMode::kShared);
  auto excl = Attr(RDMA_NLDEV_SYS_ATTR_NETNS_MODE, {0});
  EXPECT_EQ(*ParseSysGetAttributes(excl.data(), excl.size()), RdmaNetnsMode::kExclusive);
  auto bad = Attr(RDMA_NLDEV_SYS_ATTR_NETNS_MODE, {9});
  EXPECT_FALSE(ParseSysGetAttributes(bad.data(), bad.size()).ok());
  EXPECT_FALSE(ParseSysGetAttributes(other.data(), other.size()).ok());
  std::vector<uint8_t> truncated = shared;
  reinterpret_cast<nlattr*>(truncated.data())->nla_len = 200;
  EXPECT_FALSE(ParseSysGetAttributes(truncated.data(), truncated.size()).ok());
}

// A DEV_GET reply in the kernel's attribute layout (index, name, and the attributes the
// parser must skip: node type, firmware string, node GUID) yields the index and name.
TEST(RdmaNetlinkTest, ParsesDevGetReply) {
  auto u32 = [](uint32_t v) {
    std::vector<uint8_t> b(4);
    std::memcpy(b.data(), &v, 4);
    return b;
  };
  auto str = [](const std::string& s) {
    return std::vector<uint8_t>(s.c_str(), s.c_str() + s.size() + 1);
  };
  std::vector<uint8_t> reply;
  for (const auto& a :
       {Attr(RDMA_NLDEV_ATTR_DEV_INDEX, u32(3)), Attr(RDMA_NLDEV_ATTR_DEV_NAME, str("mlx5_vf2")),
        Attr(RDMA_NLDEV_ATTR_DEV_NODE_TYPE, {1}),
        Attr(RDMA_NLDEV_ATTR_FW_VERSION, str("20.31.1014")),
        Attr(RDMA_NLDEV_ATTR_NODE_GUID, std::vector<uint8_t>(8, 0xab))}) {
    reply.insert(reply.end(), a.begin(), a.end());
  }
  auto ref = ParseDevGetAttributes(reply.data(), reply.size());
  ASSERT_TRUE(ref.ok()) << ref.status().ToString();
  EXPECT_EQ(ref->index, 3u);
  EXPECT_EQ(ref->name, "mlx5_vf2");
  auto no_name = Attr(RDMA_NLDEV_ATTR_DEV_INDEX, u32(3));
  EXPECT_FALSE(ParseDevGetAttributes(no_name.data(), no_name.size()).ok());
  std::vector<uint8_t> truncated = reply;
  reinterpret_cast<nlattr*>(truncated.data())->nla_len = 1000;
  EXPECT_FALSE(ParseDevGetAttributes(truncated.data(), truncated.size()).ok());
}

// The SET request that moves a device: DEV_INDEX then NET_NS_FD, each a u32 attribute.
TEST(RdmaNetlinkTest, BuildsSetNetnsRequest) {
  const std::vector<uint8_t> attrs = BuildSetNetnsAttributes(7, 12);
  ASSERT_EQ(attrs.size(), 16u);
  const auto* first = reinterpret_cast<const nlattr*>(attrs.data());
  const auto* second = reinterpret_cast<const nlattr*>(attrs.data() + 8);
  EXPECT_EQ(first->nla_type, RDMA_NLDEV_ATTR_DEV_INDEX);
  EXPECT_EQ(first->nla_len, 8);
  EXPECT_EQ(second->nla_type, RDMA_NLDEV_NET_NS_FD);
  uint32_t index = 0, fd = 0;
  std::memcpy(&index, attrs.data() + 4, 4);
  std::memcpy(&fd, attrs.data() + 12, 4);
  EXPECT_EQ(index, 7u);
  EXPECT_EQ(fd, 12u);
}

// Against the real kernel (no RDMA here): listing answers, or RDMA netlink is Unavailable;
// moving a device that does not exist is an error, never a crash.
TEST(RdmaNetlinkTest, RealKernelListAndMoveOfAnAbsentDevice) {
  auto rdma = NewRdmaNetlink();
  auto list = rdma->ListDevices();
  if (!list.ok()) {
    EXPECT_EQ(list.status().code(), StatusCode::kUnavailable) << list.status().ToString();
  }
  EXPECT_FALSE(rdma->MoveToNetns("hcashare-no-such-rdma-device", 0).ok());
}

// The IPoIB child request: RTM_NEWLINK creating `name` on the parent's ifindex, inside the
// target namespace, of kind "ipoib" with the partition key and datagram mode.
TEST(IpoibTest, BuildsTheChildRequest) {
  const std::vector<uint8_t> msg = BuildIpoibChildRequest("net1", 7, 0x8001, 12);
  ASSERT_GE(msg.size(), sizeof(nlmsghdr) + sizeof(ifinfomsg));
  const auto* hdr = reinterpret_cast<const nlmsghdr*>(msg.data());
  EXPECT_EQ(hdr->nlmsg_len, msg.size());
  EXPECT_EQ(hdr->nlmsg_type, RTM_NEWLINK);
  EXPECT_EQ(hdr->nlmsg_flags & (NLM_F_CREATE | NLM_F_EXCL), NLM_F_CREATE | NLM_F_EXCL);
  // Walk the attributes after the ifinfomsg.
  std::map<int, std::vector<uint8_t>> top;
  size_t off = NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(ifinfomsg));
  auto walk = [](const uint8_t* p, size_t len) {
    std::map<int, std::vector<uint8_t>> out;
    size_t o = 0;
    while (o + NLA_HDRLEN <= len) {
      const auto* a = reinterpret_cast<const nlattr*>(p + o);
      if (a->nla_len < NLA_HDRLEN || o + a->nla_len > len) break;
      out[a->nla_type & NLA_TYPE_MASK] =
          std::vector<uint8_t>(p + o + NLA_HDRLEN, p + o + a->nla_len);
      o += NLA_ALIGN(a->nla_len);
    }
    return out;
  };
  top = walk(msg.data() + off, msg.size() - off);
  ASSERT_TRUE(top.count(IFLA_IFNAME));
  EXPECT_STREQ(reinterpret_cast<const char*>(top[IFLA_IFNAME].data()), "net1");
  uint32_t u32 = 0;
  std::memcpy(&u32, top[IFLA_LINK].data(), 4);
  EXPECT_EQ(u32, 7u);
  std::memcpy(&u32, top[IFLA_NET_NS_FD].data(), 4);
  EXPECT_EQ(u32, 12u);
  auto info = walk(top[IFLA_LINKINFO].data(), top[IFLA_LINKINFO].size());
  EXPECT_STREQ(reinterpret_cast<const char*>(info[IFLA_INFO_KIND].data()), "ipoib");
  auto data = walk(info[IFLA_INFO_DATA].data(), info[IFLA_INFO_DATA].size());
  uint16_t u16 = 0;
  std::memcpy(&u16, data[IFLA_IPOIB_PKEY].data(), 2);
  EXPECT_EQ(u16, 0x8001);
  std::memcpy(&u16, data[IFLA_IPOIB_MODE].data(), 2);
  EXPECT_EQ(u16, 0);
}

// The pool description round-trips and rejects documents that are not one.
TEST(PoolInfoTest, RoundTripAndErrors) {
  PoolInfo info;
  info.resource = "rdma/hca_a";
  info.hcas = {{"0000:3b:00.0", {"ib0"}, {"mlx5_0"}, 1, false}};
  info.id_numa = {{"0", 1}};
  auto back = ParsePoolInfo(PoolInfoToJson(info));
  ASSERT_TRUE(back.ok()) << back.status().ToString();
  EXPECT_TRUE(*back == info);
  EXPECT_EQ(PoolInfoFileName("example.com/hca_a"), "example_com_hca_a.json");
  for (const char* bad : {"", "[]", "{}", R"({"resource": "r"})",
                          R"({"resource": "r", "hcas": [{"netdevs": []}]})"}) {
    EXPECT_FALSE(ParsePoolInfo(bad).ok()) << bad;
  }
}

// The device plugin's largest pool (kMaxRdmaHcaMax topology IDs, 256 HCAs with long
// names) stays well inside the cap its readers apply.
TEST(PoolInfoTest, LargestPoolFitsTheCap) {
  PoolInfo info;
  info.resource = "example.com/" + std::string(config::kMaxResourceNameLength, 'r');
  for (int i = 0; i < 256; ++i) {
    info.hcas.push_back({"0000:3b:00." + std::to_string(i),
                         {std::string(15, 'n')},
                         {std::string(63, 'm')},
                         7,
                         true});
  }
  for (int id = 0; id < config::kMaxRdmaHcaMax; ++id) info.id_numa[std::to_string(id)] = 7;
  const size_t size = PoolInfoToJson(info).size();
  EXPECT_LT(size, kMaxPoolInfoBytes / 4) << size;
}

// common/lock_file.h: a lock file is removed only when nobody holds it.
TEST(LockFileTest, UnheldIsRemovedHeldIsKept) {
  TempDir tmp("hcashare-lock-");
  const std::string path = tmp.path() + "/add-a-net1.lock";
  {
    auto held = TryLockFile(path, 0600);
    ASSERT_TRUE(held.ok()) << held.status().ToString();
    EXPECT_EQ(TryLockFile(path, 0600).status().code(), StatusCode::kUnavailable);
    auto kept = RemoveLockFileIfUnheld(path, /*remove=*/true);
    ASSERT_TRUE(kept.ok()) << kept.status().ToString();
    EXPECT_FALSE(*kept);
    EXPECT_TRUE(std::filesystem::exists(path));
  }
  EXPECT_TRUE(RemoveLockFileIfUnheld(path, /*remove=*/false).value_or(false));
  EXPECT_TRUE(std::filesystem::exists(path)) << "only reported";
  EXPECT_TRUE(RemoveLockFileIfUnheld(path, /*remove=*/true).value_or(false));
  EXPECT_FALSE(std::filesystem::exists(path));
  EXPECT_FALSE(RemoveLockFileIfUnheld(path, /*remove=*/true).value_or(true)) << "absent";
}

// The race of common/lock_file.h: a locker whose open came before a collector's unlink
// must not end up holding a lock on the unlinked file (a second locker would then lock
// the new file as well). Whenever TryLockFile returns, the path names the file it locked.
// A collector removes the file as fast as it can meanwhile; without the re-check after
// the flock this fails within a few thousand rounds.
TEST(LockFileTest, ALockerNeverHoldsAnUnlinkedFile) {
  TempDir tmp("hcashare-lock-");
  const std::string path = tmp.path() + "/add-a-net1.lock";
  std::atomic<bool> stop{false};
  std::thread collector([&] {
    while (!stop) (void)RemoveLockFileIfUnheld(path, /*remove=*/true);
  });
  int locked = 0, stale = 0;
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  while (std::chrono::steady_clock::now() < end) {
    auto fd = TryLockFile(path, 0600);
    if (!fd.ok()) continue;  // Unavailable: the collector holds it right now
    ++locked;
    struct stat by_path {};
    struct stat by_fd {};
    if (::lstat(path.c_str(), &by_path) != 0 || ::fstat(fd->get(), &by_fd) != 0 ||
        by_path.st_ino != by_fd.st_ino) {
      ++stale;
    }
  }
  stop = true;
  collector.join();
  EXPECT_GT(locked, 100);
  EXPECT_EQ(stale, 0) << "of " << locked << " locks";
}

// Against the real kernel: either a mode, or Unavailable when RDMA netlink is absent.
TEST(RdmaNetlinkTest, RealKernelAnswersOrIsUnavailable) {
  auto mode = NewRdmaNetlink()->GetNetnsMode();
  if (!mode.ok()) {
    EXPECT_EQ(mode.status().code(), StatusCode::kUnavailable) << mode.status().ToString();
  }
}

// Exit codes and signals come back from Wait().
TEST(SubprocessTest, ExitCodesAndSignals) {
  auto p = Subprocess::Spawn({"/bin/sh", "-c", "exit 3"});
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(*p->Wait(std::chrono::seconds(5)), 3);
  auto s = Subprocess::Spawn({"/bin/sleep", "30"});
  ASSERT_TRUE(s.ok());
  EXPECT_FALSE(s->Wait(std::chrono::milliseconds(50)).ok());
  ASSERT_TRUE(s->Signal(SIGTERM).ok());
  EXPECT_EQ(*s->Wait(std::chrono::seconds(5)), 128 + SIGTERM);
}

// A child spawned with die_with_parent is killed when the process that spawned it ends (as a
// test that aborts takes its daemons with it); one spawned without it lives on. Checked in a
// forked subreaper, which inherits the orphans: subreaper -> spawner -> two sleeps.
int OrphanSignals() {
  if (::prctl(PR_SET_CHILD_SUBREAPER, 1) != 0) return 10;
  int fds[2];
  if (::pipe(fds) != 0) return 11;
  const pid_t spawner = ::fork();
  if (spawner == 0) {
    auto bound = Subprocess::Spawn({"/bin/sleep", "30"});  // the default for this overload
    auto free = Subprocess::Spawn({"/bin/sleep", "30"}, SpawnOptions{});
    const pid_t pids[2] = {bound.ok() ? bound->pid() : -1, free.ok() ? free->pid() : -1};
    const bool sent = ::write(fds[1], pids, sizeof pids) == sizeof pids;
    ::_exit(sent ? 0 : 1);  // no destructors: the children outlive this process
  }
  pid_t pids[2] = {-1, -1};
  if (::read(fds[0], pids, sizeof pids) != sizeof pids || pids[0] < 0 || pids[1] < 0) return 12;
  int status = 0;
  ::waitpid(spawner, &status, 0);
  const bool free_running = ::waitpid(pids[1], &status, WNOHANG) == 0;
  ::kill(pids[1], SIGTERM);
  ::waitpid(pids[1], &status, 0);
  if (::waitpid(pids[0], &status, 0) != pids[0]) return 13;
  // SIGKILL, or 127 when the spawner had already gone before the child could ask.
  const bool killed = WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL;
  if (!killed && !(WIFEXITED(status) && WEXITSTATUS(status) == 127)) return 14;
  return free_running ? 0 : 15;
}

TEST(SubprocessTest, DieWithParentKillsTheChildOfAnEndedProcess) {
  const pid_t reaper = ::fork();
  ASSERT_GE(reaper, 0);
  if (reaper == 0) ::_exit(OrphanSignals());
  int status = 0;
  ASSERT_EQ(::waitpid(reaper, &status, 0), reaper);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "10 subreaper, 11 pipe, 12 spawn, 13 wait, 14 the bound "
                                       "child was not SIGKILLed, 15 the free child ended";
}

// A child that ignores the signal: the failure names its threads and where they wait (and,
// with gdb, their stacks), and the child is killed and reaped; one that obeys gives its code.
TEST(SubprocessTest, SignalAndWaitDescribesAChildThatDidNotEnd) {
  auto p = Subprocess::Spawn({"/bin/sleep", "60"});
  ASSERT_TRUE(p.ok());
  auto rc = fake::SignalAndWait(*p, SIGCONT, std::chrono::milliseconds(200));
  ASSERT_FALSE(rc.ok());
  const std::string what = rc.status().message();
  EXPECT_NE(what.find("'sleep' state S"), std::string::npos) << what;
  if (::access("/usr/bin/gdb", X_OK) == 0) {
    EXPECT_NE(what.find("#0 "), std::string::npos) << what;
  }
  EXPECT_FALSE(p->Signal(SIGCONT).ok()) << "killed and reaped";

  auto q = Subprocess::Spawn({"/bin/sleep", "60"});
  ASSERT_TRUE(q.ok());
  EXPECT_EQ(fake::SignalAndWait(*q, SIGTERM, std::chrono::milliseconds(10000)).value_or(-1),
            128 + SIGTERM);
}

TEST(StringsTest, SplitOnKeepsEmptyPieces) {
  using V = std::vector<std::string>;
  EXPECT_EQ(SplitOn("", '/'), V{""});
  EXPECT_EQ(SplitOn("a", '/'), V{"a"});
  EXPECT_EQ(SplitOn("/apis//v1/", '/'), (V{"", "apis", "", "v1", ""}));
}

// RFC 3629's well-formed sequences, at their edges; the offset is that of the sequence's
// first byte.
TEST(StringsTest, FirstNonUtf8ByteFollowsRfc3629) {
  constexpr size_t kNone = std::string_view::npos;
  EXPECT_EQ(FirstNonUtf8Byte(""), kNone);
  EXPECT_EQ(FirstNonUtf8Byte("plain ascii\n"), kNone);
  EXPECT_EQ(FirstNonUtf8Byte("\xc2\x80 \xdf\xbf"), kNone);                 // U+0080, U+07FF
  EXPECT_EQ(FirstNonUtf8Byte("\xe0\xa0\x80\xef\xbf\xbf"), kNone);          // U+0800, U+FFFF
  EXPECT_EQ(FirstNonUtf8Byte("\xf0\x90\x80\x80\xf4\x8f\xbf\xbf"), kNone);  // U+10000, U+10FFFF
  EXPECT_EQ(FirstNonUtf8Byte("ab\xff"), 2u);
  EXPECT_EQ(FirstNonUtf8Byte("a\x80"), 1u);             // a lone continuation byte
  EXPECT_EQ(FirstNonUtf8Byte("a\xc1\xbf"), 1u);         // overlong
  EXPECT_EQ(FirstNonUtf8Byte("\xe0\x9f\xbf"), 0u);      // overlong
  EXPECT_EQ(FirstNonUtf8Byte("\xed\xa0\x80"), 0u);      // a surrogate
  EXPECT_EQ(FirstNonUtf8Byte("\xf4\x90\x80\x80"), 0u);  // past U+10FFFF
  EXPECT_EQ(FirstNonUtf8Byte("xy\xe2\x82"), 2u);        // cut short
  EXPECT_EQ(FirstNonUtf8Byte("\xe2\x82x"), 0u);         // not continued
}

}  // namespace
}  // namespace hcashare
