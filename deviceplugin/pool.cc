#include "deviceplugin/pool.h"

#include <algorithm>
#include <set>

#include "common/strings.h"
#include "deviceplugin/selectors.h"

namespace hcashare::dp {

std::vector<std::string> PoolState::CharDevices() const {
  std::set<std::string> all;
  for (const auto& h : hcas) {
    for (const auto& r : h.rdma) all.insert(r.char_devices.begin(), r.char_devices.end());
  }
  all.erase(kRdmaCmPath);
  std::vector<std::string> out(all.begin(), all.end());
  if (!hcas.empty()) out.push_back(kRdmaCmPath);
  return out;
}

std::vector<std::string> PoolState::RdmaNames() const {
  std::vector<std::string> names;
  for (const auto& h : hcas) {
    for (const auto& r : h.rdma) names.push_back(r.name);
  }
  return names;
}

PoolState BuildPool(const config::ResourceConfig& rc, const Inventory& inv,
                    const std::string& blocked_reason) {
  PoolState pool;
  pool.blocked_reason = blocked_reason;
  if (!blocked_reason.empty()) return pool;
  for (const auto& fn : inv.functions) {
    if (Matches(rc.selectors, fn)) pool.hcas.push_back(fn);
  }
  return pool;
}

std::vector<v1beta1::Device> DeviceList(const config::ResourceConfig& rc, const PoolState& pool) {
  std::vector<v1beta1::Device> devices;
  if (!pool.blocked_reason.empty()) return devices;
  devices.reserve(static_cast<size_t>(rc.rdma_hca_max));
  const char* health = pool.Usable() ? "Healthy" : "Unhealthy";
  for (int i = 0; i < rc.rdma_hca_max; ++i) {
    v1beta1::Device d;
    d.set_id(std::to_string(i));
    d.set_health(health);
    devices.push_back(std::move(d));
  }
  return devices;
}

bool IsValidDeviceId(const std::string& id, int rdma_hca_max) {
  if (id.empty() || id.size() > 9) return false;
  if (id.size() > 1 && id[0] == '0') return false;
  for (char c : id) {
    if (c < '0' || c > '9') return false;
  }
  return std::stoi(id) < rdma_hca_max;
}

Result<v1beta1::AllocateResponse> BuildAllocateResponse(const config::ResourceConfig& rc,
                                                        const PoolState& pool,
                                                        const v1beta1::AllocateRequest& req,
                                                        const Host& host) {
  if (req.container_requests_size() == 0) {
    return Status::InvalidArgument("allocate request has no container requests");
  }
  for (const auto& creq : req.container_requests()) {
    if (creq.devices_ids_size() == 0) {
      return Status::InvalidArgument("container request has no device IDs");
    }
    for (const auto& id : creq.devices_ids()) {
      if (!IsValidDeviceId(id, rc.rdma_hca_max)) {
        return Status::InvalidArgument("unknown device ID \"" + id + "\" for resource " +
                                       rc.FullName() + " (valid IDs are 0.." +
                                       std::to_string(rc.rdma_hca_max - 1) + ")");
      }
    }
  }
  if (!pool.Usable()) {
    return Status::FailedPrecondition(
        "resource " + rc.FullName() + " has no usable RDMA HCA" +
        (pool.blocked_reason.empty() ? std::string() : ": " + pool.blocked_reason));
  }
  v1beta1::ContainerAllocateResponse one;
  for (const auto& path : pool.CharDevices()) {
    if (!host.Exists(path)) {
      return Status::FailedPrecondition("device node " + path + " of resource " + rc.FullName() +
                                        " vanished since the last scan");
    }
    v1beta1::DeviceSpec* spec = one.add_devices();
    spec->set_container_path(path);
    spec->set_host_path(path);
    spec->set_permissions("rw");
  }
  (*one.mutable_envs())[kRdmaDevicesEnv] = Join(pool.RdmaNames());

  v1beta1::AllocateResponse resp;
  for (int i = 0; i < req.container_requests_size(); ++i) *resp.add_container_responses() = one;
  return resp;
}

std::vector<std::string> PreferredIds(const std::vector<std::string>& available,
                                      const std::vector<std::string>& must_include, int size,
                                      int rdma_hca_max) {
  std::vector<std::string> out;
  std::set<std::string> taken;
  for (const auto& id : must_include) {
    if (IsValidDeviceId(id, rdma_hca_max) && taken.insert(id).second) out.push_back(id);
  }
  std::vector<int> rest;
  for (const auto& id : available) {
    if (IsValidDeviceId(id, rdma_hca_max) && !taken.count(id)) rest.push_back(std::stoi(id));
  }
  std::sort(rest.begin(), rest.end());
  rest.erase(std::unique(rest.begin(), rest.end()), rest.end());
  for (int id : rest) {
    if (static_cast<int>(out.size()) >= size) break;
    out.push_back(std::to_string(id));
  }
  return out;
}

}  // namespace hcashare::dp
