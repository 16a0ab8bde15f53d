#include "doctor/pod_networks.h"

#include <exception>
#include <map>
#include <string>
#include <utility>

#include "injector/networks.h"
#include "json/dump.h"

namespace hcashare::doctor {
namespace {

using json = nlohmann::json;

CheckResult Result(const char* name, Verdict v, std::string reason, std::string fix = "") {
  CheckResult r;
  r.name = name;
  r.verdict = v;
  r.reason = std::move(reason);
  r.fix = std::move(fix);
  return r;
}

// resources.<kind>.<resource> as text: a string as it is, "none" when absent.
std::string Quantity(const json& resources, const char* kind, const std::string& resource) {
  if (!resources.is_object()) return "none";
  auto k = resources.find(kind);
  if (k == resources.end() || !k->is_object()) return "none";
  auto q = k->find(resource);
  if (q == k->end()) return "none";
  return q->is_string() ? q->get<std::string>() : q->dump();
}

// `obj[key]` when `obj` is an object that has it, else an empty object.
json Member(const json& obj, const char* key) {
  if (!obj.is_object()) return json::object();
  auto it = obj.find(key);
  return it == obj.end() ? json::object() : *it;
}

// spec.containers, or [] when the pod has none.
json Containers(const json& pod) {
  json c = Member(Member(pod, "spec"), "containers");
  return c.is_array() ? c : json::array();
}

}  // namespace

std::vector<CheckResult> CheckPodNetworks(const json& pod, injector::NadLookup& nads) {
  const json* annotations = nullptr;
  if (pod.contains("metadata") && pod["metadata"].is_object()) {
    auto a = pod["metadata"].find("annotations");
    if (a != pod["metadata"].end() && a->is_object()) annotations = &*a;
  }
  if (annotations == nullptr || !annotations->contains(injector::kNetworksAnnotation)) {
    return {Result("pod-networks", Verdict::kPass,
                   std::string("the pod names no networks (") + injector::kNetworksAnnotation +
                       "): nothing for the injector to add")};
  }
  injector::MutateOptions options;  // refuse what the webhook refuses by default
  const injector::MutateResult m = injector::Mutate(pod, "", nads, options);
  if (!m.allowed) {
    return {Result("pod-networks", Verdict::kFail, m.message,
                   "fix the pod's networks annotation or create the NetworkAttachmentDefinition "
                   "it names; hcashare-webhook refuses such a pod at creation (unless run with "
                   "--missing-network=warn), and Multus fails its sandbox")};
  }
  std::vector<CheckResult> out;
  out.push_back(Result("pod-networks", Verdict::kPass,
                       "every NetworkAttachmentDefinition the pod names exists"));
  json after;
  try {
    after = pod.patch(m.patch);
  } catch (const std::exception& e) {
    out.push_back(Result("pod-network-resources", Verdict::kFail,
                         std::string("cannot apply what the injector would add: ") + e.what()));
    return out;
  }
  const json before_containers = Containers(pod);
  const json after_containers = Containers(after);
  std::vector<std::string> requested;
  for (size_t i = 0; i < after_containers.size() && i < before_containers.size(); ++i) {
    const json was = Member(before_containers[i], "resources");
    const json now = Member(after_containers[i], "resources");
    const json name = Member(after_containers[i], "name");
    const std::string container =
        name.is_string() ? name.get<std::string>() : "#" + std::to_string(i);
    if (!now.contains("requests") || !now["requests"].is_object()) continue;
    for (const auto& [resource, quantity] : now["requests"].items()) {
      const std::string want =
          quantity.is_string() ? quantity.get<std::string>() : DumpJson(quantity);
      const std::string had_req = Quantity(was, "requests", resource);
      const std::string had_lim = Quantity(was, "limits", resource);
      const std::string want_lim = Quantity(now, "limits", resource);
      if (had_req == want && had_lim == want_lim) {
        if (was.contains("requests") && was["requests"].contains(resource)) {
          requested.push_back(container + ": " + resource + " " + want);
        }
        continue;
      }
      out.push_back(
          Result("pod-network-resources", Verdict::kFail,
                 "container " + container + " requests " + resource + ": " + had_req + ", limits " +
                     had_lim + "; its networks need " + want,
                 "hcashare-webhook would set requests and limits to " + want +
                     ": check that it runs and that its MutatingWebhookConfiguration selects this "
                     "pod's namespace, or write them in the pod spec"));
    }
  }
  if (out.size() == 1) {
    std::string list;
    for (const auto& r : requested) list += (list.empty() ? "" : ", ") + r;
    out.push_back(Result("pod-network-resources", Verdict::kPass,
                         list.empty() ? "the pod's networks ask for no resources"
                                      : "every network's resource is requested (" + list + ")"));
  }
  for (const auto& w : m.warnings) {
    out.push_back(Result("pod-networks-warning", Verdict::kWarn, w,
                         "hcashare-webhook gives this warning when it admits such a pod"));
  }
  return out;
}

}  // namespace hcashare::doctor
