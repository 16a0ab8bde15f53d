#include "cni/netconf.h"

#include <algorithm>
#include <filesystem>
#include <utility>

#include "cni/env.h"
#include "cni/error.h"
#include "cni/version.h"
#include "common/strings.h"
#include "config/suggest.h"
#include "json/fields.h"
#include "nl/vf_guid.h"

namespace hcashare::cni {

using jsonin::FieldReader;
using jsonin::Need;
using nlohmann::json;

namespace {

constexpr std::string_view kValidAttachmentsKey = "cni.dev/valid-attachments";

// Whether two absolute paths name the same place lexically ("/a/b/" and "/a//b" do).
bool SamePath(const std::string& a, const std::string& b) {
  const auto normal = [](const std::string& p) {
    std::string n = std::filesystem::path(p).lexically_normal().string();
    while (n.size() > 1 && n.back() == '/') n.pop_back();
    return n;
  };
  return normal(a) == normal(b);
}

}  // namespace

bool IsDeviceInfoFileIn(const std::string& file, const std::string& dir) {
  const std::filesystem::path path = std::filesystem::path(file).lexically_normal();
  const std::string name = path.filename().string();
  return !name.empty() && name != "." && name != ".." && SamePath(path.parent_path().string(), dir);
}

namespace {

const std::vector<std::string>& KnownKeys() {
  static const std::vector<std::string> kKeys = {
      // CNI spec and libcni.
      "cniVersion", "cniVersions", "name", "type", "args", "dns", "ipam", "prevResult",
      "runtimeConfig", "capabilities", "disableCheck", "disableGC", "cni.dev/attachments",
      std::string(kValidAttachmentsKey),
      // sriov-cni.
      "deviceID", "pciBusID", "resourceName", "vlan", "vlanQoS", "vlanProto", "mac", "mtu",
      "spoofchk", "trust", "link_state", "min_tx_rate", "max_tx_rate", "logLevel", "logFile",
      // ib-sriov-cni.
      "guid", "ibKubernetesEnabled",
      // hcashare.
      "kubeletRootDir", "stateDir", "hostRoot", "rdma", "mode", "master", "poolInfoDir", "pkey",
      "gpuResources", "gpuRails"};
  return kKeys;
}

// Reads the configuration into a NetConf, collecting problems in `errors`.
class NetConfReader {
 public:
  NetConfReader(const json& root, Verb verb, NetConf* conf, jsonin::IssueList* errors)
      : top_(root, "", errors), verb_(verb), conf_(*conf), errors_(*errors) {}

  void ReadAll() {
    runtime_ = top_.Object("runtimeConfig");
    if (runtime_) conf_.runtime_config = *runtime_;
    ReadIdentity();
    ReadDevice();
    ReadVlan();
    ReadVfSettings();
    ReadIpam();
    ReadNodeSettings();
    ReadLogLevel();
    ReadRuntimeInputs();
    CheckDraMode();
    WarnAboutTypos();
  }

 private:
  // REQUIRES: runtime_ != nullptr.
  FieldReader RuntimeReader() { return top_.At(*runtime_, top_.PathOf("runtimeConfig")); }

  // CHECK and DEL act on the device recorded by ADD; a macvlan/IPoIB child has no device.
  bool NeedsDevice() const { return verb_ == Verb::kAdd && conf_.mode == AttachMode::kNetdev; }

  // A string member that `check` must accept.
  std::optional<std::string> Checked(FieldReader& reader, std::string_view key,
                                     Problem (*check)(std::string_view),
                                     Need need = Need::kOptional) {
    std::optional<std::string> value = reader.String(key, need);
    if (!value) return std::nullopt;
    if (Problem problem = check(*value)) {
      reader.Fail(key, *problem + ", got " + jsonin::Quote(*value));
      return std::nullopt;
    }
    return value;
  }

  // An "on"/"off" member.
  std::optional<bool> OnOff(std::string_view key) {
    const auto index = top_.Choice(key, {"on", "off"});
    if (!index) return std::nullopt;
    return *index == 0;
  }

  std::optional<int> SmallInt(std::string_view key, int min, int max) {
    const auto value = top_.Integer(key, min, max);
    if (!value) return std::nullopt;
    return static_cast<int>(*value);
  }

