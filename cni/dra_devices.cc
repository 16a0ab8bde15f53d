#include "cni/dra_devices.h"

#include <algorithm>

#include "common/log.h"
#include "common/strings.h"
#include "interop/dra_checkpoint.h"
#include "kubelet/podresources_devices.h"

namespace hcashare::cni {

std::vector<std::string> ResolveDraDevices(const std::string& driver,
                                           const DraDeviceResolver& resolve,
                                           DevicesByResource* granted) {
  std::vector<std::string> ours;
  for (auto it = granted->begin(); it != granted->end();) {
    if (it->first.rfind(kubelet::kDraKeyPrefix, 0) != 0) {
      ++it;
      continue;
    }
    if (it->first == kubelet::DraResourceKey(driver)) ours = std::move(it->second);
    it = granted->erase(it);
  }
  std::vector<std::string> unknown;
  for (const std::string& id : ours) {
    const size_t slash = id.find('/');
    const std::string pool = slash == std::string::npos ? "" : id.substr(0, slash);
    const std::string device = slash == std::string::npos ? id : id.substr(slash + 1);
    std::optional<DraDeviceInfo> info = resolve ? resolve(pool, device) : std::nullopt;
    if (!info || info->address.empty() || info->resource.empty()) {
      unknown.push_back(id);
      continue;
    }
    std::vector<std::string>& list = (*granted)[info->resource];
    if (std::find(list.begin(), list.end(), info->address) == list.end()) {
      list.push_back(info->address);
    }
  }
  return unknown;
}

Status ResolveDraDevicesFromCheckpoint(const std::string& driver,
                                       const std::string& checkpoint_path,
                                       DevicesByResource* granted) {
  bool any = false;
  for (const auto& [key, ids] : *granted) any = any || key.rfind(kubelet::kDraKeyPrefix, 0) == 0;
  if (!any) return Status::Ok();
  std::optional<dra::Checkpoint> checkpoint;
  if (granted->count(kubelet::DraResourceKey(driver)) != 0) {
    Result<dra::Checkpoint> loaded = dra::Checkpoint::Load(checkpoint_path);
    if (!loaded.ok()) {
      return Status(loaded.status().code(), "cannot read the DRA driver's checkpoint " +
                                                checkpoint_path + ": " + loaded.status().message());
    }
    checkpoint = std::move(loaded).value();
  }
  std::vector<std::string> unknown = ResolveDraDevices(
      driver,
      [&](const std::string& pool, const std::string& device) -> std::optional<DraDeviceInfo> {
        const dra::PreparedDevice* d = checkpoint ? checkpoint->FindDevice(pool, device) : nullptr;
        if (d == nullptr) return std::nullopt;
        return DraDeviceInfo{d->pci_address, d->resource};
      },
      granted);
  if (!unknown.empty()) {
    LogWarn("DRA devices of the pod that the driver's checkpoint does not name",
            {{"driver", driver}, {"devices", Join(unknown)}, {"checkpoint", checkpoint_path}});
  }
  return Status::Ok();
}

std::vector<PodClaimDevice> PodDraDevices(const std::string& driver,
                                          const dra::Checkpoint& checkpoint,
                                          const std::string& pod_namespace,
                                          const DevicesByResource& granted) {
  std::vector<PodClaimDevice> out;
  auto it = granted.find(kubelet::DraResourceKey(driver));
  if (it == granted.end()) return out;
  std::vector<std::string> unknown;
  for (const std::string& id : it->second) {
    const size_t slash = id.find('/');
    const std::string pool = slash == std::string::npos ? "" : id.substr(0, slash);
    const std::string device = slash == std::string::npos ? id : id.substr(slash + 1);
    const dra::PreparedDevice* found = nullptr;
    const dra::PreparedClaim* in = nullptr;
    for (const auto& [uid, claim] : checkpoint.claims()) {
      if (claim.namespace_name != pod_namespace) continue;
      for (const auto& d : claim.devices) {
        if (d.pool == pool && d.device == device) found = &d;
      }
      if (found != nullptr) {
        in = &claim;
        break;
      }
    }
    if (found == nullptr) {
      unknown.push_back(id);
      continue;
    }
    const bool dup = std::any_of(out.begin(), out.end(), [&](const PodClaimDevice& d) {
      return d.device.pci_address == found->pci_address;
    });
    if (!dup) out.push_back({in->uid, in->namespace_name, in->name, *found});
  }
  if (!unknown.empty()) {
    LogWarn("DRA devices of the pod that the driver's checkpoint does not name",
            {{"driver", driver}, {"devices", Join(unknown)}, {"checkpoint", checkpoint.path()}});
  }
  return out;
}

bool HasClaimsIn(const dra::Checkpoint& checkpoint, const std::string& ns) {
  for (const auto& [uid, claim] : checkpoint.claims()) {
    if (claim.namespace_name == ns) return true;
  }
  return false;
}

}  // namespace hcashare::cni
