#pragma once
// Parser of `lldpctl -f keyvalue [<netdev>]` output (lldpd 1.0, src/client/kv_writer.c and
// display.c), the replay format of `--path.lldp=DIR/<netdev>` (docs/design.md §5.10, issue 24):
//     lldp.eth0.via=LLDP
//     lldp.eth0.rid=1
//     lldp.eth0.age=0 day, 00:00:03
//     lldp.eth0.chassis.mac=ee:f4:11:85:c3:66       the id, keyed by its subtype: mac, ip,
//     lldp.eth0.chassis.name=leaf07                  ifname, ifalias, local, unhandled
//     lldp.eth0.chassis.descr=SONiC Software Version ...
//     lldp.eth0.chassis.mgmt-ip=192.0.2.1
//     lldp.eth0.chassis.Bridge.enabled=on
//     lldp.eth0.port.ifname=Ethernet12               the port id, keyed the same way
//     lldp.eth0.port.descr=uplink to node3
//     lldp.eth0.port.ttl=120
//     lldp.eth0.port.auto-negotiation.supported=no
// kv_writer joins the nested tags with '.', replaces a tag by the value of its `name`/`type`
// attribute (so `interface` becomes the netdev and `id` the id subtype); the value is everything
// after the first '='. lldpd 0.9.2 and later turn a newline in a value into a space (commit
// 8755512e, "lldpcli: with key/value display, remove any newline"); older ones (0.7.x of Ubuntu
// 16.04 and CentOS 7) print the rest of the value as continuation lines without a key, as a Cisco
// switch's three-line system description arrives. A line that does not start with `lldp.` is such
// a continuation: it is joined to the value above it with a space, what newer lldpd prints.
// A netdev name may itself hold a '.' (a VLAN, eth0.100), so the netdev is everything between
// `lldp.` and the first known section (via, rid, age, alias, status, chassis, port, vlan, ppvid,
// pi, lldp-med, unknown-tlvs).
// lldpd prints the TTL only when it is known and non-zero (lldpd before 1.0 under `chassis.`,
// accepted too); a neighbour without one has ttl_seconds 0, which here means "not given": lldpd
// lists live neighbours only. Two neighbours on one netdev (a repeated `via`): the first is kept.
//
// Bad input never costs the good neighbours of the file, and never crashes: a neighbour block
// with a bad line is skipped, with a reason (LldpKeyValueSkip) and a message naming the line:
// invalid UTF-8, a value over 255 bytes (the LLDP string bound, after joining), a TTL that is not
// a number, a `lldp.` line that is not `lldp.<netdev>.<section>...=value`, a block without a
// chassis id or a port id (incomplete: a block cut short, or a VLAN-only fragment). A line that
// names no neighbour (a first line that is not `lldp.`) is skipped with netdev "". Only text over
// kMaxLldpKeyValueBytes fails as a whole. Other keys (VLANs, capabilities, LLDP-MED, dot3) are
// ignored. Thread-safety: functions of their arguments.

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "collectors/peer/lldp_frame.h"

namespace fabricwatch::peer {

inline constexpr size_t kMaxLldpKeyValueBytes = 1 << 20;

// Why a neighbour block (or a line outside any) was skipped: the `reason` label of
// fabric_port_peer_bad_records (collectors/peer/peer_metrics.h).
enum class LldpKeyValueSkip { kIncomplete, kMalformed, kInvalidUtf8, kTooLong, kBadTtl };
inline constexpr size_t kLldpKeyValueSkipCount = 5;
// "incomplete", "malformed", "invalid_utf8", "too_long", "bad_ttl"
std::string_view LldpKeyValueSkipName(LldpKeyValueSkip reason);

struct LldpKeyValueSkipped {
  std::string netdev;  // "" for a line that names no neighbour
  LldpKeyValueSkip reason;
  Status status;  // "lldpctl keyvalue line N: ..."
};

struct LldpKeyValueText {
  // netdev -> its neighbour; empty when the text names none (lldpctl prints nothing then).
  std::map<std::string, LldpNeighbor, std::less<>> neighbors;
  std::vector<LldpKeyValueSkipped> skipped;  // stray lines as met, then blocks by netdev
};

// The neighbours of the text and what was skipped; an error only for text over 1 MiB.
Result<LldpKeyValueText> ReadLldpKeyValue(std::string_view text);

// ReadLldpKeyValue's good neighbours alone (what was skipped is dropped).
Result<std::map<std::string, LldpNeighbor, std::less<>>> ParseLldpKeyValue(std::string_view text);

// lldpctl's names of the id subtypes (lldpd src/lib/atoms/chassis.c and port.c) as the numbers of
// IEEE 802.1AB-2016 tables 8-2 and 8-3; 0 for "unhandled" and unknown names.
uint8_t LldpChassisSubtypeOfName(std::string_view name);
uint8_t LldpPortSubtypeOfName(std::string_view name);

}  // namespace fabricwatch::peer
