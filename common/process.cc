#include "common/process.h"

#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <thread>
#include <utility>

#include "common/unique_fd.h"

namespace hcashare {
namespace {

using Clock = std::chrono::steady_clock;
using std::chrono::milliseconds;

Status MakePipe(UniqueFd* read_end, UniqueFd* write_end) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return ErrnoStatus(errno, "pipe");
  read_end->Reset(fds[0]);
  write_end->Reset(fds[1]);
  return Status::Ok();
}

std::vector<char*> CStrings(const std::vector<std::string>& v) {
  std::vector<char*> out;
  for (const auto& s : v) out.push_back(const_cast<char*>(s.c_str()));
  out.push_back(nullptr);
  return out;
}

// The time left until `deadline`, rounded up to whole milliseconds (at least 0).
milliseconds Left(Clock::time_point deadline) {
  return std::max(milliseconds(0), std::chrono::ceil<milliseconds>(deadline - Clock::now()));
}

// Blocks SIGPIPE for the calling thread while alive, so that writing to a program that
// exited early yields EPIPE instead of killing us; a SIGPIPE raised meanwhile is consumed.
class ScopedNoSigpipe {
 public:
  ScopedNoSigpipe() {
    sigset_t pipe_only = PipeOnly();
    ::pthread_sigmask(SIG_BLOCK, &pipe_only, &old_);
  }
  ~ScopedNoSigpipe() {
    sigset_t pipe_only = PipeOnly();
    const timespec zero{0, 0};
    while (::sigtimedwait(&pipe_only, nullptr, &zero) > 0) {
    }
    ::pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }
  ScopedNoSigpipe(const ScopedNoSigpipe&) = delete;
  ScopedNoSigpipe& operator=(const ScopedNoSigpipe&) = delete;

 private:
  static sigset_t PipeOnly() {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGPIPE);
    return set;
  }
  sigset_t old_;
};

// Copies the program's stdout and stderr into `result` and feeds it `input`, until both
// streams end or `deadline`. An error stops it (the caller kills the program).
Status Pump(const std::string& path, const std::string& input, size_t max_output,
            Clock::time_point deadline, milliseconds timeout, UniqueFd* in_w, UniqueFd* out_r,
            UniqueFd* err_r, ExecOutput* result) {
  size_t written = 0;
  if (input.empty()) in_w->Reset();
  while (out_r->valid() || err_r->valid()) {
    pollfd fds[3];
    UniqueFd* owners[3];
    int n = 0;
    for (auto [fd, events] :
         {std::pair{out_r, POLLIN}, std::pair{err_r, POLLIN}, std::pair{in_w, POLLOUT}}) {
      if (!fd->valid()) continue;
      fds[n] = {fd->get(), static_cast<short>(events), 0};
      owners[n++] = fd;
    }
    const milliseconds left = Left(deadline);
    if (left.count() <= 0) {
      return Status::Unavailable(path + " did not finish within " +
                                 std::to_string(timeout.count()) + " ms");
    }
    if (::poll(fds, n, static_cast<int>(std::min<long long>(left.count(), INT_MAX))) < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus(errno, "poll");
    }
    for (int i = 0; i < n; ++i) {
      if (fds[i].revents == 0) continue;
      UniqueFd* fd = owners[i];
      if (fd == in_w) {
        ssize_t w = ::write(in_w->get(), input.data() + written, input.size() - written);
        if (w > 0) written += static_cast<size_t>(w);
        if (w < 0 && errno != EAGAIN) in_w->Reset();  // the program stopped reading
        if (written == input.size()) in_w->Reset();
        continue;
      }
      std::string& sink = fd == out_r ? result->out : result->err;
      char buf[65536];
      ssize_t r = ::read(fd->get(), buf, sizeof(buf));
      if (r <= 0) {
        if (r < 0 && errno == EINTR) continue;
        fd->Reset();
      } else if (sink.size() + static_cast<size_t>(r) > max_output) {
        return Status::IoError(path + " wrote more than " + std::to_string(max_output) + " bytes");
      } else {
        sink.append(buf, static_cast<size_t>(r));
      }
    }
  }
  return Status::Ok();
}

}  // namespace

Result<Subprocess> Subprocess::Spawn(const std::vector<std::string>& argv,
                                     const SpawnOptions& options) {
  if (argv.empty()) return Status::InvalidArgument("empty argv");
  const std::string& path = options.path.empty() ? argv[0] : options.path;
  std::vector<char*> cargv = CStrings(argv);
  std::vector<char*> cenv;
  if (options.env != nullptr) cenv = CStrings(*options.env);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) return ErrnoStatus(errno, "fork");
  if (pid == 0) {
    // The parent may have died before the request took effect: then the child is gone too.
    if (options.die_with_parent &&
        (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || ::getppid() != parent)) {
      ::_exit(127);
    }
    // Child: only async-signal-safe calls. A clean signal mask, so that a parent that
    // blocks signals does not pass that on.
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    if (options.stdin_fd >= 0) ::dup2(options.stdin_fd, STDIN_FILENO);
    if (options.stdout_fd >= 0) ::dup2(options.stdout_fd, STDOUT_FILENO);
    if (options.stderr_fd >= 0) ::dup2(options.stderr_fd, STDERR_FILENO);
    if (options.env != nullptr) {
      ::execve(path.c_str(), cargv.data(), cenv.data());
    } else {
      ::execv(path.c_str(), cargv.data());
    }
    ::_exit(127);
  }
  return Subprocess(pid);
}

