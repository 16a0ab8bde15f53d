// Build identity, baked in at compile time.
#pragma once

#include <string>

namespace hcashare {

// "<semver> (<git describe>)", e.g. "0.1.0 (a1b2c3d)".
std::string VersionString();

}  // namespace hcashare
