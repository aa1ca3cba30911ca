#include "collectors/sys/ethtool_kernel.h"

#include <linux/dcbnl.h>
#include <linux/ethtool.h>
#include <linux/ethtool_netlink.h>
#include <linux/genetlink.h>
#include <linux/rtnetlink.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <netlink/attr.h>
#include <netlink/genl/genl.h>
#include <netlink/msg.h>
#include <netlink/netlink.h>
#include <netlink/socket.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <cstring>

namespace fabricwatch::sys {
namespace {

// ---------------------------------------------------------- legacy ioctl (UAPI linux/ethtool.h)

// Fixed-part layouts the code relies on (reference.md §3.1; identical on x86-64 and arm64).
static_assert(offsetof(ethtool_sset_info, sset_mask) == 8 &&
              offsetof(ethtool_sset_info, data) == 16);
static_assert(offsetof(ethtool_gstrings, len) == 8 && offsetof(ethtool_gstrings, data) == 12);
static_assert(offsetof(ethtool_stats, n_stats) == 4 && offsetof(ethtool_stats, data) == 8);
static_assert(offsetof(ethtool_drvinfo, n_stats) == 180 && sizeof(ethtool_drvinfo) == 196);
static_assert(offsetof(ethtool_tunable, len) == 12 && offsetof(ethtool_tunable, data) == 16);
static_assert(ETH_GSTRING_LEN == 32 && ETH_SS_STATS == 1);
static_assert(ETHTOOL_PFC_PREVENTION_TOUT == 3 && ETHTOOL_TUNABLE_U16 == 2);

// The kernel's hard limit is S32_MAX / 8 (K net/ethtool/ioctl.c); no NIC comes near this.
constexpr uint32_t kMaxStats = 1u << 20;

// Room past the count for a driver whose count grows between GSSET_INFO and GSTRINGS/GSTATS:
// kernels before the 2025 len/n_stats check write the driver's *current* count whatever the caller
// asked for (K net/ethtool/ioctl.c ethtool_get_strings / ethtool_get_stats), so the buffer must
// absorb a growth (mlx5 adds ~40 per-priority counters when PFC is enabled). Newer kernels answer a
// mismatching request with 0 entries instead.
uint32_t WithHeadroom(uint32_t count) { return count + count / 2 + 64; }

Status IoctlStatus(int neg_errno, std::string_view request, const std::string& netdev) {
  return FromErrno(-neg_errno, "netdev " + netdev + ": ioctl SIOCETHTOOL " + std::string(request));
}

// ----------------------------------------------- ethtool netlink (UAPI linux/ethtool_netlink.h)
// Private copies: the distro headers lag the kernel (Debian 12's 6.1 header has no
// ETHTOOL_A_LINKSTATE_EXT_DOWN_CNT), and most values are enumerators, which #ifndef cannot test.
// Where the build header has the name, a static_assert pins the copy to it.

constexpr uint8_t kEthtoolGenlVersion = 1;  // ETHTOOL_GENL_VERSION
static_assert(kEthtoolGenlVersion == ETHTOOL_GENL_VERSION);
constexpr const char* kEthtoolGenlName = "ethtool";  // ETHTOOL_GENL_NAME

// Requests (enum ETHTOOL_MSG_*, user → kernel) and replies (kernel → user).
constexpr uint8_t kMsgLinkstateGet = 6;
constexpr uint8_t kMsgLinkstateGetReply = 6;
constexpr uint8_t kMsgPauseGet = 21;
constexpr uint8_t kMsgPauseGetReply = 22;
constexpr uint8_t kMsgFecGet = 29;
constexpr uint8_t kMsgFecGetReply = 30;
static_assert(kMsgLinkstateGet == ETHTOOL_MSG_LINKSTATE_GET &&
              kMsgLinkstateGetReply == ETHTOOL_MSG_LINKSTATE_GET_REPLY);
static_assert(kMsgPauseGet == ETHTOOL_MSG_PAUSE_GET &&
              kMsgPauseGetReply == ETHTOOL_MSG_PAUSE_GET_REPLY);
static_assert(kMsgFecGet == ETHTOOL_MSG_FEC_GET && kMsgFecGetReply == ETHTOOL_MSG_FEC_GET_REPLY);

// Request header nest: attribute 1 in LINKSTATE, PAUSE and FEC messages (_A_*_HEADER).
constexpr int kHeaderNest = 1;
static_assert(kHeaderNest == ETHTOOL_A_LINKSTATE_HEADER && kHeaderNest == ETHTOOL_A_PAUSE_HEADER &&
              kHeaderNest == ETHTOOL_A_FEC_HEADER);
constexpr int kHeaderDevName = 2;  // ETHTOOL_A_HEADER_DEV_NAME, string
constexpr int kHeaderFlags = 3;    // ETHTOOL_A_HEADER_FLAGS, u32
static_assert(kHeaderDevName == ETHTOOL_A_HEADER_DEV_NAME &&
              kHeaderFlags == ETHTOOL_A_HEADER_FLAGS);
constexpr uint32_t kFlagStats = 1u << 2;  // ETHTOOL_FLAG_STATS
static_assert(kFlagStats == ETHTOOL_FLAG_STATS);

// LINKSTATE_GET reply (enum ETHTOOL_A_LINKSTATE_*).
constexpr int kLinkstateLink = 2;        // u8
constexpr int kLinkstateExtState = 5;    // u8
constexpr int kLinkstateExtDownCnt = 7;  // u32, kernel 6.2+ (not in the 6.1 header)
constexpr int kLinkstateMax = 7;
static_assert(kLinkstateLink == ETHTOOL_A_LINKSTATE_LINK &&
              kLinkstateExtState == ETHTOOL_A_LINKSTATE_EXT_STATE);

// PAUSE_GET reply (enum ETHTOOL_A_PAUSE_*, ETHTOOL_A_PAUSE_STAT_*).
constexpr int kPauseStats = 5;  // nest
constexpr int kPauseMax = 6;
constexpr int kPauseStatTxFrames = 2;  // u64
constexpr int kPauseStatRxFrames = 3;  // u64
constexpr int kPauseStatMax = 3;
static_assert(kPauseStats == ETHTOOL_A_PAUSE_STATS &&
              kPauseStatTxFrames == ETHTOOL_A_PAUSE_STAT_TX_FRAMES &&
              kPauseStatRxFrames == ETHTOOL_A_PAUSE_STAT_RX_FRAMES);

// FEC_GET reply (enum ETHTOOL_A_FEC_*, ETHTOOL_A_FEC_STAT_*).
constexpr int kFecActive = 4;  // u32: link-mode bit index
constexpr int kFecStats = 5;   // nest
constexpr int kFecMax = 5;
constexpr int kFecStatCorrected = 2;  // binary: u64[1 + lanes]
constexpr int kFecStatUncorr = 3;
constexpr int kFecStatCorrBits = 4;
constexpr int kFecStatMax = 4;
static_assert(kFecActive == ETHTOOL_A_FEC_ACTIVE && kFecStats == ETHTOOL_A_FEC_STATS &&
              kFecStatCorrected == ETHTOOL_A_FEC_STAT_CORRECTED &&
              kFecStatUncorr == ETHTOOL_A_FEC_STAT_UNCORR &&
              kFecStatCorrBits == ETHTOOL_A_FEC_STAT_CORR_BITS);
// Total + ETHTOOL_MAX_LANES (8) today; a generous bound against a corrupt length.
constexpr size_t kMaxFecArray = 64;

// STATS_GET (kernel 5.13+, K net/ethtool/stats.c). Its request header nest is attribute 2, and its
// header policy is the plain ethnl_header_policy: ETHTOOL_FLAG_STATS would be EINVAL.
constexpr uint8_t kMsgStatsGet = 32;
constexpr uint8_t kMsgStatsGetReply = 33;
static_assert(kMsgStatsGet == ETHTOOL_MSG_STATS_GET &&
              kMsgStatsGetReply == ETHTOOL_MSG_STATS_GET_REPLY);
constexpr int kStatsHeader = 2;  // ETHTOOL_A_STATS_HEADER, nest
constexpr int kStatsGroups = 3;  // ETHTOOL_A_STATS_GROUPS, bitset over ETH_SS_STATS_STD
constexpr int kStatsGrp = 4;     // ETHTOOL_A_STATS_GRP, nest, one per group
static_assert(kStatsHeader == ETHTOOL_A_STATS_HEADER && kStatsGroups == ETHTOOL_A_STATS_GROUPS &&
              kStatsGrp == ETHTOOL_A_STATS_GRP);
// Inside a group (enum ETHTOOL_A_STATS_GRP_*). Also there, ignored: GRP_PAD (1), GRP_SS_ID (3, the
// string set of the counter names, always ETH_SS_STATS_ETH_PHY + id for these four groups) and the
// RMON histogram nests GRP_HIST_RX / GRP_HIST_TX (5 / 6).
constexpr int kStatsGrpId = 2;    // u32: enum ETHTOOL_STATS_* (the bit in ETH_SS_STATS_STD)
constexpr int kStatsGrpStat = 4;  // nest holding ONE u64 whose attribute type is the counter index
static_assert(kStatsGrpId == ETHTOOL_A_STATS_GRP_ID && kStatsGrpStat == ETHTOOL_A_STATS_GRP_STAT);
// Compact bitset (enum ETHTOOL_A_BITSET_*; K net/ethtool/bitset.c ethnl_update_bitset): NOMASK
// flag, SIZE in bits, VALUE as u32 words. NOMASK makes the request "exactly these groups".
constexpr int kBitsetNomask = 1;  // flag
constexpr int kBitsetSize = 2;    // u32
constexpr int kBitsetValue = 4;   // binary, u32[DIV_ROUND_UP(SIZE, 32)]
static_assert(kBitsetNomask == ETHTOOL_A_BITSET_NOMASK && kBitsetSize == ETHTOOL_A_BITSET_SIZE &&
              kBitsetValue == ETHTOOL_A_BITSET_VALUE);
// The groups asked for: bits 0-3 (enum ETHTOOL_STATS_*). Kernel 6.16 added bit 4 "phydev" (PHY
// packet counters), not requested here.
constexpr uint32_t kStatsGroupBits = 4;
constexpr uint32_t kStatsGroupMask = (1u << kStatsGroupBits) - 1;
static_assert(ETHTOOL_STATS_ETH_PHY == 0 && ETHTOOL_STATS_ETH_MAC == 1 &&
              ETHTOOL_STATS_ETH_CTRL == 2 && ETHTOOL_STATS_RMON == 3);
static_assert(ETH_SS_STATS_STD == 16 && ETH_SS_STATS_ETH_PHY == 17 && ETH_SS_STATS_RMON == 20);

// Group names: the kernel's stats_std_names (string set ETH_SS_STATS_STD), by group id.
constexpr std::array<std::string_view, kStatsGroupBits> kStatsGroupNames = {
    "eth-phy", "eth-mac", "eth-ctrl", "rmon"};
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

// MODULE_EEPROM_GET (kernel 5.13+, K net/ethtool/eeprom.c). All four of OFFSET, LENGTH, PAGE and
// I2C_ADDRESS are required (eeprom_parse_request: EINVAL otherwise); BANK is optional.
constexpr uint8_t kMsgModuleEepromGet = 31;
constexpr uint8_t kMsgModuleEepromGetReply = 32;
static_assert(kMsgModuleEepromGet == ETHTOOL_MSG_MODULE_EEPROM_GET &&
              kMsgModuleEepromGetReply == ETHTOOL_MSG_MODULE_EEPROM_GET_REPLY);
constexpr int kModuleEepromHeader = 1;      // ETHTOOL_A_MODULE_EEPROM_HEADER, nest
constexpr int kModuleEepromOffset = 2;      // u32, 0-255
constexpr int kModuleEepromLength = 3;      // u32, 1-128
constexpr int kModuleEepromPage = 4;        // u8
constexpr int kModuleEepromBank = 5;        // u8
constexpr int kModuleEepromI2cAddress = 6;  // u8
constexpr int kModuleEepromData = 7;        // binary (reply)
constexpr int kModuleEepromMax = 7;
static_assert(kModuleEepromHeader == ETHTOOL_A_MODULE_EEPROM_HEADER &&
              kModuleEepromOffset == ETHTOOL_A_MODULE_EEPROM_OFFSET &&
              kModuleEepromLength == ETHTOOL_A_MODULE_EEPROM_LENGTH &&
              kModuleEepromPage == ETHTOOL_A_MODULE_EEPROM_PAGE &&
              kModuleEepromBank == ETHTOOL_A_MODULE_EEPROM_BANK &&
              kModuleEepromI2cAddress == ETHTOOL_A_MODULE_EEPROM_I2C_ADDRESS &&
              kModuleEepromData == ETHTOOL_A_MODULE_EEPROM_DATA);
// ETH_MODULE_EEPROM_PAGE_LEN (K include/linux/ethtool.h): one request reads at most a half page.
constexpr size_t kHalfPage = 128;

// ---------------------------------------------------------------- module memory (reference.md §5)
constexpr uint8_t kI2cA0 = 0x50;  // A0h: SFF-8472 serial ID, and the only address of QSFP/CMIS
constexpr uint8_t kI2cA2 = 0x51;  // A2h: SFF-8472 diagnostics
// SFF-8024 Table 4-1 identifiers, grouped as optics::ModuleTypeFromIdentifier groups them.
bool IsSff8472(uint8_t id) { return id == 0x03; }
bool IsSff8636(uint8_t id) { return id == 0x0C || id == 0x0D || id == 0x11; }
bool IsCmis(uint8_t id) {
  return id == 0x18 || id == 0x19 || id == 0x1B || id == 0x1E || id == 0x1F || id == 0x20;
}
constexpr size_t kSff8472DiagType = 92;  // A0h: bit 6 digital diagnostics implemented
constexpr uint8_t kSff8472DdmBit = 1u << 6;
constexpr size_t kSff8636Status = 2;          // lower page: bit 2 Flat_mem
constexpr uint8_t kSff8636FlatMem = 1u << 2;  // E qsfp.h SFF8636_STATUS_PAGE_3_PRESENT (sic)
constexpr size_t kSff8636Options4 = 195;      // page 00h (E qsfp.h SFF8636_OPTION_4_OFFSET)
constexpr uint8_t kSff8636Page01 = 1u << 6;   // SFF8636_O4_PAGE_01_PRESENT
constexpr uint8_t kSff8636Page02 = 1u << 7;   // SFF8636_O4_PAGE_02_PRESENT
constexpr size_t kCmisMemoryModel = 2;        // lower page: bit 7 flat memory
constexpr uint8_t kCmisFlat = 1u << 7;

// ETHTOOL_GMODULEINFO types and the largest linear image of each (UAPI linux/ethtool.h).
static_assert(ETH_MODULE_SFF_8079 == 1 && ETH_MODULE_SFF_8472 == 2 && ETH_MODULE_SFF_8636 == 3 &&
              ETH_MODULE_SFF_8436 == 4 && ETH_MODULE_SFF_8472_LEN == 512 &&
              ETH_MODULE_SFF_8636_MAX_LEN == 640);
static_assert(offsetof(ethtool_modinfo, type) == 4 && offsetof(ethtool_modinfo, eeprom_len) == 8 &&
              sizeof(ethtool_modinfo) == 44);
static_assert(offsetof(ethtool_eeprom, offset) == 8 && offsetof(ethtool_eeprom, len) == 12 &&
              sizeof(ethtool_eeprom) == 16);

// ---------------------------------------------------------------- DCB (UAPI linux/dcbnl.h)
static_assert(DCB_CMD_IEEE_GET == 21 && DCB_ATTR_IFNAME == 1 && DCB_ATTR_IEEE == 13 &&
              DCB_ATTR_IEEE_PFC == 2 && RTM_GETDCB == 78);
static_assert(sizeof(dcbmsg) == 4);
// struct ieee_pfc: pfc_cap@0, pfc_en@1, mbc@2, delay@4, requests[8]@8, indications[8]@72.
static_assert(offsetof(ieee_pfc, pfc_en) == 1 && offsetof(ieee_pfc, requests) == 8 &&
              offsetof(ieee_pfc, indications) == 72 && sizeof(ieee_pfc) == 136);
constexpr int kDcbPriorities = IEEE_8021QAZ_MAX_TCS;  // 8

// ---------------------------------------------------------------- netlink plumbing

using NlSock = std::unique_ptr<nl_sock, decltype(&nl_socket_free)>;
using NlMsg = std::unique_ptr<nl_msg, decltype(&nlmsg_free)>;

constexpr timeval kReplyTimeout{1, 0};
constexpr auto kReplyDeadline = std::chrono::seconds(1);
constexpr size_t kReceiveBufferBytes = 32 * 1024;  // single-device GET replies are < 4 KiB

std::string NlError(int err, std::string_view what) {
  return std::string(what) + ": " + nl_geterror(err);
}

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

Status Malformed(std::string_view what, std::string_view detail) {
  return Status(StatusCode::kInvalidArgument,
                "malformed " + std::string(what) + ": " + std::string(detail));
}

// A generic-netlink message of command `cmd`, long enough for its genl header.
Status CheckGenl(const nlmsghdr* msg, uint8_t cmd, std::string_view what) {
  if (msg->nlmsg_len < NLMSG_HDRLEN + GENL_HDRLEN) return Malformed(what, "short message");
  const auto* genl = static_cast<const genlmsghdr*>(NLMSG_DATA(msg));
  if (genl->cmd != cmd) {
    return Malformed(what,
                     "command " + std::to_string(genl->cmd) + ", expected " + std::to_string(cmd));
  }
  return Status::Ok();
}

// Parses a generic-netlink reply of command `cmd` into tb[0..max].
Status ParseGenl(const nlmsghdr* msg, uint8_t cmd, nlattr** tb, int max, std::string_view what) {
  if (Status s = CheckGenl(msg, cmd, what); !s.ok()) return s;
  if (int err = genlmsg_parse(const_cast<nlmsghdr*>(msg), 0, tb, max, nullptr); err < 0) {
    return Malformed(what, nl_geterror(err));
  }
  return Status::Ok();
}

Status ParseNested(const nlattr* nest, nlattr** tb, int max, std::string_view what) {
  if (int err = nla_parse_nested(tb, max, const_cast<nlattr*>(nest), nullptr); err < 0) {
    return Malformed(what, nl_geterror(err));
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
  if (rem > 0) return Malformed(what, std::to_string(rem) + " bytes of a truncated attribute");
  return Status::Ok();
}

// ETHTOOL_A_FEC_STAT_*: a binary attribute holding u64[total, lane0, ...].
Status ReadU64Array(const nlattr* attr, std::vector<uint64_t>& out, std::string_view what) {
  out.clear();
  if (attr == nullptr) return Status::Ok();
  const int len = nla_len(attr);
  if (len % 8 != 0 || static_cast<size_t>(len) / 8 > kMaxFecArray) {
    return Malformed(what, "array of " + std::to_string(len) + " bytes");
  }
  out.resize(static_cast<size_t>(len) / 8);
  if (len > 0) std::memcpy(out.data(), nla_data(attr), static_cast<size_t>(len));
  return Status::Ok();
}

Status NetlinkStatus(const NetlinkError& error, const std::string& context) {
  Status status = FromErrno(-error.error, context);
  if (error.extack.empty()) return status;
  return Status(status.code(), status.message() + " (kernel: " + error.extack + ")",
                status.sys_errno());
}

bool ValidNetdevName(const std::string& netdev) {
  return !netdev.empty() && netdev.size() < IFNAMSIZ && netdev.find('/') == std::string::npos;
}

Status BadNetdevName(const std::string& netdev) {
  return Status(StatusCode::kNotFound, "netdev \"" + netdev + "\": not a valid interface name",
                ENODEV);
}

}  // namespace

// ---------------------------------------------------------------- SocketEthtoolIoctl

Result<std::unique_ptr<SocketEthtoolIoctl>> SocketEthtoolIoctl::Open() {
  UniqueFd fd(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  if (!fd) return Error(FromErrno(errno, "socket(AF_INET, SOCK_DGRAM) for SIOCETHTOOL"));
  return std::unique_ptr<SocketEthtoolIoctl>(new SocketEthtoolIoctl(std::move(fd)));
}

int SocketEthtoolIoctl::Call(const std::string& netdev, void* cmd) {
  if (!ValidNetdevName(netdev)) return -ENODEV;
  ifreq ifr{};
  std::memcpy(ifr.ifr_name, netdev.data(), netdev.size());
  ifr.ifr_data = static_cast<char*>(cmd);
  return ::ioctl(fd_.get(), SIOCETHTOOL, &ifr) < 0 ? -errno : 0;
}

int SocketEthtoolIoctl::IfIndex(const std::string& netdev) {
  if (!ValidNetdevName(netdev)) return -ENODEV;
  ifreq ifr{};
  std::memcpy(ifr.ifr_name, netdev.data(), netdev.size());
  if (::ioctl(fd_.get(), SIOCGIFINDEX, &ifr) < 0) return -errno;
  return ifr.ifr_ifindex;
}

// ---------------------------------------------------------------- pure parsers

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

Result<uint16_t> ParseGenlFamilyId(const nlmsghdr* msg) {
  std::array<nlattr*, CTRL_ATTR_MAX + 1> tb{};
  if (Status s =
          ParseGenl(msg, CTRL_CMD_NEWFAMILY, tb.data(), CTRL_ATTR_MAX, "CTRL_CMD_GETFAMILY reply");
      !s.ok()) {
    return Error(s);
  }
  std::optional<uint16_t> id;
  if (!Read(tb[CTRL_ATTR_FAMILY_ID], id) || !id || *id == 0) {
    return Error(Malformed("CTRL_CMD_GETFAMILY reply", "no CTRL_ATTR_FAMILY_ID"));
  }
  return *id;
}

Result<PauseStats> ParsePauseReply(const nlmsghdr* msg) {
  constexpr std::string_view kWhat = "ethtool PAUSE_GET reply";
  std::array<nlattr*, kPauseMax + 1> tb{};
  if (Status s = ParseGenl(msg, kMsgPauseGetReply, tb.data(), kPauseMax, kWhat); !s.ok()) {
    return Error(s);
  }
  if (tb[kPauseStats] == nullptr) {
    return Error(StatusCode::kUnimplemented,
                 "ethtool PAUSE_GET: no pause statistics in the reply (kernel < 5.10)");
  }
  std::array<nlattr*, kPauseStatMax + 1> stats{};
  if (Status s = ParseNested(tb[kPauseStats], stats.data(), kPauseStatMax, kWhat); !s.ok()) {
    return Error(s);
  }
  PauseStats out;
  if (!Read(stats[kPauseStatTxFrames], out.tx_frames) ||
      !Read(stats[kPauseStatRxFrames], out.rx_frames)) {
    return Error(Malformed(kWhat, "short pause counter"));
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
  if (!Read(tb[kFecActive], active)) return Error(Malformed(kWhat, "short ETHTOOL_A_FEC_ACTIVE"));
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
    return Error(Malformed(kWhat, "short attribute"));
  }
  if (link) out.link = *link != 0;
  return out;
}

Result<PfcConfig> ParseDcbIeeeReply(const nlmsghdr* msg) {
  constexpr std::string_view kWhat = "RTM_GETDCB DCB_CMD_IEEE_GET reply";
  if (msg->nlmsg_type != RTM_GETDCB || msg->nlmsg_len < NLMSG_LENGTH(sizeof(dcbmsg))) {
    return Error(Malformed(kWhat, "type " + std::to_string(msg->nlmsg_type)));
  }
  dcbmsg header;
  std::memcpy(&header, NLMSG_DATA(msg), sizeof(header));
  if (header.cmd != DCB_CMD_IEEE_GET) {
    return Error(Malformed(kWhat, "command " + std::to_string(header.cmd)));
  }
  std::array<nlattr*, DCB_ATTR_MAX + 1> tb{};
  if (int err =
          nlmsg_parse(const_cast<nlmsghdr*>(msg), sizeof(dcbmsg), tb.data(), DCB_ATTR_MAX, nullptr);
      err < 0) {
    return Error(Malformed(kWhat, nl_geterror(err)));
  }
  if (tb[DCB_ATTR_IEEE] == nullptr) {
    return Error(StatusCode::kUnimplemented, "DCB: no IEEE 802.1Qaz attributes in the reply");
  }
  std::array<nlattr*, DCB_ATTR_IEEE_MAX + 1> ieee{};
  if (Status s = ParseNested(tb[DCB_ATTR_IEEE], ieee.data(), DCB_ATTR_IEEE_MAX, kWhat); !s.ok()) {
    return Error(s);
  }
  const nlattr* pfc_attr = ieee[DCB_ATTR_IEEE_PFC];
  if (pfc_attr == nullptr) {
    return Error(StatusCode::kUnimplemented,
                 "DCB: the driver reports no IEEE PFC (no ieee_getpfc)");
  }
  const size_t len = static_cast<size_t>(nla_len(pfc_attr));
  if (len < offsetof(ieee_pfc, mbc)) return Error(Malformed(kWhat, "short DCB_ATTR_IEEE_PFC"));
  ieee_pfc pfc{};
  std::memcpy(&pfc, nla_data(pfc_attr), std::min(len, sizeof(pfc)));
  PfcConfig out;
  out.pfc_cap = pfc.pfc_cap;
  out.enabled_mask = pfc.pfc_en;
  if (len >= offsetof(ieee_pfc, indications)) {
    out.requests.emplace(pfc.requests, pfc.requests + kDcbPriorities);
  }
  if (len >= sizeof(ieee_pfc)) {
    out.indications.emplace(pfc.indications, pfc.indications + kDcbPriorities);
  }
  return out;
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
  if (!attrs) return Error(Malformed(kWhat, "short message"));
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
                                    return Malformed(kWhat, "short ETHTOOL_A_STATS_GRP_ID");
                                  }
                                  return Status::Ok();
                                });
    if (!s.ok()) return s;
    if (!id) return Malformed(kWhat, "a group without ETHTOOL_A_STATS_GRP_ID");
    const std::string_view group = StandardStatsGroupName(*id);
    return ForEachAttribute(
        static_cast<nlattr*>(nla_data(grp)), nla_len(grp), kWhat, [&](nlattr* attr) {
          if (nla_type(attr) != kStatsGrpStat) return Status::Ok();  // pad, SS_ID, histograms
          // One u64 whose type is the counter index; index 0 is a valid type here.
          return ForEachAttribute(
              static_cast<nlattr*>(nla_data(attr)), nla_len(attr), kWhat, [&](nlattr* stat) {
                const int index = nla_type(stat);
                if (nla_len(stat) != static_cast<int>(sizeof(uint64_t))) {
                  return Malformed(kWhat, "counter " + std::to_string(index) + " of group " +
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

NlMessage BuildStandardStatsRequest(uint16_t family, const std::string& netdev) {
  NlMessage msg(nlmsg_alloc(), &nlmsg_free);
  if (!msg || genlmsg_put(msg.get(), NL_AUTO_PORT, NL_AUTO_SEQ, family, 0, NLM_F_REQUEST,
                          kMsgStatsGet, kEthtoolGenlVersion) == nullptr) {
    return NlMessage(nullptr, &nlmsg_free);
  }
  // nla_nest_start() sets NLA_F_NESTED (libnl >= 3.5), which the kernel's strict nested parsing
  // of both nests requires (K lib/nlattr.c __nla_parse: "NLA_F_NESTED is missing").
  const uint32_t groups = kStatsGroupMask;
  nlattr* header = nla_nest_start(msg.get(), kStatsHeader);
  if (header == nullptr || nla_put_string(msg.get(), kHeaderDevName, netdev.c_str()) < 0 ||
      nla_nest_end(msg.get(), header) < 0) {
    return NlMessage(nullptr, &nlmsg_free);
  }
  nlattr* bitset = nla_nest_start(msg.get(), kStatsGroups);
  if (bitset == nullptr || nla_put_flag(msg.get(), kBitsetNomask) < 0 ||
      nla_put_u32(msg.get(), kBitsetSize, kStatsGroupBits) < 0 ||
      nla_put(msg.get(), kBitsetValue, sizeof(groups), &groups) < 0 ||
      nla_nest_end(msg.get(), bitset) < 0) {
    return NlMessage(nullptr, &nlmsg_free);
  }
  return msg;
}

std::vector<ModulePageRead> ModulePagesToRead(std::span<const uint8_t> known) {
  auto byte = [known](size_t address) -> uint8_t {
    return address < known.size() ? known[address] : 0;
  };
  auto upper = [](uint8_t page, uint16_t image_offset, uint8_t i2c = kI2cA0) {
    return ModulePageRead{i2c, page, 0, kHalfPage, kHalfPage, image_offset};
  };
  std::vector<ModulePageRead> reads = {ModulePageRead{kI2cA0, 0, 0, 0, kHalfPage, 0}};
  if (known.empty()) return reads;  // the identifier decides the rest
  const uint8_t id = known[0];
  reads.push_back(upper(0x00, 128));  // A0h upper / page 00h, for every module type
  if (IsSff8472(id)) {
    // A2h has no page select in this sense: its two halves are page 0 offsets 0 and 128.
    if ((byte(kSff8472DiagType) & kSff8472DdmBit) != 0) {
      reads.push_back(ModulePageRead{kI2cA2, 0, 0, 0, kHalfPage, 256});
      reads.push_back(upper(0x00, 384, kI2cA2));
    }
  } else if (IsSff8636(id)) {
    if ((byte(kSff8636Status) & kSff8636FlatMem) == 0) {
      // Pages 01h/02h are optional (advertised on page 00h); 03h exists in every paged module.
      const uint8_t options = byte(kSff8636Options4);
      if ((options & kSff8636Page01) != 0) reads.push_back(upper(0x01, 256));
      if ((options & kSff8636Page02) != 0) reads.push_back(upper(0x02, 384));
      reads.push_back(upper(0x03, 512));
    }
  } else if (IsCmis(id)) {
    if ((byte(kCmisMemoryModel) & kCmisFlat) == 0) {
      reads.push_back(upper(0x01, 256));
      reads.push_back(upper(0x02, 384));
      reads.push_back(upper(0x10, 512));
      reads.push_back(upper(0x11, 640));
    }
  }
  return reads;
}

Result<std::vector<uint8_t>> ParseModuleEepromReply(const nlmsghdr* msg, uint32_t requested) {
  constexpr std::string_view kWhat = "ethtool MODULE_EEPROM_GET reply";
  std::array<nlattr*, kModuleEepromMax + 1> tb{};
  if (Status s = ParseGenl(msg, kMsgModuleEepromGetReply, tb.data(), kModuleEepromMax, kWhat);
      !s.ok()) {
    return Error(s);
  }
  const nlattr* data = tb[kModuleEepromData];
  if (data == nullptr) return Error(Malformed(kWhat, "no ETHTOOL_A_MODULE_EEPROM_DATA"));
  const auto len = static_cast<uint32_t>(nla_len(data));
  if (len > requested) {
    return Error(Malformed(
        kWhat, std::to_string(len) + " bytes for a request of " + std::to_string(requested)));
  }
  const auto* bytes = static_cast<const uint8_t*>(nla_data(data));
  return std::vector<uint8_t>(bytes, bytes + len);
}

Result<std::vector<uint8_t>> ReadModuleImage(const ModuleReader& read) {
  std::vector<uint8_t> image;
  for (;;) {
    const std::vector<ModulePageRead> plan = ModulePagesToRead(image);
    auto next = std::find_if(plan.begin(), plan.end(), [&](const ModulePageRead& entry) {
      return entry.image_offset >= image.size();
    });
    if (next == plan.end()) return image;
    const bool lower = next->image_offset == 0;
    // A driver may read less than asked (mlx5 stops at a 0-byte MCIA answer): ask for the rest.
    std::vector<uint8_t> bytes;
    while (bytes.size() < next->length) {
      ModulePageRead part = *next;
      part.offset = static_cast<uint8_t>(next->offset + bytes.size());
      part.length = static_cast<uint8_t>(next->length - bytes.size());
      auto data = read(part);
      if (!data) {
        const int err = data.error().sys_errno();
        if (!lower && bytes.empty() && (err == EINVAL || err == EOPNOTSUPP)) return image;
        return Error(data.error());
      }
      if (data->size() > part.length) {
        return Error(Malformed("module EEPROM read", std::to_string(data->size()) +
                                                         " bytes for a request of " +
                                                         std::to_string(part.length)));
      }
      if (data->empty()) break;
      bytes.insert(bytes.end(), data->begin(), data->end());
    }
    if (bytes.empty()) {
      if (!lower) return image;
      return Error(Status(StatusCode::kNoData,
                          "module EEPROM: the driver read no byte of the lower page (no module "
                          "answered)"));
    }
    image.resize(next->image_offset, 0);  // a skipped optional page reads as zeros
    image.insert(image.end(), bytes.begin(), bytes.end());
    if (bytes.size() < next->length) return image;  // a later page would land at a wrong offset
  }
}

NlMessage BuildModuleEepromRequest(uint16_t family, const std::string& netdev,
                                   const ModulePageRead& read) {
  NlMessage msg(nlmsg_alloc(), &nlmsg_free);
  if (!msg || genlmsg_put(msg.get(), NL_AUTO_PORT, NL_AUTO_SEQ, family, 0, NLM_F_REQUEST,
                          kMsgModuleEepromGet, kEthtoolGenlVersion) == nullptr) {
    return NlMessage(nullptr, &nlmsg_free);
  }
  nlattr* header = nla_nest_start(msg.get(), kModuleEepromHeader);
  if (header == nullptr || nla_put_string(msg.get(), kHeaderDevName, netdev.c_str()) < 0 ||
      nla_nest_end(msg.get(), header) < 0 ||
      nla_put_u32(msg.get(), kModuleEepromOffset, read.offset) < 0 ||
      nla_put_u32(msg.get(), kModuleEepromLength, read.length) < 0 ||
      nla_put_u8(msg.get(), kModuleEepromPage, read.page) < 0 ||
      nla_put_u8(msg.get(), kModuleEepromBank, read.bank) < 0 ||
      nla_put_u8(msg.get(), kModuleEepromI2cAddress, read.i2c_address) < 0) {
    return NlMessage(nullptr, &nlmsg_free);
  }
  return msg;
}

Status ModuleEepromErrorStatus(const Status& error, bool first_read, bool netdev_exists) {
  const int err = error.sys_errno();
  std::string_view why;
  if (err == ENODEV && netdev_exists) {
    why = "no module in the cage";  // K drivers/net/phy/sfp.c: !(sfp->state & SFP_F_PRESENT)
  } else if (first_read && (err == EIO || err == ENXIO || err == EREMOTEIO)) {
    why = "no module answered";  // mlx5 MCIA status, I2C address not ACKed
  } else if (first_read && err == EINVAL &&
             error.message().find("not inserted") != std::string::npos) {
    why = "no module in the cage";  // bnxt_en extack "Transceiver module not inserted"
  } else {
    return error;
  }
  return Status(StatusCode::kNoData, error.message() + " (" + std::string(why) + ")", err);
}

// ---------------------------------------------------------------- netlink channel

struct KernelEthtool::Netlink {
  NlSock genl{nullptr, &nl_socket_free};
  NlSock route{nullptr, &nl_socket_free};
  std::vector<uint64_t> rx = std::vector<uint64_t>(kReceiveBufferBytes / sizeof(uint64_t));
  uint16_t family = 0;          // "ethtool" genl family id, 0 until resolved
  bool family_missing = false;  // the kernel has no such family: every request is kUnimplemented
  // Commands whose request header rejected ETHTOOL_FLAG_STATS (EINVAL): sent without it since.
  std::array<bool, 256> stats_flag_rejected{};
  uint64_t requests = 0;

  static Result<NlSock> OpenSocket(int protocol, std::string_view what) {
    NlSock sock(nl_socket_alloc(), &nl_socket_free);
    if (!sock) return Error(StatusCode::kInternal, std::string(what) + ": nl_socket_alloc failed");
    // One reply per request; an ACK would only sit in the buffer until the next read.
    nl_socket_disable_auto_ack(sock.get());
    int err =
        protocol == NETLINK_GENERIC ? genl_connect(sock.get()) : nl_connect(sock.get(), protocol);
    if (err < 0)
      return Error(StatusCode::kUnavailable, NlError(err, std::string(what) + " connect"));
    const int fd = nl_socket_get_fd(sock.get());
    // A kernel that never answers must not block the collector thread for good.
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &kReplyTimeout, sizeof(kReplyTimeout));
    // The kernel's reason for an error as text (4.12+), without the echoed request. Best effort: an
    // older kernel refuses the option and errors simply carry no text.
    int one = 1;
    setsockopt(fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
    setsockopt(fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));
    return sock;
  }

  Status EnsureGenlSocket() {
    if (genl) return Status::Ok();
    auto sock = OpenSocket(NETLINK_GENERIC, "generic netlink");
    if (!sock) return sock.error();
    genl = std::move(*sock);
    return Status::Ok();
  }

  Status EnsureRouteSocket() {
    if (route) return Status::Ok();
    auto sock = OpenSocket(NETLINK_ROUTE, "rtnetlink");
    if (!sock) return sock.error();
    route = std::move(*sock);
    return Status::Ok();
  }

  // Sends `msg` and returns the reply with its sequence number (a pointer into `rx`, valid until
  // the next call). Replies to earlier requests that timed out are skipped by sequence number.
  Result<const nlmsghdr*> Transact(nl_sock* sock, nl_msg* msg, const std::string& context) {
    ++requests;
    if (int err = nl_send_auto(sock, msg); err < 0) {
      return Error(StatusCode::kUnavailable, NlError(err, context + ": send"));
    }
    const uint32_t seq = nlmsg_hdr(msg)->nlmsg_seq;
    const int fd = nl_socket_get_fd(sock);
    const auto deadline = std::chrono::steady_clock::now() + kReplyDeadline;
    auto* buffer = reinterpret_cast<char*>(rx.data());
    const size_t size = rx.size() * sizeof(uint64_t);
    for (;;) {
      ssize_t n = ::recv(fd, buffer, size, MSG_TRUNC);
      if (n < 0) {
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
          return Error(
              Status(StatusCode::kDeadlineExceeded, context + ": no reply within 1 s", ETIMEDOUT));
        }
        return Error(FromErrno(errno, context + ": recv"));
      }
      if (static_cast<size_t>(n) > size) {
        // Cannot happen for single-device GET replies; grow so the next request fits.
        rx.resize((static_cast<size_t>(n) + sizeof(uint64_t) - 1) / sizeof(uint64_t));
        return Error(StatusCode::kInternal,
                     context + ": reply of " + std::to_string(n) + " bytes truncated");
      }
      int len = static_cast<int>(n);
      for (auto* hdr = reinterpret_cast<nlmsghdr*>(buffer); NLMSG_OK(hdr, len);
           hdr = NLMSG_NEXT(hdr, len)) {
        if (hdr->nlmsg_seq != seq) continue;  // a late answer to an abandoned request
        if (hdr->nlmsg_type == NLMSG_ERROR) {
          auto error = ParseNetlinkError(hdr);
          if (!error) return Error(Malformed(context, "NLMSG_ERROR"));
          if (error->error == 0) continue;  // an ACK (none requested); the reply is separate
          return Error(NetlinkStatus(*error, context));
        }
        if (hdr->nlmsg_type == NLMSG_DONE || hdr->nlmsg_type == NLMSG_NOOP) continue;
        return hdr;
      }
      if (std::chrono::steady_clock::now() >= deadline) {
        return Error(
            Status(StatusCode::kDeadlineExceeded, context + ": no reply within 1 s", ETIMEDOUT));
      }
    }
  }

  // Resolves the "ethtool" family once. Done by hand rather than with genl_ctrl_resolve(), which
  // reports a receive timeout as -NLE_OBJ_NOTFOUND: a stuck kernel at start-up would otherwise
  // disable netlink for the life of the process. The kernel answers ENOENT for a missing family.
  Status EnsureFamily() {
    if (family_missing) {
      return Status(StatusCode::kUnimplemented,
                    "generic netlink family \"ethtool\" is absent (kernel < 5.6 or "
                    "CONFIG_ETHTOOL_NETLINK off)");
    }
    if (family != 0) return Status::Ok();
    if (Status s = EnsureGenlSocket(); !s.ok()) return s;
    NlMsg msg(nlmsg_alloc(), &nlmsg_free);
    if (!msg ||
        genlmsg_put(msg.get(), NL_AUTO_PORT, NL_AUTO_SEQ, GENL_ID_CTRL, 0, NLM_F_REQUEST,
                    CTRL_CMD_GETFAMILY, 1) == nullptr ||
        nla_put_string(msg.get(), CTRL_ATTR_FAMILY_NAME, kEthtoolGenlName) < 0) {
      return Status(StatusCode::kInternal, "generic netlink CTRL_CMD_GETFAMILY: cannot build");
    }
    auto reply = Transact(genl.get(), msg.get(), "generic netlink CTRL_CMD_GETFAMILY ethtool");
    if (!reply) {
      if (reply.error().sys_errno() == ENOENT) {
        family_missing = true;
        return EnsureFamily();
      }
      return reply.error();
    }
    auto id = ParseGenlFamilyId(*reply);
    if (!id) return id.error();
    family = *id;
    return Status::Ok();
  }

  // ETHTOOL_MSG_STATS_GET for one netdev (no ETHTOOL_FLAG_STATS: not in its header policy).
  Result<const nlmsghdr*> StandardStatsGet(const std::string& netdev) {
    const std::string context = "netdev " + netdev + ": ethtool netlink STATS_GET";
    if (Status s = EnsureFamily(); !s.ok()) return Error(s.WithContext(context));
    NlMessage msg = BuildStandardStatsRequest(family, netdev);
    if (!msg) return Error(StatusCode::kInternal, context + ": cannot build the request");
    return Transact(genl.get(), msg.get(), context);
  }

  // One ETHTOOL_MSG_MODULE_EEPROM_GET read (its header policy takes no flags).
  Result<const nlmsghdr*> ModuleEepromGet(const std::string& netdev, const ModulePageRead& read,
                                          const std::string& context) {
    if (Status s = EnsureFamily(); !s.ok()) return Error(s.WithContext(context));
    NlMessage msg = BuildModuleEepromRequest(family, netdev, read);
    if (!msg) return Error(StatusCode::kInternal, context + ": cannot build the request");
    return Transact(genl.get(), msg.get(), context);
  }

  // An ethtool GET request for one netdev with ETHTOOL_FLAG_STATS, or without it once the kernel
  // has rejected the flag for this command (reference.md §3.2: EINVAL from the header policy).
  Result<const nlmsghdr*> EthtoolGet(const std::string& netdev, uint8_t cmd, std::string_view name,
                                     bool* sent_stats = nullptr) {
    const std::string context = "netdev " + netdev + ": ethtool netlink " + std::string(name);
    if (Status s = EnsureFamily(); !s.ok()) return Error(s.WithContext(context));
    bool with_stats = !stats_flag_rejected[cmd];
    for (;;) {
      NlMsg msg(nlmsg_alloc(), &nlmsg_free);
      nlattr* header = nullptr;
      if (!msg ||
          genlmsg_put(msg.get(), NL_AUTO_PORT, NL_AUTO_SEQ, family, 0, NLM_F_REQUEST, cmd,
                      kEthtoolGenlVersion) == nullptr ||
          (header = nla_nest_start(msg.get(), kHeaderNest)) == nullptr ||
          nla_put_string(msg.get(), kHeaderDevName, netdev.c_str()) < 0 ||
          (with_stats && nla_put_u32(msg.get(), kHeaderFlags, kFlagStats) < 0)) {
        return Error(StatusCode::kInternal, context + ": cannot build the request");
      }
      nla_nest_end(msg.get(), header);
      auto reply = Transact(genl.get(), msg.get(), context);
      if (!reply && with_stats && reply.error().sys_errno() == EINVAL) {
        with_stats = false;
        continue;
      }
      if (reply && !with_stats) stats_flag_rejected[cmd] = true;
      if (sent_stats != nullptr) *sent_stats = with_stats;
      return reply;
    }
  }
};

// ---------------------------------------------------------------- KernelEthtool

KernelEthtool::KernelEthtool(std::unique_ptr<EthtoolIoctl> ioctl)
    : ioctl_(std::move(ioctl)), netlink_(std::make_unique<Netlink>()) {}

KernelEthtool::~KernelEthtool() = default;

Result<std::unique_ptr<KernelEthtool>> KernelEthtool::Create() {
  auto ioctl = SocketEthtoolIoctl::Open();
  if (!ioctl) return Error(ioctl.error());
  auto source = std::make_unique<KernelEthtool>(std::move(*ioctl));
  // Opened now so that they belong to the caller's network namespace; a failure is retried on first
  // use and reported there.
  (void)source->netlink_->EnsureGenlSocket();
  (void)source->netlink_->EnsureRouteSocket();
  return source;
}

Result<uint32_t> KernelEthtool::StatsCount(const std::string& netdev) {
  // ETHTOOL_GSSET_INFO: the kernel clears the bits of sets it cannot count and writes one u32 per
  // remaining bit (K net/ethtool/ioctl.c ethtool_get_sset_info).
  std::array<uint64_t, 3> buffer{};  // 16-byte header + data[1], 8-byte aligned
  ethtool_sset_info info{};
  info.cmd = ETHTOOL_GSSET_INFO;
  info.sset_mask = 1ull << ETH_SS_STATS;
  std::memcpy(buffer.data(), &info, sizeof(info));
  int rc = ioctl_->Call(netdev, buffer.data());
  if (rc == 0) {
    std::memcpy(&info, buffer.data(), sizeof(info));
    if ((info.sset_mask & (1ull << ETH_SS_STATS)) == 0) {
      return Error(StatusCode::kUnimplemented,
                   "netdev " + netdev + ": the driver has no statistics (no ETH_SS_STATS set)");
    }
    uint32_t count;
    std::memcpy(&count,
                reinterpret_cast<const char*>(buffer.data()) + offsetof(ethtool_sset_info, data),
                sizeof(count));
    return count;
  }
  if (rc != -EOPNOTSUPP && rc != -EINVAL) {
    return Error(IoctlStatus(rc, "ETHTOOL_GSSET_INFO", netdev));
  }
  // Kernels before 2.6.33 have no GSSET_INFO: ETHTOOL_GDRVINFO.n_stats.
  ethtool_drvinfo drvinfo{};
  drvinfo.cmd = ETHTOOL_GDRVINFO;
  if (rc = ioctl_->Call(netdev, &drvinfo); rc != 0) {
    return Error(IoctlStatus(rc, "ETHTOOL_GDRVINFO", netdev));
  }
  return drvinfo.n_stats;
}

Result<KernelEthtool::Fetch> KernelEthtool::FetchNames(const std::string& netdev, uint32_t count,
                                                       StatsCache& cache) {
  // Transient: names are fetched again only when the count or the ifindex changes.
  const uint32_t capacity = WithHeadroom(count);
  const size_t bytes = sizeof(ethtool_gstrings) + size_t{capacity} * ETH_GSTRING_LEN;
  std::vector<uint64_t> buffer((bytes + sizeof(uint64_t) - 1) / sizeof(uint64_t));
  ethtool_gstrings header{};
  header.cmd = ETHTOOL_GSTRINGS;
  header.string_set = ETH_SS_STATS;
  header.len = count;  // what we expect: newer kernels answer 0 entries if it is stale
  std::memcpy(buffer.data(), &header, sizeof(header));
  if (int rc = ioctl_->Call(netdev, buffer.data()); rc != 0) {
    return Error(IoctlStatus(rc, "ETHTOOL_GSTRINGS", netdev));
  }
  std::memcpy(&header, buffer.data(), sizeof(header));
  cache.names.clear();
  if (header.len != count) return Fetch::kCountChanged;
  const char* data = reinterpret_cast<const char*>(buffer.data()) + sizeof(ethtool_gstrings);
  cache.names.reserve(count);
  for (uint32_t i = 0; i < count; ++i) {
    const char* name = data + size_t{i} * ETH_GSTRING_LEN;
    cache.names.emplace_back(name, strnlen(name, ETH_GSTRING_LEN));
  }
  return Fetch::kOk;
}

Result<KernelEthtool::Fetch> KernelEthtool::FetchValues(const std::string& netdev, uint32_t count,
                                                        StatsCache& cache) {
  // values[0] is the 8-byte struct ethtool_stats header, values[1 + i] is stat i.
  const size_t needed = 1 + size_t{WithHeadroom(count)};
  if (cache.values.size() < needed) cache.values.resize(needed);
  ethtool_stats header{};
  header.cmd = ETHTOOL_GSTATS;
  header.n_stats = count;
  std::memcpy(cache.values.data(), &header, sizeof(header));
  if (int rc = ioctl_->Call(netdev, cache.values.data()); rc != 0) {
    return Error(IoctlStatus(rc, "ETHTOOL_GSTATS", netdev));
  }
  std::memcpy(&header, cache.values.data(), sizeof(header));
  return header.n_stats == count ? Fetch::kOk : Fetch::kCountChanged;
}

void KernelEthtool::PruneCache() {
  // Netdevs come and go (container veths): entries of names that no longer resolve to the same
  // device are dropped when the cache has doubled since the last pass, so the work is amortised.
  if (stats_cache_.size() < prune_at_) return;
  std::erase_if(stats_cache_, [this](const auto& entry) {
    return ioctl_->IfIndex(entry.first) != entry.second.ifindex;
  });
  prune_at_ = std::max(kMinPruneAt, 2 * stats_cache_.size());
}

Status KernelEthtool::ReadStatistics(const std::string& netdev, std::vector<EthtoolStat>& stats) {
  if (!ValidNetdevName(netdev)) return BadNetdevName(netdev);
  const int ifindex = ioctl_->IfIndex(netdev);
  if (ifindex < 0) {
    stats_cache_.erase(netdev);
    return FromErrno(-ifindex, "netdev " + netdev + ": SIOCGIFINDEX");
  }
  auto it = stats_cache_.find(netdev);
  if (it == stats_cache_.end()) {
    PruneCache();
    it = stats_cache_.emplace(netdev, StatsCache{}).first;
  }
  StatsCache& cache = it->second;
  if (cache.ifindex != ifindex) {  // a new device under this name: its table is unknown
    cache.ifindex = ifindex;
    cache.names.clear();
  }
  // The driver's count can change between any two calls (mlx5: PFC enabled, channels added). A
  // mismatch restarts the sequence once with fresh names; a second one gives up for this tick
  // rather than pair names and values of different tables.
  std::string changes;
  for (int attempt = 0; attempt < 2; ++attempt) {
    auto count = StatsCount(netdev);
    if (!count) return count.error();
    if (*count == 0) {
      stats.clear();
      return Status::Ok();
    }
    if (*count > kMaxStats) {
      return Status(StatusCode::kInternal, "netdev " + netdev + ": implausible statistics count " +
                                               std::to_string(*count));
    }
    if (cache.names.size() != *count) {
      auto fetched = FetchNames(netdev, *count, cache);
      if (!fetched) return fetched.error();
      if (*fetched == Fetch::kCountChanged) {
        changes += (changes.empty() ? "" : ", ") + std::to_string(*count) + " before GSTRINGS";
        continue;
      }
    }
    auto fetched = FetchValues(netdev, *count, cache);
    if (!fetched) return fetched.error();
    if (*fetched == Fetch::kCountChanged) {
      changes += (changes.empty() ? "" : ", ") + std::to_string(*count) + " before GSTATS";
      cache.names.clear();  // the table these names belong to is gone
      continue;
    }
    stats.resize(*count);
    for (uint32_t i = 0; i < *count; ++i) {
      stats[i].name = cache.names[i];  // copy-assigned: the previous sample's storage is reused
      stats[i].value = cache.values[1 + i];
    }
    return Status::Ok();
  }
  return Status(StatusCode::kUnavailable,
                "netdev " + netdev + ": the driver's statistics count kept changing (" + changes +
                    "); skipped this time",
                EAGAIN);
}

Result<PauseStats> KernelEthtool::Pause(const std::string& netdev) {
  if (!ValidNetdevName(netdev)) return Error(BadNetdevName(netdev));
  auto reply = netlink_->EthtoolGet(netdev, kMsgPauseGet, "PAUSE_GET");
  if (!reply) return Error(reply.error());
  auto parsed = ParsePauseReply(*reply);
  if (!parsed) return Error(parsed.error().WithContext("netdev " + netdev));
  return parsed;
}

Result<FecStats> KernelEthtool::Fec(const std::string& netdev) {
  if (!ValidNetdevName(netdev)) return Error(BadNetdevName(netdev));
  auto reply = netlink_->EthtoolGet(netdev, kMsgFecGet, "FEC_GET");
  if (!reply) return Error(reply.error());
  auto parsed = ParseFecReply(*reply);
  if (!parsed) return Error(parsed.error().WithContext("netdev " + netdev));
  return parsed;
}

Result<LinkState> KernelEthtool::LinkStateOf(const std::string& netdev) {
  if (!ValidNetdevName(netdev)) return Error(BadNetdevName(netdev));
  auto reply = netlink_->EthtoolGet(netdev, kMsgLinkstateGet, "LINKSTATE_GET");
  if (!reply) return Error(reply.error());
  auto parsed = ParseLinkStateReply(*reply);
  if (!parsed) return Error(parsed.error().WithContext("netdev " + netdev));
  return parsed;
}

Result<PfcConfig> KernelEthtool::Pfc(const std::string& netdev) {
  if (!ValidNetdevName(netdev)) return Error(BadNetdevName(netdev));
  const std::string context = "netdev " + netdev + ": rtnetlink RTM_GETDCB DCB_CMD_IEEE_GET";
  if (Status s = netlink_->EnsureRouteSocket(); !s.ok()) return Error(s.WithContext(context));
  // libnl-route has no DCB objects: the request is built by hand (reference.md §4.5).
  NlMsg msg(nlmsg_alloc_simple(RTM_GETDCB, NLM_F_REQUEST), &nlmsg_free);
  dcbmsg header{};
  header.dcb_family = AF_UNSPEC;
  header.cmd = DCB_CMD_IEEE_GET;
  if (!msg || nlmsg_append(msg.get(), &header, sizeof(header), NLMSG_ALIGNTO) < 0 ||
      nla_put_string(msg.get(), DCB_ATTR_IFNAME, netdev.c_str()) < 0) {
    return Error(StatusCode::kInternal, context + ": cannot build the request");
  }
  auto reply = netlink_->Transact(netlink_->route.get(), msg.get(), context);
  if (!reply) return Error(reply.error());
  auto parsed = ParseDcbIeeeReply(*reply);
  if (!parsed) return Error(parsed.error().WithContext("netdev " + netdev));
  return parsed;
}

Result<std::vector<StandardStat>> KernelEthtool::StandardStats(const std::string& netdev) {
  if (!ValidNetdevName(netdev)) return Error(BadNetdevName(netdev));
  auto reply = netlink_->StandardStatsGet(netdev);
  if (!reply) return Error(reply.error());
  auto parsed = ParseStandardStatsReply(*reply, &standard_stats_skipped_);
  if (!parsed) return Error(parsed.error().WithContext("netdev " + netdev));
  return parsed;
}

uint64_t KernelEthtool::netlink_requests() const { return netlink_->requests; }

Result<bool> KernelEthtool::EthtoolGetForTesting(const std::string& netdev, uint8_t cmd) {
  if (!ValidNetdevName(netdev)) return Error(BadNetdevName(netdev));
  bool sent_stats = false;
  auto reply = netlink_->EthtoolGet(netdev, cmd, "command " + std::to_string(cmd), &sent_stats);
  if (!reply) return Error(reply.error());
  return sent_stats;
}

Result<uint32_t> KernelEthtool::PfcStormTimeoutMs(const std::string& netdev) {
  if (!ValidNetdevName(netdev)) return Error(BadNetdevName(netdev));
  // struct ethtool_tunable (16 bytes) followed by the u16 value (K net/ethtool/ioctl.c
  // ethtool_get_tunable copies tuna.len bytes after the header).
  std::array<uint64_t, 3> buffer{};
  ethtool_tunable tunable{};
  tunable.cmd = ETHTOOL_GTUNABLE;
  tunable.id = ETHTOOL_PFC_PREVENTION_TOUT;
  tunable.type_id = ETHTOOL_TUNABLE_U16;
  tunable.len = sizeof(uint16_t);
  std::memcpy(buffer.data(), &tunable, sizeof(tunable));
  if (int rc = ioctl_->Call(netdev, buffer.data()); rc != 0) {
    if (rc == -EINVAL) {
      // ethtool_tunable_valid() rejects an id the kernel does not know, and drivers' get_tunable
      // answer EINVAL for ids they do not handle: both mean "not here".
      return Error(Status(StatusCode::kUnimplemented,
                          "netdev " + netdev +
                              ": ioctl SIOCETHTOOL ETHTOOL_GTUNABLE PFC_PREVENTION_TOUT: not "
                              "supported by the driver (EINVAL)",
                          EINVAL));
    }
    return Error(IoctlStatus(rc, "ETHTOOL_GTUNABLE PFC_PREVENTION_TOUT", netdev));
  }
  uint16_t value;
  std::memcpy(&value, reinterpret_cast<const char*>(buffer.data()) + sizeof(ethtool_tunable),
              sizeof(value));
  // 0 = PFC_STORM_PREVENTION_DISABLE; mlx5 reports the resolved timeout, never
  // PFC_STORM_PREVENTION_AUTO (0xffff), which is a value to set (UAPI linux/ethtool.h).
  return uint32_t{value};
}

Status KernelEthtool::ModuleError(const Status& error, const std::string& netdev, bool first_read) {
  // ENODEV is also the kernel's answer for a netdev name it does not know (ethnl header parsing,
  // dev_ethtool): only a netdev that still exists makes it "no module".
  const bool exists = error.sys_errno() != ENODEV || ioctl_->IfIndex(netdev) >= 0;
  return ModuleEepromErrorStatus(error, first_read, exists);
}

Result<std::vector<uint8_t>> KernelEthtool::ModuleEepromNetlink(const std::string& netdev) {
  auto image = ReadModuleImage([&](const ModulePageRead& read) -> Result<std::vector<uint8_t>> {
    char where[96];
    std::snprintf(where, sizeof(where), " i2c 0x%02x page 0x%02x bank %u offset %u length %u",
                  read.i2c_address, read.page, read.bank, read.offset, read.length);
    const std::string context = "netdev " + netdev + ": ethtool netlink MODULE_EEPROM_GET" + where;
    auto reply = netlink_->ModuleEepromGet(netdev, read, context);
    if (!reply) return Error(ModuleError(reply.error(), netdev, read.image_offset == 0));
    auto data = ParseModuleEepromReply(*reply, read.length);
    if (!data) return Error(data.error().WithContext(context));
    return data;
  });
  if (!image && image.error().sys_errno() == 0 && image.error().no_data()) {
    return Error(image.error().WithContext("netdev " + netdev));  // the empty lower page
  }
  return image;
}

Result<std::vector<uint8_t>> KernelEthtool::ModuleEepromIoctl(const std::string& netdev) {
  ethtool_modinfo info{};
  info.cmd = ETHTOOL_GMODULEINFO;
  if (int rc = ioctl_->Call(netdev, &info); rc != 0) {
    return Error(ModuleError(IoctlStatus(rc, "ETHTOOL_GMODULEINFO", netdev), netdev, true));
  }
  uint32_t max_len = 0;
  switch (info.type) {
    case ETH_MODULE_SFF_8079:
      max_len = ETH_MODULE_SFF_8079_LEN;
      break;
    case ETH_MODULE_SFF_8472:
      max_len = ETH_MODULE_SFF_8472_LEN;
      break;
    case ETH_MODULE_SFF_8636:
    case ETH_MODULE_SFF_8436:
      max_len = ETH_MODULE_SFF_8636_MAX_LEN;
      break;
    default:
      return Error(Status(StatusCode::kUnimplemented,
                          "netdev " + netdev + ": ioctl SIOCETHTOOL ETHTOOL_GMODULEINFO: type " +
                              std::to_string(info.type) + " has no known linear layout"));
  }
  if (info.eeprom_len == 0 || info.eeprom_len > max_len) {
    return Error(
        Status(StatusCode::kInternal,
               "netdev " + netdev + ": ioctl SIOCETHTOOL ETHTOOL_GMODULEINFO: eeprom_len " +
                   std::to_string(info.eeprom_len) + " for module type " +
                   std::to_string(info.type) + " (at most " + std::to_string(max_len) + ")"));
  }
  // struct ethtool_eeprom then data[eeprom_len]: the kernel reads the whole linear image in one
  // call (K net/ethtool/ioctl.c ethtool_get_any_eeprom loops over it in PAGE_SIZE chunks).
  std::vector<uint64_t> buffer((sizeof(ethtool_eeprom) + info.eeprom_len + 7) / 8);
  ethtool_eeprom eeprom{};
  eeprom.cmd = ETHTOOL_GMODULEEEPROM;
  eeprom.offset = 0;
  eeprom.len = info.eeprom_len;
  std::memcpy(buffer.data(), &eeprom, sizeof(eeprom));
  if (int rc = ioctl_->Call(netdev, buffer.data()); rc != 0) {
    return Error(ModuleError(IoctlStatus(rc, "ETHTOOL_GMODULEEEPROM", netdev), netdev, true));
  }
  const auto* data = reinterpret_cast<const uint8_t*>(buffer.data()) + sizeof(ethtool_eeprom);
  return std::vector<uint8_t>(data, data + info.eeprom_len);
}

Status KernelEthtool::ReadModuleEeprom(const std::string& netdev, std::vector<uint8_t>& image) {
  auto read = ModuleEepromEitherPath(netdev);
  if (!read) {
    image.clear();
    return read.error();
  }
  image = std::move(*read);
  return Status::Ok();
}

Result<std::vector<uint8_t>> KernelEthtool::ModuleEepromEitherPath(const std::string& netdev) {
  if (!ValidNetdevName(netdev)) return Error(BadNetdevName(netdev));
  if (module_eeprom_via_ioctl_) return ModuleEepromIoctl(netdev);
  auto image = ModuleEepromNetlink(netdev);
  if (image || image.error().code() != StatusCode::kUnimplemented) return image;
  // No family, or EOPNOTSUPP: the kernel's own fallback to the legacy ops already ran for a kernel
  // with the command, so the ioctl can only add something on a kernel without it (5.6-5.12).
  auto legacy = ModuleEepromIoctl(netdev);
  if (legacy) {
    if (image.error().sys_errno() == EOPNOTSUPP) module_eeprom_via_ioctl_ = true;
    return legacy;
  }
  if (legacy.error().code() != StatusCode::kUnimplemented) return legacy;
  return Error(Status(StatusCode::kUnimplemented,
                      legacy.error().message() + " (and " + image.error().message() + ")",
                      legacy.error().sys_errno()));
}

void KernelEthtool::UseIoctlForModulesForTesting() { module_eeprom_via_ioctl_ = true; }

}  // namespace fabricwatch::sys
