#pragma once
// pcie_degraded: GPU and NIC PCIe links trained below their maximum, and AER error growth.
//
// Inputs (collector `topology`, README "Collector topology"; role is gpu, nic or bridge):
//   fabric_pcie_link_speed_transfers_per_second{device,role}, ..._max_speed_...{device,role}
//   fabric_pcie_link_width_lanes{device,role}, fabric_pcie_link_max_width_lanes{device,role}
//   fabric_pcie_aer_errors_total{device,role,severity=correctable|nonfatal|fatal}
// Bridges are skipped: a bridge port whose maximum exceeds its partner's reads downtrained
// forever (collector HELP). Width 0 (link down) and missing maxima are "unknown", not findings.
//
// Findings, entity {device, role} (device = PCI address):
//   critical  width below the maximum for downtrain_for (bandwidth halved or worse; node-local
//             and persistent, so drain-eligible)
//   warning   speed below the maximum for downtrain_for — NICs only unless check_gpu_speed,
//             because GPUs lower their link speed at idle (collector HELP; no load signal here)
//   warning   ≥ aer_correctable_warning correctable AER errors within aer_window
//   critical  any nonfatal or fatal AER increment (uncorrectable: data lost or link reset)
// docs/detection.md has no PCIe section; every default here is Judgement, stated with its reason.

#include <chrono>
#include <memory>
#include <span>

#include "base/metric_sink.h"
#include "base/status.h"
#include "detectors/core/detector.h"
#include "detectors/core/inputs.h"
#include "detectors/core/options.h"

namespace fabricwatch::detect {

struct PcieDegradedOptions {
  using Duration = std::chrono::milliseconds;
  // Every default is in PcieDegradedDetectorOptions() (the spec table that --help and the README
  // show), so it is written once; the comments here say why each value was chosen.
  // The topology collector reads every 60 s (README); 5 min = several reads agreeing, so a
  // retrain in progress or an ASPM transition is not reported. Judgement.
  Duration downtrain_for{};
  // Hold-down before any finding clears: 10 min (two topology periods beyond the raise window;
  // a link that retrains up and down again should not chatter). Judgement.
  Duration clear_for{};
  bool check_gpu_speed{};
  // Correctable AER errors are fixed by link-level replay but show a marginal channel; a
  // handful per 10 min is already unusual on a healthy server. Judgement (the kernel logs each;
  // docs/detection.md §9 lists no public threshold). Clears when the window count falls below
  // aer_correctable_clear.
  Duration aer_window{};
  double aer_correctable_warning{};
  double aer_correctable_clear{};
};

// Option keys: the field names in kebab-case (clear_for → `clear-for`), with their defaults in
// PcieDegradedDetectorOptions().
std::span<const DetectorOptionSpec> PcieDegradedDetectorOptions();
std::span<const MetricDesc> PcieDegradedDetectorMetrics();
// The collector families it reads (detectors/core/inputs.h).
std::span<const MetricInput> PcieDegradedDetectorInputs();
Result<PcieDegradedOptions> ParsePcieDegradedOptions(const DetectorOptions& options);
Result<std::unique_ptr<Detector>> MakePcieDegradedDetector(const DetectorOptions& options);
// The factory's checks of `options` without building the detector (config validation).
Status ValidatePcieDegradedDetectorOptions(const DetectorOptions& options);

}  // namespace fabricwatch::detect
