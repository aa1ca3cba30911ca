#pragma once
// What each fabric port should look like (issue 20, README "Fabric shape"), from three sources:
//   manifest   --shape.file: authoritative for every field it names;
//   siblings   the majority of the node's same-model ports (same HCA type and board id, same link
//              layer) that are up: a port below it is degraded, even one that was degraded before
//              the agent started;
//   history    the best link each port has shown since the agent first saw it (kept in the state
//              file, keyed by PCI address and port): a port below its own best is degraded, unless
//              all its siblings changed the same way (the node was reconfigured: the best is
//              learned again, and the detector logs it once);
//   supported  Ethernet ports without siblings: the fastest link mode the port supports.
// With no manifest the learned expectation is the higher of siblings and history, so a node whose
// ports all agree is healthy with zero configuration — including one whose ports all run HDR
// (only a manifest can say that is wrong).
//
// Thread-safety: values only.

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "detectors/core/detector.h"
#include "detectors/core/state_check.h"
#include "detectors/link_degraded/manifest.h"
#include "detectors/link_degraded/port_shape.h"

namespace fabricwatch::detect::shape {

// The best link one port has shown, and what the node knew of it.
struct PortHistory {
  std::string device;
  std::string netdev;
  std::string link_layer;
  std::string group;  // its sibling group (SiblingGroup) when last seen
  std::optional<double> best_rate_gbps;
  std::optional<int> best_width;
  std::optional<double> best_lane_gbps;
  bool seen_up = false;  // ever ACTIVE
  TimePoint last_seen{};
};
using History = std::map<PortKey, PortHistory>;

// Same model and link layer: "MT4129|MT_0000000838|InfiniBand".
std::string SiblingGroup(const PortShape& port);

// One expected value and where it came from ("manifest", "siblings", "history", "supported").
template <typename T>
struct Expected {
  std::optional<T> value;
  std::string source;
  void Raise(T candidate, const char* from) {
    if (!value || candidate > *value) value = candidate, source = from;
  }
};

struct PortExpectation {
  Expected<double> rate_gbps;
  Expected<int> width;
  Expected<double> lane_gbps;
  std::string lane_speed;  // the generation name behind lane_gbps, where one is known
  bool should_be_up = false;
  std::string up_source;
  std::string firmware;  // "" = no expectation
  std::string firmware_source;
  std::string board_id;                  // from the manifest only
  std::string hca_type;                  // from the manifest only
  std::string link_layer;                // from the manifest only
  std::optional<double> pcie_speed_gts;  // from the manifest only
  std::optional<int> pcie_width;         // from the manifest only
};

class ExpectationModel {
 public:
  // Folds the live shape into the history: bests rise, seen_up and names are remembered, and a
  // sibling group whose every port has run below its best, all at the same link, for
  // `relearn_after` is learned again. Returns one line per group learned again (for the log).
  std::vector<std::string> Learn(const NodeShape& shape, TimePoint now,
                                 std::chrono::milliseconds relearn_after);
  // The expectation of every live port (keyed like the shape), manifest fields first.
  std::map<PortKey, PortExpectation> Expect(const NodeShape& shape, const Manifest* manifest) const;

  const History& history() const { return history_; }
  nlohmann::json Save() const;
  // Entries that fail `check` (a timestamp from the future, a rate out of bounds) are dropped and
  // counted there; a file of another version is ignored with an error naming it.
  Status Load(const nlohmann::json& state, StateLoadCheck& check);

 private:
  History history_;
  std::map<std::string, TimePoint> relearn_pending_;  // group -> since when it looks reconfigured
};

}  // namespace fabricwatch::detect::shape
