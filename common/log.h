// Levelled, structured logging to stderr as text or JSON lines.
//
// Each record has a level, a message and optional key/value fields. Configuration is
// process-wide (the daemon sets it once from flags); logging is thread-safe.
#pragma once

#include <functional>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>

#include "common/status.h"

namespace hcashare {

enum class LogLevel { kDebug = 0, kInfo = 1, kWarn = 2, kError = 3 };
enum class LogFormat { kText, kJson };

// One key/value pair attached to a record.
using LogField = std::pair<std::string_view, std::string>;

// Parses "debug", "info", "warn"/"warning", "error". InvalidArgument otherwise.
Result<LogLevel> ParseLogLevel(std::string_view s);
// Parses "text" or "json". InvalidArgument otherwise.
Result<LogFormat> ParseLogFormat(std::string_view s);

// Records below `level` are dropped. Default: kInfo.
void SetLogLevel(LogLevel level);
// Default: kText.
void SetLogFormat(LogFormat format);
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
