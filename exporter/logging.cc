#include "exporter/logging.h"

#include "base/metric_sink.h"

#include <ctime>
#include <mutex>

#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

namespace fabricwatch::exporter {
namespace {

void AppendTimestamp(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) {
  using namespace std::chrono;
  const auto since_epoch = msg.time.time_since_epoch();
  const time_t seconds = duration_cast<std::chrono::seconds>(since_epoch).count();
  const auto millis = duration_cast<milliseconds>(since_epoch).count() % 1000;
  tm utc{};
  gmtime_r(&seconds, &utc);
  char buf[40];
  size_t n = strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &utc);
  n += static_cast<size_t>(snprintf(buf + n, sizeof(buf) - n, ".%03dZ", static_cast<int>(millis)));
  dest.append(buf, buf + n);
}

std::string_view LevelName(spdlog::level::level_enum level) {
  switch (level) {
    case spdlog::level::trace: return "trace";
    case spdlog::level::debug: return "debug";
    case spdlog::level::info: return "info";
    case spdlog::level::warn: return "warn";
    case spdlog::level::err: return "error";
    case spdlog::level::critical: return "critical";
    default: return "info";
  }
}

// Escapes for a double-quoted value: both logfmt and JSON accept \" \\ \n \t and \u00XX.
// Invalid UTF-8 (a hostile interface name or alias in a message) becomes U+FFFD, so every line
// stays valid JSON.
void AppendQuoted(std::string_view raw, spdlog::memory_buf_t& dest) {
  const std::string text = SanitizeUtf8(raw);
  dest.push_back('"');
  for (char c : text) {
    switch (c) {
      case '"': dest.append(std::string_view("\\\"")); break;
      case '\\': dest.append(std::string_view("\\\\")); break;
      case '\n': dest.append(std::string_view("\\n")); break;
      case '\t': dest.append(std::string_view("\\t")); break;
      case '\r': dest.append(std::string_view("\\r")); break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char buf[8];
          snprintf(buf, sizeof(buf), "\\u%04x", static_cast<unsigned>(c));
          dest.append(std::string_view(buf));
        } else {
          dest.push_back(c);
        }
    }
  }
  dest.push_back('"');
}

class LogfmtFormatter final : public spdlog::formatter {
 public:
  void format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) override {
    dest.append(std::string_view("ts="));
    AppendTimestamp(msg, dest);
    dest.append(std::string_view(" level="));
    dest.append(LevelName(msg.level));
    dest.append(std::string_view(" logger="));
    dest.append(msg.logger_name.begin(), msg.logger_name.end());
    dest.append(std::string_view(" msg="));
    AppendQuoted(std::string_view(msg.payload.data(), msg.payload.size()), dest);
    dest.push_back('\n');
  }
  std::unique_ptr<spdlog::formatter> clone() const override {
    return std::make_unique<LogfmtFormatter>();
  }
};

class JsonFormatter final : public spdlog::formatter {
 public:
  void format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& dest) override {
    dest.append(std::string_view("{\"ts\":\""));
    AppendTimestamp(msg, dest);
    dest.append(std::string_view("\",\"level\":\""));
    dest.append(LevelName(msg.level));
    dest.append(std::string_view("\",\"logger\":"));
    AppendQuoted(std::string_view(msg.logger_name.data(), msg.logger_name.size()), dest);
    dest.append(std::string_view(",\"msg\":"));
    AppendQuoted(std::string_view(msg.payload.data(), msg.payload.size()), dest);
    dest.append(std::string_view("}\n"));
  }
  std::unique_ptr<spdlog::formatter> clone() const override {
    return std::make_unique<JsonFormatter>();
  }
};

struct LoggingState {
  std::mutex mutex;
  spdlog::sink_ptr sink;
  spdlog::level::level_enum level = spdlog::level::info;
};

LoggingState& State() {
  static LoggingState state;  // process-wide logging setup, configured once by main
  return state;
}

}  // namespace

std::unique_ptr<spdlog::formatter> MakeFormatter(LogFormat format) {
  if (format == LogFormat::kJson) return std::make_unique<JsonFormatter>();
  return std::make_unique<LogfmtFormatter>();
}

void SetupLogging(std::string_view level, LogFormat format) {
  LoggingState& state = State();
  std::lock_guard lock(state.mutex);
  state.level = level == "debug"  ? spdlog::level::debug
                : level == "warn"  ? spdlog::level::warn
                : level == "error" ? spdlog::level::err
                                   : spdlog::level::info;
  state.sink = std::make_shared<spdlog::sinks::stderr_sink_mt>();
  state.sink->set_formatter(MakeFormatter(format));
  spdlog::drop_all();
}

std::shared_ptr<spdlog::logger> GetLogger(const std::string& name) {
  LoggingState& state = State();
  std::lock_guard lock(state.mutex);
  if (auto existing = spdlog::get(name)) return existing;
  if (!state.sink) {
    state.sink = std::make_shared<spdlog::sinks::stderr_sink_mt>();
    state.sink->set_formatter(MakeFormatter(LogFormat::kLogfmt));
  }
  auto logger = std::make_shared<spdlog::logger>(name, state.sink);
  logger->set_level(state.level);
  spdlog::register_logger(logger);
  return logger;
}

}  // namespace fabricwatch::exporter
