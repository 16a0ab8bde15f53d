// Tests for common/uevent: the datagram parser, the RDMA relevance filter, the fake source,
// and the kernel source against real kernel uevents (veth pairs; root only).
#include "common/uevent.h"

#include <fcntl.h>
#include <linux/netlink.h>
#include <poll.h>
#include <sched.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "common/unique_fd.h"
#include "testing/fake_uevent_source.h"
#include "tests/test_util.h"

namespace hcashare {
namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

// Joins `parts` as the kernel does: each one followed by a NUL.
std::string Datagram(std::initializer_list<std::string_view> parts) {
  std::string out;
  for (auto p : parts) {
    out.append(p);
    out.push_back('\0');
  }
  return out;
}

Result<Uevent> Parse(const std::string& s) { return ParseUevent(s.data(), s.size()); }

constexpr char kPciPath[] = "/devices/pci0000:00/0000:00:02.0/0000:03:00.0";

// A realistic PCI hot-add: header, subsystem and every KEY=VALUE pair.
TEST(ParseUeventTest, PciAdd) {
  std::string d = std::string("DEVPATH=") + kPciPath;
  auto ev = Parse(
      Datagram({std::string("add@") + kPciPath, "ACTION=add", d, "SUBSYSTEM=pci",
                "DRIVER=mlx5_core", "PCI_CLASS=20000", "PCI_ID=15B3:101D",
                "PCI_SLOT_NAME=0000:03:00.0", "MODALIAS=pci:v000015B3d0000101D", "SEQNUM=1234"}));
  ASSERT_TRUE(ev.ok()) << ev.status().ToString();
  EXPECT_EQ(ev->action, "add");
  EXPECT_EQ(ev->devpath, kPciPath);
  EXPECT_EQ(ev->subsystem, "pci");
  EXPECT_EQ(ev->env.size(), 9u);
  EXPECT_EQ(ev->env.at("ACTION"), "add");
  EXPECT_EQ(ev->env.at("DEVPATH"), kPciPath);
  EXPECT_EQ(ev->env.at("PCI_SLOT_NAME"), "0000:03:00.0");
  EXPECT_EQ(ev->env.at("PCI_ID"), "15B3:101D");
  EXPECT_EQ(ev->env.at("SEQNUM"), "1234");
}

TEST(ParseUeventTest, NetRemove) {
  auto ev = Parse(Datagram({"remove@/devices/virtual/net/veth0", "ACTION=remove",
                            "DEVPATH=/devices/virtual/net/veth0", "SUBSYSTEM=net",
                            "INTERFACE=veth0", "IFINDEX=7", "SEQNUM=99"}));
  ASSERT_TRUE(ev.ok()) << ev.status().ToString();
  EXPECT_EQ(ev->action, "remove");
  EXPECT_EQ(ev->devpath, "/devices/virtual/net/veth0");
  EXPECT_EQ(ev->subsystem, "net");
  EXPECT_EQ(ev->env.at("INTERFACE"), "veth0");
  EXPECT_EQ(ev->env.at("IFINDEX"), "7");
}

TEST(ParseUeventTest, InfinibandAdd) {
  std::string path = std::string(kPciPath) + "/infiniband/mlx5_0";
  auto ev = Parse(Datagram({"add@" + path, "ACTION=add", "DEVPATH=" + path, "SUBSYSTEM=infiniband",
                            "NAME=mlx5_0", "SEQNUM=5"}));
  ASSERT_TRUE(ev.ok()) << ev.status().ToString();
  EXPECT_EQ(ev->action, "add");
  EXPECT_EQ(ev->devpath, path);
  EXPECT_EQ(ev->subsystem, "infiniband");
  EXPECT_EQ(ev->env.at("NAME"), "mlx5_0");
}

// udevd re-broadcasts with a "libudev\0" binary header; those are not kernel events.
TEST(ParseUeventTest, RejectsLibudevMessages) {
  std::string udev("libudev\0\xfe\xed\xca\xfe", 12);
  udev += Datagram({"add@/devices/virtual/net/veth0", "ACTION=add", "SUBSYSTEM=net"});
  auto ev = Parse(udev);
  ASSERT_FALSE(ev.ok());
  EXPECT_EQ(ev.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(ev.status().message().find("udev"), std::string::npos) << ev.status().ToString();
}

TEST(ParseUeventTest, RejectsMalformedInput) {
  EXPECT_EQ(ParseUevent(nullptr, 0).status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ParseUevent("add@/x", 0).status().code(), StatusCode::kInvalidArgument);
  for (const std::string& bad :
       {std::string("garbage"), Datagram({"add/devices/x", "ACTION=add"}),
        Datagram({"@/devices/x"}), Datagram({"add@"}), Datagram({"add@devices/x"}),
        std::string(3, '\0'), Datagram({"", "add@/devices/x"}), std::string("\xff\xfe@", 3)}) {
    auto ev = Parse(bad);
    EXPECT_FALSE(ev.ok()) << "accepted: " << ::testing::PrintToString(bad);
    EXPECT_EQ(ev.status().code(), StatusCode::kInvalidArgument);
  }
}

// No trailing NUL, and `len` is the only bound: bytes past it are never read (the buffers
// are exact-size heap allocations so a sanitizer build catches over-reads).
TEST(ParseUeventTest, MissingTrailingNulAndLengthBound) {
  std::string full = Datagram({"change@/devices/x", "SUBSYSTEM=net"});
  std::vector<char> exact(full.begin(), full.end() - 1);  // drop the final NUL
  auto ev = ParseUevent(exact.data(), exact.size());
  ASSERT_TRUE(ev.ok()) << ev.status().ToString();
  EXPECT_EQ(ev->action, "change");
  EXPECT_EQ(ev->subsystem, "net");

  std::string longer = Datagram({"change@/devices/x", "SUBSYSTEM=netXYZ", "EXTRA=1"});
  size_t cut = longer.find("XYZ");
  ev = ParseUevent(longer.data(), cut);
  ASSERT_TRUE(ev.ok()) << ev.status().ToString();
  EXPECT_EQ(ev->subsystem, "net");
  EXPECT_EQ(ev->env.count("EXTRA"), 0u);

  std::vector<char> header_only = {'a', 'd', 'd', '@', '/', 'x'};
  ev = ParseUevent(header_only.data(), header_only.size());
  ASSERT_TRUE(ev.ok()) << ev.status().ToString();
  EXPECT_EQ(ev->devpath, "/x");
  EXPECT_TRUE(ev->env.empty());
}

// Policy: segments that are not KEY=VALUE (no '=', empty key, empty segment) are skipped;
// an empty value is kept; the last of duplicate keys wins.
TEST(ParseUeventTest, SkipsSegmentsWithoutKeyValue) {
  auto ev = Parse(Datagram({"bind@/devices/x", "NOEQUALS", "=novalue", "", "SUBSYSTEM=pci",
                            "EMPTY=", "DRIVER=a", "DRIVER=b", "URL=a=b"}));
  ASSERT_TRUE(ev.ok()) << ev.status().ToString();
  EXPECT_EQ(ev->env.size(), 4u);
  EXPECT_EQ(ev->env.count("NOEQUALS"), 0u);
  EXPECT_EQ(ev->env.count(""), 0u);
  EXPECT_EQ(ev->env.at("EMPTY"), "");
  EXPECT_EQ(ev->env.at("DRIVER"), "b");
  EXPECT_EQ(ev->env.at("URL"), "a=b");
  EXPECT_EQ(ev->subsystem, "pci");
}

// Policy: a message whose ACTION=/DEVPATH= contradicts its header is rejected (the kernel
// never sends one); a message without them takes the header's values.
TEST(ParseUeventTest, RejectsHeaderMismatch) {
  auto ev = Parse(Datagram({"add@/devices/x", "ACTION=remove", "SUBSYSTEM=pci"}));
  EXPECT_EQ(ev.status().code(), StatusCode::kInvalidArgument);
  ev = Parse(Datagram({"add@/devices/x", "ACTION=add", "DEVPATH=/devices/y"}));
  EXPECT_EQ(ev.status().code(), StatusCode::kInvalidArgument);
  ev = Parse(Datagram({"unbind@/devices/x", "SUBSYSTEM=pci"}));
  ASSERT_TRUE(ev.ok()) << ev.status().ToString();
  EXPECT_EQ(ev->action, "unbind");
  EXPECT_EQ(ev->devpath, "/devices/x");
}

TEST(ParseUeventTest, HugeMessages) {
  std::string many = Datagram({"add@/devices/x", "SUBSYSTEM=pci"});
  constexpr int kKeys = 200000;
  for (int i = 0; i < kKeys; ++i) many += "K" + std::to_string(i) + "=v" + '\0';
  auto ev = Parse(many);
  ASSERT_TRUE(ev.ok()) << ev.status().ToString();
  EXPECT_EQ(ev->env.size(), static_cast<size_t>(kKeys) + 1);
  EXPECT_EQ(ev->env.at("K199999"), "v");

  std::string big_value = "add@/devices/x";
  big_value += '\0';
  big_value += "BLOB=" + std::string(8 << 20, 'z');  // no trailing NUL
  ev = Parse(big_value);
  ASSERT_TRUE(ev.ok()) << ev.status().ToString();
  EXPECT_EQ(ev->env.at("BLOB").size(), static_cast<size_t>(8 << 20));

  std::string no_header(8 << 20, 'a');
  EXPECT_EQ(Parse(no_header).status().code(), StatusCode::kInvalidArgument);
}

Uevent Ev(std::string action, std::string subsystem) {
  Uevent ev;
  ev.action = std::move(action);
  ev.devpath = "/devices/x";
  ev.subsystem = std::move(subsystem);
  return ev;
}

TEST(IsRelevantForRdmaTest, Subsystems) {
  for (const char* action : {"add", "remove", "change", "move", "bind", "unbind"}) {
    for (const char* s : {"pci", "net", "infiniband", "infiniband_verbs", "infiniband_mad"}) {
      EXPECT_TRUE(IsRelevantForRdma(Ev(action, s))) << action << " " << s;
    }
    for (const char* s : {"block", "usb", "", "queues", "pci_bus", "netx", "tty", "PCI"}) {
      EXPECT_FALSE(IsRelevantForRdma(Ev(action, s))) << action << " " << s;
    }
  }
  EXPECT_TRUE(IsRelevantForRdma(Ev("overflow", "")));
}

bool Readable(int fd) {
  pollfd p{fd, POLLIN, 0};
  return ::poll(&p, 1, 0) == 1 && (p.revents & POLLIN);
}

// A Wait() on a source run on its own thread (it can own the source), with a timeout only
// a failing test reaches.
using WaitCall = testing::BlockingCall<Result<std::vector<Uevent>>>;
std::function<Result<std::vector<Uevent>>()> WaitOn(std::shared_ptr<UeventSource> src) {
  return [src] { return src->Wait(testing::kBlockingTimeout); };
}

// A Wait() with nothing queued blocks; an Inject() from another thread ends it with the
// event.
TEST(FakeUeventSourceTest, InjectFromAnotherThreadWakesWait) {
  auto src = std::make_shared<fake::FakeUeventSource>();
  WaitCall wait(WaitOn(src));
  ASSERT_TRUE(wait.Blocked());
  src->Inject(Ev("add", "infiniband"));
  ASSERT_TRUE(wait.Returned()) << "Inject() did not end the blocked Wait()";
  const auto& evs = wait.result();
  ASSERT_TRUE(evs.ok());
  ASSERT_EQ(evs->size(), 1u);
  EXPECT_EQ((*evs)[0].subsystem, "infiniband");
}

TEST(FakeUeventSourceTest, QueuedEventsKeepOrderAndFdTracksThem) {
  fake::FakeUeventSource src;
  ASSERT_GE(src.fd(), 0);
  EXPECT_FALSE(Readable(src.fd()));
  src.Inject(Ev("add", "pci"));
  src.Inject(Ev("remove", "net"));
  EXPECT_TRUE(Readable(src.fd()));
  auto evs = src.Wait(milliseconds(0));
  ASSERT_TRUE(evs.ok());
  ASSERT_EQ(evs->size(), 2u);
  EXPECT_EQ((*evs)[0].action, "add");
  EXPECT_EQ((*evs)[1].action, "remove");
  EXPECT_FALSE(Readable(src.fd()));
  evs = src.Wait(milliseconds(0));
  ASSERT_TRUE(evs.ok());
  EXPECT_TRUE(evs->empty());
}

// Wake() ends a blocked Wait() with nothing, and a Wake() before Wait() ends the next one;
// neither waits for its timeout.
TEST(FakeUeventSourceTest, WakeWithNothingReturnsEmptyPromptly) {
  auto src = std::make_shared<fake::FakeUeventSource>();
  WaitCall blocked(WaitOn(src));
  ASSERT_TRUE(blocked.Blocked());
  src->Wake();
  ASSERT_TRUE(blocked.Returned()) << "Wake() did not end the blocked Wait()";
  ASSERT_TRUE(blocked.result().ok());
  EXPECT_TRUE(blocked.result()->empty());

  src->Wake();  // before Wait: the next Wait returns at once
  WaitCall pending(WaitOn(src));
  ASSERT_TRUE(pending.Returned()) << "a pending Wake() did not end the next Wait()";
  ASSERT_TRUE(pending.result().ok());
  EXPECT_TRUE(pending.result()->empty());
}

TEST(FakeUeventSourceTest, TimeoutReturnsEmpty) {
  fake::FakeUeventSource src;
  auto start = Clock::now();
  auto evs = src.Wait(milliseconds(150));
  auto elapsed = Clock::now() - start;
  ASSERT_TRUE(evs.ok());
  EXPECT_TRUE(evs->empty());
  EXPECT_GE(elapsed, milliseconds(140));  // it waited: a lower bound no slow machine breaks
}

// Opens the kernel source or explains why the test is skipped.
#define OPEN_KERNEL_SOURCE_OR_SKIP(var)                                                            \
  auto var##_or = NewKernelUeventSource();                                                         \
  if (!var##_or.ok()) {                                                                            \
    ASSERT_EQ(var##_or.status().code(), StatusCode::kUnavailable) << var##_or.status().ToString(); \
    GTEST_SKIP() << "uevent socket unavailable: " << var##_or.status().ToString();                 \
  }                                                                                                \
  std::unique_ptr<UeventSource> var = std::move(var##_or).value()

// Wake() ends a blocked Wait() (so may a real event of an unrelated device, which is fine);
// a timeout returns OK.
TEST(KernelUeventSourceTest, WakeAndTimeout) {
  OPEN_KERNEL_SOURCE_OR_SKIP(opened);
  std::shared_ptr<UeventSource> src = std::move(opened);
  EXPECT_GE(src->fd(), 0);
  WaitCall wait(WaitOn(src));
  ASSERT_TRUE(wait.Blocked());
  src->Wake();
  ASSERT_TRUE(wait.Returned()) << "Wake() did not end the blocked Wait()";
  ASSERT_TRUE(wait.result().ok()) << wait.result().status().ToString();
  // A timeout returns OK (events from unrelated devices may show up meanwhile).
  auto evs = src->Wait(milliseconds(20));
  ASSERT_TRUE(evs.ok()) << evs.status().ToString();
}

bool Sh(const std::string& cmd) { return std::system((cmd + " >/dev/null 2>&1").c_str()) == 0; }

// A veth pair in the current network namespace, deleted on destruction.
class VethPair {
 public:
  VethPair()
      : a_("hcue" + std::to_string(::getpid()) + "a"),
        b_("hcue" + std::to_string(::getpid()) + "b") {
    Sh("ip link del " + a_);  // leftovers of a crashed run
  }
  ~VethPair() { Sh("ip link del " + a_); }
  VethPair(const VethPair&) = delete;
  VethPair& operator=(const VethPair&) = delete;
  bool Create() const { return Sh("ip link add " + a_ + " type veth peer name " + b_); }
  bool Delete() const { return Sh("ip link del " + a_); }
  const std::string& a() const { return a_; }

 private:
  std::string a_;
  std::string b_;
};

// Waits up to `within` for a net event with `action` for interface `name`; `seen` is shown
// every event read on the way (the one found too).
bool AwaitNetEvent(UeventSource& src, const std::string& action, const std::string& name,
                   milliseconds within, Uevent* found,
                   const std::function<void(const Uevent&)>& seen = nullptr) {
  auto deadline = Clock::now() + within;
  while (Clock::now() < deadline) {
    auto left = std::chrono::duration_cast<milliseconds>(deadline - Clock::now());
    auto evs = src.Wait(std::max(left, milliseconds(1)));
    if (!evs.ok()) {
      ADD_FAILURE() << evs.status().ToString();
      return false;
    }
    for (auto& ev : *evs) {
      if (seen) seen(ev);
      auto it = ev.env.find("INTERFACE");
      if (ev.action == action && ev.subsystem == "net" && it != ev.env.end() &&
          it->second == name) {
        *found = ev;
        return true;
      }
    }
  }
  return false;
}

// A real kernel uevent (veth add, then remove) reaches the source.
TEST(KernelUeventSourceTest, ReceivesRealNetDeviceEvents) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to create a veth pair";
  OPEN_KERNEL_SOURCE_OR_SKIP(src);
  VethPair veth;
  ASSERT_TRUE(veth.Create()) << "ip link add " << veth.a() << " failed";
  Uevent ev;
  ASSERT_TRUE(AwaitNetEvent(*src, "add", veth.a(), milliseconds(10000), &ev))
      << "no add uevent for " << veth.a();
  EXPECT_EQ(ev.devpath, "/devices/virtual/net/" + veth.a());
  EXPECT_EQ(ev.env.at("ACTION"), "add");
  EXPECT_TRUE(IsRelevantForRdma(ev));

  ASSERT_TRUE(veth.Delete());
  ASSERT_TRUE(AwaitNetEvent(*src, "remove", veth.a(), milliseconds(10000), &ev))
      << "no remove uevent for " << veth.a();
  EXPECT_EQ(ev.devpath, "/devices/virtual/net/" + veth.a());
}

// Runs `fn` on a thread in a fresh, private network namespace (sockets created there stay
// in it). Returns false if the namespace cannot be created.
template <typename F>
bool InPrivateNetns(F fn) {
  bool ok = false;
  std::thread t([&] {
    if (::unshare(CLONE_NEWNET) != 0) return;
    ok = true;
    fn();
  });
  t.join();
  return ok;
}

// A userspace socket that multicasts to the kernel uevent group (root only).
UniqueFd UeventSender() {
  return UniqueFd(::socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_KOBJECT_UEVENT));
}

bool SendToKernelGroup(int fd, const std::string& msg) {
  sockaddr_nl dst{};
  dst.nl_family = AF_NETLINK;
  dst.nl_groups = 1;
  return ::sendto(fd, msg.data(), msg.size(), 0, reinterpret_cast<const sockaddr*>(&dst),
                  sizeof(dst)) == static_cast<ssize_t>(msg.size());
}

// Forged "kernel" messages from a userspace process are dropped (sender port id != 0), while
// a plain listener proves they were delivered, and a real kernel event that follows them (a
// veth created in the namespace) proves the source has read past them. Uses a private
// netns to avoid side effects; the veth goes with it.
TEST(KernelUeventSourceTest, IgnoresUserspaceSenders) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to send to the uevent group";
  Result<std::unique_ptr<UeventSource>> src = Status::Internal("not created");
  UniqueFd sender, listener, netns;
  bool in_ns = InPrivateNetns([&] {
    src = NewKernelUeventSource();
    sender = UeventSender();
    listener = UniqueFd(::socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_KOBJECT_UEVENT));
    netns = UniqueFd(::open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC));
  });
  if (!in_ns) GTEST_SKIP() << "cannot create a network namespace";
  if (!src.ok()) GTEST_SKIP() << src.status().ToString();
  ASSERT_TRUE(sender.valid() && listener.valid() && netns.valid());
  sockaddr_nl addr{};
  addr.nl_family = AF_NETLINK;
  addr.nl_groups = 1;
  ASSERT_EQ(::bind(listener.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)), 0);

  std::string forged = Datagram({"add@/devices/forged", "ACTION=add", "SUBSYSTEM=pci"});
  ASSERT_TRUE(SendToKernelGroup(sender.get(), forged));
  pollfd p{listener.get(), POLLIN, 0};
  ASSERT_EQ(::poll(&p, 1, 10000), 1) << "the forged message was not delivered at all";

  // The marker: the kernel's own uevent for a veth created in the namespace afterwards.
  const std::string veth = "hcuf" + std::to_string(::getpid()) + "a";
  bool created = false;
  std::thread([&] {
    created = ::setns(netns.get(), CLONE_NEWNET) == 0 &&
              Sh("ip link add " + veth + " type veth peer name " + veth + "b");
  }).join();
  ASSERT_TRUE(created) << "ip link add " << veth << " failed";
  Uevent marker;
  bool forged_seen = false;
  const bool marked = AwaitNetEvent(
      **src, "add", veth, milliseconds(10000), &marker,
      [&](const Uevent& ev) { forged_seen = forged_seen || ev.devpath == "/devices/forged"; });
  ASSERT_TRUE(marked) << "no uevent for " << veth;
  EXPECT_FALSE(forged_seen) << "the forged message came out of the source";
}

