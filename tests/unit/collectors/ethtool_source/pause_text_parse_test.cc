// The `ethtool -a` and `ethtool --get-tunable` replay texts
// (collectors/ethtool_source/pause_text_parse.h): the netlink-era and ioctl-era forms, CRLF,
// statistics, unknown and malformed lines.
#include "collectors/ethtool_source/pause_text_parse.h"

#include <gtest/gtest.h>

namespace fabricwatch::sys {
namespace {

TEST(PauseTextParseTest, NetlinkFormWithStatistics) {
  // ethtool 6.x netlink/pause.c with -I: tabs after the keys, an indented statistics block.
  auto parsed = ParseEthtoolPauseText(
      "Pause parameters for enp65s0f0np0:\nAutonegotiate:\toff\nRX:\t\ton\nTX:\t\toff\n"
      "Statistics:\n  tx_pause_frames: 12\n  rx_pause_frames: 3\n",
      "pause");
  ASSERT_TRUE(parsed) << parsed.error().ToString();
  EXPECT_EQ(parsed->info.autoneg, std::optional<bool>(false));
  EXPECT_EQ(parsed->info.rx_enabled, std::optional<bool>(true));
  EXPECT_EQ(parsed->info.tx_enabled, std::optional<bool>(false));
  EXPECT_EQ(parsed->info.tx_frames, std::optional<uint64_t>(12));
  EXPECT_EQ(parsed->info.rx_frames, std::optional<uint64_t>(3));
  EXPECT_EQ(parsed->unknown_lines, 0u);
  EXPECT_TRUE(parsed->problems.empty());
}

TEST(PauseTextParseTest, AutonegotiatedFormCrlfAndNoStatistics) {
  auto parsed = ParseEthtoolPauseText(
      "Pause parameters for eth0:\r\nAutonegotiate:\ton\r\nRX:\t\ton\r\nTX:\t\ton\r\n"
      "RX negotiated: on\r\nTX negotiated: off\r\n",
      "pause");
  ASSERT_TRUE(parsed) << parsed.error().ToString();
  EXPECT_EQ(parsed->info.autoneg, std::optional<bool>(true));
  EXPECT_EQ(parsed->info.rx_enabled, std::optional<bool>(true));
  EXPECT_EQ(parsed->info.tx_enabled, std::optional<bool>(true));  // the setting, not negotiated
  EXPECT_FALSE(parsed->info.tx_frames);
  EXPECT_EQ(parsed->unknown_lines, 0u);
}

TEST(PauseTextParseTest, UnknownAndMalformedLinesAreReportedAndTheRestKept) {
  auto parsed = ParseEthtoolPauseText(
      "# captured 2026-11-26\nPause parameters for eth0:\nAutonegotiate: off\nRX: maybe\n"
      "TX: on\nsomething new\nFlux: 7\n  tx_pause_frames: -1\n",
      "dir/eth0/pause");
  ASSERT_TRUE(parsed) << parsed.error().ToString();
  EXPECT_EQ(parsed->info.tx_enabled, std::optional<bool>(true));
  EXPECT_FALSE(parsed->info.rx_enabled);  // malformed: left out, never guessed
  EXPECT_FALSE(parsed->info.tx_frames);
  EXPECT_EQ(parsed->unknown_lines, 2u);
  ASSERT_EQ(parsed->problems.size(), 2u);
  EXPECT_NE(parsed->problems[0].message().find("dir/eth0/pause:4"), std::string::npos)
      << parsed->problems[0].message();
}

TEST(PauseTextParseTest, TextThatIsNotEthtoolOutputIsAnError) {
  auto parsed = ParseEthtoolPauseText("hello\nworld: 3\n", "p");
  ASSERT_FALSE(parsed);
  EXPECT_EQ(parsed.error().code(), StatusCode::kInvalidArgument);
  // Empty text (a driver that refused: ethtool wrote only to stderr) is an answer with nothing.
  auto empty = ParseEthtoolPauseText("", "p");
  ASSERT_TRUE(empty);
  EXPECT_FALSE(empty->info.rx_enabled);
}

TEST(PauseTextParseTest, Tunable) {
  EXPECT_EQ(*ParseEthtoolTunableText("pfc-prevention-tout: 100\n", "pfc-prevention-tout", "t"),
            100u);
  EXPECT_EQ(*ParseEthtoolTunableText("rx-copybreak: 256\r\npfc-prevention-tout: 0\r\n",
                                     "pfc-prevention-tout", "t"),
            0u);
  auto missing = ParseEthtoolTunableText("rx-copybreak: 256\n", "pfc-prevention-tout", "t");
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code(), StatusCode::kNoData);
  auto bad = ParseEthtoolTunableText("pfc-prevention-tout: auto\n", "pfc-prevention-tout", "t");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(bad.error().message().find("t:1"), std::string::npos);
}

}  // namespace
}  // namespace fabricwatch::sys
