// Host: the one seam through which hcashare reads /sys, /dev and /proc.
//
// Every path passed in is host-absolute ("/sys/bus/pci/devices"); the implementation
// resolves it under a root prefix chosen at construction (--host-root), so tests and the
// demo run against fixture trees. Paths handed to the kubelet are never prefixed.
// Implementations are thread-safe for concurrent reads.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "common/status.h"

namespace hcashare {

// What Stat() reports about a path.
struct FileInfo {
  enum class Type { kRegular, kDirectory, kSymlink, kCharDevice, kSocket, kOther };
  Type type = Type::kOther;
  ino_t inode = 0;
};

class Host {
 public:
  virtual ~Host() = default;
  Host() = default;
  Host(const Host&) = delete;
  Host& operator=(const Host&) = delete;

  // Returns the whole file. NotFound when it does not exist.
  virtual Result<std::string> ReadFile(const std::string& path) const = 0;
  // Returns the target of the symlink at `path`, unresolved. NotFound if absent;
  // InvalidArgument if it is not a symlink.
  virtual Result<std::string> ReadLink(const std::string& path) const = 0;
  // Returns the entry names of directory `path` (no "." or ".."), sorted. NotFound if absent.
  virtual Result<std::vector<std::string>> ListDir(const std::string& path) const = 0;
  // Stats `path`, following symlinks. NotFound if absent.
  virtual Result<FileInfo> Stat(const std::string& path) const = 0;
  // Resolves every symlink in `path` and returns the host-absolute result (root stripped).
  virtual Result<std::string> RealPath(const std::string& path) const = 0;
  // The on-disk location of host path `path` (root + path), for APIs that need a real path.
  virtual std::string Resolve(const std::string& path) const = 0;

  // ReadFile with trailing whitespace (newlines) removed.
  Result<std::string> ReadTrimmed(const std::string& path) const;
  // True when Stat() succeeds.
  bool Exists(const std::string& path) const { return Stat(path).ok(); }
};

// The real filesystem, rooted at `root` ("/" for the live host). `root` must be absolute.
std::unique_ptr<Host> NewRootedHost(const std::string& root);

// Joins path components with exactly one '/' between them.
std::string JoinPath(const std::string& a, const std::string& b);
// The last path component ("a/b/c" -> "c"; trailing slashes ignored).
std::string BaseName(const std::string& path);
// One spelling per directory: realpath(3) when `path` exists, else its lexical normal form
// (no ".", "..", repeated or trailing '/'). "/var/lib/kubelet/" and a symlink to it both
// give "/var/lib/kubelet".
std::string CanonicalPath(const std::string& path);

}  // namespace hcashare
