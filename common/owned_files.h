// OwnedFiles: files this process writes into a shared directory and removes again, but
// only while each is still the one it wrote (same inode): a file another instance has
// since rewritten is never deleted. Writes are atomic and skipped when the content is
// unchanged; a file that already holds the content (written by another instance) is
// adopted as is. Not thread-safe.
#pragma once

#include <sys/types.h>

#include <map>
#include <string>

#include "common/status.h"

namespace hcashare {

class OwnedFiles {
 public:
  // Files go into `dir` (created on the first write).
  explicit OwnedFiles(std::string dir) : dir_(std::move(dir)) {}

  // Writes `content` to `dir/name` unless the file already holds it (then it is ours as
  // it is). Returns true in *changed when it wrote.
  Status Write(const std::string& name, const std::string& content, bool* changed = nullptr);
  // Removes `dir/name` if it is still ours; forgets it either way.
  void Remove(const std::string& name);
  // Removes every file still ours (shutdown).
  void RemoveAll();
  // Stops owning `dir/name` without touching it (another instance has taken it over).
  void Forget(const std::string& name) { written_.erase(name); }

  const std::string& dir() const { return dir_; }

 private:
  struct Written {
    ino_t inode = 0;
    std::string content;
  };

  const std::string dir_;
  std::map<std::string, Written> written_;  // by name
};

}  // namespace hcashare
