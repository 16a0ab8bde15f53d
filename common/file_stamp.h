// FileStamp: what identifies one version of a file (device, inode, size, modification
// time), to notice that a file another party rotates (a token, a certificate) has changed
// without reading it.
#pragma once

#include <sys/stat.h>

#include <string>

#include "common/status.h"

namespace hcashare {

// One version of a file, as stat() (symlinks followed) sees it.
struct FileStamp {
  dev_t dev = 0;
  ino_t ino = 0;
  off_t size = 0;
  timespec mtime{};

  // The same version: every field equal.
  bool operator==(const FileStamp& o) const {
    return dev == o.dev && ino == o.ino && size == o.size && mtime.tv_sec == o.mtime.tv_sec &&
           mtime.tv_nsec == o.mtime.tv_nsec;
  }
  bool operator!=(const FileStamp& o) const { return !(*this == o); }
};

// The stamp of `path` now; the errno's Status naming `path` when stat() fails.
inline Result<FileStamp> StampOf(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return ErrnoStatus(errno, path);
  return FileStamp{st.st_dev, st.st_ino, st.st_size, st.st_mtim};
}

}  // namespace hcashare
