#pragma once
// LinearTrend: least-squares line through (time, value) points of a lookback window, for
// time-to-threshold projections (docs/detection.md §5 "Linear regression time-to-threshold", the
// node-mixin predict_linear pattern [S40]).
//
// Points closer together than `spacing` are averaged into one, so a 6 h lookback at a 1 s
// cadence keeps 360 points at a 1 min spacing, not 21,600. Memory is bounded by
// lookback / spacing + 1; a fit is O(points) (hundreds), done once per evaluation.

#include <chrono>
#include <deque>
#include <optional>
#include <utility>
#include <vector>

namespace fabricwatch::detect {

class LinearTrend {
 public:
  using TimePoint = std::chrono::system_clock::time_point;
  using Duration = std::chrono::milliseconds;

  struct Fit {
    double slope_per_second = 0;
    double value_now = 0;     // the fitted line at the newest point's time
    double span_seconds = 0;  // newest − oldest point
    size_t points = 0;
    // Seconds until the fitted line reaches `threshold` from below (rising) — nullopt when it
    // does not rise or is already past it.
    std::optional<double> SecondsToReach(double threshold) const;
  };

  LinearTrend() = default;
  LinearTrend(Duration lookback, Duration spacing) : lookback_(lookback), spacing_(spacing) {}

  void Add(TimePoint time, double value);
  void Clear() {
    points_.clear();
    pending_.reset();
  }
  // The fit over the window, or nullopt with fewer than `min_points` points or a span shorter
  // than `min_span` (a projection needs enough history to be more than noise).
  std::optional<Fit> Evaluate(size_t min_points, Duration min_span) const;

  // The averaged points (the pending one flushed), oldest first, for a state file, and their
  // restoration: points out of time order are skipped.
  std::vector<std::pair<TimePoint, double>> Points() const;
  void Restore(const std::vector<std::pair<TimePoint, double>>& points);

 private:
  struct Point {
    TimePoint time;
    double value;
  };
  struct Pending {
    TimePoint first;
    TimePoint last;
    double sum = 0;
    int count = 0;
  };
  void Flush();

  Duration lookback_{std::chrono::hours(6)};
  Duration spacing_{std::chrono::minutes(1)};
  std::deque<Point> points_;
  std::optional<Pending> pending_;
};

}  // namespace fabricwatch::detect
