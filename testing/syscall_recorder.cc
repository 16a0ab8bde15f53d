// A preload library for tests (LD_PRELOAD): records each fsync and rename a process makes
// through libc, and can make one of them fail as the kernel would. It lets a test see the
// order of a durable write's flushes and renames without ptrace (which a sandbox may deny)
// and inject an error at each step. Never linked into anything; tests load it by path.
//
// Environment:
//   HCASHARE_SYSCALL_LOG   file the calls are appended to, a line each:
//                          "fsync <path of the fd>" or "rename <old> <new>"
//   HCASHARE_SYSCALL_FAIL  "<call>:<n>[:<errno>]": the n-th call (1-based) of `call`
//                          (fsync or rename) fails with errno (default EIO) and does nothing;
//                          "<call>:<n>:kill" SIGKILLs the process instead, before the call,
//                          and "<call>:<n>:kill-after" right after it (a crash at that step).
#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

// Appends `line` and a newline to the log, if one is set. Raw writes: no stdio buffers,
// and nothing that could itself call fsync or rename.
void Log(const char* a, const char* b, const char* c) {
  const char* path = std::getenv("HCASHARE_SYSCALL_LOG");
  if (path == nullptr) return;
  const int fd = ::open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
  if (fd < 0) return;
  char line[3 * 4096 + 4];
  const int n = std::snprintf(line, sizeof(line), "%s %s%s%s\n", a, b, c[0] ? " " : "", c);
  if (n > 0) (void)!::write(fd, line, static_cast<size_t>(n) < sizeof(line) ? n : sizeof(line));
  ::close(fd);
}

// What ShouldFail asks of a call besides an errno.
constexpr int kKillBefore = -1;
constexpr int kKillAfter = -2;

// Counts calls of `call`; returns the errno to fail this one with, kKillBefore, kKillAfter,
// or 0.
int ShouldFail(const char* call) {
  static int fsyncs = 0, renames = 0;
  int& count = std::strcmp(call, "fsync") == 0 ? fsyncs : renames;
  ++count;
  const char* spec = std::getenv("HCASHARE_SYSCALL_FAIL");
  if (spec == nullptr) return 0;
  const size_t len = std::strlen(call);
  if (std::strncmp(spec, call, len) != 0 || spec[len] != ':') return 0;
  char* end = nullptr;
  const long n = std::strtol(spec + len + 1, &end, 10);
  if (n != count) return 0;
  if (*end != ':') return EIO;
  if (std::strcmp(end + 1, "kill") == 0) return kKillBefore;
  if (std::strcmp(end + 1, "kill-after") == 0) return kKillAfter;
  return static_cast<int>(std::strtol(end + 1, nullptr, 10));
}

// Acts on ShouldFail's answer `err` before the call: kills, or sets errno and returns true
// when the call is to fail.
bool FailBefore(int err) {
  if (err == kKillBefore) ::kill(::getpid(), SIGKILL);
  if (err <= 0) return false;
  errno = err;
  return true;
}

// After the call: kills when asked to, else returns `result`.
int After(int err, int result) {
  if (err == kKillAfter) ::kill(::getpid(), SIGKILL);
  return result;
}

template <typename F>
F Next(const char* name) {
  return reinterpret_cast<F>(::dlsym(RTLD_NEXT, name));
}

}  // namespace

extern "C" {

int fsync(int fd) {
  char proc[64], target[4096] = {0};
  std::snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
  const ssize_t n = ::readlink(proc, target, sizeof(target) - 1);
  if (n < 0) std::snprintf(target, sizeof(target), "fd:%d", fd);
  const int err = ShouldFail("fsync");
  Log(err > 0 ? "fsync-failed" : "fsync", target, "");
  if (FailBefore(err)) return -1;
  static auto real = Next<int (*)(int)>("fsync");
  return After(err, real(fd));
}

int rename(const char* from, const char* to) {
  const int err = ShouldFail("rename");
  Log(err > 0 ? "rename-failed" : "rename", from, to);
  if (FailBefore(err)) return -1;
  static auto real = Next<int (*)(const char*, const char*)>("rename");
  return After(err, real(from, to));
}

}  // extern "C"
