// Writing a file so that readers see the old or the new content, never a partial one, and
// creating directories with a chosen mode.
#pragma once

#include <sys/types.h>

#include <functional>
#include <string>

#include "common/status.h"

namespace hcashare {

// Writes `content` to a hidden temporary file next to `path`, then renames it onto `path`.
// The file gets exactly `mode` (whatever the umask). The directory must exist. On failure
// the temporary file is removed and `path` is left as it was; the Status names the path
// and the OS error.
Status WriteFileAtomically(const std::string& path, const std::string& content, mode_t mode = 0644);
// The same, calling `before_rename` with the new file's inode once it is complete and just
// before it replaces `path` (e.g. to record it first); a failure there stops the write.
Status WriteFileAtomically(const std::string& path, const std::string& content, mode_t mode,
                           const std::function<Status(ino_t)>& before_rename);

// WriteFileAtomically that also survives a power cut: the new file's content is flushed to
// disk (fsync) before the rename, and the directory, which holds the rename, after it. Without
// that a crash can leave `path` empty or old on filesystems that reorder metadata and data
// (ext4 without auto_da_alloc, xfs). For state that must not be lost (the DRA checkpoint);
// each call costs a few milliseconds on a disk. A failed directory flush is an error (the
// new content is in place but may not last).
Status WriteFileDurably(const std::string& path, const std::string& content, mode_t mode);

// Creates `path` and its missing parents, each new directory with exactly `mode`.
// Directories that exist keep their mode (an operator's choice is not overridden).
Status CreateDirectories(const std::string& path, mode_t mode);

}  // namespace hcashare
