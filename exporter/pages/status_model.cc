#include "exporter/pages/status_model.h"

#include <algorithm>
#include <cmath>

#include "collectors/core/family_label.h"
#include "collectors/jobs/jobs_metrics.h"
#include "collectors/optics/optics_metrics.h"
#include "collectors/peer/peer_metrics.h"
#include "collectors/rdma/rdma_metrics.h"
#include "collectors/topology/topology_metrics.h"
#include "detectors/ber_growth/ber_growth_metrics.h"
#include "detectors/core/node_model.h"
#include "detectors/registry.h"
#include "detectors/core/snapshot_lookup.h"
#include "detectors/link_degraded/link_degraded_metrics.h"
#include "detectors/pfc_storm/pfc_storm_metrics.h"
#include "exporter/privileges.h"

namespace fabricwatch::exporter::status {
namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;

// The detectors' evidence families the page reads, from their contract headers
// (detectors/<name>/<name>_metrics.h), like the collectors' families.
using detect::ber_growth::kEffective;
using detect::ber_growth::kIbEffective;
using detect::link_degraded::kExpectedLanes;
using detect::link_degraded::kExpectedRate;
using detect::link_degraded::kLanes;
using detect::link_degraded::kRate;
using detect::pfc_storm::kPauseRatio;
using detect::pfc_storm::kStormSeconds;
constexpr const MetricDesc* kDetectorFamilies[] = {&kRate,          &kLanes,       &kExpectedRate,
                                                   &kExpectedLanes, &kEffective,   &kIbEffective,
                                                   &kPauseRatio,    &kStormSeconds};
// The standard process metric of the agent's own families (exporter/pipeline/self_metrics.cc).
constexpr std::string_view kProcessStart = "process_start_time_seconds";

constexpr int kPortActive = 4;       // fabric_rdma_port_state: IB_PORT_ACTIVE
constexpr int kPortActiveDefer = 5;  // IB_PORT_ACTIVE_DEFER
constexpr double kBitsPerByte = 8;
constexpr double kGiga = 1e9;

// Calls fn(metric, value) for every sample of the family `name` (none when it is absent).
template <typename Fn>
void Each(const FamilyIndex& index, std::string_view name, Fn&& fn) {
  const MetricFamily* family = index.Find(name);
  if (family == nullptr) return;
  for (const ClientMetric& metric : family->metric)
    fn(metric, detect::SampleValue(*family, metric));
}
// The same for a family declared by a collector's or a detector's contract header.
template <typename Fn>
void Each(const FamilyIndex& index, const MetricDesc& desc, Fn&& fn) {
  Each(index, desc.name, std::forward<Fn>(fn));
}

// A label of a sample of Family as a string (checked: collectors/core/family_label.h).
template <const auto& Family>
std::string Text(const ClientMetric& metric, LabelOf<Family> label) {
  return std::string(fabricwatch::Label<Family>(metric, label));
}

std::string FormatNumber(double value, const char* format) {
  char buf[64];
  snprintf(buf, sizeof(buf), format, value);
  return buf;
}

// Does the anomaly's entity name this port (its device and port, or its netdev)?
bool NamesPort(const detect::EntityLabels& entity, const PortRow& row) {
  auto label = [&](std::string_view name) -> std::optional<std::string> {
    for (const auto& [key, value] : entity) {
      if (key == name) return value;
    }
    return std::nullopt;
  };
  const auto device = label("device");
  const auto port = label("port");
  const auto netdev = label("netdev");
  if (device && *device == row.device && (!port || *port == row.port)) return true;
  return netdev && !row.netdev.empty() && *netdev == row.netdev;
}

void Mark(Reading& reading, std::string why) {
  reading.abnormal = true;
  if (reading.why.empty()) reading.why = std::move(why);
}

// The ports: one row per RDMA port of the node model, with its state, rate and width.
std::vector<PortRow> PortRows(const detect::NodeModel& node) {
  std::vector<PortRow> rows;
  for (const detect::RdmaPort& port : node.ports()) {
    PortRow row;
    row.device = port.id.device;
    row.port = port.id.PortLabel();
    row.netdev = port.netdev;
    row.link_layer = port.link_layer_text;
    row.state = port.state;
    if (port.rate_bytes_per_second) {
      row.rate_gbps.value = *port.rate_bytes_per_second * kBitsPerByte / kGiga;
    }
    if (port.lanes) row.width.value = *port.lanes;
    rows.push_back(std::move(row));
  }
  return rows;
}

// The row of the port a sample of Family names by its device and port.
template <const auto& Family>
PortRow* FindPort(std::vector<PortRow>& rows, const ClientMetric& m) {
  const std::string_view device = fabricwatch::Label<Family>(m, "device");
  const std::string_view port = fabricwatch::Label<Family>(m, "port");
  for (PortRow& row : rows) {
    if (row.device == device && row.port == port) return &row;
  }
  return nullptr;
}

// The row of the port a sample of Family names by its netdev.
template <const auto& Family>
PortRow* FindNetdev(std::vector<PortRow>& rows, const ClientMetric& m) {
  const std::string_view netdev = fabricwatch::Label<Family>(m, "netdev");
  if (netdev.empty()) return nullptr;
  for (PortRow& row : rows) {
    if (row.netdev == netdev) return &row;
  }
  return nullptr;
}

// State, rate and width, judged against link_degraded's expected shape.
void AddLinkShape(const FamilyIndex& index, std::vector<PortRow>& rows) {
  // link_degraded's view, where it has one, replaces the rdma collector's (PortRows): on
  // Ethernet it is the ethtool speed, not RoCE's synthetic rate.
  Each(index, kRate, [&](const ClientMetric& m, double v) {
    if (PortRow* row = FindPort<kRate>(rows, m)) row->rate_gbps.value = v * kBitsPerByte / kGiga;
  });
  Each(index, kLanes, [&](const ClientMetric& m, double v) {
    if (PortRow* row = FindPort<kLanes>(rows, m)) row->width.value = v;
  });
  for (PortRow& row : rows) {
    if (row.state && *row.state != kPortActive && *row.state != kPortActiveDefer) {
      row.state_abnormal = true;
      row.state_why = "not ACTIVE";
    }
  }
  auto judge = [&](Reading& reading, double expected, const std::string& source,
                   const std::string& text) {
    reading.detail = "expected " + text + ", " + source;
    if (reading.value && *reading.value < expected * 0.999) Mark(reading, "below expected");
  };
  // A down port's rate is stale (rdma_metrics.h): only a port that is up is judged on it.
  Each(index, kExpectedRate, [&](const ClientMetric& m, double v) {
    PortRow* row = FindPort<kExpectedRate>(rows, m);
    if (row == nullptr || row->state_abnormal) return;
    const double gbps = v * kBitsPerByte / kGiga;
    judge(row->rate_gbps, gbps, std::string(fabricwatch::Label<kExpectedRate>(m, "source")),
          FormatNumber(gbps, "%g Gb/s"));
  });
  Each(index, kExpectedLanes, [&](const ClientMetric& m, double v) {
    PortRow* row = FindPort<kExpectedLanes>(rows, m);
    if (row == nullptr || row->state_abnormal) return;
    judge(row->width, v, std::string(fabricwatch::Label<kExpectedLanes>(m, "source")),
          FormatNumber(v, "%gx"));
  });
}

// BER and PFC pause from the detectors' evidence families.
void AddErrorsAndPause(const FamilyIndex& index, std::vector<PortRow>& rows) {
  auto raise = [](Reading& reading, double v, std::string detail) {
    if (!reading.value || v > *reading.value) reading.value = v, reading.detail = std::move(detail);
  };
  Each(index, kEffective, [&](const ClientMetric& m, double v) {
    if (PortRow* row = FindNetdev<kEffective>(rows, m)) {
      raise(row->ber, v, "window " + std::string(fabricwatch::Label<kEffective>(m, "window")));
    }
  });
  Each(index, kIbEffective, [&](const ClientMetric& m, double v) {
    if (PortRow* row = FindPort<kIbEffective>(rows, m)) {
      raise(row->ber, v, "window " + std::string(fabricwatch::Label<kIbEffective>(m, "window")));
    }
  });
  Each(index, kPauseRatio, [&](const ClientMetric& m, double v) {
    if (PortRow* row = FindNetdev<kPauseRatio>(rows, m)) {
      raise(row->pfc_pause, v,
            std::string(fabricwatch::Label<kPauseRatio>(m, "direction")) + " prio " +
                std::string(fabricwatch::Label<kPauseRatio>(m, "priority")));
    }
  });
  Each(index, kStormSeconds, [&](const ClientMetric& m, double v) {
    PortRow* row = FindNetdev<kStormSeconds>(rows, m);
    if (row == nullptr || v <= 0) return;
    Mark(row->pfc_pause, "storm (" + std::string(fabricwatch::Label<kStormSeconds>(m, "role")) +
                             ", priority " +
                             std::string(fabricwatch::Label<kStormSeconds>(m, "priority")) + ", " +
                             FormatNumber(v, "%.0f s") + ")");
  });
}

// Module temperature and the weakest lane's receive power, against the module's own thresholds.
void AddOptics(const FamilyIndex& index, std::vector<PortRow>& rows) {
  Each(index, optics::kTemperature, [&](const ClientMetric& m, double v) {
    if (PortRow* row = FindNetdev<optics::kTemperature>(rows, m))
      row->temperature_celsius.value = v;
  });
  Each(index, optics::kRxPower, [&](const ClientMetric& m, double v) {
    PortRow* row = FindNetdev<optics::kRxPower>(rows, m);
    if (row == nullptr) return;
    // dBm = 10 log10(mW); a dark lane (0 W) reads -inf, shown as such.
    const double dbm = v > 0 ? 10 * std::log10(v * 1000) : -INFINITY;
    if (!row->rx_power_dbm.value || dbm < *row->rx_power_dbm.value) {
      row->rx_power_dbm.value = dbm;
      row->rx_power_dbm.detail = "lane " + Text<optics::kRxPower>(m, "lane");
    }
  });
  Each(index, optics::kTemperatureThreshold, [&](const ClientMetric& m, double v) {
    PortRow* row = FindNetdev<optics::kTemperatureThreshold>(rows, m);
    if (row == nullptr ||
        fabricwatch::Label<optics::kTemperatureThreshold>(m, "threshold") != "high_warning")
      return;
    Reading& t = row->temperature_celsius;
    if (t.value && *t.value >= v) Mark(t, FormatNumber(v, "\u2265 high warning %g °C"));
  });
  Each(index, optics::kRxPowerThreshold, [&](const ClientMetric& m, double v) {
    PortRow* row = FindNetdev<optics::kRxPowerThreshold>(rows, m);
    if (row == nullptr ||
        fabricwatch::Label<optics::kRxPowerThreshold>(m, "threshold") != "low_warning" || v <= 0)
      return;
    Reading& p = row->rx_power_dbm;
    const double dbm = 10 * std::log10(v * 1000);
    if (p.value && *p.value < dbm) Mark(p, FormatNumber(dbm, "< low warning %.1f dBm"));
  });
  Each(index, optics::kRxLos, [&](const ClientMetric& m, double v) {
    PortRow* row = FindNetdev<optics::kRxLos>(rows, m);
    if (row != nullptr && v >= 1)
      Mark(row->rx_power_dbm, "loss of signal, lane " + Text<optics::kRxLos>(m, "lane"));
  });
}

void AddPeersAndJobs(const detect::NodeModel& node, std::vector<PortRow>& rows) {
  for (PortRow& row : rows) {
    const std::optional<detect::PortId> id = detect::PortId::FromLabels(row.device, row.port);
    const detect::RdmaPort* port = id ? node.Port(*id) : nullptr;
    if (port == nullptr) continue;
    if (const detect::Peer* peer = node.PeerOf(*port)) {
      row.peer_name = peer->name;
      row.peer_port = peer->port;
      row.peer_source = peer->source;
    }
    row.jobs = node.JobsOn(row.device);
  }
}

// Marks the cell of the column `declaration` names, with its note (else the detector's name).
void MarkColumn(PortRow& row, const detect::DetectorDeclaration& declaration,
                const std::string& detector) {
  std::string note = declaration.mark_note.empty() ? detector : std::string(declaration.mark_note);
  switch (declaration.marks) {
    case detect::PortColumn::kNone:
      return;
    case detect::PortColumn::kState:
      row.state_abnormal = true;
      if (row.state_why.empty()) row.state_why = std::move(note);
      return;
    case detect::PortColumn::kRate:
      return Mark(row.rate_gbps, std::move(note));
    case detect::PortColumn::kBer:
      return Mark(row.ber, std::move(note));
    case detect::PortColumn::kPfcPause:
      return Mark(row.pfc_pause, std::move(note));
    case detect::PortColumn::kTemperature:
      return Mark(row.temperature_celsius, std::move(note));
    case detect::PortColumn::kRxPower:
      return Mark(row.rx_power_dbm, std::move(note));
  }
}

// The value a detector's anomaly is about, for the mark on that value's cell.
void MarkByAnomalies(const std::vector<detect::ActiveAnomaly>& anomalies,
                     std::vector<PortRow>& rows) {
  for (PortRow& row : rows) {
    for (const detect::ActiveAnomaly& a : anomalies) {
      if (!NamesPort(a.finding.entity, row)) continue;
      const std::string name =
          a.detector + " " + std::string(detect::SeverityName(a.finding.severity));
      row.anomalies.push_back(name);
      // The column the detector's finding marks, as it declares it (detectors/core/declaration.h).
      const detect::DetectorInfo* info = detect::FindDetector(a.detector);
      if (info != nullptr) MarkColumn(row, info->declaration, a.detector);
    }
    row.abnormal = !row.anomalies.empty() || row.state_abnormal || row.rate_gbps.abnormal ||
                   row.width.abnormal || row.ber.abnormal || row.pfc_pause.abnormal ||
                   row.temperature_celsius.abnormal || row.rx_power_dbm.abnormal;
  }
}

std::vector<CollectorRow> CollectorRows(const StatusInputs& inputs, const FamilyIndex& index) {
  std::map<std::string, std::vector<std::string>> missing;  // collector -> "CAP (feature)"
  Each(index, kPrivilegeMissing, [&](const ClientMetric& m, double v) {
    if (v < 1) return;
    const std::string feature = Text<kPrivilegeMissing>(m, "feature");
    for (const PrivilegeNeed* need : PrivilegeNeeds()) {
      if (need->feature == feature) {
        missing[std::string(need->collector)].push_back(Text<kPrivilegeMissing>(m, "capability") +
                                                        " (" + feature + ")");
      }
    }
  });
  const double now = std::chrono::duration<double>(inputs.now.time_since_epoch()).count();
  std::vector<CollectorRow> rows;
  for (const auto& [name, health] : inputs.collectors) {
    CollectorRow row;
    row.name = name;
    row.health = health;
    if (health.has_run) row.age_seconds = std::max(0.0, now - health.last_sample_timestamp);
    if (auto it = missing.find(name); it != missing.end()) row.privileges_missing = it->second;
    rows.push_back(std::move(row));
  }
  return rows;
}

std::vector<EventRow> EventRows(const StatusInputs& inputs) {
  std::vector<EventRow> events;
  for (const sys::LinkEvent& e : inputs.link_events) {
    events.push_back({.time = e.time,
                      .subject = e.netdev,
                      .what = std::string(e.carrier_up ? "carrier up" : "carrier down") +
                              " (operstate " + e.operstate + (e.inferred ? ", inferred)" : ")"),
                      .bad = !e.carrier_up});
  }
  for (const sys::RdmaPortEvent& e : inputs.rdma_events) {
    events.push_back({.time = e.time,
                      .subject = e.port == 0 ? e.device : e.device + "/" + std::to_string(e.port),
                      .what = e.event,
                      .bad = e.event != "port_active" && e.event != "lid_change" &&
                             e.event != "gid_change" && e.event != "pkey_change" &&
                             e.event != "sm_change" && e.event != "client_reregister"});
  }
  std::stable_sort(events.begin(), events.end(),
                   [](const EventRow& a, const EventRow& b) { return a.time > b.time; });
  return events;
}

// A NIC by its RDMA device name, else its PCI address (samples of Family: gpu, nic, rdma_device).
template <const auto& Family>
std::string NicName(const ClientMetric& m) {
  std::string rdma = Text<Family>(m, "rdma_device");
  return rdma.empty() ? Text<Family>(m, "nic") : rdma;
}

TopologyMap Topology(const FamilyIndex& index) {
  TopologyMap map;
  std::set<std::string> gpus;
  std::set<std::string> nics;
  Each(index, topology::kPairDistance, [&](const ClientMetric& m, double v) {
    const std::string gpu = Text<topology::kPairDistance>(m, "gpu");
    const std::string nic = NicName<topology::kPairDistance>(m);
    gpus.insert(gpu);
    nics.insert(nic);
    map.level[{gpu, nic}] = static_cast<int>(v);
  });
  Each(index, topology::kNearest, [&](const ClientMetric& m, double) {
    map.nearest.insert({Text<topology::kNearest>(m, "gpu"), NicName<topology::kNearest>(m)});
  });
  map.gpus.assign(gpus.begin(), gpus.end());
  map.nics.assign(nics.begin(), nics.end());
  return map;
}

}  // namespace

