// Tests of the pure netlink reply parsers (ethtool_netlink_parse.h) on messages built as the
// kernel builds them: PAUSE_GET, FEC_GET, LINKSTATE_GET, STATS_GET and MODULE_EEPROM_GET replies,
// NLMSG_ERROR with extended ACKs, the generic-netlink family id.

#include "collectors/ethtool_source/ethtool_netlink_parse.h"

#include <gtest/gtest.h>
#include <linux/ethtool.h>
#include <linux/genetlink.h>
#include <netlink/attr.h>
#include <netlink/genl/genl.h>
#include <netlink/msg.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>
#include <vector>

#include "tests/unit/collectors/ethtool_source/netlink_test_messages.h"

namespace fabricwatch::sys {
namespace {

void PutU64Array(nl_msg* msg, int type, const std::vector<uint64_t>& values) {
  nla_put(msg, type, static_cast<int>(values.size() * 8), values.data());
}

constexpr uint8_t kPauseReply = 22, kFecReply = 30, kLinkstateReply = 6;

TEST(EthtoolParseTest, PauseInfo) {
  Msg msg = GenlReply(kPauseReply);
  nla_put_u8(msg.get(), 2, 0);  // AUTONEG
  nla_put_u8(msg.get(), 3, 1);  // RX
  nla_put_u8(msg.get(), 4, 1);  // TX
  nlattr* stats = nla_nest_start(msg.get(), 5);
  PutPad(msg.get(), 1);
  nla_put_u64(msg.get(), 2, 0x1'0000'0001ull);
  PutPad(msg.get(), 1);
  nla_put_u64(msg.get(), 3, 77);
  nla_nest_end(msg.get(), stats);
  auto pause = ParsePauseReply(nlmsg_hdr(msg.get()));
  ASSERT_TRUE(pause) << pause.error().ToString();
  EXPECT_EQ(pause->tx_frames, std::optional<uint64_t>(0x1'0000'0001ull));
  EXPECT_EQ(pause->rx_frames, std::optional<uint64_t>(77));
  EXPECT_EQ(pause->autoneg, std::optional<bool>(false));
  EXPECT_EQ(pause->rx_enabled, std::optional<bool>(true));
  EXPECT_EQ(pause->tx_enabled, std::optional<bool>(true));
}

TEST(EthtoolParseTest, PauseStatsPartialEmptyAndAbsent) {
  Msg partial = GenlReply(kPauseReply);
  nlattr* stats = nla_nest_start(partial.get(), 5);
  nla_put_u64(partial.get(), 3, 9);
  nla_nest_end(partial.get(), stats);
  auto one = ParsePauseReply(nlmsg_hdr(partial.get()));
  ASSERT_TRUE(one);
  EXPECT_FALSE(one->tx_frames);
  EXPECT_EQ(one->rx_frames, std::optional<uint64_t>(9));

  Msg empty = GenlReply(kPauseReply);  // get_pauseparam without get_pause_stats
  PutEmptyNest(empty.get(), 5);
  auto none = ParsePauseReply(nlmsg_hdr(empty.get()));
  ASSERT_TRUE(none);
  EXPECT_FALSE(none->tx_frames);
  EXPECT_FALSE(none->rx_frames);

  Msg settings_only = GenlReply(kPauseReply);  // kernel < 5.10: settings, no stats nest
  nla_put_u8(settings_only.get(), 3, 1);
  auto settings = ParsePauseReply(nlmsg_hdr(settings_only.get()));
  ASSERT_TRUE(settings) << settings.error().ToString();
  EXPECT_EQ(settings->rx_enabled, std::optional<bool>(true));
  EXPECT_FALSE(settings->tx_enabled);
  EXPECT_FALSE(settings->tx_frames);

  Msg absent = GenlReply(kPauseReply);  // neither settings nor stats
  auto unsupported = ParsePauseReply(nlmsg_hdr(absent.get()));
  ASSERT_FALSE(unsupported);
  EXPECT_EQ(unsupported.error().code(), StatusCode::kUnimplemented);

  Msg short_flag = GenlReply(kPauseReply);
  nla_put(short_flag.get(), 4, 0, nullptr);
  EXPECT_EQ(ParsePauseReply(nlmsg_hdr(short_flag.get())).error().code(),
            StatusCode::kInvalidArgument);

  Msg wrong = GenlReply(kFecReply);
  EXPECT_EQ(ParsePauseReply(nlmsg_hdr(wrong.get())).error().code(), StatusCode::kInvalidArgument);

  Msg short_counter = GenlReply(kPauseReply);
  stats = nla_nest_start(short_counter.get(), 5);
  nla_put_u32(short_counter.get(), 2, 1);
  nla_nest_end(short_counter.get(), stats);
  EXPECT_EQ(ParsePauseReply(nlmsg_hdr(short_counter.get())).error().code(),
            StatusCode::kInvalidArgument);
}

TEST(EthtoolParseTest, FecWithLanes) {
  Msg msg = GenlReply(kFecReply);
  nla_put_u8(msg.get(), 3, 0);    // AUTO
  nla_put_u32(msg.get(), 4, 50);  // ACTIVE = ETHTOOL_LINK_MODE_FEC_RS_BIT
  nlattr* stats = nla_nest_start(msg.get(), 5);
  PutPad(msg.get(), 1);
  PutU64Array(msg.get(), 2, {100, 10, 20, 30, 40});
  PutU64Array(msg.get(), 3, {3, 0, 1, 2, 0});
  PutU64Array(msg.get(), 4, {1ull << 40});  // total only: the driver has no per-lane split
  nla_nest_end(msg.get(), stats);
  auto fec = ParseFecReply(nlmsg_hdr(msg.get()));
  ASSERT_TRUE(fec) << fec.error().ToString();
  EXPECT_EQ(fec->active_mode, "rs");
  EXPECT_EQ(fec->corrected_blocks, (std::vector<uint64_t>{100, 10, 20, 30, 40}));
  EXPECT_EQ(fec->uncorrectable_blocks, (std::vector<uint64_t>{3, 0, 1, 2, 0}));
  EXPECT_EQ(fec->corrected_bits, (std::vector<uint64_t>{1ull << 40}));
}

TEST(EthtoolParseTest, FecModesEmptyArraysAndMalformed) {
  EXPECT_EQ(FecModeName(49), "none");
  EXPECT_EQ(FecModeName(50), "rs");
  EXPECT_EQ(FecModeName(51), "baser");
  EXPECT_EQ(FecModeName(74), "llrs");
  EXPECT_EQ(FecModeName(0), "");

  Msg empty = GenlReply(kFecReply);  // no ACTIVE, stats with 0-length arrays (no get_fec_stats)
  nlattr* stats = nla_nest_start(empty.get(), 5);
  PutU64Array(empty.get(), 2, {});
  PutU64Array(empty.get(), 3, {});
  PutU64Array(empty.get(), 4, {});
  nla_nest_end(empty.get(), stats);
  auto fec = ParseFecReply(nlmsg_hdr(empty.get()));
  ASSERT_TRUE(fec) << fec.error().ToString();
  EXPECT_EQ(fec->active_mode, "");
  EXPECT_TRUE(fec->corrected_blocks.empty());
  EXPECT_TRUE(fec->uncorrectable_blocks.empty());
  EXPECT_TRUE(fec->corrected_bits.empty());

  Msg unknown = GenlReply(kFecReply);  // a mode bit newer than this build; no stats nest
  nla_put_u32(unknown.get(), 4, 99);
  auto mode_only = ParseFecReply(nlmsg_hdr(unknown.get()));
  ASSERT_TRUE(mode_only);
  EXPECT_EQ(mode_only->active_mode, "");

  Msg odd = GenlReply(kFecReply);
  stats = nla_nest_start(odd.get(), 5);
  const uint8_t twelve[12] = {};
  nla_put(odd.get(), 2, sizeof(twelve), twelve);
  nla_nest_end(odd.get(), stats);
  EXPECT_EQ(ParseFecReply(nlmsg_hdr(odd.get())).error().code(), StatusCode::kInvalidArgument);
}

TEST(EthtoolParseTest, LinkStateWithAndWithoutExtDownCount) {
  Msg with = GenlReply(kLinkstateReply);
  nla_put_u8(with.get(), 2, 1);    // LINK
  nla_put_u32(with.get(), 7, 42);  // EXT_DOWN_CNT (6.2+)
  auto up = ParseLinkStateReply(nlmsg_hdr(with.get()));
  ASSERT_TRUE(up) << up.error().ToString();
  EXPECT_EQ(up->link, std::optional<bool>(true));
  EXPECT_EQ(up->ext_down_count, std::optional<uint32_t>(42));
  EXPECT_FALSE(up->ext_state);

  Msg without = GenlReply(kLinkstateReply);
  nla_put_u8(without.get(), 2, 0);
  nla_put_u8(without.get(), 5, 4);  // EXT_STATE = NO_CABLE
  nla_put_u8(without.get(), 6, 1);  // EXT_SUBSTATE
  auto down = ParseLinkStateReply(nlmsg_hdr(without.get()));
  ASSERT_TRUE(down) << down.error().ToString();
  EXPECT_EQ(down->link, std::optional<bool>(false));
  EXPECT_FALSE(down->ext_down_count);
  EXPECT_EQ(down->ext_state, std::optional<uint8_t>(4));

  Msg unknown = GenlReply(kLinkstateReply);  // the driver cannot tell
  auto none = ParseLinkStateReply(nlmsg_hdr(unknown.get()));
  ASSERT_TRUE(none);
  EXPECT_FALSE(none->link);
}

// ---------------------------------------------------------------- STATS_GET (standard counters)

constexpr uint8_t kStatsReply = 33;  // ETHTOOL_MSG_STATS_GET_REPLY
// Reply attributes (UAPI linux/ethtool_netlink.h enum ETHTOOL_A_STATS_*, _GRP_*).
constexpr int kStatsGrp = 4, kGrpPad = 1, kGrpId = 2, kGrpSsId = 3, kGrpStat = 4, kGrpHistRx = 5,
              kGrpHistTx = 6, kHistBktLow = 7, kHistBktHi = 8, kHistVal = 9;

// A STATS_GET reply as K net/ethtool/stats.c stats_fill_reply() builds it: the request header
// echo (attribute 2 here), ETHTOOL_A_STATS_SRC (6.3+), then one ETHTOOL_A_STATS_GRP per group.
Msg StatsReply() {
  Msg msg(nlmsg_alloc(), &nlmsg_free);
  genlmsg_put(msg.get(), 1234, 5, 0x1d, 0, 0, kStatsReply, 1);
  nlattr* header = nla_nest_start(msg.get(), 2);
  nla_put_u32(msg.get(), 1, 3);
  nla_put_string(msg.get(), 2, "eth0");
  nla_nest_end(msg.get(), header);
  nla_put_u32(msg.get(), 5, 0);  // ETHTOOL_A_STATS_SRC = aggregate
  return msg;
}

// One group: GRP_ID, GRP_SS_ID (ETH_SS_STATS_ETH_PHY + id), then each counter in its own
// GRP_STAT nest holding one u64 whose type is the index, a zero-length GRP_PAD before each (as
// kernels without efficient unaligned access emit). `before_counters` adds attributes first.
void PutGroup(nl_msg* msg, uint32_t id, const std::vector<std::pair<int, uint64_t>>& counters,
              const std::function<void(nl_msg*)>& before_counters = nullptr) {
  nlattr* grp = nla_nest_start(msg, kStatsGrp);
  nla_put_u32(msg, kGrpId, id);
  nla_put_u32(msg, kGrpSsId, 17 + id);
  if (before_counters) before_counters(msg);
  for (auto [index, value] : counters) {
    PutPad(msg, kGrpPad);
    nlattr* stat = nla_nest_start(msg, kGrpStat);
    nla_put_u64(msg, index, value);
    nla_nest_end(msg, stat);
  }
  nla_nest_end(msg, grp);
}

// RMON histogram buckets, as stats_put_rmon_hist() emits them before the rmon counters.
void PutHistogram(nl_msg* msg, int type, uint32_t low, uint32_t high, uint64_t value) {
  nlattr* hist = nla_nest_start(msg, type);
  nla_put_u32(msg, kHistBktLow, low);
  nla_put_u32(msg, kHistBktHi, high);
  PutPad(msg, kGrpPad);
  nla_put_u64(msg, kHistVal, value);
  nla_nest_end(msg, hist);
}

std::vector<std::tuple<std::string, std::string, uint64_t>> Flatten(
    const std::vector<StandardStat>& stats) {
  std::vector<std::tuple<std::string, std::string, uint64_t>> out;
  for (const StandardStat& stat : stats) {
    out.emplace_back(std::string(stat.group), std::string(stat.name), stat.value);
  }
  return out;
}

TEST(EthtoolStandardStatsParseTest, AllFourGroupsWithPadsAndHistograms) {
  Msg msg = StatsReply();
  PutGroup(msg.get(), 0, {{0, 5}});
  PutGroup(msg.get(), 1,
           {{0, 1000}, {3, 2000}, {4, 7}, {6, 0xFFFF'FFFF'FFFFull}, {12, 1ull << 40}, {21, 9}});
  PutGroup(msg.get(), 2, {{0, 11}, {1, 12}, {2, 13}});
  PutGroup(msg.get(), 3, {{0, 21}, {1, 22}, {2, 23}, {3, 24}}, [](nl_msg* m) {
    PutHistogram(m, kGrpHistRx, 0, 64, 100);
    PutHistogram(m, kGrpHistRx, 65, 127, 200);
    PutHistogram(m, kGrpHistTx, 1519, 0, 300);
  });
  uint64_t skipped = 0;
  auto stats = ParseStandardStatsReply(nlmsg_hdr(msg.get()), &skipped);
  ASSERT_TRUE(stats) << stats.error().ToString();
  using T = std::tuple<std::string, std::string, uint64_t>;
  EXPECT_EQ(Flatten(*stats), (std::vector<T>{
                                 T{"eth-phy", "SymbolErrorDuringCarrier", 5},
                                 T{"eth-mac", "FramesTransmittedOK", 1000},
                                 T{"eth-mac", "FramesReceivedOK", 2000},
                                 T{"eth-mac", "FrameCheckSequenceErrors", 7},
                                 T{"eth-mac", "OctetsTransmittedOK", 0xFFFF'FFFF'FFFFull},
                                 T{"eth-mac", "OctetsReceivedOK", 1ull << 40},
                                 T{"eth-mac", "FrameTooLongErrors", 9},
                                 T{"eth-ctrl", "MACControlFramesTransmitted", 11},
                                 T{"eth-ctrl", "MACControlFramesReceived", 12},
                                 T{"eth-ctrl", "UnsupportedOpcodesReceived", 13},
                                 T{"rmon", "etherStatsUndersizePkts", 21},
                                 T{"rmon", "etherStatsOversizePkts", 22},
                                 T{"rmon", "etherStatsFragments", 23},
                                 T{"rmon", "etherStatsJabbers", 24},
                             }));
  EXPECT_EQ(skipped, 0u);
  // The views point at static storage: they outlive the message.
  const std::string_view first = (*stats)[0].name;
  msg.reset();
  EXPECT_EQ(first, "SymbolErrorDuringCarrier");
}

TEST(EthtoolStandardStatsParseTest, NameTablesMatchTheKernelStringSets) {
  // K net/ethtool/stats.c stats_eth_mac_names, indexed by enum ETHTOOL_A_STATS_ETH_MAC_*.
  const std::vector<std::string> mac = {"FramesTransmittedOK",
                                        "SingleCollisionFrames",
                                        "MultipleCollisionFrames",
                                        "FramesReceivedOK",
                                        "FrameCheckSequenceErrors",
                                        "AlignmentErrors",
                                        "OctetsTransmittedOK",
                                        "FramesWithDeferredXmissions",
                                        "LateCollisions",
                                        "FramesAbortedDueToXSColls",
                                        "FramesLostDueToIntMACXmitError",
                                        "CarrierSenseErrors",
                                        "OctetsReceivedOK",
                                        "FramesLostDueToIntMACRcvError",
                                        "MulticastFramesXmittedOK",
                                        "BroadcastFramesXmittedOK",
                                        "FramesWithExcessiveDeferral",
                                        "MulticastFramesReceivedOK",
                                        "BroadcastFramesReceivedOK",
                                        "InRangeLengthErrors",
                                        "OutOfRangeLengthField",
                                        "FrameTooLongErrors"};
  for (uint32_t i = 0; i < mac.size(); ++i) EXPECT_EQ(StandardStatName(1, i), mac[i]) << i;
  EXPECT_EQ(StandardStatName(1, 22), "");
  EXPECT_EQ(StandardStatName(0, 0), "SymbolErrorDuringCarrier");
  EXPECT_EQ(StandardStatName(0, 1), "");
  EXPECT_EQ(StandardStatName(2, 2), "UnsupportedOpcodesReceived");
  EXPECT_EQ(StandardStatName(2, 3), "");
  EXPECT_EQ(StandardStatName(3, 3), "etherStatsJabbers");
  EXPECT_EQ(StandardStatName(3, 4), "");
  EXPECT_EQ(StandardStatName(4, 0), "");  // "phydev" (6.16+) is not requested
  EXPECT_EQ(StandardStatsGroupName(0), "eth-phy");
  EXPECT_EQ(StandardStatsGroupName(3), "rmon");
  EXPECT_EQ(StandardStatsGroupName(4), "");
}

TEST(EthtoolStandardStatsParseTest, UnknownIndicesAndGroupsAreSkippedAndCounted) {
  Msg msg = StatsReply();
  PutGroup(msg.get(), 1, {{0, 1}, {22, 2}, {63, 3}, {21, 4}});  // 22, 63: a newer kernel's
  PutGroup(msg.get(), 4, {{0, 10}, {1, 11}});                   // "phydev" or later: no table
  PutGroup(msg.get(), 2, {});                                   // requested, driver fills none
  uint64_t skipped = 100;                                       // accumulates
  auto stats = ParseStandardStatsReply(nlmsg_hdr(msg.get()), &skipped);
  ASSERT_TRUE(stats) << stats.error().ToString();
  using T = std::tuple<std::string, std::string, uint64_t>;
  EXPECT_EQ(Flatten(*stats), (std::vector<T>{T{"eth-mac", "FramesTransmittedOK", 1},
                                             T{"eth-mac", "FrameTooLongErrors", 4}}));
  EXPECT_EQ(skipped, 104u);
  EXPECT_TRUE(ParseStandardStatsReply(nlmsg_hdr(msg.get())));  // the counter is optional

  Msg only_unknown = StatsReply();
  PutGroup(only_unknown.get(), 7, {{0, 1}});
  skipped = 0;
  auto none = ParseStandardStatsReply(nlmsg_hdr(only_unknown.get()), &skipped);
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().code(), StatusCode::kUnimplemented);
  EXPECT_NE(none.error().message().find("1 unknown"), std::string::npos) << none.error().ToString();
  EXPECT_EQ(skipped, 1u);
}

TEST(EthtoolStandardStatsParseTest, EmptyRepliesAreUnimplemented) {
  Msg no_groups = StatsReply();  // kernel < 5.13 never gets here; a reply without groups
  auto none = ParseStandardStatsReply(nlmsg_hdr(no_groups.get()));
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().code(), StatusCode::kUnimplemented);
  EXPECT_NE(none.error().message().find("no statistics groups"), std::string::npos);

