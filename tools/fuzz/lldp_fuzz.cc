// libFuzzer target for the LLDP parsers of the `peer` collector (issue 24): the received-frame
// parser (collectors/peer/lldp_frame.h), on the bytes as a whole Ethernet frame and as a bare
// LLDPDU, and the `lldpctl -f keyvalue` parser of the --path.lldp replay
// (collectors/peer/lldp_keyvalue.h), on the bytes as text. Besides the sanitizers' checks: a parsed
// neighbour has non-empty chassis and port ids and strings within the 255-byte bound in valid
// UTF-8, a rejected frame has a message, and the keyvalue parser's neighbours obey the same bounds.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <string_view>

#include "collectors/peer/lldp_frame.h"
#include "collectors/peer/lldp_keyvalue.h"

namespace {

void Check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "invariant violated: %s\n", what);
    std::abort();
  }
}

void CheckNeighbor(const fabricwatch::peer::LldpNeighbor& n) {
  using fabricwatch::peer::IsValidLldpText;
  using fabricwatch::peer::kMaxLldpStringBytes;
  Check(!n.chassis_id.empty() && !n.port_id.empty(), "an empty chassis or port id");
  Check(n.ttl_seconds <= 65535, "a TTL over 16 bits");
  for (const std::string* s : {&n.port_description, &n.system_name, &n.system_description}) {
    Check(s->size() <= kMaxLldpStringBytes, "a string over 255 bytes");
    Check(IsValidLldpText(*s), "a string that is not UTF-8");
  }
  Check(IsValidLldpText(n.chassis_id) && IsValidLldpText(n.port_id), "an id that is not UTF-8");
  Check(!fabricwatch::peer::LldpPeerName(n).empty(), "an empty peer name");
  Check(!fabricwatch::peer::LldpPeerPort(n).empty(), "an empty peer port");
}

void CheckFrameResult(const fabricwatch::Result<fabricwatch::peer::LldpNeighbor>& r, bool set,
                      fabricwatch::peer::LldpReject reason) {
  if (r) {
    CheckNeighbor(*r);
  } else {
    Check(!r.error().message().empty(), "an error without a message");
    Check(set && !fabricwatch::peer::LldpRejectName(reason).empty(), "a rejection without reason");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace fabricwatch::peer;
  const std::span<const uint8_t> bytes(data, size);
  // The reason starts at a value the parser never leaves on success, to see that it sets one.
  LldpReject reason = static_cast<LldpReject>(kLldpRejectCount);
  auto frame = ParseLldpFrame(bytes, &reason);
  CheckFrameResult(frame, static_cast<size_t>(reason) < kLldpRejectCount, reason);
  reason = static_cast<LldpReject>(kLldpRejectCount);
  auto pdu = ParseLldpdu(bytes, &reason);
  CheckFrameResult(pdu, static_cast<size_t>(reason) < kLldpRejectCount, reason);

  const std::string_view text(reinterpret_cast<const char*>(data), size);
  if (auto kv = ReadLldpKeyValue(text)) {
    for (const auto& [netdev, n] : kv->neighbors) {
      Check(!netdev.empty(), "an empty netdev");
      Check(n.port_id.size() <= kMaxLldpStringBytes, "a port id over 255 bytes");
      CheckNeighbor(n);
    }
    for (const LldpKeyValueSkipped& skipped : kv->skipped) {
      Check(static_cast<size_t>(skipped.reason) < kLldpKeyValueSkipCount, "an unknown reason");
      Check(!skipped.status.message().empty(), "a skipped block without a message");
      Check(!kv->neighbors.contains(skipped.netdev), "a netdev both kept and skipped");
    }
  } else {
    Check(!kv.error().message().empty(), "a keyvalue error without a message");
  }
  return 0;
}
