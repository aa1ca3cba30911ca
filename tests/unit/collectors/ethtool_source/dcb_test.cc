// Tests of the DCB request and reply (dcb.h): RTM_GETDCB / DCB_CMD_IEEE_GET with struct ieee_pfc.

#include "collectors/ethtool_source/dcb.h"

#include <gtest/gtest.h>
#include <linux/dcbnl.h>
#include <netlink/attr.h>
#include <netlink/msg.h>
#include <sys/socket.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <vector>

#include "tests/unit/collectors/ethtool_source/netlink_test_messages.h"

namespace fabricwatch::sys {
namespace {

TEST(DcbParseTest, IeeePfc) {
  Msg msg = DcbReply(DCB_CMD_IEEE_GET);
  nlattr* ieee = nla_nest_start(msg.get(), DCB_ATTR_IEEE);
  ieee_ets ets{};
  nla_put(msg.get(), DCB_ATTR_IEEE_ETS, sizeof(ets), &ets);
  ieee_pfc pfc{};
  pfc.pfc_cap = 8;
  pfc.pfc_en = 0x08;  // priority 3
  for (int i = 0; i < 8; ++i) {
    pfc.requests[i] = 100 + i;
    pfc.indications[i] = 200 + i;
  }
  nla_put(msg.get(), DCB_ATTR_IEEE_PFC, sizeof(pfc), &pfc);
  nla_nest_end(msg.get(), ieee);
  auto config = ParseDcbIeeeReply(nlmsg_hdr(msg.get()));
  ASSERT_TRUE(config) << config.error().ToString();
  EXPECT_EQ(config->pfc_cap, 8);
  EXPECT_EQ(config->enabled_mask, 0x08);
  ASSERT_TRUE(config->requests);
  ASSERT_TRUE(config->indications);
  EXPECT_EQ(*config->requests, (std::vector<uint64_t>{100, 101, 102, 103, 104, 105, 106, 107}));
  EXPECT_EQ(*config->indications, (std::vector<uint64_t>{200, 201, 202, 203, 204, 205, 206, 207}));
}

// The APP table (docs/reference.md §4.5, §4.6): DSCP entries are the DSCP → priority map and make
// the trust state dscp; the ethertype-0 entry is the default priority; other selectors and
// out-of-range priorities are ignored; a table without DSCP entries means trust pcp.
TEST(DcbParseTest, IeeeAppTableGivesTrustDscpMapAndDefaultPriority) {
  auto reply = [](const std::vector<dcb_app>& apps, bool with_table) {
    Msg msg = DcbReply(DCB_CMD_IEEE_GET);
    nlattr* ieee = nla_nest_start(msg.get(), DCB_ATTR_IEEE);
    ieee_pfc pfc{};
    pfc.pfc_en = 0x08;
    nla_put(msg.get(), DCB_ATTR_IEEE_PFC, sizeof(pfc), &pfc);
    if (with_table) {
      nlattr* table = nla_nest_start(msg.get(), DCB_ATTR_IEEE_APP_TABLE);
      for (const dcb_app& app : apps) nla_put(msg.get(), DCB_ATTR_IEEE_APP, sizeof(app), &app);
      nla_nest_end(msg.get(), table);
    }
    nla_nest_end(msg.get(), ieee);
    return msg;
  };
  std::vector<dcb_app> apps;
  for (uint16_t dscp = 0; dscp < 64; ++dscp) {
    apps.push_back({IEEE_8021QAZ_APP_SEL_DSCP, static_cast<uint8_t>(dscp >> 3), dscp});
  }
  apps.push_back({IEEE_8021QAZ_APP_SEL_ETHERTYPE, 2, 0});  // default priority 2
  apps.push_back({IEEE_8021QAZ_APP_SEL_STREAM, 5, 4791});  // RoCEv2 port: not a DSCP
  apps.push_back({IEEE_8021QAZ_APP_SEL_DSCP, 9, 1});       // priority 9: ignored
  Msg dscp = reply(apps, true);
  auto config = ParseDcbIeeeReply(nlmsg_hdr(dscp.get()));
  ASSERT_TRUE(config) << config.error().ToString();
  EXPECT_EQ(config->trust, "dscp");
  EXPECT_EQ(config->dscp_priority[26], 3);
  EXPECT_EQ(config->dscp_priority[1], 0);
  EXPECT_EQ(config->dscp_priority[63], 7);
  EXPECT_EQ(config->default_priority, 2);

  Msg pcp = reply({{IEEE_8021QAZ_APP_SEL_ETHERTYPE, 0, 0x8906}}, true);  // FCoE ethertype only
  config = ParseDcbIeeeReply(nlmsg_hdr(pcp.get()));
  ASSERT_TRUE(config);
  EXPECT_EQ(config->trust, "pcp");
  EXPECT_FALSE(config->dscp_priority[26]);
  EXPECT_FALSE(config->default_priority);

  Msg none = reply({}, false);  // no APP table: the source does not say
  config = ParseDcbIeeeReply(nlmsg_hdr(none.get()));
  ASSERT_TRUE(config);
  EXPECT_EQ(config->trust, "");
}

TEST(DcbParseTest, ShortMissingAndWrong) {
  Msg short_pfc = DcbReply(DCB_CMD_IEEE_GET);  // only pfc_cap..delay: no counters
  nlattr* ieee = nla_nest_start(short_pfc.get(), DCB_ATTR_IEEE);
  const uint8_t head[8] = {4, 0x81, 0, 0, 0, 0, 0, 0};
  nla_put(short_pfc.get(), DCB_ATTR_IEEE_PFC, sizeof(head), head);
  nla_nest_end(short_pfc.get(), ieee);
  auto config = ParseDcbIeeeReply(nlmsg_hdr(short_pfc.get()));
  ASSERT_TRUE(config) << config.error().ToString();
  EXPECT_EQ(config->pfc_cap, 4);
  EXPECT_EQ(config->enabled_mask, 0x81);
  EXPECT_FALSE(config->requests);
  EXPECT_FALSE(config->indications);

  Msg no_pfc = DcbReply(DCB_CMD_IEEE_GET);  // CEE-only driver: IEEE nest without PFC
  PutEmptyNest(no_pfc.get(), DCB_ATTR_IEEE);
  EXPECT_EQ(ParseDcbIeeeReply(nlmsg_hdr(no_pfc.get())).error().code(), StatusCode::kUnimplemented);

  Msg no_ieee = DcbReply(DCB_CMD_IEEE_GET);
  EXPECT_EQ(ParseDcbIeeeReply(nlmsg_hdr(no_ieee.get())).error().code(), StatusCode::kUnimplemented);

  Msg wrong = DcbReply(DCB_CMD_GDCBX);
  EXPECT_EQ(ParseDcbIeeeReply(nlmsg_hdr(wrong.get())).error().code(), StatusCode::kInvalidArgument);
}

TEST(DcbRequestTest, IeeeGetWithTheNetdevName) {
  NlMessage msg = BuildDcbIeeeRequest("eth0");
  ASSERT_TRUE(msg);
  nlmsghdr* hdr = nlmsg_hdr(msg.get());
  EXPECT_EQ(hdr->nlmsg_type, RTM_GETDCB);
  EXPECT_EQ(hdr->nlmsg_flags & (NLM_F_REQUEST | NLM_F_DUMP), NLM_F_REQUEST);
  dcbmsg header;
  std::memcpy(&header, nlmsg_data(hdr), sizeof(header));
  EXPECT_EQ(header.dcb_family, AF_UNSPEC);
  EXPECT_EQ(header.cmd, DCB_CMD_IEEE_GET);
  std::array<nlattr*, DCB_ATTR_MAX + 1> tb{};
  ASSERT_EQ(nlmsg_parse(hdr, sizeof(dcbmsg), tb.data(), DCB_ATTR_MAX, nullptr), 0);
  ASSERT_NE(tb[DCB_ATTR_IFNAME], nullptr);
  EXPECT_STREQ(static_cast<const char*>(nla_data(tb[DCB_ATTR_IFNAME])), "eth0");
}

}  // namespace
}  // namespace fabricwatch::sys
