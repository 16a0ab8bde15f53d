// CNI errors. Inside the module every function returns Status or Result<T> (common/status.h);
// a failure becomes the spec's {"cniVersion","code","msg","details"} object only at the
// protocol edge, where the plugin prints it (plugin_main.cc, through FromStatus). The
// Status carries what that object needs: its message is `msg`, its details() `details`,
// and the code follows from its StatusCode (CniCodeFor) unless the Status carries one of
// the spec's own codes explicitly (CniStatus).
#pragma once

#include <optional>
#include <string>
#include <string_view>

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
// untrusted values as valid UTF-8; dump messages from elsewhere with DumpJson (json/dump.h).
nlohmann::json ToJson(const CniError& error, std::string_view cni_version);

// Reads an error object printed by a delegated plugin (e.g. IPAM): an object with an
// integer "code" and a string "msg". std::nullopt when `j` is not one.
std::optional<CniError> ParseErrorJson(const nlohmann::json& j);

// The CNI code for a Status code: NotFound -> 100, InvalidArgument -> 7,
// AlreadyExists -> 101, FailedPrecondition and PermissionDenied -> 102, Unavailable -> 11,
// IoError -> 5, anything else -> 103.
int CniCodeFor(StatusCode code);

// A Status that the edge reports as CNI error `code` with `msg` and `details`. Its
// StatusCode is the one CniCodeFor maps back to `code` where there is one (100 NotFound, 7
// InvalidArgument, ...); the spec's other codes (1, 2, 3, 4, 6, 50, 51, or a delegated
// plugin's own) are carried explicitly (Status::protocol_code()).
Status CniStatus(int code, std::string msg, std::string details = "");

// `status` (message and details kept) reported as CNI error `code`.
Status WithCniCode(const Status& status, int code);

// The CNI code the edge reports for a non-OK `status`: the code it carries explicitly, else
// CniCodeFor(status.code()).
int CniCodeOf(const Status& status);

// `cause` under a short summary: `summary` becomes the message and the cause's message (and
// details) the details; the code stays.
Status Summarize(const Status& cause, std::string summary);

// A failure of the plugin's own state directory (locks, records) under `summary`: a lock
// held too long by another invocation is transient (Unavailable: 11, try again later);
// anything else (read-only file system, permissions, a full disk) is an I/O failure (5).
Status StateError(const Status& cause, std::string summary);

// The error object for a non-OK `status` (code CniCodeOf, msg its message, details its
// details). Only the protocol edge calls it.
CniError FromStatus(const Status& status);

}  // namespace hcashare::cni
