// ber_growth's options: the keys, their defaults and the source of each (the spec table --help
// and the README show), and their parsing and cross-checks.

#include <string>

#include "detectors/ber_growth/ber_growth.h"
#include "detectors/core/options.h"

namespace fabricwatch::detect {
namespace {

constexpr std::string_view kName = "ber_growth";
using Options = BerGrowthOptions;

// Keys, defaults and the source of each default (docs/detection.md sections, [S..] references).
constexpr DetectorOptionSpec kOptions[] = {
    {"effective-warning-ratio",
     "Effective (post-FEC) BER above which a warning is raised. §3.3/§8; IB spec < 1e-12 [S23]",
     "1e-14"},
    {"effective-warning-window",
     "Shortest window of the warning BER (extended until it holds 3/ratio bits, §0.3). UFM 12 min "
     "window [S21], §3.3",
     "12m"},
    {"effective-warning-min-errors",
     "Errors the warning window must hold. Judgement floor (Poisson rule of three), §3.3/§0.3",
     "3"},
    {"effective-critical-ratio",
     "Effective BER above which a critical finding is raised. IB spec < 1e-12 [S23], §3.3/§8",
     "1e-12"},
    {"effective-critical-window", "Shortest window of the critical BER. §3.3/§8", "5m"},
    {"effective-critical-min-errors", "Errors the critical window must hold. Judgement floor, §3.3",
     "10"},
    {"history", "Counter history kept for the BER windows. UFM PDR's long BER window [S21], §0.3",
     "125m"},
    {"ib-symbol-errors-per-hour",
     "IB symbol errors in the last hour that raise a critical finding. NVSentinel IBTA BER spec "
     "violation [S16], §3.3",
     "120"},
    {"pre-fec-warning-ratio",
     "Pre-FEC BER (pre-fec-window windows) above which a warning is raised. Judgement, 1.4 decades "
     "below the KP4 limit [S24], §3.3",
     "1e-5"},
    {"pre-fec-warning-for", "How long the pre-FEC warning ratio must be exceeded. Judgement, §3.3",
     "15m"},
    {"pre-fec-critical-ratio",
     "Pre-FEC BER above which a critical finding is raised. Judgement, 0.4 decades below the KP4 "
     "limit [S24], §3.3",
     "1e-4"},
    {"pre-fec-critical-for",
     "How long the pre-FEC critical ratio must be exceeded. Judgement, §3.3", "5m"},
    {"pre-fec-window", "Window over which the pre-FEC BER is measured. §3.3", "1m"},
    {"fec-limit-ratio",
     "Pre-FEC BER limit of the FEC, the target of the trend projection. 50G/100G-per-lane PAM4 KP4 "
     "limit [S24], §3.1",
     "2.4e-4"},
    {"trend-lookback",
     "History of the linear fit of log10(pre-FEC BER). §3.3 pre-FEC trend, predict_linear [S40]",
     "6h"},
    {"trend-min-span", "History the trend fit needs before it projects. Judgement, §3.3", "1h"},
    {"trend-warning-horizon",
     "Warn when the trend reaches fec-limit-ratio within this time. §3.3 [S40]", "24h"},
    {"trend-critical-horizon",
     "Critical when the trend reaches fec-limit-ratio within this time. §3.3 [S40]", "4h"},
    {"trend-for",
     "How long a projection must hold before it is a finding. Judgement (a trend, not one noisy "
     "hour), §3.3",
     "15m"},
    {"clear-factor",
     "Findings clear below this fraction of their raise ratio (hysteresis). Judgement, §3.3",
     "0.5"},
    {"clear-for",
     "How long the clear condition must hold before a finding clears. UFM PDR 5 min de-isolation "
     "[S21], §3.2",
     "5m"},
    {"confidence",
     "One-sided confidence at which the evidence windows claim a rate above its threshold (the "
     "lower Poisson bound of the errors seen, §0.4): a gross BER raises on its first sample. "
     "Judgement",
     "0.99"},
    {"evidence-min-samples",
     "Samples with errors an evidence window needs (a burst in one sample is not a rate). "
     "Judgement (§0.4): 5 samples, so a gross BER raises within about 5 s at 1 Hz",
     "5"},
    {"ib-symbol-min-errors",
     "Fewest IB symbol errors the evidence window of the hourly rule may rest on. Judgement "
     "(§0.4)",
     "10"},
    {"outlier-window",
     "Window of the lane-imbalance and sibling-outlier rules (pre-FEC corrected bits). "
     "Judgement (§3.4)",
     "10m"},
    {"outlier-for", "How long an outlier must hold before it is a finding. Judgement (§3.4)", "5m"},
    {"lane-share",
     "Share of a port's corrected bits that one lane must carry to be named. Judgement (§3.4): "
     "a four-lane port spreads them about evenly",
     "0.8"},
    {"lane-floor-ratio",
     "Pre-FEC BER below which no lane is named (a clean port's few errors land anywhere). "
     "Judgement (§3.4)",
     "1e-7"},
    {"outlier-factor",
     "A port whose pre-FEC BER is this many times the median of its siblings is an outlier. "
     "Issue 22 (§3.4)",
     "10"},
    {"outlier-floor-ratio",
     "Pre-FEC BER below which no port is an outlier, however far above its siblings. Judgement "
     "(§3.4)",
     "1e-8"},
    {"error-counter-width",
     "Width in bits of the Ethernet PHY error counters (32 for drivers whose counters wrap at "
     "2^32). §0.2",
     "64"},
};

}  // namespace

Result<BerGrowthOptions> ParseBerGrowthOptions(const DetectorOptions& options) {
  Options o;
  auto r = OptionReader::Make(kName, options, kOptions);
  if (!r) return Error(r.error());
  o.effective_warning_ratio = r->Number("effective-warning-ratio", 1e-20, 1);
  o.effective_warning_window = r->Duration("effective-warning-window");
  o.effective_warning_min_errors = r->Number("effective-warning-min-errors", 1, 1e12);
  o.effective_critical_ratio = r->Number("effective-critical-ratio", 1e-20, 1);
  o.effective_critical_window = r->Duration("effective-critical-window");
  o.effective_critical_min_errors = r->Number("effective-critical-min-errors", 1, 1e12);
  o.history = r->Duration("history");
  o.ib_symbol_errors_per_hour = r->Number("ib-symbol-errors-per-hour", 0, 1e12);
  o.pre_fec_warning_ratio = r->Number("pre-fec-warning-ratio", 1e-20, 1);
  o.pre_fec_warning_for = r->Duration("pre-fec-warning-for", true);
  o.pre_fec_critical_ratio = r->Number("pre-fec-critical-ratio", 1e-20, 1);
  o.pre_fec_critical_for = r->Duration("pre-fec-critical-for", true);
  o.pre_fec_window = r->Duration("pre-fec-window");
  o.fec_limit_ratio = r->Number("fec-limit-ratio", 1e-20, 1);
  o.trend_lookback = r->Duration("trend-lookback");
  o.trend_min_span = r->Duration("trend-min-span");
  o.trend_warning_horizon = r->Duration("trend-warning-horizon");
  o.trend_critical_horizon = r->Duration("trend-critical-horizon");
  o.trend_for = r->Duration("trend-for", true);
  o.clear_factor = r->Number("clear-factor", 0, 1);
  o.clear_for = r->Duration("clear-for", true);
  o.error_counter_width = r->Number("error-counter-width", 32, 64);
  o.confidence = r->Number("confidence", 0.5, 0.999999);
  o.ib_symbol_min_errors = r->Number("ib-symbol-min-errors", 1, 1e12);
  o.evidence_min_samples = r->Number("evidence-min-samples", 1, 1e6);
  o.outlier_window = r->Duration("outlier-window");
  o.outlier_for = r->Duration("outlier-for", true);
  o.lane_share = r->Number("lane-share", 0.3, 1);
  o.lane_floor_ratio = r->Number("lane-floor-ratio", 0, 1);
  o.outlier_factor = r->Number("outlier-factor", 1.5, 1e9);
  o.outlier_floor_ratio = r->Number("outlier-floor-ratio", 0, 1);
  if (!r->status().ok()) return Error(r->status());
  auto fail = [](const std::string& key, const std::string& why) {
    return Error(StatusCode::kInvalidArgument, "detector ber_growth: option " + key + ": " + why);
  };
  if (o.error_counter_width != 32 && o.error_counter_width != 64) {
    return fail("error-counter-width", "must be 32 or 64");
  }
  if (o.history < o.effective_warning_window || o.history < o.effective_critical_window ||
      o.history < std::chrono::hours(1) || o.history < o.pre_fec_window ||
      o.history < o.outlier_window) {
    return fail("history", "must cover every window and the 1 h IB symbol-error count");
  }
  if (o.trend_min_span > o.trend_lookback) {
    return fail("trend-min-span", "must not exceed trend-lookback");
  }
  if (o.pre_fec_warning_ratio > o.pre_fec_critical_ratio) {
    return fail("pre-fec-warning-ratio", "must not exceed pre-fec-critical-ratio");
  }
  return o;
}

std::span<const DetectorOptionSpec> BerGrowthDetectorOptions() { return kOptions; }

}  // namespace fabricwatch::detect
