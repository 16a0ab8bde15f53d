#include "common/inotify.h"

#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace hcashare {

Result<std::unique_ptr<InotifyWatcher>> InotifyWatcher::Create() {
  UniqueFd ifd(::inotify_init1(IN_NONBLOCK | IN_CLOEXEC));
  if (!ifd.valid()) return ErrnoStatus(errno, "inotify_init1");
  UniqueFd efd(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
  if (!efd.valid()) return ErrnoStatus(errno, "eventfd");
  return std::unique_ptr<InotifyWatcher>(new InotifyWatcher(std::move(ifd), std::move(efd)));
}

Result<int> InotifyWatcher::AddWatch(const std::string& path, uint32_t mask) {
  int wd = ::inotify_add_watch(inotify_fd_.get(), path.c_str(), mask);
  if (wd < 0) return ErrnoStatus(errno, "inotify_add_watch " + path);
  return wd;
}

void InotifyWatcher::RemoveWatch(int wd) { ::inotify_rm_watch(inotify_fd_.get(), wd); }

void InotifyWatcher::Wake() {
  uint64_t one = 1;
  ssize_t n = ::write(wake_fd_.get(), &one, sizeof(one));
  (void)n;
}

Result<std::vector<InotifyEvent>> InotifyWatcher::Wait(std::chrono::milliseconds timeout) {
  std::vector<InotifyEvent> events;
  pollfd fds[2] = {{inotify_fd_.get(), POLLIN, 0}, {wake_fd_.get(), POLLIN, 0}};
  int rc = ::poll(fds, 2, static_cast<int>(timeout.count()));
  if (rc < 0) {
    if (errno == EINTR) return events;
    return ErrnoStatus(errno, "poll inotify");
  }
  if (fds[1].revents & POLLIN) {
    uint64_t v;
    ssize_t n = ::read(wake_fd_.get(), &v, sizeof(v));
    (void)n;
  }
  if (fds[0].revents & POLLIN) {
    alignas(inotify_event) char buf[16 * 1024];
    for (;;) {
      ssize_t n = ::read(inotify_fd_.get(), buf, sizeof(buf));
      if (n <= 0) break;
      for (char* p = buf; p < buf + n;) {
        auto* ev = reinterpret_cast<inotify_event*>(p);
        InotifyEvent out;
        out.wd = ev->wd;
        out.mask = ev->mask;
        if (ev->len > 0) out.name = std::string(ev->name, strnlen(ev->name, ev->len));
        events.push_back(std::move(out));
        p += sizeof(inotify_event) + ev->len;
      }
    }
  }
  return events;
}

}  // namespace hcashare