  Msg empty_groups = StatsReply();  // what veth and virtio_net get: every group, no counter
  for (uint32_t id = 0; id < 4; ++id) PutGroup(empty_groups.get(), id, {});
  auto empty = ParseStandardStatsReply(nlmsg_hdr(empty_groups.get()));
  ASSERT_FALSE(empty);
  EXPECT_EQ(empty.error().code(), StatusCode::kUnimplemented);
  EXPECT_NE(empty.error().message().find("fills none"), std::string::npos);

  Msg bare(nlmsg_alloc(), &nlmsg_free);  // no attributes at all
  genlmsg_put(bare.get(), 1234, 5, 0x1d, 0, 0, kStatsReply, 1);
  EXPECT_EQ(ParseStandardStatsReply(nlmsg_hdr(bare.get())).error().code(),
            StatusCode::kUnimplemented);
}

TEST(EthtoolStandardStatsParseTest, MalformedRepliesAreErrorsNotCrashes) {
  auto code = [](const Msg& msg) {
    auto parsed = ParseStandardStatsReply(nlmsg_hdr(msg.get()));
    return parsed ? StatusCode::kOk : parsed.error().code();
  };
  Msg wrong = GenlReply(kFecReply);
  EXPECT_EQ(code(wrong), StatusCode::kInvalidArgument);

  // A u64 counter cut to 4 bytes.
  Msg short_counter = StatsReply();
  nlattr* grp = nla_nest_start(short_counter.get(), kStatsGrp);
  nla_put_u32(short_counter.get(), kGrpId, 1);
  nlattr* stat = nla_nest_start(short_counter.get(), kGrpStat);
  nla_put_u32(short_counter.get(), 4, 7);
  nla_nest_end(short_counter.get(), stat);
  nla_nest_end(short_counter.get(), grp);
  auto parsed = ParseStandardStatsReply(nlmsg_hdr(short_counter.get()));
  ASSERT_FALSE(parsed);
  EXPECT_EQ(parsed.error().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(parsed.error().message().find("counter 4 of group 1 has 4 bytes"), std::string::npos)
      << parsed.error().ToString();

  // Also in a group this build does not know: the reply is malformed either way.
  Msg short_unknown = StatsReply();
  grp = nla_nest_start(short_unknown.get(), kStatsGrp);
  nla_put_u32(short_unknown.get(), kGrpId, 9);
  stat = nla_nest_start(short_unknown.get(), kGrpStat);
  nla_put_u8(short_unknown.get(), 0, 1);
  nla_nest_end(short_unknown.get(), stat);
  nla_nest_end(short_unknown.get(), grp);
  EXPECT_EQ(code(short_unknown), StatusCode::kInvalidArgument);

  Msg no_id = StatsReply();
  PutGroup(no_id.get(), 1, {{0, 1}});
  grp = nla_nest_start(no_id.get(), kStatsGrp);
  stat = nla_nest_start(no_id.get(), kGrpStat);
  nla_put_u64(no_id.get(), 0, 1);
  nla_nest_end(no_id.get(), stat);
  nla_nest_end(no_id.get(), grp);
  EXPECT_EQ(code(no_id), StatusCode::kInvalidArgument);

  Msg short_id = StatsReply();
  grp = nla_nest_start(short_id.get(), kStatsGrp);
  nla_put_u16(short_id.get(), kGrpId, 1);
  nla_nest_end(short_id.get(), grp);
  EXPECT_EQ(code(short_id), StatusCode::kInvalidArgument);

  // The message cut at every length: malformed, or, where the cut falls between two whole
  // top-level attributes, a shorter answer (no group yet: kUnimplemented; after the first group:
  // its counters). Never a read past nlmsg_len: each copy is exactly that long, so valgrind would
  // flag one.
  Msg full = StatsReply();
  PutGroup(full.get(), 1, {{0, 1}, {3, 2}});
  PutGroup(full.get(), 3, {{0, 3}}, [](nl_msg* m) { PutHistogram(m, kGrpHistRx, 0, 64, 4); });
  const nlmsghdr* hdr = nlmsg_hdr(full.get());
  auto whole = ParseStandardStatsReply(hdr);
  ASSERT_TRUE(whole) << whole.error().ToString();
  ASSERT_EQ(whole->size(), 3u);
  std::map<StatusCode, int> outcomes;
  int shorter = 0;
  for (uint32_t cut = NLMSG_HDRLEN; cut < hdr->nlmsg_len; ++cut) {
    auto copy = std::make_unique<char[]>(cut);
    std::memcpy(copy.get(), hdr, cut);
    auto* truncated = reinterpret_cast<nlmsghdr*>(copy.get());
    truncated->nlmsg_len = cut;
    auto result = ParseStandardStatsReply(truncated);
    if (result) {
      ++shorter;
      EXPECT_EQ(Flatten(*result),
                Flatten(std::vector<StandardStat>(whole->begin(), whole->begin() + 2)))
          << cut;
    } else {
      ++outcomes[result.error().code()];
      EXPECT_TRUE(result.error().code() == StatusCode::kInvalidArgument ||
                  result.error().code() == StatusCode::kUnimplemented)
          << cut << ": " << result.error().ToString();
    }
  }
  EXPECT_EQ(shorter, 1) << "only the cut right after the eth-mac group";
  EXPECT_GT(outcomes[StatusCode::kInvalidArgument], 50);
}
TEST(ModuleEepromParseTest, DataIsReturnedAsSent) {
  constexpr uint8_t kModuleEepromReply = 32;  // ETHTOOL_MSG_MODULE_EEPROM_GET_REPLY
  std::vector<uint8_t> bytes(128);
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>(255 - i);
  {
    Msg msg = GenlReply(kModuleEepromReply);
    nla_put(msg.get(), 7, static_cast<int>(bytes.size()), bytes.data());  // _DATA
    auto data = ParseModuleEepromReply(nlmsg_hdr(msg.get()), 128);
    ASSERT_TRUE(data) << data.error().ToString();
    EXPECT_EQ(*data, bytes);
  }
  {  // a driver that read less than asked (odd length: the attribute is padded)
    Msg msg = GenlReply(kModuleEepromReply);
    nla_put(msg.get(), 7, 33, bytes.data());
    auto data = ParseModuleEepromReply(nlmsg_hdr(msg.get()), 128);
    ASSERT_TRUE(data) << data.error().ToString();
    EXPECT_EQ(*data, std::vector<uint8_t>(bytes.begin(), bytes.begin() + 33));
  }
  {  // nothing read
    Msg msg = GenlReply(kModuleEepromReply);
    nla_put(msg.get(), 7, 0, nullptr);
    auto data = ParseModuleEepromReply(nlmsg_hdr(msg.get()), 128);
    ASSERT_TRUE(data) << data.error().ToString();
    EXPECT_TRUE(data->empty());
  }
}

TEST(ModuleEepromParseTest, MalformedRepliesAreErrors) {
  std::vector<uint8_t> bytes(129, 0x11);
  Msg no_data = GenlReply(32);
  Msg too_long = GenlReply(32);
  nla_put(too_long.get(), 7, 65, bytes.data());
  Msg wrong_cmd = GenlReply(30);
  nla_put(wrong_cmd.get(), 7, 8, bytes.data());
  Msg short_msg(nlmsg_alloc_simple(0x1d, 0), &nlmsg_free);
  for (auto [name, msg] :
       {std::pair{"no data", no_data.get()}, std::pair{"too long", too_long.get()},
        std::pair{"wrong command", wrong_cmd.get()},
        std::pair{"no genl header", short_msg.get()}}) {
    auto data = ParseModuleEepromReply(nlmsg_hdr(msg), 64);
    ASSERT_FALSE(data) << name;
    EXPECT_EQ(data.error().code(), StatusCode::kInvalidArgument) << name;
  }
}

// NLMSG_ERROR as net/netlink/af_netlink.c netlink_ack() builds it.
Msg ErrorMessage(int error, bool capped, const char* extack) {
  uint16_t flags = 0;
  if (capped) flags |= NLM_F_CAPPED;
  if (extack != nullptr) flags |= NLM_F_ACK_TLVS;
  Msg msg(nlmsg_alloc_simple(NLMSG_ERROR, flags), &nlmsg_free);
  const uint8_t request_payload[6] = {1, 2, 3, 4, 5, 6};  // echoed unless capped
  nlmsgerr err{};
  err.error = error;
  err.msg.nlmsg_len = NLMSG_LENGTH(sizeof(request_payload));
  err.msg.nlmsg_type = 0x1d;
  nlmsg_append(msg.get(), &err, sizeof(err), NLMSG_ALIGNTO);
  if (!capped)
    nlmsg_append(msg.get(), const_cast<uint8_t*>(request_payload), sizeof(request_payload),
                 NLMSG_ALIGNTO);
  if (extack != nullptr) {
    nla_put_string(msg.get(), NLMSGERR_ATTR_MSG, extack);
    nla_put_u32(msg.get(), NLMSGERR_ATTR_OFFS, 20);
  }
  return msg;
}

TEST(NetlinkParseTest, ErrorWithExtack) {
  for (bool capped : {true, false}) {
    Msg msg = ErrorMessage(-EINVAL, capped, "ETHTOOL_A_HEADER_FLAGS: reserved bit set");
    auto error = ParseNetlinkError(nlmsg_hdr(msg.get()));
    ASSERT_TRUE(error) << capped;
    EXPECT_EQ(error->error, -EINVAL);
    EXPECT_EQ(error->extack, "ETHTOOL_A_HEADER_FLAGS: reserved bit set") << capped;
  }
  Msg plain = ErrorMessage(-EOPNOTSUPP, true, nullptr);
  auto error = ParseNetlinkError(nlmsg_hdr(plain.get()));
  ASSERT_TRUE(error);
  EXPECT_EQ(error->error, -EOPNOTSUPP);
  EXPECT_EQ(error->extack, "");

  Msg ack = ErrorMessage(0, true, nullptr);
  EXPECT_EQ(ParseNetlinkError(nlmsg_hdr(ack.get()))->error, 0);

  Msg not_error = DcbReply(DCB_CMD_IEEE_GET);
  EXPECT_FALSE(ParseNetlinkError(nlmsg_hdr(not_error.get())));
}

TEST(NetlinkParseTest, GenlFamilyId) {
  Msg msg(nlmsg_alloc(), &nlmsg_free);
  genlmsg_put(msg.get(), 0, 1, GENL_ID_CTRL, 0, 0, CTRL_CMD_NEWFAMILY, 2);
  nla_put_string(msg.get(), CTRL_ATTR_FAMILY_NAME, "ethtool");
  nla_put_u16(msg.get(), CTRL_ATTR_FAMILY_ID, 0x1d);
  auto id = ParseGenlFamilyId(nlmsg_hdr(msg.get()));
  ASSERT_TRUE(id) << id.error().ToString();
  EXPECT_EQ(*id, 0x1d);

  Msg missing(nlmsg_alloc(), &nlmsg_free);
  genlmsg_put(missing.get(), 0, 1, GENL_ID_CTRL, 0, 0, CTRL_CMD_NEWFAMILY, 2);
  EXPECT_FALSE(ParseGenlFamilyId(nlmsg_hdr(missing.get())));
}
}  // namespace
}  // namespace fabricwatch::sys

