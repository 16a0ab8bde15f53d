#include "common/safe_file.h"

#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <vector>

namespace hcashare {
namespace {

// Every open of the file itself: never blocks (FIFO), never leaks into a child, never
// becomes a controlling terminal.
constexpr int kReadFlags = O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY;

// An open that failed with errno `err`, as a Status naming `label` (what and path).
Status OpenError(int err, const std::string& label, const std::string& beneath) {
  switch (err) {
    case ELOOP:
      return Status::PermissionDenied(
          label +
          (beneath.empty()
               ? " is a symlink"
               : " is a symlink, or a directory on its way below " + beneath + " is one") +
          "; refused (symlinks are not followed here)");
    case EXDEV:
      return Status::InvalidArgument(label + " resolves outside " + beneath + "; refused");
    case ENXIO:  // a socket (or a device without a driver): nothing to read
      return Status::FailedPrecondition(label + " is not a regular file (a socket?)");
    default:
      return ErrnoStatus(err, "cannot open " + label);
  }
}

// The components of `relative`, "." and empty ones dropped. InvalidArgument on "..".
Result<std::vector<std::string>> Components(const std::string& relative, const std::string& label) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (start <= relative.size()) {
    size_t end = relative.find('/', start);
    if (end == std::string::npos) end = relative.size();
    std::string part = relative.substr(start, end - start);
    if (part == "..") return Status::InvalidArgument(label + " has a \"..\" component; refused");
    if (!part.empty() && part != ".") parts.push_back(std::move(part));
    start = end + 1;
  }
  if (parts.empty()) return Status::InvalidArgument(label + " names no file");
  return parts;
}

// The walk: 0 and `*out` set, or an errno (ELOOP for a symlink on the way).
int WalkOpen(int dirfd, const std::vector<std::string>& parts, int flags, UniqueFd* out) {
  UniqueFd dir(::fcntl(dirfd, F_DUPFD_CLOEXEC, 0));
  if (!dir.valid()) return errno;
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    UniqueFd next(
        ::openat(dir.get(), parts[i].c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
    struct stat st {};
    if (!next.valid()) {
      const int err = errno;
      // A symlink to a directory fails O_DIRECTORY | O_NOFOLLOW with ENOTDIR.
      if (err == ENOTDIR && ::fstatat(dir.get(), parts[i].c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 &&
          S_ISLNK(st.st_mode)) {
        return ELOOP;
      }
      return err;
    }
    if (::fstat(next.get(), &st) != 0) return errno;
    if (S_ISLNK(st.st_mode)) return ELOOP;  // O_PATH | O_NOFOLLOW opened the link itself
    if (!S_ISDIR(st.st_mode)) return ENOTDIR;
    dir = std::move(next);
  }
  UniqueFd file(::openat(dir.get(), parts.back().c_str(), flags | O_NOFOLLOW));
  if (!file.valid()) return errno;
  *out = std::move(file);
  return 0;
}

// Opens `relative` below the directory `beneath` with no symlink on the way: openat2
// where the kernel has it (and a seccomp filter lets it through), else the walk.
Result<UniqueFd> OpenBeneathLabelled(const std::string& beneath, const std::string& relative,
                                     int flags, const std::string& label) {
  ASSIGN_OR_RETURN(const std::vector<std::string> parts, Components(relative, label));
  UniqueFd dir(::open(beneath.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!dir.valid()) return ErrnoStatus(errno, "cannot open directory " + beneath);
#ifdef SYS_openat2
  open_how how{};
  how.flags = static_cast<uint64_t>(flags | O_NOFOLLOW);
  how.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS;
  const long fd = ::syscall(SYS_openat2, dir.get(), relative.c_str(), &how, sizeof(how));
  if (fd >= 0) return UniqueFd(static_cast<int>(fd));
  // ENOSYS: before Linux 5.6; EPERM: a seccomp profile that does not know it; E2BIG: a
  // kernel that knows an older open_how.
  if (errno != ENOSYS && errno != EPERM && errno != E2BIG) {
    return OpenError(errno, label, beneath);
  }
#endif
  UniqueFd file;
  if (const int err = WalkOpen(dir.get(), parts, flags, &file); err != 0) {
    return OpenError(err, label, beneath);
  }
  return file;
}

// The part of `path` below `dir` ("" when `path` is not below it).
std::string RelativeBelow(const std::string& dir, const std::string& path) {
  std::string prefix = dir;
  while (prefix.size() > 1 && prefix.back() == '/') prefix.pop_back();
  if (prefix != "/") prefix += '/';
  if (path.size() <= prefix.size() || path.compare(0, prefix.size(), prefix) != 0) return "";
  const size_t start = path.find_first_not_of('/', prefix.size());
  return start == std::string::npos ? "" : path.substr(start);
}

}  // namespace

std::string FileKindName(mode_t mode) {
  if (S_ISREG(mode)) return "a regular file";
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISLNK(mode)) return "a symlink";
  return "a special file";
}

Result<UniqueFd> OpenBeneath(const std::string& beneath, const std::string& relative, int flags) {
  return OpenBeneathLabelled(beneath, relative, flags | O_CLOEXEC, relative);
}

Result<UniqueFd> OpenBeneathByWalk(const std::string& dir, const std::string& relative, int flags) {
  const std::string label = relative;
  ASSIGN_OR_RETURN(const std::vector<std::string> parts, Components(relative, label));
  UniqueFd dirfd(::open(dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (!dirfd.valid()) return ErrnoStatus(errno, "cannot open directory " + dir);
  UniqueFd file;
  if (const int err = WalkOpen(dirfd.get(), parts, flags, &file); err != 0) {
    return OpenError(err, label, dir);
  }
  return file;
}

Result<std::string> ReadFileSafely(const std::string& path, const SafeReadOptions& options) {
  const std::string label = options.what + " " + path;
  UniqueFd fd;
  if (!options.beneath.empty()) {
    if (options.follow_symlinks) {
      return Status::InvalidArgument("reading " + label +
                                     ": follow_symlinks and beneath exclude each other");
    }
    const std::string relative = RelativeBelow(options.beneath, path);
    if (relative.empty()) {
      return Status::InvalidArgument(label + " is not below " + options.beneath);
    }
    ASSIGN_OR_RETURN(fd, OpenBeneathLabelled(options.beneath, relative, kReadFlags, label));
  } else {
    fd.Reset(::open(path.c_str(), kReadFlags | (options.follow_symlinks ? 0 : O_NOFOLLOW)));
    if (!fd.valid()) return OpenError(errno, label, "");
  }
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0) return ErrnoStatus(errno, "cannot stat " + label);
  if (!S_ISREG(st.st_mode)) {
    return Status::FailedPrecondition(label + " is " + FileKindName(st.st_mode) +
                                      ", not a regular file");
  }
  if (options.root_owned && (st.st_uid != 0 || (st.st_mode & (S_IWGRP | S_IWOTH)) != 0)) {
    char mode[8];
    std::snprintf(mode, sizeof(mode), "%04o", static_cast<unsigned>(st.st_mode & 07777));
    return Status::PermissionDenied(label + " is owned by uid " + std::to_string(st.st_uid) +
                                    " with mode " + mode +
                                    "; it must be owned by root and writable by root only");
  }
  const std::string limit = "; the limit is " + std::to_string(options.max_bytes) + " bytes";
  if (static_cast<uint64_t>(st.st_size) > options.max_bytes) {
    return Status::FailedPrecondition(label + " is " + std::to_string(st.st_size) + " bytes" +
                                      limit);
  }
  // The size can grow after fstat (the writer is still at it): read one byte past the cap
  // at most, never the whole file.
  std::string out;
  out.reserve(static_cast<size_t>(st.st_size) + 1);
  char buf[65536];
  for (;;) {
    const size_t want = std::min(sizeof(buf), options.max_bytes + 1 - out.size());
    if (want == 0) break;
    const ssize_t n = ::read(fd.get(), buf, want);
    if (n < 0) {
      if (errno == EINTR) continue;
      return ErrnoStatus(errno, "cannot read " + label);
    }
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  if (out.size() > options.max_bytes) {
    return Status::FailedPrecondition(label + " grew past the limit while it was read" + limit);
  }
  return out;
}

}  // namespace hcashare
