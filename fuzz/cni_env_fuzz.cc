// Fuzzes the CNI environment parsers: ParseCniEnv on "NAME=VALUE" lines (one variable per
// line, as in environ) and ParseCniArgs on the whole input as a CNI_ARGS value.
// Invariants beyond "no crash":
//  - errors are code 4 (code 7 for a CNI_ARGS naming two pods) and print as valid JSON;
//  - an accepted environment holds only values its checks accept (identifier, interface
//    name, absolute paths, a CNI_COMMAND that names its verb);
//  - CNI_ARGS round-trips: the parsed pairs joined as "K=V;K=V" parse to the same pairs;
//  - CNI_ARGS is libcni's: repeated keys are accepted, so the input with its first pair
//    (other than IgnoreUnknown) repeated at the end still parses, unless that pair is a pod
//    key whose value changed (code 7).
#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "cni/env.h"
#include "cni/syntax.h"
#include "fuzz/cni_check.h"
#include "fuzz/fuzz_check.h"

namespace {

using hcashare::Result;
using Args = std::map<std::string, std::string>;

// "A=1\nB=2" -> {A: 1, B: 2}; lines without '=' are ignored, the last repeat wins.
hcashare::cni::EnvMap ToEnv(std::string_view text) {
  hcashare::cni::EnvMap env;
  while (!text.empty()) {
    const size_t nl = text.find('\n');
    const std::string_view line = text.substr(0, nl);
    const size_t eq = line.find('=');
    if (eq != std::string_view::npos) {
      env[std::string(line.substr(0, eq))] = std::string(line.substr(eq + 1));
    }
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
  return env;
}

bool IsEnvOrTwoPods(const hcashare::Status& status) {
  const int code = hcashare::cni::CniCodeOf(status);
  return code == hcashare::cni::kErrInvalidEnv || code == hcashare::cni::kErrInvalidNetConf;
}

void CheckArgsRoundTrip(const Result<Args>& args) {
  if (!args.ok()) {
    FUZZ_CHECK(IsEnvOrTwoPods(args.status()));
    hcashare::fuzz::CheckCniError(args.status());
    return;
  }
  std::string joined;
  for (const auto& [key, value] : *args) joined += (joined.empty() ? "" : ";") + key + "=" + value;
  const Result<Args> again = hcashare::cni::ParseCniArgs(joined);
  FUZZ_CHECK(again.ok());
  FUZZ_CHECK(*again == *args);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace cni = hcashare::cni;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const Result<Args> args = cni::ParseCniArgs(text);
  CheckArgsRoundTrip(args);
  const size_t semi = text.find(';');
  if (args.ok() && semi != std::string_view::npos &&
      text.substr(0, semi).rfind(cni::kArgIgnoreUnknown, 0) != 0) {
    // The first pair (not IgnoreUnknown) again at the end: it now wins, and only a pod key
    // may then differ.
    const Result<Args> again =
        cni::ParseCniArgs(std::string(text) + ";" + std::string(text.substr(0, semi)));
    FUZZ_CHECK(again.ok() || cni::CniCodeOf(again.status()) == cni::kErrInvalidNetConf);
  }

  const Result<cni::CniEnv> env = cni::ParseCniEnv(ToEnv(text));
  if (!env.ok()) {
    FUZZ_CHECK(IsEnvOrTwoPods(env.status()));
    hcashare::fuzz::CheckCniError(env.status());
    return 0;
  }
  FUZZ_CHECK(cni::ParseVerb(env->command) == env->verb);
  FUZZ_CHECK(env->container_id.empty() || !cni::CheckIdentifier(env->container_id));
  FUZZ_CHECK(env->ifname.empty() || !cni::CheckIfName(env->ifname));
  FUZZ_CHECK(env->netns.empty() || !cni::CheckAbsolutePath(env->netns));
  for (const std::string& dir : env->PathDirs()) FUZZ_CHECK(!dir.empty() && dir[0] == '/');
  CheckArgsRoundTrip(env->cni_args);
  return 0;
}
