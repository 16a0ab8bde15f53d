#include "kube/status_error.h"

#include <algorithm>

namespace hcashare::kube {
namespace {

using json = nlohmann::json;

// `s` cut to kMaxStatusMessageBytes, control characters as spaces.
std::string Printable(std::string_view s) {
  std::string out(s.substr(0, kMaxStatusMessageBytes));
  for (char& c : out) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = ' ';
  }
  if (s.size() > kMaxStatusMessageBytes) out += "...";
  return out;
}

// A non-negative decimal number of seconds, capped; nullopt for anything else (an HTTP date
// is not honoured, as in client-go).
std::optional<int> ParseSeconds(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  if (s.empty() || s.size() > 9 || s.find_first_not_of("0123456789") != std::string_view::npos) {
    return std::nullopt;
  }
  return std::min(std::stoi(std::string(s)), kMaxRetryAfterSeconds);
}

// The string at obj[key], or "".
std::string StringField(const json& obj, const char* key) {
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? Printable(it->get<std::string>()) : std::string();
}

// Fills `e` from a Status object (reason, message, details.retryAfterSeconds).
void FromStatusObject(const json& status, ApiError* e) {
  e->reason = StringField(status, "reason");
  e->message = StringField(status, "message");
  auto details = status.find("details");
  if (details != status.end() && details->is_object()) {
    auto ra = details->find("retryAfterSeconds");
    if (ra != details->end() && ra->is_number_integer() && ra->get<int64_t>() >= 0) {
      e->retry_after_seconds =
          static_cast<int>(std::min<int64_t>(ra->get<int64_t>(), kMaxRetryAfterSeconds));
    }
  }
}

bool IsStatusObject(const json& j) {
  return j.is_object() && j.value("kind", std::string()) == "Status";
}

}  // namespace

const char* ApiErrorKindName(ApiErrorKind kind) {
  switch (kind) {
    case ApiErrorKind::kBadRequest:
      return "BadRequest";
    case ApiErrorKind::kUnauthorized:
      return "Unauthorized";
    case ApiErrorKind::kForbidden:
      return "Forbidden";
    case ApiErrorKind::kNotFound:
      return "NotFound";
    case ApiErrorKind::kConflict:
      return "Conflict";
    case ApiErrorKind::kGone:
      return "Gone";
    case ApiErrorKind::kInvalid:
      return "Invalid";
    case ApiErrorKind::kTooManyRequests:
      return "TooManyRequests";
    case ApiErrorKind::kServerError:
      return "ServerError";
    case ApiErrorKind::kOther:
      return "Other";
  }
  return "Other";
}

ApiErrorKind KindOfHttpCode(int http_code) {
  switch (http_code) {
    case 400:
      return ApiErrorKind::kBadRequest;
    case 401:
      return ApiErrorKind::kUnauthorized;
    case 403:
      return ApiErrorKind::kForbidden;
    case 404:
      return ApiErrorKind::kNotFound;
    case 409:
      return ApiErrorKind::kConflict;
    case 410:
      return ApiErrorKind::kGone;
    case 422:
      return ApiErrorKind::kInvalid;
    case 429:
      return ApiErrorKind::kTooManyRequests;
    default:
      break;
  }
  return http_code >= 500 && http_code <= 599 ? ApiErrorKind::kServerError : ApiErrorKind::kOther;
}

ApiError ParseApiError(int http_code, std::string_view body, std::string_view retry_after) {
  ApiError e;
  e.http_code = http_code;
  e.kind = KindOfHttpCode(http_code);
  if (body.size() > kMaxStatusBodyBytes) {
    e.message = "(an error body of " + std::to_string(body.size()) + " bytes, not parsed)";
  } else {
    json parsed = json::parse(body.begin(), body.end(), nullptr, /*allow_exceptions=*/false);
    if (IsStatusObject(parsed)) {
      FromStatusObject(parsed, &e);
    } else {
      e.message = Printable(body);
    }
  }
  if (std::optional<int> s = ParseSeconds(retry_after)) e.retry_after_seconds = s;
  return e;
}

ApiError ApiErrorFromStatusObject(const json& status) {
  ApiError e;
  if (status.is_object()) {
    auto code = status.find("code");
    if (code != status.end() && code->is_number_integer()) e.http_code = code->get<int>();
    FromStatusObject(status, &e);
  }
  e.kind = KindOfHttpCode(e.http_code);
  if (e.message.empty() && !IsStatusObject(status)) e.message = "not a Status object";
  return e;
}

Status ApiError::ToStatus(const std::string& context) const {
  StatusCode code = StatusCode::kUnavailable;
  switch (kind) {
    case ApiErrorKind::kBadRequest:
    case ApiErrorKind::kInvalid:
      code = StatusCode::kInvalidArgument;
      break;
    case ApiErrorKind::kUnauthorized:
    case ApiErrorKind::kForbidden:
      code = StatusCode::kPermissionDenied;
      break;
    case ApiErrorKind::kNotFound:
      code = StatusCode::kNotFound;
      break;
    case ApiErrorKind::kConflict:
      code =
          reason == "AlreadyExists" ? StatusCode::kAlreadyExists : StatusCode::kFailedPrecondition;
      break;
    case ApiErrorKind::kGone:
      code = StatusCode::kFailedPrecondition;
      break;
    case ApiErrorKind::kTooManyRequests:
    case ApiErrorKind::kServerError:
      code = StatusCode::kUnavailable;
      break;
    case ApiErrorKind::kOther:
      code = StatusCode::kInternal;
      break;
  }
  std::string m = context + ": HTTP " + std::to_string(http_code);
  if (!reason.empty()) m += " " + reason;
  if (!message.empty()) m += ": " + message;
  if (retry_after_seconds) m += " (retry after " + std::to_string(*retry_after_seconds) + " s)";
  return Status(code, std::move(m)).WithProtocolCode(http_code);
}

std::optional<int> RetryAfterOf(const Status& status) {
  if (HttpCodeOf(status) == 0) return std::nullopt;
  static const std::string kMark = " (retry after ";
  const std::string& m = status.message();
  const size_t at = m.rfind(kMark);
  if (at == std::string::npos) return std::nullopt;
  const size_t end = m.find(" s)", at);
  if (end == std::string::npos) return std::nullopt;
  return ParseSeconds(std::string_view(m).substr(at + kMark.size(), end - at - kMark.size()));
}

int HttpCodeOf(const Status& status) { return status.protocol_code().value_or(0); }
bool IsNotFound(const Status& status) { return HttpCodeOf(status) == 404; }
bool IsConflict(const Status& status) { return HttpCodeOf(status) == 409; }
bool IsGone(const Status& status) { return HttpCodeOf(status) == 410; }
bool IsTooManyRequests(const Status& status) { return HttpCodeOf(status) == 429; }

}  // namespace hcashare::kube
