#include "injector/container_choice.h"

#include <vector>

#include "common/strings.h"
#include "json/fields.h"

namespace hcashare::injector::detail {

using jsonin::Quote;
using nlohmann::json;

const json* Member(const json& parent, const char* key) {
  if (!parent.is_object()) return nullptr;
  const auto it = parent.find(key);
  return it == parent.end() || it->is_null() ? nullptr : &*it;
}

std::optional<std::string> StringAnnotation(const json& object, const char* key,
                                            const std::string& whose) {
  const json* metadata = Member(object, "metadata");
  const json* annotations = metadata ? Member(*metadata, "annotations") : nullptr;
  const json* value = annotations ? Member(*annotations, key) : nullptr;
  if (!value) return std::nullopt;
  if (!value->is_string()) {
    throw Refusal{whose + " annotation " + key + " is " + jsonin::DescribeValue(*value) +
                  "; annotation values are strings"};
  }
  return value->get<std::string>();
}

namespace {

// Container names listed in a message, at most.
constexpr size_t kMaxNamesListed = 8;

// Index in `list` (an array of containers) of the one named `name`, or -1.
long FindContainer(const json* list, const std::string& name) {
  if (!list || !list->is_array()) return -1;
  for (size_t i = 0; i < list->size(); ++i) {
    const json* n = Member((*list)[i], "name");
    if (n && n->is_string() && n->get_ref<const std::string&>() == name) {
      return static_cast<long>(i);
    }
  }
  return -1;
}

}  // namespace

std::string ContainerNames(const json& list) {
  std::vector<std::string> names;
  for (const json& c : list) {
    if (names.size() == kMaxNamesListed) {
      names.push_back("...");
      break;
    }
    const json* name = Member(c, "name");
    names.push_back(name && name->is_string() ? Quote(name->get<std::string>()) : "(unnamed)");
  }
  return names.empty() ? "none" : Join(names, ", ");
}

long ContainerIndex::Find(const std::string& name) {
  if (!built_) {
    for (size_t i = containers_.size(); i-- > 0;) {  // the first of equal names wins
      const json* n = Member(containers_[i], "name");
      if (n && n->is_string()) by_name_[n->get<std::string>()] = static_cast<long>(i);
    }
    built_ = true;
  }
  const auto it = by_name_.find(name);
  return it == by_name_.end() ? -1 : it->second;
}

size_t ChooseContainer(const json& spec, const std::optional<std::string>& pod_choice,
                       const NadInfo& nad, const std::string& key,
                       std::optional<ContainerIndex>& index_cache, long first_asking) {
  const json* containers = Member(spec, "containers");
  if (containers && !containers->is_array()) {
    throw Refusal{"spec.containers is " + jsonin::DescribeValue(*containers) + ", not an array"};
  }
  if (!containers || containers->empty()) {
    throw Refusal{"network " + key + " needs resource " + Quote(nad.resource_name) +
                  " but the pod has no containers (spec.containers) to give it to"};
  }
  std::string name, source;
  if (pod_choice) {
    name = *pod_choice;
    source = std::string("the pod's annotation ") + kResourceContainerAnnotation;
  } else if (nad.container && !nad.container->empty()) {
    name = *nad.container;
    source = "network " + key + "'s NetworkAttachmentDefinition annotation " +
             kResourceContainerAnnotation;
  } else {
    return first_asking >= 0 ? static_cast<size_t>(first_asking) : 0;
  }
  if (!index_cache) index_cache.emplace(*containers);
  const long index = index_cache->Find(name);
  if (index >= 0) return static_cast<size_t>(index);
  const json* init = Member(spec, "initContainers");
  if (FindContainer(init, name) >= 0) {
    throw Refusal{source + " names init container " + Quote(name) +
                  ", which cannot take network resources (an init container ends before the "
                  "networks are used): name one of spec.containers (" +
                  ContainerNames(*containers) + ")"};
  }
  throw Refusal{source + " names container " + Quote(name) +
                ", which the pod does not have: name one of spec.containers (" +
                ContainerNames(*containers) + ")"};
}

}  // namespace hcashare::injector::detail
