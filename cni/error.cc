#include "cni/error.h"

#include <cstdint>
#include <vector>

#include "cni/json_fields.h"

namespace hcashare::cni {

using nlohmann::json;

json ToJson(const CniError& error, std::string_view cni_version) {
  json out = {{"cniVersion", std::string(cni_version)}, {"code", error.code}, {"msg", error.msg}};
  if (!error.details.empty()) out["details"] = error.details;
  return out;
}

std::optional<CniError> ParseErrorJson(const json& j) {
  if (!j.is_object()) return std::nullopt;
  std::vector<std::string> problems;
  FieldReader reader(j, "", &problems);
  const auto code = reader.Integer("code", INT32_MIN, INT32_MAX, Need::kRequired);
  auto msg = reader.String("msg", Need::kRequired);
  auto details = reader.String("details");
  if (!problems.empty()) return std::nullopt;
  return CniError{static_cast<int>(*code), std::move(*msg), details.value_or("")};
}

int CniCodeFor(StatusCode code) {
  switch (code) {
    case StatusCode::kNotFound:
      return kErrDeviceNotFound;
    case StatusCode::kInvalidArgument:
      return kErrInvalidNetConf;
    case StatusCode::kAlreadyExists:
      return kErrDeviceBusy;
    case StatusCode::kFailedPrecondition:
    case StatusCode::kPermissionDenied:
      return kErrHostSetupFailed;
    case StatusCode::kUnavailable:
      return kErrTryAgainLater;
    case StatusCode::kIoError:
      return kErrIo;
    case StatusCode::kOk:
    case StatusCode::kUnimplemented:
    case StatusCode::kInternal:
      break;
  }
  return kErrInternal;
}

CniError FromStatus(const Status& status, std::string summary) {
  if (summary.empty()) return {CniCodeFor(status.code()), status.message(), ""};
  return {CniCodeFor(status.code()), std::move(summary), status.message()};
}

CniError StateError(const Status& status, std::string summary) {
  const int code = status.code() == StatusCode::kUnavailable ? kErrTryAgainLater : kErrIo;
  return {code, std::move(summary), status.message()};
}

}  // namespace hcashare::cni
