#pragma once
// Cross-detector rules: one fault gives one finding (issue 22 item 7). The ONE place where a
// finding of one detector is suppressed because another detector's finding explains it.
//
// The detector engine applies them to the combined findings of every detector of one evaluation,
// before the AnomalyTracker diffs them. A suppressed finding is never raised (or, when it was
// active before the other detector confirmed its fault, it clears); the finding that explains it
// carries `<detector>_suppressed` = 1 as evidence and says so at the end of its reason. Every
// suppression that starts is counted (fabricwatch_findings_suppressed_total{detector,rule}) and
// returned to the engine, which logs it once at debug — suppressed findings are never lost
// silently.
//
// The rules are declared by the detectors whose findings they suppress, in their contract headers
// (detectors/<name>/<name>_metrics.h: DetectorDeclaration::suppressed_when names the PortFact that
// explains the finding, and the detector that establishes that fact declares it in `establishes`;
// detectors/core/declaration.h). Today's:
//   storm_on_flapping_link  pfc_storm (any role) on a port where link_flap reports a warning or
//                           critical finding: a flapping link pauses and stalls without a storm;
//                           SONiC moved its PFC watchdog to pause-duration counters to stop false
//                           storms on flapping links. The link_flap finding keeps the storm as
//                           evidence (pfc_storm_suppressed).
//   ber_on_down_port        ber_growth on a port that is down: its fabric_rdma_port_state is not
//                           ACTIVE (4) or ACTIVE_DEFER (5), or link_flap reports it down
//                           (down_seconds > 0) or hard flapping (critical). Errors of a link that
//                           trains or is dark are the outage's, not the cable's BER.
//   outage_of_port_seen_up  link_degraded's port-state findings (down, stuck in INIT/ARMED: the
//                           ones with port_state evidence) on a port where link_flap reports a
//                           warning or critical finding. link_flap owns the outages of ports ever
//                           seen up — a down it counted is proof the port was up — and
//                           link_degraded the never-up ones (detectors/link_degraded/
//                           link_degraded.h); this enforces that precedence if both fire.
//
// Entities are matched per port: an IB port is {device, port}, a RoCE port {netdev}; the node
// model (detectors/core/node_model.h) joins netdev <-> device/port (an IPoIB netdev is its IB
// port). A netdev the rdma collector does not list matches only itself.
//
// Thread-safety: none (the engine's thread).

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "base/metric_sink.h"
#include "detectors/core/declaration.h"
#include "detectors/core/detector.h"
#include "detectors/core/node_model.h"
#include "detectors/core/snapshot_lookup.h"

namespace fabricwatch::detect {

// Findings of one evaluation, by detector name.
using FindingsByDetector = std::map<std::string, std::vector<Finding>, std::less<>>;

struct CrossRule {
  std::string_view name;        // the `rule` label
  std::string_view suppressed;  // the detector whose findings the rule suppresses
  std::string_view owner = {};  // the detector whose finding explains them ("" for none)
  std::string_view why;         // one line, for docs and the debug log
  const SuppressionRule* declared = nullptr;  // as `suppressed` declares it
  const PortFactSource* fact = nullptr;       // as `owner` declares the fact (null: none does)
};

// The rules the registry's detectors declare (DetectorDeclaration::suppressed_when), in registry
// order; no detector is named here.
std::span<const CrossRule> CrossRuleTable();

// The port an entity is on: its RDMA port, or the netdev alone when the node model knows no RDMA
// port for it.
using CrossRulePort = std::variant<PortId, std::string>;

struct Suppression {
  const CrossRule* rule = nullptr;
  std::string detector;  // == rule->suppressed
  Finding finding;       // the suppressed finding
  std::string cause;     // what explains it, one line
};

class CrossRules {
 public:
  // Applies every rule to `findings` (suppressed ones are removed, the explaining findings
  // annotated), joining ports through `node`; returns the suppressions that started at this call
  // (one per finding and rule until it is no longer suppressed).
  std::vector<Suppression> Apply(FindingsByDetector& findings, const NodeModel& node);
  // (detector, rule) -> suppressions started; every rule's pair present from the start.
  std::map<std::pair<std::string, std::string>, uint64_t> counts() const { return counts_; }

  static std::span<const MetricDesc> Metrics();
  void Export(MetricSink& sink) const;

  // The port an entity is on: its {device, port} (IB, or a netdev the node model maps to its
  // RDMA port), else the netdev alone; nullopt for an entity that is no port (a device, a PCIe
  // function).
  static std::optional<CrossRulePort> PortOf(const EntityLabels& entity, const NodeModel& node);

 private:
  std::set<std::string> suppressed_;  // rule|detector|severity|entity, last call
  std::map<std::pair<std::string, std::string>, uint64_t> counts_ = InitialCounts();
  static std::map<std::pair<std::string, std::string>, uint64_t> InitialCounts();
};

}  // namespace fabricwatch::detect
