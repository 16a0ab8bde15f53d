// Helpers shared by the test binaries.
#pragma once

#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "common/log.h"
#include "common/process.h"
#include "testing/stuck_process.h"

namespace hcashare::testing {

// Milliseconds since `start` (printable in assertion failures, unlike a duration).
inline long long MsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                               start)
      .count();
}

// Polls `pred` every millisecond until it holds or `timeout` has passed: waits on state
// that has no notification. True when it held.
template <typename Pred>
bool WaitUntil(Pred pred, std::chrono::milliseconds timeout = std::chrono::milliseconds(10000)) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!pred()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

// The kernel's ID of the calling thread.
inline pid_t ThreadId() { return static_cast<pid_t>(::syscall(SYS_gettid)); }

// True while thread `tid` of this process sleeps in the kernel (state S: in poll, on a
// futex, ...): "the other thread is inside its blocking call", observed instead of hoped
// for after a sleep.
inline bool ThreadSleeps(pid_t tid) { return fake::ThreadState(::getpid(), tid) == 'S'; }

// A timeout for the blocking calls of BlockingCall that no passing test gets near: a call
// given it returns early only because of the event under test.
inline constexpr std::chrono::milliseconds kBlockingTimeout{60000};

// Runs `call`, a call that blocks until an event (or kBlockingTimeout), on a thread of its
// own, so that a test can make the event happen while the call is blocked and then check
// that the call returned because of it. The thread is detached: the call must own what it
// uses (capture shared_ptrs), so that a call that never returns fails the test without
// touching freed memory.
template <typename T>
class BlockingCall {
 public:
  explicit BlockingCall(std::function<T()> call) : s_(std::make_shared<Shared>()) {
    std::thread([s = s_, call = std::move(call)] {
      s->tid = ThreadId();
      T r = call();
      std::lock_guard<std::mutex> lock(s->mu);
      s->result = std::move(r);
    }).detach();
  }
  BlockingCall(const BlockingCall&) = delete;
  BlockingCall& operator=(const BlockingCall&) = delete;

  // Waits until the call is blocked (its thread sleeps in the kernel), or has returned
  // already (a real event source may deliver something unrelated first). The timeout is a
  // safety net, not a measure of speed.
  bool Blocked(std::chrono::milliseconds safety = std::chrono::milliseconds(10000)) const {
    return WaitUntil(
        [&] { return Done() || (s_->tid.load() != 0 && ThreadSleeps(s_->tid.load())); }, safety);
  }
  // Waits until the call has returned. The timeout is a safety net (a call that never
  // returns fails the test instead of stalling it), not a measure of speed.
  bool Returned(std::chrono::milliseconds safety = std::chrono::milliseconds(10000)) const {
    return WaitUntil([&] { return Done(); }, safety);
  }
  // What the call returned (only after Returned()).
  T& result() {
    std::lock_guard<std::mutex> lock(s_->mu);
    return *s_->result;
  }

 private:
  struct Shared {
    std::atomic<pid_t> tid{0};
    std::mutex mu;
    std::optional<T> result;  // guarded by mu
  };
  bool Done() const {
    std::lock_guard<std::mutex> lock(s_->mu);
    return s_->result.has_value();
  }

  std::shared_ptr<Shared> s_;
};

// Captures every log record, from `level` up, while it lives (the records are not printed).
// For waiting on what a component reports doing; thread-safe.
class CapturedLog {
 public:
  explicit CapturedLog(LogLevel level = LogLevel::kDebug) {
    SetLogSink([this](const std::string& line) {
      std::lock_guard<std::mutex> lock(mu_);
      lines_.push_back(line);
    });
    SetLogLevel(level);
  }
  ~CapturedLog() {
    SetLogLevel(LogLevel::kInfo);
    SetLogSink(nullptr);
  }
  CapturedLog(const CapturedLog&) = delete;
  CapturedLog& operator=(const CapturedLog&) = delete;

  // The records that contain every one of `parts`, in order.
  std::vector<std::string> Matching(std::initializer_list<std::string> parts) const {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<std::string> out;
    for (const auto& l : lines_) {
      bool all = true;
      for (const auto& p : parts) all = all && l.find(p) != std::string::npos;
      if (all) out.push_back(l);
    }
    return out;
  }
  // Every record so far, one a line (for failure messages).
  std::string All() const {
    std::lock_guard<std::mutex> lock(mu_);
    std::string out;
    for (const auto& l : lines_) out += l + "\n";
    return out;
  }

 private:
  mutable std::mutex mu_;
  std::vector<std::string> lines_;  // guarded by mu_
};

// The whole file at `path` ("" when it cannot be read).
inline std::string ReadTextFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Where the project's binaries are: $HCASHARE_BIN_DIR (set by CTest), else next to the test.
inline std::string BinDir() {
  const char* d = std::getenv("HCASHARE_BIN_DIR");
  return d ? d : SelfDir();
}

}  // namespace hcashare::testing
