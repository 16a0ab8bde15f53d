#include "cni/stdin.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "cni/error.h"

namespace hcashare::cni {

namespace {
// Bytes asked for per read().
constexpr size_t kChunkBytes = 64 * 1024;
}  // namespace

Result<std::string> ReadStdin(int fd, size_t max_bytes) {
  std::string data;
  // Stop one byte past the cap: enough to know it was exceeded.
  const size_t limit = max_bytes + 1;
  while (data.size() < limit) {
    const size_t old_size = data.size();
    const size_t want = std::min(kChunkBytes, limit - old_size);
    data.resize(old_size + want);
    const ssize_t n = ::read(fd, data.data() + old_size, want);
    if (n < 0) {
      const int err = errno;
      data.resize(old_size);
      if (err == EINTR) continue;
      return CniStatus(kErrIo, "cannot read the network configuration from stdin",
                       std::strerror(err));
    }
    data.resize(old_size + static_cast<size_t>(n));
    if (n == 0) return data;
  }
  return CniStatus(
      kErrDecode, "network configuration on stdin exceeds " + std::to_string(max_bytes) + " bytes");
}

}  // namespace hcashare::cni
