// Tests of the ethtool netlink requests (ethtool_netlink.h): the attributes and nests the kernel's
// request policies expect, checked by parsing the built messages back.

#include "collectors/ethtool_source/ethtool_netlink.h"

#include <gtest/gtest.h>
#include <linux/genetlink.h>
#include <netlink/attr.h>
#include <netlink/genl/genl.h>
#include <netlink/msg.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <vector>

namespace fabricwatch::sys {
namespace {

TEST(EthtoolStandardStatsRequestTest, HeaderNestAndCompactGroupsBitset) {
  NlMessage msg = BuildStandardStatsRequest(0x1d, "eth0");
  ASSERT_TRUE(msg);
  const nlmsghdr* hdr = nlmsg_hdr(msg.get());
  EXPECT_EQ(hdr->nlmsg_type, 0x1d);
  EXPECT_EQ(hdr->nlmsg_flags & (NLM_F_REQUEST | NLM_F_DUMP), NLM_F_REQUEST);
  const auto* genl = static_cast<const genlmsghdr*>(nlmsg_data(hdr));
  EXPECT_EQ(genl->cmd, 32);  // ETHTOOL_MSG_STATS_GET
  EXPECT_EQ(genl->version, 1);

  // Top level, in order: header nest (2), groups bitset nest (3); nothing else.
  std::vector<int> types;
  const nlattr* header = nullptr;
  const nlattr* groups = nullptr;
  const nlattr* attr;
  int rem;
  nla_for_each_attr(attr, genlmsg_attrdata(genl, 0), genlmsg_attrlen(genl, 0), rem) {
    types.push_back(attr->nla_type);
    if (nla_type(attr) == 2) header = attr;
    if (nla_type(attr) == 3) groups = attr;
  }
  EXPECT_EQ(rem, 0);
  // NLA_F_NESTED on both: the kernel's strict nested parsing rejects a nest without it.
  EXPECT_EQ(types, (std::vector<int>{2 | NLA_F_NESTED, 3 | NLA_F_NESTED}));
  ASSERT_NE(header, nullptr);
  ASSERT_NE(groups, nullptr);

  std::array<nlattr*, 4> h{};
  ASSERT_EQ(nla_parse_nested(h.data(), 3, const_cast<nlattr*>(header), nullptr), 0);
  ASSERT_NE(h[2], nullptr);
  EXPECT_STREQ(static_cast<const char*>(nla_data(h[2])), "eth0");  // DEV_NAME
  EXPECT_EQ(h[1], nullptr);                                        // no DEV_INDEX
  EXPECT_EQ(h[3], nullptr);  // no FLAGS: ETHTOOL_FLAG_STATS is EINVAL for STATS_GET

  std::array<nlattr*, 6> b{};  // enum ETHTOOL_A_BITSET_*
  ASSERT_EQ(nla_parse_nested(b.data(), 5, const_cast<nlattr*>(groups), nullptr), 0);
  ASSERT_NE(b[1], nullptr);  // NOMASK flag
  EXPECT_EQ(nla_len(b[1]), 0);
  ASSERT_NE(b[2], nullptr);  // SIZE
  EXPECT_EQ(nla_get_u32(b[2]), 4u);
  EXPECT_EQ(b[3], nullptr);  // no BITS list: compact form
  ASSERT_NE(b[4], nullptr);  // VALUE: one u32 word
  ASSERT_EQ(nla_len(b[4]), 4);
  uint32_t value;
  std::memcpy(&value, nla_data(b[4]), sizeof(value));
  EXPECT_EQ(value, 0xfu);
  EXPECT_EQ(b[5], nullptr);  // no MASK with NOMASK
}

TEST(ModuleEepromRequestTest, HeaderNestAndAllAddressAttributes) {
  NlMessage msg =
      BuildModuleEepromRequest(0x1d, "eth0", ModulePageRead{0x50, 0x11, 0, 128, 96, 640});
  ASSERT_TRUE(msg);
  const nlmsghdr* hdr = nlmsg_hdr(msg.get());
  EXPECT_EQ(hdr->nlmsg_type, 0x1d);
  EXPECT_EQ(hdr->nlmsg_flags & (NLM_F_REQUEST | NLM_F_DUMP), NLM_F_REQUEST);
  const auto* genl = static_cast<const genlmsghdr*>(nlmsg_data(hdr));
  EXPECT_EQ(genl->cmd, 31);  // ETHTOOL_MSG_MODULE_EEPROM_GET
  EXPECT_EQ(genl->version, 1);
  std::vector<int> types;
  const nlattr* attr;
  int rem;
  nla_for_each_attr(attr, genlmsg_attrdata(genl, 0), genlmsg_attrlen(genl, 0), rem) {
    types.push_back(attr->nla_type);
  }
  EXPECT_EQ(rem, 0);
  EXPECT_EQ(types, (std::vector<int>{1 | NLA_F_NESTED, 2, 3, 4, 5, 6}));
  std::array<nlattr*, 8> tb{};
  ASSERT_EQ(genlmsg_parse(const_cast<nlmsghdr*>(hdr), 0, tb.data(), 7, nullptr), 0);
  std::array<nlattr*, 4> h{};
  ASSERT_EQ(nla_parse_nested(h.data(), 3, tb[1], nullptr), 0);
  ASSERT_NE(h[2], nullptr);
  EXPECT_STREQ(static_cast<const char*>(nla_data(h[2])), "eth0");
  EXPECT_EQ(h[3], nullptr);  // no flags
  EXPECT_EQ(nla_len(tb[2]), 4);
  EXPECT_EQ(nla_get_u32(tb[2]), 128u);  // OFFSET
  EXPECT_EQ(nla_get_u32(tb[3]), 96u);   // LENGTH
  EXPECT_EQ(nla_len(tb[4]), 1);
  EXPECT_EQ(nla_get_u8(tb[4]), 0x11);  // PAGE
  EXPECT_EQ(nla_get_u8(tb[5]), 0);     // BANK
  EXPECT_EQ(nla_get_u8(tb[6]), 0x50);  // I2C_ADDRESS
  EXPECT_EQ(tb[7], nullptr);
}

}  // namespace
}  // namespace fabricwatch::sys
