// The CNI verbs (CNI_COMMAND values).
#pragma once

#include <optional>
#include <string_view>

namespace hcashare::cni {

enum class Verb { kAdd, kDel, kCheck, kStatus, kGc, kVersion };

// Parses a CNI_COMMAND value: exactly "ADD", "DEL", "CHECK", "STATUS", "GC" or "VERSION"
// (case-sensitive, as in the spec). std::nullopt otherwise.
std::optional<Verb> ParseVerb(std::string_view command);

// The CNI_COMMAND spelling of `verb`, e.g. "ADD".
const char* VerbName(Verb verb);

}  // namespace hcashare::cni
