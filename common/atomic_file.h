// Writing a file so that readers see the old or the new content, never a partial one.
#pragma once

#include <string>

#include "common/status.h"

namespace hcashare {

// Writes `content` to a hidden temporary file next to `path`, then renames it onto `path`.
// The directory must exist. On failure the temporary file is removed and `path` is left as
// it was; the Status names the path and the OS error.
Status WriteFileAtomically(const std::string& path, const std::string& content);

}  // namespace hcashare
