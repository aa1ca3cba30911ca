#include "detectors/ber_growth/ber_outliers.h"

#include <algorithm>
#include <cstdio>

namespace fabricwatch::detect::ber {
namespace {

std::string Sci(double v) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.2g", v);
  return buffer;
}

}  // namespace

void LaneWindow::Add(const std::string& lane, uint64_t value, TimePoint time,
                     std::chrono::milliseconds window) {
  Lane& l = lanes_[lane];
  const CounterStep step = l.tracker.Update(value, time);
  if (step.valid) {
    l.deltas.emplace_back(time, static_cast<double>(step.delta));
    l.sum += static_cast<double>(step.delta);
  }
  while (!l.deltas.empty() && time - l.deltas.front().first > window) {
    l.sum -= l.deltas.front().second;
    l.deltas.pop_front();
  }
}

void LaneWindow::Retain(const std::vector<std::string>& lanes) {
  std::erase_if(lanes_, [&](const auto& entry) {
    return std::find(lanes.begin(), lanes.end(), entry.first) == lanes.end();
  });
}

LaneWindow::Top LaneWindow::Largest() const {
  Top top;
  top.lanes = lanes_.size();
  double best = -1;
  for (const auto& [lane, l] : lanes_) {
    top.total += l.sum;
    if (l.sum > best) best = l.sum, top.lane = lane;
  }
  top.share = top.total > 0 ? best / top.total : 0;
  return top;
}

void UpdateLane(PortOutliers& port, const OutlierOptions& o, TimePoint time) {
  port.top = port.lanes.Largest();
  const bool known = port.top.lanes >= 2 && port.ratio.has_value() && port.top.total > 0;
  const bool raise = known && port.top.share >= o.lane_share && *port.ratio >= o.lane_floor_ratio;
  const bool clear =
      !known || port.top.share < o.lane_share * 0.8 || *port.ratio < o.lane_floor_ratio * 0.5;
  port.lane_condition = raise;
  port.lane_latch.Update(raise, clear, time);
}

void UpdateSiblings(std::map<std::string, PortOutliers*>& ports, const OutlierOptions& o,
                    TimePoint time) {
  for (auto& [netdev, port] : ports) {
    std::vector<double> others;
    for (const auto& [other, p] : ports) {
      if (other != netdev && p->ratio) others.push_back(*p->ratio);
    }
    if (others.size() < 2 || !port->ratio) {
      port->sibling_latch.Update(false, true, time);
      continue;
    }
    std::nth_element(others.begin(), others.begin() + others.size() / 2, others.end());
    port->sibling_median = others[others.size() / 2];
    const double ratio = *port->ratio;
    const bool raise = ratio >= o.floor_ratio && ratio >= o.factor * port->sibling_median;
    const bool clear = ratio < o.floor_ratio * 0.5 || ratio < o.factor * 0.5 * port->sibling_median;
    port->sibling_latch.Update(raise, clear, time);
  }
}

void AddOutlierFindings(const std::string& netdev, const PortOutliers& port,
                        const OutlierOptions& o, std::vector<Finding>& out) {
  const double ratio = port.ratio.value_or(0);
  if (port.lane_latch.active()) {
    out.push_back({Severity::kWarning,
                   {{"netdev", netdev}, {"lane", port.top.lane}},
                   port.top.share,
                   {{"lane_share_ratio", port.top.share},
                    {"lane_corrected_bits", port.top.share * port.top.total},
                    {"port_corrected_bits", port.top.total},
                    {"pre_fec_ber_ratio", ratio}},
                   netdev + " lane " + port.top.lane + " carries " + Sci(port.top.share * 100) +
                       "% of the port's FEC-corrected bits over " +
                       Sci(std::chrono::duration<double>(o.window).count() / 60) +
                       " min (pre-FEC BER " + Sci(ratio) + "): one lane, one fibre or connector",
                   false});
  }
  if (port.sibling_latch.active() && !port.lane_condition && !port.lane_latch.active()) {
    out.push_back({Severity::kWarning,
                   {{"netdev", netdev}},
                   ratio,
                   {{"pre_fec_ber_ratio", ratio},
                    {"sibling_median_ratio", port.sibling_median},
                    {"outlier_factor", port.sibling_median > 0 ? ratio / port.sibling_median : 0}},
                   netdev + " pre-FEC BER " + Sci(ratio) + " is " +
                       Sci(port.sibling_median > 0 ? ratio / port.sibling_median : 0) +
                       "x the median of its sibling ports (" + Sci(port.sibling_median) + ")",
                   false});
  }
}

}  // namespace fabricwatch::detect::ber
