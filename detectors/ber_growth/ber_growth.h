#pragma once
// ber_growth: bit-error growth on Ethernet PHYs and InfiniBand ports (docs/detection.md §3, §0.3).
//
// Inputs, collector `ethtool` (per netdev):
//   fabric_ethtool_phy_bit_count_total              (rx_bits_phy: the BER denominator)
//   fabric_ethtool_phy_pcs_symbol_errors_total      (post-FEC errors → effective BER)
//   fabric_ethtool_phy_corrected_bit_errors_total   (pre-FEC BER numerator; when absent,
//   fabric_ethtool_fec_corrected_bit_errors_total    the standard FEC statistic instead)
// collector `rdma` (per device/port):
//   fabric_rdma_port_symbol_errors_total            (16-bit, saturating; post-FEC on HDR/NDR
//                                                    per ibdiagnet [S20], §3.2 caveat)
//   fabric_rdma_port_rate_bytes_per_second          (IB has no bit counter: bits = rate × Δt,
//                                                    §0.3)
//   fabric_rdma_port_local_link_integrity_errors_total, ..._excessive_buffer_overrun_errors_total
//                                                   (4-bit, saturating; fatal class [S16])
// the node model (detectors/core/node_model.h): the port's link layer — the IB rules apply to
//   InfiniBand ports only; a RoCE port is judged on its netdev, §3.3 — one fault, one finding
// Every counter goes through CounterTracker: resets, 32-bit wraps (error_counter_width: 32 for
// drivers with 32-bit PHY error counters) and saturated IB counters give no false alarm; a
// series that disappears (hot-unplug) drops its history.
//
// Findings (entity {netdev} or {device, port}):
//   critical  effective BER > 1e-12 over ≥ 5 min with ≥ 10 errors (drain-eligible)
//   warning   effective BER > 1e-14 over ≥ 12 min with ≥ 3 errors
//             A window is extended until it holds 3/ratio bits (the Poisson rule of three,
//             §0.3), up to history (125 min, UFM's longest window [S21]): at 100 Gb/s the 1e-14
//             claim needs 50 min, so 12 min alone could never support it.
//   critical  IB symbol errors > 120 in the last hour (NVSentinel "IBTA BER spec violation"
//             [S16]; drain-eligible)
//   critical  any local_link_integrity_errors / excessive_buffer_overrun_errors increment
//             (NVSentinel fatal class [S16]; drain-eligible)
//   critical / warning  pre-FEC BER (1 min window) > 1e-4 for 5 min / > 1e-5 for 15 min
//   critical / warning  linear fit of log10(pre-FEC BER) over 6 h reaches the FEC limit 2.4e-4
//             [S24] within 4 h / 24 h (node-mixin predict_linear pattern [S40])
// All raise/clear pairs differ (clear at half the raise ratio, or a projection beyond 1.5× its
// horizon) and hold for clear_for before clearing.

#include <chrono>
#include <memory>
#include <span>

#include "base/metric_sink.h"
#include "base/status.h"
#include "detectors/core/detector.h"
#include "detectors/core/inputs.h"
#include "detectors/core/options.h"

namespace fabricwatch::detect {

struct BerGrowthOptions {
  using Duration = std::chrono::milliseconds;
  // Every default is in BerGrowthDetectorOptions() (the spec table that --help and the README
  // show), so it is written once; the comments here say why each value was chosen.
  // §3.3 / §8 "Effective BER": IB spec < 1e-12 [S23]; UFM 12 min window [S21]; the minimum
  // error counts are the §3.3 Judgement floors.
  double effective_warning_ratio{};
  Duration effective_warning_window{};
  double effective_warning_min_errors{};
  double effective_critical_ratio{};
  Duration effective_critical_window{};
  double effective_critical_min_errors{};
  // History kept for the windows: 125 min, UFM PDR's long BER window [S21] (§0.3).
  Duration history{};
  // §3.3 "IB absolute": symbol_error > 120/h critical [S16].
  double ib_symbol_errors_per_hour{};
  // §3.3 "Pre-FEC BER level": > 1e-5 for 15 min warning, > 1e-4 for 5 min critical (Judgement,
  // 1.4 and 0.4 decades below the KP4 limit [S24]), measured over 1 min windows.
  double pre_fec_warning_ratio{};
  Duration pre_fec_warning_for{};
  double pre_fec_critical_ratio{};
  Duration pre_fec_critical_for{};
  Duration pre_fec_window{};
  // §3.1: 50G/100G-per-lane PAM4 links must achieve pre-FEC BER ≤ 2.4e-4 [S24].
  double fec_limit_ratio{};
  // §3.3 "Pre-FEC trend": 6 h fit, 24 h warning, 4 h critical [S40]. The projection needs ≥ 1 h
  // of history and must hold for 15 min (Judgement: a trend, not one noisy hour).
  Duration trend_lookback{};
  Duration trend_min_span{};
  Duration trend_warning_horizon{};
  Duration trend_critical_horizon{};
  Duration trend_for{};
  // Clear at clear_factor × the raise ratio, held for clear_for (5 min healthy before
  // de-isolation, UFM PDR [S21]).
  double clear_factor{};
  Duration clear_for{};
  // Width of the Ethernet PHY error counters (64; 32 for drivers whose counters wrap at 2^32).
  double error_counter_width{};
  // §0.4: the one-sided confidence at which the evidence windows claim an error rate above its
  // threshold (0.99), and the fewest IB symbol errors that claim may rest on.
  double confidence{};
  double ib_symbol_min_errors{};
  double evidence_min_samples{};
  // §3.4 outliers (issue 22 item 5): a lane with most of a port's corrected bits, a port far
  // above the median of its siblings; all Judgement.
  Duration outlier_window{};
  Duration outlier_for{};
  double lane_share{};
  double lane_floor_ratio{};
  double outlier_factor{};
  double outlier_floor_ratio{};
};

// Option keys: the field names in kebab-case (clear_for → `clear-for`), with their defaults in
// BerGrowthDetectorOptions().
std::span<const DetectorOptionSpec> BerGrowthDetectorOptions();
std::span<const MetricDesc> BerGrowthDetectorMetrics();
// The collector families it reads (detectors/core/inputs.h).
std::span<const MetricInput> BerGrowthDetectorInputs();
Result<BerGrowthOptions> ParseBerGrowthOptions(const DetectorOptions& options);
Result<std::unique_ptr<Detector>> MakeBerGrowthDetector(const DetectorOptions& options);
// The factory's checks of `options` without building the detector (config validation).
Status ValidateBerGrowthDetectorOptions(const DetectorOptions& options);

}  // namespace fabricwatch::detect
