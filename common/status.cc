#include "common/status.h"

#include <cerrno>
#include <cstring>
#include <utility>

namespace hcashare {

const char* StatusCodeName(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return "ok";
    case StatusCode::kNotFound:
      return "not found";
    case StatusCode::kInvalidArgument:
      return "invalid argument";
    case StatusCode::kFailedPrecondition:
      return "failed precondition";
    case StatusCode::kAlreadyExists:
      return "already exists";
    case StatusCode::kPermissionDenied:
      return "permission denied";
    case StatusCode::kUnavailable:
      return "unavailable";
    case StatusCode::kUnimplemented:
      return "unimplemented";
    case StatusCode::kIoError:
      return "I/O error";
    case StatusCode::kInternal:
      return "internal";
  }
  return "unknown";
}

Status Status::WithContext(const std::string& context) const {
  if (ok()) return *this;
  Status out = *this;
  out.message_ = context + ": " + message_;
  return out;
}

Status Status::WithDetails(std::string details) const {
  if (ok()) return *this;
  Status out = *this;
  out.details_ = std::move(details);
  return out;
}

Status Status::WithProtocolCode(int code) const {
  if (ok()) return *this;
  Status out = *this;
  out.protocol_code_ = code;
  return out;
}

std::string Status::ToString() const {
  if (ok()) return "OK";
  std::string out = std::string(StatusCodeName(code_)) + ": " + message_;
  if (!details_.empty()) out += ": " + details_;
  return out;
}

Status ErrnoStatus(int err, const std::string& context) {
  std::string msg = context + ": " + std::strerror(err);
  switch (err) {
    case ENOENT:
    case ENOTDIR:
      return Status::NotFound(msg);
    case EACCES:
    case EPERM:
      return Status::PermissionDenied(msg);
    case EEXIST:
      return Status::AlreadyExists(msg);
    case EINVAL:
      return Status::InvalidArgument(msg);
    case EAGAIN:
    case ECONNREFUSED:
      return Status::Unavailable(msg);
    default:
      return Status::IoError(msg);
  }
}

}  // namespace hcashare
