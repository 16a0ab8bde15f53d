#include "common/uevent.h"

#include <linux/netlink.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <iterator>
#include <string_view>
#include <utility>

#include "common/log.h"

namespace hcashare {

void DrainEventFd(int fd) {
  uint64_t v;
  ssize_t n = ::read(fd, &v, sizeof(v));
  (void)n;
}

void SignalEventFd(int fd) {
  uint64_t one = 1;
  ssize_t n = ::write(fd, &one, sizeof(one));
  (void)n;
}

namespace {

constexpr uint32_t kKernelGroup = 1;                // the kernel's uevent multicast group
constexpr int kReceiveBufferBytes = 1 << 20;        // absorbs bursts (e.g. a driver reload)
constexpr int kMaxDatagramsPerWait = 4096;          // bounds one Wait(); the rest stay queued
constexpr size_t kDatagramBufferBytes = 16 * 1024;  // kernel messages are < 4 KiB

Status UnavailableFromErrno(int err, const std::string& context) {
  return Status::Unavailable(ErrnoStatus(err, context).message());
}

class KernelUeventSource final : public UeventSource {
 public:
  KernelUeventSource(UniqueFd sock, UniqueFd wake_fd)
      : sock_(std::move(sock)), wake_fd_(std::move(wake_fd)) {}

  void Wake() override { SignalEventFd(wake_fd_.get()); }
  int fd() const override { return sock_.get(); }

  Result<std::vector<Uevent>> Wait(std::chrono::milliseconds timeout) override {
    using Clock = std::chrono::steady_clock;
    timeout = std::min(timeout, kMaxUeventWait);
    const auto deadline = Clock::now() + timeout;
    std::vector<Uevent> events;
    for (;;) {
      int poll_ms = -1;
      if (timeout.count() >= 0) {
        auto left = std::chrono::ceil<std::chrono::milliseconds>(deadline - Clock::now());
        poll_ms = static_cast<int>(std::max<int64_t>(0, left.count()));
      }
      pollfd fds[2] = {{sock_.get(), POLLIN, 0}, {wake_fd_.get(), POLLIN, 0}};
      int rc = ::poll(fds, 2, poll_ms);
      if (rc < 0 && errno != EINTR) return ErrnoStatus(errno, "poll uevent socket");
      bool woken = false;
      if (rc > 0 && (fds[1].revents & POLLIN)) {
        DrainEventFd(wake_fd_.get());
        woken = true;
      }
      // POLLERR signals a pending ENOBUFS (receive-buffer overflow).
      if (rc > 0 && (fds[0].revents & (POLLIN | POLLERR))) RETURN_IF_ERROR(Drain(&events));
      if (!events.empty() || woken) return events;
      if (timeout.count() >= 0 && Clock::now() >= deadline) return events;
    }
  }

 private:
  // Reads queued datagrams, appending kernel events to `out`; other senders are dropped.
  Status Drain(std::vector<Uevent>* out) {
    bool overflow_reported = false;
    for (int i = 0; i < kMaxDatagramsPerWait; ++i) {
      sockaddr_nl sender{};
      alignas(cmsghdr) std::array<char, CMSG_SPACE(sizeof(ucred))> control{};
      iovec iov{buf_.data(), buf_.size()};
      msghdr msg{};
      msg.msg_name = &sender;
      msg.msg_namelen = sizeof(sender);
      msg.msg_iov = &iov;
      msg.msg_iovlen = 1;
      msg.msg_control = control.data();
      msg.msg_controllen = control.size();
      ssize_t n = ::recvmsg(sock_.get(), &msg, MSG_DONTWAIT);
      if (n < 0) {
        if (errno == EAGAIN || errno == EWOULDBLOCK) return Status::Ok();
        if (errno == EINTR) continue;
        if (errno == ENOBUFS) {  // the kernel dropped events: callers must rescan
          if (!overflow_reported) {
            LogWarn("uevent receive buffer overflowed; events were lost");
            Uevent ev;
            ev.action = "overflow";
            out->push_back(std::move(ev));
            overflow_reported = true;
          }
          continue;
        }
        return ErrnoStatus(errno, "recvmsg uevent socket");
      }
      if (msg.msg_flags & MSG_TRUNC) {
        LogWarn("dropping truncated uevent", {{"bytes", n}});
        continue;
      }
      if (!FromKernel(msg, sender)) {
        LogDebug("ignoring uevent from a non-kernel sender", {{"nl_pid", sender.nl_pid}});
        continue;
      }
      auto ev = ParseUevent(buf_.data(), static_cast<size_t>(n));
      if (!ev.ok()) {
        LogDebug("ignoring malformed uevent", {{"error", ev.status().ToString()}});
        continue;
      }
      out->push_back(std::move(ev).value());
    }
    return Status::Ok();
  }

