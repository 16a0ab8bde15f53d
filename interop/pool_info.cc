#include "interop/pool_info.h"

#include <nlohmann/json.hpp>

#include "common/strings.h"
#include "json/dump.h"

namespace hcashare {

bool PoolInfoHca::operator==(const PoolInfoHca& o) const {
  return pci == o.pci && netdevs == o.netdevs && rdma_devices == o.rdma_devices && numa == o.numa &&
         healthy == o.healthy;
}

bool PoolInfo::operator==(const PoolInfo& o) const {
  return resource == o.resource && hcas == o.hcas && id_numa == o.id_numa;
}

std::string PoolInfoDirFor(const std::string& kubelet_root) {
  std::string root = kubelet_root;
  while (root.size() > 1 && root.back() == '/') root.pop_back();
  if (root == "/var/lib/kubelet") return kDefaultPoolInfoDir;
  return std::string(kDefaultPoolInfoDir) + "/kubelet-" + PathAsFileName(root);
}

std::string PoolInfoFileName(const std::string& resource) {
  return ReplaceAny(resource, "/.", '_') + ".json";
}

std::string PoolInfoToJson(const PoolInfo& info) {
  nlohmann::ordered_json hcas = nlohmann::ordered_json::array();
  for (const auto& h : info.hcas) {
    hcas.push_back({{"pci", h.pci},
                    {"netdevs", h.netdevs},
                    {"rdmaDevices", h.rdma_devices},
                    {"numa", h.numa},
                    {"healthy", h.healthy}});
  }
  nlohmann::ordered_json doc = {{"resource", info.resource}, {"hcas", hcas}};
  if (!info.id_numa.empty()) doc["idNuma"] = info.id_numa;
  return DumpJson(doc);
}

Result<PoolInfo> ParsePoolInfo(const std::string& text) {
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return Status::InvalidArgument("not a JSON object");
  try {
    PoolInfo info;
    info.resource = j.at("resource").get<std::string>();
    for (const auto& h : j.at("hcas")) {
      PoolInfoHca hca;
      hca.pci = h.at("pci").get<std::string>();
      hca.netdevs = h.value("netdevs", std::vector<std::string>{});
      hca.rdma_devices = h.value("rdmaDevices", std::vector<std::string>{});
      hca.numa = h.value("numa", -1);
      hca.healthy = h.value("healthy", true);
      info.hcas.push_back(std::move(hca));
    }
    if (j.contains("idNuma")) info.id_numa = j["idNuma"].get<std::map<std::string, int>>();
    return info;
  } catch (const nlohmann::json::exception& e) {
    return Status::InvalidArgument(std::string("bad pool description: ") + e.what());
  }
}

}  // namespace hcashare
