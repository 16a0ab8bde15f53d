#include "common/confined_open.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <vector>

namespace hcashare {
namespace {

// The components of `relative`, or InvalidArgument when it could leave the directory.
Result<std::vector<std::string>> Components(const std::string& relative) {
  if (relative.empty() || relative.front() == '/') {
    return Status::InvalidArgument("not a relative path: \"" + relative + "\"");
  }
  std::vector<std::string> parts;
  size_t start = 0;
  while (start <= relative.size()) {
    const size_t slash = relative.find('/', start);
    const size_t end = slash == std::string::npos ? relative.size() : slash;
    std::string part = relative.substr(start, end - start);
    if (part.empty() || part == "." || part == "..") {
      return Status::InvalidArgument("path \"" + relative + "\" has an empty, . or .. component");
    }
    parts.push_back(std::move(part));
    if (slash == std::string::npos) break;
    start = slash + 1;
  }
  return parts;
}

Status SymlinkRefused(const std::string& relative, const std::string& component) {
  return Status::PermissionDenied("refusing to open " + relative + ": " + component +
                                  " is a symbolic link (or leads out of its directory)");
}

// True when `name` below `dirfd` is a symbolic link.
bool IsSymlinkAt(int dirfd, const std::string& name) {
  struct stat st {};
  return ::fstatat(dirfd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode);
}

Result<UniqueFd> Walk(int dirfd, const std::string& relative, const std::vector<std::string>& parts,
                      int flags) {
  UniqueFd dir;
  int at = dirfd;
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    UniqueFd next(::openat(at, parts[i].c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    if (!next.valid()) {
      const int err = errno;
      if ((err == ENOTDIR || err == ELOOP) && IsSymlinkAt(at, parts[i])) {
        return SymlinkRefused(relative, parts[i]);
      }
      return ErrnoStatus(err, "open " + relative);
    }
    dir = std::move(next);
    at = dir.get();
  }
  UniqueFd fd(::openat(at, parts.back().c_str(), flags | O_NOFOLLOW | O_CLOEXEC));
  if (!fd.valid()) {
    const int err = errno;
    if (err == ELOOP || IsSymlinkAt(at, parts.back()))
      return SymlinkRefused(relative, parts.back());
    return ErrnoStatus(err, "open " + relative);
  }
  return fd;
}

}  // namespace

Result<UniqueFd> OpenDirectoryFd(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!fd.valid()) return ErrnoStatus(errno, "open directory " + path);
  return fd;
}

Result<UniqueFd> OpenBeneath(int dirfd, const std::string& relative, int flags,
                             BeneathResolver resolver) {
  ASSIGN_OR_RETURN(const std::vector<std::string> parts, Components(relative));
  if (resolver == BeneathResolver::kAuto) {
    struct open_how how {};
    how.flags = static_cast<uint64_t>(flags | O_CLOEXEC);
    how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
    const long fd = ::syscall(SYS_openat2, dirfd, relative.c_str(), &how, sizeof(how));
    if (fd >= 0) return UniqueFd(static_cast<int>(fd));
    const int err = errno;
    // ENOSYS: a kernel before 5.6; EPERM: a seccomp filter that does not know openat2.
    // ELOOP, EXDEV: a symlink on the way; the walk, as strict, names it. Anything else is
    // the open's own answer.
    if (err != ENOSYS && err != EPERM && err != ELOOP && err != EXDEV) {
      return ErrnoStatus(err, "open " + relative);
    }
  }
  return Walk(dirfd, relative, parts, flags);
}

}  // namespace hcashare
