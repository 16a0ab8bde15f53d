#include "cni/error.h"

#include <cstdint>
#include <vector>

#include "json/fields.h"

namespace hcashare::cni {

using nlohmann::json;

json ToJson(const CniError& error, std::string_view cni_version) {
  json out = {{"cniVersion", std::string(cni_version)}, {"code", error.code}, {"msg", error.msg}};
  if (!error.details.empty()) out["details"] = error.details;
  return out;
}

std::optional<CniError> ParseErrorJson(const json& j) {
  if (!j.is_object()) return std::nullopt;
  jsonin::IssueList problems;
  jsonin::FieldReader reader(j, "", &problems);
  const auto code = reader.Integer("code", INT32_MIN, INT32_MAX, jsonin::Need::kRequired);
  auto msg = reader.String("msg", jsonin::Need::kRequired);
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

namespace {

// The StatusCode of a CNI error with `code`: the one CniCodeFor maps back to it, else the
// closest class (the spec's input errors are invalid arguments, an unknown container is
// not found, STATUS's "not available" is unavailable).
StatusCode StatusCodeForCni(int code) {
  switch (code) {
    case kErrIncompatibleVersion:
    case kErrUnsupportedField:
    case kErrInvalidEnv:
    case kErrDecode:
    case kErrInvalidNetConf:
      return StatusCode::kInvalidArgument;
    case kErrUnknownContainer:
    case kErrDeviceNotFound:
      return StatusCode::kNotFound;
    case kErrIo:
      return StatusCode::kIoError;
    case kErrTryAgainLater:
    case kErrPluginNotAvailable:
    case kErrLimitedConnectivity:
      return StatusCode::kUnavailable;
    case kErrDeviceBusy:
      return StatusCode::kAlreadyExists;
    case kErrHostSetupFailed:
      return StatusCode::kFailedPrecondition;
    default:
      return StatusCode::kInternal;
  }
}

}  // namespace

Status CniStatus(int code, std::string msg, std::string details) {
  return WithCniCode(Status(StatusCodeForCni(code), std::move(msg)).WithDetails(std::move(details)),
                     code);
}

Status WithCniCode(const Status& status, int code) {
  return CniCodeFor(status.code()) == code ? status : status.WithProtocolCode(code);
}

int CniCodeOf(const Status& status) {
  return status.protocol_code().value_or(CniCodeFor(status.code()));
}

Status Summarize(const Status& cause, std::string summary) {
  std::string details = cause.message();
  if (!cause.details().empty()) details += ": " + cause.details();
  Status out = Status(cause.code(), std::move(summary)).WithDetails(std::move(details));
  return cause.protocol_code() ? out.WithProtocolCode(*cause.protocol_code()) : out;
}

Status StateError(const Status& cause, std::string summary) {
  const StatusCode code =
      cause.code() == StatusCode::kUnavailable ? StatusCode::kUnavailable : StatusCode::kIoError;
  return Status(code, std::move(summary)).WithDetails(cause.message());
}

CniError FromStatus(const Status& status) {
  return {CniCodeOf(status), status.message(), status.details()};
}

}  // namespace hcashare::cni
