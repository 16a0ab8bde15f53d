// CNI errors: the {"cniVersion","code","msg","details"} object a plugin prints on failure,
// the spec's well-known codes plus hcashare's own (100+), and CniOr<T>, a value or a
// CniError, which is what every function of this module returns at its edge.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

#include <nlohmann/json.hpp>

#include "common/status.h"

namespace hcashare::cni {

// Codes 0..99 are reserved by the CNI spec.
inline constexpr int kErrIncompatibleVersion = 1;
inline constexpr int kErrUnsupportedField = 2;
inline constexpr int kErrUnknownContainer = 3;  // container unknown or does not exist
inline constexpr int kErrInvalidEnv = 4;        // invalid CNI_* environment variables
inline constexpr int kErrIo = 5;                // I/O failure
inline constexpr int kErrDecode = 6;            // failed to decode content (stdin, results)
inline constexpr int kErrInvalidNetConf = 7;    // invalid network configuration
inline constexpr int kErrTryAgainLater = 11;
inline constexpr int kErrPluginNotAvailable = 50;   // STATUS: cannot serve ADD
inline constexpr int kErrLimitedConnectivity = 51;  // STATUS: not available, limited connectivity
// hcashare's own codes.
inline constexpr int kErrDeviceNotFound = 100;
inline constexpr int kErrDeviceBusy = 101;
inline constexpr int kErrHostSetupFailed = 102;
inline constexpr int kErrInternal = 103;

// A CNI error as printed on stdout. `msg` is a short summary; `details` is optional.
struct CniError {
  int code = kErrInternal;
  std::string msg;
  std::string details;
};

// The error object for `cni_version` (pass the configuration's version, or
// kLatestVersion when none is known). `details` is omitted when empty. This module quotes
// untrusted values as valid UTF-8; dump messages from elsewhere with error_handler_t::replace.
nlohmann::json ToJson(const CniError& error, std::string_view cni_version);

// Reads an error object printed by a delegated plugin (e.g. IPAM): an object with an
// integer "code" and a string "msg". std::nullopt when `j` is not one.
std::optional<CniError> ParseErrorJson(const nlohmann::json& j);

// The CNI code for a Status code: NotFound -> 100, InvalidArgument -> 7,
// AlreadyExists -> 101, FailedPrecondition and PermissionDenied -> 102, Unavailable -> 11,
// IoError -> 5, anything else -> 103.
int CniCodeFor(StatusCode code);

// A CniError for a non-OK `status` (code from CniCodeFor). With a `summary` it becomes
// `msg` and the status message `details`; otherwise `msg` is the status message.
CniError FromStatus(const Status& status, std::string summary = "");

// A CniError for a failure of the plugin's own state directory (locks, records): a lock
// held too long by another invocation is transient (11, try again later); anything else
// (read-only file system, permissions, a full disk) is an I/O failure (5).
CniError StateError(const Status& status, std::string summary);

// A T or a CniError. Cheap to move; thread-compatible.
template <typename T>
class [[nodiscard]] CniOr {
 public:
  CniOr(T value) : v_(std::move(value)) {}         // NOLINT(google-explicit-constructor)
  CniOr(CniError error) : v_(std::move(error)) {}  // NOLINT(google-explicit-constructor)

  bool ok() const { return std::holds_alternative<T>(v_); }
  // REQUIRES: !ok().
  const CniError& error() const { return std::get<CniError>(v_); }
  // REQUIRES: ok().
  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  std::variant<T, CniError> v_;
};

// The outcome of a check with no value: the error, or std::nullopt when it passed.
using MaybeError = std::optional<CniError>;

}  // namespace hcashare::cni
