// RunInChild: runs a function in a forked child with a deadline and a memory cap, for a
// test of code that might block or read for ever.
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <functional>
#include <optional>
#include <string>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define HCASHARE_TEST_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define HCASHARE_TEST_SANITIZED 1
#endif
#endif

namespace hcashare::testing {

// Runs `fn` in a forked child whose address space is capped at `max_memory` bytes and
// which is killed after `limit`, and returns what `fn` returned; std::nullopt when the
// child ran out of time or died (e.g. out of memory). For code that might block or read
// for ever: a regression then fails the test instead of hanging it or eating the machine.
// Under ASan or TSan there is no address-space cap (their shadow memory is reserved as
// terabytes of address space, and any cap fails their start-up): the deadline alone holds.
inline std::optional<std::string> RunInChild(const std::function<std::string()>& fn,
                                             std::chrono::milliseconds limit,
                                             size_t max_memory = size_t{1} << 30) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC) != 0) return std::nullopt;
  const pid_t pid = ::fork();
  if (pid < 0) return std::nullopt;
  if (pid == 0) {
    ::close(fds[0]);
#ifndef HCASHARE_TEST_SANITIZED
    rlimit as{max_memory, max_memory};
    ::setrlimit(RLIMIT_AS, &as);
#else
    (void)max_memory;
#endif
    std::string out;
    try {
      out = fn();
    } catch (...) {  // never back into the test framework's copy in this child
      ::_exit(2);
    }
    size_t done = 0;
    while (done < out.size()) {
      const ssize_t n = ::write(fds[1], out.data() + done, out.size() - done);
      if (n <= 0) ::_exit(1);
      done += static_cast<size_t>(n);
    }
    ::_exit(0);
  }
  ::close(fds[1]);
  std::string out;
  bool eof = false;
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (!eof && std::chrono::steady_clock::now() < deadline) {
    pollfd p{fds[0], POLLIN, 0};
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (::poll(&p, 1, static_cast<int>(std::max<long long>(left.count(), 0))) <= 0) continue;
    char buf[4096];
    const ssize_t n = ::read(fds[0], buf, sizeof(buf));
    if (n > 0) out.append(buf, static_cast<size_t>(n));
    eof = n == 0 || (n < 0 && errno != EINTR);
  }
  ::close(fds[0]);
  if (!eof) ::kill(pid, SIGKILL);
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (!eof || !WIFEXITED(status) || WEXITSTATUS(status) != 0) return std::nullopt;
  return out;
}

}  // namespace hcashare::testing