Result<Subprocess> Subprocess::Spawn(const std::vector<std::string>& argv,
                                     const std::string& output_path) {
  UniqueFd out;
  if (!output_path.empty()) {
    out.Reset(::open(output_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
    if (!out.valid()) return ErrnoStatus(errno, "open " + output_path);
  }
  SpawnOptions options;
  options.stdout_fd = out.get();
  options.stderr_fd = out.get();
  options.die_with_parent = true;
  return Spawn(argv, options);
}

Subprocess& Subprocess::operator=(Subprocess&& o) noexcept {
  if (this != &o) {
    this->~Subprocess();
    pid_ = std::exchange(o.pid_, -1);
  }
  return *this;
}

Subprocess::~Subprocess() {
  if (pid_ > 0) {
    ::kill(pid_, SIGKILL);
    int status;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    pid_ = -1;
  }
}

Status Subprocess::Signal(int sig) const {
  if (pid_ <= 0) return Status::FailedPrecondition("process already reaped");
  if (::kill(pid_, sig) != 0) return ErrnoStatus(errno, "kill");
  return Status::Ok();
}

Result<int> Subprocess::Wait(milliseconds timeout, long* max_rss_kib) {
  if (pid_ <= 0) return Status::FailedPrecondition("process already reaped");
  const auto deadline = Clock::now() + timeout;
  // Readable when the child exits (Linux 5.3); without it, poll every 5 ms.
  UniqueFd exited(static_cast<int>(::syscall(SYS_pidfd_open, pid_, 0)));
  for (;;) {
    int status = 0;
    struct rusage usage = {};
    const pid_t r = ::wait4(pid_, &status, WNOHANG, &usage);
    if (r == pid_) {
      pid_ = -1;
      if (max_rss_kib != nullptr) *max_rss_kib = usage.ru_maxrss;
      if (WIFEXITED(status)) return WEXITSTATUS(status);
      if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
      return Status::Internal("unexpected wait status");
    }
    if (r < 0 && errno != EINTR) return ErrnoStatus(errno, "waitpid");
    const milliseconds left = Left(deadline);
    if (left.count() <= 0) {
      return Status::Unavailable("process " + std::to_string(pid_) + " still running");
    }
    if (exited.valid()) {
      pollfd p = {exited.get(), POLLIN, 0};
      (void)::poll(&p, 1, static_cast<int>(std::min<long long>(left.count(), INT_MAX)));
    } else {
      std::this_thread::sleep_for(std::min(left, milliseconds(5)));
    }
  }
}

Result<ExecOutput> Execute(const std::string& path, const std::vector<std::string>& argv,
                           const std::vector<std::string>& env, const std::string& input,
                           milliseconds timeout, size_t max_output) {
  if (::access(path.c_str(), X_OK) != 0) return ErrnoStatus(errno, "cannot execute " + path);
  UniqueFd in_r, in_w, out_r, out_w, err_r, err_w;
  RETURN_IF_ERROR(MakePipe(&in_r, &in_w));
  RETURN_IF_ERROR(MakePipe(&out_r, &out_w));
  RETURN_IF_ERROR(MakePipe(&err_r, &err_w));
  SpawnOptions options;
  options.path = path;
  options.env = &env;
  options.stdin_fd = in_r.get();
  options.stdout_fd = out_w.get();
  options.stderr_fd = err_w.get();
  const auto deadline = Clock::now() + timeout;
  ASSIGN_OR_RETURN(Subprocess child, Subprocess::Spawn(argv, options));
  in_r.Reset();
  out_w.Reset();
  err_w.Reset();
  ExecOutput result;
  {
    ScopedNoSigpipe no_sigpipe;
    ::fcntl(in_w.get(), F_SETFL, O_NONBLOCK);
    // On an error the child is killed and reaped when `child` goes.
    RETURN_IF_ERROR(
        Pump(path, input, max_output, deadline, timeout, &in_w, &out_r, &err_r, &result));
  }
  Result<int> code = child.Wait(Left(deadline), &result.max_rss_kib);
  if (!code.ok()) {
    return Status::Unavailable(path + " did not finish within " + std::to_string(timeout.count()) +
                               " ms");
  }
  result.exit_code = *code;
  return result;
}

std::string SelfDir() {
  char buf[PATH_MAX];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n <= 0) return ".";
  std::string p(buf, static_cast<size_t>(n));
  return p.substr(0, p.rfind('/'));
}

}  // namespace hcashare
