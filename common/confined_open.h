// Opening a file below a directory without following a symbolic link on any component:
// the confinement of every write the plugin makes under /sys (cni/vf_driver.cc). A
// directory fd is taken once from a trusted path (the host root); every path below it is
// resolved by the kernel (openat2 with RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS) or, on
// kernels before 5.6, by a walk that opens one component at a time with O_NOFOLLOW, so a
// symlink planted anywhere below the directory is refused instead of followed.
//
// Generic on purpose (no sysfs knowledge): any module that must not be redirected by a
// tree someone else can write uses it.
#pragma once

#include <string>

#include "common/status.h"
#include "common/unique_fd.h"

namespace hcashare {

// How OpenBeneath resolves a path.
enum class BeneathResolver {
  kAuto,  // openat2 where the kernel has it, else the component walk
  kWalk,  // the component walk only (what runs on kernels without openat2; for tests)
};

// Opens the directory at `path` (an absolute, trusted path; symlinks in it are followed)
// as an O_PATH directory fd, the anchor of OpenBeneath.
Result<UniqueFd> OpenDirectoryFd(const std::string& path);

// Opens `relative` below directory `dirfd` with `flags` (O_CLOEXEC is added). `relative`
// is '/'-separated, without a leading '/', "." or ".." components; a component that is a
// symbolic link (the last one included) is refused with PermissionDenied naming it, as is
// any other way out of `dirfd`. Other failures are the open's errno (ErrnoStatus).
Result<UniqueFd> OpenBeneath(int dirfd, const std::string& relative, int flags,
                             BeneathResolver resolver = BeneathResolver::kAuto);

}  // namespace hcashare
