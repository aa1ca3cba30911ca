// CollectorOptionReader: configured values, spec defaults, durations and the flag named in errors.

#include "collectors/core/collector_options.h"

#include <gtest/gtest.h>

namespace fabricwatch {
namespace {

constexpr CollectorOptionSpec kSpecs[] = {
    {"device-include", "include", ""},
    {"device-exclude", "exclude", "^lo$"},
    {"rediscovery-interval", "interval", "60s"},
};

TEST(CollectorOptionReaderTest, unset_options_read_their_spec_default) {
  const CollectorOptions options;
  const CollectorOptionReader reader("rdma", options, kSpecs);
  EXPECT_EQ(reader.Value("device-exclude"), "^lo$");
  EXPECT_EQ(reader.Value("device-include"), "");
  EXPECT_FALSE(reader.IsSet("device-include"));
  ASSERT_TRUE(reader.Duration("rediscovery-interval"));
  EXPECT_EQ(*reader.Duration("rediscovery-interval"), std::chrono::seconds(60));
  auto filter = reader.Devices();
  ASSERT_TRUE(filter);
  EXPECT_FALSE(filter->Accepts("lo"));
  EXPECT_TRUE(filter->Accepts("eth0"));
}

// A value configured empty clears the default (no exclusion); an empty duration means the default.
TEST(CollectorOptionReaderTest, configured_values_win_even_when_empty) {
  const CollectorOptions options{
      {"device-exclude", ""}, {"device-include", "eth.*"}, {"rediscovery-interval", ""}};
  const CollectorOptionReader reader("rdma", options, kSpecs);
  EXPECT_EQ(reader.Value("device-exclude"), "");
  EXPECT_TRUE(reader.IsSet("device-include"));
  auto filter = reader.Devices();
  ASSERT_TRUE(filter);
  EXPECT_TRUE(filter->Accepts("eth1"));
  EXPECT_FALSE(filter->Accepts("lo"));  // not included, no longer because it is excluded
  ASSERT_TRUE(reader.Duration("rediscovery-interval"));
  EXPECT_EQ(*reader.Duration("rediscovery-interval"), std::chrono::seconds(60));
}

TEST(CollectorOptionReaderTest, errors_name_the_flag) {
  const CollectorOptions options{{"rediscovery-interval", "fast"}, {"device-include", "("}};
  const CollectorOptionReader reader("rdma", options, kSpecs);
  auto interval = reader.Duration("rediscovery-interval");
  ASSERT_FALSE(interval);
  EXPECT_NE(interval.error().message().find("--collector.rdma.rediscovery-interval"),
            std::string::npos)
      << interval.error().message();
  auto filter = reader.Devices();
  ASSERT_FALSE(filter);
  EXPECT_NE(filter.error().message().find("collector.rdma.device"), std::string::npos)
      << filter.error().message();
}

}  // namespace
}  // namespace fabricwatch
