#pragma once
// Pure parsers of the netlink replies KernelEthtool reads (docs/reference.md §3.2): no socket, no
// I/O, so each is tested on byte buffers. Each takes one complete netlink message as the kernel
// sends it (header included, nlmsg_len bytes readable) and never reads outside it.
//
// Thread-safety: stateless functions; safe from any thread.

#include <linux/netlink.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "collectors/ethtool_source/ethtool.h"

namespace fabricwatch::sys {

// An NLMSG_ERROR message: the (negative) error, 0 for an ACK, and the extended-ACK text
// (NLMSGERR_ATTR_MSG) when the kernel sent one. nullopt if `msg` is not a well-formed error.
struct NetlinkError {
  int error = 0;
  std::string extack;
};
std::optional<NetlinkError> ParseNetlinkError(const nlmsghdr* msg);

// The status of a kernel error answer to the request `context` describes: the errno's code and
// text, and the kernel's extended-ACK text after it when there is one.
Status NetlinkErrorStatus(const NetlinkError& error, const std::string& context);

// kInvalidArgument "malformed <what>: <detail>": a reply that does not parse.
Status MalformedReply(std::string_view what, std::string_view detail);

// CTRL_CMD_NEWFAMILY reply → CTRL_ATTR_FAMILY_ID.
Result<uint16_t> ParseGenlFamilyId(const nlmsghdr* msg);

// ETHTOOL_MSG_PAUSE_GET_REPLY: the pause settings (autoneg, rx, tx) and, from kernel 5.10, the
// statistics nest. kUnimplemented when the reply carries neither.
Result<PauseInfo> ParsePauseReply(const nlmsghdr* msg);
// ETHTOOL_MSG_FEC_GET_REPLY.
Result<FecStats> ParseFecReply(const nlmsghdr* msg);
// ETHTOOL_MSG_LINKSTATE_GET_REPLY.
Result<LinkState> ParseLinkStateReply(const nlmsghdr* msg);

// ETHTOOL_MSG_LINKMODES_GET_REPLY → speed (nullopt when unknown), lanes, duplex, autoneg, and the
// link modes of ETHTOOL_A_LINKMODES_OURS: its mask is what the port supports, its value what it
// advertises (K net/ethtool/linkmodes.c linkmodes_fill_reply). The bitset may be compact (SIZE,
// VALUE, MASK words: the reply to ETHTOOL_FLAG_COMPACT_BITSETS) or verbose (one BITS_BIT nest per
// bit of the mask, VALUE flag when set); a NOMASK bitset holds the value only, and the supported
// modes are then unknown. Non-mode bits (Autoneg, port, pause, FEC) are left out of the lists.
// kInvalidArgument when malformed (a short attribute, a bitset without SIZE or with fewer words
// than SIZE needs, a bit without INDEX, a truncated nest). port and link_detected stay unset.
Result<LinkSettings> ParseLinkModesReply(const nlmsghdr* msg);
// ETHTOOL_MSG_LINKINFO_GET_REPLY → settings.port (ETHTOOL_A_LINKINFO_PORT; unchanged when
// absent). kInvalidArgument when malformed.
Status ParseLinkInfoReply(const nlmsghdr* msg, LinkSettings& settings);

// Link-mode bit index of an ETHTOOL_A_FEC_ACTIVE value → "none", "rs", "baser", "llrs", or "".
std::string_view FecModeName(uint32_t link_mode_bit);

// ETHTOOL_MSG_STATS_GET_REPLY → the counters of the groups eth-phy, eth-mac, eth-ctrl and rmon,
// in reply order, named as the kernel's string sets ETH_SS_STATS_ETH_PHY/_MAC/_CTRL/_RMON name
// them (what `ethtool -S --all-groups` prints after "<group>-"). RMON histograms (HIST_RX/_TX),
// pads and attributes this build does not know are ignored. A counter index past the built-in
// tables (a newer kernel's counter) or a group id other than 0-3 is skipped and added to
// `*skipped` when it is not null: names are static, so there is nothing to call it by.
// kUnimplemented when the reply holds no counter (no group, or only empty ones); kInvalidArgument
// when it is malformed (a group without ETHTOOL_A_STATS_GRP_ID, a counter that is not 8 bytes, a
// truncated attribute).
Result<std::vector<StandardStat>> ParseStandardStatsReply(const nlmsghdr* msg,
                                                          uint64_t* skipped = nullptr);

// The names ParseStandardStatsReply gives: the group of ETHTOOL_A_STATS_GRP_ID `group_id` and its
// counter `index` (UAPI linux/ethtool_netlink.h enum ETHTOOL_A_STATS_*). "" when not known here.
std::string_view StandardStatsGroupName(uint32_t group_id);
std::string_view StandardStatName(uint32_t group_id, uint32_t index);

// ETHTOOL_MSG_MODULE_EEPROM_GET_REPLY → the bytes of ETHTOOL_A_MODULE_EEPROM_DATA (the kernel sends
// what the driver read, which may be fewer than asked). kInvalidArgument when malformed: no DATA,
// or more than `requested` bytes.
Result<std::vector<uint8_t>> ParseModuleEepromReply(const nlmsghdr* msg, uint32_t requested);

}  // namespace fabricwatch::sys
