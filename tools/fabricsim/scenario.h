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
// A scenario the tests run (tests/scenarios/scenario_test.cc) also says what it must raise, in an
// `expect:` block (ScenarioExpectation below): a fault scenario names its finding and the bound;
// a maintenance scenario is `quiet: true`. A new detector's scenario adds data, not test code.
//
// Parsing checks the syntax and each value (durations are Prometheus-style, collectors/core/
// duration.h); whether the named device exists is checked against the node when the Simulator
// is created. The YAML reader (base/yaml_reader.h) reads the file: a duplicate key or
// an alias is an error, numbers and booleans are unquoted, and every error names the file, line,
// column and key path ("s.yaml:6:15: events[0].priority: expected an integer between 0 and 7").

#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"

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

// The `expect:` block of a fault scenario: the finding its fault must raise, and how soon.
//
//   expect:
//     detector: link_flap            # the only detector that may speak during the run
//     severity: critical             # info | warning | critical (detectors/core/detector.h)
//     entity: {device: $device, port: 1}
//                                    # the finding's entity labels in contract order; $device and
//                                    #   $netdev are the injection's (the simulator's report)
//     drain_eligible: true
//     within: 9s                     # bound on (first raise - injection start)
//     within_reason: 5th down at +8 s, then <= one sample interval
//     not_before: 8s                 # optional: and not earlier than this after the start
//     run: 1m                        # simulated time to run, 1 s steps
//     one_finding: true              # optional: run on to `run`; raises of that entity only, at
//                                    #   most one drain-eligible
//     at_raise: module_below_high_warning
//                                    # optional: a named check of the simulator at the raise
//     fault: link_flap               # optional: the injection measured from (default: the first
//                                    #   event's fault)
//     restart: {at: 45s, until: 110s}
//                                    # optional: restart through the state file at `at` (the
//                                    #   finding active) and run on to `until`: it survives
//
// A scenario that must raise nothing (maintenance, counter quirks):
//
//   expect:
//     quiet: true
//     allow: {detector: link_flap, severity: info}
//                                    # optional: a documented finding that is not a fault
struct ExpectedRestart {
  double at_s = 0;
  double until_s = 0;
};

struct AllowedFinding {
  std::string detector;
  std::string severity;
};

struct ScenarioExpectation {
  bool quiet = false;
  std::optional<AllowedFinding> allow;  // quiet only
  std::string fault;
  std::string detector;
  std::string severity;
  std::vector<std::pair<std::string, std::string>> entity;
  bool drain_eligible = false;
  double within_s = 0;
  std::string within_reason;
  std::optional<double> not_before_s;
  double run_s = 0;
  bool one_finding = false;
  std::string at_raise;  // "" or one of ExpectationChecks()
  std::optional<ExpectedRestart> restart;
};

// The named checks `at_raise:` accepts (the scenario test implements each).
std::span<const std::string_view> ExpectationChecks();

struct Scenario {
  std::string source;  // file name, for messages
  std::string preset;  // empty: not given
  double duration_s = 0;
  std::vector<ScenarioEvent> events;  // sorted by `at`
  std::optional<ScenarioExpectation> expect;
};

Result<Scenario> ParseScenario(std::string_view text, std::string_view source_name);
Result<Scenario> LoadScenario(const std::string& path);

}  // namespace fabricwatch::sim
