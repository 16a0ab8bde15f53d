#include "cni/env.h"

#include <optional>
#include <utility>

#include "cni/error.h"
#include "cni/syntax.h"
#include "common/strings.h"
#include "json/fields.h"

extern char** environ;

namespace hcashare::cni {

EnvMap ProcessEnvironment() {
  EnvMap env;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry(*e);
    const size_t eq = entry.find('=');
    if (eq != std::string::npos) env[entry.substr(0, eq)] = entry.substr(eq + 1);
  }
  return env;
}

namespace {

enum class Use { kRequired, kOptional };

// One variable a verb reads: where it goes and how it is checked.
struct VarRule {
  const char* name;
  std::string CniEnv::*field;
  Use use;
  Problem (*check)(std::string_view);
};

Problem CheckCniPath(std::string_view s) {
  for (const std::string& dir : SplitPathList(s)) {
    if (Problem problem = CheckAbsolutePath(dir)) {
      return "has a directory " + jsonin::Quote(dir) + " that " + *problem;
    }
  }
  return std::nullopt;
}

// The variables `verb` reads, beyond CNI_COMMAND.
std::vector<VarRule> RulesFor(Verb verb) {
  const VarRule container_id{"CNI_CONTAINERID", &CniEnv::container_id, Use::kRequired,
                             CheckIdentifier};
  const VarRule ifname{"CNI_IFNAME", &CniEnv::ifname, Use::kRequired, CheckIfName};
  // Its values (the pod's name, namespace, UID) go into the state files: JSON, so UTF-8.
  const VarRule args{"CNI_ARGS", &CniEnv::args, Use::kOptional, CheckUtf8};
  VarRule path{"CNI_PATH", &CniEnv::path, Use::kRequired, CheckCniPath};
  VarRule netns{"CNI_NETNS", &CniEnv::netns, Use::kRequired, CheckAbsolutePath};
  switch (verb) {
    case Verb::kAdd:
    case Verb::kCheck:
      return {container_id, netns, ifname, args, path};
    case Verb::kDel:
      netns.use = Use::kOptional;
      return {container_id, netns, ifname, args, path};
    case Verb::kGc:
      return {path};
    case Verb::kStatus:
      path.use = Use::kOptional;
      return {path};
    case Verb::kVersion:
      break;
  }
  return {};
}

}  // namespace

std::vector<std::string> SplitPathList(std::string_view list) {
  std::vector<std::string> dirs;
  size_t start = 0;
  while (start <= list.size()) {
    size_t colon = list.find(':', start);
    if (colon == std::string_view::npos) colon = list.size();
    if (colon > start) dirs.emplace_back(list.substr(start, colon - start));
    start = colon + 1;
  }
  return dirs;
}

std::string CniEnv::Arg(std::string_view key) const {
  const auto it = cni_args.find(std::string(key));
  return it == cni_args.end() ? "" : it->second;
}

namespace {

// CNI_ARGS keys whose repeats must agree: they name the pod an attachment is for, and the
// state, the allocation check and the device lookup all key on them.
constexpr std::string_view kIdentityKeys[] = {kArgPodNamespace, kArgPodName, kArgPodUid,
                                              kArgPodInfraContainerId};

// The keys hcashare reads (libcni's "fields of the args struct").
constexpr std::string_view kKnownKeys[] = {kArgIgnoreUnknown, kArgPodNamespace,        kArgPodName,
                                           kArgPodUid,        kArgPodInfraContainerId, kArgMac,
                                           kArgGuid};

template <size_t N>
bool IsOneOf(std::string_view key, const std::string_view (&set)[N]) {
  for (std::string_view k : set) {
    if (k == key) return true;
  }
  return false;
}

}  // namespace

std::optional<bool> ParseArgsBool(std::string_view value) {
  const std::string lower = ToLowerAscii(value);
  if (lower == "1" || lower == "true") return true;
  if (lower == "0" || lower == "false") return false;
  return std::nullopt;
}

