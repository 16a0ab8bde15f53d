#include "common/log.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <mutex>
#include <variant>

#include <nlohmann/json.hpp>

namespace hcashare {
namespace {

std::atomic<int> g_level{static_cast<int>(LogLevel::kInfo)};
std::atomic<int> g_format{static_cast<int>(LogFormat::kText)};
std::mutex g_mu;
std::function<void(const std::string&)>* g_sink = nullptr;  // guarded by g_mu

const char* LevelName(LogLevel l) {
  switch (l) {
    case LogLevel::kDebug:
      return "debug";
    case LogLevel::kInfo:
      return "info";
    case LogLevel::kWarn:
      return "warn";
    case LogLevel::kError:
      return "error";
  }
  return "info";
}

std::string Timestamp() {
  auto now = std::chrono::system_clock::now();
  std::time_t t = std::chrono::system_clock::to_time_t(now);
  auto ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000;
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, static_cast<int>(ms));
  return buf;
}

std::string Dump(const nlohmann::ordered_json& j) {
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

// The JSON value of a field: a string, a number or a boolean.
nlohmann::ordered_json JsonValue(const LogValue& v) {
  return std::visit([](const auto& x) { return nlohmann::ordered_json(x); }, v.value());
}

// A text-format value: numbers and booleans bare; a string quoted when it has spaces,
// quotes or '=' in it, or is empty.
std::string TextValue(const LogValue& value) {
  const auto* s = std::get_if<std::string>(&value.value());
  if (s == nullptr) return Dump(JsonValue(value));
  bool plain = !s->empty() && s->find_first_of(" \t\n\"=") == std::string::npos;
  return plain ? *s : Dump(nlohmann::ordered_json(*s));
}

}  // namespace

Result<LogLevel> ParseLogLevel(std::string_view s) {
  if (s == "debug") return LogLevel::kDebug;
  if (s == "info") return LogLevel::kInfo;
  if (s == "warn" || s == "warning") return LogLevel::kWarn;
  if (s == "error") return LogLevel::kError;
  return Status::InvalidArgument("unknown log level \"" + std::string(s) +
                                 "\" (want debug, info, warn or error)");
}

Result<LogFormat> ParseLogFormat(std::string_view s) {
  if (s == "text") return LogFormat::kText;
  if (s == "json") return LogFormat::kJson;
  return Status::InvalidArgument("unknown log format \"" + std::string(s) +
                                 "\" (want text or json)");
}

void SetLogLevel(LogLevel level) { g_level = static_cast<int>(level); }
void SetLogFormat(LogFormat format) { g_format = static_cast<int>(format); }
LogFormat GetLogFormat() { return static_cast<LogFormat>(g_format.load()); }

void SetLogSink(std::function<void(const std::string&)> sink) {
  static std::function<void(const std::string&)> holder;
  std::lock_guard<std::mutex> lock(g_mu);
  holder = std::move(sink);
  g_sink = holder ? &holder : nullptr;
}

bool LogEnabled(LogLevel level) { return static_cast<int>(level) >= g_level.load(); }

void Log(LogLevel level, std::string_view msg, std::initializer_list<LogField> fields) {
  if (!LogEnabled(level)) return;
  std::string line;
  if (GetLogFormat() == LogFormat::kJson) {
    nlohmann::ordered_json j;
    j["ts"] = Timestamp();
    j["level"] = LevelName(level);
    j["msg"] = std::string(msg);
    for (const auto& [k, v] : fields) j[std::string(k)] = JsonValue(v);
    line = Dump(j);
  } else {
    line = Timestamp() + " " + LevelName(level) + " " + std::string(msg);
    for (const auto& [k, v] : fields) {
      line += " ";
      line += k;
      line += "=";
      line += TextValue(v);
    }
  }
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_sink != nullptr) {
    (*g_sink)(line);
  } else {
    line += "\n";
    std::fwrite(line.data(), 1, line.size(), stderr);
    std::fflush(stderr);
  }
}

}  // namespace hcashare
