#include "collectors/ethtool_source/ethtool_netlink_parse.h"

#include <linux/genetlink.h>
#include <netlink/attr.h>
#include <netlink/genl/genl.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>

#include <array>
#include <cstddef>
#include <cstring>
#include <utility>

#include "collectors/ethtool_source/ethtool_netlink_uapi.h"
#include "collectors/ethtool_source/link_modes.h"

namespace fabricwatch::sys {
namespace {

// Total + ETHTOOL_MAX_LANES (8) today; a generous bound against a corrupt length.
constexpr size_t kMaxFecArray = 64;
// Link-mode bitsets are __ETHTOOL_LINK_MODE_MASK_NBITS long (125 today); a bound against a
// corrupt SIZE well above any kernel's.
constexpr uint32_t kMaxBitsetBits = 4096;

// Group names: the kernel's stats_std_names (string set ETH_SS_STATS_STD), by group id.
constexpr std::array<std::string_view, kStatsGroupBits> kStatsGroupNames = {"eth-phy", "eth-mac",
                                                                            "eth-ctrl", "rmon"};
// Counter names: the kernel's stats_eth_phy_names, stats_eth_mac_names, stats_eth_ctrl_names and
// stats_rmon_names (K net/ethtool/stats.c; string sets ETH_SS_STATS_ETH_PHY..RMON), by counter
// index = attribute type inside ETHTOOL_A_STATS_GRP_STAT. IEEE 802.3 clause 30 attribute names
// without the leading "a"; RFC 2819 etherStats names for rmon.
constexpr std::array<std::string_view, 1> kEthPhyStatNames = {
    "SymbolErrorDuringCarrier",  // 30.3.2.1.5
};
constexpr std::array<std::string_view, 22> kEthMacStatNames = {
    "FramesTransmittedOK",             // 0: 30.3.1.1.2
    "SingleCollisionFrames",           // 1: 30.3.1.1.3
    "MultipleCollisionFrames",         // 2: 30.3.1.1.4
    "FramesReceivedOK",                // 3: 30.3.1.1.5
    "FrameCheckSequenceErrors",        // 4: 30.3.1.1.6
    "AlignmentErrors",                 // 5: 30.3.1.1.7
    "OctetsTransmittedOK",             // 6: 30.3.1.1.8
    "FramesWithDeferredXmissions",     // 7: 30.3.1.1.9
    "LateCollisions",                  // 8: 30.3.1.1.10
    "FramesAbortedDueToXSColls",       // 9: 30.3.1.1.11
    "FramesLostDueToIntMACXmitError",  // 10: 30.3.1.1.12
    "CarrierSenseErrors",              // 11: 30.3.1.1.13
    "OctetsReceivedOK",                // 12: 30.3.1.1.14
    "FramesLostDueToIntMACRcvError",   // 13: 30.3.1.1.15
    "MulticastFramesXmittedOK",        // 14: 30.3.1.1.18
    "BroadcastFramesXmittedOK",        // 15: 30.3.1.1.19
    "FramesWithExcessiveDeferral",     // 16: 30.3.1.1.20
    "MulticastFramesReceivedOK",       // 17: 30.3.1.1.21
    "BroadcastFramesReceivedOK",       // 18: 30.3.1.1.22
    "InRangeLengthErrors",             // 19: 30.3.1.1.23
    "OutOfRangeLengthField",           // 20: 30.3.1.1.24
    "FrameTooLongErrors",              // 21: 30.3.1.1.25
};
constexpr std::array<std::string_view, 3> kEthCtrlStatNames = {
    "MACControlFramesTransmitted",  // 0: 30.3.3.3
    "MACControlFramesReceived",     // 1: 30.3.3.4
    "UnsupportedOpcodesReceived",   // 2: 30.3.3.5
};
constexpr std::array<std::string_view, 4> kRmonStatNames = {
    "etherStatsUndersizePkts",  // 0
    "etherStatsOversizePkts",   // 1
    "etherStatsFragments",      // 2
    "etherStatsJabbers",        // 3
};
// Pinned to the build header's indices (the last one of each table; newer headers may add more).
static_assert(ETHTOOL_A_STATS_ETH_PHY_5_SYM_ERR == 0);
static_assert(ETHTOOL_A_STATS_ETH_MAC_2_TX_PKT == 0 && ETHTOOL_A_STATS_ETH_MAC_6_FCS_ERR == 4 &&
              ETHTOOL_A_STATS_ETH_MAC_15_RX_INT_ERR == 13 &&
              ETHTOOL_A_STATS_ETH_MAC_18_TX_MCAST == 14 &&
              ETHTOOL_A_STATS_ETH_MAC_25_TOO_LONG_ERR == 21);
static_assert(ETHTOOL_A_STATS_ETH_CTRL_5_RX_UNSUP == 2);
static_assert(ETHTOOL_A_STATS_RMON_UNDERSIZE == 0 && ETHTOOL_A_STATS_RMON_JABBER == 3);

// Payload (after the family header) of a netlink message as an attribute stream.
std::optional<std::pair<nlattr*, int>> Attributes(const nlmsghdr* msg, size_t family_header) {
  const size_t offset = NLMSG_HDRLEN + NLMSG_ALIGN(family_header);
  if (msg->nlmsg_len < offset) return std::nullopt;
  auto* base = reinterpret_cast<char*>(const_cast<nlmsghdr*>(msg));
  return std::make_pair(reinterpret_cast<nlattr*>(base + offset),
                        static_cast<int>(msg->nlmsg_len - offset));
}

// Readers of fixed-size attributes: false when present but too short (malformed).
template <typename T>
bool Read(const nlattr* attr, std::optional<T>& out) {
  if (attr == nullptr) return true;
  if (nla_len(attr) < static_cast<int>(sizeof(T))) return false;
  T value;
  std::memcpy(&value, nla_data(attr), sizeof(T));  // u64 payloads are only 4-byte aligned
  out = value;
  return true;
}

// A generic-netlink message of command `cmd`, long enough for its genl header.
Status CheckGenl(const nlmsghdr* msg, uint8_t cmd, std::string_view what) {
  if (msg->nlmsg_len < NLMSG_HDRLEN + GENL_HDRLEN) return MalformedReply(what, "short message");
  const auto* genl = static_cast<const genlmsghdr*>(NLMSG_DATA(msg));
  if (genl->cmd != cmd) {
    return MalformedReply(
        what, "command " + std::to_string(genl->cmd) + ", expected " + std::to_string(cmd));
  }
  return Status::Ok();
}

// Parses a generic-netlink reply of command `cmd` into tb[0..max].
Status ParseGenl(const nlmsghdr* msg, uint8_t cmd, nlattr** tb, int max, std::string_view what) {
  if (Status s = CheckGenl(msg, cmd, what); !s.ok()) return s;
  if (int err = genlmsg_parse(const_cast<nlmsghdr*>(msg), 0, tb, max, nullptr); err < 0) {
    return MalformedReply(what, nl_geterror(err));
  }
  return Status::Ok();
}

Status ParseNested(const nlattr* nest, nlattr** tb, int max, std::string_view what) {
  if (int err = nla_parse_nested(tb, max, const_cast<nlattr*>(nest), nullptr); err < 0) {
    return MalformedReply(what, nl_geterror(err));
  }
  return Status::Ok();
}

// Calls visit(attr) for each attribute of the stream [head, head + len), in order, until one
// fails. For streams with repeated attributes (ETHTOOL_A_STATS_GRP, _GRP_STAT), which nla_parse()
// would collapse to the last one. Bytes after the last whole attribute (a truncated one) are
// malformed; nla_ok() never lets an attribute reach past `len`.
template <typename Visit>
Status ForEachAttribute(nlattr* head, int len, std::string_view what, Visit&& visit) {
  nlattr* attr;
  int rem;
  nla_for_each_attr(attr, head, len, rem) {
    if (Status s = visit(attr); !s.ok()) return s;
  }
  if (rem > 0) return MalformedReply(what, std::to_string(rem) + " bytes of a truncated attribute");
  return Status::Ok();
}

// ETHTOOL_A_FEC_STAT_*: a binary attribute holding u64[total, lane0, ...].
Status ReadU64Array(const nlattr* attr, std::vector<uint64_t>& out, std::string_view what) {
  out.clear();
  if (attr == nullptr) return Status::Ok();
  const int len = nla_len(attr);
  if (len % 8 != 0 || static_cast<size_t>(len) / 8 > kMaxFecArray) {
    return MalformedReply(what, "array of " + std::to_string(len) + " bytes");
  }
  out.resize(static_cast<size_t>(len) / 8);
  if (len > 0) std::memcpy(out.data(), nla_data(attr), static_cast<size_t>(len));
  return Status::Ok();
}

// A compact bitset's VALUE or MASK: `nbits` bits as u32 words (K net/ethtool/bitset.c).
Status ReadBitsetWords(const nlattr* attr, uint32_t nbits, std::vector<uint32_t>& words,
                       std::string_view what) {
  const size_t count = (size_t{nbits} + 31) / 32;
  if (attr == nullptr || static_cast<size_t>(nla_len(attr)) < count * sizeof(uint32_t)) {
    return MalformedReply(what,
                          "compact bitset shorter than its " + std::to_string(nbits) + " bits");
  }
  words.resize(count);
  if (count > 0) std::memcpy(words.data(), nla_data(attr), count * sizeof(uint32_t));
  return Status::Ok();
}

// One ETHTOOL_A_BITSET_BITS_BIT nest of a verbose bitset: supported (a bit of the mask) and
// advertised (its VALUE flag, or every listed bit of a NOMASK bitset).
Status DecodeVerboseBit(nlattr* bit, bool nomask, LinkSettings& out, std::string_view what) {
  std::array<nlattr*, kBitsetBitMax + 1> tb{};
  if (Status s = ParseNested(bit, tb.data(), kBitsetBitMax, what); !s.ok()) return s;
  std::optional<uint32_t> index;
  if (!Read(tb[kBitsetBitIndex], index) || !index) {
    return MalformedReply(what, "a bitset bit without ETHTOOL_A_BITSET_BIT_INDEX");
  }
  std::string_view name;
  if (const nlattr* attr = tb[kBitsetBitName]; attr != nullptr && nla_len(attr) > 0) {
    const auto* data = static_cast<const char*>(nla_data(attr));
    name = std::string_view(data, strnlen(data, static_cast<size_t>(nla_len(attr))));
  }
  if (!nomask) AddLinkModeBit(*index, name, out.supported_modes, out.max_supported_speed_mbps);
  if (nomask || tb[kBitsetBitValue] != nullptr) {
    AddLinkModeBit(*index, name, out.advertised_modes, out.max_advertised_speed_mbps);
  }
  return Status::Ok();
}

// ETHTOOL_A_LINKMODES_OURS: mask = supported, value = advertised, compact or verbose.
Status DecodeOurModes(const nlattr* bitset, LinkSettings& out, std::string_view what) {
  std::array<nlattr*, kBitsetMax + 1> tb{};
  if (Status s = ParseNested(bitset, tb.data(), kBitsetMax, what); !s.ok()) return s;
  std::optional<uint32_t> size;
  if (!Read(tb[kBitsetSize], size) || !size) {
    return MalformedReply(what, "a bitset without ETHTOOL_A_BITSET_SIZE");
  }
  if (*size > kMaxBitsetBits) {
    return MalformedReply(what, "a bitset of " + std::to_string(*size) + " bits");
  }
  const bool nomask = tb[kBitsetNomask] != nullptr;
  if (nlattr* bits = tb[kBitsetBits]; bits != nullptr) {
    return ForEachAttribute(static_cast<nlattr*>(nla_data(bits)), nla_len(bits), what,
                            [&](nlattr* bit) {
                              if (nla_type(bit) != kBitsetBitsBit) return Status::Ok();
                              return DecodeVerboseBit(bit, nomask, out, what);
                            });
  }
  std::vector<uint32_t> words;
  if (!nomask) {
    if (Status s = ReadBitsetWords(tb[kBitsetMask], *size, words, what); !s.ok()) return s;
    AddLinkModeBits(words, *size, out.supported_modes, out.max_supported_speed_mbps);
  }
  if (Status s = ReadBitsetWords(tb[kBitsetValue], *size, words, what); !s.ok()) return s;
  AddLinkModeBits(words, *size, out.advertised_modes, out.max_advertised_speed_mbps);
  return Status::Ok();
}

}  // namespace

std::optional<NetlinkError> ParseNetlinkError(const nlmsghdr* msg) {
  if (msg->nlmsg_type != NLMSG_ERROR || msg->nlmsg_len < NLMSG_LENGTH(sizeof(nlmsgerr))) {
    return std::nullopt;
  }
  nlmsgerr err;
  std::memcpy(&err, NLMSG_DATA(msg), sizeof(err));
  NetlinkError out;
  out.error = err.error;
  if ((msg->nlmsg_flags & NLM_F_ACK_TLVS) == 0) return out;
  // The TLVs follow the echoed request: its header only when NLM_F_CAPPED, else all of it (K
  // net/netlink/af_netlink.c netlink_ack).
  size_t payload = sizeof(nlmsgerr);
  if ((msg->nlmsg_flags & NLM_F_CAPPED) == 0 && err.msg.nlmsg_len >= NLMSG_HDRLEN) {
    payload += err.msg.nlmsg_len - NLMSG_HDRLEN;
  }
  auto attrs = Attributes(msg, payload);
  if (!attrs) return out;
  std::array<nlattr*, NLMSGERR_ATTR_MAX + 1> tb{};
  if (nla_parse(tb.data(), NLMSGERR_ATTR_MAX, attrs->first, attrs->second, nullptr) < 0) return out;
  if (const nlattr* text = tb[NLMSGERR_ATTR_MSG]; text != nullptr && nla_len(text) > 0) {
    const auto* data = static_cast<const char*>(nla_data(text));
    out.extack.assign(data, strnlen(data, static_cast<size_t>(nla_len(text))));
  }
  return out;
}

Status NetlinkErrorStatus(const NetlinkError& error, const std::string& context) {
  Status status = FromErrno(-error.error, context);
  if (error.extack.empty()) return status;
  return Status(status.code(), status.message() + " (kernel: " + error.extack + ")",
                status.sys_errno());
}

Status MalformedReply(std::string_view what, std::string_view detail) {
  return Status(StatusCode::kInvalidArgument,
                "malformed " + std::string(what) + ": " + std::string(detail));
}

Result<uint16_t> ParseGenlFamilyId(const nlmsghdr* msg) {
  std::array<nlattr*, CTRL_ATTR_MAX + 1> tb{};
  if (Status s =
          ParseGenl(msg, CTRL_CMD_NEWFAMILY, tb.data(), CTRL_ATTR_MAX, "CTRL_CMD_GETFAMILY reply");
      !s.ok()) {
    return Error(s);
  }
  std::optional<uint16_t> id;
  if (!Read(tb[CTRL_ATTR_FAMILY_ID], id) || !id || *id == 0) {
    return Error(MalformedReply("CTRL_CMD_GETFAMILY reply", "no CTRL_ATTR_FAMILY_ID"));
  }
  return *id;
}

Result<PauseInfo> ParsePauseReply(const nlmsghdr* msg) {
  constexpr std::string_view kWhat = "ethtool PAUSE_GET reply";
  std::array<nlattr*, kPauseMax + 1> tb{};
  if (Status s = ParseGenl(msg, kMsgPauseGetReply, tb.data(), kPauseMax, kWhat); !s.ok()) {
    return Error(s);
  }
  PauseInfo out;
  // The configuration (u8 flags, K net/ethtool/pause.c pause_fill_reply): always sent by a driver
  // with get_pauseparam; the statistics nest only from kernel 5.10 on.
  std::optional<uint8_t> autoneg, rx, tx;
  if (!Read(tb[kPauseAutoneg], autoneg) || !Read(tb[kPauseRx], rx) || !Read(tb[kPauseTx], tx)) {
    return Error(MalformedReply(kWhat, "short pause flag"));
  }
  if (autoneg) out.autoneg = *autoneg != 0;
  if (rx) out.rx_enabled = *rx != 0;
  if (tx) out.tx_enabled = *tx != 0;
  if (tb[kPauseStats] != nullptr) {
    std::array<nlattr*, kPauseStatMax + 1> stats{};
    if (Status s = ParseNested(tb[kPauseStats], stats.data(), kPauseStatMax, kWhat); !s.ok()) {
      return Error(s);
    }
    if (!Read(stats[kPauseStatTxFrames], out.tx_frames) ||
        !Read(stats[kPauseStatRxFrames], out.rx_frames)) {
      return Error(MalformedReply(kWhat, "short pause counter"));
    }
  }
  if (!out.autoneg && !out.rx_enabled && !out.tx_enabled && tb[kPauseStats] == nullptr) {
    return Error(StatusCode::kUnimplemented,
                 "ethtool PAUSE_GET: neither pause settings nor statistics in the reply");
  }
  return out;
}

std::string_view FecModeName(uint32_t link_mode_bit) {
  // ETHTOOL_LINK_MODE_FEC_*_BIT (UAPI linux/ethtool.h enum ethtool_link_mode_bit_indices).
  switch (link_mode_bit) {
    case 49:
      return "none";
    case 50:
      return "rs";
    case 51:
      return "baser";
    case 74:
      return "llrs";
  }
  return "";
}
static_assert(ETHTOOL_LINK_MODE_FEC_NONE_BIT == 49 && ETHTOOL_LINK_MODE_FEC_RS_BIT == 50 &&
              ETHTOOL_LINK_MODE_FEC_BASER_BIT == 51 && ETHTOOL_LINK_MODE_FEC_LLRS_BIT == 74);

Result<FecStats> ParseFecReply(const nlmsghdr* msg) {
  constexpr std::string_view kWhat = "ethtool FEC_GET reply";
  std::array<nlattr*, kFecMax + 1> tb{};
  if (Status s = ParseGenl(msg, kMsgFecGetReply, tb.data(), kFecMax, kWhat); !s.ok()) {
    return Error(s);
  }
  FecStats out;
  std::optional<uint32_t> active;
  if (!Read(tb[kFecActive], active)) {
    return Error(MalformedReply(kWhat, "short ETHTOOL_A_FEC_ACTIVE"));
  }
  if (active) out.active_mode = std::string(FecModeName(*active));
  if (tb[kFecStats] == nullptr) return out;  // no stats flag accepted: mode only
  std::array<nlattr*, kFecStatMax + 1> stats{};
  if (Status s = ParseNested(tb[kFecStats], stats.data(), kFecStatMax, kWhat); !s.ok()) {
    return Error(s);
  }
  for (auto [attr, array] : {std::pair{kFecStatCorrected, &out.corrected_blocks},
                             std::pair{kFecStatUncorr, &out.uncorrectable_blocks},
                             std::pair{kFecStatCorrBits, &out.corrected_bits}}) {
    if (Status s = ReadU64Array(stats[attr], *array, kWhat); !s.ok()) return Error(s);
  }
  return out;
}

Result<LinkState> ParseLinkStateReply(const nlmsghdr* msg) {
  constexpr std::string_view kWhat = "ethtool LINKSTATE_GET reply";
  std::array<nlattr*, kLinkstateMax + 1> tb{};
  if (Status s = ParseGenl(msg, kMsgLinkstateGetReply, tb.data(), kLinkstateMax, kWhat); !s.ok()) {
    return Error(s);
  }
  LinkState out;
  std::optional<uint8_t> link;
  if (!Read(tb[kLinkstateLink], link) || !Read(tb[kLinkstateExtState], out.ext_state) ||
      !Read(tb[kLinkstateExtDownCnt], out.ext_down_count)) {
    return Error(MalformedReply(kWhat, "short attribute"));
  }
  if (link) out.link = *link != 0;
  return out;
}

Result<LinkSettings> ParseLinkModesReply(const nlmsghdr* msg) {
  constexpr std::string_view kWhat = "ethtool LINKMODES_GET reply";
  std::array<nlattr*, kLinkmodesMax + 1> tb{};
  if (Status s = ParseGenl(msg, kMsgLinkmodesGetReply, tb.data(), kLinkmodesMax, kWhat); !s.ok()) {
    return Error(s);
  }
  LinkSettings out;
  std::optional<uint32_t> speed;
  std::optional<uint32_t> lanes;
  std::optional<uint8_t> duplex;
  std::optional<uint8_t> autoneg;
  if (!Read(tb[kLinkmodesSpeed], speed) || !Read(tb[kLinkmodesLanes], lanes) ||
      !Read(tb[kLinkmodesDuplex], duplex) || !Read(tb[kLinkmodesAutoneg], autoneg)) {
    return Error(MalformedReply(kWhat, "short attribute"));
  }
  if (speed) out.speed_mbps = KnownLinkSpeed(*speed);
  if (lanes && *lanes != 0) out.lanes = lanes;
  if (duplex) out.duplex = std::string(LinkDuplexName(*duplex));
  if (autoneg) out.autoneg = *autoneg != AUTONEG_DISABLE;  // as ethtool prints "on"/"off"
  if (tb[kLinkmodesOurs] != nullptr) {
    if (Status s = DecodeOurModes(tb[kLinkmodesOurs], out, kWhat); !s.ok()) return Error(s);
  }
  return out;
}

Status ParseLinkInfoReply(const nlmsghdr* msg, LinkSettings& settings) {
  constexpr std::string_view kWhat = "ethtool LINKINFO_GET reply";
  std::array<nlattr*, kLinkinfoMax + 1> tb{};
  if (Status s = ParseGenl(msg, kMsgLinkinfoGetReply, tb.data(), kLinkinfoMax, kWhat); !s.ok()) {
    return s;
  }
  std::optional<uint8_t> port;
  if (!Read(tb[kLinkinfoPort], port)) return MalformedReply(kWhat, "short ETHTOOL_A_LINKINFO_PORT");
  if (port) settings.port = std::string(LinkPortName(*port));
  return Status::Ok();
}

std::string_view StandardStatsGroupName(uint32_t group_id) {
  return group_id < kStatsGroupNames.size() ? kStatsGroupNames[group_id] : std::string_view();
}

std::string_view StandardStatName(uint32_t group_id, uint32_t index) {
  auto pick = [index](const auto& table) {
    return index < table.size() ? table[index] : std::string_view();
  };
  switch (group_id) {
    case ETHTOOL_STATS_ETH_PHY:
      return pick(kEthPhyStatNames);
    case ETHTOOL_STATS_ETH_MAC:
      return pick(kEthMacStatNames);
    case ETHTOOL_STATS_ETH_CTRL:
      return pick(kEthCtrlStatNames);
    case ETHTOOL_STATS_RMON:
      return pick(kRmonStatNames);
  }
  return {};
}

Result<std::vector<StandardStat>> ParseStandardStatsReply(const nlmsghdr* msg, uint64_t* skipped) {
  constexpr std::string_view kWhat = "ethtool STATS_GET reply";
  if (Status s = CheckGenl(msg, kMsgStatsGetReply, kWhat); !s.ok()) return Error(s);
  auto attrs = Attributes(msg, GENL_HDRLEN);
  if (!attrs) return Error(MalformedReply(kWhat, "short message"));
  std::vector<StandardStat> out;
  size_t groups = 0;
  uint64_t unknown = 0;
  // Top level: the request header echo (2), ETHTOOL_A_STATS_SRC (5, 6.3+) and pads are ignored.
  Status status = ForEachAttribute(attrs->first, attrs->second, kWhat, [&](nlattr* grp) {
    if (nla_type(grp) != kStatsGrp) return Status::Ok();
    ++groups;
    // The id first: the kernel puts it before the counters, but nothing here relies on that.
    std::optional<uint32_t> id;
    Status s = ForEachAttribute(static_cast<nlattr*>(nla_data(grp)), nla_len(grp), kWhat,
                                [&](nlattr* attr) {
                                  if (nla_type(attr) == kStatsGrpId && !Read(attr, id)) {
                                    return MalformedReply(kWhat, "short ETHTOOL_A_STATS_GRP_ID");
                                  }
                                  return Status::Ok();
                                });
    if (!s.ok()) return s;
    if (!id) return MalformedReply(kWhat, "a group without ETHTOOL_A_STATS_GRP_ID");
    const std::string_view group = StandardStatsGroupName(*id);
    return ForEachAttribute(
        static_cast<nlattr*>(nla_data(grp)), nla_len(grp), kWhat, [&](nlattr* attr) {
          if (nla_type(attr) != kStatsGrpStat) return Status::Ok();  // pad, SS_ID, histograms
          // One u64 whose type is the counter index; index 0 is a valid type here.
          return ForEachAttribute(
              static_cast<nlattr*>(nla_data(attr)), nla_len(attr), kWhat, [&](nlattr* stat) {
                const int index = nla_type(stat);
                if (nla_len(stat) != static_cast<int>(sizeof(uint64_t))) {
                  return MalformedReply(kWhat, "counter " + std::to_string(index) + " of group " +
                                                   std::to_string(*id) + " has " +
                                                   std::to_string(nla_len(stat)) + " bytes, not 8");
                }
                const std::string_view name = StandardStatName(*id, static_cast<uint32_t>(index));
                if (group.empty() || name.empty()) {
                  ++unknown;
                  return Status::Ok();
                }
                uint64_t value;
                std::memcpy(&value, nla_data(stat), sizeof(value));  // 4-byte aligned
                out.push_back(StandardStat{group, name, value});
                return Status::Ok();
              });
        });
  });
  if (!status.ok()) return Error(status);
  if (skipped != nullptr) *skipped += unknown;
  if (groups == 0) {
    return Error(StatusCode::kUnimplemented,
                 "ethtool STATS_GET: no statistics groups in the reply");
  }
  if (out.empty()) {
    return Error(StatusCode::kUnimplemented,
                 "ethtool STATS_GET: the driver fills none of the standard statistics" +
                     (unknown == 0 ? std::string()
                                   : " known to this build (" + std::to_string(unknown) +
                                         " unknown counters skipped)"));
  }
  return out;
}

Result<std::vector<uint8_t>> ParseModuleEepromReply(const nlmsghdr* msg, uint32_t requested) {
  constexpr std::string_view kWhat = "ethtool MODULE_EEPROM_GET reply";
  std::array<nlattr*, kModuleEepromMax + 1> tb{};
  if (Status s = ParseGenl(msg, kMsgModuleEepromGetReply, tb.data(), kModuleEepromMax, kWhat);
      !s.ok()) {
    return Error(s);
  }
  const nlattr* data = tb[kModuleEepromData];
  if (data == nullptr) return Error(MalformedReply(kWhat, "no ETHTOOL_A_MODULE_EEPROM_DATA"));
  const auto len = static_cast<uint32_t>(nla_len(data));
  if (len > requested) {
    return Error(MalformedReply(
        kWhat, std::to_string(len) + " bytes for a request of " + std::to_string(requested)));
  }
  const auto* bytes = static_cast<const uint8_t*>(nla_data(data));
  return std::vector<uint8_t>(bytes, bytes + len);
}

}  // namespace fabricwatch::sys
