// Levelled, structured logging to stderr as text or JSON lines.
//
// Each record has a level, a message and optional key/value fields. Configuration is
// process-wide (the daemon sets it once from flags); logging is thread-safe.
//
// Field conventions: an error (a failed operation, a rejected input) goes under the key
// `error`; counts, sizes and durations are passed as numbers and flags as bools, so that a
// JSON record carries them as JSON numbers and booleans.
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "common/status.h"

namespace hcashare {

enum class LogLevel { kDebug = 0, kInfo = 1, kWarn = 2, kError = 3 };
enum class LogFormat { kText, kJson };

// A field's value: a string, an integer, a floating-point number, a boolean or a list of
// strings. Built implicitly from each, so `{"port", 9402}`, `{"ok", true}` and
// `{"pci", addr}` all work. JSON records keep the type; text records print numbers and
// booleans bare and a list as a JSON array.
class LogValue {
 public:
  // The held value.
  using Variant =
      std::variant<std::string, int64_t, uint64_t, double, bool, std::vector<std::string>>;

  // A string.
  LogValue(std::string s) : v_(std::move(s)) {}
  // A string; nullptr is "".
  LogValue(const char* s) : v_(std::string(s != nullptr ? s : "")) {}
  // A string.
  LogValue(std::string_view s) : v_(std::string(s)) {}
  // A list of strings (a JSON array).
  LogValue(std::vector<std::string> list) : v_(std::move(list)) {}
  // A boolean (JSON true/false).
  LogValue(bool b) : v_(b) {}
  // A floating-point number (JSON number; NaN and infinities become null).
  LogValue(double d) : v_(d) {}
  // An integer of any width and signedness (JSON number); not `char`, which is ambiguous.
  template <typename T, std::enable_if_t<std::is_integral_v<T> && !std::is_same_v<T, bool> &&
                                             !std::is_same_v<T, char>,
                                         int> = 0>
  LogValue(T n) {
    if constexpr (std::is_signed_v<T>) {
      v_ = static_cast<int64_t>(n);
    } else {
      v_ = static_cast<uint64_t>(n);
    }
  }

  // The held value.
  const Variant& value() const { return v_; }

 private:
  Variant v_;
};

// One key/value pair attached to a record.
using LogField = std::pair<std::string_view, LogValue>;

// Parses "debug", "info", "warn"/"warning", "error". InvalidArgument otherwise.
Result<LogLevel> ParseLogLevel(std::string_view s);
// Parses "text" or "json". InvalidArgument otherwise.
Result<LogFormat> ParseLogFormat(std::string_view s);

// Records below `level` are dropped. Default: kInfo.
void SetLogLevel(LogLevel level);
// Default: kText.
void SetLogFormat(LogFormat format);
// The current format.
LogFormat GetLogFormat();
// Replaces the output (default: a line to stderr). Pass nullptr to restore stderr.
// Used by tests to capture records.
void SetLogSink(std::function<void(const std::string& line)> sink);
// True when a record at `level` would be written.
bool LogEnabled(LogLevel level);

// Writes one record.
void Log(LogLevel level, std::string_view msg, std::initializer_list<LogField> fields = {});

inline void LogDebug(std::string_view m, std::initializer_list<LogField> f = {}) {
  Log(LogLevel::kDebug, m, f);
}
inline void LogInfo(std::string_view m, std::initializer_list<LogField> f = {}) {
  Log(LogLevel::kInfo, m, f);
}
inline void LogWarn(std::string_view m, std::initializer_list<LogField> f = {}) {
  Log(LogLevel::kWarn, m, f);
}
inline void LogError(std::string_view m, std::initializer_list<LogField> f = {}) {
  Log(LogLevel::kError, m, f);
}

}  // namespace hcashare
