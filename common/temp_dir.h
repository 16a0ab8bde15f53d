// TempDir: a fresh directory under $TMPDIR (or /tmp), removed recursively on destruction.
#pragma once

#include <string>

namespace hcashare {

class TempDir {
 public:
  // Creates "<tmp>/<prefix>XXXXXX". path() is empty if creation failed.
  explicit TempDir(const std::string& prefix = "hcashare-");
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  // Keeps the directory after destruction (for debugging).
  void Keep() { keep_ = true; }

 private:
  std::string path_;
  bool keep_ = false;
};

}  // namespace hcashare
