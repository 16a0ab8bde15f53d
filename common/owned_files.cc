#include "common/owned_files.h"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <vector>

#include "common/atomic_file.h"
#include "common/log.h"

namespace hcashare {
namespace {

ino_t InodeOfPath(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? st.st_ino : 0;
}

// True when the file at `path` holds exactly `content`.
bool HoldsContent(const std::string& path, const std::string& content) {
  std::ifstream in(path, std::ios::binary);
  std::string buf(content.size() + 1, '\0');
  in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
  return in.gcount() == static_cast<std::streamsize>(content.size()) &&
         buf.compare(0, content.size(), content) == 0;
}

}  // namespace

Status OwnedFiles::Write(const std::string& name, const std::string& content, bool* changed) {
  const std::string path = dir_ + "/" + name;
  if (changed != nullptr) *changed = false;
  auto it = written_.find(name);
  const ino_t on_disk = InodeOfPath(path);
  if (it != written_.end() && it->second.content == content && on_disk == it->second.inode) {
    return Status::Ok();
  }
  if (on_disk != 0 && HoldsContent(path, content)) {
    // Another instance (a rollout overlap) wrote this very content: adopt its file instead
    // of replacing it, so that the two never take turns rewriting it.
    written_[name] = Written{on_disk, content};
    return Status::Ok();
  }
  std::error_code ec;
  std::filesystem::create_directories(dir_, ec);
  RETURN_IF_ERROR(WriteFileAtomically(path, content));
  written_[name] = Written{InodeOfPath(path), content};
  if (changed != nullptr) *changed = true;
  return Status::Ok();
}

void OwnedFiles::Remove(const std::string& name) {
  auto it = written_.find(name);
  if (it == written_.end()) return;  // never ours: never touched
  const std::string path = dir_ + "/" + name;
  if (InodeOfPath(path) == it->second.inode) {
    ::unlink(path.c_str());
    LogInfo("removed file", {{"file", path}});
  }
  written_.erase(it);
}

void OwnedFiles::RemoveAll() {
  std::vector<std::string> names;
  for (const auto& [name, w] : written_) names.push_back(name);
  for (const auto& n : names) Remove(n);
}

}  // namespace hcashare
