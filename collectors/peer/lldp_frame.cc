#include "collectors/peer/lldp_frame.h"

#include <arpa/inet.h>
#include <sys/socket.h>

#include <algorithm>
#include <array>
#include <cstdio>

#include "base/utf8.h"

namespace fabricwatch::peer {
namespace {

// TLV types, IEEE 802.1AB-2016 §8.4.1 table 8-1.
enum TlvType : uint8_t {
  kEnd = 0,
  kChassisId = 1,
  kPortId = 2,
  kTtl = 3,
  kPortDescription = 4,
  kSystemName = 5,
  kSystemDescription = 6,
  kManagementAddress = 8,
};

// IANA address family numbers, as the network-address subtypes and §8.5.9.3 use them.
constexpr uint8_t kFamilyIpv4 = 1;
constexpr uint8_t kFamilyIpv6 = 2;
constexpr uint8_t kFamily802 = 6;

tl::unexpected<Status> Fail(LldpReject reason, std::string_view why, LldpReject* out) {
  if (out != nullptr) *out = reason;
  return Error(StatusCode::kInvalidArgument, "LLDP frame: " + std::string(why));
}

std::string Hex(std::span<const uint8_t> bytes) {
  std::string out;
  out.reserve(bytes.size() * 3);
  char buf[4];
  for (size_t i = 0; i < bytes.size(); ++i) {
    std::snprintf(buf, sizeof(buf), i == 0 ? "%02x" : ":%02x", bytes[i]);
    out += buf;
  }
  return out;
}

std::string_view AsText(std::span<const uint8_t> bytes) {
  return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

// Some agents count a terminating NUL in the length; it is not part of the name.
std::span<const uint8_t> TrimNuls(std::span<const uint8_t> bytes) {
  while (!bytes.empty() && bytes.back() == 0) bytes = bytes.first(bytes.size() - 1);
  return bytes;
}

bool Printable(std::string_view text) {
  if (text.empty() || !IsValidLldpText(text)) return false;
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) return false;
  }
  return true;
}

// An address with its IANA family byte first (§8.5.2.3 subtype 5, §8.5.9.3).
std::string FormatAddress(std::span<const uint8_t> bytes) {
  if (bytes.size() == 5 && bytes[0] == kFamilyIpv4) {
    char buf[INET_ADDRSTRLEN];
    if (inet_ntop(AF_INET, bytes.data() + 1, buf, sizeof(buf)) != nullptr) return buf;
  }
  if (bytes.size() == 17 && bytes[0] == kFamilyIpv6) {
    char buf[INET6_ADDRSTRLEN];
    if (inet_ntop(AF_INET6, bytes.data() + 1, buf, sizeof(buf)) != nullptr) return buf;
  }
  if (bytes.size() == 7 && bytes[0] == kFamily802) return Hex(bytes.subspan(1));
  return Hex(bytes);
}

// A chassis or port id value (the bytes after the subtype).
std::string FormatId(bool is_mac, bool is_address, std::span<const uint8_t> value) {
  if (is_mac && value.size() == 6) return Hex(value);
  if (is_address) return FormatAddress(value);
  const std::span<const uint8_t> trimmed = TrimNuls(value);
  if (Printable(AsText(trimmed))) return std::string(AsText(trimmed));
  return Hex(value);
}

struct Tlv {
  uint8_t type = 0;
  std::span<const uint8_t> value;
};

// Reads the TLV at `pos`, advancing it. False with `reason` set when it does not fit.
bool NextTlv(std::span<const uint8_t> pdu, size_t& pos, Tlv& tlv, LldpReject& reason,
             std::string& why) {
  if (pdu.size() - pos < 2) {
    reason = LldpReject::kTruncated;
    why = "truncated TLV header at offset " + std::to_string(pos);
    return false;
  }
  // §8.4.1: 7-bit type, 9-bit length, network byte order.
  const uint16_t header = static_cast<uint16_t>(pdu[pos] << 8 | pdu[pos + 1]);
  tlv.type = static_cast<uint8_t>(header >> 9);
  const size_t length = header & 0x1ff;
  if (pdu.size() - pos - 2 < length) {
    reason = LldpReject::kTlvOverrun;
    why = "TLV type " + std::to_string(tlv.type) + " length " + std::to_string(length) +
          " runs past the end of the frame at offset " + std::to_string(pos);
    return false;
  }
  tlv.value = pdu.subspan(pos + 2, length);
  pos += 2 + length;
  return true;
}

// A string TLV of §8.5.4-8.5.6 into `out`, unless one was already read.
bool ReadString(const Tlv& tlv, std::string_view name, std::string& out, bool& seen,
                LldpReject& reason, std::string& why) {
  if (tlv.value.size() > kMaxLldpStringBytes) {
    reason = LldpReject::kTooLong;
    why = std::string(name) + " longer than 255 bytes";
    return false;
  }
  const std::string_view text = AsText(TrimNuls(tlv.value));
  if (!IsValidLldpText(text)) {
    reason = LldpReject::kInvalidUtf8;
    why = std::string(name) + " is not valid UTF-8";
    return false;
  }
  if (!seen) out.assign(text);
  seen = true;
  return true;
}

// §8.5.9: string length (2-32: subtype + address), subtype, address, interface numbering
// subtype, interface number (4 bytes), OID string length, OID. Only the address is kept; a
// malformed one is ignored (it is optional and says nothing about the port).
void ReadManagementAddress(const Tlv& tlv, std::optional<std::string>& out) {
  if (out.has_value() || tlv.value.empty()) return;
  const size_t length = tlv.value[0];
  if (length < 2 || length > 32 || tlv.value.size() < 1 + length) return;
  out = FormatAddress(tlv.value.subspan(1, length));
}

// The mandatory TLV of `type` at the head of the LLDPDU (§8.2: chassis id, port id, TTL).
bool ReadMandatory(std::span<const uint8_t> pdu, size_t& pos, uint8_t type, Tlv& tlv,
                   LldpReject& reason, std::string& why) {
  static constexpr std::array<std::string_view, 4> kNames = {"", "chassis id", "port id", "TTL"};
  if (!NextTlv(pdu, pos, tlv, reason, why)) return false;
  if (tlv.type != type) {
    reason = LldpReject::kMissingMandatory;
    why = std::string(kNames[type]) + " TLV missing (TLV type " + std::to_string(tlv.type) +
          " in its place)";
    return false;
  }
  // Ids: subtype + 1-255 octets (§8.5.2.1, §8.5.3.1); TTL: 2 octets (§8.5.4.1).
  const bool bad = type == kTtl ? tlv.value.size() != 2 : tlv.value.size() < 2;
  if (bad || (type != kTtl && tlv.value.size() > 256)) {
    reason = LldpReject::kBadMandatory;
    why = std::string(kNames[type]) + " TLV of length " + std::to_string(tlv.value.size());
    return false;
  }
  return true;
}

}  // namespace

