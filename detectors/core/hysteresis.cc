#include "detectors/core/hysteresis.h"

#include <algorithm>
#include <cmath>

#include "detectors/core/state_check.h"

namespace fabricwatch::detect {

double Seconds(TimePoint::duration duration) {
  return std::chrono::duration<double>(duration).count();
}

double EpochSeconds(TimePoint time) { return Seconds(time.time_since_epoch()); }

TimePoint FromEpochSeconds(double seconds) {
  return TimePoint(std::chrono::duration_cast<TimePoint::duration>(
      std::chrono::duration<double>(seconds)));
}

bool HoldDown::Update(bool raise_condition, bool clear_condition, TimePoint from, TimePoint to) {
  if (raise_condition) {
    clear_since_.reset();
    if (!raise_since_) raise_since_ = from;
    if (!active_ && to - *raise_since_ >= raise_after_) {
      active_ = true;
      active_since_ = to;
    }
  } else if (clear_condition) {
    raise_since_.reset();
    if (!clear_since_) clear_since_ = from;
    if (active_ && to - *clear_since_ >= clear_after_) active_ = false;
  } else {
    // Between the thresholds: neither streak continues (hysteresis band).
    raise_since_.reset();
    clear_since_.reset();
  }
  return active_;
}

double DecayingPenalty::DecayFactor(TimePoint::duration elapsed) const {
  const double half = Seconds(half_life_);
  if (half <= 0) return 0;
  return std::exp2(-Seconds(elapsed) / half);
}

void DecayingPenalty::Add(double amount, TimePoint time) {
  if (time >= at_) {
    value_ = value_ * DecayFactor(time - at_) + amount;
    at_ = time;
  } else {
    value_ += amount * DecayFactor(at_ - time);
  }
  value_ = std::min(value_, ceiling_);
}

void DecayingPenalty::Remove(double amount, TimePoint event_time) {
  const double contribution =
      event_time >= at_ ? amount : amount * DecayFactor(at_ - event_time);
  value_ = std::max(0.0, value_ - contribution);
}

double DecayingPenalty::At(TimePoint time) const {
  if (time <= at_) return value_;
  return value_ * DecayFactor(time - at_);
}

nlohmann::json DecayingPenalty::Save() const {
  return {{"value", value_}, {"at", EpochSeconds(at_)}};
}

void DecayingPenalty::Load(const nlohmann::json& state, StateLoadCheck& check) {
  value_ = 0;
  at_ = {};
  // The ceiling is the detector's own bound (docs/detection.md §2.2: reuse × 2^(max/t½)).
  auto value = check.Number(state.at("value"), 0.0, ceiling_);
  auto at = check.Past(state.at("at"));
  if (!value || !at) return;
  value_ = *value;
  at_ = *at;
}

void EventWindow::Add(TimePoint time) {
  auto it = std::upper_bound(times_.begin(), times_.end(), time);
  times_.insert(it, time);
  while (times_.size() > capacity_) times_.pop_front();
}

size_t EventWindow::CountAfter(TimePoint since) const {
  return static_cast<size_t>(times_.end() -
                             std::upper_bound(times_.begin(), times_.end(), since));
}

void EventWindow::Prune(TimePoint before) {
  while (!times_.empty() && times_.front() <= before) times_.pop_front();
}

std::vector<TimePoint> EventWindow::RemoveBetween(TimePoint from, TimePoint to) {
  std::vector<TimePoint> removed;
  std::erase_if(times_, [&](TimePoint t) {
    if (t < from || t > to) return false;
    removed.push_back(t);
    return true;
  });
  return removed;
}

nlohmann::json EventWindow::Save() const {
  nlohmann::json out = nlohmann::json::array();
  for (TimePoint t : times_) out.push_back(EpochSeconds(t));
  return out;
}

void EventWindow::Load(const nlohmann::json& state, StateLoadCheck& check) {
  times_.clear();
  if (!state.is_array()) throw nlohmann::json::type_error::create(302, "expected an array", &state);
  for (const auto& t : state) {
    if (auto time = check.Past(t)) Add(*time);
  }
}

}  // namespace fabricwatch::detect
