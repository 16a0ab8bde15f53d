#include "common/owned_files.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <vector>

#include "common/atomic_file.h"
#include "common/log.h"
#include "common/strings.h"

namespace hcashare {
namespace {

// The inode of the regular file at `path` (not following a symlink); 0 when there is none.
// *other is set when something else (a symlink, a FIFO, a directory) is there.
ino_t InodeOfPath(const std::string& path, bool* other = nullptr) {
  struct stat st {};
  const bool found = ::lstat(path.c_str(), &st) == 0;
  if (other != nullptr) *other = found && !S_ISREG(st.st_mode);
  return found && S_ISREG(st.st_mode) ? st.st_ino : 0;
}

// True when the file at `path` holds exactly `content`.
bool HoldsContent(const std::string& path, const std::string& content) {
  std::ifstream in(path, std::ios::binary);
  std::string buf(content.size() + 1, '\0');
  in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
  return in.gcount() == static_cast<std::streamsize>(content.size()) &&
         buf.compare(0, content.size(), content) == 0;
}

constexpr const char* kLedgerHeader = "hcashare owned files v1";
constexpr size_t kMaxLedgerBytes = 1 << 20;

// The (inode, name) lines of the ledger open at `fd`, at most kMaxLedgerBytes; lines this
// code does not write are skipped, never acted on.
std::vector<std::pair<ino_t, std::string>> ReadLedger(int fd) {
  std::vector<std::pair<ino_t, std::string>> out;
  std::string text(kMaxLedgerBytes, '\0');
  const ssize_t n = ::pread(fd, text.data(), text.size(), 0);
  if (n <= 0) return out;
  text.resize(static_cast<size_t>(n));
  std::istringstream in(text);
  std::string line;
  if (!std::getline(in, line) || line != kLedgerHeader) return out;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    unsigned long long inode = 0;
    std::string name;
    if (!(fields >> inode) || !std::getline(fields >> std::ws, name) || name.empty() ||
        name.find('/') != std::string::npos || name[0] == '.') {
      continue;
    }
    out.emplace_back(static_cast<ino_t>(inode), name);
  }
  return out;
}

}  // namespace

OwnedFiles::OwnedFiles(std::string dir, std::string owner)
    : dir_(std::move(dir)),
      prefix_(".hcashare-owned." + (owner.empty() ? "_" : PathAsFileName(owner)) + ".") {}

void OwnedFiles::SaveLedger() {
  if (written_.empty() && !pending_) {
    if (!ledger_.empty()) ::unlink((dir_ + "/" + ledger_).c_str());
    ledger_.clear();
    ledger_fd_.Reset();
    return;
  }
  if (!ledger_fd_.valid()) {
    std::random_device rd;
    char id[17];
    std::snprintf(id, sizeof id, "%08x%08x", rd(), rd());
    const std::string name = prefix_ + id;
    UniqueFd fd(::open((dir_ + "/" + name).c_str(),
                       O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600));
    if (!fd.valid() || ::flock(fd.get(), LOCK_EX | LOCK_NB) != 0) {
      LogWarn("cannot create the owned-files ledger",
              {{"file", dir_ + "/" + name}, {"error", std::strerror(errno)}});
      return;
    }
    ledger_ = name;
    ledger_fd_ = std::move(fd);
  }
  std::string text = std::string(kLedgerHeader) + "\n";
  for (const auto& [name, w] : written_) text += std::to_string(w.inode) + " " + name + "\n";
  if (pending_) text += std::to_string(pending_->first) + " " + pending_->second + "\n";
  // In place (the lock belongs to this inode): the new text first, then the length.
  if (::pwrite(ledger_fd_.get(), text.data(), text.size(), 0) !=
          static_cast<ssize_t>(text.size()) ||
      ::ftruncate(ledger_fd_.get(), static_cast<off_t>(text.size())) != 0) {
    LogWarn("cannot write the owned-files ledger",
            {{"file", dir_ + "/" + ledger_}, {"error", std::strerror(errno)}});
  }
}

std::vector<std::string> OwnedFiles::OtherLedgers() const {
  std::vector<std::string> ledgers;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir_, ec)) {
    const std::string name = e.path().filename().string();
    if (name.rfind(prefix_, 0) == 0 && name != ledger_) ledgers.push_back(name);
  }
  return ledgers;
}

bool OwnedFiles::ListedByOwner(const std::string& name, ino_t inode) const {
  for (const auto& ledger : OtherLedgers()) {
    UniqueFd fd(::open((dir_ + "/" + ledger).c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW));
    if (!fd.valid()) continue;
    for (const auto& [listed, file] : ReadLedger(fd.get())) {
      if (listed == inode && file == name) return true;
    }
  }
  return false;
}

std::vector<std::string> OwnedFiles::TakeOver(const std::string& ledger, int fd,
                                              const std::set<std::string>& keep) {
  std::vector<std::string> removed;
  for (const auto& [inode, file] : ReadLedger(fd)) {
    const std::string file_path = dir_ + "/" + file;
    if (InodeOfPath(file_path) != inode) continue;  // gone, or rewritten by another since
    if (keep.count(file)) {
      written_.try_emplace(file, Written{inode, ""});
    } else if (::unlink(file_path.c_str()) == 0) {
      LogInfo("removed a file an earlier run left", {{"file", file_path}});
      removed.push_back(file);
    }
  }
  ::unlink((dir_ + "/" + ledger).c_str());
  return removed;
}

