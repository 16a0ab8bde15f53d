// Subprocess: a child process started with fork/exec, owned RAII-style (killed and reaped
// on destruction if still running). Used by the demo, the process-level tests and the
// benchmarks. Not thread-safe.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

#include "common/status.h"

namespace hcashare {

class Subprocess {
 public:
  // Starts argv[0] (a path) with `argv`. When `output_path` is not empty, stdout and
  // stderr go to that file; otherwise they are inherited.
  static Result<Subprocess> Spawn(const std::vector<std::string>& argv,
                                  const std::string& output_path = "");

  Subprocess(Subprocess&& o) noexcept : pid_(o.pid_) { o.pid_ = -1; }
  Subprocess& operator=(Subprocess&& o) noexcept;
  Subprocess(const Subprocess&) = delete;
  Subprocess& operator=(const Subprocess&) = delete;
  ~Subprocess();

  pid_t pid() const { return pid_; }
  // Sends `sig`. FailedPrecondition if the child was already reaped.
  Status Signal(int sig) const;
  // Waits up to `timeout` for the child to exit. Returns its exit code, or 128+signal when
  // it was killed by a signal. Unavailable on timeout (the child keeps running).
  Result<int> Wait(std::chrono::milliseconds timeout);

 private:
  explicit Subprocess(pid_t pid) : pid_(pid) {}
  pid_t pid_ = -1;
};

// The directory holding the running executable (from /proc/self/exe).
std::string SelfDir();

}  // namespace hcashare
