#include "deviceplugin/cdi.h"

#include <cstdint>
#include <cstdio>
#include <set>

#include <nlohmann/json.hpp>

#include "common/host.h"
#include "common/log.h"
#include "common/strings.h"
#include "deviceplugin/allocation.h"
#include "json/dump.h"

namespace hcashare::dp {
namespace {

std::string NodeDeviceName(int node) {
  return node < 0 ? "numa-unknown" : "numa" + std::to_string(node);
}

// A device name of this daemon: `base`, with the instance tag when there is one.
std::string Tagged(const std::string& base, const std::string& tag) {
  return tag.empty() ? base : base + "." + tag;
}

// One CDI device of `rc`: the char devices of `fns` and the env naming their RDMA devices
// (the variables Allocate sets).
nlohmann::ordered_json CdiDevice(const config::ResourceConfig& rc, const std::string& name,
                                 const std::vector<node::PciFunction>& fns) {
  std::vector<std::string> env;
  for (const auto& var : RdmaDevicesEnvNames(rc)) {
    env.push_back(var + "=" + Join(node::PoolState::RdmaNamesOf(fns)));
  }
  return node::CdiDeviceJson(name, node::PoolState::CharDevicesOf(fns), env);
}

}  // namespace

std::string CdiInstanceTag(const std::string& kubelet_root) {
  const std::string root = CanonicalPath(kubelet_root);
  if (root == CanonicalPath("/var/lib/kubelet")) return "";
  uint32_t hash = 2166136261u;  // FNV-1a: the same on every build and platform
  for (unsigned char c : root) hash = (hash ^ c) * 16777619u;
  char tag[10];
  std::snprintf(tag, sizeof tag, "k%08x", hash);
  return tag;
}

std::string CdiKind(const config::ResourceConfig& rc) {
  return rc.cdi_kind.empty() ? rc.FullName() : rc.cdi_kind;
}

std::string CdiAnnotationKey(const config::ResourceConfig& rc) {
  return "cdi.k8s.io/hcashare_" + ReplaceAny(rc.resource_prefix, "/.", '_') + "_" +
         rc.resource_name;
}

std::string CdiSpecFileName(const config::ResourceConfig& rc, const std::string& tag) {
  // '.' in the prefix and name become '_': a '.' before ".json" is only ever the tag's.
  return "hcashare-" + ReplaceAny(rc.resource_prefix, "/.", '_') + "_" +
         ReplaceAny(rc.resource_name, ".", '_') + (tag.empty() ? "" : "." + tag) + ".json";
}

std::string CdiSpecJson(const config::ResourceConfig& rc, const node::PoolState& pool,
                        const std::string& tag) {
  nlohmann::ordered_json devices = nlohmann::json::array();
  if (rc.mode == config::PoolMode::kExclusive) {
    for (const auto& h : pool.hcas) devices.push_back(CdiDevice(rc, Tagged(h.address, tag), {h}));
  } else if (rc.topology_aware) {
    for (int node : node::NumaNodesOf(pool.hcas)) {
      std::vector<node::PciFunction> local;
      for (const auto& h : pool.hcas) {
        if ((h.numa_node < 0 ? -1 : h.numa_node) == node) local.push_back(h);
      }
      devices.push_back(CdiDevice(rc, Tagged(NodeDeviceName(node), tag), local));
    }
  } else {
    devices.push_back(CdiDevice(rc, Tagged("all", tag), pool.hcas));
  }
  return node::CdiSpecText(CdiKind(rc), devices);
}

std::vector<std::string> CdiDeviceNames(const config::ResourceConfig& rc,
                                        const node::PoolState& pool,
                                        const std::vector<std::string>& ids,
                                        const std::string& tag) {
  const std::string kind = CdiKind(rc) + "=";
  std::vector<std::string> names;
  if (rc.mode == config::PoolMode::kExclusive) {
    for (const auto& id : ids) names.push_back(kind + Tagged(id, tag));
  } else if (rc.topology_aware) {
    std::set<int> nodes;
    for (const auto& id : ids) nodes.insert(node::NodeOfSharedId(rc, pool, std::stoi(id)));
    for (int node : nodes) names.push_back(kind + Tagged(NodeDeviceName(node), tag));
  } else {
    names.push_back(kind + Tagged("all", tag));
  }
  return names;
}

void ApplyCdi(const config::ResourceConfig& rc, const node::PoolState& pool,
              const v1beta1::AllocateRequest& req, v1beta1::AllocateResponse* resp,
              const std::string& tag) {
  for (int i = 0; i < resp->container_responses_size(); ++i) {
    const auto& creq = req.container_requests(i);
    const std::vector<std::string> ids(creq.devices_ids().begin(), creq.devices_ids().end());
    auto* c = resp->mutable_container_responses(i);
    c->clear_devices();
    const std::vector<std::string> names = CdiDeviceNames(rc, pool, ids, tag);
    for (const auto& n : names) c->add_cdi_devices()->set_name(n);
    (*c->mutable_annotations())[CdiAnnotationKey(rc)] = Join(names);
  }
}

CdiSpecWriter::CdiSpecWriter(std::string dir, const std::string& kubelet_root)
    : tag_(CdiInstanceTag(kubelet_root)), files_(std::move(dir), CanonicalPath(kubelet_root)) {}

Status CdiSpecWriter::Write(const config::ResourceConfig& rc, const node::PoolState& pool) {
  const std::string name = CdiSpecFileName(rc, tag_);
  if (!pool.Usable()) {
    files_.Remove(name);
    return Status::Ok();
  }
  bool changed = false;
  RETURN_IF_ERROR(files_.Write(name, CdiSpecJson(rc, pool, tag_), &changed));
  if (changed) {
    LogInfo("CDI spec written", {{"resource", rc.FullName()}, {"file", files_.dir() + "/" + name}});
  }
  return Status::Ok();
}

void CdiSpecWriter::Remove(const config::ResourceConfig& rc) {
  files_.Remove(CdiSpecFileName(rc, tag_));
}

std::set<std::string> CdiSpecWriter::NamesOf(
    const std::vector<config::ResourceConfig>& resources) const {
  std::set<std::string> names;
  for (const auto& rc : resources) names.insert(CdiSpecFileName(rc, tag_));
  return names;
}

void CdiSpecWriter::Reclaim(const std::vector<config::ResourceConfig>& resources) {
  files_.Reclaim(NamesOf(resources));
}

void CdiSpecWriter::HandOver(const std::vector<config::ResourceConfig>& resources) {
  files_.HandOver(NamesOf(resources));
}

void CdiSpecWriter::Disown(const config::ResourceConfig& rc) {
  files_.Forget(CdiSpecFileName(rc, tag_));
}

}  // namespace hcashare::dp
