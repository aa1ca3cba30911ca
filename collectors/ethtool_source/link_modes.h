#pragma once
// The Ethernet link modes: every bit of the kernel's link-mode bitmaps (UAPI linux/ethtool.h enum
// ethtool_link_mode_bit_indices, up to the 1.6T modes, bit 124) with the name ethtool prints
// for it and its speed, lanes and duplex (K net/ethtool/common.c link_mode_names and
// link_mode_params). The names are those of the kernel's string set ETH_SS_LINK_MODES, which is
// what `ethtool <netdev>` prints in its "Supported/Advertised link modes" lists (ethtool
// netlink/settings.c dump_link_modes), e.g. "400000baseCR4/Full", "1000baseT/Half".
//
// Bits that are not link modes (Autoneg, the port types TP/AUI/MII/FIBRE/BNC/Backplane, Pause,
// Asym_Pause and the FEC modes None/RS/BASER/LLRS) are in the table with speed 0; ethtool lists
// them elsewhere ("Supported ports", "pause frame use", "FEC modes"), and so does LinkSettings.
//
// Thread-safety: constant tables and pure functions.

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace fabricwatch::sys {

enum class LinkDuplex : uint8_t { kUnknown, kHalf, kFull };

struct LinkModeInfo {
  std::string_view name;    // as ethtool prints it
  uint32_t speed_mbps = 0;  // 0: not a link mode (Autoneg, port, pause and FEC bits)
  uint32_t lanes = 0;
  LinkDuplex duplex = LinkDuplex::kUnknown;

  bool is_link_mode() const { return speed_mbps != 0; }
};

// Bits this build knows: __ETHTOOL_LINK_MODE_MASK_NBITS of the kernel the table was taken from.
inline constexpr uint32_t kLinkModeBits = 125;

// The table, indexed by bit.
std::span<const LinkModeInfo> LinkModeTable();
// The mode of bit `bit`, or null for a bit past the table (a newer kernel's mode).
const LinkModeInfo* LinkModeByBit(uint32_t bit);
// The bit whose name is `name` (exact, case-sensitive as ethtool prints it), or nullopt.
std::optional<uint32_t> LinkModeBitByName(std::string_view name);

// A link-mode name taken apart: "<speed>base<media>/<Full|Half>". Lanes come from the trailing
// number of the media code's first part ("CR4" 4, "KR2" 2, "SR" 1, "LR4_ER4" 4, "DR4_2" 4,
// "LR8_ER8_FR8" 8, "T" 1, "T1" 1), which is how the kernel counts them (K net/ethtool/common.c
// __LINK_MODE_LANES_*). For names this build's table lacks (a newer kernel's mode in a replay
// file); use the table first where the name is known.
struct LinkModeName {
  uint32_t speed_mbps = 0;
  uint32_t lanes = 0;
  LinkDuplex duplex = LinkDuplex::kUnknown;
};
std::optional<LinkModeName> ParseLinkModeName(std::string_view name);

// The speed of the link mode called `name`: from the table when it knows the name, else from
// ParseLinkModeName; nullopt for a name that is neither (and for the non-mode bits). "BIT<n>",
// what ethtool prints for a bit that has no name in the kernel's string set, is looked up as bit n.
std::optional<uint32_t> LinkModeSpeedOfName(std::string_view name);

// Adds one set bit of a link-mode bitmap to `modes` (the names of the link modes among the bits,
// in bit order) and raises `max_speed_mbps` to its speed. A bit that is not a link mode is
// skipped. `kernel_name` is the kernel's name for the bit when the reply carried one (a verbose
// bitset), used for bits past this build's table; such a bit without a name is added as "BIT<n>",
// as ethtool prints it, with no speed.
void AddLinkModeBit(uint32_t bit, std::string_view kernel_name, std::vector<std::string>& modes,
                    std::optional<uint32_t>& max_speed_mbps);

// AddLinkModeBit for every set bit of the first `nbits` bits of `words` (bit i is bit i % 32 of
// words[i / 32], the layout of compact netlink bitsets and of the ETHTOOL_GLINKSETTINGS masks).
void AddLinkModeBits(std::span<const uint32_t> words, uint32_t nbits,
                     std::vector<std::string>& modes, std::optional<uint32_t>& max_speed_mbps);

// What the kernel's link-settings values mean (UAPI linux/ethtool.h), shared by the netlink and
// ioctl paths:
// - a speed in Mb/s, or nullopt for the values ethtool prints as "Unknown!": 0, 65535 and
//   SPEED_UNKNOWN (0xffffffff) (ethtool netlink/settings.c linkmodes_reply_cb);
std::optional<uint32_t> KnownLinkSpeed(uint32_t speed_mbps);
// - DUPLEX_HALF / DUPLEX_FULL as "half" / "full", anything else (DUPLEX_UNKNOWN) "";
std::string_view LinkDuplexName(uint8_t duplex);
// - PORT_* as ethtool prints it after "Port:" (ethtool netlink/settings.c names_port), "" for a
//   value it has no name for.
std::string_view LinkPortName(uint8_t port);

}  // namespace fabricwatch::sys
