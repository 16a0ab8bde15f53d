#include "dra/render.h"

#include <ctime>

#include <string_view>

namespace hcashare::dra {
namespace {

using nlohmann::json;

static_assert(std::string_view(config::kDefaultDraDriver) == std::string_view(kDefaultDriver),
              "config's default draDriver is the DRA driver's default name");

// The standard attributes (KEP-4381, KEP-6072).
constexpr const char* kPcieRoot = "resource.kubernetes.io/pcieRoot";
constexpr const char* kPciBusId = "resource.kubernetes.io/pciBusID";
constexpr const char* kNumaNode = "resource.kubernetes.io/numaNode";
// What Multus's DRA path hands the CNI (its deviceID) and names the resource by.
constexpr const char* kCniDeviceId = "k8s.cni.cncf.io/deviceID";
constexpr const char* kCniResourceName = "k8s.cni.cncf.io/resourceName";
// The shared HCA's consumable capacity, in the driver's domain.
constexpr const char* kShares = "shares";

// Sets string attribute `key` unless `value` is empty or longer than the API allows.
void SetString(json* attrs, const char* key, const std::string& value) {
  if (value.empty() || value.size() > kMaxAttributeStringLength) return;
  (*attrs)[key] = {{"string", value}};
}

// "ethernet" / "infiniband" for discovery's "ether" / "infiniband"; "" otherwise.
std::string LinkTypeName(const node::PciFunction& fn) {
  for (const std::string& t : fn.link_types) {
    if (t == "ether") return "ethernet";
    if (t == "infiniband") return "infiniband";
  }
  return "";
}

// "2026-12-06T03:04:05Z" for unix time `t`.
std::string Rfc3339(int64_t t) {
  const std::time_t tt = static_cast<std::time_t>(t);
  std::tm tm{};
  ::gmtime_r(&tt, &tm);
  char out[32];
  std::strftime(out, sizeof out, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return out;
}

}  // namespace

RenderOptions RenderOptionsOf(const config::PluginConfig& cfg) {
  RenderOptions options;
  options.numa_list = cfg.dra_numa_node == config::DraNumaNodeForm::kList;
  options.driver = cfg.dra_driver;
  return options;
}

json RenderDevice(const DraDevice& device, const RenderOptions& options) {
  const node::PciFunction& fn = device.fn;
  const bool pci = !fn.is_sf && !fn.is_virtual;
  json attrs = json::object();
  SetString(&attrs, kPcieRoot, device.pcie_root);
  if (pci) SetString(&attrs, kPciBusId, fn.address);
  if (fn.numa_node >= 0) {
    attrs[kNumaNode] = options.numa_list ? json{{"ints", json::array({fn.numa_node})}}
                                         : json{{"int", fn.numa_node}};
  }
  SetString(&attrs, "resourceName", device.resource.FullName());
  if (!fn.rdma.empty()) SetString(&attrs, "rdmaDevice", fn.rdma.front().name);
  if (!fn.netdevs.empty()) SetString(&attrs, "netdev", fn.netdevs.front());
  SetString(&attrs, "linkType", LinkTypeName(fn));
  SetString(&attrs, "pciVendor", fn.vendor);
  SetString(&attrs, "pciDevice", fn.device);
  attrs["isVF"] = {{"bool", fn.is_vf}};
  attrs["isSF"] = {{"bool", fn.is_sf}};
  if (fn.is_vf || fn.is_sf) SetString(&attrs, "pfPciAddress", fn.pf_address);
  SetString(&attrs, "fwVersion", device.fw_version);
  SetString(&attrs, "portState", device.port_state);
  if (device.port_rate_gbps >= 0) attrs["portRateGbps"] = {{"int", device.port_rate_gbps}};
  attrs["healthy"] = {{"bool", fn.healthy}};
  SetString(&attrs, kCniDeviceId, fn.address);
  SetString(&attrs, kCniResourceName, device.resource.FullName());

  json out = {{"name", device.name}, {"attributes", std::move(attrs)}};
  if (!device.taint_effect.empty()) {
    const bool gone = device.taint_effect == "NoExecute";
    out["taints"] = json::array({{{"key", options.driver + (gone ? "/gone" : "/unhealthy")},
                                  {"effect", device.taint_effect},
                                  {"timeAdded", Rfc3339(device.taint_since)}}});
  }
  if (device.shared) {
    out["allowMultipleAllocations"] = true;
    out["capacity"] = {
        {kShares,
         {{"value", std::to_string(device.resource.rdma_hca_max)},
          {"requestPolicy", {{"default", "1"}, {"validRange", {{"min", "1"}, {"step", "1"}}}}}}}};
  }
  return out;
}

PoolContent RenderPool(const DraInventory& inv, const std::string& driver,
                       const std::string& node_name, const RenderOptions& options) {
  PoolContent pool;
  pool.driver = driver;
  pool.node_name = node_name;
  pool.pool_name = node_name;
  pool.devices.reserve(inv.devices.size());
  for (const DraDevice& d : inv.devices) pool.devices.push_back(RenderDevice(d, options));
  return pool;
}

}  // namespace hcashare::dra