  void ReadIdentity() {
    // cniVersion is checked by the caller.
    conf_.name = Checked(top_, "name", CheckIdentifier, Need::kRequired).value_or("");
    conf_.type = Checked(top_, "type", CheckPluginName, Need::kRequired).value_or("");
    conf_.resource_name = Checked(top_, "resourceName", CheckResourceName);
    ReadGpuAffinity();
    if (const auto mode = top_.Choice("mode", {"netdev", "macvlan", "ipoib", "dra"})) {
      conf_.mode = static_cast<AttachMode>(*mode);  // the choices are in AttachMode order
    }
    conf_.master = Checked(top_, "master", CheckIfName);
    if (const auto pkey = top_.Integer("pkey", 1, 0xffff))
      conf_.pkey = static_cast<uint16_t>(*pkey);
    if (conf_.mode == AttachMode::kDraClaims) return;
    if (conf_.mode != AttachMode::kNetdev && !conf_.master && !conf_.resource_name &&
        verb_ == Verb::kAdd) {
      top_.Fail("master",
                "required with \"mode\": \"macvlan\" or \"ipoib\" unless resourceName names "
                "the shared resource whose pool HCA to use");
    }
  }

  void ReadDevice() {
    const std::optional<std::string> device_id = top_.String("deviceID");
    const std::optional<std::string> pci_bus_id = top_.String("pciBusID");
    std::optional<std::string> runtime_device_id;
    if (runtime_) runtime_device_id = RuntimeReader().String("deviceID");
    const struct {
      const std::optional<std::string>& value;
      const char* path;
      DeviceIdSource source;
    } candidates[] = {
        {device_id, "deviceID", DeviceIdSource::kDeviceId},
        {pci_bus_id, "pciBusID", DeviceIdSource::kPciBusId},
        {runtime_device_id, "runtimeConfig.deviceID", DeviceIdSource::kRuntimeConfig}};
    for (const auto& candidate : candidates) {
      if (!candidate.value) continue;
      const std::optional<DeviceName> name = ParseDeviceName(*candidate.value);
      const bool shared_id = !candidate.value->empty() &&
                             candidate.value->find_first_not_of("0123456789") == std::string::npos;
      if (!name && shared_id && conf_.mode != AttachMode::kNetdev) {
        // Multus injects the pod's device ID when the NAD carries the resourceName
        // annotation (the injector needs it); a shared pool's ID names a share, and a child
        // link picks its HCA from resourceName or master instead.
        conf_.warnings.push_back(std::string(candidate.path) + ": " +
                                 jsonin::Quote(*candidate.value) +
                                 " is a shared pool's ID; a child link does not use it");
        continue;
      }
      if (!name && shared_id) {
        errors_.push_back(
            {candidate.path, jsonin::Quote(*candidate.value) +
                                 " is a shared pool's ID (a share of the pool's HCAs), not a VF "
                                 "to move into the pod: netdev mode needs an exclusive resource; "
                                 "to attach a shared pool, set \"mode\": \"macvlan\" (RoCE) or "
                                 "\"ipoib\" (InfiniBand)"});
        return;
      }
      if (!name) {
        errors_.push_back({candidate.path,
                           "must be a PCI address (DDDD:BB:DD.F) or an auxiliary device name "
                           "(e.g. mlx5_core.sf.4), got " +
                               jsonin::Quote(*candidate.value)});
        return;
      }
      conf_.device = DeviceId{name->value, name->kind, candidate.source};
      return;
    }
    // A candidate of the wrong type has been reported already.
    const bool any_given = top_.Find("deviceID") || top_.Find("pciBusID") ||
                           (runtime_ && RuntimeReader().Find("deviceID"));
    if (NeedsDevice() && !any_given && !conf_.resource_name) {
      top_.Fail("deviceID",
                "required when there is no resourceName (Multus sets it from the pod's "
                "device allocation when the NetworkAttachmentDefinition carries the "
                "k8s.v1.cni.cncf.io/resourceName annotation; or set deviceID, pciBusID or "
                "runtimeConfig.deviceID, or resourceName to look the pod's devices up)");
    }
  }

