#include "detectors/config_drift/drift_checks.h"

#include <algorithm>
#include <array>
#include <map>

#include "detectors/config_drift/majority.h"
#include "detectors/config_drift/pcie_checks.h"

namespace fabricwatch::detect::drift {
namespace {

constexpr std::string_view kPriorityNames[] = {"0", "1", "2", "3", "4", "5", "6", "7"};
constexpr std::array<std::string_view, 2> kEcnRoles = {"np", "rp"};

std::string OnOff(bool on) { return on ? "on" : "off"; }

// "siblings (3 of 4 ports)".
std::string SiblingSource(const Majority<std::string>& m) {
  return "siblings (" + std::to_string(m.count) + " of " + std::to_string(m.total) + " ports)";
}

// The priority 1-7 with the most bytes, if any carried traffic: where the port's RoCE traffic
// runs (priority 0 is the default class of untagged, unmapped traffic).
std::optional<size_t> TrafficPriority(const PortConfig& port) {
  std::optional<size_t> best;
  for (size_t prio = 1; prio < port.priority_bytes.size(); ++prio) {
    const auto& bytes = port.priority_bytes[prio];
    if (bytes && *bytes > 0 && (!best || *bytes > *port.priority_bytes[*best])) best = prio;
  }
  return best;
}

class PortChecks {
 public:
  PortChecks(const NodeConfig& config, const Expectations& expect, DriftReport& report)
      : config_(config), expect_(expect), report_(report) {}

  void Run() {
    const bool lossless = expect_.roce_priority.has_value() ||
                          std::any_of(config_.ports.begin(), config_.ports.end(),
                                      [](const PortConfig& p) { return p.AnyPfc(); });
    for (const PortConfig& port : config_.ports) {
      if (lossless) {
        Pfc(port);
        Ecn(port);
        StormPrevention(port);
        GlobalPause(port);
      }
      Trust(port);
      DscpMap(port);
      Mtu(port);
    }
  }

 private:
  void Checked(const PortConfig& port, std::string_view setting) {
    report_.checked.emplace(port.netdev, std::string(setting));
  }
  void Add(const PortConfig& port, std::string_view setting, EntityLabels extra, double observed,
           double expected, std::string reason) {
    Drift d;
    d.subject = port.netdev;
    d.setting = std::string(setting);
    d.entity = {{"netdev", port.netdev}};
    for (auto& label : extra) d.entity.push_back(std::move(label));
    d.entity.emplace_back("setting", d.setting);
    d.observed = observed;
    d.expected = expected;
    d.reason = port.netdev + ": " + std::move(reason);
    report_.drifts.push_back(std::move(d));
  }

  // The sibling majority of one field over the ports that report it; none for a lone port (it
  // has no siblings: the next source of the expectation applies).
  template <typename Get>
  Majority<std::string> Siblings(Get&& get) const {
    std::vector<std::string> values;
    for (const PortConfig& p : config_.ports) {
      if (auto v = get(p)) values.push_back(*v);
    }
    if (values.size() < 2) return {};
    return StrictMajority(values);
  }

  void Pfc(const PortConfig& port) {
    bool any_known = false;
    for (size_t prio = 0; prio < port.pfc.size(); ++prio) {
      if (!port.pfc[prio]) continue;
      any_known = true;
      const bool on = *port.pfc[prio];
      std::optional<bool> expected;
      std::string source;
      const auto siblings = Siblings([&](const PortConfig& p) -> std::optional<std::string> {
        if (!p.pfc[prio]) return std::nullopt;
        return OnOff(*p.pfc[prio]);
      });
      if (expect_.roce_priority && static_cast<size_t>(*expect_.roce_priority) == prio) {
        expected = true, source = "the configured roce-priority";
      } else if (siblings.value) {
        expected = *siblings.value == "on", source = SiblingSource(siblings);
      } else if (expect_.roce_priority) {
        expected = false, source = "the configured roce-priority " +
                                   std::to_string(*expect_.roce_priority) + " (siblings disagree)";
      } else if (TrafficPriority(port) == prio) {
        expected = true, source = "the priority that carries the port's RoCE traffic";
      }
      if (!expected || *expected == on) continue;
      Add(port, "pfc", {{"priority", std::string(kPriorityNames[prio])}}, on ? 1 : 0,
          *expected ? 1 : 0,
          "PFC " + OnOff(on) + " on priority " + std::string(kPriorityNames[prio]) + ", expected " +
              OnOff(*expected) + " from " + source);
    }
    if (any_known) Checked(port, "pfc");
  }

