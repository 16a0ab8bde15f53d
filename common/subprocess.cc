#include "common/subprocess.h"

#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <thread>

namespace hcashare {

Result<Subprocess> Subprocess::Spawn(const std::vector<std::string>& argv,
                                     const std::string& output_path) {
  if (argv.empty()) return Status::InvalidArgument("empty argv");
  std::vector<char*> cargv;
  for (const auto& a : argv) cargv.push_back(const_cast<char*>(a.c_str()));
  cargv.push_back(nullptr);
  int out_fd = -1;
  if (!output_path.empty()) {
    out_fd = ::open(output_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (out_fd < 0) return ErrnoStatus(errno, "open " + output_path);
  }
  pid_t pid = ::fork();
  if (pid < 0) {
    int err = errno;
    if (out_fd >= 0) ::close(out_fd);
    return ErrnoStatus(err, "fork");
  }
  if (pid == 0) {
    // Child: a clean signal mask, so that a parent that blocks signals does not leak that.
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    if (out_fd >= 0) {
      ::dup2(out_fd, STDOUT_FILENO);
      ::dup2(out_fd, STDERR_FILENO);
    }
    ::execv(cargv[0], cargv.data());
    _exit(127);
  }
  if (out_fd >= 0) ::close(out_fd);
  return Subprocess(pid);
}

Subprocess& Subprocess::operator=(Subprocess&& o) noexcept {
  if (this != &o) {
    this->~Subprocess();
    pid_ = o.pid_;
    o.pid_ = -1;
  }
  return *this;
}

Subprocess::~Subprocess() {
  if (pid_ > 0) {
    ::kill(pid_, SIGKILL);
    int status;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
  }
}

Status Subprocess::Signal(int sig) const {
  if (pid_ <= 0) return Status::FailedPrecondition("process already reaped");
  if (::kill(pid_, sig) != 0) return ErrnoStatus(errno, "kill");
  return Status::Ok();
}

Result<int> Subprocess::Wait(std::chrono::milliseconds timeout) {
  if (pid_ <= 0) return Status::FailedPrecondition("process already reaped");
  auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    int status = 0;
    pid_t r = ::waitpid(pid_, &status, WNOHANG);
    if (r == pid_) {
      pid_ = -1;
      if (WIFEXITED(status)) return WEXITSTATUS(status);
      if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
      return Status::Internal("unexpected wait status");
    }
    if (r < 0 && errno != EINTR) return ErrnoStatus(errno, "waitpid");
    if (std::chrono::steady_clock::now() >= deadline) {
      return Status::Unavailable("process " + std::to_string(pid_) + " still running");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

std::string SelfDir() {
  char buf[PATH_MAX];
  ssize_t n = ::readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n <= 0) return ".";
  std::string p(buf, static_cast<size_t>(n));
  return p.substr(0, p.rfind('/'));
}

}  // namespace hcashare