namespace fabricwatch::sys {
namespace {

constexpr uint8_t kLinkmodesReply = 4, kLinkinfoReply = 2;

// ETHTOOL_A_LINKMODES_OURS as a compact bitset of 125 bits (K net/ethtool/bitset.c).
void PutCompactOurs(nl_msg* msg, const std::vector<uint32_t>& value,
                    const std::optional<std::vector<uint32_t>>& mask, uint32_t size = 125) {
  nlattr* ours = nla_nest_start(msg, 3);
  if (!mask) nla_put_flag(msg, 1);  // NOMASK
  nla_put_u32(msg, 2, size);
  nla_put(msg, 4, static_cast<int>(value.size() * 4), value.data());
  if (mask) nla_put(msg, 5, static_cast<int>(mask->size() * 4), mask->data());
  nla_nest_end(msg, ours);
}

// One ETHTOOL_A_BITSET_BITS_BIT of a verbose bitset.
struct VerboseBit {
  uint32_t index;
  std::string name;
  bool value;
};
void PutVerboseOurs(nl_msg* msg, const std::vector<VerboseBit>& bits, bool nomask) {
  nlattr* ours = nla_nest_start(msg, 3);
  if (nomask) nla_put_flag(msg, 1);
  nla_put_u32(msg, 2, 125);
  nlattr* list = nla_nest_start(msg, 3);
  for (const VerboseBit& bit : bits) {
    nlattr* one = nla_nest_start(msg, 1);
    nla_put_u32(msg, 1, bit.index);
    if (!bit.name.empty()) nla_put_string(msg, 2, bit.name.c_str());
    if (bit.value) nla_put_flag(msg, 3);
    nla_nest_end(msg, one);
  }
  nla_nest_end(msg, list);
  nla_nest_end(msg, ours);
}

void PutLinkmodesScalars(nl_msg* msg, uint32_t speed, std::optional<uint32_t> lanes, uint8_t duplex,
                         uint8_t autoneg) {
  nla_put_u8(msg, 2, autoneg);
  nla_put_u32(msg, 5, speed);
  nla_put_u8(msg, 6, duplex);
  if (lanes) nla_put_u32(msg, 9, *lanes);
}

TEST(LinkModesParseTest, CompactBitsetWithMask) {
  Msg msg = GenlReply(kLinkmodesReply);
  // supported: 100000baseCR4 (38), 200000baseCR4 (66), 400000baseCR4 (89), Autoneg (6), FIBRE
  // (10), Pause (13); advertised: 100000baseCR4 and 200000baseCR4, Autoneg.
  const std::vector<uint32_t> mask = {(1u << 6) | (1u << 10) | (1u << 13), 1u << (38 - 32),
                                      (1u << (66 - 64)) | (1u << (89 - 64)), 0};
  const std::vector<uint32_t> value = {1u << 6, 1u << (38 - 32), 1u << (66 - 64), 0};
  PutCompactOurs(msg.get(), value, mask);
  PutLinkmodesScalars(msg.get(), 200000, 4, DUPLEX_FULL, AUTONEG_ENABLE);
  auto settings = ParseLinkModesReply(nlmsg_hdr(msg.get()));
  ASSERT_TRUE(settings) << settings.error().ToString();
  EXPECT_EQ(settings->speed_mbps, std::optional<uint32_t>(200000));
  EXPECT_EQ(settings->lanes, std::optional<uint32_t>(4));
  EXPECT_EQ(settings->duplex, "full");
  EXPECT_EQ(settings->autoneg, std::optional<bool>(true));
  EXPECT_EQ(
      settings->supported_modes,
      (std::vector<std::string>{"100000baseCR4/Full", "200000baseCR4/Full", "400000baseCR4/Full"}));
  EXPECT_EQ(settings->advertised_modes,
            (std::vector<std::string>{"100000baseCR4/Full", "200000baseCR4/Full"}));
  EXPECT_EQ(settings->max_supported_speed_mbps, std::optional<uint32_t>(400000));
  EXPECT_EQ(settings->max_advertised_speed_mbps, std::optional<uint32_t>(200000));
  EXPECT_EQ(settings->port, "");
  EXPECT_FALSE(settings->link_detected);
}

TEST(LinkModesParseTest, VerboseBitsetWithMaskAndNewerKernelBits) {
  Msg msg = GenlReply(kLinkmodesReply);
  PutVerboseOurs(msg.get(),
                 {{6, "Autoneg", true},
                  {31, "25000baseCR/Full", true},
                  {33, "25000baseSR/Full", false},
                  {52, "50000baseKR/Full", false},
                  {140, "3200000baseCR16/Full", false},  // a kernel newer than this build
                  {141, "", true}},                      // no name: "BIT141"
                 /*nomask=*/false);
  PutLinkmodesScalars(msg.get(), 25000, std::nullopt, DUPLEX_FULL, AUTONEG_DISABLE);
  auto settings = ParseLinkModesReply(nlmsg_hdr(msg.get()));
  ASSERT_TRUE(settings) << settings.error().ToString();
  EXPECT_FALSE(settings->lanes);  // kernel < 5.11
  EXPECT_EQ(settings->autoneg, std::optional<bool>(false));
  EXPECT_EQ(settings->supported_modes,
            (std::vector<std::string>{"25000baseCR/Full", "25000baseSR/Full", "50000baseKR/Full",
                                      "3200000baseCR16/Full", "BIT141"}));
  EXPECT_EQ(settings->advertised_modes, (std::vector<std::string>{"25000baseCR/Full", "BIT141"}));
  EXPECT_EQ(settings->max_supported_speed_mbps, std::optional<uint32_t>(3200000));
  EXPECT_EQ(settings->max_advertised_speed_mbps, std::optional<uint32_t>(25000));
}

TEST(LinkModesParseTest, NomaskBitsetsHoldTheValueOnly) {
  Msg verbose = GenlReply(kLinkmodesReply);
  PutVerboseOurs(verbose.get(), {{38, "100000baseCR4/Full", false}}, /*nomask=*/true);
  auto v = ParseLinkModesReply(nlmsg_hdr(verbose.get()));
  ASSERT_TRUE(v) << v.error().ToString();
  EXPECT_TRUE(v->supported_modes.empty());
  EXPECT_FALSE(v->max_supported_speed_mbps);
  EXPECT_EQ(v->advertised_modes, (std::vector<std::string>{"100000baseCR4/Full"}));

  Msg compact = GenlReply(kLinkmodesReply);
  PutCompactOurs(compact.get(), {0, 1u << (38 - 32), 0, 0}, std::nullopt);
  auto c = ParseLinkModesReply(nlmsg_hdr(compact.get()));
  ASSERT_TRUE(c) << c.error().ToString();
  EXPECT_TRUE(c->supported_modes.empty());
  EXPECT_EQ(c->max_advertised_speed_mbps, std::optional<uint32_t>(100000));
}

TEST(LinkModesParseTest, VethShapeUnknownSpeedAndNoModes) {
  // veth: 10000 Mb/s full duplex, autoneg off, an all-zero mask.
  Msg veth = GenlReply(kLinkmodesReply);
  PutCompactOurs(veth.get(), {0, 0, 0, 0}, std::vector<uint32_t>{0, 0, 0, 0});
  PutLinkmodesScalars(veth.get(), 10000, std::nullopt, DUPLEX_FULL, AUTONEG_DISABLE);
  auto settings = ParseLinkModesReply(nlmsg_hdr(veth.get()));
  ASSERT_TRUE(settings);
  EXPECT_EQ(settings->speed_mbps, std::optional<uint32_t>(10000));
  EXPECT_TRUE(settings->supported_modes.empty());
  EXPECT_FALSE(settings->max_supported_speed_mbps);

  for (uint32_t unknown : {0u, 0xffffu, 0xffffffffu}) {
    Msg down = GenlReply(kLinkmodesReply);
    PutLinkmodesScalars(down.get(), unknown, 0, DUPLEX_UNKNOWN, AUTONEG_ENABLE);
    auto d = ParseLinkModesReply(nlmsg_hdr(down.get()));
    ASSERT_TRUE(d);
    EXPECT_FALSE(d->speed_mbps) << unknown;
    EXPECT_FALSE(d->lanes);  // 0 lanes: not reported
    EXPECT_EQ(d->duplex, "");
  }
}

TEST(LinkModesParseTest, MalformedRepliesAreErrorsNotCrashes) {
  std::vector<std::pair<std::string, Msg>> cases;
  {
    Msg m = GenlReply(kLinkmodesReply);
    nla_put_u8(m.get(), 5, 1);  // SPEED as u8
    cases.emplace_back("short speed", std::move(m));
  }
  {
    Msg m = GenlReply(kLinkmodesReply);
    nlattr* ours = nla_nest_start(m.get(), 3);
    nla_put_u32(m.get(), 4, 0);  // VALUE without SIZE
    nla_nest_end(m.get(), ours);
    cases.emplace_back("no size", std::move(m));
  }
  {
    Msg m = GenlReply(kLinkmodesReply);
    PutCompactOurs(m.get(), {1, 2}, std::vector<uint32_t>{1, 2});  // 2 words for 125 bits
    cases.emplace_back("short words", std::move(m));
  }
  {
    Msg m = GenlReply(kLinkmodesReply);
    PutCompactOurs(m.get(), {1}, std::vector<uint32_t>{1}, 0x7fffffff);
    cases.emplace_back("huge size", std::move(m));
  }
  {
    Msg m = GenlReply(kLinkmodesReply);
    nlattr* ours = nla_nest_start(m.get(), 3);
    nla_put_u32(m.get(), 2, 125);
    nlattr* list = nla_nest_start(m.get(), 3);
    nlattr* one = nla_nest_start(m.get(), 1);
    nla_put_string(m.get(), 2, "1000baseT/Full");  // no INDEX
    nla_nest_end(m.get(), one);
    nla_nest_end(m.get(), list);
    nla_nest_end(m.get(), ours);
    cases.emplace_back("bit without index", std::move(m));
  }
  {
    Msg m = GenlReply(kLinkinfoReply);  // the wrong command
    cases.emplace_back("wrong command", std::move(m));
  }
  for (auto& [name, msg] : cases) {
    auto parsed = ParseLinkModesReply(nlmsg_hdr(msg.get()));
    ASSERT_FALSE(parsed) << name;
    EXPECT_EQ(parsed.error().code(), StatusCode::kInvalidArgument) << name;
  }
}

TEST(LinkInfoParseTest, PortNamesAsEthtoolPrintsThem) {
  LinkSettings settings;
  Msg absent = GenlReply(kLinkinfoReply);
  ASSERT_TRUE(ParseLinkInfoReply(nlmsg_hdr(absent.get()), settings).ok());
  EXPECT_EQ(settings.port, "");
  for (auto [port, name] : {std::pair<uint8_t, std::string_view>{PORT_DA, "Direct Attach Copper"},
                            {PORT_FIBRE, "FIBRE"},
                            {PORT_TP, "Twisted Pair"},
                            {PORT_OTHER, "Other"},
                            {0x33, ""}}) {
    Msg msg = GenlReply(kLinkinfoReply);
    nla_put_u8(msg.get(), 2, port);
    nla_put_u8(msg.get(), 3, 0);  // PHYADDR
    ASSERT_TRUE(ParseLinkInfoReply(nlmsg_hdr(msg.get()), settings).ok());
    EXPECT_EQ(settings.port, name);
  }
  Msg wrong = GenlReply(kLinkmodesReply);
  EXPECT_EQ(ParseLinkInfoReply(nlmsg_hdr(wrong.get()), settings).code(),
            StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace fabricwatch::sys
