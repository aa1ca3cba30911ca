#include "base/duration.h"

#include <chrono>
#include <string>
#include <string_view>

#include <gtest/gtest.h>

namespace fabricwatch {
namespace {

using std::chrono::milliseconds;

TEST(ParseDurationTest, accepts_prometheus_durations) {
  struct Case {
    std::string_view text;
    milliseconds value;
  };
  const Case cases[] = {
      {"100ms", milliseconds(100)},
      {"1s", milliseconds(1000)},
      {"1m30s", milliseconds(90'000)},
      {"2h", milliseconds(7'200'000)},
      {"1d", milliseconds(86'400'000)},
      {"500us", milliseconds(1)},   // 0.5 ms rounds to 1 ms
      {"1500us", milliseconds(2)},  // 1.5 ms rounds half up
      {"400us", milliseconds(0)},
      {"1.5s", milliseconds(1500)},
      {"0.25s", milliseconds(250)},
      {"0s", milliseconds(0)},
      {"1h1m1s1ms", milliseconds(3'661'001)},
      {"10m", milliseconds(600'000)},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.text));
    auto r = ParseDuration(c.text);
    ASSERT_TRUE(r.has_value()) << r.error().ToString();
    EXPECT_EQ(r->count(), c.value.count());
  }
}

TEST(ParseDurationTest, rejects_malformed_durations) {
  struct Case {
    std::string_view text;
    std::string_view message_part;
  };
  const Case cases[] = {
      {"", "empty duration"},
      {"5", "missing unit"},
      {"s", "expected a number"},
      {"1x", "missing unit"},
      {"-1s", "expected a number"},
      {"1s5", "missing unit"},
      {" 1s", "expected a number"},
      {"1 s", "missing unit"},
      {"1.2.3s", "invalid duration"},
      {"400d", "too long"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.text));
    auto r = ParseDuration(c.text);
    ASSERT_FALSE(r.has_value()) << "parsed as " << r->count() << "ms";
    EXPECT_EQ(r.error().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(r.error().message().find(c.message_part), std::string::npos)
        << r.error().message();
    if (!c.text.empty()) {
      // The offending text is quoted in the message.
      EXPECT_NE(r.error().message().find("\"" + std::string(c.text) + "\""), std::string::npos)
          << r.error().message();
    }
  }
}

TEST(FormatDurationTest, uses_the_largest_exact_unit) {
  struct Case {
    milliseconds value;
    std::string_view text;
  };
  const Case cases[] = {
      {milliseconds(0), "0s"},
      {milliseconds(1), "1ms"},
      {milliseconds(100), "100ms"},
      {milliseconds(1000), "1s"},
      {milliseconds(1500), "1500ms"},
      {milliseconds(90'000), "90s"},
      {milliseconds(60'000), "1m"},
      {milliseconds(7'200'000), "2h"},
      {milliseconds(5'400'000), "90m"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.value.count());
    EXPECT_EQ(FormatDuration(c.value), c.text);
  }
}

TEST(FormatDurationTest, round_trips_through_parse) {
  const milliseconds values[] = {milliseconds(0),      milliseconds(7),
                                 milliseconds(250),    milliseconds(1000),
                                 milliseconds(90'000), milliseconds(3'600'000),
                                 milliseconds(86'400'000)};
  for (milliseconds value : values) {
    SCOPED_TRACE(value.count());
    auto parsed = ParseDuration(FormatDuration(value));
    ASSERT_TRUE(parsed.has_value()) << parsed.error().ToString();
    EXPECT_EQ(parsed->count(), value.count());
  }
}

}  // namespace
}  // namespace fabricwatch
