// ReadFileSafely: the one reader for a file another party writes (the device-plugin pod's
// pool descriptions, the kubelet's checkpoint, the CNI's own state, a ConfigMap's config).
//
// Whoever can write the directory can put anything under the name the reader expects: a
// symlink to /dev/zero or to a root-only file, a FIFO nobody ever writes, a file of
// gigabytes. So the reader
//   - opens with O_NONBLOCK (a FIFO's open never waits for a writer), O_CLOEXEC and
//     O_NOCTTY, and refuses what fstat() says is not a regular file;
//   - refuses a symlink as the last component (O_NOFOLLOW) unless told to follow them,
//     and, below a trusted directory, on every component (openat2 with
//     RESOLVE_NO_SYMLINKS | RESOLVE_BENEATH where the kernel has it, Linux >= 5.6; a walk
//     of O_NOFOLLOW opens one component at a time where it does not);
//   - reads at most max_bytes + 1 bytes, and refuses a file larger than max_bytes.
// Each error names the path and what is wrong with it.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <string>

#include "common/status.h"
#include "common/unique_fd.h"

namespace hcashare {

// How ReadFileSafely may open a file.
struct SafeReadOptions {
  // The most the file may hold; a larger file is refused with this number in the error.
  // Below SIZE_MAX.
  size_t max_bytes = 0;
  // Follow symlinks in every component, the last included (a Kubernetes ConfigMap's files
  // are symlinks into ..data/). Only for files whose directory no other party can write.
  bool follow_symlinks = false;
  // When not empty: `path` must lie below this directory, which is trusted as it is
  // (symlinks and all), and no component of `path` below it may be a symlink or "..".
  // Incompatible with follow_symlinks.
  std::string beneath;
  // Refuse the file unless root owns it and neither its group nor others may write it (a
  // node file that only the administrator may change). Checked on the opened file.
  bool root_owned = false;
  // What the file is, for messages ("pool description", "config file"); "file" by default.
  std::string what = "file";
};

// The whole content of the regular file at `path` (see the file comment). Errors, each
// naming `path`: absent -> NotFound; a symlink where none is allowed, or a file not root's
// where root_owned asks for it -> PermissionDenied; not a regular file (FIFO, socket, device,
// directory) or larger than max_bytes -> FailedPrecondition (the message names the kind of file or
// the cap); anything else from open/read -> the errno's Status.
Result<std::string> ReadFileSafely(const std::string& path, const SafeReadOptions& options);

// "a directory", "a FIFO", "a socket", ...: what a file of mode `mode` is.
std::string FileKindName(mode_t mode);

// Opens `relative` below the directory `beneath` (trusted as it is) with `flags` (O_NOFOLLOW
// and O_CLOEXEC added), refusing a symlink on every component below it: openat2 with
// RESOLVE_NO_SYMLINKS | RESOLVE_BENEATH where the kernel has it, else OpenBeneathByWalk.
// Errors as ReadFileSafely's (a symlink -> PermissionDenied, ".." -> InvalidArgument). What
// ReadFileSafely's `beneath` opens with, and how the CNI writes sysfs (cni/vf_driver.cc).
Result<UniqueFd> OpenBeneath(const std::string& beneath, const std::string& relative, int flags);

// The open ReadFileSafely uses below a trusted directory where the kernel has no openat2:
// `relative` (no leading '/') opened from `dir` one component at a time, each with
// O_NOFOLLOW, the last with `flags` | O_NOFOLLOW. Errors as ReadFileSafely's (a symlink ->
// PermissionDenied, ".." -> InvalidArgument). Declared for its tests; ReadFileSafely uses
// it by itself when openat2 is missing.
Result<UniqueFd> OpenBeneathByWalk(const std::string& dir, const std::string& relative, int flags);

}  // namespace hcashare
