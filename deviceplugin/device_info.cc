#include "deviceplugin/device_info.h"

#include <filesystem>

#include "common/atomic_file.h"
#include "common/strings.h"
#include "interop/device_info_json.h"
#include "node/pool.h"

namespace hcashare::dp {
std::string DeviceInfoFileName(const config::ResourceConfig& rc, const std::string& id) {
  return ReplaceAny(rc.resource_prefix + "-" + rc.resource_name + "-" + id, "/", '-') +
         "-device.json";
}

std::string DeviceInfoJson(const node::PciFunction& fn) {
  return PciDeviceInfoJson(fn.address, node::PoolState::RdmaNamesOf({fn}),
                           fn.is_vf ? fn.pf_address : "");
}

Status WriteDeviceInfoFiles(const std::string& dir, const config::ResourceConfig& rc,
                            const std::vector<const node::PciFunction*>& fns) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Status::IoError("create " + dir + ": " + ec.message());
  for (const node::PciFunction* fn : fns) {
    // The device-info spec describes PCI devices (and vhost-user, memif, vDPA), not
    // auxiliary or virtual ones: an SF or rxe device gets no file; its env and char
    // devices still go to the pod.
    if (fn->is_sf || fn->is_virtual) continue;
    RETURN_IF_ERROR(
        WriteFileAtomically(dir + "/" + DeviceInfoFileName(rc, fn->address), DeviceInfoJson(*fn)));
  }
  return Status::Ok();
}

}  // namespace hcashare::dp
