#pragma once
// The checks of config_drift (issue 21, README "Configuration drift"): a pure function from the
// node's configuration (node_config.h) and the configured expectations to the settings that
// drift, each with the value seen, the value expected and where the expectation came from.
//
// Expectations, in order: the configuration (roce-priority, mtu, ib-mtu, trust); the strict
// majority of the node's fabric ports (more than half agree; a port counts itself, so a lone
// port never drifts from its siblings; for ib_mtu the ACTIVE RDMA ports of the same link
// layer); for PFC, the priority that carries the port's RoCE traffic (the
// most bytes on priorities 1-7). A node with no lossless intent (no roce-priority configured and
// no priority PFC-enabled on any port) is expected to have none: nothing about PFC, ECN, storm
// prevention or global pause is checked there.
//
// Thread-safety: values only.

#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "detectors/config_drift/node_config.h"
#include "detectors/core/detector.h"

namespace fabricwatch::detect::drift {

struct Expectations {
  std::optional<int> roce_priority;  // 0-7
  std::optional<int> mtu;
  std::optional<int> ib_mtu;  // bytes: 256, 512, 1024, 2048 or 4096
  std::string trust;          // "dscp", "pcp" or "" (learned from the siblings)
  double storm_prevention_max_seconds = 1;
  bool require_gpudirect_module = true;
};

struct Drift {
  std::string subject;  // the netdev, the PCI address, "<device>/<port>" (ib_mtu), or "node"
  std::string setting;  // pfc, ecn, trust, dscp_map, storm_prevention, global_pause, mtu,
                        // ib_mtu, gpudirect_module, acs_redirect, max_payload, max_read_request
  EntityLabels entity;  // contract order, the setting label last
  double observed = 0;
  double expected = 0;
  std::string reason;  // names the entity, the setting, both values and the expectation's source
};

struct DriftReport {
  std::vector<Drift> drifts;
  // Every (subject, setting) that was checked, drifted or not: the configuration matrix.
  std::set<std::pair<std::string, std::string>> checked;
};

DriftReport CheckDrift(const NodeConfig& config, const Expectations& expect);

}  // namespace fabricwatch::detect::drift
