#pragma once
// One look at the node for `fabricwatch check` (docs/check.md): every enabled collector once,
// then the detectors that can decide from one look, fed so that a condition visible now raises
// even where the detector holds it for a time before it raises.
//
// Detectors are deterministic functions of the snapshots and the times they carry
// (detectors/core/detector.h), so the look is fed to them twice, as the scenario tests drive them
// on simulated time (tests/testing/sim_pipeline.h): once at the collection time t0, and once more
// at t0 + the longest hold of those detectors (their `*-for` options, as configured) + 1 s, as if
// the node had stayed as it is. The findings are those of either evaluation: the first carries
// the kernel log's events at their own times (driver_fault), the second the held conditions
// (shape, configuration, PCIe, module thresholds). The second feed carries no log events (they
// were seen once) and the counters have not moved, so no rate can rise; the module EEPROM's read
// time moves with it (a new read that found the same values).
//
// Rate-based rules (link_flap, pfc_storm, ber_growth, the drift trends of thermal_drift and
// optical_drift) cannot decide from one look: link_flap, pfc_storm and ber_growth are not run,
// and the trend rules of the two drift detectors never reach their hold with unchanged values.
//
// Safe beside a running agent: no listener, no HTTP port, no hook; the state file is read
// (detectors/core/state_file.h StateFile::Load: no lock, no write) for the learned shape and the
// baselines, never written, and the engine is never started (only a started engine saves). The
// saved state of the log-fed detectors (driver_fault's line history) is not restored: the look
// rereads the whole kernel log, and the saved lines would be counted a second time.

#include <chrono>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "exporter/check/check_verdict.h"
#include "exporter/config/config.h"
#include "exporter/probe/probe.h"

namespace fabricwatch::exporter::check {

// A detector that decides from one look, and its options that hold a condition before it raises.
struct OneLookDetector {
  std::string_view name;
  std::span<const std::string_view> holds;
};
std::span<const OneLookDetector> OneLookDetectors();

// The longest hold of the enabled one-look detectors under `config` (their options, else the
// registry's defaults). kInvalidArgument when a hold is not a duration.
Result<std::chrono::milliseconds> LongestHold(const Config& config);

// An RDMA port the look saw, with the rate it reports and the rate --check.probe judges it
// against: the agent's (probe::ExpectedRateFromStore: the shape manifest, else the same-model
// siblings' rate, else the reported rate; 0 when unknown).
struct SeenPort {
  probe::PortRef port;
  bool active = false;
  double rate_bits_per_second = 0;
  double expected_bits_per_second = 0;
};

struct LookResult {
  std::vector<CheckFinding> findings;
  std::vector<std::string> unread;  // what could not be read (CheckReport::unread)
  std::vector<SeenPort> ports;
};

// The look. Errors only for what stops it altogether (a detector's options are invalid).
Result<LookResult> LookOnce(const Config& config);

}  // namespace fabricwatch::exporter::check
