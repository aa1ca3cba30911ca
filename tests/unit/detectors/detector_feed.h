#pragma once
// Feeds a detector one collector snapshot as the detector engine does (exporter/pipeline/
// detector_engine.cc): the snapshot updates the node model first (detectors/core/node_model.h),
// then the detector observes it with that model. Tests that drive a detector directly use this so
// that the detector sees the ports, netdevs and link layers the engine would give it.

#include <prometheus/metric_family.h>

#include <span>
#include <string_view>
#include <vector>

#include "base/log_events.h"
#include "detectors/core/detector.h"
#include "detectors/core/node_model.h"

namespace fabricwatch::testing {

class DetectorFeed {
 public:
  void operator()(detect::Detector& detector, std::string_view collector, detect::TimePoint time,
                  const std::vector<prometheus::MetricFamily>& families,
                  std::span<const LogEvent> events = {}) {
    node_.Observe(collector, families);
    detector.Observe(detect::SnapshotView{collector, time, families, events, node_.Current()});
  }
  const detect::NodeModel& node() const { return node_.model(); }

 private:
  detect::NodeModelBuilder node_;
};

}  // namespace fabricwatch::testing
