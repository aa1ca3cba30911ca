#include "detectors/core/linear_trend.h"

namespace fabricwatch::detect {

std::optional<double> LinearTrend::Fit::SecondsToReach(double threshold) const {
  if (slope_per_second <= 0 || value_now >= threshold) return std::nullopt;
  return (threshold - value_now) / slope_per_second;
}

void LinearTrend::Flush() {
  if (!pending_) return;
  // The bucket's point sits at its mean time so averaging does not bias the slope.
  const auto mid = pending_->first + (pending_->last - pending_->first) / 2;
  points_.push_back({mid, pending_->sum / pending_->count});
  pending_.reset();
}

void LinearTrend::Add(TimePoint time, double value) {
  if (pending_ && time < pending_->last) {
    Clear();  // time went backwards: the history no longer describes this series
  }
  if (pending_ && time - pending_->first >= spacing_) Flush();
  if (!pending_) pending_ = Pending{time, time, 0, 0};
  pending_->last = time;
  pending_->sum += value;
  ++pending_->count;
  while (!points_.empty() && time - points_.front().time > lookback_) points_.pop_front();
}

std::vector<std::pair<LinearTrend::TimePoint, double>> LinearTrend::Points() const {
  std::vector<std::pair<TimePoint, double>> out;
  for (const Point& p : points_) out.emplace_back(p.time, p.value);
  if (pending_ && pending_->count > 0) {
    out.emplace_back(pending_->first + (pending_->last - pending_->first) / 2,
                     pending_->sum / pending_->count);
  }
  return out;
}

void LinearTrend::Restore(const std::vector<std::pair<TimePoint, double>>& points) {
  Clear();
  for (const auto& [time, value] : points) {
    if (!points_.empty() && time <= points_.back().time) continue;
    points_.push_back({time, value});
  }
}

std::optional<LinearTrend::Fit> LinearTrend::Evaluate(size_t min_points, Duration min_span) const {
  const size_t n = points_.size() + (pending_ ? 1 : 0);
  if (n < min_points || n < 2) return std::nullopt;
  const TimePoint newest =
      pending_ ? pending_->first + (pending_->last - pending_->first) / 2 : points_.back().time;
  const TimePoint oldest = points_.empty() ? newest : points_.front().time;
  const double span = std::chrono::duration<double>(newest - oldest).count();
  if (span <= 0 || span < std::chrono::duration<double>(min_span).count()) return std::nullopt;
  // Centred sums (x relative to the newest point) keep the arithmetic well conditioned.
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  auto add = [&](TimePoint t, double y) {
    const double x = std::chrono::duration<double>(t - newest).count();
    sx += x;
    sy += y;
    sxx += x * x;
    sxy += x * y;
  };
  for (const Point& p : points_) add(p.time, p.value);
  if (pending_) add(newest, pending_->sum / pending_->count);
  const double dn = static_cast<double>(n);
  const double denominator = dn * sxx - sx * sx;
  if (denominator <= 0) return std::nullopt;
  Fit fit;
  fit.slope_per_second = (dn * sxy - sx * sy) / denominator;
  fit.value_now = (sy - fit.slope_per_second * sx) / dn;  // intercept at x = 0 (newest)
  fit.span_seconds = span;
  fit.points = n;
  return fit;
}

}  // namespace fabricwatch::detect