std::vector<std::string> OwnedFiles::Reclaim(const std::set<std::string>& keep) {
  std::vector<std::string> removed;
  const std::vector<std::string> ledgers = OtherLedgers();
  for (const auto& name : ledgers) {
    UniqueFd fd(::open((dir_ + "/" + name).c_str(), O_RDWR | O_CLOEXEC | O_NOFOLLOW));
    // Locked: its instance is alive (a rollout overlap) and keeps its files.
    if (!fd.valid() || ::flock(fd.get(), LOCK_EX | LOCK_NB) != 0) continue;
    for (auto& file : TakeOver(name, fd.get(), keep)) removed.push_back(std::move(file));
  }
  if (!ledgers.empty()) SaveLedger();
  return removed;
}

void OwnedFiles::HandOver(const std::set<std::string>& keep) {
  std::vector<std::string> gone;
  for (const auto& [name, w] : written_) {
    if (!keep.count(name)) gone.push_back(name);
  }
  for (const auto& name : gone) Remove(name);
  // The ledger stays, unlocked, listing what is left: the successor's Reclaim takes it.
  ledger_fd_.Reset();
  ledger_.clear();
  written_.clear();
  foreign_.clear();
}

Result<std::vector<std::string>> OwnedFiles::RemoveEverything() {
  std::vector<std::pair<std::string, UniqueFd>> held;
  for (const auto& name : OtherLedgers()) {
    const std::string path = dir_ + "/" + name;
    UniqueFd fd(::open(path.c_str(), O_RDWR | O_CLOEXEC | O_NOFOLLOW));
    if (!fd.valid()) continue;  // gone meanwhile
    if (::flock(fd.get(), LOCK_EX | LOCK_NB) != 0) {
      return Status::FailedPrecondition(
          path +
          " is held by a running hcashare-device-plugin of this kubelet root; stop it "
          "(delete the DaemonSet and wait for its pods to end) first");
    }
    held.emplace_back(name, std::move(fd));
  }
  std::vector<std::string> removed;
  for (const auto& [name, fd] : held) {
    for (auto& file : TakeOver(name, fd.get(), {})) removed.push_back(std::move(file));
  }
  for (const auto& [name, w] : written_) removed.push_back(name);
  RemoveAll();
  return removed;
}

void OwnedFiles::Forget(const std::string& name) {
  foreign_.erase(name);
  if (written_.erase(name)) SaveLedger();
}

Status OwnedFiles::Write(const std::string& name, const std::string& content, bool* changed) {
  const std::string path = dir_ + "/" + name;
  if (changed != nullptr) *changed = false;
  auto it = written_.find(name);
  bool other = false;
  const ino_t on_disk = InodeOfPath(path, &other);
  const bool ours = it != written_.end() && on_disk == it->second.inode;
  if (ours && it->second.content == content) return Status::Ok();
  if (on_disk != 0 && HoldsContent(path, content)) {
    // Another instance (a rollout overlap) wrote this very content: adopt its file instead
    // of replacing it, so that the two never take turns rewriting it.
    written_[name] = Written{on_disk, content};
    foreign_.erase(name);
    SaveLedger();
    return Status::Ok();
  }
  if (other || (on_disk != 0 && !ours && !ListedByOwner(name, on_disk))) {
    foreign_.insert(name);
    return Status::AlreadyExists(
        path + " exists but was not written by this daemon (no ledger " + prefix_ +
        "* lists it, and it holds other content), so it is neither overwritten nor removed; "
        "if it is a stale copy, delete it and the daemon writes its own at the next publish");
  }
  std::error_code ec;
  std::filesystem::create_directories(dir_, ec);
  // Listed before the rename: another instance of ours never sees it as foreign.
  RETURN_IF_ERROR(WriteFileAtomically(path, content, 0644, [&](ino_t fresh) {
    pending_.emplace(fresh, name);
    SaveLedger();
    return Status::Ok();
  }));
  written_[name] = Written{InodeOfPath(path), content};
  pending_.reset();
  foreign_.erase(name);
  SaveLedger();
  if (changed != nullptr) *changed = true;
  return Status::Ok();
}

void OwnedFiles::Remove(const std::string& name) {
  foreign_.erase(name);
  auto it = written_.find(name);
  if (it == written_.end()) return;  // never ours: never touched
  const std::string path = dir_ + "/" + name;
  if (InodeOfPath(path) == it->second.inode) {
    ::unlink(path.c_str());
    LogInfo("removed file", {{"file", path}});
  }
  written_.erase(it);
  SaveLedger();
}

void OwnedFiles::RemoveAll() {
  std::vector<std::string> names;
  for (const auto& [name, w] : written_) names.push_back(name);
  for (const auto& n : names) Remove(n);
}

}  // namespace hcashare
