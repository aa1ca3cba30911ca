#pragma once
// Private copies of the ethtool generic-netlink UAPI values that KernelEthtool's netlink path
// uses (UAPI linux/ethtool_netlink.h; docs/reference.md §3.2). Only for the ethtool_* sources of
// this folder: ethtool_netlink.cc (requests), ethtool_netlink_parse.cc (replies),
// ethtool_kernel.cc.
//
// Copies, because the distro headers lag the kernel (Debian 12's 6.1 header has no
// ETHTOOL_A_LINKSTATE_EXT_DOWN_CNT), and most values are enumerators, which #ifndef cannot test.
// Where the build header has the name, a static_assert pins the copy to it.

#include <linux/ethtool.h>
#include <linux/ethtool_netlink.h>

#include <cstdint>

namespace fabricwatch::sys {

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
constexpr int kPauseAutoneg = 2;  // u8
constexpr int kPauseRx = 3;       // u8
constexpr int kPauseTx = 4;       // u8
constexpr int kPauseStats = 5;    // nest
constexpr int kPauseMax = 6;
constexpr int kPauseStatTxFrames = 2;  // u64
constexpr int kPauseStatRxFrames = 3;  // u64
constexpr int kPauseStatMax = 3;
static_assert(kPauseAutoneg == ETHTOOL_A_PAUSE_AUTONEG && kPauseRx == ETHTOOL_A_PAUSE_RX &&
              kPauseTx == ETHTOOL_A_PAUSE_TX);
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

// LINKINFO_GET and LINKMODES_GET (kernel 5.6+, K net/ethtool/linkinfo.c, linkmodes.c): plain
// ethnl_header_policy, so no ETHTOOL_FLAG_STATS; unprivileged.
constexpr uint8_t kMsgLinkinfoGet = 2;
constexpr uint8_t kMsgLinkinfoGetReply = 2;
constexpr uint8_t kMsgLinkmodesGet = 4;
constexpr uint8_t kMsgLinkmodesGetReply = 4;
static_assert(kMsgLinkinfoGet == ETHTOOL_MSG_LINKINFO_GET &&
              kMsgLinkinfoGetReply == ETHTOOL_MSG_LINKINFO_GET_REPLY &&
              kMsgLinkmodesGet == ETHTOOL_MSG_LINKMODES_GET &&
              kMsgLinkmodesGetReply == ETHTOOL_MSG_LINKMODES_GET_REPLY);
static_assert(kHeaderNest == ETHTOOL_A_LINKINFO_HEADER &&
              kHeaderNest == ETHTOOL_A_LINKMODES_HEADER);
constexpr uint32_t kFlagCompactBitsets = 1u << 0;  // ETHTOOL_FLAG_COMPACT_BITSETS
static_assert(kFlagCompactBitsets == ETHTOOL_FLAG_COMPACT_BITSETS);
// LINKINFO_GET reply (enum ETHTOOL_A_LINKINFO_*).
constexpr int kLinkinfoPort = 2;  // u8: PORT_*
constexpr int kLinkinfoMax = 6;
static_assert(kLinkinfoPort == ETHTOOL_A_LINKINFO_PORT);
// LINKMODES_GET reply (enum ETHTOOL_A_LINKMODES_*). OURS: value = advertised, mask = supported.
constexpr int kLinkmodesAutoneg = 2;  // u8: AUTONEG_*
constexpr int kLinkmodesOurs = 3;     // bitset
constexpr int kLinkmodesSpeed = 5;    // u32, Mb/s
constexpr int kLinkmodesDuplex = 6;   // u8: DUPLEX_*
constexpr int kLinkmodesLanes = 9;    // u32, kernel 5.11+
constexpr int kLinkmodesMax = 10;     // RATE_MATCHING (6.2)
static_assert(kLinkmodesAutoneg == ETHTOOL_A_LINKMODES_AUTONEG &&
              kLinkmodesOurs == ETHTOOL_A_LINKMODES_OURS &&
              kLinkmodesSpeed == ETHTOOL_A_LINKMODES_SPEED &&
              kLinkmodesDuplex == ETHTOOL_A_LINKMODES_DUPLEX &&
              kLinkmodesLanes == ETHTOOL_A_LINKMODES_LANES);
// Bitsets (enum ETHTOOL_A_BITSET_*, K net/ethtool/bitset.c ethnl_put_bitset): compact (SIZE, VALUE
// and MASK as u32 words) or verbose (SIZE, BITS: one BITS_BIT nest per bit of the mask, with
// INDEX, NAME and the VALUE flag when the bit is set in the value). NOMASK: no mask was sent.
constexpr int kBitsetBits = 3;  // nest
constexpr int kBitsetMask = 5;  // binary
constexpr int kBitsetMax = 5;
constexpr int kBitsetBitsBit = 1;   // nest (ETHTOOL_A_BITSET_BITS_BIT)
constexpr int kBitsetBitIndex = 1;  // u32
constexpr int kBitsetBitName = 2;   // string
constexpr int kBitsetBitValue = 3;  // flag
constexpr int kBitsetBitMax = 3;
static_assert(kBitsetBits == ETHTOOL_A_BITSET_BITS && kBitsetMask == ETHTOOL_A_BITSET_MASK &&
              kBitsetBitsBit == ETHTOOL_A_BITSET_BITS_BIT &&
              kBitsetBitIndex == ETHTOOL_A_BITSET_BIT_INDEX &&
              kBitsetBitName == ETHTOOL_A_BITSET_BIT_NAME &&
              kBitsetBitValue == ETHTOOL_A_BITSET_BIT_VALUE);

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

}  // namespace fabricwatch::sys