FamilyIndex::FamilyIndex(std::span<const prometheus::MetricFamily* const> families) {
  for (const prometheus::MetricFamily* family : families) by_name_.emplace(family->name, family);
}

const prometheus::MetricFamily* FamilyIndex::Find(std::string_view name) const {
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : it->second;
}

std::span<const MetricDesc* const> DetectorFamiliesRead() { return kDetectorFamilies; }

size_t StatusModel::AbnormalPorts() const {
  return static_cast<size_t>(
      std::count_if(ports.begin(), ports.end(), [](const PortRow& p) { return p.abnormal; }));
}

size_t StatusModel::CriticalAnomalies() const {
  return static_cast<size_t>(std::count_if(anomalies.begin(), anomalies.end(), [](const auto& a) {
    return a.finding.severity == detect::Severity::kCritical;
  }));
}

StatusModel BuildStatusModel(const StatusInputs& inputs) {
  const FamilyIndex index(inputs.families);
  StatusModel model;
  model.hostname = inputs.hostname;
  model.sysfs_root = inputs.sysfs_root;
  model.now = inputs.now;
  Each(index, kProcessStart, [&](const ClientMetric&, double start) {
    const double now = std::chrono::duration<double>(inputs.now.time_since_epoch()).count();
    if (start > 0) model.uptime_seconds = std::max(0.0, now - start);
  });
  model.collectors = CollectorRows(inputs, index);
  for (const auto& [name, health] : inputs.collectors) {
    if (!health.has_run) model.collectors_pending.push_back(name);
  }
  model.waiting_for_samples = model.collectors_pending.size() == inputs.collectors.size();
  const detect::NodeModel& node = inputs.node ? *inputs.node : detect::EmptyNodeModel();
  model.ports = PortRows(node);
  AddLinkShape(index, model.ports);
  AddErrorsAndPause(index, model.ports);
  AddOptics(index, model.ports);
  AddPeersAndJobs(node, model.ports);
  MarkByAnomalies(inputs.anomalies, model.ports);
  model.anomalies = inputs.anomalies;
  model.transitions = inputs.transitions;
  model.events = EventRows(inputs);
  model.link_events_listening = inputs.link_events_listening;
  model.rdma_events_listening = inputs.rdma_events_listening;
  model.topology = Topology(index);
  return model;
}

std::string PathLevelName(int level) {
  switch (level) {
    case 10:
      return "PIX";
    case 20:
      return "PXB";
    case 30:
      return "PHB";
    case 40:
      return "NODE";
    case 50:
      return "SYS";
    default:
      return std::to_string(level);
  }
}

std::string PortStateName(int state) {
  static constexpr std::string_view kNames[] = {"NOP",   "DOWN",   "INIT",
                                                "ARMED", "ACTIVE", "ACTIVE_DEFER"};
  if (state >= 0 && state < static_cast<int>(std::size(kNames))) {
    return std::string(kNames[state]);
  }
  return std::to_string(state);
}

}  // namespace fabricwatch::exporter::status
