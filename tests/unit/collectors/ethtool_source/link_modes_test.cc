// Tests of the link-mode table and the link-mode name parser
// (collectors/ethtool_source/link_modes.h): every bit the build header knows has the kernel's name,
// spot checks of speed, lanes and duplex against K net/ethtool/common.c link_mode_params, and names
// parsed apart.

#include "collectors/ethtool_source/link_modes.h"

#include <gtest/gtest.h>
#include <linux/ethtool.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fabricwatch::sys {
namespace {

// Every ETHTOOL_LINK_MODE_*_BIT of the build header (Debian 12: kernel 6.1, bits 0-92) with the
// name the kernel's link_mode_names gives it.
struct HeaderBit {
  uint32_t bit;
  std::string_view name;
};
constexpr HeaderBit kHeaderBits[] = {
    {ETHTOOL_LINK_MODE_10baseT_Half_BIT, "10baseT/Half"},
    {ETHTOOL_LINK_MODE_10baseT_Full_BIT, "10baseT/Full"},
    {ETHTOOL_LINK_MODE_100baseT_Half_BIT, "100baseT/Half"},
    {ETHTOOL_LINK_MODE_100baseT_Full_BIT, "100baseT/Full"},
    {ETHTOOL_LINK_MODE_1000baseT_Half_BIT, "1000baseT/Half"},
    {ETHTOOL_LINK_MODE_1000baseT_Full_BIT, "1000baseT/Full"},
    {ETHTOOL_LINK_MODE_Autoneg_BIT, "Autoneg"},
    {ETHTOOL_LINK_MODE_TP_BIT, "TP"},
    {ETHTOOL_LINK_MODE_AUI_BIT, "AUI"},
    {ETHTOOL_LINK_MODE_MII_BIT, "MII"},
    {ETHTOOL_LINK_MODE_FIBRE_BIT, "FIBRE"},
    {ETHTOOL_LINK_MODE_BNC_BIT, "BNC"},
    {ETHTOOL_LINK_MODE_10000baseT_Full_BIT, "10000baseT/Full"},
    {ETHTOOL_LINK_MODE_Pause_BIT, "Pause"},
    {ETHTOOL_LINK_MODE_Asym_Pause_BIT, "Asym_Pause"},
    {ETHTOOL_LINK_MODE_2500baseX_Full_BIT, "2500baseX/Full"},
    {ETHTOOL_LINK_MODE_Backplane_BIT, "Backplane"},
    {ETHTOOL_LINK_MODE_1000baseKX_Full_BIT, "1000baseKX/Full"},
    {ETHTOOL_LINK_MODE_10000baseKX4_Full_BIT, "10000baseKX4/Full"},
    {ETHTOOL_LINK_MODE_10000baseKR_Full_BIT, "10000baseKR/Full"},
    {ETHTOOL_LINK_MODE_10000baseR_FEC_BIT, "10000baseR_FEC"},
    {ETHTOOL_LINK_MODE_20000baseMLD2_Full_BIT, "20000baseMLD2/Full"},
    {ETHTOOL_LINK_MODE_20000baseKR2_Full_BIT, "20000baseKR2/Full"},
    {ETHTOOL_LINK_MODE_40000baseKR4_Full_BIT, "40000baseKR4/Full"},
    {ETHTOOL_LINK_MODE_40000baseCR4_Full_BIT, "40000baseCR4/Full"},
    {ETHTOOL_LINK_MODE_40000baseSR4_Full_BIT, "40000baseSR4/Full"},
    {ETHTOOL_LINK_MODE_40000baseLR4_Full_BIT, "40000baseLR4/Full"},
    {ETHTOOL_LINK_MODE_56000baseKR4_Full_BIT, "56000baseKR4/Full"},
    {ETHTOOL_LINK_MODE_56000baseCR4_Full_BIT, "56000baseCR4/Full"},
    {ETHTOOL_LINK_MODE_56000baseSR4_Full_BIT, "56000baseSR4/Full"},
    {ETHTOOL_LINK_MODE_56000baseLR4_Full_BIT, "56000baseLR4/Full"},
    {ETHTOOL_LINK_MODE_25000baseCR_Full_BIT, "25000baseCR/Full"},
    {ETHTOOL_LINK_MODE_25000baseKR_Full_BIT, "25000baseKR/Full"},
    {ETHTOOL_LINK_MODE_25000baseSR_Full_BIT, "25000baseSR/Full"},
    {ETHTOOL_LINK_MODE_50000baseCR2_Full_BIT, "50000baseCR2/Full"},
    {ETHTOOL_LINK_MODE_50000baseKR2_Full_BIT, "50000baseKR2/Full"},
    {ETHTOOL_LINK_MODE_100000baseKR4_Full_BIT, "100000baseKR4/Full"},
    {ETHTOOL_LINK_MODE_100000baseSR4_Full_BIT, "100000baseSR4/Full"},
    {ETHTOOL_LINK_MODE_100000baseCR4_Full_BIT, "100000baseCR4/Full"},
    {ETHTOOL_LINK_MODE_100000baseLR4_ER4_Full_BIT, "100000baseLR4_ER4/Full"},
    {ETHTOOL_LINK_MODE_50000baseSR2_Full_BIT, "50000baseSR2/Full"},
    {ETHTOOL_LINK_MODE_1000baseX_Full_BIT, "1000baseX/Full"},
    {ETHTOOL_LINK_MODE_10000baseCR_Full_BIT, "10000baseCR/Full"},
    {ETHTOOL_LINK_MODE_10000baseSR_Full_BIT, "10000baseSR/Full"},
    {ETHTOOL_LINK_MODE_10000baseLR_Full_BIT, "10000baseLR/Full"},
    {ETHTOOL_LINK_MODE_10000baseLRM_Full_BIT, "10000baseLRM/Full"},
    {ETHTOOL_LINK_MODE_10000baseER_Full_BIT, "10000baseER/Full"},
    {ETHTOOL_LINK_MODE_2500baseT_Full_BIT, "2500baseT/Full"},
    {ETHTOOL_LINK_MODE_5000baseT_Full_BIT, "5000baseT/Full"},
    {ETHTOOL_LINK_MODE_FEC_NONE_BIT, "None"},
    {ETHTOOL_LINK_MODE_FEC_RS_BIT, "RS"},
    {ETHTOOL_LINK_MODE_FEC_BASER_BIT, "BASER"},
    {ETHTOOL_LINK_MODE_50000baseKR_Full_BIT, "50000baseKR/Full"},
    {ETHTOOL_LINK_MODE_50000baseSR_Full_BIT, "50000baseSR/Full"},
    {ETHTOOL_LINK_MODE_50000baseCR_Full_BIT, "50000baseCR/Full"},
    {ETHTOOL_LINK_MODE_50000baseLR_ER_FR_Full_BIT, "50000baseLR_ER_FR/Full"},
    {ETHTOOL_LINK_MODE_50000baseDR_Full_BIT, "50000baseDR/Full"},
    {ETHTOOL_LINK_MODE_100000baseKR2_Full_BIT, "100000baseKR2/Full"},
    {ETHTOOL_LINK_MODE_100000baseSR2_Full_BIT, "100000baseSR2/Full"},
    {ETHTOOL_LINK_MODE_100000baseCR2_Full_BIT, "100000baseCR2/Full"},
    {ETHTOOL_LINK_MODE_100000baseLR2_ER2_FR2_Full_BIT, "100000baseLR2_ER2_FR2/Full"},
    {ETHTOOL_LINK_MODE_100000baseDR2_Full_BIT, "100000baseDR2/Full"},
    {ETHTOOL_LINK_MODE_200000baseKR4_Full_BIT, "200000baseKR4/Full"},
    {ETHTOOL_LINK_MODE_200000baseSR4_Full_BIT, "200000baseSR4/Full"},
    {ETHTOOL_LINK_MODE_200000baseLR4_ER4_FR4_Full_BIT, "200000baseLR4_ER4_FR4/Full"},
    {ETHTOOL_LINK_MODE_200000baseDR4_Full_BIT, "200000baseDR4/Full"},
    {ETHTOOL_LINK_MODE_200000baseCR4_Full_BIT, "200000baseCR4/Full"},
    {ETHTOOL_LINK_MODE_100baseT1_Full_BIT, "100baseT1/Full"},
    {ETHTOOL_LINK_MODE_1000baseT1_Full_BIT, "1000baseT1/Full"},
    {ETHTOOL_LINK_MODE_400000baseKR8_Full_BIT, "400000baseKR8/Full"},
    {ETHTOOL_LINK_MODE_400000baseSR8_Full_BIT, "400000baseSR8/Full"},
    {ETHTOOL_LINK_MODE_400000baseLR8_ER8_FR8_Full_BIT, "400000baseLR8_ER8_FR8/Full"},
    {ETHTOOL_LINK_MODE_400000baseDR8_Full_BIT, "400000baseDR8/Full"},
    {ETHTOOL_LINK_MODE_400000baseCR8_Full_BIT, "400000baseCR8/Full"},
    {ETHTOOL_LINK_MODE_FEC_LLRS_BIT, "LLRS"},
    {ETHTOOL_LINK_MODE_100000baseKR_Full_BIT, "100000baseKR/Full"},
    {ETHTOOL_LINK_MODE_100000baseSR_Full_BIT, "100000baseSR/Full"},
    {ETHTOOL_LINK_MODE_100000baseLR_ER_FR_Full_BIT, "100000baseLR_ER_FR/Full"},
    {ETHTOOL_LINK_MODE_100000baseCR_Full_BIT, "100000baseCR/Full"},
    {ETHTOOL_LINK_MODE_100000baseDR_Full_BIT, "100000baseDR/Full"},
    {ETHTOOL_LINK_MODE_200000baseKR2_Full_BIT, "200000baseKR2/Full"},
    {ETHTOOL_LINK_MODE_200000baseSR2_Full_BIT, "200000baseSR2/Full"},
    {ETHTOOL_LINK_MODE_200000baseLR2_ER2_FR2_Full_BIT, "200000baseLR2_ER2_FR2/Full"},
    {ETHTOOL_LINK_MODE_200000baseDR2_Full_BIT, "200000baseDR2/Full"},
    {ETHTOOL_LINK_MODE_200000baseCR2_Full_BIT, "200000baseCR2/Full"},
    {ETHTOOL_LINK_MODE_400000baseKR4_Full_BIT, "400000baseKR4/Full"},
    {ETHTOOL_LINK_MODE_400000baseSR4_Full_BIT, "400000baseSR4/Full"},
    {ETHTOOL_LINK_MODE_400000baseLR4_ER4_FR4_Full_BIT, "400000baseLR4_ER4_FR4/Full"},
    {ETHTOOL_LINK_MODE_400000baseDR4_Full_BIT, "400000baseDR4/Full"},
    {ETHTOOL_LINK_MODE_400000baseCR4_Full_BIT, "400000baseCR4/Full"},
    {ETHTOOL_LINK_MODE_100baseFX_Half_BIT, "100baseFX/Half"},
    {ETHTOOL_LINK_MODE_100baseFX_Full_BIT, "100baseFX/Full"},
    {ETHTOOL_LINK_MODE_10baseT1L_Full_BIT, "10baseT1L/Full"},
};

TEST(LinkModeTableTest, EveryBitOfTheBuildHeaderHasTheKernelName) {
  ASSERT_EQ(LinkModeTable().size(), kLinkModeBits);
  ASSERT_LE(static_cast<uint32_t>(__ETHTOOL_LINK_MODE_MASK_NBITS), kLinkModeBits);
  for (const HeaderBit& expected : kHeaderBits) {
    const LinkModeInfo* info = LinkModeByBit(expected.bit);
    ASSERT_NE(info, nullptr) << expected.bit;
    EXPECT_EQ(info->name, expected.name) << "bit " << expected.bit;
    EXPECT_EQ(LinkModeBitByName(expected.name), std::optional<uint32_t>(expected.bit));
  }
  EXPECT_EQ(LinkModeByBit(kLinkModeBits), nullptr);
}

// Spot checks against link_mode_params (speed, __LINK_MODE_LANES_*, duplex), including the bits
// newer than the build header (UAPI linux/ethtool.h of kernel 6.x, bits 93-124).
struct ParamsCase {
  uint32_t bit;
  std::string_view name;
  uint32_t speed;
  uint32_t lanes;
  LinkDuplex duplex;
};
constexpr ParamsCase kParams[] = {
    {0, "10baseT/Half", 10, 1, LinkDuplex::kHalf},
    {5, "1000baseT/Full", 1000, 1, LinkDuplex::kFull},
    {18, "10000baseKX4/Full", 10000, 4, LinkDuplex::kFull},
    {20, "10000baseR_FEC", 10000, 1, LinkDuplex::kFull},
    {21, "20000baseMLD2/Full", 20000, 2, LinkDuplex::kFull},
    {33, "25000baseSR/Full", 25000, 1, LinkDuplex::kFull},
    {39, "100000baseLR4_ER4/Full", 100000, 4, LinkDuplex::kFull},
    {57, "100000baseKR2/Full", 100000, 2, LinkDuplex::kFull},
    {64, "200000baseLR4_ER4_FR4/Full", 200000, 4, LinkDuplex::kFull},
    {66, "200000baseCR4/Full", 200000, 4, LinkDuplex::kFull},
    {71, "400000baseLR8_ER8_FR8/Full", 400000, 8, LinkDuplex::kFull},
    {78, "100000baseCR/Full", 100000, 1, LinkDuplex::kFull},
    {79, "100000baseDR/Full", 100000, 1, LinkDuplex::kFull},
    {89, "400000baseCR4/Full", 400000, 4, LinkDuplex::kFull},
    {90, "100baseFX/Half", 100, 1, LinkDuplex::kHalf},
    {96, "800000baseDR8_2/Full", 800000, 8, LinkDuplex::kFull},
    {101, "10baseT1S_P2MP/Half", 10, 1, LinkDuplex::kHalf},
    {102, "10baseT1BRR/Full", 10, 1, LinkDuplex::kFull},
    {106, "200000baseDR_2/Full", 200000, 1, LinkDuplex::kFull},
    {112, "400000baseDR2_2/Full", 400000, 2, LinkDuplex::kFull},
    {114, "400000baseVR2/Full", 400000, 2, LinkDuplex::kFull},
    {118, "800000baseDR4_2/Full", 800000, 4, LinkDuplex::kFull},
    {121, "1600000baseCR8/Full", 1600000, 8, LinkDuplex::kFull},
    {124, "1600000baseDR8_2/Full", 1600000, 8, LinkDuplex::kFull},
};

TEST(LinkModeTableTest, SpeedLanesAndDuplexMatchTheKernelParams) {
  for (const ParamsCase& c : kParams) {
    const LinkModeInfo* info = LinkModeByBit(c.bit);
    ASSERT_NE(info, nullptr);
    EXPECT_EQ(info->name, c.name) << c.bit;
    EXPECT_EQ(info->speed_mbps, c.speed) << c.name;
    EXPECT_EQ(info->lanes, c.lanes) << c.name;
    EXPECT_EQ(info->duplex, c.duplex) << c.name;
    EXPECT_TRUE(info->is_link_mode());
  }
  for (uint32_t special : {6u, 7u, 8u, 9u, 10u, 11u, 13u, 14u, 16u, 49u, 50u, 51u, 74u}) {
    EXPECT_FALSE(LinkModeByBit(special)->is_link_mode()) << LinkModeByBit(special)->name;
  }
  EXPECT_EQ(LinkModeByBit(49)->name, "None");
  EXPECT_EQ(LinkModeByBit(74)->name, "LLRS");
}

// The name parser agrees with the table on every link mode of it that has the regular form.
TEST(LinkModeNameTest, AgreesWithTheTable) {
  for (const LinkModeInfo& info : LinkModeTable()) {
    if (!info.is_link_mode() || info.name == "10000baseR_FEC") continue;
    auto parsed = ParseLinkModeName(info.name);
    ASSERT_TRUE(parsed) << info.name;
    EXPECT_EQ(parsed->speed_mbps, info.speed_mbps) << info.name;
    EXPECT_EQ(parsed->lanes, info.lanes) << info.name;
    EXPECT_EQ(parsed->duplex, info.duplex) << info.name;
  }
}

TEST(LinkModeNameTest, ParsesNamesAndRejectsOthers) {
  struct Case {
    std::string_view name;
    std::optional<LinkModeName> expected;
  };
  const Case cases[] = {
      {"400000baseCR4/Full", LinkModeName{400000, 4, LinkDuplex::kFull}},
      {"25000baseSR/Full", LinkModeName{25000, 1, LinkDuplex::kFull}},
      {"1000baseT/Half", LinkModeName{1000, 1, LinkDuplex::kHalf}},
      {"100000baseLR4_ER4/Full", LinkModeName{100000, 4, LinkDuplex::kFull}},
      {"400000baseDR4_2/Full", LinkModeName{400000, 4, LinkDuplex::kFull}},
      {"3200000baseCR16/Full", LinkModeName{3200000, 16, LinkDuplex::kFull}},  // not yet real
      {"100baseT1/Full", LinkModeName{100, 1, LinkDuplex::kFull}},
      {"10000baseR_FEC", std::nullopt},
      {"Autoneg", std::nullopt},
      {"BIT121", std::nullopt},
      {"", std::nullopt},
      {"base/Full", std::nullopt},
      {"0baseT/Full", std::nullopt},
      {"99999999999baseT/Full", std::nullopt},
      {"1000baseT/Quarter", std::nullopt},
      {"1000base/Full", std::nullopt},
      {"1000base4/Full", std::nullopt},
      {"1000baseCR0/Full", std::nullopt},
      {"1000baseC R/Full", std::nullopt},
      {"-1000baseT/Full", std::nullopt},
      {"1000baseT/Full/Full", std::nullopt},
  };
  for (const Case& c : cases) {
    auto parsed = ParseLinkModeName(c.name);
    ASSERT_EQ(parsed.has_value(), c.expected.has_value()) << c.name;
    if (!parsed) continue;
    EXPECT_EQ(parsed->speed_mbps, c.expected->speed_mbps) << c.name;
    EXPECT_EQ(parsed->lanes, c.expected->lanes) << c.name;
    EXPECT_EQ(parsed->duplex, c.expected->duplex) << c.name;
  }
}

TEST(LinkModeNameTest, SpeedOfNamesAndBits) {
  EXPECT_EQ(LinkModeSpeedOfName("400000baseCR4/Full"), std::optional<uint32_t>(400000));
  EXPECT_EQ(LinkModeSpeedOfName("10000baseR_FEC"), std::optional<uint32_t>(10000));
  EXPECT_EQ(LinkModeSpeedOfName("3200000baseCR16/Full"), std::optional<uint32_t>(3200000));
  EXPECT_EQ(LinkModeSpeedOfName("BIT89"), std::optional<uint32_t>(400000));
  EXPECT_FALSE(LinkModeSpeedOfName("BIT6"));    // Autoneg
  EXPECT_FALSE(LinkModeSpeedOfName("BIT999"));  // past the table
  EXPECT_FALSE(LinkModeSpeedOfName("FIBRE"));
  EXPECT_FALSE(LinkModeSpeedOfName("junk"));
}

TEST(LinkModeBitsTest, BitmapsBecomeNamesAndTheFastestSpeed) {
  std::vector<std::string> modes;
  std::optional<uint32_t> max;
  // 1000baseT/Full (5), Autoneg (6), 25000baseCR (31), 100000baseCR4 (38), FEC_RS (50), bit 127.
  const uint32_t words[] = {(1u << 5) | (1u << 6) | (1u << 31), (1u << 6) | (1u << 18), 0,
                            1u << 31};
  AddLinkModeBits(words, 128, modes, max);
  EXPECT_EQ(modes, (std::vector<std::string>{"1000baseT/Full", "25000baseCR/Full",
                                             "100000baseCR4/Full", "BIT127"}));
  EXPECT_EQ(max, std::optional<uint32_t>(100000));

  // A newer kernel's bit with its name (a verbose bitset) counts; a nameless one has no speed.
  std::vector<std::string> newer;
  std::optional<uint32_t> newer_max;
  AddLinkModeBit(130, "3200000baseCR16/Full", newer, newer_max);
  AddLinkModeBit(131, "SomeNewFlag", newer, newer_max);
  EXPECT_EQ(newer, (std::vector<std::string>{"3200000baseCR16/Full"}));
  EXPECT_EQ(newer_max, std::optional<uint32_t>(3200000));

  // nbits shorter than the words: later bits are not read.
  std::vector<std::string> few;
  std::optional<uint32_t> few_max;
  AddLinkModeBits(words, 6, few, few_max);
  EXPECT_EQ(few, (std::vector<std::string>{"1000baseT/Full"}));
}

TEST(LinkModeValuesTest, SpeedDuplexAndPortValues) {
  EXPECT_FALSE(KnownLinkSpeed(0));
  EXPECT_FALSE(KnownLinkSpeed(0xffff));
  EXPECT_FALSE(KnownLinkSpeed(0xffffffffu));
  EXPECT_EQ(KnownLinkSpeed(54000), std::optional<uint32_t>(54000));
  EXPECT_EQ(LinkDuplexName(DUPLEX_FULL), "full");
  EXPECT_EQ(LinkDuplexName(DUPLEX_HALF), "half");
  EXPECT_EQ(LinkDuplexName(DUPLEX_UNKNOWN), "");
  EXPECT_EQ(LinkPortName(PORT_DA), "Direct Attach Copper");
  EXPECT_EQ(LinkPortName(PORT_FIBRE), "FIBRE");
  EXPECT_EQ(LinkPortName(PORT_TP), "Twisted Pair");
  EXPECT_EQ(LinkPortName(PORT_OTHER), "Other");
  EXPECT_EQ(LinkPortName(0x77), "");
}

}  // namespace
}  // namespace fabricwatch::sys
