// Extended resource names and their quantities, checked as the API server checks them for a
// container's requests and limits, so that the webhook refuses (with a message that says
// what to fix) what would otherwise fail later and less clearly.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "common/status.h"

namespace hcashare::injector {

// OK when `name` is a Kubernetes extended resource name: "domain/name" with a DNS-1123
// subdomain as domain (short enough that "requests.<domain>" is one too, for quota) and a
// qualified-name part (1-63 of [A-Za-z0-9-_.], starting and ending alphanumeric). Refused,
// as Kubernetes refuses them as extended resources: names without a domain (cpu, memory,
// ...), names containing "kubernetes.io/" (the native resources' domain), and names
// starting with "requests.". InvalidArgument naming `name` and the rule otherwise.
Status CheckExtendedResourceName(std::string_view name);

// Reads a resource quantity that must be a whole number, as an extended resource's must:
// a string in Kubernetes' quantity syntax ("2", "2k", "1Ki", "2e3", "2000m", "1.5k") or a JSON
// number. Suffixes are honoured because the API server writes quantities in canonical
// form, so 2000 devices arrive as "2k". InvalidArgument (saying why) for text that is not a
// quantity, a negative or fractional value, or one beyond INT64_MAX.
Result<int64_t> ParseWholeQuantity(const nlohmann::json& value);
// As above, for the text of a quantity.
Result<int64_t> ParseWholeQuantity(std::string_view text);

}  // namespace hcashare::injector
