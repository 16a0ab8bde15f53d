#include "common/version.h"

namespace hcashare {

std::string VersionString() {
  return std::string(HCASHARE_VERSION) + " (" + HCASHARE_GIT_VERSION + ")";
}

}  // namespace hcashare