  void Ecn(const PortConfig& port) {
    bool any_known = false;
    for (size_t prio = 0; prio < port.ecn.size(); ++prio) {
      const bool pfc_on = port.pfc[prio].value_or(false);
      const bool roce =
          expect_.roce_priority && static_cast<size_t>(*expect_.roce_priority) == prio;
      if (!pfc_on && !roce) continue;
      for (size_t role = 0; role < kEcnRoles.size(); ++role) {
        const auto& enabled = port.ecn[prio][role];
        if (!enabled) continue;
        any_known = true;
        if (*enabled) continue;
        Add(port, "ecn",
            {{"priority", std::string(kPriorityNames[prio])},
             {"role", std::string(kEcnRoles[role])}},
            0, 1,
            "RoCE ECN (" + std::string(kEcnRoles[role]) + ") off on priority " +
                std::string(kPriorityNames[prio]) + ", expected on: " +
                (pfc_on ? "PFC is on there" : "it is the configured roce-priority"));
      }
    }
    if (any_known) Checked(port, "ecn");
  }

  void StormPrevention(const PortConfig& port) {
    if (!port.AnyPfc() || !port.storm_timeout_seconds) return;
    Checked(port, "storm_prevention");
    const double timeout = *port.storm_timeout_seconds;
    const double max = expect_.storm_prevention_max_seconds;
    if (timeout == 0) {
      Add(port, "storm_prevention", {}, 0, max,
          "PFC storm prevention off (pfc-prevention-tout 0) while PFC is on, expected on with a "
          "timeout of at most " +
              FormatFixed(max * 1000, 0) + " ms");
    } else if (timeout > max) {
      Add(port, "storm_prevention", {}, timeout, max,
          "PFC storm prevention timeout " + FormatFixed(timeout * 1000, 0) +
              " ms, expected at most " + FormatFixed(max * 1000, 0) + " ms (storm-prevention-max)");
    }
  }

  void GlobalPause(const PortConfig& port) {
    if (!port.AnyPfc() || (!port.pause_rx && !port.pause_tx)) return;
    Checked(port, "global_pause");
    const bool rx = port.pause_rx.value_or(false), tx = port.pause_tx.value_or(false);
    if (!rx && !tx) return;
    Add(port, "global_pause", {}, 1, 0,
        "global 802.3x pause on (rx " + OnOff(rx) + ", tx " + OnOff(tx) +
            ") together with PFC, expected off");
  }

  void Trust(const PortConfig& port) {
    if (port.trust.empty()) return;
    Checked(port, "trust");
    std::string expected, source;
    if (!expect_.trust.empty()) {
      expected = expect_.trust, source = "the configuration";
    } else if (auto s = Siblings([](const PortConfig& p) -> std::optional<std::string> {
                 if (p.trust.empty()) return std::nullopt;
                 return p.trust;
               });
               s.value) {
      expected = *s.value, source = SiblingSource(s);
    }
    if (expected.empty() || expected == port.trust) return;
    Add(port, "trust", {}, port.trust == "dscp" ? 1 : 0, expected == "dscp" ? 1 : 0,
        "trust " + port.trust + ", expected " + expected + " from " + source);
  }

  void DscpMap(const PortConfig& port) {
    if (port.dscp_map.empty() || port.trust == "pcp") return;
    Checked(port, "dscp_map");
    auto s = Siblings([](const PortConfig& p) -> std::optional<std::string> {
      if (p.dscp_map.empty() || p.trust == "pcp") return std::nullopt;
      return p.dscp_map;
    });
    if (!s.value || *s.value == port.dscp_map || s.value->size() != port.dscp_map.size()) return;
    int differing = 0;
    std::string examples;
    for (size_t dscp = 0; dscp < port.dscp_map.size(); ++dscp) {
      if (port.dscp_map[dscp] == (*s.value)[dscp]) continue;
      if (++differing <= 3) {
        examples += (examples.empty() ? "" : ", ") + std::string("DSCP ") + std::to_string(dscp) +
                    " -> " + port.dscp_map[dscp] + " (expected " + (*s.value)[dscp] + ")";
      }
    }
    Add(port, "dscp_map", {}, differing, 0,
        "DSCP to priority map differs in " + std::to_string(differing) + " DSCPs from " +
            SiblingSource(s) + ": " + examples);
  }

  void Mtu(const PortConfig& port) {
    if (!port.mtu) return;
    Checked(port, "mtu");
    std::optional<int> expected;
    std::string source;
    if (expect_.mtu) {
      expected = expect_.mtu, source = "the configuration";
    } else if (auto s = Siblings([](const PortConfig& p) -> std::optional<std::string> {
                 if (!p.mtu) return std::nullopt;
                 return std::to_string(*p.mtu);
               });
               s.value) {
      expected = std::stoi(*s.value), source = SiblingSource(s);
    }
    if (!expected || *expected == *port.mtu) return;
    Add(port, "mtu", {}, *port.mtu, *expected,
        "MTU " + std::to_string(*port.mtu) + ", expected " + std::to_string(*expected) + " from " +
            source);
  }

