#include "hostfacts/snapshot_host.h"

#include <algorithm>

namespace hcashare::hostfacts {
namespace {

constexpr const char* kDevInfiniband = "/dev/infiniband/";

class SnapshotHost final : public Host {
 public:
  explicit SnapshotHost(const HostSnapshot& snap) : snap_(snap) {}

  Result<std::string> ReadFile(const std::string& path) const override { return Absent(path); }
  Result<std::string> ReadLink(const std::string& path) const override { return Absent(path); }
  Result<std::vector<std::string>> ListDir(const std::string& path) const override {
    return Absent(path);
  }
  Result<FileInfo> Stat(const std::string& path) const override {
    const std::string prefix = kDevInfiniband;
    if (path.rfind(prefix, 0) == 0 &&
        std::binary_search(snap_.dev_infiniband.begin(), snap_.dev_infiniband.end(),
                           path.substr(prefix.size()))) {
      FileInfo info;
      info.type = FileInfo::Type::kCharDevice;
      return info;
    }
    return Absent(path);
  }
  Result<std::string> RealPath(const std::string& path) const override { return Absent(path); }
  std::string Resolve(const std::string& path) const override { return path; }

 private:
  static Status Absent(const std::string& path) {
    return Status::NotFound(path + " is not in the snapshot");
  }

  const HostSnapshot& snap_;
};

}  // namespace

std::unique_ptr<Host> NewSnapshotHost(const HostSnapshot& snap) {
  return std::make_unique<SnapshotHost>(snap);
}

}  // namespace hcashare::hostfacts
