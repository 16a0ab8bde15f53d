#include "common/lock_file.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

namespace hcashare {
namespace {

// True when `path` (not followed) names the file open at `fd`.
bool PathNamesFd(const std::string& path, int fd) {
  struct stat by_path {};
  struct stat by_fd {};
  return ::lstat(path.c_str(), &by_path) == 0 && ::fstat(fd, &by_fd) == 0 &&
         by_path.st_dev == by_fd.st_dev && by_path.st_ino == by_fd.st_ino;
}

}  // namespace

Result<UniqueFd> TryLockFile(const std::string& path, mode_t mode) {
  // Each retry means the file was removed between our open and our flock: a collector
  // (or the previous holder) is at work; a handful of rounds is plenty.
  constexpr int kAttempts = 100;
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    UniqueFd fd(::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, mode));
    if (!fd.valid()) return ErrnoStatus(errno, "open " + path);
    if (::flock(fd.get(), LOCK_EX | LOCK_NB) != 0) {
      if (errno == EWOULDBLOCK) return Status::Unavailable(path + " is locked");
      return ErrnoStatus(errno, "flock " + path);
    }
    if (PathNamesFd(path, fd.get())) return fd;
  }
  return Status::Unavailable(path + " kept being removed while it was locked");
}

Result<bool> RemoveLockFileIfUnheld(const std::string& path, bool remove) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY));
  if (!fd.valid()) {
    if (errno == ENOENT) return false;
    return ErrnoStatus(errno, "open " + path);
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return ErrnoStatus(errno, "stat " + path);
  if (!S_ISREG(st.st_mode)) return false;
  if (::flock(fd.get(), LOCK_EX | LOCK_NB) != 0) {
    if (errno == EWOULDBLOCK) return false;
    return ErrnoStatus(errno, "flock " + path);
  }
  // Held by us now. A locker that opened this inode before the unlink finds, after its
  // flock, that the path no longer names it, and opens again.
  if (!PathNamesFd(path, fd.get())) return false;
  if (!remove) return true;
  if (::unlink(path.c_str()) != 0) {
    if (errno == ENOENT) return false;
    return ErrnoStatus(errno, "unlink " + path);
  }
  return true;
}

}  // namespace hcashare
