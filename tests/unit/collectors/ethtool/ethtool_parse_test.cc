// Tests of the pure ethtool layer: `ethtool -S` text parsing (sys/ethtool_replay_parse.h) and the
// normalisation of vendor statistic names (ethtool_names.h).
//
// Fixtures: tests/fixtures/ethtool/<scenario>/<netdev>/statistics are our own, written in the
// layouts of real drivers (mlx5, bnxt_en with tabs and "[N]: " ring prefixes, ice ".nic" names,
// i40e with comment lines and both name generations, igb, ixgbe, tg3); the same directories are
// replay roots (--path.ethtool) for the collector's golden expositions. The external corpus of
// real captures (../shared/fixtures/external/ethtool-S, not committed) is parsed when present.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <filesystem>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "base/metric_sink.h"
#include "collectors/ethtool/ethtool_names.h"
#include "collectors/ethtool_source/ethtool_replay_parse.h"
#include "tests/testing/test_paths.h"

namespace fabricwatch::ethtool {
namespace {

using sys::ParsedEthtoolStats;
using sys::ParseEthtoolStatsText;
using sys::ParseEthtoolStatsTextInto;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

std::vector<std::string> SplitLines(std::string_view text) {
  std::vector<std::string> lines;
  std::string line;
  std::istringstream in{std::string(text)};
  while (std::getline(in, line)) lines.push_back(line);
  return lines;
}

// Counts the stat lines of `ethtool -S` text without the parser under test: comment lines
// (provenance "# source:" lines and upstream comments) are dropped, then every line that looks
// like "[N]: name: value" or "name: value" counts.
size_t CountStatLines(std::string_view text) {
  static const std::regex kComment(R"(^\s*#)");
  static const std::regex kStat(R"(^\s*(\[\d+\]:\s*)?[^:]+:\s*-?\d+\s*$)");
  size_t count = 0;
  for (const std::string& line : SplitLines(text)) {
    if (std::regex_search(line, kComment)) continue;
    if (std::regex_match(line, kStat)) ++count;
  }
  return count;
}

ParsedEthtoolStats MustParse(std::string_view text) {
  auto parsed = ParseEthtoolStatsText(text, "test");
  EXPECT_TRUE(parsed.has_value()) << (parsed ? "" : parsed.error().ToString());
  return parsed ? *parsed : ParsedEthtoolStats{};
}

std::vector<std::pair<std::string, uint64_t>> Pairs(const ParsedEthtoolStats& parsed) {
  std::vector<std::pair<std::string, uint64_t>> pairs;
  for (const sys::EthtoolStat& stat : parsed.stats) pairs.emplace_back(stat.name, stat.value);
  return pairs;
}

using P = std::pair<std::string, uint64_t>;

// ---------------------------------------------------------------------------------- parsing

TEST(ParseEthtoolStatsText, HeaderIndentationAndOrder) {
  const ParsedEthtoolStats parsed = MustParse(
      "NIC statistics:\n"
      "     rx_packets: 12\n"
      "\ttx_packets:\t34\n"
      "rx_bytes: 18446744073709551615\n"
      "     tx_bytes: 0\n");
  EXPECT_THAT(Pairs(parsed), ElementsAre(P{"rx_packets", 12}, P{"tx_packets", 34},
                                         P{"rx_bytes", UINT64_MAX}, P{"tx_bytes", 0}));
  EXPECT_THAT(parsed.problems, IsEmpty());
  EXPECT_EQ(parsed.malformed_lines, 0u);
}

TEST(ParseEthtoolStatsText, BnxtRingPrefixStaysInTheName) {
  // bnxt_get_strings: sprintf(buf, "[%d]: %s", i, ...); the value follows the last colon.
  const ParsedEthtoolStats parsed = MustParse(
      "NIC statistics:\n"
      "\t\t[0]: rx_ucast_packets: 276347403\n"
      "\t\t[1]: rx_ucast_packets: 5\n"
      "     [12]: tpa_aborts: 0\n"
      "\t\trx_total_discard_pkts: 7\n");
  EXPECT_THAT(Pairs(parsed),
              ElementsAre(P{"[0]: rx_ucast_packets", 276347403}, P{"[1]: rx_ucast_packets", 5},
                          P{"[12]: tpa_aborts", 0}, P{"rx_total_discard_pkts", 7}));
}

TEST(ParseEthtoolStatsText, NamesWithDotsDashesCaseAndSpaces) {
  const ParsedEthtoolStats parsed = MustParse(
      "     rx_priority_0_xon.nic: 1\n"
      "     port.VF_admin_queue_requests: 2\n"
      "     rx-0.packets: 3\n"
      "     tx_queue_127_bytes: 4\n"
      "     tx_pause_storm_warning_events : 5\n"
      "     some driver stat: 6\n");
  EXPECT_THAT(Pairs(parsed),
              ElementsAre(P{"rx_priority_0_xon.nic", 1}, P{"port.VF_admin_queue_requests", 2},
                          P{"rx-0.packets", 3}, P{"tx_queue_127_bytes", 4},
                          P{"tx_pause_storm_warning_events", 5}, P{"some driver stat", 6}));
}

TEST(ParseEthtoolStatsText, SkipsBlankLinesCommentsAndHeaders) {
  const ParsedEthtoolStats parsed = MustParse(
      "# source: captured somewhere\r\n"
      "# tx_bytes: 12 was removed on purpose\r\n"
      "NIC statistics:\r\n"
      "\r\n"
      "     rx_packets: 1\r\n"
      "   \t \r\n"
      "     # a comment in the middle: 3\r\n"
      "Standard stats for eth0:\r\n"
      "eth-phy-SymbolErrorDuringCarrier: 2\r\n"
      "     tx_packets: 3");  // no newline at the end
  EXPECT_THAT(Pairs(parsed),
              ElementsAre(P{"rx_packets", 1}, P{"eth-phy-SymbolErrorDuringCarrier", 2},
                          P{"tx_packets", 3}));
  EXPECT_THAT(parsed.problems, IsEmpty());
}

TEST(ParseEthtoolStatsText, EmptyTextAndHeaderAloneHaveNoStats) {
  for (std::string_view text : {"", "\n\n", "NIC statistics:\n", "# only a comment\n"}) {
    const ParsedEthtoolStats parsed = MustParse(text);
    EXPECT_THAT(parsed.stats, IsEmpty()) << text;
    EXPECT_THAT(parsed.problems, IsEmpty()) << text;
  }
}

TEST(ParseEthtoolStatsText, MalformedLinesAreSkippedAndReported) {
  struct Case {
    std::string line;
    std::string reason;
  };
  const Case cases[] = {
      {"     rx_packets:", "has no value"},
      {"     rx_packets:   ", "has no value"},
      {"     rx_packets: abc", "not an unsigned decimal integer: \"abc\""},
      {"     rx_packets: -1", "not an unsigned decimal integer: \"-1\""},
      {"     rx_packets: +1", "not an unsigned decimal integer"},
      {"     rx_packets: 0x10", "not an unsigned decimal integer: \"0x10\""},
      {"     rx_packets: 1.5", "not an unsigned decimal integer"},
      {"     rx_packets: 12 34", "not an unsigned decimal integer: \"12 34\""},
      {"     rx_packets: 18446744073709551616", "value out of range"},
      {"     no colon at all 12", "not a statistic"},
      {"     : 5", "without a name"},
  };
  for (const Case& c : cases) {
    const std::string text = "NIC statistics:\n     good_before: 1\n" + c.line +
                             "\n     good_after: 2\n";
    auto parsed = ParseEthtoolStatsText(text, "dir/eth9/statistics");
    ASSERT_TRUE(parsed.has_value()) << c.line;
    EXPECT_THAT(Pairs(*parsed), ElementsAre(P{"good_before", 1}, P{"good_after", 2})) << c.line;
    EXPECT_EQ(parsed->malformed_lines, 1u) << c.line;
    ASSERT_EQ(parsed->problems.size(), 1u) << c.line;
    EXPECT_EQ(parsed->problems[0].code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(parsed->problems[0].message(), HasSubstr("dir/eth9/statistics:3: ")) << c.line;
    EXPECT_THAT(parsed->problems[0].message(), HasSubstr(c.reason)) << c.line;
  }
}

TEST(ParseEthtoolStatsText, NothingButGarbageIsAnError) {
  auto parsed = ParseEthtoolStatsText("<html>\nnot found\n", "dir/eth0/statistics");
  ASSERT_FALSE(parsed.has_value());
  EXPECT_EQ(parsed.error().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(parsed.error().message(), HasSubstr("dir/eth0/statistics"));
  EXPECT_THAT(parsed.error().message(), HasSubstr("not ethtool -S output"));
}

TEST(ParseEthtoolStatsText, BinaryGarbageIsQuotedPrintably) {
  const std::string text = "     rx: 1\n\x01\x02\xff: zz\n";
  const ParsedEthtoolStats parsed = MustParse(text);
  ASSERT_EQ(parsed.problems.size(), 1u);
  EXPECT_THAT(parsed.problems[0].message(), HasSubstr("\\x01\\x02\\xff"));
}

TEST(ParseEthtoolStatsText, ProblemDetailsAreCappedButCountedExactly) {
  std::string text = "NIC statistics:\n     ok: 1\n";
  for (int i = 0; i < 200; ++i) text += "     bad_" + std::to_string(i) + ": x\n";
  const ParsedEthtoolStats parsed = MustParse(text);
  EXPECT_EQ(parsed.stats.size(), 1u);
  EXPECT_EQ(parsed.malformed_lines, 200u);
  EXPECT_EQ(parsed.problems.size(), ParsedEthtoolStats::kMaxProblems);
}

TEST(ParseEthtoolStatsText, DuplicateNamesAreKept) {
  const ParsedEthtoolStats parsed = MustParse("     a: 1\n     a: 2\n");
  EXPECT_THAT(Pairs(parsed), ElementsAre(P{"a", 1}, P{"a", 2}));
}

// ------------------------------------------------------------------------- normalisation

struct Expected {
  std::string name;  // vendor statistic
  std::string metric;
  std::vector<std::pair<std::string, std::string>> labels;  // after netdev
  double scale = 1;
};

std::vector<std::pair<std::string, std::string>> ExtraLabels(const NormalizedStat& stat) {
  std::vector<std::pair<std::string, std::string>> labels;
  for (size_t i = 0; i < stat.n_extra; ++i) {
    labels.emplace_back(std::string(stat.extra[i].first), std::string(stat.extra[i].second));
  }
  return labels;
}

// Written from docs/reference.md §4.1-4.3 and the driver tables, independently of kPatterns.
const std::vector<Expected>& ExpectedMappings() {
  static const std::vector<Expected> kExpected = {
      // mlx5 PFC
      {"rx_prio0_pause", "fabric_pfc_pause_frames_total", {{"priority", "0"}, {"direction", "rx"}}},
      {"tx_prio7_pause", "fabric_pfc_pause_frames_total", {{"priority", "7"}, {"direction", "tx"}}},
      {"rx_prio3_pause_duration", "fabric_pfc_pause_duration_seconds_total",
       {{"priority", "3"}, {"direction", "rx"}}, 1e-6},
      {"tx_prio5_pause_duration", "fabric_pfc_pause_duration_seconds_total",
       {{"priority", "5"}, {"direction", "tx"}}, 1e-6},
      {"rx_prio3_pause_transition", "fabric_pfc_pause_transitions_total",
       {{"priority", "3"}, {"direction", "rx"}}},
      // mlx5 per-priority traffic, drops, ECN
      {"rx_prio2_bytes", "fabric_ethtool_priority_bytes_total",
       {{"priority", "2"}, {"direction", "rx"}}},
      {"tx_prio2_bytes", "fabric_ethtool_priority_bytes_total",
       {{"priority", "2"}, {"direction", "tx"}}},
      {"rx_prio6_packets", "fabric_ethtool_priority_packets_total",
       {{"priority", "6"}, {"direction", "rx"}}},
      {"tx_prio0_packets", "fabric_ethtool_priority_packets_total",
       {{"priority", "0"}, {"direction", "tx"}}},
      {"rx_prio4_discards", "fabric_ethtool_priority_receive_discards_total", {{"priority", "4"}}},
      {"rx_prio3_buf_discard", "fabric_ethtool_priority_receive_buffer_discards_total",
       {{"priority", "3"}}},
      {"rx_prio3_cong_discard", "fabric_ethtool_priority_receive_congestion_discards_total",
       {{"priority", "3"}}},
      {"rx_prio1_marked", "fabric_ethtool_priority_ecn_marked_packets_total", {{"priority", "1"}}},
      // mlx5 global pause
      {"rx_global_pause", "fabric_ethtool_global_pause_frames_total", {{"direction", "rx"}}},
      {"tx_global_pause", "fabric_ethtool_global_pause_frames_total", {{"direction", "tx"}}},
      {"rx_global_pause_duration", "fabric_ethtool_global_pause_duration_seconds_total",
       {{"direction", "rx"}}, 1e-6},
      {"tx_global_pause_duration", "fabric_ethtool_global_pause_duration_seconds_total",
       {{"direction", "tx"}}, 1e-6},
      {"rx_global_pause_transition", "fabric_ethtool_global_pause_transitions_total",
       {{"direction", "rx"}}},
      // mlx5 storms, discards, buffers
      {"tx_pause_storm_warning_events", "fabric_ethtool_pause_storm_events_total",
       {{"severity", "warning"}}},
      {"tx_pause_storm_error_events", "fabric_ethtool_pause_storm_events_total",
       {{"severity", "error"}}},
      {"rx_discards_phy", "fabric_ethtool_port_discards_total", {{"direction", "rx"}}},
      {"tx_discards_phy", "fabric_ethtool_port_discards_total", {{"direction", "tx"}}},
      {"rx_out_of_buffer", "fabric_ethtool_out_of_buffer_drops_total", {}},
      {"rx_buffer_passed_thres_phy", "fabric_ethtool_receive_buffer_threshold_events_total", {}},
      // mlx5 PHY / FEC / module
      {"rx_bits_phy", "fabric_ethtool_phy_bit_count_total", {}},
      {"rx_corrected_bits_phy", "fabric_ethtool_phy_corrected_bit_errors_total", {}},
      {"rx_pcs_symbol_err_phy", "fabric_ethtool_phy_pcs_symbol_errors_total", {}},
      {"rx_symbol_err_phy", "fabric_ethtool_phy_symbol_errors_total", {}},
      {"rx_err_lane_0_phy", "fabric_ethtool_phy_lane_corrected_bit_errors_total", {{"lane", "0"}}},
      {"rx_err_lane_3_phy", "fabric_ethtool_phy_lane_corrected_bit_errors_total", {{"lane", "3"}}},
      {"rx_crc_errors_phy", "fabric_ethtool_crc_errors_total", {}},
      {"link_down_events_phy", "fabric_ethtool_link_down_events_total", {}},
      {"module_unplug", "fabric_ethtool_module_events_total", {{"event", "unplug"}}},
      {"module_bus_stuck", "fabric_ethtool_module_events_total", {{"event", "bus_stuck"}}},
      {"module_high_temp", "fabric_ethtool_module_events_total", {{"event", "high_temp"}}},
      {"module_bad_shorted", "fabric_ethtool_module_events_total", {{"event", "bad_shorted"}}},
      // bnxt_en
      {"rx_pfc_ena_frames_pri3", "fabric_pfc_pause_frames_total",
       {{"priority", "3"}, {"direction", "rx"}}},
      {"tx_pfc_ena_frames_pri0", "fabric_pfc_pause_frames_total",
       {{"priority", "0"}, {"direction", "tx"}}},
      {"pfc_pri3_rx_duration_us", "fabric_pfc_pause_duration_seconds_total",
       {{"priority", "3"}, {"direction", "rx"}}, 1e-6},
      {"pfc_pri7_tx_duration_us", "fabric_pfc_pause_duration_seconds_total",
       {{"priority", "7"}, {"direction", "tx"}}, 1e-6},
      {"pfc_pri3_rx_transitions", "fabric_pfc_pause_transitions_total",
       {{"priority", "3"}, {"direction", "rx"}}},
      {"pfc_pri1_tx_transitions", "fabric_pfc_pause_transitions_total",
       {{"priority", "1"}, {"direction", "tx"}}},
      {"rx_pause_frames", "fabric_ethtool_global_pause_frames_total", {{"direction", "rx"}}},
      {"tx_pause_frames", "fabric_ethtool_global_pause_frames_total", {{"direction", "tx"}}},
      {"continuous_pause_events", "fabric_ethtool_continuous_pause_events_total",
       {{"traffic", "all"}}},
      {"continuous_roce_pause_events", "fabric_ethtool_continuous_pause_events_total",
       {{"traffic", "roce"}}},
      {"resume_pause_events", "fabric_ethtool_continuous_pause_resumes_total",
       {{"traffic", "all"}}},
      {"resume_roce_pause_events", "fabric_ethtool_continuous_pause_resumes_total",
       {{"traffic", "roce"}}},
      {"rx_buffer_passed_threshold", "fabric_ethtool_receive_buffer_threshold_events_total", {}},
      {"rx_bits", "fabric_ethtool_phy_bit_count_total", {}},
      {"rx_corrected_bits", "fabric_ethtool_phy_corrected_bit_errors_total", {}},
      {"rx_pcs_symbol_err", "fabric_ethtool_phy_pcs_symbol_errors_total", {}},
      {"rx_fcs_err_frames", "fabric_ethtool_crc_errors_total", {}},
      {"link_down_events", "fabric_ethtool_link_down_events_total", {}},
      // ice
      {"rx_priority_3_xoff.nic", "fabric_pfc_pause_frames_total",
       {{"priority", "3"}, {"direction", "rx"}}},
      {"tx_priority_6_xoff.nic", "fabric_pfc_pause_frames_total",
       {{"priority", "6"}, {"direction", "tx"}}},
      {"rx_priority_3_xon.nic", "fabric_pfc_xon_frames_total",
       {{"priority", "3"}, {"direction", "rx"}}},
      {"tx_priority_0_xon.nic", "fabric_pfc_xon_frames_total",
       {{"priority", "0"}, {"direction", "tx"}}},
      {"link_xoff_rx.nic", "fabric_ethtool_global_pause_frames_total", {{"direction", "rx"}}},
      {"link_xoff_tx.nic", "fabric_ethtool_global_pause_frames_total", {{"direction", "tx"}}},
      {"link_xon_rx.nic", "fabric_ethtool_global_xon_frames_total", {{"direction", "rx"}}},
      {"link_xon_tx.nic", "fabric_ethtool_global_xon_frames_total", {{"direction", "tx"}}},
      {"rx_crc_errors.nic", "fabric_ethtool_crc_errors_total", {}},
      // i40e, both name generations
      {"port.rx_priority_2_xoff_rx", "fabric_pfc_pause_frames_total",
       {{"priority", "2"}, {"direction", "rx"}}},
      {"port.tx_priority_2_xoff_tx", "fabric_pfc_pause_frames_total",
       {{"priority", "2"}, {"direction", "tx"}}},
      {"port.rx_priority_2_xon_rx", "fabric_pfc_xon_frames_total",
       {{"priority", "2"}, {"direction", "rx"}}},
      {"port.tx_priority_2_xon_tx", "fabric_pfc_xon_frames_total",
       {{"priority", "2"}, {"direction", "tx"}}},
      {"port.rx_priority_5_xoff", "fabric_pfc_pause_frames_total",
       {{"priority", "5"}, {"direction", "rx"}}},
      {"port.tx_priority_5_xoff", "fabric_pfc_pause_frames_total",
       {{"priority", "5"}, {"direction", "tx"}}},
      {"port.rx_priority_5_xon", "fabric_pfc_xon_frames_total",
       {{"priority", "5"}, {"direction", "rx"}}},
      {"port.tx_priority_5_xon", "fabric_pfc_xon_frames_total",
       {{"priority", "5"}, {"direction", "tx"}}},
      {"port.link_xoff_rx", "fabric_ethtool_global_pause_frames_total", {{"direction", "rx"}}},
      {"port.link_xoff_tx", "fabric_ethtool_global_pause_frames_total", {{"direction", "tx"}}},
      {"port.link_xon_rx", "fabric_ethtool_global_xon_frames_total", {{"direction", "rx"}}},
      {"port.link_xon_tx", "fabric_ethtool_global_xon_frames_total", {{"direction", "tx"}}},
      {"port.rx_crc_errors", "fabric_ethtool_crc_errors_total", {}},
      // igb / ixgbe, tg3
      {"rx_flow_control_xoff", "fabric_ethtool_global_pause_frames_total", {{"direction", "rx"}}},
      {"tx_flow_control_xoff", "fabric_ethtool_global_pause_frames_total", {{"direction", "tx"}}},
      {"rx_flow_control_xon", "fabric_ethtool_global_xon_frames_total", {{"direction", "rx"}}},
      {"tx_flow_control_xon", "fabric_ethtool_global_xon_frames_total", {{"direction", "tx"}}},
      {"rx_xoff_pause_rcvd", "fabric_ethtool_global_pause_frames_total", {{"direction", "rx"}}},
      {"tx_xoff_sent", "fabric_ethtool_global_pause_frames_total", {{"direction", "tx"}}},
      {"rx_xon_pause_rcvd", "fabric_ethtool_global_xon_frames_total", {{"direction", "rx"}}},
      {"tx_xon_sent", "fabric_ethtool_global_xon_frames_total", {{"direction", "tx"}}},
  };
  return kExpected;
}

TEST(NormalizeStat, MapsEveryVendorFamily) {
  for (const Expected& e : ExpectedMappings()) {
    SCOPED_TRACE(e.name);
    auto stat = NormalizeStat(e.name);
    ASSERT_TRUE(stat.has_value());
    EXPECT_EQ(stat->desc->name, e.metric);
    EXPECT_EQ(ExtraLabels(*stat), e.labels);
    EXPECT_DOUBLE_EQ(stat->scale, e.scale);
  }
}

TEST(NormalizeStat, MicrosecondsBecomeSeconds) {
  auto stat = NormalizeStat("rx_prio3_pause_duration");
  ASSERT_TRUE(stat.has_value());
  EXPECT_DOUBLE_EQ(4123456 * stat->scale, 4.123456);
}

TEST(NormalizeStat, IgnoresSurroundingBlanks) {
  // Some mlx5 kernels name it "tx_pause_storm_warning_events " (trailing space) in GSTRINGS.
  for (std::string_view name : {"tx_pause_storm_warning_events ", " tx_pause_storm_warning_events",
                                "\ttx_pause_storm_warning_events\n"}) {
    auto stat = NormalizeStat(name);
    ASSERT_TRUE(stat.has_value()) << name;
    EXPECT_EQ(stat->desc->name, "fabric_ethtool_pause_storm_events_total");
  }
}

TEST(NormalizeStat, MapsIonicNames) {
  // ionic (AMD Pensando, K drivers/net/ethernet/pensando/ionic/ionic_stats.c): pause time per
  // priority in 1 us units, frames per priority, 802.3x pause and FCS errors.
  const std::vector<Expected> ionic = {
      {"rx_pripause_4_1us_count",
       "fabric_pfc_pause_duration_seconds_total",
       {{"priority", "4"}, {"direction", "rx"}},
       1e-6},
      {"tx_pripause_3_1us_count",
       "fabric_pfc_pause_duration_seconds_total",
       {{"priority", "3"}, {"direction", "tx"}},
       1e-6},
      {"frames_rx_pri_3",
       "fabric_ethtool_priority_packets_total",
       {{"priority", "3"}, {"direction", "rx"}}},
      {"frames_tx_pri_3",
       "fabric_ethtool_priority_packets_total",
       {{"priority", "3"}, {"direction", "tx"}}},
      {"frames_rx_pause", "fabric_ethtool_global_pause_frames_total", {{"direction", "rx"}}},
      {"frames_tx_pause", "fabric_ethtool_global_pause_frames_total", {{"direction", "tx"}}},
      {"rx_pause_1us_count",
       "fabric_ethtool_global_pause_duration_seconds_total",
       {{"direction", "rx"}},
       1e-6},
      {"frames_rx_bad_fcs", "fabric_ethtool_crc_errors_total", {}},
  };
  for (const Expected& e : ionic) {
    SCOPED_TRACE(e.name);
    auto stat = NormalizeStat(e.name);
    ASSERT_TRUE(stat.has_value());
    EXPECT_EQ(stat->desc->name, e.metric);
    EXPECT_EQ(ExtraLabels(*stat), e.labels);
    EXPECT_DOUBLE_EQ(stat->scale, e.scale);
  }
}

TEST(NormalizeStat, VendorCountersWithNoEquivalentStayUnmapped) {
  // ionic totals over all priorities; ENA (the netdev of an EFA) ENI shaping counters: packets
  // queued or dropped for exceeding the instance's allowance, not PFC, FEC or link events
  // (K drivers/net/ethernet/amazon/ena/ena_ethtool.c ena_stats_eni_strings).
  for (std::string_view name :
       {"frames_rx_pripause", "frames_tx_pripause", "tx_pripause_8_1us_count",
        "bw_in_allowance_exceeded", "bw_out_allowance_exceeded", "pps_allowance_exceeded",
        "linklocal_allowance_exceeded", "conntrack_allowance_exceeded"}) {
    EXPECT_FALSE(NormalizeStat(name).has_value()) << name;
  }
}

TEST(NormalizeStat, RejectsNearMisses) {
  for (std::string_view name : {
           "rx_prio8_pause", "rx_prio9_pause", "rx_prio10_pause", "rx_prio_pause",
           "rx_prio03_pause", "rx_prio3_pause_", "rx_prioX_pause", "tx_prio3_bytes_x",
           "xrx_prio3_bytes", "RX_PRIO3_PAUSE", "rx_prio3_pause_transition_x",
           "tx_prio3_pause_transition",  // mlx5 has no tx transition counter
           "rx_err_lane_8_phy", "rx_err_lane__phy", "pfc_pri8_rx_duration_us",
           "rx_priority_8_xoff.nic", "rx_priority_3_xoff", "port.rx_priority_3_xon_2_xoff",
           "rx_pause_ctrl_phy", "tx_pause_ctrl_phy",  // netlink PAUSE_GET reports these
           "rx_bytes_cos3", "rx_bytes_pri3", "tx_packets_pri3",  // bnxt CoS queues
           "rx_pb_3_pxoff",                                      // ixgbe packet buffers
           "rx_pfc_frames", "rx_packets", "rx_bytes", "", " ", "[0]: rx_discards",
           "module_unplugged", "%d", "rx_prio%d_pause"}) {
    EXPECT_FALSE(NormalizeStat(name).has_value()) << '"' << name << '"';
  }
}

TEST(NormalizeStat, EveryPatternExpandsToItsFamilyForPriorities0To7) {
  for (const StatPattern& row : StatPatterns()) {
    SCOPED_TRACE(std::string(row.pattern));
    const size_t at = row.pattern.find("%d");
    if (at == std::string_view::npos) {
      EXPECT_TRUE(row.index_label.empty());
      auto stat = NormalizeStat(row.pattern);
      ASSERT_TRUE(stat.has_value());
      EXPECT_EQ(stat->desc, row.desc);
      EXPECT_EQ(stat->scale, row.scale);
      continue;
    }
    EXPECT_FALSE(row.index_label.empty());
    EXPECT_EQ(row.pattern.find("%d", at + 1), std::string_view::npos) << "one %d at most";
    auto expand = [&](std::string_view digits) {
      return std::string(row.pattern.substr(0, at)) + std::string(digits) +
             std::string(row.pattern.substr(at + 2));
    };
    for (int i = 0; i < 8; ++i) {
      const std::string digit = std::to_string(i);
      auto stat = NormalizeStat(expand(digit));
      ASSERT_TRUE(stat.has_value()) << expand(digit);
      EXPECT_EQ(stat->desc, row.desc);
      EXPECT_EQ(stat->scale, row.scale);
      bool found = false;
      for (size_t j = 0; j < stat->n_extra; ++j) {
        if (stat->extra[j].first == row.index_label) {
          EXPECT_EQ(stat->extra[j].second, digit);
          found = true;
        }
      }
      EXPECT_TRUE(found) << "label " << row.index_label;
    }
    for (std::string_view bad : {"8", "9", "10", "00", "", "-1", "x"}) {
      EXPECT_FALSE(NormalizeStat(expand(bad)).has_value()) << expand(bad);
    }
  }
}

TEST(NormalizeStat, LabelsFollowTheDescriptorAndAreNeverEmpty) {
  std::set<std::string> expanded;
  for (const StatPattern& row : StatPatterns()) {
    const size_t at = row.pattern.find("%d");
    const std::string name = at == std::string_view::npos
                                 ? std::string(row.pattern)
                                 : std::string(row.pattern.substr(0, at)) + "4" +
                                       std::string(row.pattern.substr(at + 2));
    SCOPED_TRACE(name);
    auto stat = NormalizeStat(name);
    ASSERT_TRUE(stat.has_value());
    const LabelNames& labels = stat->desc->labels;
    ASSERT_GE(labels.size(), 1u);
    EXPECT_EQ(labels[0], "netdev");
    ASSERT_EQ(stat->n_extra, labels.size() - 1);
    for (size_t i = 0; i < stat->n_extra; ++i) {
      EXPECT_EQ(stat->extra[i].first, labels[i + 1]);
      EXPECT_FALSE(stat->extra[i].second.empty()) << labels[i + 1];
    }
    // Every fixed label of the row names a label of the descriptor.
    for (const LabelPair& fixed : row.fixed) {
      if (fixed.name.empty()) continue;
      EXPECT_NE(std::find(labels.begin(), labels.end(), fixed.name), labels.end()) << fixed.name;
    }
  }
}

TEST(NormalizeStat, PatternsNeverOverlap) {
  std::map<std::string, std::string> owner;  // expanded name -> pattern
  for (const StatPattern& row : StatPatterns()) {
    const size_t at = row.pattern.find("%d");
    std::vector<std::string> names;
    if (at == std::string_view::npos) {
      names.emplace_back(row.pattern);
    } else {
      for (int i = 0; i < 8; ++i) {
        names.push_back(std::string(row.pattern.substr(0, at)) + std::to_string(i) +
                        std::string(row.pattern.substr(at + 2)));
      }
    }
    for (const std::string& name : names) {
      auto [it, inserted] = owner.emplace(name, std::string(row.pattern));
      EXPECT_TRUE(inserted) << name << " from " << row.pattern << " and " << it->second;
    }
  }
}

TEST(NormalizeStat, VendorsShareSeries) {
  // Names of different vendors land in one series, one name per vendor (i40e has two name
  // generations, never both on one netdev). That no netdev yields two statistics for one series,
  // which the sink would reject, is checked on every fixture and external capture below.
  std::map<std::string, std::vector<std::string>> by_series;
  for (const StatPattern& row : StatPatterns()) {
    const size_t at = row.pattern.find("%d");
    const std::string name = at == std::string_view::npos
                                 ? std::string(row.pattern)
                                 : std::string(row.pattern.substr(0, at)) + "1" +
                                       std::string(row.pattern.substr(at + 2));
    auto stat = NormalizeStat(name);
    ASSERT_TRUE(stat.has_value());
    std::string key(stat->desc->name);
    for (size_t i = 0; i < stat->n_extra; ++i) {
      key += "," + std::string(stat->extra[i].first) + "=" + std::string(stat->extra[i].second);
    }
    by_series[key].push_back(name);
  }
  // Spot-check the known sharing: one series, one name per vendor.
  EXPECT_THAT(by_series["fabric_pfc_pause_frames_total,priority=1,direction=rx"],
              ElementsAre("rx_prio1_pause", "rx_pfc_ena_frames_pri1", "rx_priority_1_xoff.nic",
                          "port.rx_priority_1_xoff_rx", "port.rx_priority_1_xoff"));
}

TEST(NormalizedMetrics, DescriptorsAreValidCountersWithNetdevFirst) {
  std::set<std::string_view> names;
  for (const MetricDesc* desc : NormalizedMetrics()) {
    ASSERT_NE(desc, nullptr);
    SCOPED_TRACE(std::string(desc->name));
    EXPECT_TRUE(ValidateDesc(*desc).ok()) << ValidateDesc(*desc).ToString();
    EXPECT_TRUE(names.insert(desc->name).second) << "listed twice";
    EXPECT_EQ(desc->kind, MetricKind::kCounter);
    EXPECT_TRUE(desc->name.ends_with("_total"));
    EXPECT_TRUE(desc->name.starts_with("fabric_ethtool_") || desc->name.starts_with("fabric_pfc_"));
    EXPECT_EQ(desc->name.find("counter"), std::string_view::npos);  // promtool's type-in-name lint
    ASSERT_GE(desc->labels.size(), 1u);
    EXPECT_EQ(desc->labels[0], "netdev");
    EXPECT_LE(desc->labels.size() - 1, NormalizedStat::kMaxExtra);
    for (std::string_view label : desc->labels) EXPECT_NE(label, "type");
    EXPECT_FALSE(desc->help.empty());
  }
}

TEST(NormalizedMetrics, ListsExactlyTheDescriptorsThePatternsUse) {
  const std::span<const MetricDesc* const> metrics = NormalizedMetrics();
  std::set<const MetricDesc*> listed(metrics.begin(), metrics.end());
  std::set<const MetricDesc*> used;
  for (const StatPattern& row : StatPatterns()) used.insert(row.desc);
  EXPECT_EQ(listed, used);
}

// ------------------------------------------------------------------------------ sanitising

TEST(SanitizeMetricName, Cases) {
  const std::pair<std::string_view, std::string_view> cases[] = {
      {"rx_bytes", "rx_bytes"},
      {"rx-bytes", "rx_bytes"},
      {"RX.Bytes", "rx_bytes"},
      {"rx__bytes", "rx_bytes"},
      {"rx_crc_errors.nic", "rx_crc_errors_nic"},
      {"port.VF_admin_queue_requests", "port_vf_admin_queue_requests"},
      {"rx-0.packets", "rx_0_packets"},
      {"[0]: rx_ucast_packets", "_0_rx_ucast_packets"},
      {"[12]: tpa_aborts", "_12_tpa_aborts"},
      {"tx_pause_storm_warning_events ", "tx_pause_storm_warning_events"},
      {"_leading_and_trailing_", "leading_and_trailing"},
      {"64_bytes", "_64_bytes"},
      {"some driver stat", "some_driver_stat"},
      {"caf\xc3\xa9", "caf"},
      {"", ""},
      {"...", ""},
      {"[]: ", ""},
  };
  for (const auto& [raw, sanitized] : cases) {
    EXPECT_EQ(SanitizeMetricName(raw), sanitized) << '"' << raw << '"';
  }
}

TEST(SanitizeMetricName, CollisionsAreDeterministic) {
  EXPECT_EQ(SanitizeMetricName("rx-bytes"), SanitizeMetricName("rx_bytes"));
  EXPECT_EQ(SanitizeMetricName("rx.bytes"), SanitizeMetricName("RX_BYTES"));
  EXPECT_NE(SanitizeMetricName("rx_bytes"), SanitizeMetricName("rx_bytes_nic"));
}

TEST(SanitizeMetricName, ResultIsAValidMetricName) {
  static const std::regex kValid("^[a-zA-Z_:][a-zA-Z0-9_:]*$");
  for (std::string_view raw : {"[0]: rx", "9lives", "a-b.c d", "port.rx_priority_0_xon_2_xoff"}) {
    const std::string name = SanitizeMetricName(raw);
    EXPECT_TRUE(std::regex_match(name, kValid)) << name;
    EXPECT_EQ(name.find("__"), std::string::npos) << name;
  }
}

TEST(PassthroughMetricName, PrefixesWithoutDoubleUnderscores) {
  EXPECT_EQ(PassthroughMetricName("[0]: rx_ucast_packets"), "fabric_ethtool_0_rx_ucast_packets");
  EXPECT_EQ(PassthroughMetricName("rx_crc_errors.nic"), "fabric_ethtool_rx_crc_errors_nic");
  EXPECT_EQ(PassthroughMetricName("..."), "");
}

// --------------------------------------------------------------------------- fixture trees

std::map<std::string, size_t> FamilySeries(const std::vector<sys::EthtoolStat>& stats,
                                           std::set<std::string>* duplicates = nullptr) {
  std::map<std::string, size_t> series;
  std::set<std::string> seen;
  for (const sys::EthtoolStat& stat : stats) {
    auto normalized = NormalizeStat(stat.name);
    if (!normalized) continue;
    std::string key(normalized->desc->name);
    for (size_t i = 0; i < normalized->n_extra; ++i) {
      key += "," + std::string(normalized->extra[i].second);
    }
    if (!seen.insert(key).second && duplicates != nullptr) duplicates->insert(key);
    ++series[std::string(normalized->desc->name)];
  }
  return series;
}

std::vector<sys::EthtoolStat> ParseFixture(const std::string& relative, size_t* stat_lines) {
  const std::string text = testing::ReadTextFile(testing::FixturePath(relative));
  EXPECT_FALSE(text.empty()) << relative;
  auto parsed = ParseEthtoolStatsText(text, relative);
  EXPECT_TRUE(parsed.has_value()) << relative;
  if (!parsed) return {};
  for (const Status& problem : parsed->problems) ADD_FAILURE() << problem.ToString();
  if (stat_lines != nullptr) *stat_lines = CountStatLines(text);
  return parsed->stats;
}

TEST(EthtoolFixtures, EveryFixtureParsesLineForLine) {
  const std::filesystem::path root = testing::FixturePath("ethtool");
  size_t files = 0;
  for (const auto& scenario : std::filesystem::directory_iterator(root)) {
    for (const auto& netdev : std::filesystem::directory_iterator(scenario.path())) {
      const std::string relative = "ethtool/" + scenario.path().filename().string() + "/" +
                                   netdev.path().filename().string() + "/statistics";
      SCOPED_TRACE(relative);
      size_t lines = 0;
      const auto stats = ParseFixture(relative, &lines);
      EXPECT_GT(stats.size(), 50u);
      EXPECT_EQ(stats.size(), lines);
      std::set<std::string> duplicates;
      FamilySeries(stats, &duplicates);
      EXPECT_THAT(duplicates, IsEmpty()) << "two statistics for one normalised series";
      ++files;
    }
  }
  EXPECT_EQ(files, 10u);
}

// Exactly which curated families each fixture netdev yields, with how many series.
TEST(EthtoolFixtures, RecognisedFamiliesPerDriver) {
  using Families = std::map<std::string, size_t>;
  const Families kGlobalIntel = {{"fabric_ethtool_global_pause_frames_total", 2},
                                 {"fabric_ethtool_global_xon_frames_total", 2}};
  Families intel_pfc = kGlobalIntel;
  intel_pfc["fabric_pfc_pause_frames_total"] = 16;
  intel_pfc["fabric_pfc_xon_frames_total"] = 16;
  intel_pfc["fabric_ethtool_crc_errors_total"] = 1;
  const Families mlx5_common = {
      {"fabric_ethtool_priority_bytes_total", 16},
      {"fabric_ethtool_priority_packets_total", 16},
      {"fabric_ethtool_priority_receive_discards_total", 8},
      {"fabric_ethtool_pause_storm_events_total", 2},
      {"fabric_ethtool_port_discards_total", 2},
      {"fabric_ethtool_out_of_buffer_drops_total", 1},
      {"fabric_ethtool_phy_corrected_bit_errors_total", 1},
      {"fabric_ethtool_phy_pcs_symbol_errors_total", 1},
      {"fabric_ethtool_phy_symbol_errors_total", 1},
      {"fabric_ethtool_crc_errors_total", 1},
      {"fabric_ethtool_link_down_events_total", 1},
      {"fabric_ethtool_module_events_total", 4},
  };
  Families mlx5_pfc = mlx5_common;
  mlx5_pfc.insert({{"fabric_pfc_pause_frames_total", 16},
                   {"fabric_pfc_pause_duration_seconds_total", 16},
                   {"fabric_pfc_pause_transitions_total", 8},
                   {"fabric_ethtool_priority_receive_buffer_discards_total", 8},
                   {"fabric_ethtool_priority_receive_congestion_discards_total", 8},
                   {"fabric_ethtool_priority_ecn_marked_packets_total", 8},
                   {"fabric_ethtool_receive_buffer_threshold_events_total", 1},
                   {"fabric_ethtool_phy_bit_count_total", 1},
                   {"fabric_ethtool_phy_lane_corrected_bit_errors_total", 4}});
  Families mlx5_global = mlx5_common;
  mlx5_global.insert({{"fabric_ethtool_global_pause_frames_total", 2},
                      {"fabric_ethtool_global_pause_duration_seconds_total", 2},
                      {"fabric_ethtool_global_pause_transitions_total", 1}});
  // Zero lines dropped: what is left of the PFC port with PFC on priority 3 only.
  const Families mlx5_nonzero = {
      {"fabric_pfc_pause_frames_total", 2},
      {"fabric_pfc_pause_duration_seconds_total", 2},
      {"fabric_pfc_pause_transitions_total", 1},
      {"fabric_ethtool_priority_bytes_total", 4},
      {"fabric_ethtool_priority_packets_total", 4},
      {"fabric_ethtool_priority_receive_discards_total", 1},
      {"fabric_ethtool_priority_receive_buffer_discards_total", 7},
      {"fabric_ethtool_priority_receive_congestion_discards_total", 1},
      {"fabric_ethtool_priority_ecn_marked_packets_total", 1},
      {"fabric_ethtool_pause_storm_events_total", 2},
      {"fabric_ethtool_port_discards_total", 2},
      {"fabric_ethtool_out_of_buffer_drops_total", 1},
      {"fabric_ethtool_receive_buffer_threshold_events_total", 1},
      {"fabric_ethtool_phy_bit_count_total", 1},
      {"fabric_ethtool_phy_corrected_bit_errors_total", 1},
      {"fabric_ethtool_phy_pcs_symbol_errors_total", 1},
      {"fabric_ethtool_phy_symbol_errors_total", 1},
      {"fabric_ethtool_phy_lane_corrected_bit_errors_total", 4},
      {"fabric_ethtool_crc_errors_total", 1},
      {"fabric_ethtool_link_down_events_total", 1},
      {"fabric_ethtool_module_events_total", 2},
  };
  const Families bnxt = {
      {"fabric_pfc_pause_frames_total", 16},
      {"fabric_pfc_pause_duration_seconds_total", 16},
      {"fabric_pfc_pause_transitions_total", 16},
      {"fabric_ethtool_global_pause_frames_total", 2},
      {"fabric_ethtool_continuous_pause_events_total", 2},
      {"fabric_ethtool_continuous_pause_resumes_total", 2},
      {"fabric_ethtool_receive_buffer_threshold_events_total", 1},
      {"fabric_ethtool_phy_bit_count_total", 1},
      {"fabric_ethtool_phy_corrected_bit_errors_total", 1},
      {"fabric_ethtool_phy_pcs_symbol_errors_total", 1},
      {"fabric_ethtool_crc_errors_total", 1},
      {"fabric_ethtool_link_down_events_total", 1},
  };
  const std::pair<std::string, Families> cases[] = {
      {"mlx5/enp65s0f0np0", mlx5_pfc},       {"mlx5/enp65s0f1np1", mlx5_global},
      {"mlx5-nonzero/ens2f0np0", mlx5_nonzero}, {"bnxt/ens3f0np0", bnxt},
      {"ice/ens5f0", intel_pfc},             {"i40e/enp3s0f0", intel_pfc},
      {"i40e/enp3s0f1", intel_pfc},          {"igb/eno1", kGlobalIntel},
      {"ixgbe/enp4s0f0", kGlobalIntel},      {"tg3/eno2", kGlobalIntel},
  };
  for (const auto& [netdev, families] : cases) {
    SCOPED_TRACE(netdev);
    EXPECT_EQ(FamilySeries(ParseFixture("ethtool/" + netdev + "/statistics", nullptr)), families);
  }
}

// The metric sink enforces the naming contract (docs/design.md §5) and rejects duplicate series:
// every normalised sample of every fixture netdev must pass it.
TEST(EthtoolFixtures, NormalisedSamplesSatisfyTheSink) {
  const std::filesystem::path root = testing::FixturePath("ethtool");
  MetricSink sink;
  size_t samples = 0;
  for (const auto& scenario : std::filesystem::directory_iterator(root)) {
    for (const auto& netdev_dir : std::filesystem::directory_iterator(scenario.path())) {
      // One sink for all scenarios: their netdev names are distinct.
      const std::string netdev = netdev_dir.path().filename().string();
      const auto stats = ParseFixture("ethtool/" + scenario.path().filename().string() + "/" +
                                          netdev + "/statistics",
                                      nullptr);
      for (const sys::EthtoolStat& stat : stats) {
        auto normalized = NormalizeStat(stat.name);
        if (!normalized) continue;
        std::array<LabelPair, NormalizedStat::kMaxExtra + 1> labels;
        labels[0] = {"netdev", netdev};
        for (size_t i = 0; i < normalized->n_extra; ++i) {
          labels[i + 1] = {normalized->extra[i].first, normalized->extra[i].second};
        }
        sink.Add(*normalized->desc,
                 std::span<const LabelPair>(labels.data(), normalized->n_extra + 1),
                 static_cast<double>(stat.value) * normalized->scale);
        ++samples;
      }
    }
  }
  for (const Status& error : sink.errors()) ADD_FAILURE() << error.ToString();
  EXPECT_EQ(sink.error_count(), 0u);
  EXPECT_EQ(sink.sample_count(), samples);
  EXPECT_EQ(samples, 407u);  // the sum over RecognisedFamiliesPerDriver
}

TEST(EthtoolFixtures, Mlx5ValuesCarryTheirLabelsAndUnits) {
  const auto stats = ParseFixture("ethtool/mlx5/enp65s0f0np0/statistics", nullptr);
  std::map<std::string, double> samples;  // "metric{labels}" -> value in base units
  for (const sys::EthtoolStat& stat : stats) {
    auto normalized = NormalizeStat(stat.name);
    if (!normalized) continue;
    std::string key(normalized->desc->name);
    for (size_t i = 0; i < normalized->n_extra; ++i) {
      key += (i == 0 ? "{" : ",") + std::string(normalized->extra[i].second);
    }
    if (normalized->n_extra > 0) key += "}";
    samples[key] = static_cast<double>(stat.value) * normalized->scale;
  }
  EXPECT_DOUBLE_EQ(samples["fabric_pfc_pause_frames_total{3,rx}"], 18234);
  EXPECT_DOUBLE_EQ(samples["fabric_pfc_pause_frames_total{3,tx}"], 9021);
  EXPECT_DOUBLE_EQ(samples["fabric_pfc_pause_frames_total{6,rx}"], 61);
  EXPECT_DOUBLE_EQ(samples["fabric_pfc_pause_frames_total{6,tx}"], 63);
  EXPECT_DOUBLE_EQ(samples["fabric_pfc_pause_duration_seconds_total{3,rx}"], 4.123456);
  EXPECT_DOUBLE_EQ(samples["fabric_pfc_pause_duration_seconds_total{3,tx}"], 1.5023);
  EXPECT_DOUBLE_EQ(samples["fabric_pfc_pause_duration_seconds_total{6,tx}"], 0.006004);
  EXPECT_DOUBLE_EQ(samples["fabric_pfc_pause_transitions_total{3,rx}"], 9011);
  EXPECT_DOUBLE_EQ(samples["fabric_ethtool_pause_storm_events_total{warning}"], 2);
  EXPECT_DOUBLE_EQ(samples["fabric_ethtool_pause_storm_events_total{error}"], 1);
  EXPECT_DOUBLE_EQ(samples["fabric_ethtool_phy_lane_corrected_bit_errors_total{2}"], 21902);
  EXPECT_DOUBLE_EQ(samples["fabric_ethtool_priority_ecn_marked_packets_total{3}"], 982341);
  EXPECT_DOUBLE_EQ(samples["fabric_ethtool_module_events_total{high_temp}"], 1);
}

// ------------------------------------------------------------------------ external corpus

TEST(EthtoolExternalCorpus, EveryCaptureParsesLineForLineAndFamiliesAreRecognised) {
  const std::filesystem::path dir = testing::SourcePath("../shared/fixtures/external/ethtool-S");
  if (!std::filesystem::is_directory(dir)) {
    GTEST_SKIP() << dir << " is absent (the external corpus is not part of the repository)";
  }
  // File-name marker -> families that must appear (the captures hold them).
  const std::vector<std::pair<std::string, std::vector<std::string>>> kRequired = {
      {"mlx5",
       {"fabric_ethtool_priority_bytes_total", "fabric_ethtool_priority_packets_total",
        "fabric_ethtool_global_pause_frames_total",
        "fabric_ethtool_global_pause_duration_seconds_total",
        "fabric_ethtool_port_discards_total", "fabric_ethtool_out_of_buffer_drops_total"}},
      {"bnxt",
       {"fabric_pfc_pause_frames_total", "fabric_pfc_pause_duration_seconds_total",
        "fabric_pfc_pause_transitions_total", "fabric_ethtool_global_pause_frames_total",
        "fabric_ethtool_continuous_pause_events_total", "fabric_ethtool_link_down_events_total",
        "fabric_ethtool_crc_errors_total", "fabric_ethtool_phy_bit_count_total"}},
      {"ice",
       {"fabric_pfc_pause_frames_total", "fabric_pfc_xon_frames_total",
        "fabric_ethtool_global_pause_frames_total", "fabric_ethtool_global_xon_frames_total",
        "fabric_ethtool_crc_errors_total"}},
      // showmax_ixgbe418 holds i40e-format statistics (veb.*, port.*), like the i40e files.
      {"i40e",
       {"fabric_pfc_pause_frames_total", "fabric_pfc_xon_frames_total",
        "fabric_ethtool_global_pause_frames_total", "fabric_ethtool_crc_errors_total"}},
      {"ixgbe", {"fabric_pfc_pause_frames_total", "fabric_ethtool_global_pause_frames_total"}},
      {"igb",
       {"fabric_ethtool_global_pause_frames_total", "fabric_ethtool_global_xon_frames_total"}},
      {"tg3",
       {"fabric_ethtool_global_pause_frames_total", "fabric_ethtool_global_xon_frames_total"}},
  };
  size_t files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".txt") continue;
    const std::string file = entry.path().filename().string();
    SCOPED_TRACE(file);
    const std::string text = testing::ReadTextFile(entry.path().string());
    auto parsed = ParseEthtoolStatsText(text, file);
    ASSERT_TRUE(parsed.has_value()) << parsed.error().ToString();
    for (const Status& problem : parsed->problems) ADD_FAILURE() << problem.ToString();
    EXPECT_GT(parsed->stats.size(), 0u);
    EXPECT_EQ(parsed->stats.size(), CountStatLines(text));
    std::set<std::string> duplicates;
    const auto families = FamilySeries(parsed->stats, &duplicates);
    EXPECT_THAT(duplicates, IsEmpty());
    bool matched = false;
    for (const auto& [marker, required] : kRequired) {
      if (file.find(marker) == std::string::npos) continue;
      matched = true;
      for (const std::string& family : required) {
        EXPECT_TRUE(families.contains(family)) << family;
      }
    }
    EXPECT_TRUE(matched) << "no expectation for this capture's driver";
    ++files;
  }
  EXPECT_GE(files, 14u);
}

TEST(ParseEthtoolStatsTextIntoTest, reusing_a_result_gives_what_a_fresh_parse_gives) {
  const std::string_view texts[] = {
      "NIC statistics:\n     rx_packets: 1\n     rx_prio3_pause_duration: 2\n     bad line\n",
      "NIC statistics:\n     tx_packets: 7\n",
      "NIC statistics:\n     a: 1\n     b: 2\n     rx_vport_rdma_unicast_packets: 3\n",
      "no statistics here\n",
      "",
  };
  ParsedEthtoolStats reused;
  for (std::string_view text : texts) {
    SCOPED_TRACE(text);
    auto fresh = ParseEthtoolStatsText(text, "t");
    Status status = ParseEthtoolStatsTextInto(text, "t", reused);
    ASSERT_EQ(status.ok(), fresh.has_value());
    if (!fresh) {
      EXPECT_EQ(status.message(), fresh.error().message());
      continue;
    }
    ASSERT_EQ(reused.stats.size(), fresh->stats.size());
    for (size_t i = 0; i < fresh->stats.size(); ++i) {
      EXPECT_EQ(reused.stats[i].name, fresh->stats[i].name);
      EXPECT_EQ(reused.stats[i].value, fresh->stats[i].value);
    }
    EXPECT_EQ(reused.malformed_lines, fresh->malformed_lines);
    EXPECT_EQ(reused.problems.size(), fresh->problems.size());
  }
}

}  // namespace
}  // namespace fabricwatch::ethtool
