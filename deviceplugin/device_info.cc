#include "deviceplugin/device_info.h"

#include <filesystem>

#include <nlohmann/json.hpp>

#include "common/atomic_file.h"
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
    RETURN_IF_ERROR(
        WriteFileAtomically(dir + "/" + DeviceInfoFileName(rc, fn->address), DeviceInfoJson(*fn)));
  }
  return Status::Ok();
}

}  // namespace hcashare::dp
