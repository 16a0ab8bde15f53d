// OwnedFiles: files this process writes into a shared directory and removes again, but
// only while each is still the one it wrote (same inode): a file another instance has
// since rewritten is never deleted. Writes are atomic and skipped when the content is
// unchanged; a file that already holds the content (written by another instance) is
// adopted as is.
//
// Each instance lists the files it owns in its own ledger in the same directory,
// `.hcashare-owned.<owner>.<random>`, and holds an flock on it while it lives. A restart
// (also after a SIGKILL, which releases the lock) takes over the unlocked ledgers of its
// owner: it removes the files of resources that no longer exist and owns the others again.
// A ledger still locked (a rollout overlap) or of another owner (a daemon with another
// kubelet root) is never touched.
//
// A file at one of our names that is ours by none of these rules (not ours, not listed
// with its inode in a ledger of our owner, other content) is foreign: it is never
// overwritten or removed; Write refuses it with AlreadyExists. Not thread-safe.
#pragma once

#include <sys/types.h>

#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"
#include "common/unique_fd.h"

namespace hcashare {

class OwnedFiles {
 public:
  // Files go into `dir` (created on the first write). `owner` names this instance stably
  // across restarts, in one spelling (the daemon's canonical kubelet root).
  OwnedFiles(std::string dir, std::string owner);

  // Writes `content` to `dir/name` unless the file already holds it (then it is ours as
  // it is). Returns true in *changed when it wrote. AlreadyExists, naming the file, when a
  // foreign file holds the name: it is left as it is.
  Status Write(const std::string& name, const std::string& content, bool* changed = nullptr);
  // Removes `dir/name` if it is still ours; forgets it either way.
  void Remove(const std::string& name);
  // Removes every file still ours, and the ledger.
  void RemoveAll();
  // Stops owning `dir/name` without touching it (another instance has taken it over).
  void Forget(const std::string& name);
  // At start: takes over the ledgers of this owner that no live instance holds. Their
  // files not in `keep` are removed while still the file listed (same inode); those in
  // `keep` are ours again, to be rewritten or removed later. Returns the removed names.
  std::vector<std::string> Reclaim(const std::set<std::string>& keep);
  // At shutdown for a successor: removes our files not in `keep` and leaves the others,
  // listed in our ledger, for the next instance's Reclaim. Owns nothing afterwards.
  void HandOver(const std::set<std::string>& keep);
  // Uninstall: removes every file listed in this owner's ledgers (while still the inode
  // listed) and the ledgers. FailedPrecondition, naming the ledger, while an instance
  // holds one (nothing is removed then). Returns the removed names.
  Result<std::vector<std::string>> RemoveEverything();

  // The names Write refused because a foreign file holds them, until written or removed.
  const std::set<std::string>& foreign() const { return foreign_; }
  const std::string& dir() const { return dir_; }

 private:
  struct Written {
    ino_t inode = 0;
    std::string content;  // "" when reclaimed from a ledger (unknown)
  };
  // Rewrites our ledger from written_ (and pending_), creating and locking it first.
  // Failures are logged: the ledger only serves a later start's clean-up.
  void SaveLedger();
  // The ledgers of our owner in dir_, other than ours.
  std::vector<std::string> OtherLedgers() const;
  // Takes over the ledger `ledger`, open and locked at `fd`: its files in `keep` become
  // ours, the others are removed while still the inode listed; then the ledger goes.
  // Returns the removed names.
  std::vector<std::string> TakeOver(const std::string& ledger, int fd,
                                    const std::set<std::string>& keep);
  // True when a ledger of our owner lists `name` with `inode`.
  bool ListedByOwner(const std::string& name, ino_t inode) const;

  const std::string dir_;
  const std::string prefix_;                // ".hcashare-owned.<escaped owner>."
  std::string ledger_;                      // our ledger's name, once created
  UniqueFd ledger_fd_;                      // open and flock'ed while we live
  std::map<std::string, Written> written_;  // by name
  // A file being written: listed from before its rename until written_ has it.
  std::optional<std::pair<ino_t, std::string>> pending_;
  std::set<std::string> foreign_;
};

}  // namespace hcashare
