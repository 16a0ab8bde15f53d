// Reading the network configuration from stdin with a size cap.
#pragma once

#include <cstddef>
#include <string>

#include "common/status.h"

namespace hcashare::cni {

// Largest network configuration accepted on stdin (1 MiB).
inline constexpr size_t kMaxStdinBytes = 1 << 20;

// Reads `fd` to end of file. More than `max_bytes` -> code 6 ("network configuration on
// stdin exceeds N bytes"); at most max_bytes + 1 bytes are read, the rest is left unread.
// A read error -> code 5. EINTR is retried.
Result<std::string> ReadStdin(int fd, size_t max_bytes = kMaxStdinBytes);

}  // namespace hcashare::cni
