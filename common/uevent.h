// Kernel uevents (NETLINK_KOBJECT_UEVENT): a parser, a source interface and the kernel
// socket (the test double is testing/fake_uevent_source.h). The device plugin rescans when
// PCI / net / InfiniBand devices change.
//
// Thread-safety: ParseUevent and IsRelevantForRdma are pure. For a UeventSource, one thread
// calls Wait(); any thread may call Wake(), fd() and (on the fake) Inject().
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/status.h"
#include "common/unique_fd.h"

namespace hcashare {

// One parsed kernel uevent.
struct Uevent {
  std::string action;     // "add", "remove", "change", "move", "bind", "unbind", "overflow"
  std::string devpath;    // "/devices/pci0000:00/0000:00:02.0/0000:03:00.0"
  std::string subsystem;  // "pci", "net", "infiniband", ... ("" when SUBSYSTEM= is absent)
  std::map<std::string, std::string> env;  // every KEY=VALUE pair of the message
};

// Parses one datagram "ACTION@DEVPATH\0KEY=VALUE\0..." without reading past `len`; a missing
// trailing NUL is fine. Segments without '=' (or with an empty key) are skipped; the last of
// duplicate keys wins. InvalidArgument for udev-daemon ("libudev\0...") messages, a malformed
// header, or an ACTION=/DEVPATH= value that disagrees with the header.
Result<Uevent> ParseUevent(const char* data, size_t len);

// True when `ev` can change the set or state of RDMA devices (pci, net, infiniband*,
// or an "overflow").
bool IsRelevantForRdma(const Uevent& ev);

// For UeventSource implementations, real and fake: the longest Wait() timeout honoured
// (longer ones are treated as a year, so deadlines cannot overflow), and the eventfd that
// Wake() signals.
inline constexpr std::chrono::milliseconds kMaxUeventWait = std::chrono::hours(24 * 365);
// Adds one to eventfd `fd`, waking a poll on it.
void SignalEventFd(int fd);
// Reads and discards the counter of non-blocking eventfd `fd`.
void DrainEventFd(int fd);

// A source of uevents.
class UeventSource {
 public:
  virtual ~UeventSource() = default;
  // Blocks until at least one event, Wake(), or `timeout` (negative: forever). Returns the
  // events (empty on timeout or wake-up). A pending Wake() makes the next Wait() return.
  virtual Result<std::vector<Uevent>> Wait(std::chrono::milliseconds timeout) = 0;
  // Makes a pending or the next Wait() return promptly. Thread-safe.
  virtual void Wake() = 0;
  // A pollable descriptor, readable when events may be pending, or -1.
  virtual int fd() const = 0;
};

// The kernel's uevent multicast group (kernel senders only). Reports receive-buffer overflow
// as Uevent{action="overflow"}, meaning "rescan everything". Unavailable if the socket
// cannot be opened (e.g. in restricted sandboxes).
Result<std::unique_ptr<UeventSource>> NewKernelUeventSource();

}  // namespace hcashare
