#include "deviceplugin/allocation.h"

#include <algorithm>
#include <functional>
#include <map>
#include <optional>
#include <set>

#include <nlohmann/json.hpp>

#include "common/env_names.h"
#include "common/strings.h"
#include "hostfacts/live.h"
#include "json/dump.h"

namespace hcashare::dp {
namespace {

using config::PoolMode;

// TopologyInfo for `nodes`, or nothing when a node is unknown, there are none, or the
// resource opts out.
void SetTopology(const config::ResourceConfig& rc, const std::vector<int>& nodes,
                 v1beta1::Device* d) {
  if (rc.exclude_topology || nodes.empty()) return;
  if (std::any_of(nodes.begin(), nodes.end(), [](int n) { return n < 0; })) return;
  for (int n : nodes) d->mutable_topology()->add_nodes()->set_id(n);
}

// The NUMA node of ID `id` for preference packing (kNoNode when it has none).
int NodeOf(const config::ResourceConfig& rc, const node::PoolState& pool, const std::string& id) {
  if (rc.mode == PoolMode::kExclusive) {
    const node::PciFunction* fn = pool.Find(id);
    return fn == nullptr ? node::kNoNode : fn->numa_node;
  }
  return node::NodeOfSharedId(rc, pool, std::stoi(id));
}

bool IsOurs(const config::ResourceConfig& rc, const node::PoolState& pool, const std::string& id) {
  return rc.mode == PoolMode::kExclusive ? pool.Find(id) != nullptr
                                         : IsValidDeviceId(id, rc.rdma_hca_max);
}

// Orders IDs numerically when both are numbers, else lexically (PCI addresses).
bool IdLess(const std::string& a, const std::string& b) {
  if (a.size() != b.size() && std::all_of(a.begin(), a.end(), ::isdigit) &&
      std::all_of(b.begin(), b.end(), ::isdigit)) {
    return a.size() < b.size();
  }
  return a < b;
}

// The functions an allocation of `ids` grants.
std::vector<node::PciFunction> Granted(const config::ResourceConfig& rc,
                                       const node::PoolState& pool,
                                       const std::vector<std::string>& ids) {
  if (rc.mode == PoolMode::kExclusive) {
    std::vector<node::PciFunction> out;
    for (const auto& id : ids) out.push_back(*pool.Find(id));
    return out;
  }
  if (!rc.topology_aware) return pool.hcas;
  std::set<int> nodes;
  for (const auto& id : ids) nodes.insert(node::NodeOfSharedId(rc, pool, std::stoi(id)));
  std::vector<node::PciFunction> out;
  for (const auto& h : pool.hcas) {
    if (nodes.count(h.numa_node < 0 ? -1 : h.numa_node)) out.push_back(h);
  }
  return out;
}

// The first device node of `fns` (rdma_cm included) that no longer exists, or "".
std::string FirstVanishedNode(const std::vector<node::PciFunction>& fns, const Host& host) {
  const hostfacts::LiveFacts live(host);
  for (const auto& path : node::PoolState::CharDevicesOf(fns)) {
    if (!live.CharDevicePresent(path)) return path;
  }
  return "";
}

// What a shared pool hands out of `granted`: the HCAs whose device nodes all still exist,
// and of those only the healthy ones while one is healthy. `gone` gets the first vanished
// node, for the error when none is left.
std::vector<node::PciFunction> PresentAndHealthy(std::vector<node::PciFunction> granted,
                                                 const Host& host, std::string* gone) {
  auto vanished = [&](const node::PciFunction& h) {
    const std::string node = FirstVanishedNode({h}, host);
    if (gone->empty()) *gone = node;
    return !node.empty();
  };
  granted.erase(std::remove_if(granted.begin(), granted.end(), vanished), granted.end());
  const auto healthy = [](const node::PciFunction& h) { return h.healthy; };
  if (std::any_of(granted.begin(), granted.end(), healthy)) {
    granted.erase(std::remove_if(granted.begin(), granted.end(), std::not_fn(healthy)),
                  granted.end());
  }
  return granted;
}

// NCCL_IB_HCA for `granted`: NcclIbHcaExact, pool order within a node.
std::string NcclIbHca(const std::vector<node::PciFunction>& granted) {
  std::vector<NcclHca> hcas;
  for (const auto& f : granted) hcas.push_back({f.numa_node, node::PoolState::RdmaNamesOf({f})});
  return NcclIbHcaExact(std::move(hcas));
}

// PCIDEVICE_..._INFO: per ID, the generic ID and its RDMA details (SR-IOV DP's shape).
std::string InfoJson(const std::vector<std::string>& ids,
                     const std::vector<node::PciFunction>& fns) {
  nlohmann::ordered_json info = nlohmann::ordered_json::object();
  for (size_t i = 0; i < ids.size(); ++i) {
    nlohmann::ordered_json rdma;
    std::vector<std::string> uverbs, umad, issm;
    for (const auto& r : fns[i].rdma) {
      for (const auto& cd : r.char_devices) {
        const std::string base = BaseName(cd);
        if (base.rfind("uverbs", 0) == 0) uverbs.push_back(cd);
        if (base.rfind("umad", 0) == 0) umad.push_back(cd);
        if (base.rfind("issm", 0) == 0) issm.push_back(cd);
      }
    }
    rdma["rdma_dev"] = Join(node::PoolState::RdmaNamesOf({fns[i]}));
    rdma["uverbs"] = Join(uverbs);
    rdma["rdma_cm"] = hostfacts::kRdmaCmPath;
    rdma["umad"] = Join(umad);
    rdma["issm"] = Join(issm);
    info[ids[i]] = {{"generic", {{"deviceID", ids[i]}}}, {"rdma", rdma}};
  }
  return DumpJson(info);
}

// Validates one container request's IDs.
Status CheckIds(const config::ResourceConfig& rc, const node::PoolState& pool,
                const v1beta1::ContainerAllocateRequest& creq) {
  if (creq.devices_ids_size() == 0) {
    return Status::InvalidArgument("container request has no device IDs");
  }
  std::set<std::string> seen;
  for (const auto& id : creq.devices_ids()) {
    // The kubelet never repeats one; a repeated exclusive ID would name its device twice.
    if (!seen.insert(id).second) {
      return Status::InvalidArgument("device ID \"" + id + "\" appears twice in one container " +
                                     "request for resource " + rc.FullName());
    }
    if (IsOurs(rc, pool, id)) continue;
    std::string valid = rc.mode == PoolMode::kExclusive
                            ? "PCI addresses of this resource's devices"
                            : "0.." + std::to_string(rc.rdma_hca_max - 1);
    return Status::InvalidArgument("unknown device ID \"" + id + "\" for resource " +
                                   rc.FullName() + " (valid IDs are " + valid + ")");
  }
  return Status::Ok();
}

}  // namespace

std::vector<std::string> RdmaDevicesEnvNames(const config::ResourceConfig& rc) {
  std::vector<std::string> names = {RdmaDevicesEnvName(rc.FullName())};
  if (rc.set_rdma_devices_env) names.emplace_back(kRdmaDevicesEnv);
  return names;
}

std::string PciDeviceEnvName(const config::ResourceConfig& rc) {
  std::string name = ReplaceAny("PCIDEVICE_" + rc.FullName(), "./", '_');
  for (auto& c : name) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return name;
}

std::vector<v1beta1::Device> DeviceList(const config::ResourceConfig& rc,
                                        const node::PoolState& pool) {
  v1beta1::ListAndWatchResponse list;
  AppendDeviceList(rc, pool, &list);
  return std::vector<v1beta1::Device>(list.devices().begin(), list.devices().end());
}

void AppendDeviceList(const config::ResourceConfig& rc, const node::PoolState& pool,
                      v1beta1::ListAndWatchResponse* out) {
  if (!pool.blocked_reason.empty()) return;
  if (rc.mode == PoolMode::kExclusive) {
    for (const auto& h : pool.hcas) {
      v1beta1::Device* d = out->add_devices();
      d->set_id(h.address);
      // A device in use inside a pod cannot be checked from the host; it stays Healthy.
      d->set_health(h.healthy || pool.in_use.count(h.address) ? kHealthy : kUnhealthy);
      SetTopology(rc, {h.numa_node}, d);
    }
    return;
  }
  out->mutable_devices()->Reserve(rc.rdma_hca_max);
  // An ID is Healthy while at least one HCA it grants is healthy.
  std::set<int> healthy_nodes;
  for (const auto& h : pool.hcas) {
    if (h.healthy) healthy_nodes.insert(h.numa_node < 0 ? -1 : h.numa_node);
  }
  const std::vector<int> pool_nodes = node::NumaNodesOf(pool.hcas);
  for (int i = 0; i < rc.rdma_hca_max; ++i) {
    v1beta1::Device* d = out->add_devices();
    d->set_id(std::to_string(i));
    bool healthy = !healthy_nodes.empty();
    if (rc.topology_aware) {
      int node = node::NodeOfSharedId(rc, pool, i);
      if (node != node::kNoNode) SetTopology(rc, {node}, d);
      healthy = healthy_nodes.count(node) > 0;
    } else {
      SetTopology(rc, pool_nodes, d);
    }
    d->set_health(healthy ? kHealthy : kUnhealthy);
  }
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
                                                        const node::PoolState& pool,
                                                        const v1beta1::AllocateRequest& req,
                                                        const Host& host) {
  if (req.container_requests_size() == 0) {
    return Status::InvalidArgument("allocate request has no container requests");
  }
  for (const auto& creq : req.container_requests()) RETURN_IF_ERROR(CheckIds(rc, pool, creq));
  if (!pool.Usable()) {
    return Status::FailedPrecondition(
        "resource " + rc.FullName() + " has no usable RDMA HCA" +
        (pool.blocked_reason.empty() ? std::string() : ": " + pool.blocked_reason));
  }
  v1beta1::AllocateResponse resp;
  for (const auto& creq : req.container_requests()) {
    const std::vector<std::string> ids(creq.devices_ids().begin(), creq.devices_ids().end());
    std::vector<node::PciFunction> granted = Granted(rc, pool, ids);
    if (granted.empty()) {
      return Status::FailedPrecondition("no HCA of " + rc.FullName() + " serves the granted IDs");
    }
    // A shared pool leaves out what vanished or is unhealthy; an exclusive grant is exactly
    // the devices asked for, so one vanished node fails it.
    std::string gone;
    if (rc.mode == PoolMode::kShared) {
      granted = PresentAndHealthy(std::move(granted), host, &gone);
    } else {
      gone = FirstVanishedNode(granted, host);
    }
    if (granted.empty() || (rc.mode == PoolMode::kExclusive && !gone.empty())) {
      return Status::FailedPrecondition("device node " + gone + " of resource " + rc.FullName() +
                                        " vanished since the last scan");
    }
    auto* out = resp.add_container_responses();
    for (const auto& path : node::PoolState::CharDevicesOf(granted)) {
      v1beta1::DeviceSpec* spec = out->add_devices();
      spec->set_container_path(path);
      spec->set_host_path(path);
      spec->set_permissions("rw");
    }
    for (const auto& name : RdmaDevicesEnvNames(rc)) {
      (*out->mutable_envs())[name] = Join(node::PoolState::RdmaNamesOf(granted));
    }
    if (rc.set_nccl_ib_hca) (*out->mutable_envs())[kNcclIbHcaEnv] = NcclIbHca(granted);
    if (rc.mode == PoolMode::kExclusive) {
      (*out->mutable_envs())[PciDeviceEnvName(rc)] = Join(ids);
      (*out->mutable_envs())[PciDeviceEnvName(rc) + "_INFO"] = InfoJson(ids, granted);
    }
  }
  return resp;
}

std::vector<std::string> PreferredIds(const config::ResourceConfig& rc, const node::PoolState& pool,
                                      const std::vector<std::string>& available,
                                      const std::vector<std::string>& must_include, int size) {
  std::vector<std::string> out;
  std::set<std::string> taken;
  std::set<int> used_nodes;
  // must_include is a subset of available (the kubelet's devices already chosen); an ID
  // outside it is not offered back.
  const std::set<std::string> offered(available.begin(), available.end());
  for (const auto& id : must_include) {
    if (offered.count(id) != 0 && IsOurs(rc, pool, id) && taken.insert(id).second) {
      out.push_back(id);
      used_nodes.insert(NodeOf(rc, pool, id));
    }
  }
  std::map<int, std::vector<std::string>> by_node;
  for (const auto& id : available) {
    if (IsOurs(rc, pool, id) && taken.insert(id).second)
      by_node[NodeOf(rc, pool, id)].push_back(id);
  }
  for (auto& [node, ids] : by_node) std::sort(ids.begin(), ids.end(), IdLess);
  auto take = [&](int node) {
    auto& ids = by_node[node];
    size_t n =
        std::min(ids.size(), static_cast<size_t>(std::max(0, size - static_cast<int>(out.size()))));
    out.insert(out.end(), ids.begin(), ids.begin() + static_cast<long>(n));
    ids.erase(ids.begin(), ids.begin() + static_cast<long>(n));
  };
  for (int node : used_nodes) take(node);
  while (static_cast<int>(out.size()) < size) {
    const size_t need = static_cast<size_t>(size) - out.size();
    std::optional<int> best;
    size_t best_count = 0;
    bool best_fits = false;
    for (const auto& [node, ids] : by_node) {
      if (ids.empty()) continue;
      const bool fits = ids.size() >= need;
      // Prefer a node that fits the rest (the smallest such), else the largest node.
      bool better = !best || (fits && !best_fits) ||
                    (fits && best_fits && ids.size() < best_count) ||
                    (!fits && !best_fits && ids.size() > best_count);
      if (better) {
        best = node;
        best_count = ids.size();
        best_fits = fits;
      }
    }
    if (!best) break;
    take(*best);
  }
  return out;
}

std::vector<std::string> PreferredIds(const std::vector<std::string>& available,
                                      const std::vector<std::string>& must_include, int size,
                                      int rdma_hca_max) {
  config::ResourceConfig rc;
  rc.rdma_hca_max = rdma_hca_max;
  return PreferredIds(rc, node::PoolState{}, available, must_include, size);
}

}  // namespace hcashare::dp
