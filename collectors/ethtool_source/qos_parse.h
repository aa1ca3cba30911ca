#pragma once
// Parser of the replay file DIR/<netdev>/qos: the text `mlnx_qos -i <netdev>` prints (mlnx-tools
// python/mlnx_qos, pretty_print()), the form operators paste into tickets and runbooks. Issue 21
// (configuration drift) reads trust state, the DSCP→priority map and the PFC rows from it.
//
// What it reads, in any order (every key optional; leading tabs and spaces and trailing spaces
// ignored, as versions differ):
//   DCBX mode: OS controlled | Firmware controlled
//   Priority trust state: pcp | dscp | none
//   dscp2prio mapping:            then rows `prio:3 dscp:31,30,29,28,27,26,25,24,` (a priority
//                                 with more than 8 DSCPs wraps onto another `prio:N` row), or a
//                                 column table of `DSCP PRIO` pairs (the qos/dscp2prio sysfs form)
//   default priority: [N]         (the value on the same line or alone on the next)
//   Receive buffer size (bytes): 130944,130944,0,0,0,0,0,0,[total_size=N]
//   Cable len: 7
//   PFC configuration:            then `priority 0 1 2 3 4 5 6 7`, `enabled 0 0 0 1 0 0 0 0` and
//                                 optionally `buffer 0 0 0 1 0 0 0 0`, with or without colons
//   tc: 3 ratelimit: unlimited, tsa: ets, bw: 40%    then its `priority: 3` lines (one per
//                                 priority mapped to the TC, indented or not)
//   ****** WARNING: lldpad ...; Buffers commands are not supported ...; Priority trust state is
//   not supported ...             (the tool's own notices: known, carry no value)
// A line that is none of these is counted in unknown_lines (the rest is kept); a known line with
// a bad value is a problem naming the line. Text with no known line at all is an error.
//
// Thread-safety: pure.

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace fabricwatch::sys {

struct QosTrafficClass {
  std::string tsa;                       // "ets", "strict", "vendor", "unknown"
  std::optional<int> bandwidth_percent;  // ETS only
  std::optional<double> ratelimit_gbps;  // nullopt: unlimited
};

struct QosSettings {
  std::string dcbx_mode;  // "os", "firmware" or "" (not printed)
  std::string trust;      // "pcp", "dscp", "none" or "" (not printed)
  // DSCP → priority, from the dscp2prio section; entries the text does not name stay empty.
  std::array<std::optional<uint8_t>, 64> dscp_priority{};
  std::optional<uint8_t> default_priority;
  std::optional<uint8_t> pfc_enabled;  // bit i = PFC enabled on priority i
  std::optional<std::array<uint8_t, 8>> priority_buffer;
  std::optional<std::array<uint64_t, 8>> buffer_size_bytes;
  std::optional<uint64_t> buffer_total_bytes;
  std::optional<uint32_t> cable_length_m;
  std::array<std::optional<uint8_t>, 8> priority_tc{};  // priority → traffic class
  std::array<std::optional<QosTrafficClass>, 8> traffic_classes{};
  bool buffers_unsupported = false;  // "Buffers commands are not supported on your system"
};

struct ParsedQos {
  static constexpr size_t kMaxProblems = 16;
  QosSettings settings;
  size_t unknown_lines = 0;
  std::vector<Status> problems;  // at most kMaxProblems, each naming its line
};

// `what` names the source in messages (the file's path).
Result<ParsedQos> ParseMlnxQosText(std::string_view text, std::string_view what);

}  // namespace fabricwatch::sys
