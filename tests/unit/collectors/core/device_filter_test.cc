#include "collectors/core/device_filter.h"

#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>

namespace fabricwatch {
namespace {

constexpr std::string_view kWhat = "collector.netdev.device";

TEST(DeviceFilterTest, empty_patterns_accept_everything) {
  auto filter = DeviceFilter::Create("", "", kWhat);
  ASSERT_TRUE(filter.has_value()) << filter.error().ToString();
  for (std::string_view name : {"eth0", "lo", "", "mlx5_0", "veth1234@if5"}) {
    EXPECT_TRUE(filter->Accepts(name)) << name;
  }
}

TEST(DeviceFilterTest, include_and_exclude_semantics) {
  struct Case {
    std::string_view include;
    std::string_view exclude;
    std::string_view name;
    bool accepted;
  };
  const Case cases[] = {
      // Default netdev exclude.
      {"", "^lo$", "lo", false},
      {"", "^lo$", "eth0", true},
      {"", "^lo$", "lo0", true},
      // Whole-name match: "eth" does not match "eth0" and vice versa.
      {"eth", "", "eth0", false},
      {"eth.*", "", "eth0", true},
      {"eth0", "", "eth0", true},
      {"eth0", "", "eth01", false},
      {"eth0", "", "xeth0", false},
      {"", "eth", "eth0", true},
      {"", "eth.*", "eth0", false},
      // Alternation must match the whole name too.
      {"eth0|ib0", "", "ib0", true},
      {"eth0|ib0", "", "ib01", false},
      {"", "lo|docker.*", "docker0", false},
      {"", "lo|docker.*", "lo", false},
      {"", "lo|docker.*", "eth0", true},
      // Both: include first, then exclude wins.
      {"eth.*", "eth1", "eth0", true},
      {"eth.*", "eth1", "eth1", false},
      {"eth.*", "eth1", "ib0", false},
      {"mlx.*|ib.*", "ib1", "ib0", true},
      {"mlx.*|ib.*", "ib1", "ib1", false},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE("include=\"" + std::string(c.include) + "\" exclude=\"" +
                 std::string(c.exclude) + "\" name=" + std::string(c.name));
    auto filter = DeviceFilter::Create(c.include, c.exclude, kWhat);
    ASSERT_TRUE(filter.has_value()) << filter.error().ToString();
    EXPECT_EQ(filter->Accepts(c.name), c.accepted);
  }
}

TEST(DeviceFilterTest, remembered_decisions_stay_right_past_the_memory_bound) {
  // Decisions are remembered (std::regex allocates per match); a host churning thousands of
  // veth names must neither grow the memory nor get a wrong answer once it is cleared.
  auto filter = DeviceFilter::Create("", "^veth.*", kWhat);
  ASSERT_TRUE(filter.has_value()) << filter.error().ToString();
  for (int round = 0; round < 2; ++round) {
    for (int i = 0; i < 3000; ++i) {
      const std::string veth = "veth" + std::to_string(i);
      const std::string eth = "eth" + std::to_string(i);
      ASSERT_FALSE(filter->Accepts(veth)) << veth;
      ASSERT_TRUE(filter->Accepts(eth)) << eth;
    }
  }
}

TEST(DeviceFilterTest, invalid_include_names_the_include_flag) {
  auto filter = DeviceFilter::Create("eth[0", "", kWhat);
  ASSERT_FALSE(filter.has_value());
  EXPECT_EQ(filter.error().code(), StatusCode::kInvalidArgument);
  const std::string& message = filter.error().message();
  EXPECT_NE(message.find("--collector.netdev.device-include"), std::string::npos) << message;
  EXPECT_NE(message.find("eth[0"), std::string::npos) << message;
  EXPECT_NE(message.find("invalid regular expression"), std::string::npos) << message;
  EXPECT_EQ(message.find("-exclude"), std::string::npos) << message;
}

TEST(DeviceFilterTest, invalid_exclude_names_the_exclude_flag) {
  auto filter = DeviceFilter::Create("", "(lo", kWhat);
  ASSERT_FALSE(filter.has_value());
  EXPECT_EQ(filter.error().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(filter.error().message().find("--collector.netdev.device-exclude=\"(lo\""),
            std::string::npos)
      << filter.error().message();
}

TEST(DeviceFilterTest, invalid_patterns_table) {
  const std::string_view patterns[] = {"(", "[a-", "*eth", "a{2,1}", "\\"};
  for (std::string_view pattern : patterns) {
    SCOPED_TRACE(std::string(pattern));
    auto filter = DeviceFilter::Create(pattern, "", kWhat);
    ASSERT_FALSE(filter.has_value());
    EXPECT_EQ(filter.error().code(), StatusCode::kInvalidArgument);
    EXPECT_TRUE(filter.error().message().starts_with("--collector.netdev.device-include="))
        << filter.error().message();
  }
}

}  // namespace
}  // namespace fabricwatch
