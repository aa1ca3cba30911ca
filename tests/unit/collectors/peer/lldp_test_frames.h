#pragma once
// LLDP frames for the tests (IEEE 802.1AB-2016 clause 8 layouts): a builder of TLVs, a frame as
// a leaf switch sends it, and one captured from lldpd 1.0.16 on a veth.

#include <cstdint>
#include <string_view>
#include <vector>

namespace fabricwatch::peer::testing {

class LldpFrameBuilder {
 public:
  // Starts with the Ethernet header: nearest-bridge group address, `source`, EtherType 0x88cc.
  explicit LldpFrameBuilder(const std::vector<uint8_t>& source = {0x0c, 0x42, 0xa1, 0x07, 0x00,
                                                                  0x12}) {
    bytes_ = {0x01, 0x80, 0xc2, 0x00, 0x00, 0x0e};
    bytes_.insert(bytes_.end(), source.begin(), source.end());
    bytes_.push_back(0x88);
    bytes_.push_back(0xcc);
  }
  // §8.4.1: 7-bit type, 9-bit length.
  LldpFrameBuilder& Tlv(uint8_t type, const std::vector<uint8_t>& value) {
    return TlvWithLength(type, static_cast<uint16_t>(value.size()), value);
  }
  LldpFrameBuilder& TlvWithLength(uint8_t type, uint16_t length,
                                  const std::vector<uint8_t>& value) {
    bytes_.push_back(static_cast<uint8_t>(type << 1 | (length >> 8 & 1)));
    bytes_.push_back(static_cast<uint8_t>(length & 0xff));
    bytes_.insert(bytes_.end(), value.begin(), value.end());
    return *this;
  }
  LldpFrameBuilder& Text(uint8_t type, std::string_view text, uint8_t subtype = 0,
                         bool with_subtype = false) {
    std::vector<uint8_t> value;
    if (with_subtype) value.push_back(subtype);
    value.insert(value.end(), text.begin(), text.end());
    return Tlv(type, value);
  }
  LldpFrameBuilder& ChassisMac(const std::vector<uint8_t>& mac) {
    std::vector<uint8_t> value = {4};
    value.insert(value.end(), mac.begin(), mac.end());
    return Tlv(1, value);
  }
  LldpFrameBuilder& PortName(std::string_view name) { return Text(2, name, 5, true); }
  LldpFrameBuilder& Ttl(uint16_t seconds) {
    return Tlv(3, {static_cast<uint8_t>(seconds >> 8), static_cast<uint8_t>(seconds)});
  }
  LldpFrameBuilder& End() { return Tlv(0, {}); }
  LldpFrameBuilder& Raw(const std::vector<uint8_t>& bytes) {
    bytes_.insert(bytes_.end(), bytes.begin(), bytes.end());
    return *this;
  }
  // The LLDPDU alone (after the EtherType).
  std::vector<uint8_t> Pdu() const { return {bytes_.begin() + 14, bytes_.end()}; }
  const std::vector<uint8_t>& Frame() const { return bytes_; }

 private:
  std::vector<uint8_t> bytes_;
};

// A leaf switch port as a SONiC/EOS switch announces it: chassis id the switch MAC, port id the
// ifName "Ethernet12", TTL 120, port description, system name and description, capabilities
// (bridge, router), IPv4 management address (ifIndex numbering), an 802.1 port VLAN id TLV, End.
inline std::vector<uint8_t> LeafSwitchFrame(uint16_t ttl = 120) {
  LldpFrameBuilder b;
  b.ChassisMac({0x0c, 0x42, 0xa1, 0x07, 0x00, 0x00})
      .PortName("Ethernet12")
      .Ttl(ttl)
      .Text(4, "node3:mlx5_2 p1")
      .Text(5, "leaf07")
      .Text(6, "SONiC Software Version: SONiC.202305 - HwSku: Mellanox-SN4700 - ASIC: mellanox")
      .Tlv(7, {0x00, 0x14, 0x00, 0x14})
      .Tlv(8, {0x05, 0x01, 10, 0, 7, 1, 0x02, 0x00, 0x00, 0x00, 0x01, 0x00})
      .Tlv(127, {0x00, 0x80, 0xc2, 0x01, 0x00, 0x64})
      .End();
  return b.Frame();
}

// lldpd 1.0.16 on veth fwl-a (system name leaf07, description "leaf07 test switch", port id the
// ifname, port description "uplink to node3", tx-interval 1 so TTL 4, management address
// 192.0.2.1, two dot3 TLVs), as an AF_PACKET socket on the peer veth received it.
inline const std::vector<uint8_t>& LldpdCapturedFrame() {
  static const std::vector<uint8_t> frame = {
      0x01, 0x80, 0xc2, 0x00, 0x00, 0x0e, 0xee, 0xf4, 0x11, 0x85, 0xc3, 0x66, 0x88, 0xcc,
      0x02, 0x07, 0x04, 0xee, 0xf4, 0x11, 0x85, 0xc3, 0x66, 0x04, 0x06, 0x05, 0x66, 0x77,
      0x6c, 0x2d, 0x61, 0x06, 0x02, 0x00, 0x04, 0x0a, 0x06, 0x6c, 0x65, 0x61, 0x66, 0x30,
      0x37, 0x0c, 0x12, 0x6c, 0x65, 0x61, 0x66, 0x30, 0x37, 0x20, 0x74, 0x65, 0x73, 0x74,
      0x20, 0x73, 0x77, 0x69, 0x74, 0x63, 0x68, 0x0e, 0x04, 0x00, 0x9c, 0x00, 0x80, 0x10,
      0x0c, 0x05, 0x01, 0xc0, 0x00, 0x02, 0x01, 0x02, 0x00, 0x00, 0x00, 0x16, 0x00, 0x08,
      0x0f, 0x75, 0x70, 0x6c, 0x69, 0x6e, 0x6b, 0x20, 0x74, 0x6f, 0x20, 0x6e, 0x6f, 0x64,
      0x65, 0x33, 0xfe, 0x09, 0x00, 0x12, 0x0f, 0x03, 0x01, 0x00, 0x00, 0x00, 0x00, 0xfe,
      0x09, 0x00, 0x12, 0x0f, 0x01, 0x00, 0x80, 0x00, 0x00, 0x36, 0x00, 0x00};
  return frame;
}

}  // namespace fabricwatch::peer::testing
