#pragma once
// The windows of ber_growth: error and bit deltas of one port merged into 10 s buckets, and one
// effective-BER claim that raises on either of two windows (docs/detection.md §0.3, §0.4):
//   fixed     the documented window, grown until it holds enough bits to support the claim (the
//             Poisson rule of three): right for a marginal BER, whose evidence takes minutes;
//   evidence  the shortest trailing window whose errors prove, at the detector's confidence, that
//             the BER exceeds the threshold (detectors/core/rate_evidence.h): a gross BER raises
//             on its first sample.
// It clears when neither proves it and the fixed window is below clear-factor × the threshold.

#include <chrono>
#include <deque>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "base/duration.h"
#include "detectors/core/detector.h"
#include "detectors/core/hysteresis.h"
#include "detectors/core/rate_evidence.h"
#include "detectors/core/state_check.h"

namespace fabricwatch::detect::ber {

// Deltas of one entity, merged into 10 s buckets so 125 min of 1 s samples is 750 entries.
class History {
 public:
  struct Sum {
    double seconds = 0;
    double bits = 0;
    double errors = 0;
    double error_samples = 0;  // samples that saw errors (the evidence windows' spread)
    double pre_bits = 0;       // bits of the buckets that also had a corrected-bit delta
    double corrected = 0;
  };

  void Add(TimePoint time, double seconds, double bits, std::optional<double> errors,
           std::optional<double> corrected, std::chrono::milliseconds keep) {
    if (buckets_.empty() || time - buckets_.back().start >= std::chrono::seconds(10)) {
      buckets_.push_back({time, {}});
    }
    Sum& s = buckets_.back().sum;
    if (errors) {
      s.seconds += seconds;
      s.bits += bits;
      s.errors += *errors;
      if (*errors > 0) s.error_samples += 1;
    }
    if (corrected) {
      s.pre_bits += bits;
      s.corrected += *corrected;
    }
    while (!buckets_.empty() && time - buckets_.front().start > keep) buckets_.pop_front();
  }

  // The newest buckets until both `min_seconds` and `min_bits` are covered (or history ends).
  Sum Span(double min_seconds, double min_bits) const {
    Sum total;
    for (auto it = buckets_.rbegin(); it != buckets_.rend(); ++it) {
      if (total.seconds >= min_seconds && total.bits >= min_bits) break;
      Add(total, it->sum);
    }
    return total;
  }
  // Calls fn(sum) for each bucket, newest first, until it returns true.
  template <typename F>
  void ForEachNewest(F&& fn) const {
    for (auto it = buckets_.rbegin(); it != buckets_.rend(); ++it) {
      if (fn(it->sum)) return;
    }
  }
  // The buckets for the state file: [start (Unix s), seconds, bits, errors, error samples,
  // pre-FEC bits, corrected] each (issue 22: a restart keeps the windows).
  nlohmann::json ToJson() const;
  // Replaces the buckets with those of `json`; a bucket from the future or with a value out of
  // range is dropped and counted by `check`. False when `json` is not such a list.
  bool FromJson(const nlohmann::json& json, StateLoadCheck& check);
  // The buckets that started within `window` of `now`.
  Sum Last(TimePoint now, std::chrono::milliseconds window) const {
    Sum total;
    for (auto it = buckets_.rbegin(); it != buckets_.rend() && now - it->start < window; ++it) {
      Add(total, it->sum);
    }
    return total;
  }

 private:
  static void Add(Sum& total, const Sum& s) {
    total.seconds += s.seconds;
    total.bits += s.bits;
    total.errors += s.errors;
    total.error_samples += s.error_samples;
    total.pre_bits += s.pre_bits;
    total.corrected += s.corrected;
  }
  struct Bucket {
    TimePoint start;
    Sum sum;
  };
  std::deque<Bucket> buckets_;
};

// One effective-BER claim (warning or critical) over its windows.
struct EffectiveLevel {
  EffectiveLevel(double ratio, std::chrono::milliseconds window, double min_errors,
                 std::chrono::milliseconds clear_for, double min_samples)
      : threshold(ratio),
        window_seconds(Seconds(window)),
        min_errors(min_errors),
        window_label(FormatDuration(window)),
        latch(std::chrono::milliseconds(0), clear_for),
        rule{ratio, min_errors, 0, Seconds(window), min_samples} {}

  void Update(const History& history, TimePoint time, double clear_factor,
              const PoissonBounds& bounds) {
    // The rule of three (docs/detection.md §0.3): a claim about `threshold` needs 3/threshold bits.
    const double needed_bits = 3 / threshold;
    last = history.Span(window_seconds, needed_bits);
    supported = last.seconds >= window_seconds && last.bits >= needed_bits;
    ratio = last.bits > 0 ? last.errors / last.bits : 0;
    const bool fixed = supported && last.errors >= min_errors && ratio > threshold;
    // The evidence window (docs/detection.md §0.4): newest buckets first, at most the fixed
    // window long (so errors that have left it stop proving anything), stopping at the first
    // window whose lower confidence bound of the BER exceeds the threshold.
    RateScan scan(bounds, rule, RateScan::Claim::kAbove, threshold);
    history.ForEachNewest([&](const History::Sum& s) {
      return scan.Add(s.errors, s.bits, s.seconds, s.error_samples);
    });
    proof = scan.window();
    latch.Update(fixed || proof.proven,
                 !proof.proven && (last.errors < min_errors || ratio < threshold * clear_factor),
                 time);
  }

  double threshold;
  double window_seconds;
  double min_errors;
  std::string window_label;
  HoldDown latch;
  RateRule rule;
  History::Sum last;
  RateWindow proof;  // the evidence window of the last update (proof.proven when it raised)
  bool supported = false;
  double ratio = 0;
};

}  // namespace fabricwatch::detect::ber
