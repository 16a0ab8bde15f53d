// Status and Result<T>: the error values that cross every module edge.
//
// A Status is either OK or carries a code and a message. Result<T> holds a T or a
// non-OK Status. Both are cheap to copy and thread-compatible (no shared state).
// errno is turned into a Status in one place, ErrnoStatus().
#pragma once

#include <cassert>
#include <optional>
#include <string>
#include <utility>
#include <variant>

namespace hcashare {

// Error classes. They map onto gRPC codes and CNI error codes at the edges.
enum class StatusCode {
  kOk = 0,
  kNotFound,
  kInvalidArgument,
  kFailedPrecondition,
  kAlreadyExists,
  kPermissionDenied,
  kUnavailable,
  kUnimplemented,
  kIoError,
  kInternal,
};

// Returns a stable lower-case name for `code`, e.g. "not found".
const char* StatusCodeName(StatusCode code);

// The result of an operation that returns no value.
class [[nodiscard]] Status {
 public:
  // An OK status.
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status Ok() { return Status(); }
  static Status NotFound(std::string m) { return {StatusCode::kNotFound, std::move(m)}; }
  static Status InvalidArgument(std::string m) {
    return {StatusCode::kInvalidArgument, std::move(m)};
  }
  static Status FailedPrecondition(std::string m) {
    return {StatusCode::kFailedPrecondition, std::move(m)};
  }
  static Status AlreadyExists(std::string m) { return {StatusCode::kAlreadyExists, std::move(m)}; }
  static Status PermissionDenied(std::string m) {
    return {StatusCode::kPermissionDenied, std::move(m)};
  }
  static Status Unavailable(std::string m) { return {StatusCode::kUnavailable, std::move(m)}; }
  static Status Unimplemented(std::string m) { return {StatusCode::kUnimplemented, std::move(m)}; }
  static Status IoError(std::string m) { return {StatusCode::kIoError, std::move(m)}; }
  static Status Internal(std::string m) { return {StatusCode::kInternal, std::move(m)}; }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  bool IsNotFound() const { return code_ == StatusCode::kNotFound; }
  // A longer explanation kept apart from the message (a CNI error's "details"); "" when none.
  const std::string& details() const { return details_; }
  // The error code of the protocol that reports this status, for an edge that must not
  // derive it from code() (e.g. one of the CNI spec's own codes); std::nullopt otherwise.
  std::optional<int> protocol_code() const { return protocol_code_; }

  // Returns a copy whose message is "context: message" (a breadcrumb). OK stays OK.
  Status WithContext(const std::string& context) const;
  // Returns a copy with `details` (see details()). OK stays OK.
  Status WithDetails(std::string details) const;
  // Returns a copy carrying `code` for the edge that reports it (see protocol_code()). OK
  // stays OK.
  Status WithProtocolCode(int code) const;

  // "OK" or "<code name>: <message>", followed by ": <details>" when there are details.
  std::string ToString() const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
  std::string details_;
  std::optional<int> protocol_code_;
};

// Converts an errno value into a Status: ENOENT/ENOTDIR -> NotFound, EACCES/EPERM ->
// PermissionDenied, EEXIST -> AlreadyExists, EINVAL -> InvalidArgument,
// EAGAIN/ECONNREFUSED -> Unavailable, anything else -> IoError. `context` prefixes the message.
Status ErrnoStatus(int err, const std::string& context);

// A value of type T or a non-OK Status.
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}        // NOLINT(google-explicit-constructor)
  Result(Status status) : v_(std::move(status)) {  // NOLINT(google-explicit-constructor)
    assert(!std::get<Status>(v_).ok() && "Result constructed from an OK Status");
  }

  bool ok() const { return std::holds_alternative<T>(v_); }
  // The error, or OK when a value is held.
  Status status() const { return ok() ? Status() : std::get<Status>(v_); }

  // REQUIRES: ok().
  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

  // The value, or `fallback` on error.
  T value_or(T fallback) const { return ok() ? std::get<T>(v_) : std::move(fallback); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace hcashare

#define HCASHARE_CONCAT_INNER(a, b) a##b
#define HCASHARE_CONCAT(a, b) HCASHARE_CONCAT_INNER(a, b)

// Returns the Status from the enclosing function if `expr` is not OK.
#define RETURN_IF_ERROR(expr)        \
  do {                               \
    ::hcashare::Status _st = (expr); \
    if (!_st.ok()) return _st;       \
  } while (0)

// Evaluates a Result expression; on error returns its Status, else moves the value into `lhs`.
#define ASSIGN_OR_RETURN(lhs, expr)                                                             \
  auto HCASHARE_CONCAT(_res_, __LINE__) = (expr);                                               \
  if (!HCASHARE_CONCAT(_res_, __LINE__).ok()) return HCASHARE_CONCAT(_res_, __LINE__).status(); \
  lhs = std::move(HCASHARE_CONCAT(_res_, __LINE__)).value()
