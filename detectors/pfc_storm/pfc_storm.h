#pragma once
// pfc_storm: PFC pause storms per priority (docs/detection.md §1.2, §1.3, §8).
//
// Per netdev and priority, from the ethtool collector's snapshots:
//   pause ratio   Δfabric_pfc_pause_duration_seconds_total{direction} / Δt (measured Δt, §0.2) —
//                 the duration counter is speed-independent, unlike frame rates (§1.1);
//   progress      Δfabric_ethtool_priority_bytes_total (packets when bytes are absent) in the
//                 opposite direction.
// Roles:
//   source  (critical, drain-eligible): we send pause (tx ratio ≥ storm-ratio, 0.99 [S3]) and
//           receive nothing on the priority — the Microsoft NIC-watchdog signature [S1];
//   victim  (warning, never drain-eligible): we are paused (rx ratio ≥ 0.99) and send nothing
//           [S1][S3] — the fix is elsewhere, draining us would punish the collateral;
// each only after the signature held for detection-time (3 s: longer than switch watchdogs and
// NIC prevention, so the host alert means they failed), cleared after restoration-time (10 s)
// of ratio < clear-ratio (0.5) or progress. Between the two ratios neither streak runs
// (hysteresis). Heavy congestion — high ratio but data still flowing — is not a storm [S1].
// NIC storm prevention (fabric_ethtool_pause_storm_events_total, mlx5
// tx_pause_storm_*_events [S10][S11]): severity=error increments → critical source finding,
// warning increments → warning, each held for event-hold. Without a progress counter for the
// priority the ratio alone cannot tell a storm from congestion: no ratio-based finding then.

#include <memory>
#include <span>

#include "base/metric_sink.h"
#include "base/status.h"
#include "detectors/core/detector.h"
#include "detectors/core/inputs.h"
#include "detectors/core/options.h"

namespace fabricwatch::detect {

std::span<const DetectorOptionSpec> PfcStormDetectorOptions();
std::span<const MetricDesc> PfcStormDetectorMetrics();
// The collector families it reads (detectors/core/inputs.h).
std::span<const MetricInput> PfcStormDetectorInputs();
Result<std::unique_ptr<Detector>> MakePfcStormDetector(const DetectorOptions& options);
// The factory's checks of `options` without building the detector (config validation).
Status ValidatePfcStormDetectorOptions(const DetectorOptions& options);

}  // namespace fabricwatch::detect