// A receive-buffer overflow (ENOBUFS) is reported as one "overflow" event.
TEST(KernelUeventSourceTest, ReportsOverflow) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to send to the uevent group";
  Result<std::unique_ptr<UeventSource>> src = Status::Internal("not created");
  UniqueFd sender;
  bool in_ns = InPrivateNetns([&] {
    src = NewKernelUeventSource();
    sender = UeventSender();
  });
  if (!in_ns) GTEST_SKIP() << "cannot create a network namespace";
  if (!src.ok()) GTEST_SKIP() << src.status().ToString();
  ASSERT_TRUE(sender.valid());
  int small = 4096;  // shrink the 1 MiB buffer so a burst overflows it
  ASSERT_EQ(::setsockopt((*src)->fd(), SOL_SOCKET, SO_RCVBUF, &small, sizeof(small)), 0);
  std::string msg = Datagram({"change@/devices/flood", "SUBSYSTEM=pci", std::string(1024, 'p')});
  for (int i = 0; i < 200; ++i) ASSERT_TRUE(SendToKernelGroup(sender.get(), msg));

  auto evs = (*src)->Wait(milliseconds(1000));
  ASSERT_TRUE(evs.ok()) << evs.status().ToString();
  auto overflows = std::count_if(evs->begin(), evs->end(),
                                 [](const Uevent& ev) { return ev.action == "overflow"; });
  EXPECT_EQ(overflows, 1);
}

}  // namespace
}  // namespace hcashare
