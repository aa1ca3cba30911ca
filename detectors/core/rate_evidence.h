#pragma once
// Windows driven by the evidence (issue 22, docs/detection.md §0.4): a rate rule raises as soon as
// the events already observed prove, at the rule's confidence, that the rate exceeds its threshold
// — one sample for a gross excess, the documented window for a marginal one — and clears by the
// mirror rule, once they prove the rate is below its clear level.
//
// The claim is the one-sided Poisson confidence bound on the events of a trailing window (the
// Garwood interval): with k events over exposure E, the true rate exceeds `threshold` with
// confidence c when LowerBound_c(k) / E > threshold, and is below `level` when
// UpperBound_c(k) / E < level. The bounds are exact for k <= kExactEvents (bisection on the
// Poisson distribution, precomputed once per confidence) and the Wilson–Hilferty approximation of
// the chi-square quantile above it (within 0.5 % of the exact bound there, on the conservative
// side: tests/unit/detectors/core/rate_evidence_test.cc).
//
// A scan walks the trailing buckets of a rule's history newest first (10 s buckets in
// ber_growth) and stops at the first window that proves the claim, so the answer is also the
// shortest window that does: the evidence a finding reports. It allocates nothing.
//
// Thread-safety: values only.

#include <array>
#include <cstddef>

namespace fabricwatch::detect {

class PoissonBounds {
 public:
  // `confidence` in (0.5, 1), e.g. 0.99.
  explicit PoissonBounds(double confidence);
  // The lower bound of the mean of a Poisson variable of which `events` were observed (0 for 0
  // events; a fractional count is rounded down).
  double Lower(double events) const;
  // The upper bound (-ln(1 - confidence) for 0 events; a fractional count is rounded up).
  double Upper(double events) const;
  double confidence() const { return confidence_; }

  static constexpr size_t kExactEvents = 64;

 private:
  double confidence_;
  double z_;  // the standard normal quantile of `confidence`
  std::array<double, kExactEvents + 1> lower_{};
  std::array<double, kExactEvents + 1> upper_{};
};

// What one rule claims, and about what.
struct RateRule {
  double threshold = 0;    // events per unit of exposure (errors per bit, per second)
  double min_events = 1;   // a window must hold at least this many events to prove excess
  double min_seconds = 0;  // the shortest window considered
  double max_seconds = 0;  // the longest trailing window considered (0: all the history)
  // Samples of the window that saw events: errors come in bursts (a retrain, a cable touched),
  // which a Poisson bound would read as a rate; a rate shows in sample after sample.
  double min_samples = 1;
};

// The window a scan ended on: the first that proved the claim, or the whole history scanned.
struct RateWindow {
  bool proven = false;
  double events = 0;
  double samples = 0;  // samples with events
  double exposure = 0;
  double seconds = 0;
  double bound = 0;  // the confidence bound of the rate over that window (events per exposure)
  double rate() const { return exposure > 0 ? events / exposure : 0; }
};

// Feeds trailing buckets newest first; Add() returns true once the claim is proven (or the window
// is past max_seconds), and the caller stops.
class RateScan {
 public:
  enum class Claim { kAbove, kBelow };
  // kAbove: LowerBound/exposure > level with >= rule.min_events; kBelow: UpperBound/exposure <
  // level. `bounds` must outlive the scan.
  RateScan(const PoissonBounds& bounds, const RateRule& rule, Claim claim, double level);
  // `samples`: how many samples of the bucket saw events.
  bool Add(double events, double exposure, double seconds, double samples = 1);
  const RateWindow& window() const { return window_; }

 private:
  const PoissonBounds& bounds_;
  const RateRule& rule_;
  Claim claim_;
  double level_;
  RateWindow window_;
  bool done_ = false;
};

}  // namespace fabricwatch::detect
