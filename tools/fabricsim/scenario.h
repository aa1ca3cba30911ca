#pragma once
// Scenario files: a timeline of faults (YAML).
//
//   preset: hgx-roce          # optional: the node to simulate
//   duration: 10m             # the timeline's length (with --loop it repeats)
//   events:
//     - at: 30s               # start, from the scenario start
//       fault: pfc_storm_source
//       duration: 60s         # omitted: the fault's default
//       device: mlx5_0        # the HCA port (RDMA device, `port:` default 1), or
//       netdev: enp24s0f0np0  #   the netdev
//       priority: 3           # PFC faults
//       lane: 2               # optics and BER faults, counted from 1
//       rate: ...             # per-fault parameters (see Faults() / `fabricsim faults`)
//       speed: HDR            # text parameters: an IB lane speed, a firmware version,
//       error: bad_cable      #   module_error's kind
//       interval: 60s         # module_error: how often the error line repeats
//       gpu: 0000:1c:00.0     # PCIe faults on a GPU's path (acs_redirect, mps_mismatch): the
//                             #   GPU's PCI address or its index (0 = the first GPU)
//
// Most faults name a port (device: or netdev:). peermem_unloaded is node-wide and names nothing;
// acs_redirect names a gpu:; mps_mismatch, pcie_downtrain and aer_burst name a gpu: or a port
// (its NIC function).
//
// Parsing checks the syntax and each value (durations are Prometheus-style, collectors/core/
// duration.h); whether the named device exists is checked against the node when the Simulator
// is created. Every error names the file, line and column (yaml-cpp marks) and the problem.

#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "collectors/core/status.h"

namespace fabricwatch::sim {

struct FaultInfo {
  std::string_view name;
  std::string_view description;
  bool instant;               // happens at one instant (no end event)
  double default_duration_s;  // when `duration:` is omitted (durational faults)
  std::string_view params;    // accepted parameters with their defaults, for `fabricsim faults`
};

// What a fault names (ParseEvent checks it): a port (device: or netdev:), nothing (node-wide),
// a GPU (gpu:), or a GPU or a port.
enum class FaultTarget { kPort, kNode, kGpu, kGpuOrPort };
FaultTarget TargetOf(std::string_view fault);

std::span<const FaultInfo> Faults();
const FaultInfo* FindFault(std::string_view name);

struct ScenarioEvent {
  int line = 0;  // 1-based line of the event in the file
  double at_s = 0;
  std::string fault;
  double duration_s = 0;
  std::string device;  // RDMA device
  int port = 1;
  std::string netdev;
  std::string gpu;  // PCI address or index of a GPU (PCIe path faults)
  std::optional<int> priority;
  std::optional<int> lane;
  std::map<std::string, double> params;     // rate, period, count, target_celsius, ...
  std::map<std::string, std::string> text;  // speed ("HDR"), fw_ver ("28.38.1002"), error
};

struct Scenario {
  std::string source;  // file name, for messages
  std::string preset;  // empty: not given
  double duration_s = 0;
  std::vector<ScenarioEvent> events;  // sorted by `at`
};

Result<Scenario> ParseScenario(std::string_view text, std::string_view source_name);
Result<Scenario> LoadScenario(const std::string& path);

}  // namespace fabricwatch::sim
