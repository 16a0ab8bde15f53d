// The one way hcashare starts a program: Subprocess owns a child started with fork/exec
// (killed and reaped when dropped while running), and Execute runs a program to completion
// with a given environment and stdin, collecting its output (the CNI exec protocol for
// delegated plugins such as IPAM; the process-level tests and benchmarks).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

#include "common/status.h"

namespace hcashare {

// How Subprocess::Spawn starts a program.
struct SpawnOptions {
  // The program to execute; empty: argv[0].
  std::string path;
  // Exactly these "K=V" entries; when unset the child inherits this process's environment.
  const std::vector<std::string>* env = nullptr;
  // The child's stdin, stdout and stderr; -1 inherits ours. The fds are dup'ed.
  int stdin_fd = -1;
  int stdout_fd = -1;
  int stderr_fd = -1;
  // true: the child is SIGKILLed when its parent process ends (PR_SET_PDEATHSIG; kernels may
  // also count the end of the spawning thread), so that a test that aborts leaves no daemon
  // behind.
  bool die_with_parent = false;
};

// A child process. The child starts with an empty signal mask. Not thread-safe.
class Subprocess {
 public:
  // Starts `argv` as `options` say.
  static Result<Subprocess> Spawn(const std::vector<std::string>& argv,
                                  const SpawnOptions& options);
  // Starts argv[0] (a path) with `argv`. When `output_path` is not empty, stdout and
  // stderr go to that file (created 0644, truncated); otherwise they are inherited. The
  // child dies with this process (SpawnOptions::die_with_parent).
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

  // Waits up to `timeout` for the child to exit (woken by the exit itself, through a
  // pidfd). Returns its exit code, or 128+signal when it was killed by a signal; with
  // `max_rss_kib`, also its peak resident set (wait4's ru_maxrss). Unavailable on timeout
  // (the child keeps running).
  Result<int> Wait(std::chrono::milliseconds timeout, long* max_rss_kib = nullptr);

 private:
  explicit Subprocess(pid_t pid) : pid_(pid) {}
  pid_t pid_ = -1;
};

// What a finished program produced.
struct ExecOutput {
  int exit_code = 0;  // 128 + signal when it was killed by a signal
  // Peak resident set in KiB (wait4's ru_maxrss): the largest of the program's own (across
  // exec) and that of each descendant it waited for.
  long max_rss_kib = 0;
  std::string out;
  std::string err;
};

// Runs `path` with `argv` and exactly `env` ("K=V" entries), feeding it `input` on stdin.
// Kills it (SIGKILL) after `timeout`. Each output stream is capped at `max_output` bytes
// (more is an error). NotFound when `path` cannot be executed.
Result<ExecOutput> Execute(const std::string& path, const std::vector<std::string>& argv,
                           const std::vector<std::string>& env, const std::string& input,
                           std::chrono::milliseconds timeout, size_t max_output = 4 << 20);

// The directory holding the running executable (from /proc/self/exe).
std::string SelfDir();

}  // namespace hcashare
