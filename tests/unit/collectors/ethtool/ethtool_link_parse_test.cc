// Tests of the `ethtool <netdev>` text parser (sys/ethtool_replay_parse.h ParseEthtoolLinkText),
// the replay format of DIR/<netdev>/link: every quirk of real output, malformed and hostile text.
// The texts are written here in the layouts ethtool prints (netlink/settings.c, and the
// ioctl-era tool); the external captures (../shared/fixtures/external/ethtool-i, not committed:
// `ethtool IFACE` output despite the folder's name) are parsed when present.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "collectors/ethtool_source/ethtool_replay_parse.h"
#include "tests/testing/test_paths.h"

namespace fabricwatch::sys {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

ParsedEthtoolLink Parse(std::string_view text) {
  auto parsed = ParseEthtoolLinkText(text, "eth0/link");
  EXPECT_TRUE(parsed) << parsed.error().ToString();
  return parsed ? *parsed : ParsedEthtoolLink{};
}

// A ConnectX-7 port at 400G over 4 lanes (ethtool 6.x, netlink): the supported list wrapped one
// mode a line, the message level on two lines.
constexpr std::string_view kCx7 =
    "Settings for enp65s0f0np0:\n"
    "\tSupported ports: [ Backplane ]\n"
    "\tSupported link modes:   1000baseKX/Full\n"
    "\t                        10000baseKR/Full\n"
    "\t                        25000baseCR/Full\n"
    "\t                        100000baseCR4/Full\n"
    "\t                        200000baseCR4/Full\n"
    "\t                        400000baseCR4/Full\n"
    "\t                        400000baseDR4/Full\n"
    "\tSupported pause frame use: Symmetric\n"
    "\tSupports auto-negotiation: Yes\n"
    "\tSupported FEC modes: None\t RS\t LLRS\n"
    "\tAdvertised link modes:  100000baseCR4/Full\n"
    "\t                        200000baseCR4/Full\n"
    "\tAdvertised pause frame use: Symmetric\n"
    "\tAdvertised auto-negotiation: Yes\n"
    "\tAdvertised FEC modes: RS\n"
    "\tLink partner advertised link modes:  400000baseCR4/Full\n"
    "\tLink partner advertised pause frame use: No\n"
    "\tLink partner advertised auto-negotiation: Yes\n"
    "\tLink partner advertised FEC modes: Not reported\n"
    "\tSpeed: 200000Mb/s\n"
    "\tLanes: 4\n"
    "\tDuplex: Full\n"
    "\tAuto-negotiation: on\n"
    "\tPort: Direct Attach Copper\n"
    "\tPHYAD: 0\n"
    "\tTransceiver: internal\n"
    "\tSupports Wake-on: d\n"
    "\tWake-on: d\n"
    "        Current message level: 0x00000004 (4)\n"
    "                               link\n"
    "\tLink detected: yes\n";

TEST(EthtoolLinkParseTest, WrappedListsLanesAndAllFields) {
  ParsedEthtoolLink parsed = Parse(kCx7);
  EXPECT_THAT(parsed.problems, IsEmpty());
  const LinkSettings& s = parsed.settings;
  EXPECT_EQ(s.speed_mbps, std::optional<uint32_t>(200000));
  EXPECT_EQ(s.lanes, std::optional<uint32_t>(4));
  EXPECT_EQ(s.duplex, "full");
  EXPECT_EQ(s.autoneg, std::optional<bool>(true));
  EXPECT_EQ(s.link_detected, std::optional<bool>(true));
  EXPECT_EQ(s.port, "Direct Attach Copper");
  EXPECT_THAT(
      s.supported_modes,
      ElementsAre("1000baseKX/Full", "10000baseKR/Full", "25000baseCR/Full", "100000baseCR4/Full",
                  "200000baseCR4/Full", "400000baseCR4/Full", "400000baseDR4/Full"));
  EXPECT_THAT(s.advertised_modes, ElementsAre("100000baseCR4/Full", "200000baseCR4/Full"));
  EXPECT_EQ(s.max_supported_speed_mbps, std::optional<uint32_t>(400000));
  EXPECT_EQ(s.max_advertised_speed_mbps, std::optional<uint32_t>(200000));
}

// An IPoIB port (Azure HPC, ConnectX in InfiniBand mode): a speed with no link modes at all.
TEST(EthtoolLinkParseTest, IpoibSpeedWithNotReportedModes) {
  ParsedEthtoolLink parsed = Parse(
      "Settings for ib0:\n"
      "\tSupported ports: [ ]\n"
      "\tSupported link modes:   Not reported\n"
      "\tSupported pause frame use: No\n"
      "\tSupports auto-negotiation: No\n"
      "\tAdvertised link modes:  Not reported\n"
      "\tAdvertised pause frame use: No\n"
      "\tAdvertised auto-negotiation: No\n"
      "\tSpeed: 54000Mb/s\n"
      "\tDuplex: Full\n"
      "\tPort: Other\n"
      "\tPHYAD: 0\n"
      "\tTransceiver: internal\n"
      "\tAuto-negotiation: off\n"
      "\tCurrent message level: 0x000000f7 (247)\n"
      "\t\t\t       drv probe link ifdown ifup rx_err tx_err\n"
      "\tLink detected: yes");  // no newline at the end
  EXPECT_THAT(parsed.problems, IsEmpty());
  const LinkSettings& s = parsed.settings;
  EXPECT_EQ(s.speed_mbps, std::optional<uint32_t>(54000));
  EXPECT_FALSE(s.lanes);
  EXPECT_EQ(s.port, "Other");
  EXPECT_EQ(s.autoneg, std::optional<bool>(false));
  EXPECT_THAT(s.supported_modes, IsEmpty());
  EXPECT_THAT(s.advertised_modes, IsEmpty());
  EXPECT_FALSE(s.max_supported_speed_mbps);
  EXPECT_FALSE(s.max_advertised_speed_mbps);
  EXPECT_EQ(s.link_detected, std::optional<bool>(true));
}

// igb with the cable out (ioctl-era ethtool): half/full pairs on one line, "Unknown!" speed and
// duplex, a one-space "Not reported", CRLF line ends.
TEST(EthtoolLinkParseTest, LinkDownUnknownsPairsAndCrlf) {
  ParsedEthtoolLink parsed = Parse(
      "Settings for eno1:\r\n"
      "\tSupported ports: [ TP ]\r\n"
      "\tSupported link modes:   10baseT/Half 10baseT/Full\r\n"
      "\t                        100baseT/Half 100baseT/Full\r\n"
      "\t                        1000baseT/Full\r\n"
      "\tAdvertised link modes: Not reported\r\n"
      "\tSpeed: Unknown!\r\n"
      "\tDuplex: Unknown! (255)\r\n"
      "\tPort: Twisted Pair\r\n"
      "\tAuto-negotiation: on\r\n"
      "\tMDI-X: off (auto)\r\n"
      "\tLink detected: no\r\n");
  EXPECT_THAT(parsed.problems, IsEmpty());
  const LinkSettings& s = parsed.settings;
  EXPECT_FALSE(s.speed_mbps);
  EXPECT_EQ(s.duplex, "");
  EXPECT_THAT(s.supported_modes, ElementsAre("10baseT/Half", "10baseT/Full", "100baseT/Half",
                                             "100baseT/Full", "1000baseT/Full"));
  EXPECT_EQ(s.max_supported_speed_mbps, std::optional<uint32_t>(1000));
  EXPECT_THAT(s.advertised_modes, IsEmpty());
  EXPECT_EQ(s.link_detected, std::optional<bool>(false));
}

// Names the table lacks are parsed; "BIT<n>" (no name in the kernel's string set) is bit n;
// the non-mode "10000baseR_FEC" and the newest modes are known by name; spaces for tabs.
TEST(EthtoolLinkParseTest, NewerNamesBitNamesAndSpaces) {
  ParsedEthtoolLink parsed = Parse(
      "Settings for eth9:\n"
      "    Supported link modes:   10000baseR_FEC 1600000baseDR8_2/Full\n"
      "                            3200000baseCR16/Full BIT89\n"
      "    Advertised link modes:  BIT89\n"
      "    Speed: 400000Mb/s\n"
      "    Link detected: no (No cable)\n");
  EXPECT_THAT(parsed.problems, IsEmpty());
  const LinkSettings& s = parsed.settings;
  EXPECT_THAT(s.supported_modes, ElementsAre("10000baseR_FEC", "1600000baseDR8_2/Full",
                                             "3200000baseCR16/Full", "BIT89"));
  EXPECT_EQ(s.max_supported_speed_mbps, std::optional<uint32_t>(3200000));
  EXPECT_EQ(s.max_advertised_speed_mbps, std::optional<uint32_t>(400000));
  EXPECT_EQ(s.link_detected, std::optional<bool>(false));
}

// The deliberately broken capture's shape: `ethtool -i` lines without colons, keys without
// colons inside the settings, a speed that does not parse. Each is a problem naming its line;
// what parsed is kept.
TEST(EthtoolLinkParseTest, MalformedLinesAreReportedAndTheRestKept) {
  auto parsed = ParseEthtoolLinkText(
      "driver i40e\n"                               // 1
      "bus-info: 0000:1c:00.0\n"                    // 2: an `ethtool -i` key, ignored
      "Settings for eth0:\n"                        // 3
      "\tSupported ports [ TP ]\n"                  // 4: no colon, continues nothing
      "\tSupported link modes:   1000baseT/Full\n"  // 5
      "\tSupported FEC modes: Not reported\n"       // 6
      "\tAdvertised link modes  1000baseT/Full\n"   // 7: "Not reported" has no continuation
      "\tSpeed: ZeroGb/s\n"                         // 8
      "\tDuplex: Full\n"                            // 9
      "\tLanes: four\n"                             // 10
      "\tAuto-negotiation: maybe\n"                 // 11
      "\tPort: Twisted Pair\n"                      // 12
      "\tLink detected: yes\n",                     // 13
      "dir/eth0/link");
  ASSERT_TRUE(parsed) << parsed.error().ToString();
  EXPECT_EQ(parsed->malformed_lines, 6u);
  ASSERT_EQ(parsed->problems.size(), 6u);
  EXPECT_THAT(parsed->problems[0].message(), HasSubstr("dir/eth0/link:1: "));
  EXPECT_THAT(parsed->problems[1].message(), HasSubstr("dir/eth0/link:4: "));
  EXPECT_THAT(parsed->problems[2].message(), HasSubstr("dir/eth0/link:7: "));
  EXPECT_THAT(parsed->problems[3].message(), HasSubstr(":8: Speed: cannot parse \"ZeroGb/s\""));
  EXPECT_THAT(parsed->problems[4].message(), HasSubstr(":10: Lanes"));
  EXPECT_THAT(parsed->problems[5].message(), HasSubstr(":11: Auto-negotiation"));
  const LinkSettings& s = parsed->settings;
  EXPECT_THAT(s.supported_modes, ElementsAre("1000baseT/Full"));
  EXPECT_THAT(s.advertised_modes, IsEmpty());
  EXPECT_FALSE(s.speed_mbps);
  EXPECT_FALSE(s.lanes);
  EXPECT_FALSE(s.autoneg);
  EXPECT_EQ(s.duplex, "full");
  EXPECT_EQ(s.port, "Twisted Pair");
  EXPECT_EQ(s.link_detected, std::optional<bool>(true));
}

TEST(EthtoolLinkParseTest, BadLinkModeTokensAreProblems) {
  ParsedEthtoolLink parsed = Parse(
      "Settings for eth0:\n"
      "\tSupported link modes:   25000baseSR/Full fastest!\n"
      "\t                        Advertised 10000baseSR/Full\n");
  EXPECT_EQ(parsed.malformed_lines, 2u);
  EXPECT_THAT(parsed.problems[0].message(), HasSubstr(":2: not a link mode: \"fastest!\""));
  EXPECT_THAT(parsed.settings.supported_modes, ElementsAre("25000baseSR/Full", "10000baseSR/Full"));
  EXPECT_EQ(parsed.settings.max_supported_speed_mbps, std::optional<uint32_t>(25000));
}

TEST(EthtoolLinkParseTest, EmptyCommentsAndHeaderOnlyAreValid) {
  for (std::string_view text : {"", "\n\n", "# captured on host x\n", "Settings for eth0:\n"}) {
    auto parsed = ParseEthtoolLinkText(text, "l");
    ASSERT_TRUE(parsed) << text;
    EXPECT_EQ(parsed->malformed_lines, 0u);
    EXPECT_FALSE(parsed->settings.speed_mbps);
    EXPECT_THAT(parsed->settings.supported_modes, IsEmpty());
  }
}

TEST(EthtoolLinkParseTest, TextThatIsNotEthtoolOutputIsAnError) {
  auto parsed = ParseEthtoolLinkText("<html>\nnot found\n</html>\n", "dir/eth0/link");
  ASSERT_FALSE(parsed);
  EXPECT_EQ(parsed.error().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(parsed.error().message(), HasSubstr("dir/eth0/link: not ethtool output"));
  EXPECT_THAT(parsed.error().message(), HasSubstr("dir/eth0/link:1:"));
}

TEST(EthtoolLinkParseTest, HostileTextIsBoundedAndNeverCrashes) {
  // Thousands of modes: the list stops at kMaxLinkModes with one problem.
  std::string many = "Settings for eth0:\n\tSupported link modes:  ";
  for (int i = 0; i < 5000; ++i) many += " 1000baseT/Full";
  many += "\n";
  ParsedEthtoolLink parsed = Parse(many);
  EXPECT_EQ(parsed.settings.supported_modes.size(), ParsedEthtoolLink::kMaxLinkModes);
  EXPECT_EQ(parsed.malformed_lines, 1u);

  // Thousands of bad lines: problems are capped, the count is exact.
  std::string bad = "Settings for eth0:\n";
  for (int i = 0; i < 3000; ++i) bad += "garbage line\n";
  ParsedEthtoolLink flood = Parse(bad);
  EXPECT_EQ(flood.malformed_lines, 3000u);
  EXPECT_EQ(flood.problems.size(), ParsedEthtoolLink::kMaxProblems);

  // Binary junk, NULs, huge numbers, control characters in the port, lone continuation lines.
  const std::string junk[] = {
      std::string("\0\0\0:\n\t\xff\xfe\n", 8),
      "Speed: 99999999999999999999Mb/s\n",
      "Speed: Mb/s\n",
      "Port: \x1b[31mred\n",
      "Port: " + std::string(200, 'x') + "\n",
      "\t\t1000baseT/Full\n",
      "Supported link modes:\n\t1000baseT/Full\n",
      ":\n::\n: :\n",
  };
  for (const std::string& text : junk) {
    auto result = ParseEthtoolLinkText(text, "junk");
    if (result) EXPECT_TRUE(result->settings.port.size() <= 64);
  }
  auto color = ParseEthtoolLinkText("Settings for e:\n\tPort: \x1b[31mred\n", "c");
  ASSERT_TRUE(color);
  EXPECT_EQ(color->settings.port, "");
  EXPECT_EQ(color->malformed_lines, 1u);
}

// The real captures: every file parses; the good ones without a problem, the deliberately
// malformed one with problems naming their lines.
TEST(EthtoolLinkParseTest, ExternalCapturesWhenPresent) {
  const std::filesystem::path dir = testing::SourcePath("../shared/fixtures/external/ethtool-i");
  if (!std::filesystem::is_directory(dir)) {
    GTEST_SKIP() << dir << " is absent (the external corpus is not part of the repository)";
  }
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string path = entry.path().string();
    const std::string text = testing::ReadTextFile(path);
    auto parsed = ParseEthtoolLinkText(text, path);
    ASSERT_TRUE(parsed) << parsed.error().ToString();
    ++files;
    if (path.find("MALFORMED") != std::string::npos) {
      EXPECT_GT(parsed->malformed_lines, 0u) << path;
      continue;
    }
    EXPECT_EQ(parsed->malformed_lines, 0u)
        << path << ": " << (parsed->problems.empty() ? "" : parsed->problems[0].message());
    EXPECT_TRUE(parsed->settings.link_detected.has_value()) << path;
    if (path.find("azhpc") != std::string::npos) {
      EXPECT_EQ(parsed->settings.speed_mbps, std::optional<uint32_t>(54000));
      EXPECT_THAT(parsed->settings.supported_modes, IsEmpty());
    }
  }
  EXPECT_GT(files, 0);
}

}  // namespace
}  // namespace fabricwatch::sys
