#include "collectors/ethtool_source/link_modes.h"

#include <linux/ethtool.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <system_error>

namespace fabricwatch::sys {
namespace {

// By bit: UAPI linux/ethtool.h enum ethtool_link_mode_bit_indices (the bit numbers), K
// net/ethtool/common.c link_mode_names (the names, ETH_SS_LINK_MODES) and link_mode_params (speed,
// lanes, duplex; its special modes have SPEED_UNKNOWN, written 0 here). Bits 93-124 (800G by 8
// lanes, 10BASE-T1S/T1BRR, 200G by 1, 400G by 2, 800G by 4 and 1.6T by 8 lanes) are newer than
// Debian 12's header, which only the static_asserts below can check against.
constexpr std::array<LinkModeInfo, kLinkModeBits> kTable = {{
    {"10baseT/Half", 10, 1, LinkDuplex::kHalf},                    // 0
    {"10baseT/Full", 10, 1, LinkDuplex::kFull},                    // 1
    {"100baseT/Half", 100, 1, LinkDuplex::kHalf},                  // 2
    {"100baseT/Full", 100, 1, LinkDuplex::kFull},                  // 3
    {"1000baseT/Half", 1000, 1, LinkDuplex::kHalf},                // 4
    {"1000baseT/Full", 1000, 1, LinkDuplex::kFull},                // 5
    {"Autoneg", 0, 0, LinkDuplex::kUnknown},                       // 6
    {"TP", 0, 0, LinkDuplex::kUnknown},                            // 7
    {"AUI", 0, 0, LinkDuplex::kUnknown},                           // 8
    {"MII", 0, 0, LinkDuplex::kUnknown},                           // 9
    {"FIBRE", 0, 0, LinkDuplex::kUnknown},                         // 10
    {"BNC", 0, 0, LinkDuplex::kUnknown},                           // 11
    {"10000baseT/Full", 10000, 1, LinkDuplex::kFull},              // 12
    {"Pause", 0, 0, LinkDuplex::kUnknown},                         // 13
    {"Asym_Pause", 0, 0, LinkDuplex::kUnknown},                    // 14
    {"2500baseX/Full", 2500, 1, LinkDuplex::kFull},                // 15
    {"Backplane", 0, 0, LinkDuplex::kUnknown},                     // 16
    {"1000baseKX/Full", 1000, 1, LinkDuplex::kFull},               // 17
    {"10000baseKX4/Full", 10000, 4, LinkDuplex::kFull},            // 18
    {"10000baseKR/Full", 10000, 1, LinkDuplex::kFull},             // 19
    {"10000baseR_FEC", 10000, 1, LinkDuplex::kFull},               // 20
    {"20000baseMLD2/Full", 20000, 2, LinkDuplex::kFull},           // 21
    {"20000baseKR2/Full", 20000, 2, LinkDuplex::kFull},            // 22
    {"40000baseKR4/Full", 40000, 4, LinkDuplex::kFull},            // 23
    {"40000baseCR4/Full", 40000, 4, LinkDuplex::kFull},            // 24
    {"40000baseSR4/Full", 40000, 4, LinkDuplex::kFull},            // 25
    {"40000baseLR4/Full", 40000, 4, LinkDuplex::kFull},            // 26
    {"56000baseKR4/Full", 56000, 4, LinkDuplex::kFull},            // 27
    {"56000baseCR4/Full", 56000, 4, LinkDuplex::kFull},            // 28
    {"56000baseSR4/Full", 56000, 4, LinkDuplex::kFull},            // 29
    {"56000baseLR4/Full", 56000, 4, LinkDuplex::kFull},            // 30
    {"25000baseCR/Full", 25000, 1, LinkDuplex::kFull},             // 31
    {"25000baseKR/Full", 25000, 1, LinkDuplex::kFull},             // 32
    {"25000baseSR/Full", 25000, 1, LinkDuplex::kFull},             // 33
    {"50000baseCR2/Full", 50000, 2, LinkDuplex::kFull},            // 34
    {"50000baseKR2/Full", 50000, 2, LinkDuplex::kFull},            // 35
    {"100000baseKR4/Full", 100000, 4, LinkDuplex::kFull},          // 36
    {"100000baseSR4/Full", 100000, 4, LinkDuplex::kFull},          // 37
    {"100000baseCR4/Full", 100000, 4, LinkDuplex::kFull},          // 38
    {"100000baseLR4_ER4/Full", 100000, 4, LinkDuplex::kFull},      // 39
    {"50000baseSR2/Full", 50000, 2, LinkDuplex::kFull},            // 40
    {"1000baseX/Full", 1000, 1, LinkDuplex::kFull},                // 41
    {"10000baseCR/Full", 10000, 1, LinkDuplex::kFull},             // 42
    {"10000baseSR/Full", 10000, 1, LinkDuplex::kFull},             // 43
    {"10000baseLR/Full", 10000, 1, LinkDuplex::kFull},             // 44
    {"10000baseLRM/Full", 10000, 1, LinkDuplex::kFull},            // 45
    {"10000baseER/Full", 10000, 1, LinkDuplex::kFull},             // 46
    {"2500baseT/Full", 2500, 1, LinkDuplex::kFull},                // 47
    {"5000baseT/Full", 5000, 1, LinkDuplex::kFull},                // 48
    {"None", 0, 0, LinkDuplex::kUnknown},                          // 49
    {"RS", 0, 0, LinkDuplex::kUnknown},                            // 50
    {"BASER", 0, 0, LinkDuplex::kUnknown},                         // 51
    {"50000baseKR/Full", 50000, 1, LinkDuplex::kFull},             // 52
    {"50000baseSR/Full", 50000, 1, LinkDuplex::kFull},             // 53
    {"50000baseCR/Full", 50000, 1, LinkDuplex::kFull},             // 54
    {"50000baseLR_ER_FR/Full", 50000, 1, LinkDuplex::kFull},       // 55
    {"50000baseDR/Full", 50000, 1, LinkDuplex::kFull},             // 56
    {"100000baseKR2/Full", 100000, 2, LinkDuplex::kFull},          // 57
    {"100000baseSR2/Full", 100000, 2, LinkDuplex::kFull},          // 58
    {"100000baseCR2/Full", 100000, 2, LinkDuplex::kFull},          // 59
    {"100000baseLR2_ER2_FR2/Full", 100000, 2, LinkDuplex::kFull},  // 60
    {"100000baseDR2/Full", 100000, 2, LinkDuplex::kFull},          // 61
    {"200000baseKR4/Full", 200000, 4, LinkDuplex::kFull},          // 62
    {"200000baseSR4/Full", 200000, 4, LinkDuplex::kFull},          // 63
    {"200000baseLR4_ER4_FR4/Full", 200000, 4, LinkDuplex::kFull},  // 64
    {"200000baseDR4/Full", 200000, 4, LinkDuplex::kFull},          // 65
    {"200000baseCR4/Full", 200000, 4, LinkDuplex::kFull},          // 66
    {"100baseT1/Full", 100, 1, LinkDuplex::kFull},                 // 67
    {"1000baseT1/Full", 1000, 1, LinkDuplex::kFull},               // 68
    {"400000baseKR8/Full", 400000, 8, LinkDuplex::kFull},          // 69
    {"400000baseSR8/Full", 400000, 8, LinkDuplex::kFull},          // 70
    {"400000baseLR8_ER8_FR8/Full", 400000, 8, LinkDuplex::kFull},  // 71
    {"400000baseDR8/Full", 400000, 8, LinkDuplex::kFull},          // 72
    {"400000baseCR8/Full", 400000, 8, LinkDuplex::kFull},          // 73
    {"LLRS", 0, 0, LinkDuplex::kUnknown},                          // 74
    {"100000baseKR/Full", 100000, 1, LinkDuplex::kFull},           // 75
    {"100000baseSR/Full", 100000, 1, LinkDuplex::kFull},           // 76
    {"100000baseLR_ER_FR/Full", 100000, 1, LinkDuplex::kFull},     // 77
    {"100000baseCR/Full", 100000, 1, LinkDuplex::kFull},           // 78
    {"100000baseDR/Full", 100000, 1, LinkDuplex::kFull},           // 79
    {"200000baseKR2/Full", 200000, 2, LinkDuplex::kFull},          // 80
    {"200000baseSR2/Full", 200000, 2, LinkDuplex::kFull},          // 81
    {"200000baseLR2_ER2_FR2/Full", 200000, 2, LinkDuplex::kFull},  // 82
    {"200000baseDR2/Full", 200000, 2, LinkDuplex::kFull},          // 83
    {"200000baseCR2/Full", 200000, 2, LinkDuplex::kFull},          // 84
    {"400000baseKR4/Full", 400000, 4, LinkDuplex::kFull},          // 85
    {"400000baseSR4/Full", 400000, 4, LinkDuplex::kFull},          // 86
    {"400000baseLR4_ER4_FR4/Full", 400000, 4, LinkDuplex::kFull},  // 87
    {"400000baseDR4/Full", 400000, 4, LinkDuplex::kFull},          // 88
    {"400000baseCR4/Full", 400000, 4, LinkDuplex::kFull},          // 89
    {"100baseFX/Half", 100, 1, LinkDuplex::kHalf},                 // 90
    {"100baseFX/Full", 100, 1, LinkDuplex::kFull},                 // 91
    {"10baseT1L/Full", 10, 1, LinkDuplex::kFull},                  // 92
    {"800000baseCR8/Full", 800000, 8, LinkDuplex::kFull},          // 93
    {"800000baseKR8/Full", 800000, 8, LinkDuplex::kFull},          // 94
    {"800000baseDR8/Full", 800000, 8, LinkDuplex::kFull},          // 95
    {"800000baseDR8_2/Full", 800000, 8, LinkDuplex::kFull},        // 96
    {"800000baseSR8/Full", 800000, 8, LinkDuplex::kFull},          // 97
    {"800000baseVR8/Full", 800000, 8, LinkDuplex::kFull},          // 98
    {"10baseT1S/Full", 10, 1, LinkDuplex::kFull},                  // 99
    {"10baseT1S/Half", 10, 1, LinkDuplex::kHalf},                  // 100
    {"10baseT1S_P2MP/Half", 10, 1, LinkDuplex::kHalf},             // 101
    {"10baseT1BRR/Full", 10, 1, LinkDuplex::kFull},                // 102
    {"200000baseCR/Full", 200000, 1, LinkDuplex::kFull},           // 103
    {"200000baseKR/Full", 200000, 1, LinkDuplex::kFull},           // 104
    {"200000baseDR/Full", 200000, 1, LinkDuplex::kFull},           // 105
    {"200000baseDR_2/Full", 200000, 1, LinkDuplex::kFull},         // 106
    {"200000baseSR/Full", 200000, 1, LinkDuplex::kFull},           // 107
    {"200000baseVR/Full", 200000, 1, LinkDuplex::kFull},           // 108
    {"400000baseCR2/Full", 400000, 2, LinkDuplex::kFull},          // 109
    {"400000baseKR2/Full", 400000, 2, LinkDuplex::kFull},          // 110
    {"400000baseDR2/Full", 400000, 2, LinkDuplex::kFull},          // 111
    {"400000baseDR2_2/Full", 400000, 2, LinkDuplex::kFull},        // 112
    {"400000baseSR2/Full", 400000, 2, LinkDuplex::kFull},          // 113
    {"400000baseVR2/Full", 400000, 2, LinkDuplex::kFull},          // 114
    {"800000baseCR4/Full", 800000, 4, LinkDuplex::kFull},          // 115
    {"800000baseKR4/Full", 800000, 4, LinkDuplex::kFull},          // 116
    {"800000baseDR4/Full", 800000, 4, LinkDuplex::kFull},          // 117
    {"800000baseDR4_2/Full", 800000, 4, LinkDuplex::kFull},        // 118
    {"800000baseSR4/Full", 800000, 4, LinkDuplex::kFull},          // 119
    {"800000baseVR4/Full", 800000, 4, LinkDuplex::kFull},          // 120
    {"1600000baseCR8/Full", 1600000, 8, LinkDuplex::kFull},        // 121
    {"1600000baseKR8/Full", 1600000, 8, LinkDuplex::kFull},        // 122
    {"1600000baseDR8/Full", 1600000, 8, LinkDuplex::kFull},        // 123
    {"1600000baseDR8_2/Full", 1600000, 8, LinkDuplex::kFull},      // 124
}};

// The build header pins the bits it has; a newer header must not know more than the table.
static_assert(__ETHTOOL_LINK_MODE_MASK_NBITS <= kLinkModeBits);
static_assert(ETHTOOL_LINK_MODE_10baseT_Half_BIT == 0 && ETHTOOL_LINK_MODE_Autoneg_BIT == 6 &&
              ETHTOOL_LINK_MODE_10000baseR_FEC_BIT == 20 &&
              ETHTOOL_LINK_MODE_100000baseLR4_ER4_Full_BIT == 39 &&
              ETHTOOL_LINK_MODE_FEC_NONE_BIT == 49 &&
              ETHTOOL_LINK_MODE_400000baseCR8_Full_BIT == 73 &&
              ETHTOOL_LINK_MODE_100000baseCR_Full_BIT == 78 &&
              ETHTOOL_LINK_MODE_100000baseDR_Full_BIT == 79 &&
              ETHTOOL_LINK_MODE_400000baseCR4_Full_BIT == 89);

bool ParseU32(std::string_view digits, uint32_t& value) {
  if (digits.empty() || digits.size() > 10) return false;
  for (char c : digits) {
    if (c < '0' || c > '9') return false;
  }
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  return ec == std::errc() && end == digits.data() + digits.size();
}

}  // namespace

std::span<const LinkModeInfo> LinkModeTable() { return kTable; }

const LinkModeInfo* LinkModeByBit(uint32_t bit) {
  return bit < kTable.size() ? &kTable[bit] : nullptr;
}

std::optional<uint32_t> LinkModeBitByName(std::string_view name) {
  for (uint32_t bit = 0; bit < kTable.size(); ++bit) {
    if (kTable[bit].name == name) return bit;
  }
  return std::nullopt;
}

std::optional<LinkModeName> ParseLinkModeName(std::string_view name) {
  const size_t base = name.find("base");
  const size_t slash = name.rfind('/');
  if (base == std::string_view::npos || slash == std::string_view::npos || slash < base) {
    return std::nullopt;
  }
  LinkModeName out;
  if (!ParseU32(name.substr(0, base), out.speed_mbps) || out.speed_mbps == 0) return std::nullopt;
  const std::string_view duplex = name.substr(slash + 1);
  if (duplex == "Full") {
    out.duplex = LinkDuplex::kFull;
  } else if (duplex == "Half") {
    out.duplex = LinkDuplex::kHalf;
  } else {
    return std::nullopt;
  }
  const std::string_view media = name.substr(base + 4, slash - base - 4);
  // Letters then an optional lane count: the first part of "LR4_ER4", "DR4_2", "T1S_P2MP".
  const std::string_view first = media.substr(0, media.find('_'));
  if (first.empty()) return std::nullopt;
  for (char c : media) {
    const bool ok =
        (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
    if (!ok) return std::nullopt;
  }
  size_t digits = first.size();
  while (digits > 0 && first[digits - 1] >= '0' && first[digits - 1] <= '9') --digits;
  if (digits == 0) return std::nullopt;  // a media code starts with letters
  out.lanes = 1;
  if (digits < first.size() && (!ParseU32(first.substr(digits), out.lanes) || out.lanes == 0)) {
    return std::nullopt;
  }
  return out;
}

std::optional<uint32_t> LinkModeSpeedOfName(std::string_view name) {
  if (auto bit = LinkModeBitByName(name)) {
    const LinkModeInfo& info = kTable[*bit];
    return info.is_link_mode() ? std::optional<uint32_t>(info.speed_mbps) : std::nullopt;
  }
  if (name.starts_with("BIT")) {
    uint32_t bit = 0;
    if (!ParseU32(name.substr(3), bit)) return std::nullopt;
    const LinkModeInfo* info = LinkModeByBit(bit);
    if (info == nullptr || !info->is_link_mode()) return std::nullopt;
    return info->speed_mbps;
  }
  if (auto parsed = ParseLinkModeName(name)) return parsed->speed_mbps;
  return std::nullopt;
}

void AddLinkModeBit(uint32_t bit, std::string_view kernel_name, std::vector<std::string>& modes,
                    std::optional<uint32_t>& max_speed_mbps) {
  std::optional<uint32_t> speed;
  if (const LinkModeInfo* info = LinkModeByBit(bit)) {
    if (!info->is_link_mode()) return;
    modes.emplace_back(info->name);
    speed = info->speed_mbps;
  } else if (!kernel_name.empty()) {
    // A newer kernel's bit: ethtool treats bits it does not know as link modes too.
    auto parsed = ParseLinkModeName(kernel_name);
    if (!parsed) return;  // a newer kind of special bit
    modes.emplace_back(kernel_name);
    speed = parsed->speed_mbps;
  } else {
    modes.push_back("BIT" + std::to_string(bit));
  }
  if (speed && (!max_speed_mbps || *speed > *max_speed_mbps)) max_speed_mbps = speed;
}

void AddLinkModeBits(std::span<const uint32_t> words, uint32_t nbits,
                     std::vector<std::string>& modes, std::optional<uint32_t>& max_speed_mbps) {
  const uint64_t limit = std::min<uint64_t>(nbits, uint64_t{words.size()} * 32);
  for (uint32_t bit = 0; bit < limit; ++bit) {
    if ((words[bit / 32] >> (bit % 32)) & 1u) AddLinkModeBit(bit, {}, modes, max_speed_mbps);
  }
}

std::optional<uint32_t> KnownLinkSpeed(uint32_t speed_mbps) {
  if (speed_mbps == 0 || speed_mbps == 0xffff || speed_mbps == 0xffffffffu) return std::nullopt;
  return speed_mbps;
}

std::string_view LinkDuplexName(uint8_t duplex) {
  switch (duplex) {
    case DUPLEX_HALF:
      return "half";
    case DUPLEX_FULL:
      return "full";
  }
  return "";
}

std::string_view LinkPortName(uint8_t port) {
  switch (port) {
    case PORT_TP:
      return "Twisted Pair";
    case PORT_AUI:
      return "AUI";
    case PORT_BNC:
      return "BNC";
    case PORT_MII:
      return "MII";
    case PORT_FIBRE:
      return "FIBRE";
    case PORT_DA:
      return "Direct Attach Copper";
    case PORT_NONE:
      return "None";
    case PORT_OTHER:
      return "Other";
  }
  return "";
}
static_assert(PORT_TP == 0 && PORT_AUI == 1 && PORT_MII == 2 && PORT_FIBRE == 3 && PORT_BNC == 4 &&
              PORT_DA == 5 && PORT_NONE == 0xef && PORT_OTHER == 0xff);
static_assert(DUPLEX_HALF == 0 && DUPLEX_FULL == 1 && DUPLEX_UNKNOWN == 0xff);

}  // namespace fabricwatch::sys