  void ReadVlan() {
    conf_.vlan = SmallInt("vlan", 0, kMaxVlan);
    conf_.vlan_qos = SmallInt("vlanQoS", 0, kMaxVlanQos);
    if (const auto proto = top_.Choice("vlanProto", {"802.1q", "802.1ad"})) {
      conf_.vlan_proto = *proto == 0 ? "802.1q" : "802.1ad";
    }
    // Cross-field rules (sriov-cni's). Only a vlan that was present counts as missing.
    const bool vlan_present = top_.Find("vlan") != nullptr;
    const bool untagged = conf_.vlan && *conf_.vlan == 0;
    if (conf_.vlan_qos && !vlan_present) top_.Fail("vlanQoS", "requires vlan");
    if (conf_.vlan_qos && *conf_.vlan_qos != 0 && untagged) {
      top_.Fail("vlanQoS", "a non-zero QoS requires a non-zero vlan");
    }
    if (conf_.vlan_proto && !vlan_present) top_.Fail("vlanProto", "requires vlan");
    if (conf_.vlan_proto == "802.1ad" && untagged) {
      top_.Fail("vlanProto", "\"802.1ad\" requires a non-zero vlan");
    }
  }

  void ReadVfSettings() {
    conf_.mac = Mac(top_, "mac");
    conf_.guid = Guid(top_, "guid");
    if (runtime_) {
      FieldReader runtime_reader = RuntimeReader();
      conf_.runtime_mac = Mac(runtime_reader, "mac");
      conf_.runtime_guid = Guid(runtime_reader, "infinibandGUID");
    }
    ReadCniArgs();
    conf_.spoofchk = OnOff("spoofchk");
    conf_.trust = OnOff("trust");
    if (const auto state = top_.Choice("link_state", {"auto", "enable", "disable"})) {
      conf_.link_state = static_cast<LinkState>(*state);  // the choices are in LinkState order
    }
    if (const auto rdma = top_.Choice("rdma", {"auto", "move", "off"})) {
      conf_.rdma = static_cast<RdmaMode>(*rdma);  // the choices are in RdmaMode order
    }
    conf_.min_tx_rate = top_.Integer("min_tx_rate", 0, kMaxTxRate);
    conf_.max_tx_rate = top_.Integer("max_tx_rate", 0, kMaxTxRate);
    const int64_t min_rate = conf_.min_tx_rate.value_or(0);
    const int64_t max_rate = conf_.max_tx_rate.value_or(0);
    if (min_rate != 0 && max_rate != 0 && max_rate < min_rate) {
      top_.Fail("max_tx_rate", "must be >= min_tx_rate (" + std::to_string(min_rate) + "), got " +
                                   std::to_string(max_rate));
    }
    conf_.mtu = SmallInt("mtu", kMinMtu, kMaxMtu);
  }

  std::optional<std::string> Mac(FieldReader& reader, std::string_view key) {
    const std::optional<std::string> value = reader.String(key);
    if (!value) return std::nullopt;
    std::string problem;
    std::optional<std::string> mac = ParseUnicastMac(*value, &problem);
    if (!mac) reader.Fail(key, problem + ", got " + jsonin::Quote(*value));
    return mac;
  }

  void ReadGpuAffinity() {
    if (auto resources = top_.Strings("gpuResources")) {
      if (resources->size() > kMaxGpuResources) {
        top_.Fail("gpuResources", "at most " + std::to_string(kMaxGpuResources) +
                                      " resources, got " + std::to_string(resources->size()));
      }
      for (size_t i = 0; i < resources->size(); ++i) {
        if (const Problem problem = CheckResourceName((*resources)[i])) {
          errors_.push_back(
              {top_.PathOf("gpuResources") + "[" + std::to_string(i) + "]", *problem});
        }
      }
      conf_.gpu_resources = std::move(*resources);
    }
    conf_.gpu_rails = top_.Bool("gpuRails").value_or(false);
    if (conf_.gpu_rails && !top_.Find("resourceName")) {
      top_.Fail("gpuRails", "requires resourceName (the resource whose VFs follow the GPUs)");
    }
  }

