#pragma once
// Parser of one received LLDP frame (IEEE 802.1AB-2016 clause 8), groundwork of the `peer`
// collector (issue 24, docs/design.md §5.10). Pure: a function of its bytes.
//
// Input: ParseLldpdu() takes the LLDPDU, the Ethernet payload after the EtherType 0x88cc (what an
// AF_PACKET SOCK_DGRAM socket returns); ParseLldpFrame() takes the whole frame as a SOCK_RAW
// socket returns it (destination, source, an optional 802.1Q tag, EtherType 0x88cc, LLDPDU; no
// FCS) and checks the EtherType before parsing the LLDPDU.
//
// An LLDPDU (§8.2, figure 8-1) is a sequence of TLVs, each a 16-bit header of a 7-bit type and a
// 9-bit length, then the value. The Chassis ID (type 1), Port ID (2) and Time To Live (3) TLVs
// are mandatory and come first, in this order (§8.2, §9.2.7.7.1); End Of LLDPDU (type 0) ends it
// and what follows (Ethernet padding) is ignored; a frame that runs out right after a whole TLV
// is taken as ended (the minimum-frame padding of zeros is itself an End TLV). Optional TLVs read:
// Port Description (4), System Name (5), System Description (6), Management Address (8, the first
// one); System Capabilities (7), organizationally specific (127) and reserved types are skipped.
// A repeated optional TLV keeps its first value.
//
// Bad input is an error naming it and a reason for the caller's counters, never a crash: a frame
// shorter than a TLV header (`truncated`), a TLV whose length runs past the end (`tlv_overrun`),
// a missing or misplaced mandatory TLV (`missing_mandatory`), a mandatory TLV of the wrong size
// (zero-length chassis or port id, a TTL not 2 bytes) or a second one (`bad_mandatory`), a string
// TLV that is not valid UTF-8 (`invalid_utf8`), a string over 255 bytes, the bound of the TLVs of
// §8.5.4-8.5.6 (`too_long`), a frame that is not LLDP (`not_lldp`). TTL 0 is valid: a shutdown
// LLDPDU (§9.2.7.7.3), after which the caller removes the neighbour.
// Thread-safety: functions of their arguments.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "base/status.h"

namespace fabricwatch::peer {

// §8.5.2.2 table 8-2 (chassis ID subtypes) and §8.5.3.2 table 8-3 (port ID subtypes).
inline constexpr uint8_t kChassisIdMac = 4;
inline constexpr uint8_t kChassisIdNetworkAddress = 5;
inline constexpr uint8_t kPortIdInterfaceAlias = 1;
inline constexpr uint8_t kPortIdMac = 3;
inline constexpr uint8_t kPortIdNetworkAddress = 4;
inline constexpr uint8_t kPortIdInterfaceName = 5;
inline constexpr uint8_t kPortIdLocal = 7;

inline constexpr size_t kMaxLldpStringBytes = 255;  // §8.5.4-8.5.6: at most 255 octets
inline constexpr uint16_t kEtherTypeLldp = 0x88cc;  // §7.2

struct LldpNeighbor {
  uint8_t chassis_id_subtype = 0;  // table 8-2
  // Formatted: a MAC as aa:bb:cc:dd:ee:ff, a network address as an IPv4/IPv6 address, a string
  // subtype as its text; bytes that are not printable UTF-8 as colon-separated hex.
  std::string chassis_id;
  uint8_t port_id_subtype = 0;  // table 8-3
  std::string port_id;          // formatted as chassis_id
  uint32_t ttl_seconds = 0;     // 0: shutdown LLDPDU, the neighbour is gone
  std::string port_description;
  std::string system_name;
  std::string system_description;
  std::optional<std::string> management_address;  // the first one, formatted as an id

  friend bool operator==(const LldpNeighbor&, const LldpNeighbor&) = default;
};

// Why a frame was rejected: the label of the caller's counter.
enum class LldpReject {
  kTruncated,
  kTlvOverrun,
  kMissingMandatory,
  kBadMandatory,
  kInvalidUtf8,
  kTooLong,
  kNotLldp,
};
inline constexpr size_t kLldpRejectCount = 7;
std::string_view LldpRejectName(LldpReject reason);  // "truncated", "tlv_overrun", ...

// One LLDPDU (the payload after the EtherType). On error, `*reason` (when given) says why.
Result<LldpNeighbor> ParseLldpdu(std::span<const uint8_t> lldpdu, LldpReject* reason = nullptr);

// One whole Ethernet frame (from the destination address, no FCS).
Result<LldpNeighbor> ParseLldpFrame(std::span<const uint8_t> frame, LldpReject* reason = nullptr);

// What design §5.10 exports: `peer_name` is the system name, else the chassis id; `peer_port` is
// the port as its switch names it, chosen by the port id subtype (IEEE 802.1AB-2016 table 8-3):
// an interface name (5) or alias (1) is the port id; a MAC (3), a network address (4), a port or
// agent circuit component (2, 6), an unknown subtype, and a locally assigned id (7) that is a bare
// number (Junos sends the SNMP ifIndex, `local 512`, and the name `xe-0/0/1` as the Port
// Description) give the description when there is one. A locally assigned name (Cisco ACI sends
// `local Eth1/39`) stays the port id.
std::string_view LldpPeerName(const LldpNeighbor& neighbor);
std::string_view LldpPeerPort(const LldpNeighbor& neighbor);

// Whether `text` is well-formed UTF-8 (RFC 3629: no overlongs, no surrogates, at most U+10FFFF).
bool IsValidLldpText(std::string_view text);

}  // namespace fabricwatch::peer
