#include "deviceplugin/cdi.h"

#include <set>

#include <nlohmann/json.hpp>

#include "common/log.h"
#include "common/strings.h"
#include "deviceplugin/allocation.h"

namespace hcashare::dp {
namespace {

std::string NodeDeviceName(int node) {
  return node < 0 ? "numa-unknown" : "numa" + std::to_string(node);
}

// One CDI device of `rc`: the char devices of `fns` and the env naming their RDMA devices
// (the variables Allocate sets).
nlohmann::ordered_json CdiDevice(const config::ResourceConfig& rc, const std::string& name,
                                 const std::vector<PciFunction>& fns) {
  nlohmann::ordered_json nodes = nlohmann::json::array();
  for (const auto& path : PoolState::CharDevicesOf(fns)) {
    nodes.push_back({{"path", path}, {"hostPath", path}, {"permissions", "rw"}});
  }
  nlohmann::ordered_json env = nlohmann::json::array();
  for (const auto& var : RdmaDevicesEnvNames(rc)) {
    env.push_back(var + "=" + Join(PoolState::RdmaNamesOf(fns)));
  }
  return {{"name", name}, {"containerEdits", {{"deviceNodes", nodes}, {"env", env}}}};
}

}  // namespace

std::string CdiKind(const config::ResourceConfig& rc) {
  return rc.cdi_kind.empty() ? rc.FullName() : rc.cdi_kind;
}

std::string CdiAnnotationKey(const config::ResourceConfig& rc) {
  return "cdi.k8s.io/hcashare_" + ReplaceAny(rc.resource_prefix, "/.", '_') + "_" +
         rc.resource_name;
}

std::string CdiSpecFileName(const config::ResourceConfig& rc) {
  return "hcashare-" + ReplaceAny(rc.resource_prefix, "/.", '_') + "_" + rc.resource_name + ".json";
}

std::string CdiSpecJson(const config::ResourceConfig& rc, const PoolState& pool) {
  nlohmann::ordered_json devices = nlohmann::json::array();
  if (rc.mode == config::PoolMode::kExclusive) {
    for (const auto& h : pool.hcas) devices.push_back(CdiDevice(rc, h.address, {h}));
  } else if (rc.topology_aware) {
    for (int node : NumaNodesOf(pool.hcas)) {
      std::vector<PciFunction> local;
      for (const auto& h : pool.hcas) {
        if ((h.numa_node < 0 ? -1 : h.numa_node) == node) local.push_back(h);
      }
      devices.push_back(CdiDevice(rc, NodeDeviceName(node), local));
    }
  } else {
    devices.push_back(CdiDevice(rc, "all", pool.hcas));
  }
  nlohmann::ordered_json spec = {
      {"cdiVersion", "0.5.0"}, {"kind", CdiKind(rc)}, {"devices", devices}};
  return spec.dump(2) + "\n";
}

std::vector<std::string> CdiDeviceNames(const config::ResourceConfig& rc, const PoolState& pool,
                                        const std::vector<std::string>& ids) {
  const std::string kind = CdiKind(rc) + "=";
  std::vector<std::string> names;
  if (rc.mode == config::PoolMode::kExclusive) {
    for (const auto& id : ids) names.push_back(kind + id);
  } else if (rc.topology_aware) {
    std::set<int> nodes;
    for (const auto& id : ids) nodes.insert(NodeOfSharedId(rc, pool, std::stoi(id)));
    for (int node : nodes) names.push_back(kind + NodeDeviceName(node));
  } else {
    names.push_back(kind + "all");
  }
  return names;
}

void ApplyCdi(const config::ResourceConfig& rc, const PoolState& pool,
              const v1beta1::AllocateRequest& req, v1beta1::AllocateResponse* resp) {
  for (int i = 0; i < resp->container_responses_size(); ++i) {
    const auto& creq = req.container_requests(i);
    const std::vector<std::string> ids(creq.devices_ids().begin(), creq.devices_ids().end());
    auto* c = resp->mutable_container_responses(i);
    c->clear_devices();
    const std::vector<std::string> names = CdiDeviceNames(rc, pool, ids);
    for (const auto& n : names) c->add_cdi_devices()->set_name(n);
    (*c->mutable_annotations())[CdiAnnotationKey(rc)] = Join(names);
  }
}

Status CdiSpecWriter::Write(const config::ResourceConfig& rc, const PoolState& pool) {
  if (!pool.Usable()) {
    files_.Remove(CdiSpecFileName(rc));
    return Status::Ok();
  }
  bool changed = false;
  RETURN_IF_ERROR(files_.Write(CdiSpecFileName(rc), CdiSpecJson(rc, pool), &changed));
  if (changed) {
    LogInfo("CDI spec written",
            {{"resource", rc.FullName()}, {"file", files_.dir() + "/" + CdiSpecFileName(rc)}});
  }
  return Status::Ok();
}

void CdiSpecWriter::Remove(const config::ResourceConfig& rc) { files_.Remove(CdiSpecFileName(rc)); }

void CdiSpecWriter::RemoveAll() { files_.RemoveAll(); }

void CdiSpecWriter::Reclaim(const std::vector<config::ResourceConfig>& resources) {
  std::set<std::string> keep;
  for (const auto& rc : resources) keep.insert(CdiSpecFileName(rc));
  files_.Reclaim(keep);
}

void CdiSpecWriter::Disown(const config::ResourceConfig& rc) { files_.Forget(CdiSpecFileName(rc)); }

}  // namespace hcashare::dp