std::string_view LldpRejectName(LldpReject reason) {
  switch (reason) {
    case LldpReject::kTruncated:
      return "truncated";
    case LldpReject::kTlvOverrun:
      return "tlv_overrun";
    case LldpReject::kMissingMandatory:
      return "missing_mandatory";
    case LldpReject::kBadMandatory:
      return "bad_mandatory";
    case LldpReject::kInvalidUtf8:
      return "invalid_utf8";
    case LldpReject::kTooLong:
      return "too_long";
    case LldpReject::kNotLldp:
      return "not_lldp";
  }
  return "unknown";
}

bool IsValidLldpText(std::string_view text) { return IsValidUtf8(text); }

Result<LldpNeighbor> ParseLldpdu(std::span<const uint8_t> pdu, LldpReject* reason_out) {
  LldpReject reason = LldpReject::kTruncated;
  std::string why;
  size_t pos = 0;
  Tlv chassis, port, ttl;
  if (!ReadMandatory(pdu, pos, kChassisId, chassis, reason, why) ||
      !ReadMandatory(pdu, pos, kPortId, port, reason, why) ||
      !ReadMandatory(pdu, pos, kTtl, ttl, reason, why)) {
    return Fail(reason, why, reason_out);
  }
  LldpNeighbor n;
  n.chassis_id_subtype = chassis.value[0];
  n.chassis_id =
      FormatId(n.chassis_id_subtype == kChassisIdMac,
               n.chassis_id_subtype == kChassisIdNetworkAddress, chassis.value.subspan(1));
  n.port_id_subtype = port.value[0];
  n.port_id = FormatId(n.port_id_subtype == kPortIdMac, n.port_id_subtype == kPortIdNetworkAddress,
                       port.value.subspan(1));
  n.ttl_seconds = static_cast<uint32_t>(ttl.value[0] << 8 | ttl.value[1]);
  bool seen_port_descr = false, seen_name = false, seen_descr = false;
  // §8.2: the End TLV is last; padding after it is not parsed. A frame whose TLVs end exactly
  // at its end without one is accepted (802.1AB-2009 and later make End optional in practice:
  // agents that fill the frame omit it).
  while (pos < pdu.size()) {
    Tlv tlv;
    if (!NextTlv(pdu, pos, tlv, reason, why)) return Fail(reason, why, reason_out);
    bool ok = true;
    switch (tlv.type) {
      case kEnd:
        return n;
      case kChassisId:
      case kPortId:
      case kTtl:
        return Fail(LldpReject::kBadMandatory,
                    "a second mandatory TLV (type " + std::to_string(tlv.type) + ")", reason_out);
      case kPortDescription:
        ok = ReadString(tlv, "port description", n.port_description, seen_port_descr, reason, why);
        break;
      case kSystemName:
        ok = ReadString(tlv, "system name", n.system_name, seen_name, reason, why);
        break;
      case kSystemDescription:
        ok = ReadString(tlv, "system description", n.system_description, seen_descr, reason, why);
        break;
      case kManagementAddress:
        ReadManagementAddress(tlv, n.management_address);
        break;
      default:
        break;  // capabilities, organizationally specific, reserved: not needed
    }
    if (!ok) return Fail(reason, why, reason_out);
  }
  return n;
}