  const NodeConfig& config_;
  const Expectations& expect_;
  DriftReport& report_;
};

// The active IB MTU of each RDMA port (issue 34). Only ACTIVE ports (or ports whose state is not
// reported) are compared: a port that is down has no negotiated MTU. The siblings are the ports
// of the same link layer, since IB and RoCE set their MTU apart (the subnet manager's partition
// MTU; the netdev MTU through ib_core's iboe_get_mtu or rxe's eth_mtu_int_to_enum: 1500 gives
// 1024, 9000 gives 4096; docs/reference.md §2.1).
void IbMtu(const NodeConfig& config, const Expectations& expect, DriftReport& report) {
  constexpr int kActive = 4;  // IB_PORT_ACTIVE
  auto checkable = [](const RdmaPortConfig& p) {
    return p.active_mtu.has_value() && (!p.state || *p.state == kActive);
  };
  for (const RdmaPortConfig& port : config.rdma_ports) {
    if (!checkable(port)) continue;
    const std::string subject = port.device + "/" + port.port;
    report.checked.emplace(subject, "ib_mtu");
    std::optional<int> expected;
    std::string source;
    if (expect.ib_mtu) {
      expected = expect.ib_mtu, source = "the configuration";
    } else {
      std::vector<std::string> values;
      for (const RdmaPortConfig& p : config.rdma_ports) {
        if (checkable(p) && p.link_layer == port.link_layer) {
          values.push_back(std::to_string(*p.active_mtu));
        }
      }
      if (values.size() >= 2) {
        const auto m = StrictMajority(values);
        if (m.value) expected = std::stoi(*m.value), source = SiblingSource(m);
      }
    }
    const int active = *port.active_mtu;
    if (!expected || *expected == active) continue;
    Drift d;
    d.subject = subject;
    d.setting = "ib_mtu";
    d.entity = {{"device", port.device}, {"port", port.port}};
    if (!port.netdev.empty()) d.entity.emplace_back("netdev", port.netdev);
    d.entity.emplace_back("setting", d.setting);
    d.observed = active;
    d.expected = *expected;
    d.reason = port.device + " port " + port.port +
               (port.netdev.empty() ? "" : " (" + port.netdev + ")") + ": active IB MTU " +
               std::to_string(active) +
               (port.max_mtu ? " (max " + std::to_string(*port.max_mtu) + ")" : "") +
               ", expected " + std::to_string(*expected) + " from " + source;
    if (port.max_mtu && *expected > *port.max_mtu) {
      d.reason += "; the port supports at most " + std::to_string(*port.max_mtu);
    }
    auto netdev = std::find_if(config.ports.begin(), config.ports.end(),
                               [&](const PortConfig& p) { return p.netdev == port.netdev; });
    if (port.link_layer == "Ethernet" && netdev != config.ports.end() && netdev->mtu) {
      d.reason += "; on RoCE it follows the netdev MTU, " + port.netdev + " runs " +
                  std::to_string(*netdev->mtu);
    }
    report.drifts.push_back(std::move(d));
  }
}

void GpudirectModule(const NodeConfig& config, const Expectations& expect, DriftReport& report) {
  if (!expect.require_gpudirect_module || !config.nvidia_gpu || !config.rdma_nic ||
      config.gpudirect_modules.empty()) {
    return;
  }
  report.checked.emplace("node", "gpudirect_module");
  for (const auto& [module, loaded] : config.gpudirect_modules) {
    if (loaded) return;
  }
  Drift d;
  d.subject = "node";
  d.setting = "gpudirect_module";
  d.entity = {{"setting", d.setting}};
  d.observed = 0;
  d.expected = 1;
  d.reason =
      "no GPUDirect RDMA module loaded (nvidia_peermem, nv_peer_mem) while NVIDIA GPUs and RDMA "
      "NICs are present: RDMA to GPU memory falls back to host bounce buffers";
  report.drifts.push_back(std::move(d));
}

}  // namespace

DriftReport CheckDrift(const NodeConfig& config, const Expectations& expect) {
  DriftReport report;
  PortChecks(config, expect, report).Run();
  IbMtu(config, expect, report);
  GpudirectModule(config, expect, report);
  CheckPcie(config, report);
  return report;
}

}  // namespace fabricwatch::detect::drift
