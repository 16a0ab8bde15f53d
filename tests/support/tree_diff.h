// Comparing a directory tree before and after an invocation: every path with its type,
// size and modification time, and what was created, changed or removed.
#pragma once

#include <sys/stat.h>

#include <filesystem>
#include <map>
#include <string>

namespace hcashare::cni {

// Path -> "mode size mtime".
using Tree = std::map<std::string, std::string>;

// Every path under `root` with its type, size and modification time.
inline Tree Snapshot(const std::string& root) {
  Tree out;
  std::error_code ec;
  for (auto it = std::filesystem::recursive_directory_iterator(root, ec);
       !ec && it != std::filesystem::recursive_directory_iterator(); it.increment(ec)) {
    struct stat st {};
    if (::lstat(it->path().c_str(), &st) != 0) continue;
    out[it->path().string()] = std::to_string(st.st_mode) + " " + std::to_string(st.st_size) + " " +
                               std::to_string(st.st_mtim.tv_sec) + "." +
                               std::to_string(st.st_mtim.tv_nsec);
  }
  return out;
}

// The paths created, changed or removed from `before` to `after` ("" when none).
inline std::string TreeChanges(const Tree& before, const Tree& after) {
  std::string changes;
  for (const auto& [path, meta] : after) {
    auto it = before.find(path);
    if (it == before.end()) changes += "created " + path + "\n";
    if (it != before.end() && it->second != meta) changes += "changed " + path + "\n";
  }
  for (const auto& [path, meta] : before) {
    if (!after.count(path)) changes += "removed " + path + "\n";
  }
  return changes;
}

}  // namespace hcashare::cni
