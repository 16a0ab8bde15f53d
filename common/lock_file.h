// Lock files that can be removed safely: an flock(2) on a file whose name may be unlinked
// by its holder (when it is done) or by a collector (when nobody holds it).
//
// The race this closes: A opens the path (inode 1); a collector takes the lock of inode 1,
// unlinks it and lets go; A's flock then succeeds on a file no name leads to, and B, who
// opens the path next, creates inode 2 and locks it too. So a collector unlinks only while
// holding the lock and only when the path still names the inode it holds, and a locker
// re-checks after its flock that the path still names its inode (else it opens again).
#pragma once

#include <sys/types.h>

#include <string>

#include "common/status.h"
#include "common/unique_fd.h"

namespace hcashare {

// Opens the lock file `path` (created with `mode` if absent, never through a symlink) and
// takes flock(LOCK_EX | LOCK_NB) on it, re-opening while the path was removed or replaced
// in between (see above). The lock is held while the returned fd is open. Unavailable when
// another process holds it; the errno's Status naming `path` otherwise.
Result<UniqueFd> TryLockFile(const std::string& path, mode_t mode);

// Removes the lock file `path` if nobody holds it: takes its lock without waiting, and
// unlinks it while holding it, only when `path` still names the locked inode. With `remove`
// false, only tells whether it would have. True when removed (or removable); false when
// held, absent, replaced meanwhile, or not a regular file.
Result<bool> RemoveLockFileIfUnheld(const std::string& path, bool remove);

}  // namespace hcashare
