// The API server's errors as typed values: an HTTP status code plus the `Status` object of
// the body ({"kind":"Status","status":"Failure","reason":"NotFound","message":...,"code":404})
// and the Retry-After header, turned into an ApiError, and from there into a Status that
// keeps the HTTP code (Status::protocol_code()) for the predicates below.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "common/status.h"

namespace hcashare::kube {

// The largest error body parsed; a longer one is summarised by its size.
inline constexpr size_t kMaxStatusBodyBytes = 64 * 1024;
// The longest message kept from a body.
inline constexpr size_t kMaxStatusMessageBytes = 1024;
// Retry-After values above this are capped to it.
inline constexpr int kMaxRetryAfterSeconds = 600;

// What the client should make of an error.
enum class ApiErrorKind {
  kBadRequest,       // 400
  kUnauthorized,     // 401: re-read the token, retry once
  kForbidden,        // 403: RBAC
  kNotFound,         // 404
  kConflict,         // 409: AlreadyExists or Conflict (stale resourceVersion, apply conflict)
  kGone,             // 410: Expired/Gone, re-list
  kInvalid,          // 422: the object is wrong
  kTooManyRequests,  // 429: wait retry_after_seconds
  kServerError,      // 5xx
  kOther,            // any other non-2xx code
};

// "NotFound", "Conflict", ...: a stable name for `kind`.
const char* ApiErrorKindName(ApiErrorKind kind);

// One failed API call.
struct ApiError {
  int http_code = 0;
  ApiErrorKind kind = ApiErrorKind::kOther;
  std::string reason;   // the Status's reason ("NotFound", "AlreadyExists", ...), or ""
  std::string message;  // the Status's message, or a summary of a body that is not one
  std::optional<int> retry_after_seconds;  // Retry-After, else details.retryAfterSeconds

  // A Status carrying this error: code by kind (NotFound, AlreadyExists for 409,
  // FailedPrecondition for 410, Unavailable for 429 and 5xx, PermissionDenied for 401/403,
  // InvalidArgument for 400/422), protocol_code() = http_code, and a message naming
  // `context` (e.g. "GET /api/v1/nodes/a"), the code, reason and message.
  Status ToStatus(const std::string& context) const;
};

// The kind for an HTTP status code.
ApiErrorKind KindOfHttpCode(int http_code);

// Parses an error answer: `http_code`, its body (a Status object, or anything else: a proxy's
// HTML page, an empty body) and its Retry-After header ("" when absent). Never fails: a body
// that is no Status, too large or not JSON becomes a summarised message.
ApiError ParseApiError(int http_code, std::string_view body, std::string_view retry_after);

// The same from a Status object already parsed (a watch's ERROR event): its `code` field
// gives the HTTP code.
ApiError ApiErrorFromStatusObject(const nlohmann::json& status);

// The HTTP code a Status from ApiError::ToStatus carries, or 0.
int HttpCodeOf(const Status& status);
// The Retry-After seconds a Status from ApiError::ToStatus carries (read back from its
// message's "(retry after N s)"), or nullopt.
std::optional<int> RetryAfterOf(const Status& status);
// Predicates on such a Status, by HTTP code.
bool IsNotFound(const Status& status);
bool IsConflict(const Status& status);
bool IsGone(const Status& status);
bool IsTooManyRequests(const Status& status);

}  // namespace hcashare::kube
