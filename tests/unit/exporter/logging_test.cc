#include "exporter/logging.h"

#include <chrono>
#include <memory>
#include <string>
#include <string_view>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <spdlog/common.h>
#include <spdlog/details/log_msg.h>
#include <spdlog/formatter.h>

namespace fabricwatch::exporter {
namespace {

// 2026-11-22T02:32:42.123Z
const spdlog::log_clock::time_point kTime =
    spdlog::log_clock::time_point(std::chrono::milliseconds(1'795'314'762'123));

std::string Format(LogFormat format, std::string_view logger, spdlog::level::level_enum level,
                   std::string_view payload,
                   spdlog::log_clock::time_point time = kTime) {
  const spdlog::details::log_msg msg(time, spdlog::source_loc{},
                                     spdlog::string_view_t(logger.data(), logger.size()), level,
                                     spdlog::string_view_t(payload.data(), payload.size()));
  auto formatter = MakeFormatter(format);
  spdlog::memory_buf_t buf;
  formatter->format(msg, buf);
  return std::string(buf.data(), buf.size());
}

bool HasRawControlCharacter(std::string_view text) {
  for (char c : text) {
    if (static_cast<unsigned char>(c) < 0x20) return true;
  }
  return false;
}

TEST(LogfmtFormatterTest, line_shape) {
  EXPECT_EQ(Format(LogFormat::kLogfmt, "netdev", spdlog::level::warn,
                   "class/net/eth0/mtu: not found"),
            "ts=2026-11-22T02:32:42.123Z level=warn logger=netdev "
            "msg=\"class/net/eth0/mtu: not found\"\n");
}

TEST(LogfmtFormatterTest, level_names) {
  struct Case {
    spdlog::level::level_enum level;
    std::string_view name;
  };
  const Case cases[] = {
      {spdlog::level::trace, "trace"}, {spdlog::level::debug, "debug"},
      {spdlog::level::info, "info"},   {spdlog::level::warn, "warn"},
      {spdlog::level::err, "error"},   {spdlog::level::critical, "critical"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.name));
    const std::string line = Format(LogFormat::kLogfmt, "http", c.level, "x");
    EXPECT_NE(line.find(" level=" + std::string(c.name) + " logger=http "), std::string::npos)
        << line;
  }
}

TEST(LogfmtFormatterTest, escapes_message) {
  struct Case {
    std::string_view payload;
    std::string_view quoted;
  };
  const Case cases[] = {
      {"plain", "\"plain\""},
      {"say \"hi\"", "\"say \\\"hi\\\"\""},
      {"C:\\dir", "\"C:\\\\dir\""},
      {"line1\nline2", "\"line1\\nline2\""},
      {"a\tb\rc", "\"a\\tb\\rc\""},
      {std::string_view("nul\0x", 5), "\"nul\\u0000x\""},
      {"bell\x07 esc\x1b", "\"bell\\u0007 esc\\u001b\""},
      {"", "\"\""},
      {"caf\xc3\xa9", "\"caf\xc3\xa9\""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.quoted));
    const std::string line = Format(LogFormat::kLogfmt, "netdev", spdlog::level::info, c.payload);
    EXPECT_EQ(line, "ts=2026-11-22T02:32:42.123Z level=info logger=netdev msg=" +
                        std::string(c.quoted) + "\n");
    // One record, one line.
    EXPECT_FALSE(HasRawControlCharacter(line.substr(0, line.size() - 1))) << line;
  }
}

