#include "common/host.h"

#include "common/unique_fd.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <filesystem>

namespace hcashare {

std::string JoinPath(const std::string& a, const std::string& b) {
  if (a.empty()) return b;
  if (b.empty()) return a;
  bool a_slash = a.back() == '/';
  bool b_slash = b.front() == '/';
  if (a_slash && b_slash) return a + b.substr(1);
  if (a_slash || b_slash) return a + b;
  return a + "/" + b;
}

std::string BaseName(const std::string& path) {
  size_t end = path.find_last_not_of('/');
  if (end == std::string::npos) return path.empty() ? "" : "/";
  size_t start = path.rfind('/', end);
  return path.substr(start == std::string::npos ? 0 : start + 1,
                     end - (start == std::string::npos ? 0 : start + 1) + 1);
}

std::string CanonicalPath(const std::string& path) {
  std::error_code ec;
  std::filesystem::path p = std::filesystem::canonical(path, ec);
  if (ec) p = std::filesystem::path(path).lexically_normal();
  std::string out = p.string();
  while (out.size() > 1 && out.back() == '/') out.pop_back();
  return out;
}

Result<std::string> Host::ReadTrimmed(const std::string& path) const {
  ASSIGN_OR_RETURN(std::string s, ReadFile(path));
  while (!s.empty() &&
         (s.back() == '\n' || s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) {
    s.pop_back();
  }
  return s;
}

namespace {

class RootedHost final : public Host {
 public:
  explicit RootedHost(std::string root) : root_(std::move(root)) {
    while (root_.size() > 1 && root_.back() == '/') root_.pop_back();
  }

  std::string Resolve(const std::string& path) const override {
    if (root_ == "/") return path;
    return JoinPath(root_, path);
  }

  Result<std::string> ReadFile(const std::string& path) const override {
    // Plain open/read: sysfs attributes are tiny and this runs thousands of times per scan.
    const bool is_sysfs = path.rfind("/sys/", 0) == 0;
    UniqueFd fd(::open(Resolve(path).c_str(), O_RDONLY | O_CLOEXEC));
    if (!fd.valid()) return ErrnoStatus(errno, "read " + path);
    std::string out;
    char buf[4096];
    for (;;) {
      ssize_t n = ::read(fd.get(), buf, sizeof(buf));
      if (n < 0) {
        if (errno == EINTR) continue;
        return ErrnoStatus(errno, "read " + path);
      }
      if (n == 0) break;
      out.append(buf, static_cast<size_t>(n));
      // A sysfs attribute is returned whole by its first read (at most one page), so a
      // short read there is the end; skipping the extra read matters when a scan does
      // thousands of these.
      if (static_cast<size_t>(n) < sizeof(buf) && is_sysfs) break;
    }
    return out;
  }

  Result<std::string> ReadLink(const std::string& path) const override {
    char buf[PATH_MAX];
    ssize_t n = ::readlink(Resolve(path).c_str(), buf, sizeof(buf) - 1);
    if (n < 0) return ErrnoStatus(errno, "readlink " + path);
    return std::string(buf, static_cast<size_t>(n));
  }

  Result<std::vector<std::string>> ListDir(const std::string& path) const override {
    DIR* d = ::opendir(Resolve(path).c_str());
    if (d == nullptr) return ErrnoStatus(errno, "list " + path);
    std::vector<std::string> names;
    while (dirent* e = ::readdir(d)) {
      std::string n = e->d_name;
      if (n != "." && n != "..") names.push_back(std::move(n));
    }
    ::closedir(d);
    std::sort(names.begin(), names.end());
    return names;
  }

  Result<FileInfo> Stat(const std::string& path) const override {
    struct stat st {};
    if (::stat(Resolve(path).c_str(), &st) != 0) return ErrnoStatus(errno, "stat " + path);
    FileInfo info;
    info.inode = st.st_ino;
    if (S_ISREG(st.st_mode))
      info.type = FileInfo::Type::kRegular;
    else if (S_ISDIR(st.st_mode))
      info.type = FileInfo::Type::kDirectory;
    else if (S_ISLNK(st.st_mode))
      info.type = FileInfo::Type::kSymlink;
    else if (S_ISCHR(st.st_mode))
      info.type = FileInfo::Type::kCharDevice;
    else if (S_ISSOCK(st.st_mode))
      info.type = FileInfo::Type::kSocket;
    return info;
  }

  Result<std::string> RealPath(const std::string& path) const override {
    char buf[PATH_MAX];
    if (::realpath(Resolve(path).c_str(), buf) == nullptr) {
      return ErrnoStatus(errno, "realpath " + path);
    }
    std::string real = buf;
    if (root_ == "/") return real;
    char rootbuf[PATH_MAX];
    std::string root = ::realpath(root_.c_str(), rootbuf) ? std::string(rootbuf) : root_;
    if (real.compare(0, root.size(), root) != 0) {
      return Status::InvalidArgument("path " + path + " resolves outside the host root");
    }
    std::string rest = real.substr(root.size());
    return rest.empty() ? std::string("/") : rest;
  }

 private:
  std::string root_;
};

}  // namespace

std::unique_ptr<Host> NewRootedHost(const std::string& root) {
  return std::make_unique<RootedHost>(root.empty() ? std::string("/") : root);
}

}  // namespace hcashare
