#pragma once
// ber_growth's outlier rules (issue 22 item 5, docs/detection.md §3.4): faults that show against
// the rest of the port or the rest of the node rather than against an absolute threshold.
//   lane imbalance  one lane of a port carries at least `lane-share` of the port's FEC-corrected
//                   bits over `outlier-window`, while the port's pre-FEC BER is at least
//                   `lane-floor-ratio`: a dirty fibre or a bad connector lane shows on one lane;
//   sibling outlier a port whose pre-FEC BER over `outlier-window` is at least `outlier-factor`
//                   times the median of the node's other Ethernet ports (at least two of them)
//                   and at least `outlier-floor-ratio`.
// Both are warnings, raised after `outlier-for` and cleared after clear-for. A port whose excess
// one lane explains is reported on that lane only (one fault, one finding).
//
// Thread-safety: values only.

#include <chrono>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "detectors/core/counter.h"
#include "detectors/core/detector.h"
#include "detectors/core/hysteresis.h"

namespace fabricwatch::detect::ber {

struct OutlierOptions {
  std::chrono::milliseconds window{};
  std::chrono::milliseconds hold{};
  std::chrono::milliseconds clear_for{};
  double lane_share = 0;
  double lane_floor_ratio = 0;
  double factor = 0;
  double floor_ratio = 0;
};

// The per-lane corrected bits of one port over the window.
class LaneWindow {
 public:
  // One sample of lane `lane`'s counter.
  void Add(const std::string& lane, uint64_t value, TimePoint time,
           std::chrono::milliseconds window);
  // Lanes not in the latest snapshot are forgotten by the caller with Retain().
  void Retain(const std::vector<std::string>& lanes);
  // The lane with the largest share of the window's corrected bits, its share and the total.
  struct Top {
    std::string lane;
    double share = 0;
    double total = 0;
    size_t lanes = 0;
  };
  Top Largest() const;

 private:
  struct Lane {
    CounterTracker tracker;
    std::deque<std::pair<TimePoint, double>> deltas;
    double sum = 0;
  };
  std::map<std::string, Lane> lanes_;
};

// The outlier state of one port.
struct PortOutliers {
  PortOutliers(const OutlierOptions& o)
      : lane_latch(o.hold, o.clear_for), sibling_latch(o.hold, o.clear_for) {}
  LaneWindow lanes;
  HoldDown lane_latch, sibling_latch;
  LaneWindow::Top top;
  std::optional<double> ratio;  // pre-FEC BER over the window
  double sibling_median = 0;
  // The lane rule's condition holds: the lane explains the port's excess, so the port is not
  // also reported as a sibling outlier (one fault, one finding).
  bool lane_condition = false;
};

// Updates the lane latch of `port` from its lane window and its window pre-FEC `ratio`.
void UpdateLane(PortOutliers& port, const OutlierOptions& o, TimePoint time);
// Updates every port's sibling latch from the ports' window ratios.
void UpdateSiblings(std::map<std::string, PortOutliers*>& ports, const OutlierOptions& o,
                    TimePoint time);
// The findings of one port (entity {netdev} or {netdev, lane}).
void AddOutlierFindings(const std::string& netdev, const PortOutliers& port,
                        const OutlierOptions& o, std::vector<Finding>& out);

}  // namespace fabricwatch::detect::ber
