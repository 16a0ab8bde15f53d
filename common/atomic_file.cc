#include "common/atomic_file.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>

#include "common/host.h"

namespace hcashare {

Status WriteFileAtomically(const std::string& path, const std::string& content) {
  const size_t slash = path.rfind('/');
  const std::string dir = slash == std::string::npos ? "." : path.substr(0, slash);
  const std::string tmp = dir + "/." + BaseName(path) + ".tmp." + std::to_string(::getpid());
  FILE* f = std::fopen(tmp.c_str(), "w");
  if (f == nullptr) return ErrnoStatus(errno, "write " + tmp);
  const bool written = std::fwrite(content.data(), 1, content.size(), f) == content.size();
  const bool closed = std::fclose(f) == 0;
  if (!written || !closed || std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    std::remove(tmp.c_str());
    return ErrnoStatus(err ? err : EIO, "write " + path);
  }
  return Status::Ok();
}

}  // namespace hcashare
