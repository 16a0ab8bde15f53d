#include "common/atomic_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <cstdio>

#include "common/host.h"
#include "common/unique_fd.h"

namespace hcashare {
namespace {

// Writes all of `content` to `fd`, retrying short writes.
bool WriteAll(int fd, const std::string& content) {
  size_t done = 0;
  while (done < content.size()) {
    const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

Status WriteFile(const std::string& path, const std::string& content, mode_t mode,
                 const std::function<Status(ino_t)>& before_rename, bool durable) {
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : path.substr(0, slash);
  // Unique per call: threads of one process may write the same path at once (Allocates of
  // one device), and each must rename only its own complete file.
  static std::atomic<uint64_t> sequence{0};
  const std::string tmp = dir + "/." + BaseName(path) + ".tmp." + std::to_string(::getpid()) + "." +
                          std::to_string(sequence.fetch_add(1));
  UniqueFd fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode));
  if (!fd.valid()) return ErrnoStatus(errno, "write " + tmp);
  // fchmod: the mode given to open() is filtered by the umask.
  const bool written = ::fchmod(fd.get(), mode) == 0 && WriteAll(fd.get(), content) &&
                       (!durable || ::fsync(fd.get()) == 0);
  struct stat st {};
  const bool stated = ::fstat(fd.get(), &st) == 0;
  const bool closed = ::close(fd.Release()) == 0;
  Status hook = Status::Ok();
  if (written && stated && closed && before_rename) hook = before_rename(st.st_ino);
  if (!hook.ok()) {
    std::remove(tmp.c_str());
    return hook;
  }
  if (!written || !stated || !closed || std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    std::remove(tmp.c_str());
    return ErrnoStatus(err ? err : EIO, "write " + path);
  }
  if (durable) {
    UniqueFd d(::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (!d.valid() || ::fsync(d.get()) != 0) return ErrnoStatus(errno, "flush directory " + dir);
  }
  return Status::Ok();
}

}  // namespace

Status WriteFileAtomically(const std::string& path, const std::string& content, mode_t mode) {
  return WriteFile(path, content, mode, nullptr, false);
}

Status WriteFileAtomically(const std::string& path, const std::string& content, mode_t mode,
                           const std::function<Status(ino_t)>& before_rename) {
  return WriteFile(path, content, mode, before_rename, false);
}

Status WriteFileDurably(const std::string& path, const std::string& content, mode_t mode) {
  return WriteFile(path, content, mode, nullptr, true);
}

Status CreateDirectories(const std::string& path, mode_t mode) {
  for (size_t end = path.find('/', 1);; end = path.find('/', end + 1)) {
    const std::string part = path.substr(0, end);
    if (!part.empty() && ::mkdir(part.c_str(), mode) == 0) {
      if (::chmod(part.c_str(), mode) != 0) return ErrnoStatus(errno, "chmod " + part);
    } else if (!part.empty() && errno != EEXIST) {
      return ErrnoStatus(errno, "create " + part);
    }
    if (end == std::string::npos) break;
  }
  return Status::Ok();
}

}  // namespace hcashare