  std::optional<std::string> Guid(FieldReader& reader, std::string_view key) {
    const std::optional<std::string> value = reader.String(key);
    if (!value) return std::nullopt;
    std::string problem;
    std::optional<std::string> guid = ParseVfGuid(*value, &problem);
    if (!guid) reader.Fail(key, problem);
    return guid;
  }

  // "args.cni", the CNI_ARGS convention's object (Multus merges the pod's network
  // "cni-args" into it): only the keys ib-sriov-cni reads; any other shape or key belongs to
  // someone else and is left alone.
  void ReadCniArgs() {
    conf_.ib_kubernetes_enabled = top_.Bool("ibKubernetesEnabled").value_or(false);
    const json* args = top_.Find("args");
    if (!args || !args->is_object()) return;
    const auto cni = args->find("cni");
    if (cni == args->end() || !cni->is_object()) return;
    const FieldReader args_reader = top_.At(*args, top_.PathOf("args"));
    FieldReader reader = args_reader.At(*cni, args_reader.PathOf("cni"));
    conf_.args_guid = Guid(reader, "guid");
    conf_.ib_kubernetes_state = reader.String(kIbKubernetesKey).value_or("");
  }

  void ReadIpam() {
    const json* ipam = top_.Object("ipam");
    if (!ipam) return;
    FieldReader ipam_reader = top_.At(*ipam, top_.PathOf("ipam"));
    const std::optional<std::string> type = Checked(ipam_reader, "type", CheckPluginName);
    if (!type) return;
    conf_.ipam = *ipam;
    conf_.ipam_type = *type;
  }

  // The node's settings may be repeated with the node's values (NADs written before they
  // moved to the node file), never set: a NAD is tenant input, and these are host paths.
  void ReadNodeSettings() {
    const NodeSettings& node = conf_.node;
    const struct {
      const char* key;
      std::optional<std::string> value;
    } settings[] = {{"hostRoot", node.host_root},
                    {"stateDir", node.state_dir},
                    {"kubeletRootDir", node.kubelet_root_dir},
                    {"poolInfoDir", node.pool_info_dir},
                    {"logFile", node.log_file}};
    for (const auto& setting : settings) {
      const std::optional<std::string> given = Checked(top_, setting.key, CheckAbsolutePath);
      if (!given || (setting.value && SamePath(*given, *setting.value))) continue;
      const std::string where = node.source.empty() ? "the built-in default; there is no " +
                                                          std::string(kDefaultNodeConfigPath)
                                                    : "from " + node.source;
      top_.Fail(setting.key,
                jsonin::Quote(*given) + " is not this node's setting (" +
                    (setting.value ? jsonin::Quote(*setting.value) : std::string("unset")) + ", " +
                    where + "); host paths come only from the node's configuration " +
                    "file, which its administrator writes: remove " + setting.key +
                    " from the network configuration");
    }
  }

  void ReadLogLevel() {
    if (const auto level = top_.String("logLevel")) {
      Result<LogLevel> parsed = ParseLogLevel(*level);
      if (parsed.ok()) {
        conf_.log_level = *parsed;
      } else {
        conf_.warnings.push_back("logLevel: unknown level " + jsonin::Quote(*level) +
                                 "; using info");
      }
    }
  }

  void ReadRuntimeInputs() {
    if (runtime_) {
      FieldReader runtime_reader = RuntimeReader();
      conf_.device_info_file =
          Checked(runtime_reader, "CNIDeviceInfoFile", CheckAbsolutePath, Need::kOptional);
      if (conf_.device_info_file &&
          !IsDeviceInfoFileIn(*conf_.device_info_file, conf_.node.device_info_dir)) {
        const std::string problem =
            jsonin::Quote(*conf_.device_info_file) +
            " is not a file directly in this node's device-info directory " +
            jsonin::Quote(conf_.node.device_info_dir) +
            " (where Multus asks for them; the node file's deviceInfoDir)";
        // DEL acts on what ADD recorded, so it is never stuck on this: the file is ignored.
        if (verb_ == Verb::kDel) {
          conf_.warnings.push_back("runtimeConfig.CNIDeviceInfoFile: " + problem + "; ignored");
        } else {
          runtime_reader.Fail("CNIDeviceInfoFile", problem);
        }
        conf_.device_info_file.reset();
      }
    }
    if (const json* prev =
            top_.Object("prevResult", verb_ == Verb::kCheck ? Need::kRequired : Need::kOptional)) {
      conf_.prev_result = *prev;
    }
    const Need need = verb_ == Verb::kGc ? Need::kRequired : Need::kOptional;
    if (!top_.Find(kValidAttachmentsKey) && need == Need::kOptional) return;
    std::vector<Attachment> attachments;
    jsonin::ForEachObject(top_, kValidAttachmentsKey, need, [&attachments](FieldReader& entry) {
      auto container_id = entry.String("containerID", Need::kRequired);
      auto ifname = entry.String("ifname", Need::kRequired);
      if (container_id && ifname) attachments.push_back({*container_id, *ifname});
    });
    conf_.valid_attachments = std::move(attachments);
  }

