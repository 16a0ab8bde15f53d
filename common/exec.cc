#include "common/exec.h"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

#include "common/unique_fd.h"

namespace hcashare {
namespace {

using Clock = std::chrono::steady_clock;

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

// Blocks SIGPIPE for the calling thread while alive, so that writing to a program that
// exited early yields EPIPE instead of killing us; a SIGPIPE raised meanwhile is consumed.
class ScopedNoSigpipe {
 public:
  ScopedNoSigpipe() {
    sigset_t pipe_only;
    sigemptyset(&pipe_only);
    sigaddset(&pipe_only, SIGPIPE);
    ::pthread_sigmask(SIG_BLOCK, &pipe_only, &old_);
  }
  ~ScopedNoSigpipe() {
    sigset_t pipe_only;
    sigemptyset(&pipe_only);
    sigaddset(&pipe_only, SIGPIPE);
    const timespec zero{0, 0};
    while (::sigtimedwait(&pipe_only, nullptr, &zero) > 0) {
    }
    ::pthread_sigmask(SIG_SETMASK, &old_, nullptr);
  }
  ScopedNoSigpipe(const ScopedNoSigpipe&) = delete;
  ScopedNoSigpipe& operator=(const ScopedNoSigpipe&) = delete;

 private:
  sigset_t old_;
};

}  // namespace

Result<ExecOutput> Execute(const std::string& path, const std::vector<std::string>& argv,
                           const std::vector<std::string>& env, const std::string& input,
                           std::chrono::milliseconds timeout, size_t max_output) {
  if (::access(path.c_str(), X_OK) != 0) return ErrnoStatus(errno, "cannot execute " + path);
  UniqueFd in_r, in_w, out_r, out_w, err_r, err_w;
  RETURN_IF_ERROR(MakePipe(&in_r, &in_w));
  RETURN_IF_ERROR(MakePipe(&out_r, &out_w));
  RETURN_IF_ERROR(MakePipe(&err_r, &err_w));
  std::vector<char*> cargv = CStrings(argv);
  std::vector<char*> cenv = CStrings(env);
  const pid_t pid = ::fork();
  if (pid < 0) return ErrnoStatus(errno, "fork");
  if (pid == 0) {
    ::dup2(in_r.get(), 0);
    ::dup2(out_w.get(), 1);
    ::dup2(err_w.get(), 2);
    ::execve(path.c_str(), cargv.data(), cenv.data());
    ::_exit(127);
  }
  in_r.Reset();
  out_w.Reset();
  err_w.Reset();
  ScopedNoSigpipe no_sigpipe;
  ::fcntl(in_w.get(), F_SETFL, O_NONBLOCK);
  ExecOutput result;
  size_t written = 0;
  if (input.empty()) in_w.Reset();
  const auto deadline = Clock::now() + timeout;
  Status failure;
  while (out_r.valid() || err_r.valid()) {
    pollfd fds[3];
    int n = 0;
    UniqueFd* owners[3];
    for (auto [fd, events] :
         {std::pair{&out_r, POLLIN}, std::pair{&err_r, POLLIN}, std::pair{&in_w, POLLOUT}}) {
      if (!fd->valid()) continue;
      fds[n] = {fd->get(), static_cast<short>(events), 0};
      owners[n++] = fd;
    }
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) {
      failure = Status::Unavailable(path + " did not finish within " +
                                    std::to_string(timeout.count()) + " ms");
      break;
    }
    if (::poll(fds, n, static_cast<int>(left.count())) < 0) {
      if (errno == EINTR) continue;
      failure = ErrnoStatus(errno, "poll");
      break;
    }
    for (int i = 0; i < n; ++i) {
      if (fds[i].revents == 0) continue;
      UniqueFd* fd = owners[i];
      if (fd == &in_w) {
        ssize_t w = ::write(in_w.get(), input.data() + written, input.size() - written);
        if (w > 0) written += static_cast<size_t>(w);
        if (w < 0 && errno != EAGAIN) in_w.Reset();  // the program stopped reading
        if (written == input.size()) in_w.Reset();
        continue;
      }
      std::string& sink = fd == &out_r ? result.out : result.err;
      char buf[65536];
      ssize_t r = ::read(fd->get(), buf, sizeof(buf));
      if (r <= 0) {
        if (r < 0 && errno == EINTR) continue;
        fd->Reset();
      } else if (sink.size() + static_cast<size_t>(r) > max_output) {
        failure =
            Status::IoError(path + " wrote more than " + std::to_string(max_output) + " bytes");
        fd->Reset();
      } else {
        sink.append(buf, static_cast<size_t>(r));
      }
    }
    if (!failure.ok()) break;
  }
  if (!failure.ok()) ::kill(pid, SIGKILL);
  int status = 0;
  struct rusage usage = {};
  while (::wait4(pid, &status, 0, &usage) < 0 && errno == EINTR) {
  }
  if (!failure.ok()) return failure;
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  result.max_rss_kib = usage.ru_maxrss;
  return result;
}

}  // namespace hcashare