Result<std::map<std::string, std::string>> ParseCniArgs(std::string_view args) {
  std::map<std::string, std::string> out;
  if (args.empty()) return out;
  std::vector<std::string> unknown;
  for (const std::string& pair : SplitOn(args, ';')) {
    const size_t eq = pair.find('=');
    if (eq == std::string::npos || pair.find('=', eq + 1) != std::string::npos) {
      return CniStatus(kErrInvalidEnv, "CNI_ARGS has an invalid pair " + jsonin::Quote(pair) +
                                           " (want KEY=VALUE, one '=')");
    }
    std::string key = pair.substr(0, eq);
    std::string value = pair.substr(eq + 1);
    if (!IsOneOf(key, kKnownKeys)) {
      unknown.push_back(pair);
      continue;
    }
    if (key == kArgIgnoreUnknown && !ParseArgsBool(value)) {
      return CniStatus(kErrInvalidEnv, "CNI_ARGS " + jsonin::Quote(pair) +
                                           ": IgnoreUnknown must be 1, true, 0 or false "
                                           "(any case)");
    }
    const auto it = out.find(key);
    if (it != out.end() && it->second != value && IsOneOf(key, kIdentityKeys)) {
      return CniStatus(kErrInvalidNetConf,
                       "CNI_ARGS names two pods: " + key + " is " + jsonin::Quote(it->second) +
                           " and then " + jsonin::Quote(value) +
                           " (a repeated pod identity key must repeat its value)");
    }
    out[std::move(key)] = std::move(value);  // a repeated key: the last value wins
  }
  const auto ignore = out.find(std::string(kArgIgnoreUnknown));
  if (!unknown.empty() && (ignore == out.end() || !*ParseArgsBool(ignore->second))) {
    constexpr size_t kNamed = 8;  // CNI_ARGS may be 128 KiB: name the first few
    std::vector<std::string> quoted;
    for (size_t i = 0; i < unknown.size() && i < kNamed; ++i) {
      quoted.push_back(jsonin::Quote(unknown[i]));
    }
    if (unknown.size() > kNamed)
      quoted.push_back(std::to_string(unknown.size() - kNamed) + " more");
    return CniStatus(kErrInvalidEnv, "CNI_ARGS has unknown keys in " + Join(quoted, ", ") +
                                         " and IgnoreUnknown is not true");
  }
  return out;
}

Result<CniEnv> ParseCniEnv(const EnvMap& env) {
  auto value_of = [&env](const char* name) -> std::string {
    const auto it = env.find(name);
    return it == env.end() ? "" : it->second;
  };
  CniEnv out;
  out.command = value_of("CNI_COMMAND");
  if (out.command.empty()) return CniStatus(kErrInvalidEnv, "CNI_COMMAND is not set");
  const std::optional<Verb> verb = ParseVerb(out.command);
  if (!verb) {
    return CniStatus(kErrInvalidEnv, "CNI_COMMAND " + jsonin::Quote(out.command) +
                                         " must be one of ADD, DEL, CHECK, STATUS, GC, VERSION");
  }
  out.verb = *verb;

  std::vector<std::string> problems;
  for (const VarRule& rule : RulesFor(out.verb)) {
    std::string value = value_of(rule.name);
    if (value.empty()) {
      if (rule.use == Use::kRequired) {
        problems.push_back(std::string(rule.name) + " is required for " + out.command);
      }
      continue;
    }
    if (Problem problem = rule.check(value)) {
      problems.push_back(std::string(rule.name) + " " + jsonin::Quote(value) + " " + *problem);
      continue;
    }
    out.*rule.field = std::move(value);
  }
  if (!out.args.empty()) {
    Result<std::map<std::string, std::string>> args = ParseCniArgs(out.args);
    if (args.ok()) {
      out.cni_args = std::move(args).value();
    } else if (problems.empty() && CniCodeOf(args.status()) != kErrInvalidEnv) {
      return args.status();  // well-formed, but names two pods (code 7)
    } else {
      problems.push_back(args.status().message());
    }
  }
  if (!problems.empty()) return CniStatus(kErrInvalidEnv, Join(problems, "; "));
  return out;
}

}  // namespace hcashare::cni
