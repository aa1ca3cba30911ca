#pragma once
// InfiniBand neighbours from subnet management queries (issue 24, docs/design.md §5.10): the
// NodeInfo and NodeDescription of the node one hop from a local port, as the agent gets them
// through umad (collectors/peer/smp_query.h) or, for tests and replay (--path.smp), as the text
// `smpquery -D nodeinfo 0,<port>` and `smpquery -D nodedesc 0,<port>` print.
//
// The text format is libibmad's mad_dump_nodeinfo (infiniband-diags smpquery.c, libibmad
// dump.c): a `# Node info: <portid>` header, then one `Name:....value` line per field, the name
// padded with dots; the description is one `Node Description:........<text>` line. Parsing is
// strict about what is used (Guid, NodeType, LocalPort, NumPorts) and ignores other fields, so
// newer field names do not break it. Pure; fuzzed with the LLDP parsers (tools/fuzz).

#include <cstdint>
#include <string>
#include <string_view>

#include "base/status.h"

namespace fabricwatch::peer {

// IBA 1.3 §14.2.5.3 NodeInfo, the fields attribution needs.
struct SmpNodeInfo {
  std::string node_type;  // "Channel Adapter", "Switch", "Router"
  uint64_t node_guid = 0;
  uint64_t system_guid = 0;
  unsigned num_ports = 0;
  unsigned local_port = 0;  // the neighbour's port the query came in on
  uint32_t vendor_id = 0;
  uint32_t device_id = 0;
};

// The IB NodeDescription is 64 bytes of text, at most (IBA §14.2.5.2).
inline constexpr size_t kMaxNodeDescriptionBytes = 64;

Result<SmpNodeInfo> ParseSmpNodeInfo(std::string_view text);
// The description, trimmed; invalid UTF-8 or control characters are an error (a hostile or
// corrupt description is skipped, never exported raw).
Result<std::string> ParseSmpNodeDesc(std::string_view text);

// 0x1070fd0300aa0001
std::string FormatGuid(uint64_t guid);

}  // namespace fabricwatch::peer