TEST(LogfmtFormatterTest, timestamp_is_utc_with_milliseconds) {
  struct Case {
    spdlog::log_clock::time_point time;
    std::string_view ts;
  };
  const Case cases[] = {
      {spdlog::log_clock::time_point(std::chrono::milliseconds(0)), "1970-01-01T00:00:00.000Z"},
      {spdlog::log_clock::time_point(std::chrono::milliseconds(1'000'000'000'007)),
       "2001-09-09T01:46:40.007Z"},
      {spdlog::log_clock::time_point(std::chrono::microseconds(1'795'314'762'999'999)),
       "2026-11-22T02:32:42.999Z"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.ts));
    const std::string line = Format(LogFormat::kLogfmt, "x", spdlog::level::info, "m", c.time);
    EXPECT_TRUE(line.starts_with("ts=" + std::string(c.ts) + " ")) << line;
  }
}

TEST(JsonFormatterTest, line_parses_with_all_fields) {
  const std::string line = Format(LogFormat::kJson, "netdev", spdlog::level::warn,
                                  "class/net/eth0/mtu: not found");
  ASSERT_TRUE(line.ends_with("}\n")) << line;
  EXPECT_EQ(line.find('\n'), line.size() - 1);
  const nlohmann::json json = nlohmann::json::parse(line);
  ASSERT_TRUE(json.is_object());
  EXPECT_EQ(json.size(), 4u);
  EXPECT_EQ(json.at("ts"), "2026-11-22T02:32:42.123Z");
  EXPECT_EQ(json.at("level"), "warn");
  EXPECT_EQ(json.at("logger"), "netdev");
  EXPECT_EQ(json.at("msg"), "class/net/eth0/mtu: not found");
}

TEST(JsonFormatterTest, escaped_messages_round_trip) {
  const std::string_view payloads[] = {
      "say \"hi\"",
      "C:\\dir\\",
      "line1\nline2\r\n",
      "tab\there",
      std::string_view("nul\0x", 5),
      "\x01\x02\x1f control",
      "{\"json\": [1, 2]}",
      "caf\xc3\xa9 \xe2\x82\xac",
      "",
  };
  for (std::string_view payload : payloads) {
    SCOPED_TRACE(std::string(payload));
    const std::string line = Format(LogFormat::kJson, "http", spdlog::level::err, payload);
    EXPECT_FALSE(HasRawControlCharacter(line.substr(0, line.size() - 1))) << line;
    nlohmann::json json;
    ASSERT_NO_THROW(json = nlohmann::json::parse(line)) << line;
    EXPECT_EQ(json.at("msg").get<std::string>(), std::string(payload));
    EXPECT_EQ(json.at("level"), "error");
    EXPECT_EQ(json.at("logger"), "http");
  }
}

// Regression: the JSON formatter (AppendQuoted in exporter/logging.cc) once copied bytes >= 0x80 verbatim, so
// a message with invalid UTF-8 (a netdev name or ifalias holding byte 0xff) yields a line that is
// not valid JSON (RFC 8259 requires UTF-8); JSON log pipelines reject it.
TEST(JsonFormatterTest, invalid_utf8_still_yields_valid_json) {
  const std::string line =
      Format(LogFormat::kJson, "netdev", spdlog::level::warn, "netdev eth\xff" "0: gone");
  nlohmann::json json;
  ASSERT_NO_THROW(json = nlohmann::json::parse(line)) << line;
  EXPECT_TRUE(json.at("msg").get<std::string>().starts_with("netdev eth"));
}

TEST(JsonFormatterTest, logger_name_is_escaped) {
  const std::string line = Format(LogFormat::kJson, "we\"ird", spdlog::level::info, "m");
  const nlohmann::json json = nlohmann::json::parse(line);
  EXPECT_EQ(json.at("logger"), "we\"ird");
}

TEST(FormatterTest, clone_formats_identically) {
  for (LogFormat format : {LogFormat::kLogfmt, LogFormat::kJson}) {
    auto formatter = MakeFormatter(format);
    auto clone = formatter->clone();
    const spdlog::details::log_msg msg(kTime, spdlog::source_loc{}, "scheduler",
                                       spdlog::level::info, "collector recovered");
    spdlog::memory_buf_t a, b;
    formatter->format(msg, a);
    clone->format(msg, b);
    EXPECT_EQ(std::string(a.data(), a.size()), std::string(b.data(), b.size()));
    EXPECT_GT(a.size(), 0u);
  }
}

TEST(GetLoggerTest, returns_the_same_named_logger) {
  auto a = GetLogger("logging_test_component");
  auto b = GetLogger("logging_test_component");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a, b);
  EXPECT_EQ(a->name(), "logging_test_component");
  EXPECT_NE(GetLogger("logging_test_other"), a);
}

}  // namespace
}  // namespace fabricwatch::exporter
