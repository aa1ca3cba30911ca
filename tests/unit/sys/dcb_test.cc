// Tests of the DCB request and reply (dcb.h): RTM_GETDCB / DCB_CMD_IEEE_GET with struct ieee_pfc.

#include "collectors/sys/dcb.h"

#include <gtest/gtest.h>
#include <linux/dcbnl.h>
#include <netlink/attr.h>
#include <netlink/msg.h>
#include <sys/socket.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <vector>

#include "tests/unit/sys/netlink_test_messages.h"

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
