#include "base/value_parse.h"

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>

#include <gtest/gtest.h>

namespace fabricwatch {
namespace {

using std::string_view_literals::operator""sv;

TEST(TrimSpaceTest, strips_ascii_whitespace_at_both_ends) {
  struct Case {
    std::string_view in;
    std::string_view out;
  };
  const Case cases[] = {
      {"", ""},
      {"42", "42"},
      {"42\n", "42"},
      {"  42  ", "42"},
      {"\t\r\v\f 42 \n\n", "42"},
      {"up\n", "up"},
      {"a b\n", "a b"},  // inner spaces are kept
      {" \n\t ", ""},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.in));
    EXPECT_EQ(TrimSpace(c.in), c.out);
  }
}

TEST(ParseUint64Test, accepts_valid_values) {
  struct Case {
    std::string_view text;
    uint64_t value;
  };
  const Case cases[] = {
      {"0", 0},
      {"42", 42},
      {"42\n", 42},
      {"  42  ", 42},
      {"\t7\r\n", 7},
      {"0x1f", 31},
      {"0X1F", 31},
      {"0x0", 0},
      {"0xffffffffffffffff", std::numeric_limits<uint64_t>::max()},
      {"18446744073709551615", std::numeric_limits<uint64_t>::max()},
      {"007", 7},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.text));
    auto r = ParseUint64(c.text, "test");
    ASSERT_TRUE(r.has_value()) << r.error().ToString();
    EXPECT_EQ(*r, c.value);
  }
}

TEST(ParseUint64Test, rejects_invalid_values) {
  struct Case {
    std::string_view text;
    std::string_view message_part;  // expected substring of the message
  };
  const Case cases[] = {
      {"", "empty value"},
      {"\n", "empty value"},
      {"   ", "empty value"},
      {"abc", "not an unsigned integer"},
      {"12abc", "not an unsigned integer"},
      {"1 2", "not an unsigned integer"},
      {"-1", "not an unsigned integer"},
      {"+1", "not an unsigned integer"},
      {"0x", "not an unsigned integer"},
      {"0xg", "not an unsigned integer"},
      {"1.5", "not an unsigned integer"},
      {"18446744073709551616", "out of range"},
      {"99999999999999999999999", "out of range"},
      {"0x10000000000000000", "out of range"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.text));
    auto r = ParseUint64(c.text, "class/net/eth0/mtu");
    ASSERT_FALSE(r.has_value()) << "parsed as " << *r;
    EXPECT_EQ(r.error().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(r.error().message().find(c.message_part), std::string::npos)
        << r.error().message();
    // The message names the source.
    EXPECT_TRUE(r.error().message().starts_with("class/net/eth0/mtu: ")) << r.error().message();
  }
}

TEST(ParseUint64Test, message_quotes_the_trimmed_value) {
  auto r = ParseUint64("12abc\n", "speed");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().message(), "speed: not an unsigned integer: \"12abc\"");

  auto big = ParseUint64("18446744073709551616", "rx_bytes");
  ASSERT_FALSE(big.has_value());
  EXPECT_EQ(big.error().message(), "rx_bytes: value out of range: \"18446744073709551616\"");
}

TEST(ParseInt64Test, accepts_valid_values) {
  struct Case {
    std::string_view text;
    int64_t value;
  };
  const Case cases[] = {
      {"0", 0},
      {"-1", -1},
      {"-1\n", -1},
      {" 100 ", 100},
      {"9223372036854775807", std::numeric_limits<int64_t>::max()},
      {"-9223372036854775808", std::numeric_limits<int64_t>::min()},
      {"0x10", 16},
      {"-0x10", -16},
      {"-0x8000000000000000", std::numeric_limits<int64_t>::min()},
      {"-0", 0},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.text));
    auto r = ParseInt64(c.text, "test");
    ASSERT_TRUE(r.has_value()) << r.error().ToString();
    EXPECT_EQ(*r, c.value);
  }
}

TEST(ParseInt64Test, rejects_invalid_values) {
  struct Case {
    std::string_view text;
    std::string_view message_part;
  };
  const Case cases[] = {
      {"", "empty value"},
      {"-", "not an integer"},
      {"--1", "not an integer"},
      {"- 1", "not an integer"},
      {"12abc", "not an integer"},
      {"abc", "not an integer"},
      {"9223372036854775808", "out of range"},
      {"-9223372036854775809", "out of range"},
      {"18446744073709551616", "out of range"},
      {"0x8000000000000000", "out of range"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.text));
    auto r = ParseInt64(c.text, "speed");
    ASSERT_FALSE(r.has_value()) << "parsed as " << *r;
    EXPECT_EQ(r.error().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(r.error().message().find(c.message_part), std::string::npos)
        << r.error().message();
    EXPECT_TRUE(r.error().message().starts_with("speed: ")) << r.error().message();
  }
}

bool HasRawControlOrHighBytes(std::string_view text) {
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u >= 0x7f) return true;
  }
  return false;
}

TEST(ParseValueTest, binary_garbage_is_quoted_safely) {
  const std::string_view garbage = "\x01\x02\xff\x7f\x1b[31m\"\\\0z"sv;
  auto u = ParseUint64(garbage, "statistics/rx_bytes");
  ASSERT_FALSE(u.has_value());
  const std::string& message = u.error().message();
  EXPECT_FALSE(HasRawControlOrHighBytes(message)) << message;
  EXPECT_NE(message.find("statistics/rx_bytes"), std::string::npos) << message;
  // Non-printable bytes, quotes and backslashes are hex-escaped.
  EXPECT_NE(message.find("\\x01\\x02\\xff\\x7f\\x1b[31m\\x22\\x5c\\x00z"), std::string::npos)
      << message;

  auto s = ParseInt64(garbage, "speed");
  ASSERT_FALSE(s.has_value());
  EXPECT_FALSE(HasRawControlOrHighBytes(s.error().message())) << s.error().message();
}

TEST(ParseValueTest, long_garbage_is_truncated_in_message) {
  const std::string long_value(1000, 'z');
  auto r = ParseUint64(long_value, "x");
  ASSERT_FALSE(r.has_value());
  EXPECT_LT(r.error().message().size(), 200u);
  EXPECT_NE(r.error().message().find("...\""), std::string::npos) << r.error().message();
}

TEST(ParseValueTest, message_names_what) {
  const std::string_view whats[] = {"a", "/sys/class/net/eth0/carrier_changes", "flag --x"};
  for (std::string_view what : whats) {
    auto u = ParseUint64("nope", what);
    ASSERT_FALSE(u.has_value());
    EXPECT_TRUE(u.error().message().starts_with(std::string(what) + ": "))
        << u.error().message();
    auto i = ParseInt64("", what);
    ASSERT_FALSE(i.has_value());
    EXPECT_EQ(i.error().message(), std::string(what) + ": empty value");
  }
}

TEST(ValueParseTest, pci_addresses_are_recognised) {
  EXPECT_TRUE(IsPciAddress("0000:41:00.0"));
  EXPECT_TRUE(IsPciAddress("0001:c1:1f.7"));
  EXPECT_FALSE(IsPciAddress("41:00.0"));
  EXPECT_FALSE(IsPciAddress("0000:41:00.8"));
  EXPECT_FALSE(IsPciAddress("virtio0"));
  EXPECT_FALSE(IsPciAddress("0000:41:00.0 "));
  EXPECT_FALSE(IsPciAddress("pci0000:40"));
}

}  // namespace
}  // namespace fabricwatch