  // Only the kernel sends with port id 0; its credentials (when passed) carry pid 0.
  static bool FromKernel(msghdr& msg, const sockaddr_nl& sender) {
    if (msg.msg_namelen < sizeof(sender) || sender.nl_family != AF_NETLINK) return false;
    if (sender.nl_pid != 0) return false;
    for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
      if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_CREDENTIALS) continue;
      if (c->cmsg_len < CMSG_LEN(sizeof(ucred))) return false;
      ucred cred;
      std::memcpy(&cred, CMSG_DATA(c), sizeof(cred));
      if (cred.pid != 0) return false;
    }
    return true;
  }

  UniqueFd sock_;
  UniqueFd wake_fd_;  // eventfd
  std::array<char, kDatagramBufferBytes> buf_{};
};

}  // namespace

Result<Uevent> ParseUevent(const char* data, size_t len) {
  if (data == nullptr || len == 0) return Status::InvalidArgument("empty uevent");
  static constexpr char kUdevPrefix[] = "libudev";  // with its NUL: 8 bytes
  if (len >= sizeof(kUdevPrefix) && std::memcmp(data, kUdevPrefix, sizeof(kUdevPrefix)) == 0) {
    return Status::InvalidArgument("udev daemon message, not a kernel uevent");
  }
  std::string_view msg(data, len);
  size_t header_end = std::min(msg.find('\0'), msg.size());
  std::string_view header = msg.substr(0, header_end);
  size_t at = header.find('@');
  if (at == std::string_view::npos) return Status::InvalidArgument("uevent header lacks '@'");
  Uevent ev;
  ev.action = std::string(header.substr(0, at));
  ev.devpath = std::string(header.substr(at + 1));
  if (ev.action.empty()) return Status::InvalidArgument("uevent header has an empty action");
  if (ev.devpath.empty() || ev.devpath[0] != '/') {
    return Status::InvalidArgument("uevent header has a bad devpath");
  }

  size_t pos = header_end + 1;
  while (pos < msg.size()) {
    size_t end = std::min(msg.find('\0', pos), msg.size());
    std::string_view kv = msg.substr(pos, end - pos);
    pos = end + 1;
    size_t eq = kv.find('=');
    if (eq == std::string_view::npos || eq == 0) continue;  // not KEY=VALUE: skipped
    ev.env.insert_or_assign(std::string(kv.substr(0, eq)), std::string(kv.substr(eq + 1)));
  }

  if (auto it = ev.env.find("ACTION"); it != ev.env.end() && it->second != ev.action) {
    return Status::InvalidArgument("uevent ACTION=" + it->second + " contradicts header " +
                                   ev.action);
  }
  if (auto it = ev.env.find("DEVPATH"); it != ev.env.end() && it->second != ev.devpath) {
    return Status::InvalidArgument("uevent DEVPATH=" + it->second + " contradicts header " +
                                   ev.devpath);
  }
  if (auto it = ev.env.find("SUBSYSTEM"); it != ev.env.end()) ev.subsystem = it->second;
  return ev;
}

bool IsRelevantForRdma(const Uevent& ev) {
  if (ev.action == "overflow") return true;
  const std::string& s = ev.subsystem;
  return s == "pci" || s == "net" || s == "infiniband" || s == "infiniband_verbs" ||
         s == "infiniband_mad";
}

Result<std::unique_ptr<UeventSource>> NewKernelUeventSource() {
  UniqueFd sock(
      ::socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_KOBJECT_UEVENT));
  if (!sock.valid()) return UnavailableFromErrno(errno, "uevent socket");

  // A large buffer absorbs bursts; SO_RCVBUFFORCE (root) ignores net.core.rmem_max.
  int size = kReceiveBufferBytes;
  if (::setsockopt(sock.get(), SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size)) != 0 &&
      ::setsockopt(sock.get(), SOL_SOCKET, SO_RCVBUF, &size, sizeof(size)) != 0) {
    LogWarn("cannot enlarge the uevent receive buffer", {{"error", std::strerror(errno)}});
  }
  int on = 1;
  if (::setsockopt(sock.get(), SOL_SOCKET, SO_PASSCRED, &on, sizeof(on)) != 0) {
    return UnavailableFromErrno(errno, "uevent SO_PASSCRED");
  }

  sockaddr_nl addr{};
  addr.nl_family = AF_NETLINK;
  addr.nl_pid = 0;  // the kernel assigns a port id
  addr.nl_groups = kKernelGroup;
  if (::bind(sock.get(), reinterpret_cast<const sockaddr*>(&addr), sizeof(addr)) != 0) {
    return UnavailableFromErrno(errno, "bind uevent socket");
  }

  UniqueFd wake(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
  if (!wake.valid()) return ErrnoStatus(errno, "eventfd");
  return std::unique_ptr<UeventSource>(
      std::make_unique<KernelUeventSource>(std::move(sock), std::move(wake)));
}

}  // namespace hcashare
