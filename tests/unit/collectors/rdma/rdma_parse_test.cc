#include "collectors/rdma/rdma_parse.h"

#include <gtest/gtest.h>

#include <limits>

namespace fabricwatch::rdma {
namespace {

TEST(RdmaParseTest, numbered_names_keep_number_and_name) {
  struct Case {
    const char* text;
    int id;
    const char* name;
  };
  const Case cases[] = {
      {"4: ACTIVE\n", 4, "ACTIVE"}, {"5: LinkUp\n", 5, "LinkUp"},
      {"1: CA\n", 1, "CA"},         {"0: <unknown>\n", 0, "<unknown>"},
      {"4: RNIC", 4, "RNIC"},       {"7: Phy Test\n", 7, "Phy Test"},
      {"255: x", 255, "x"},         {"  1:   DOWN  ", 1, "DOWN"},
  };
  for (const Case& c : cases) {
    auto parsed = ParseNumberedName(c.text, "state");
    ASSERT_TRUE(parsed) << c.text << ": " << parsed.error().ToString();
    EXPECT_EQ(parsed->id, c.id) << c.text;
    EXPECT_EQ(parsed->name, c.name) << c.text;
  }
}

TEST(RdmaParseTest, numbered_name_errors_name_the_file) {
  for (const char* text : {"ACTIVE", "", "\n", "x: y", "300: big", "-1: DOWN", ": ACTIVE"}) {
    auto parsed = ParseNumberedName(text, "/sys/class/infiniband/mlx5_0/ports/1/state");
    ASSERT_FALSE(parsed) << '"' << text << '"';
    EXPECT_EQ(parsed.error().code(), StatusCode::kInvalidArgument) << text;
    EXPECT_NE(parsed.error().message().find("/sys/class/infiniband/mlx5_0/ports/1/state"),
              std::string::npos)
        << parsed.error().message();
  }
}

TEST(RdmaParseTest, rates_convert_to_bytes_per_second_with_width_and_speed) {
  // Every IBTA generation from SDR to XDR and every width rate_show prints (1X, 2X, 4X, 8X, 12X);
  // the lane rate is the generation's nominal one (docs/reference.md §1.3), not rate / width
  // (FDR: 56 / 4 = 14, FDR10: 40 / 4 = 10).
  struct Case {
    const char* text;
    double bytes_per_second;
    int lanes;
    const char* speed;
    double lane_gbps;
  };
  const Case cases[] = {
      {"400 Gb/sec (4X NDR)\n", 5e10, 4, "NDR", 100},
      {"2.5 Gb/sec (1X)\n", 312500000, 1, "SDR", 2.5},  // SDR prints no suffix
      {"10 Gb/sec (4X)", 1.25e9, 4, "SDR", 2.5},
      {"30 Gb/sec (12X)", 3.75e9, 12, "SDR", 2.5},
      {"5 Gb/sec (1X DDR)", 625e6, 1, "DDR", 5},
      {"10 Gb/sec (2X DDR)", 1.25e9, 2, "DDR", 5},
      {"40 Gb/sec (4X QDR)", 5e9, 4, "QDR", 10},
      {"40 Gb/sec (4X FDR10)", 5e9, 4, "FDR10", 10},
      {"56 Gb/sec (4X FDR)", 7e9, 4, "FDR", 14},
      {"14 Gb/sec (1X FDR)", 1.75e9, 1, "FDR", 14},
      {"25 Gb/sec (1X EDR)", 3.125e9, 1, "EDR", 25},
      {"100 Gb/sec (4X EDR)", 1.25e10, 4, "EDR", 25},
      {"200 Gb/sec (4X HDR)", 2.5e10, 4, "HDR", 50},
      {"100 Gb/sec (2X HDR)", 1.25e10, 2, "HDR", 50},
      {"600 Gb/sec (12X HDR)", 7.5e10, 12, "HDR", 50},
      {"300 Gb/sec (12X EDR)", 3.75e10, 12, "EDR", 25},
      {"100 Gb/sec (1X NDR)", 1.25e10, 1, "NDR", 100},
      {"800 Gb/sec (8X NDR)", 1e11, 8, "NDR", 100},
      {"800 Gb/sec (8X XDR)", 1e11, 8, "XDR", 200},
      {"800 Gb/sec (4X XDR)", 1e11, 4, "XDR", 200},
      {"1600 Gb/sec (8X XDR)", 2e11, 8, "XDR", 200},
      // A generation this parser does not know: the lane rate is what the numbers say.
      {"1600 Gb/sec (4X GDR)", 2e11, 4, "GDR", 400},
      {"0 GB/sec\n", 0, 0, "", 0},  // a down port on some drivers: no width, no lane rate
  };
  for (const Case& c : cases) {
    auto rate = ParseRate(c.text, "rate");
    ASSERT_TRUE(rate) << c.text << ": " << rate.error().ToString();
    EXPECT_DOUBLE_EQ(rate->bytes_per_second, c.bytes_per_second) << c.text;
    EXPECT_EQ(rate->lanes, c.lanes) << c.text;
    EXPECT_EQ(rate->speed, c.speed) << c.text;
    EXPECT_DOUBLE_EQ(rate->lane_gbps, c.lane_gbps) << c.text;
  }
}

TEST(RdmaParseTest, rate_errors_name_the_file) {
  for (const char* text :
       {"fast", "", "10 Mb/sec", "10 Gb/sec (4 EDR)", "10 Gb/sec (0X)", "10 Gb/sec 4X",
        "10 Gb/sec (4X", "-10 Gb/sec (4X)", "10 Gb/sec (X EDR)", "10 Gb/sec (4X E-DR)",
        "ten Gb/sec (4X)", "10 Gb/sec (64X)", "Unknown", "unknown rate", "100 Gbps (4X EDR)"}) {
    auto rate = ParseRate(text, "/sys/class/infiniband/mlx5_0/ports/1/rate");
    ASSERT_FALSE(rate) << '"' << text << '"';
    EXPECT_EQ(rate.error().code(), StatusCode::kInvalidArgument) << text;
    EXPECT_NE(rate.error().message().find("/sys/class/infiniband/mlx5_0/ports/1/rate"),
              std::string::npos)
        << rate.error().message();
  }
}

TEST(RdmaParseTest, non_finite_rates_are_errors) {
  // Regression: ParseRate reads the number with std::from_chars(double), which accepts "nan", "inf"
  // and "infinity"; `gbits < 0` is false for NaN and +Inf, so "nan Gb/sec (4X)" parses to a
  // NaN rate and "inf Gb/sec (4X NDR)" to +Inf, and the collector exports
  // fabric_rdma_port_rate_bytes_per_second NaN / +Inf instead of omitting and counting the
  // malformed file. Fix: reject !std::isfinite(gbits).
  for (const char* text : {"nan Gb/sec (4X)", "inf Gb/sec (4X NDR)", "infinity Gb/sec (1X)"}) {
    auto rate = ParseRate(text, "rate");
    EXPECT_FALSE(rate) << text << " -> " << rate->bytes_per_second;
  }
}

TEST(RdmaParseTest, counter_values_are_unsigned_64_bit) {
  auto small = ParseCounterValue("123\n", "c");
  ASSERT_TRUE(small);
  ASSERT_TRUE(small->has_value());
  EXPECT_EQ(**small, 123u);
  auto zero = ParseCounterValue("0", "c");
  ASSERT_TRUE(zero && zero->has_value());
  EXPECT_EQ(**zero, 0u);
  auto max = ParseCounterValue("18446744073709551615\n", "c");
  ASSERT_TRUE(max && max->has_value());
  EXPECT_EQ(**max, std::numeric_limits<uint64_t>::max());
}

TEST(RdmaParseTest, no_pma_counter_is_absent_not_an_error) {
  // Old kernels print this when the PMA MAD fails (node_exporter issue 966).
  for (const char* text : {"N/A (no PMA)\n", "N/A (no PMA)"}) {
    auto value = ParseCounterValue(text, "c");
    ASSERT_TRUE(value) << text;
    EXPECT_FALSE(value->has_value()) << text;
  }
}

TEST(RdmaParseTest, malformed_counter_values_are_errors_naming_the_file) {
  for (const char* text : {"12abc", "", "\n", "-1", "18446744073709551616", "1 2"}) {
    auto value = ParseCounterValue(text, "/x/counters/symbol_error");
    ASSERT_FALSE(value) << '"' << text << '"';
    EXPECT_EQ(value.error().code(), StatusCode::kInvalidArgument) << text;
    EXPECT_NE(value.error().message().find("/x/counters/symbol_error"), std::string::npos)
        << value.error().message();
  }
}

TEST(RdmaParseTest, lids_are_16_bit_hex) {
  EXPECT_EQ(ParseLid("0x1a\n", "lid").value(), 26u);
  EXPECT_EQ(ParseLid("0x0", "lid").value(), 0u);
  EXPECT_EQ(ParseLid("0x1", "sm_lid").value(), 1u);
  EXPECT_EQ(ParseLid("0xffff", "lid").value(), 65535u);  // permissive LID of an unconfigured port
}

TEST(RdmaParseTest, lid_errors) {
  for (const char* text : {"0x10000", "0x1ffff", "", "0x", "zz", "-0x1"}) {
    auto lid = ParseLid(text, "/x/ports/1/lid");
    ASSERT_FALSE(lid) << '"' << text << '"';
    EXPECT_EQ(lid.error().code(), StatusCode::kInvalidArgument) << text;
    EXPECT_NE(lid.error().message().find("/x/ports/1/lid"), std::string::npos)
        << lid.error().message();
  }
}

}  // namespace
}  // namespace fabricwatch::rdma
