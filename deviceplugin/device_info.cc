#include "deviceplugin/device_info.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "common/strings.h"

namespace hcashare::dp {
namespace {

std::string Dashed(std::string s) {
  for (auto& c : s) {
    if (c == '/') c = '-';
  }
  return s;
}

}  // namespace

std::string DeviceInfoFileName(const config::ResourceConfig& rc, const std::string& id) {
  return Dashed(rc.resource_prefix) + "-" + Dashed(rc.resource_name) + "-" + Dashed(id) +
         "-device.json";
}

std::string DeviceInfoJson(const PciFunction& fn) {
  nlohmann::ordered_json pci = {{"pci-address", fn.address}};
  std::vector<std::string> names;
  for (const auto& r : fn.rdma) names.push_back(r.name);
  if (!names.empty()) pci["rdma-device"] = Join(names);
  if (fn.is_vf && !fn.pf_address.empty()) pci["pf-pci-address"] = fn.pf_address;
  nlohmann::ordered_json doc = {{"type", "pci"}, {"version", "1.1.0"}, {"pci", pci}};
  return doc.dump();
}

Status WriteDeviceInfoFiles(const std::string& dir, const config::ResourceConfig& rc,
                            const std::vector<const PciFunction*>& fns) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Status::IoError("create " + dir + ": " + ec.message());
  for (const PciFunction* fn : fns) {
    const std::string path = dir + "/" + DeviceInfoFileName(rc, fn->address);
    const std::string tmp = path + ".tmp." + std::to_string(::getpid());
    const std::string body = DeviceInfoJson(*fn);
    FILE* f = std::fopen(tmp.c_str(), "w");
    if (f == nullptr) return ErrnoStatus(errno, "write " + tmp);
    const bool ok = std::fwrite(body.data(), 1, body.size(), f) == body.size();
    const bool closed = std::fclose(f) == 0;
    if (!ok || !closed || std::rename(tmp.c_str(), path.c_str()) != 0) {
      int err = errno;
      std::remove(tmp.c_str());
      return ErrnoStatus(err ? err : EIO, "write " + path);
    }
  }
  return Status::Ok();
}

}  // namespace hcashare::dp