  // "mode": "dra" attaches the devices of the pod's claims with the claims' settings: the
  // keys that choose or configure one device have no meaning there.
  void CheckDraMode() {
    if (conf_.mode != AttachMode::kDraClaims) return;
    for (const char* key : {"deviceID", "pciBusID", "resourceName", "vlan", "vlanQoS", "vlanProto",
                            "mac", "spoofchk", "trust", "link_state", "min_tx_rate", "max_tx_rate",
                            "guid", "master", "pkey", "gpuRails", "gpuResources"}) {
      if (top_.Find(key)) {
        top_.Fail(key,
                  "not used with \"mode\": \"dra\" (each device of the pod's claims is "
                  "attached with its claim's settings: interface name, MTU, addresses)");
      }
    }
  }

  void WarnAboutTypos() {
    for (const auto& item : conf_.raw.items()) {
      const std::string& key = item.key();
      const auto& known = KnownKeys();
      if (std::find(known.begin(), known.end(), key) != known.end()) continue;
      if (const auto suggestion = config::SuggestKey(key, known)) {
        conf_.warnings.push_back("unknown key " + jsonin::Quote(key) + "; did you mean " +
                                 jsonin::Quote(*suggestion) + "?");
      }
    }
  }

  FieldReader top_;
  Verb verb_;
  NetConf& conf_;
  jsonin::IssueList& errors_;
  const json* runtime_ = nullptr;  // "runtimeConfig" when it is an object
};

}  // namespace

bool NetConf::RequestsPfSideSettings() const {
  return vlan || vlan_qos || vlan_proto || mac || runtime_mac || spoofchk || trust || link_state ||
         min_tx_rate || max_tx_rate || guid || runtime_guid;
}

Result<NetConf> ParseNetConf(std::string_view text, Verb verb) {
  return ParseNetConf(text, verb, DefaultNodeSettings());
}

Result<NetConf> ParseNetConf(std::string_view text, Verb verb, const NodeSettings& node) {
  Result<json> root = jsonin::DecodeJson(text, "network configuration");
  if (!root.ok()) return WithCniCode(root.status(), kErrDecode);
  if (!root->is_object()) {
    return CniStatus(kErrDecode, "cannot decode network configuration",
                     "must be a JSON object, got " + jsonin::DescribeValue(*root));
  }
  NetConf conf;
  conf.node = node;
  conf.raw = std::move(root).value();
  jsonin::IssueList errors;
  const std::optional<std::string> version =
      FieldReader(conf.raw, "", &errors).String("cniVersion", Need::kRequired);
  if (version && version->empty() && verb != Verb::kVersion) {
    // libcni passes "" for a single-plugin configuration without one (skel reads 0.1.0).
    return CniStatus(
        kErrIncompatibleVersion, "the network configuration has no cniVersion",
        "add \"cniVersion\": \"1.0.0\" (supported versions: " + Join(SupportedVersions(), ", ") +
            "; 0.1.0 and 0.2.0, which an empty one means, are not)");
  }
  if (version) {
    RETURN_IF_ERROR(CheckConfigVersion(version, verb));
    conf.cni_version = *version;
  }
  NetConfReader(conf.raw, verb, &conf, &errors).ReadAll();
  if (!errors.empty()) {
    return CniStatus(kErrInvalidNetConf, "invalid network configuration",
                     jsonin::JoinIssues(errors));
  }
  return conf;
}

}  // namespace hcashare::cni
