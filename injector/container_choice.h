// Mutate's reading of the pod: the refusal its helpers throw, the pod's JSON members and
// annotations, and which container gets a network's resource (by the pod's annotation, the
// NAD's, else the first). Internal to injector/ (mutate.cc and container_choice.cc).
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "injector/mutate.h"

namespace hcashare::injector::detail {

// A refusal: thrown inside Mutate's helpers, turned into a MutateResult at the top.
struct Refusal {
  std::string message;
  int code = 400;
};

// The member `key` of object `parent`, or nullptr when absent or null.
const nlohmann::json* Member(const nlohmann::json& parent, const char* key);

// A string annotation of `object`, or nullopt; a non-string value is refused by name.
std::optional<std::string> StringAnnotation(const nlohmann::json& object, const char* key,
                                            const std::string& whose);

// The names of the containers in `list`, quoted and joined (at most 8, then "..."); "none"
// when there are none.
std::string ContainerNames(const nlohmann::json& list);

// Container name -> index in spec.containers, built on first use (one pass however many
// attachments name a container).
class ContainerIndex {
 public:
  explicit ContainerIndex(const nlohmann::json& containers) : containers_(containers) {}
  // The index of the first container named `name`, or -1.
  long Find(const std::string& name);

 private:
  const nlohmann::json& containers_;
  bool built_ = false;
  std::map<std::string, long> by_name_;
};

// The index in spec.containers that gets network `key`'s resource: the container the pod's
// annotation names (`pod_choice`), else the one the NAD's names, else the first container
// that already asks for the resource (`first_asking`, -1 for none: so a reinvocation after
// another webhook put a sidecar first finds it where it is), else the first. A name no app
// container has is refused, listing the pod's containers.
size_t ChooseContainer(const nlohmann::json& spec, const std::optional<std::string>& pod_choice,
                       const NadInfo& nad, const std::string& key,
                       std::optional<ContainerIndex>& index_cache, long first_asking);

}  // namespace hcashare::injector::detail
