#include "injector/mutate.h"

#include <algorithm>
#include <exception>
#include <map>
#include <set>
#include <utility>

#include "common/strings.h"
#include "injector/container_choice.h"
#include "injector/networks.h"
#include "injector/resources.h"
#include "json/fields.h"

namespace hcashare::injector {

using jsonin::Quote;
using nlohmann::json;

using detail::ChooseContainer;
using detail::ContainerIndex;
using detail::ContainerNames;
using detail::Member;
using detail::Refusal;
using detail::StringAnnotation;

namespace {

// A container's existing quantity of `resource` in its `which` map ("requests"/"limits").
std::optional<int64_t> Existing(const json* map, const std::string& resource,
                                const std::string& where) {
  const json* value = map ? Member(*map, resource.c_str()) : nullptr;
  if (!value) return std::nullopt;
  Result<int64_t> n = ParseWholeQuantity(*value);
  if (!n.ok()) {
    throw Refusal{where + "[" + Quote(resource) + "]: " + n.status().message() +
                  "; write a whole number such as \"2\""};
  }
  return *n;
}

// The object member `key` of `parent`, refusing a value of another type.
const json* ObjectMember(const json& parent, const char* key, const std::string& where) {
  const json* value = Member(parent, key);
  if (value && !value->is_object()) {
    throw Refusal{where + "." + key + " is " + jsonin::DescribeValue(*value) + ", not an object"};
  }
  return value;
}

void AddOp(json& patch, const char* op, const std::string& path, json value) {
  patch.push_back({{"op", op}, {"path", path}, {"value", std::move(value)}});
}

// true when network `key`'s NAD allocates its resource through DRA (kResourceApiAnnotation);
// an unknown value is refused.
bool AllocatedThroughDra(const NadInfo& nad, const std::string& key) {
  if (!nad.resource_api || *nad.resource_api == "devicePlugin") return false;
  if (*nad.resource_api == "dra") return true;
  throw Refusal{"network " + key + ": its NetworkAttachmentDefinition's annotation " +
                kResourceApiAnnotation + " is " + Quote(*nad.resource_api) +
                "; write \"dra\" (a ResourceClaim of the pod allocates the device) or "
                "\"devicePlugin\" (the default: the injector requests " +
                Quote(nad.resource_name) + "); fix the NAD"};
}

// The warning for DRA networks (network -> resource) of a pod without ResourceClaims.
std::optional<std::string> DraWithoutClaims(const json* spec,
                                            const std::map<std::string, std::string>& dra) {
  if (dra.empty()) return std::nullopt;
  const json* claims = spec ? Member(*spec, "resourceClaims") : nullptr;
  if (claims && claims->is_array() && !claims->empty()) return std::nullopt;
  std::vector<std::string> named;
  for (const auto& [network, resource] : dra) named.push_back(network + " (" + resource + ")");
  const bool several = dra.size() > 1;
  return "network" + std::string(several ? "s " : " ") + Join(named, ", ") +
         (several ? " get their devices" : " gets its device") + " from a DRA ResourceClaim (" +
         kResourceApiAnnotation + ": dra), but the pod has no spec.resourceClaims: add a claim " +
         (several ? "for them, or these attachments" : "for it, or the attachment") +
         " will find no device";
}

// Appends the operations that give container `index` at least `counts` (request == limit).
// `asked_by` maps each injected resource to the first two containers that already ask for it,
// for a warning when another container than `index` does.
void PatchContainer(const json& containers, size_t index,
                    const std::map<std::string, int64_t>& counts,
                    const std::map<std::string, std::vector<size_t>>& asked_by, json& patch,
                    std::vector<std::string>& warnings) {
  const json& container = containers[index];
  const json* name = Member(container, "name");
  const std::string cname = name && name->is_string() ? name->get<std::string>() : "";
  const std::string where = "container " + Quote(cname);
  if (!container.is_object())
    throw Refusal{"spec.containers[" + std::to_string(index) + "] is not an object"};
  const json* resources = ObjectMember(container, "resources", where);
  const json* requests =
      resources ? ObjectMember(*resources, "requests", where + ".resources") : nullptr;
  const json* limits =
      resources ? ObjectMember(*resources, "limits", where + ".resources") : nullptr;
  const std::string base = "/spec/containers/" + std::to_string(index) + "/resources";

  json want = json::object();  // resource -> target, for the maps that change
  for (const auto& [resource, count] : counts) {
    const auto request = Existing(requests, resource, where + " resources.requests");
    const auto limit = Existing(limits, resource, where + " resources.limits");
    const int64_t target = std::max({request.value_or(0), limit.value_or(0), count});
    if (request == target && limit == target) continue;
    want[resource] = std::to_string(target);
    const auto asking = asked_by.find(resource);
    if (asking == asked_by.end()) continue;
    for (size_t other : asking->second) {
      if (other == index) continue;
      warnings.push_back(where + " gets " + Quote(resource) + " for the pod's networks while " +
                         ContainerNames(json::array({containers[other]})) +
                         " also asks for it; set " + kResourceContainerAnnotation +
                         " if the networks should use that container's devices");
      break;
    }
  }
  if (want.empty()) return;
  if (!resources) {
    AddOp(patch, "add", base, {{"requests", want}, {"limits", want}});
    return;
  }
  for (const auto& [key, map] : {std::pair<const char*, const json*>{"requests", requests},
                                 std::pair<const char*, const json*>{"limits", limits}}) {
    const std::string path = base + "/" + key;
    if (!map) {
      AddOp(patch, "add", path, want);
      continue;
    }
    for (const auto& [resource, value] : want.items()) {
      const json* old = Member(*map, resource.c_str());
      if (old && ParseWholeQuantity(*old).value_or(-1) == std::stoll(value.get<std::string>())) {
        continue;
      }
      AddOp(patch, old ? "replace" : "add", path + "/" + EscapeJsonPointer(resource), value);
    }
  }
}

// For each resource in `injected`, the first two containers whose requests or limits name it:
// one pass over the pod, however many containers and resources it has.
std::map<std::string, std::vector<size_t>> AskedBy(const json& containers,
                                                   const std::set<std::string>& injected) {
  std::map<std::string, std::vector<size_t>> asked;
  for (size_t i = 0; i < containers.size(); ++i) {
    const json* resources = Member(containers[i], "resources");
    for (const char* which : {"requests", "limits"}) {
      const json* map = resources ? Member(*resources, which) : nullptr;
      if (!map || !map->is_object()) continue;
      for (const auto& item : map->items()) {
        if (!injected.count(item.key())) continue;
        std::vector<size_t>& list = asked[item.key()];
        if (list.size() < 2 && (list.empty() || list.back() != i)) list.push_back(i);
      }
    }
  }
  return asked;
}

// Appends the downward-API volume and its mounts in `chosen` containers, each only if absent.
void PatchPodNetInfo(const json& spec, const std::vector<size_t>& chosen, json& patch,
                     std::vector<std::string>& warnings) {
  const json& containers = spec.at("containers");
  const json mount = {
      {"name", kPodNetInfoVolume}, {"mountPath", kPodNetInfoMountPath}, {"readOnly", true}};
  for (size_t index : chosen) {
    const std::string path = "/spec/containers/" + std::to_string(index) + "/volumeMounts";
    const json* mounts = Member(containers[index], "volumeMounts");
    if (!mounts) {
      AddOp(patch, "add", path, json::array({mount}));
      continue;
    }
    if (!mounts->is_array()) throw Refusal{path + " is not an array"};
    bool present = false;
    for (const json& m : *mounts) {
      const json* n = Member(m, "name");
      const json* p = Member(m, "mountPath");
      if (n && *n == kPodNetInfoVolume) present = true;
      if (!present && p && *p == kPodNetInfoMountPath) {
        warnings.push_back(std::string(kPodNetInfoMountPath) + " is taken in " +
                           ContainerNames(json::array({containers[index]})) +
                           "; the network-status file is not mounted there");
        present = true;
      }
    }
    if (!present) AddOp(patch, "add", path + "/-", mount);
  }
  const json volume = {
      {"name", kPodNetInfoVolume},
      {"downwardAPI",
       {{"items", json::array({{{"path", kPodNetInfoFile},
                                {"fieldRef",
                                 {{"apiVersion", "v1"},
                                  {"fieldPath", std::string("metadata.annotations['") +
                                                    kNetworkStatusAnnotation + "']"}}}}})}}}};
  const json* volumes = Member(spec, "volumes");
  if (!volumes) return AddOp(patch, "add", "/spec/volumes", json::array({volume}));
  if (!volumes->is_array()) throw Refusal{"spec.volumes is not an array"};
  for (const json& v : *volumes) {
    const json* n = Member(v, "name");
    if (n && *n == kPodNetInfoVolume) return;
  }
  AddOp(patch, "add", "/spec/volumes/-", volume);
}

MutateResult Admit(std::string message, std::vector<std::string> warnings = {}) {
  MutateResult r;
  r.message = std::move(message);
  r.warnings = std::move(warnings);
  return r;
}

// The resource names of `found`'s NADs.
std::set<std::string> ResourcesOf(const std::map<std::string, NadInfo>& found) {
  std::set<std::string> out;
  for (const auto& [key, nad] : found) {
    if (!nad.resource_name.empty()) out.insert(nad.resource_name);
  }
  return out;
}

MutateResult MutateOrThrow(const json& pod, const std::string& namespace_hint, NadLookup& nads,
                           const MutateOptions& options) {
  if (!pod.is_object())
    throw Refusal{"the pod is " + jsonin::DescribeValue(pod) + ", not an object"};
  const std::optional<std::string> annotation =
      StringAnnotation(pod, kNetworksAnnotation, "the pod's");
  if (!annotation) return Admit(std::string("no ") + kNetworksAnnotation + " annotation");
  const json* metadata = Member(pod, "metadata");
  const json* ns_value = metadata ? Member(*metadata, "namespace") : nullptr;
  const std::string ns =
      ns_value && ns_value->is_string() && !ns_value->get_ref<const std::string&>().empty()
          ? ns_value->get<std::string>()
          : namespace_hint;
  Result<std::vector<NetworkRef>> refs = ParseNetworks(*annotation, ns);
  if (!refs.ok()) {
    if (options.refuse_missing) throw Refusal{refs.status().message()};
    return Admit("admitted unchanged",
                 {refs.status().message() + "; the pod gets no network resources"});
  }
  if (refs->empty()) return Admit("the networks annotation names no network");

  // One lookup per distinct NAD, until the first missing one when missing ones refuse the
  // pod (each miss is a GET: a pod naming many absent NADs must not hold a worker), all of
  // them when they are tolerated; none once the review's deadline has passed.
  std::vector<std::string> warnings;
  std::map<std::string, NadInfo> found;
  std::vector<std::string> missing;
  for (const NetworkRef& ref : *refs) {
    const std::string key = ref.Key();
    if (found.count(key) || std::find(missing.begin(), missing.end(), key) != missing.end())
      continue;
    if (std::chrono::steady_clock::now() >= options.deadline) {
      throw Refusal{"the review ran out of time before NetworkAttachmentDefinition " + key +
                        " could be read; try again",
                    503};
    }
    Result<NadInfo> info = nads.FindBy(ref.ns, ref.name, options.deadline);
    if (info.ok()) {
      found.emplace(key, std::move(*info));
    } else if (info.status().IsNotFound()) {
      missing.push_back(key);
      if (options.refuse_missing) break;
    } else {
      throw Refusal{"could not read NetworkAttachmentDefinition " + key + " (" +
                        info.status().ToString() + "); try again",
                    503};
    }
  }
  if (!missing.empty()) {
    const std::string what = "NetworkAttachmentDefinition" +
                             std::string(missing.size() > 1 ? "s " : " ") + Join(missing, ", ") +
                             (missing.size() > 1 ? " do" : " does") + " not exist: create " +
                             (missing.size() > 1 ? "them" : "it") + " or fix the pod's " +
                             kNetworksAnnotation + " annotation";
    if (options.refuse_missing) throw Refusal{what};
    // Tolerated: the networks that exist still get their resources.
    warnings.push_back(what + "; the pod gets no resource for " +
                       (missing.size() > 1 ? "them" : "it"));
  }

  const std::optional<std::string> pod_choice =
      StringAnnotation(pod, kResourceContainerAnnotation, "the pod's");
  if (pod_choice && pod_choice->empty()) {
    throw Refusal{std::string("the pod's annotation ") + kResourceContainerAnnotation +
                  " is empty: name a container or remove it"};
  }
  const json* spec = Member(pod, "spec");
  std::map<size_t, std::map<std::string, int64_t>> counts;  // container -> resource -> units
  std::set<std::string> injected;
  // Resource -> the containers that already ask for it, for attachments nothing places.
  std::optional<std::map<std::string, std::vector<size_t>>> asking;
  std::optional<ContainerIndex> index_cache;
  std::map<std::string, std::string> dra;  // network -> resource, allocated through DRA
  for (const NetworkRef& ref : *refs) {
    const auto it = found.find(ref.Key());
    if (it == found.end()) continue;  // missing, tolerated above
    const NadInfo& nad = it->second;
    if (nad.resource_name.empty()) continue;
    const Status name_ok = CheckExtendedResourceName(nad.resource_name);
    if (!name_ok.ok()) {
      throw Refusal{"network " + ref.Key() + ": its NetworkAttachmentDefinition's annotation " +
                    kResourceNameAnnotation + ": " + name_ok.message() + "; fix the NAD"};
    }
    if (AllocatedThroughDra(nad, ref.Key())) {
      dra.emplace(ref.Key(), nad.resource_name);
      continue;
    }
    long first_asking = -1;
    if (!pod_choice && !(nad.container && !nad.container->empty()) && spec) {
      const json* containers = Member(*spec, "containers");
      if (containers && containers->is_array()) {
        if (!asking) asking = AskedBy(*containers, ResourcesOf(found));
        const auto it = asking->find(nad.resource_name);
        if (it != asking->end() && !it->second.empty()) {
          first_asking = static_cast<long>(it->second.front());
        }
      }
    }
    const size_t index = ChooseContainer(spec ? *spec : json::object(), pod_choice, nad, ref.Key(),
                                         index_cache, first_asking);
    injected.insert(nad.resource_name);
    ++counts[index][nad.resource_name];
  }
  if (auto w = DraWithoutClaims(spec, dra)) warnings.push_back(std::move(*w));
  if (counts.empty()) {
    return Admit(dra.empty() ? "no network of the pod names a resource"
                             : "the pod's network resources come from DRA claims",
                 warnings);
  }

  MutateResult result;
  result.warnings = std::move(warnings);
  std::vector<size_t> chosen;
  const json& containers = spec->at("containers");
  const auto asked_by = AskedBy(containers, injected);
  for (const auto& [index, resources] : counts) {
    PatchContainer(containers, index, resources, asked_by, result.patch, result.warnings);
    chosen.push_back(index);
  }
  if (options.downward_api_volume) PatchPodNetInfo(*spec, chosen, result.patch, result.warnings);
  if (result.patch.empty()) result.message = "the pod already has its network resources";
  return result;
}

}  // namespace

std::string CutNadAnnotationValue(std::string value) {
  if (value.size() <= kMaxNadAnnotationValueBytes) return value;
  return "<cut: " + std::to_string(value.size()) + " bytes>";
}

NadInfo NadInfoFromObject(const json& nad) {
  NadInfo info;
  const json* metadata = Member(nad, "metadata");
  const json* annotations = metadata ? Member(*metadata, "annotations") : nullptr;
  const json* resource = annotations ? Member(*annotations, kResourceNameAnnotation) : nullptr;
  const json* container =
      annotations ? Member(*annotations, kResourceContainerAnnotation) : nullptr;
  const json* api = annotations ? Member(*annotations, kResourceApiAnnotation) : nullptr;
  if (resource && resource->is_string()) {
    info.resource_name = CutNadAnnotationValue(resource->get<std::string>());
  }
  if (container && container->is_string()) {
    info.container = CutNadAnnotationValue(container->get<std::string>());
  }
  if (api && api->is_string()) info.resource_api = CutNadAnnotationValue(api->get<std::string>());
  return info;
}

MutateResult Mutate(const json& pod, const std::string& namespace_hint, NadLookup& nads,
                    const MutateOptions& options) {
  MutateResult result;
  try {
    return MutateOrThrow(pod, namespace_hint, nads, options);
  } catch (const Refusal& r) {
    result.message = r.message;
    result.denial_code = r.code;
  } catch (const std::exception& e) {
    result.message = std::string("internal error while reading the pod: ") + e.what();
    result.denial_code = 500;
  }
  result.allowed = false;
  return result;
}

std::string EscapeJsonPointer(const std::string& token) {
  std::string out;
  out.reserve(token.size());
  for (char c : token) {
    if (c == '~') {
      out += "~0";
    } else if (c == '/') {
      out += "~1";
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace hcashare::injector
