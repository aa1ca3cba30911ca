// LLDP frame parser (collectors/peer/lldp_frame.h): a leaf switch's frame and lldpd's own, id
// formatting by subtype, shutdown LLDPDUs, padding, VLAN tags, and every rejection the issue
// lists (truncated, a TLV past the end, missing or misplaced mandatory TLVs, zero-length ids,
// invalid UTF-8, strings over 255 bytes) with its reason.

#include "collectors/peer/lldp_frame.h"

#include <gtest/gtest.h>

#include "tests/unit/collectors/peer/lldp_test_frames.h"

namespace fabricwatch::peer {
namespace {

using testing::LldpFrameBuilder;

TEST(LldpFrameTest, ALeafSwitchFrame) {
  auto n = ParseLldpFrame(testing::LeafSwitchFrame());
  ASSERT_TRUE(n) << n.error().ToString();
  EXPECT_EQ(n->chassis_id_subtype, kChassisIdMac);
  EXPECT_EQ(n->chassis_id, "0c:42:a1:07:00:00");
  EXPECT_EQ(n->port_id_subtype, kPortIdInterfaceName);
  EXPECT_EQ(n->port_id, "Ethernet12");
  EXPECT_EQ(n->ttl_seconds, 120u);
  EXPECT_EQ(n->port_description, "node3:mlx5_2 p1");
  EXPECT_EQ(n->system_name, "leaf07");
  EXPECT_EQ(n->system_description,
            "SONiC Software Version: SONiC.202305 - HwSku: Mellanox-SN4700 - ASIC: mellanox");
  ASSERT_TRUE(n->management_address.has_value());
  EXPECT_EQ(*n->management_address, "10.0.7.1");
  EXPECT_EQ(LldpPeerName(*n), "leaf07");
  EXPECT_EQ(LldpPeerPort(*n), "Ethernet12");
}

TEST(LldpFrameTest, AFrameCapturedFromLldpd) {
  auto n = ParseLldpFrame(testing::LldpdCapturedFrame());
  ASSERT_TRUE(n) << n.error().ToString();
  EXPECT_EQ(n->chassis_id, "ee:f4:11:85:c3:66");
  EXPECT_EQ(n->port_id, "fwl-a");
  EXPECT_EQ(n->ttl_seconds, 4u);
  EXPECT_EQ(n->system_name, "leaf07");
  EXPECT_EQ(n->system_description, "leaf07 test switch");
  EXPECT_EQ(n->port_description, "uplink to node3");
  EXPECT_EQ(n->management_address.value_or(""), "192.0.2.1");
  // The same LLDPDU without its Ethernet header.
  const auto& frame = testing::LldpdCapturedFrame();
  auto pdu = ParseLldpdu(std::span(frame).subspan(14));
  ASSERT_TRUE(pdu);
  EXPECT_EQ(*pdu, *n);
}

TEST(LldpFrameTest, IdsAreFormattedByTheirSubtype) {
  struct Case {
    std::vector<uint8_t> chassis;  // subtype + value
    std::string want;
  };
  const Case cases[] = {
      {{4, 0xaa, 0xbb, 0xcc, 0x00, 0x11, 0x22}, "aa:bb:cc:00:11:22"},
      {{5, 1, 192, 0, 2, 9}, "192.0.2.9"},
      {{5, 2, 0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}, "2001:db8::1"},
      {{7, 's', 'w', '1', 0}, "sw1"},                 // a trailing NUL is not part of it
      {{7, 0x01, 0x02, 0xff}, "01:02:ff"},            // not printable: hex
      {{4, 0xaa, 0xbb}, "aa:bb"},                     // a MAC of the wrong size: hex
      {{6, 'E', 't', 'h', '1', '/', '1'}, "Eth1/1"},  // ifName
  };
  for (const Case& c : cases) {
    LldpFrameBuilder b;
    b.Tlv(1, c.chassis).PortName("p").Ttl(120).End();
    auto n = ParseLldpFrame(b.Frame());
    ASSERT_TRUE(n) << n.error().ToString();
    EXPECT_EQ(n->chassis_id_subtype, c.chassis[0]);
    EXPECT_EQ(n->chassis_id, c.want);
  }
}

TEST(LldpFrameTest, PeerNameAndPortFallBacks) {
  LldpFrameBuilder b;
  b.ChassisMac({2, 0, 0, 0, 0, 1}).Tlv(2, {3, 2, 0, 0, 0, 0, 2}).Ttl(30).Text(4, "swp7").End();
  auto n = ParseLldpFrame(b.Frame());
  ASSERT_TRUE(n);
  EXPECT_EQ(n->port_id, "02:00:00:00:00:02");
  EXPECT_EQ(LldpPeerName(*n), "02:00:00:00:00:01");  // no system name: the chassis id
  EXPECT_EQ(LldpPeerPort(*n), "swp7");               // a MAC port id: its description
}

TEST(LldpFrameTest, ShutdownPaddingEndlessAndTaggedFramesAreAccepted) {
  auto shutdown = ParseLldpFrame(testing::LeafSwitchFrame(0));
  ASSERT_TRUE(shutdown);
  EXPECT_EQ(shutdown->ttl_seconds, 0u);
  // Padded to the minimum frame size after End: the padding is not parsed.
  LldpFrameBuilder padded;
  padded.ChassisMac({2, 0, 0, 0, 0, 1}).PortName("p1").Ttl(9).End().Raw({0xff, 0xff, 0x12});
  EXPECT_TRUE(ParseLldpFrame(padded.Frame()));
  // No End TLV: the TLVs end with the frame.
  LldpFrameBuilder endless;
  endless.ChassisMac({2, 0, 0, 0, 0, 1}).PortName("p1").Ttl(9).Text(5, "sw");
  auto n = ParseLldpFrame(endless.Frame());
  ASSERT_TRUE(n);
  EXPECT_EQ(n->system_name, "sw");
  // An 802.1Q tag before the EtherType.
  std::vector<uint8_t> tagged = testing::LeafSwitchFrame();
  tagged.insert(tagged.begin() + 12, {0x81, 0x00, 0x00, 0x64});
  EXPECT_TRUE(ParseLldpFrame(tagged));
  // Reserved and repeated optional TLVs: skipped, the first value kept.
  LldpFrameBuilder odd;
  odd.ChassisMac({2, 0, 0, 0, 0, 1})
      .PortName("p1")
      .Ttl(9)
      .Text(5, "first")
      .Tlv(42, {1, 2})
      .Text(5, "second")
      .End();
  auto o = ParseLldpFrame(odd.Frame());
  ASSERT_TRUE(o);
  EXPECT_EQ(o->system_name, "first");
}

TEST(LldpFrameTest, BadFramesAreRejectedWithTheirReason) {
  struct Case {
    std::string name;
    std::vector<uint8_t> frame;
    LldpReject reason;
    std::string says;
  };
  const std::vector<uint8_t> mac = {2, 0, 0, 0, 0, 1};
  std::vector<uint8_t> truncated = testing::LeafSwitchFrame();
  truncated.resize(14 + 9 + 1);  // inside the port id TLV's header
  std::vector<uint8_t> cut_value = testing::LeafSwitchFrame();
  cut_value.resize(14 + 9 + 4);  // inside the port id value
  std::vector<uint8_t> ipx = testing::LeafSwitchFrame();
  ipx[12] = 0x81, ipx[13] = 0x37;
  const Case cases[] = {
      {"empty LLDPDU", LldpFrameBuilder().Frame(), LldpReject::kTruncated, "truncated"},
      {"truncated header", truncated, LldpReject::kTruncated, "truncated"},
      {"value cut", cut_value, LldpReject::kTlvOverrun, "runs past the end"},
      {"length past end",
       LldpFrameBuilder().ChassisMac(mac).PortName("p").Ttl(5).TlvWithLength(5, 300, {'a'}).Frame(),
       LldpReject::kTlvOverrun, "length 300"},
      {"no chassis id", LldpFrameBuilder().PortName("p").Ttl(5).End().Frame(),
       LldpReject::kMissingMandatory, "chassis id TLV missing"},
      {"port before chassis", LldpFrameBuilder().PortName("p").ChassisMac(mac).Ttl(5).Frame(),
       LldpReject::kMissingMandatory, "chassis id"},
      {"no TTL", LldpFrameBuilder().ChassisMac(mac).PortName("p").End().Frame(),
       LldpReject::kMissingMandatory, "TTL TLV missing"},
      {"only End", LldpFrameBuilder().End().Frame(), LldpReject::kMissingMandatory, "missing"},
      {"zero-length chassis id", LldpFrameBuilder().Tlv(1, {4}).PortName("p").Ttl(5).Frame(),
       LldpReject::kBadMandatory, "chassis id TLV of length 1"},
      {"empty port id TLV", LldpFrameBuilder().ChassisMac(mac).Tlv(2, {}).Ttl(5).Frame(),
       LldpReject::kBadMandatory, "port id TLV of length 0"},
      {"3-byte TTL", LldpFrameBuilder().ChassisMac(mac).PortName("p").Tlv(3, {0, 0, 5}).Frame(),
       LldpReject::kBadMandatory, "TTL TLV of length 3"},
      {"second chassis id",
       LldpFrameBuilder().ChassisMac(mac).PortName("p").Ttl(5).ChassisMac(mac).Frame(),
       LldpReject::kBadMandatory, "second mandatory"},
      {"system name not UTF-8",
       LldpFrameBuilder().ChassisMac(mac).PortName("p").Ttl(5).Text(5, "leaf\xc3\x28").Frame(),
       LldpReject::kInvalidUtf8, "system name is not valid UTF-8"},
      {"overlong UTF-8 description",
       LldpFrameBuilder().ChassisMac(mac).PortName("p").Ttl(5).Text(4, "a\xc0\xaf").Frame(),
       LldpReject::kInvalidUtf8, "port description"},
      {"system description over 255",
       LldpFrameBuilder()
           .ChassisMac(mac)
           .PortName("p")
           .Ttl(5)
           .Text(6, std::string(256, 'd'))
           .Frame(),
       LldpReject::kTooLong, "longer than 255"},
      {"not LLDP", ipx, LldpReject::kNotLldp, "0x88cc"},
      {"short Ethernet header", {0x01, 0x80, 0xc2}, LldpReject::kNotLldp, "Ethernet header"},
  };
  for (const Case& c : cases) {
    LldpReject reason = LldpReject::kNotLldp;
    if (c.reason == LldpReject::kNotLldp) reason = LldpReject::kTruncated;
    auto n = ParseLldpFrame(c.frame, &reason);
    ASSERT_FALSE(n) << c.name;
    EXPECT_EQ(reason, c.reason) << c.name << ": " << n.error().message();
    EXPECT_EQ(n.error().code(), StatusCode::kInvalidArgument) << c.name;
    EXPECT_NE(n.error().message().find(c.says), std::string::npos)
        << c.name << ": " << n.error().message();
  }
}

TEST(LldpFrameTest, RejectNamesAreLabels) {
  EXPECT_EQ(LldpRejectName(LldpReject::kTruncated), "truncated");
  EXPECT_EQ(LldpRejectName(LldpReject::kTlvOverrun), "tlv_overrun");
  EXPECT_EQ(LldpRejectName(LldpReject::kInvalidUtf8), "invalid_utf8");
  EXPECT_EQ(LldpRejectName(LldpReject::kNotLldp), "not_lldp");
}

TEST(LldpFrameTest, EveryPrefixOfAGoodFrameIsHandled) {
  // A frame cut anywhere is accepted (when the cut falls between TLVs after the mandatory ones)
  // or rejected with a reason; never a crash. ASan/UBSan builds check the reads.
  const std::vector<uint8_t> frame = testing::LeafSwitchFrame();
  size_t accepted = 0;
  for (size_t len = 0; len < frame.size(); ++len) {
    auto n = ParseLldpFrame(std::span(frame).first(len));
    if (n) ++accepted;
  }
  EXPECT_GT(accepted, 0u);
  EXPECT_LT(accepted, frame.size());
}

}  // namespace
}  // namespace fabricwatch::peer