Result<LldpNeighbor> ParseLldpFrame(std::span<const uint8_t> frame, LldpReject* reason_out) {
  // Ethernet II: destination (6), source (6), EtherType (2); an 802.1Q/802.1ad tag (4) may sit
  // before the EtherType when the kernel did not strip it.
  size_t offset = 12;
  for (int tags = 0; tags < 2; ++tags) {
    if (frame.size() < offset + 2) {
      return Fail(LldpReject::kNotLldp, "shorter than an Ethernet header", reason_out);
    }
    const uint16_t type = static_cast<uint16_t>(frame[offset] << 8 | frame[offset + 1]);
    if (type == kEtherTypeLldp) return ParseLldpdu(frame.subspan(offset + 2), reason_out);
    if (type != 0x8100 && type != 0x88a8) break;
    offset += 4;
  }
  return Fail(LldpReject::kNotLldp, "EtherType is not 0x88cc", reason_out);
}

std::string_view LldpPeerName(const LldpNeighbor& neighbor) {
  return neighbor.system_name.empty() ? neighbor.chassis_id : neighbor.system_name;
}

std::string_view LldpPeerPort(const LldpNeighbor& neighbor) {
  const uint8_t subtype = neighbor.port_id_subtype;
  if (neighbor.port_description.empty() || subtype == kPortIdInterfaceName ||
      subtype == kPortIdInterfaceAlias) {
    return neighbor.port_id;
  }
  if (subtype == kPortIdLocal) {
    const bool number = std::all_of(neighbor.port_id.begin(), neighbor.port_id.end(),
                                    [](char c) { return c >= '0' && c <= '9'; });
    return number ? neighbor.port_description : neighbor.port_id;
  }
  return neighbor.port_description;
}

}  // namespace fabricwatch::peer
