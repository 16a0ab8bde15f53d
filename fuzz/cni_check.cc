#include "fuzz/cni_check.h"

#include <optional>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "cni/version.h"
#include "fuzz/fuzz_check.h"
#include "json/dump.h"

namespace hcashare::fuzz {

using nlohmann::json;

void CheckCniError(const Status& status) {
  FUZZ_CHECK(!status.ok());
  const cni::CniError error = cni::FromStatus(status);
  static const std::set<int> kCodes = {cni::kErrIncompatibleVersion,
                                       cni::kErrUnsupportedField,
                                       cni::kErrUnknownContainer,
                                       cni::kErrInvalidEnv,
                                       cni::kErrIo,
                                       cni::kErrDecode,
                                       cni::kErrInvalidNetConf,
                                       cni::kErrTryAgainLater,
                                       cni::kErrDeviceNotFound,
                                       cni::kErrInternal};
  FUZZ_CHECK(kCodes.count(error.code) == 1);
  FUZZ_CHECK(!error.msg.empty());
  // Printed as cni/main.cc prints it (messages from other modules, e.g. a JSON parser's,
  // may hold invalid UTF-8), it must read back as an error object with the same code.
  const std::string printed = DumpJson(cni::ToJson(error, cni::kLatestVersion));
  const std::optional<cni::CniError> back = cni::ParseErrorJson(json::parse(printed));
  FUZZ_CHECK(back && back->code == error.code);
}

void CheckResultRoundTrip(const cni::CniResult& result) {
  for (const std::string& version : cni::SupportedVersions()) {
    Result<json> j = cni::ToJson(result, version);
    FUZZ_CHECK(j.ok());
    FUZZ_CHECK(!j->dump().empty());
  }
  const std::string version =
      result.cni_version.empty() ? std::string(cni::kLatestVersion) : result.cni_version;
  const Result<json> first = cni::ToJson(result, version);
  FUZZ_CHECK(first.ok());
  const Result<cni::CniResult> parsed = cni::ParseResult(*first);
  FUZZ_CHECK(parsed.ok());
  const Result<json> second = cni::ToJson(*parsed, version);
  FUZZ_CHECK(second.ok());
  FUZZ_CHECK(*first == *second);

  const Result<json> chained = cni::ToJson(cni::ChainResult(result, result), cni::kLatestVersion);
  FUZZ_CHECK(chained.ok());
  FUZZ_CHECK(cni::ParseResult(*chained).ok());
}

}  // namespace hcashare::fuzz
