#include "tests/support/file_backends.h"

#include <sys/stat.h>

#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "cni/state.h"
#include "common/atomic_file.h"
#include "tests/support/vf_driver_model.h"

namespace hcashare::testing {
namespace {

using json = nlohmann::json;

class FileVfOps final : public VfOps {
 public:
  explicit FileVfOps(std::string path) : path_(std::move(path)) {}

  Result<VfSettings> Get(const std::string& pf, int vf) override {
    ASSIGN_OR_RETURN(json table, LoadTestTable(path_));
    const std::string key = pf + "/" + std::to_string(vf);
    if (!table.contains(key)) {
      return Status::NotFound("PF " + pf + " reports no VF " + std::to_string(vf));
    }
    return cni::VfSettingsFromJson(table[key]);
  }

  Status Set(const std::string& pf, int vf, const VfSettings& s) override {
    ASSIGN_OR_RETURN(json table, LoadTestTable(path_));
    const std::string key = pf + "/" + std::to_string(vf);
    if (!table.contains(key)) {
      return Status::NotFound("PF " + pf + " reports no VF " + std::to_string(vf));
    }
    table[key].update(cni::VfSettingsToJson(s));
    return WriteFileAtomically(path_, table.dump(1), 0644);
  }

 private:
  std::string path_;
};

uint64_t InodeOf(const char* path) {
  struct stat st {};
  return ::stat(path, &st) == 0 ? static_cast<uint64_t>(st.st_ino) : 0;
}

class FileRdmaSystem final : public RdmaSystem {
 public:
  explicit FileRdmaSystem(std::string path) : path_(std::move(path)) {}

  Result<RdmaNetnsMode> GetNetnsMode() override {
    ASSIGN_OR_RETURN(json j, LoadTestTable(path_));
    return j.value("mode", "shared") == "exclusive" ? RdmaNetnsMode::kExclusive
                                                    : RdmaNetnsMode::kShared;
  }
  Result<std::vector<RdmaDeviceRef>> ListDevices() override {
    ASSIGN_OR_RETURN(json j, LoadTestTable(path_));
    const uint64_t here = InodeOf("/proc/thread-self/ns/net");
    std::vector<RdmaDeviceRef> out;
    uint32_t index = 0;
    const json devices = j.value("devices", json::object());
    for (const auto& [name, ns] : devices.items()) {
      ++index;
      if (ns.get<uint64_t>() == here) out.push_back({index, name});
    }
    return out;
  }
  Status MoveToNetns(const std::string& name, int netns_fd) override {
    ASSIGN_OR_RETURN(json j, LoadTestTable(path_));
    const uint64_t here = InodeOf("/proc/thread-self/ns/net");
    json& devices = j["devices"];
    if (!devices.contains(name) || devices[name].get<uint64_t>() != here) {
      return Status::NotFound("no RDMA device " + name + " in this namespace");
    }
    struct stat target {};
    if (::fstat(netns_fd, &target) != 0) return Status::InvalidArgument("bad netns fd");
    devices[name] = static_cast<uint64_t>(target.st_ino);
    return WriteFileAtomically(path_, j.dump(1), 0644);
  }

 private:
  std::string path_;
};

}  // namespace

std::unique_ptr<VfOps> NewFileVfOps(std::string path) {
  return std::make_unique<FileVfOps>(std::move(path));
}
std::unique_ptr<RdmaSystem> NewFileRdmaSystem(std::string path) {
  return std::make_unique<FileRdmaSystem>(std::move(path));
}

}  // namespace hcashare::testing
