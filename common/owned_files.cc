#include "common/owned_files.h"

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <vector>

#include "common/atomic_file.h"
#include "common/log.h"

namespace hcashare {
namespace {

ino_t InodeOfPath(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? st.st_ino : 0;
}

}  // namespace

Status OwnedFiles::Write(const std::string& name, const std::string& content, bool* changed) {
  const std::string path = dir_ + "/" + name;
  if (changed != nullptr) *changed = false;
  auto it = written_.find(name);
  if (it != written_.end() && it->second.content == content &&
      InodeOfPath(path) == it->second.inode) {
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
