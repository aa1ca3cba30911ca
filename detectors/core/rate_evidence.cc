#include "detectors/core/rate_evidence.h"

#include <algorithm>
#include <cmath>

namespace fabricwatch::detect {
namespace {

// P(X <= k) for X ~ Poisson(mean), summed in log space (k <= kExactEvents).
double PoissonCdf(int k, double mean) {
  if (mean <= 0) return 1;
  double term = std::exp(-mean);  // P(X = 0)
  double sum = term;
  for (int i = 1; i <= k; ++i) {
    term *= mean / i;
    sum += term;
  }
  return std::min(sum, 1.0);
}

// The mean at which `f(mean)` (decreasing in mean) crosses `target`, by bisection.
template <typename F>
double Solve(F&& f, double target, double hi) {
  double lo = 0;
  for (int i = 0; i < 200 && hi - lo > 1e-12 * std::max(1.0, hi); ++i) {
    const double mid = (lo + hi) / 2;
    (f(mid) > target ? lo : hi) = mid;
  }
  return (lo + hi) / 2;
}

// The standard normal quantile for p in (0.5, 1): Abramowitz & Stegun 26.2.23 (|error| < 4.5e-4).
double NormalQuantile(double p) {
  const double t = std::sqrt(-2 * std::log(1 - p));
  return t - (2.515517 + 0.802853 * t + 0.010328 * t * t) /
                 (1 + 1.432788 * t + 0.189269 * t * t + 0.001308 * t * t * t);
}

// The chi-square quantile with `nu` degrees of freedom at normal deviate z (Wilson–Hilferty).
double ChiSquare(double nu, double z) {
  const double a = 2 / (9 * nu);
  const double c = 1 - a + z * std::sqrt(a);
  return c <= 0 ? 0 : nu * c * c * c;
}

}  // namespace

PoissonBounds::PoissonBounds(double confidence)
    : confidence_(confidence), z_(NormalQuantile(confidence)) {
  const double alpha = 1 - confidence;
  lower_[0] = 0;
  for (size_t k = 1; k <= kExactEvents; ++k) {
    // Garwood: the mean at which P(X >= k) = alpha, i.e. P(X <= k-1) = 1 - alpha.
    const int below = static_cast<int>(k) - 1;
    lower_[k] = Solve([&](double mean) { return PoissonCdf(below, mean); }, 1 - alpha,
                      static_cast<double>(k) + 20 * std::sqrt(static_cast<double>(k)) + 20);
  }
  for (size_t k = 0; k <= kExactEvents; ++k) {
    // The mean at which P(X <= k) = alpha.
    upper_[k] = Solve([&](double mean) { return PoissonCdf(static_cast<int>(k), mean); }, alpha,
                      static_cast<double>(k) + 20 * std::sqrt(static_cast<double>(k)) + 20);
  }
}

double PoissonBounds::Lower(double events) const {
  if (!(events >= 1)) return 0;
  const double k = std::floor(events);
  if (k <= kExactEvents) return lower_[static_cast<size_t>(k)];
  return ChiSquare(2 * k, -z_) / 2;
}

double PoissonBounds::Upper(double events) const {
  const double k = std::ceil(std::max(events, 0.0));
  if (k <= kExactEvents) return upper_[static_cast<size_t>(k)];
  return ChiSquare(2 * k + 2, z_) / 2;
}

RateScan::RateScan(const PoissonBounds& bounds, const RateRule& rule, Claim claim, double level)
    : bounds_(bounds), rule_(rule), claim_(claim), level_(level) {}

bool RateScan::Add(double events, double exposure, double seconds, double samples) {
  if (done_) return true;
  if (rule_.max_seconds > 0 && window_.seconds >= rule_.max_seconds) return done_ = true;
  window_.events += events;
  window_.exposure += exposure;
  window_.seconds += seconds;
  window_.samples += samples;
  if (window_.exposure <= 0 || window_.seconds < rule_.min_seconds) return false;
  if (claim_ == Claim::kAbove) {
    window_.bound = bounds_.Lower(window_.events) / window_.exposure;
    window_.proven = window_.events >= rule_.min_events && window_.samples >= rule_.min_samples &&
                     window_.bound > level_;
  } else {
    window_.bound = bounds_.Upper(window_.events) / window_.exposure;
    window_.proven = window_.bound < level_;
  }
  return done_ = window_.proven;
}

}  // namespace fabricwatch::detect
