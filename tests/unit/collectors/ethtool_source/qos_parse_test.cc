// The `mlnx_qos -i <netdev>` text of the replay file DIR/<netdev>/qos
// (collectors/ethtool_source/qos_parse.h): each variant the tool's versions print, written here
// after its print code (mlnx-tools python/mlnx_qos pretty_print, dcbnetlink printAppSelector) and
// the public captures in its docs.

#include "collectors/ethtool_source/qos_parse.h"

#include <gtest/gtest.h>

#include <string>

namespace fabricwatch::sys {
namespace {

// Recent mlnx-tools: tabs, the buffer rows, "default priority:", tc blocks with "\t priority:  N".
constexpr char kRecent[] =
    "DCBX mode: OS controlled\n"
    "Priority trust state: dscp\n"
    "dscp2prio mapping:\n"
    "\tprio:0 dscp:07,06,05,04,03,02,01,00,\n"
    "\tprio:1 dscp:15,14,13,12,11,10,09,08,\n"
    "\tprio:2 dscp:23,22,21,20,19,18,17,16,\n"
    "\tprio:3 dscp:31,30,29,28,27,26,25,24,\n"
    "\tprio:4 dscp:39,38,37,36,35,34,33,32,\n"
    "\tprio:5 dscp:47,46,45,44,43,42,41,40,\n"
    "\tprio:6 dscp:55,54,53,52,51,50,49,48,\n"
    "\tprio:7 dscp:63,62,61,60,59,58,57,56,\n"
    "default priority:\n"
    "Receive buffer size (bytes): 130944,130944,0,0,0,0,0,0,total_size=1048576\n"
    "Cable len: 7\n"
    "PFC configuration:\n"
    "\tpriority    0   1   2   3   4   5   6   7\n"
    "\tenabled     0   0   0   1   0   0   0   0   \n"
    "\tbuffer      0   0   0   1   0   0   0   0   \n"
    "tc: 1 ratelimit: unlimited, tsa: vendor\n"
    "\t priority:  0\n"
    "tc: 0 ratelimit: unlimited, tsa: ets, bw: 50%\n"
    "\t priority:  1\n"
    "\t priority:  2\n"
    "tc: 3 ratelimit: 12.5 Gbps, tsa: ets, bw: 50%\n"
    "\t priority:  3\n"
    "tc: 4 ratelimit: unlimited, tsa: strict\n"
    "\t priority:  4\n"
    "\t priority:  5\n"
    "\t priority:  6\n"
    "\t priority:  7\n";

TEST(QosParseTest, the_recent_format_with_buffers_and_tabs) {
  auto parsed = ParseMlnxQosText(kRecent, "qos");
  ASSERT_TRUE(parsed) << parsed.error().ToString();
  const QosSettings& s = parsed->settings;
  EXPECT_EQ(parsed->unknown_lines, 0u);
  EXPECT_TRUE(parsed->problems.empty()) << parsed->problems.front().ToString();
  EXPECT_EQ(s.dcbx_mode, "os");
  EXPECT_EQ(s.trust, "dscp");
  for (int dscp = 0; dscp < 64; ++dscp) {
    ASSERT_TRUE(s.dscp_priority[dscp]) << dscp;
    EXPECT_EQ(*s.dscp_priority[dscp], dscp / 8) << dscp;
  }
  EXPECT_EQ(*s.dscp_priority[26], 3);  // AF31, RoCE's default
  EXPECT_FALSE(s.default_priority);
  ASSERT_TRUE(s.buffer_size_bytes);
  EXPECT_EQ((*s.buffer_size_bytes)[1], 130944u);
  EXPECT_EQ(*s.buffer_total_bytes, 1048576u);
  EXPECT_EQ(*s.cable_length_m, 7u);
  EXPECT_EQ(*s.pfc_enabled, 0x08);
  ASSERT_TRUE(s.priority_buffer);
  EXPECT_EQ((*s.priority_buffer)[3], 1);
  EXPECT_EQ(*s.priority_tc[0], 1);
  EXPECT_EQ(*s.priority_tc[2], 0);
  EXPECT_EQ(*s.priority_tc[3], 3);
  EXPECT_EQ(*s.priority_tc[7], 4);
  EXPECT_EQ(s.traffic_classes[0]->tsa, "ets");
  EXPECT_EQ(*s.traffic_classes[0]->bandwidth_percent, 50);
  EXPECT_DOUBLE_EQ(*s.traffic_classes[3]->ratelimit_gbps, 12.5);
  EXPECT_FALSE(s.traffic_classes[1]->ratelimit_gbps);
  EXPECT_EQ(s.traffic_classes[4]->tsa, "strict");
  EXPECT_FALSE(s.traffic_classes[2]);
}

TEST(QosParseTest, the_old_format_without_tabs_buffers_or_colons_and_with_blank_lines) {
  // MLNX_OFED 4.2's documented output: no indentation, blank lines between the tc blocks, no
  // buffer row, `priority: N` unindented.
  const char text[] =
      "DCBX mode: Firmware controlled\n"
      "Priority trust state: pcp\n"
      "Cable len: 10\n"
      "PFC configuration:\n"
      "priority 0 1 2 3 4 5 6 7\n"
      "enabled 1 0 1 0 0 0 1 1\n"
      "\n"
      "tc: 0 ratelimit: unlimited, tsa: ets, bw: 10%\n"
      "\n"
      "priority: 1\n"
      "\n"
      "tc: 6 ratelimit: unlimited, tsa: strict\n"
      "\n"
      "priority: 6\n"
      "   \n";
  auto parsed = ParseMlnxQosText(text, "qos");
  ASSERT_TRUE(parsed) << parsed.error().ToString();
  const QosSettings& s = parsed->settings;
  EXPECT_EQ(parsed->unknown_lines, 0u);
  EXPECT_EQ(s.dcbx_mode, "firmware");
  EXPECT_EQ(s.trust, "pcp");
  EXPECT_EQ(*s.pfc_enabled, 0b11000101);
  EXPECT_FALSE(s.priority_buffer);
  EXPECT_FALSE(s.dscp_priority[26]);
  EXPECT_EQ(*s.priority_tc[1], 0);
  EXPECT_EQ(*s.priority_tc[6], 6);
}

TEST(QosParseTest, colons_a_column_table_and_wrapped_priority_rows) {
  const char text[] =
      "Priority trust state: dscp\n"
      "dscp2prio mapping:\n"
      "\tprio:0 dscp:07,06,05,04,03,02,01,00,\n"
      "\tprio:0 dscp:15,14,13,12,11,10,09,08,\n"  // more than 8 DSCPs on priority 0: wrapped
      "\t26 3\n"                                  // the qos/dscp2prio column form
      "\t46 5\n"
      "default priority: 2\n"
      "PFC configuration:\n"
      "\tpriority:    0   1   2   3   4   5   6   7\n"
      "\tenabled:     0   0   0   1   1   0   0   0\n";
  auto parsed = ParseMlnxQosText(text, "qos");
  ASSERT_TRUE(parsed) << parsed.error().ToString();
  const QosSettings& s = parsed->settings;
  EXPECT_EQ(parsed->unknown_lines, 0u);
  EXPECT_EQ(*s.dscp_priority[15], 0);
  EXPECT_EQ(*s.dscp_priority[26], 3);
  EXPECT_EQ(*s.dscp_priority[46], 5);
  EXPECT_FALSE(s.dscp_priority[40]);
  EXPECT_EQ(*s.default_priority, 2);
  EXPECT_EQ(*s.pfc_enabled, 0x18);
}

TEST(QosParseTest, notices_unknown_lines_and_bad_values_keep_the_rest) {
  const char text[] =
      "****** WARNING: lldpad service is running and may overwrite your settings ******\n"
      "Priority trust state is not supported on your system\n"
      "Buffers commands are not supported on your system\n"
      "Some future line: 42\n"
      "Cable len: many\n"
      "PFC configuration:\n"
      "\tpriority    0   1   2   3   4   5   6   7\n"
      "\tenabled     0   0   0   2   0   0   0   0\n"
      "tc: 9 ratelimit: unlimited, tsa: ets, bw: 10%\n"
      "Priority trust state: maybe\n";
  auto parsed = ParseMlnxQosText(text, "/replay/eth0/qos");
  ASSERT_TRUE(parsed) << parsed.error().ToString();
  EXPECT_EQ(parsed->unknown_lines, 1u);
  EXPECT_TRUE(parsed->settings.buffers_unsupported);
  EXPECT_FALSE(parsed->settings.pfc_enabled);
  EXPECT_FALSE(parsed->settings.cable_length_m);
  EXPECT_EQ(parsed->settings.trust, "");
  ASSERT_EQ(parsed->problems.size(), 4u);
  EXPECT_NE(parsed->problems[0].message().find("/replay/eth0/qos:5: cable length"),
            std::string::npos)
      << parsed->problems[0].message();
  EXPECT_NE(parsed->problems[1].message().find(":8: PFC enabled row"), std::string::npos);
  EXPECT_NE(parsed->problems[2].message().find(":9: traffic class \"9\""), std::string::npos)
      << parsed->problems[2].message();
  EXPECT_NE(parsed->problems[3].message().find(":10: unknown trust state"), std::string::npos);
}

TEST(QosParseTest, text_that_is_not_mlnx_qos_output_is_an_error) {
  for (const char* text :
       {"", "\n\n", "Settings for eth0:\n\tSpeed: 10000Mb/s\n", "\xff\xfe\x00"}) {
    auto parsed = ParseMlnxQosText(text, "/replay/eth0/qos");
    ASSERT_FALSE(parsed) << text;
    EXPECT_NE(parsed.error().message().find("/replay/eth0/qos"), std::string::npos);
  }
  std::string huge;
  for (int i = 0; i < 5000; ++i) huge += "Cable len: 1\n";
  EXPECT_FALSE(ParseMlnxQosText(huge, "qos"));
}

}  // namespace
}  // namespace fabricwatch::sys
