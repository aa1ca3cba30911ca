#include "collectors/netdev/netdev_parse.h"

#include <gtest/gtest.h>

namespace fabricwatch::netdev {
namespace {

TEST(NetdevParseTest, oper_state_names_map_to_rfc2863_codes) {
  const std::pair<const char*, int> cases[] = {
      {"unknown\n", 0}, {"notpresent", 1}, {"down\n", 2},  {"lowerlayerdown", 3},
      {"testing", 4},   {"dormant", 5},    {"up\n", 6},    {"  up  ", 6}};
  for (const auto& [text, code] : cases) {
    auto parsed = ParseOperState(text);
    ASSERT_TRUE(parsed) << text;
    EXPECT_EQ(*parsed, code) << text;
  }
}

TEST(NetdevParseTest, oper_state_rejects_unknown_words) {
  for (const char* text : {"", "UP", "sideways", "up down"}) {
    auto parsed = ParseOperState(text);
    ASSERT_FALSE(parsed) << text;
    EXPECT_EQ(parsed.error().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(parsed.error().message().find("operstate"), std::string::npos);
  }
}

TEST(NetdevParseTest, speed_is_converted_from_mbits_to_bytes_per_second) {
  auto s200g = ParseSpeedBytesPerSecond("200000\n", "speed");
  ASSERT_TRUE(s200g);
  ASSERT_TRUE(s200g->has_value());
  EXPECT_DOUBLE_EQ(**s200g, 25e9);
  auto s1g = ParseSpeedBytesPerSecond("1000", "speed");
  ASSERT_TRUE(s1g && s1g->has_value());
  EXPECT_DOUBLE_EQ(**s1g, 125e6);
}

TEST(NetdevParseTest, unknown_speed_is_absent_not_zero) {
  // SPEED_UNKNOWN (-1), and the unsigned rendering of it on old kernels.
  for (const char* text : {"-1\n", "4294967295", "-100"}) {
    auto speed = ParseSpeedBytesPerSecond(text, "speed");
    ASSERT_TRUE(speed) << text;
    EXPECT_FALSE(speed->has_value()) << text;
  }
}

TEST(NetdevParseTest, malformed_speed_is_an_error_naming_the_file) {
  auto speed = ParseSpeedBytesPerSecond("fast", "/sys/class/net/eth0/speed");
  ASSERT_FALSE(speed);
  EXPECT_NE(speed.error().message().find("/sys/class/net/eth0/speed"), std::string::npos);
}

TEST(NetdevParseTest, admin_state_is_the_iff_up_bit) {
  EXPECT_EQ(ParseAdminUp("0x1003\n", "flags").value(), true);
  EXPECT_EQ(ParseAdminUp("0x1002", "flags").value(), false);
  EXPECT_EQ(ParseAdminUp("0x9", "flags").value(), true);
  EXPECT_FALSE(ParseAdminUp("zz", "flags"));
  EXPECT_FALSE(ParseAdminUp("", "flags"));
}

}  // namespace
}  // namespace fabricwatch::netdev
