#pragma once
// The checks of link_degraded (link_degraded.h lists them): the live shape against the
// expectation, one Condition per check and subject, before any hold-down. Pure: the detector
// feeds the conditions through its HoldDowns.
//
// Thread-safety: values only.

#include <map>
#include <set>
#include <string>
#include <vector>

#include "detectors/core/detector.h"
#include "detectors/link_degraded/expectation.h"
#include "detectors/link_degraded/manifest.h"
#include "detectors/link_degraded/port_shape.h"

namespace fabricwatch::detect::shape {

// Which hold time a check waits for (the detector's options).
enum class Hold { kDegraded, kStuck, kDown, kMissing };

enum class Verdict {
  kRaise,    // the condition holds now
  kClear,    // the subject is healthy now
  kUnknown,  // no information now (a down port's rate is stale): streaks restart
};

struct Condition {
  std::string id;  // check and subject: "width|0000:18:00.0/1"
  Hold hold = Hold::kDegraded;
  Verdict verdict = Verdict::kClear;
  Finding finding;  // what is reported while the check is active (severity, entity, evidence)
};

struct AssessInput {
  const NodeShape& shape;
  const std::map<PortKey, PortExpectation>& expected;
  const History& history;
  const Manifest* manifest = nullptr;
};

std::vector<Condition> Assess(const AssessInput& input);

// The finding's entity for a port: {netdev} for an Ethernet (RoCE) port that has one, else
// {device, port} (docs/design.md §5).
EntityLabels PortEntity(const std::string& device, int port, const std::string& netdev,
                        const std::string& link_layer);

}  // namespace fabricwatch::detect::shape
