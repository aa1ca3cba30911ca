#include "exporter/http/status_model.h"

#include <algorithm>
#include <cmath>

#include "collectors/jobs/jobs_metrics.h"
#include "collectors/optics/optics_metrics.h"
#include "collectors/peer/peer_metrics.h"
#include "collectors/rdma/rdma_metrics.h"
#include "collectors/topology/topology_metrics.h"
#include "detectors/core/snapshot_lookup.h"
#include "exporter/privileges.h"

namespace fabricwatch::exporter::status {
namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;

// The detectors' evidence families the page reads (DetectorFamiliesRead()).
constexpr std::string_view kLinkRate = "fabric_link_degraded_rate_bytes_per_second";
constexpr std::string_view kLinkLanes = "fabric_link_degraded_lanes";
constexpr std::string_view kExpectedRate = "fabric_link_degraded_expected_rate_bytes_per_second";
constexpr std::string_view kExpectedLanes = "fabric_link_degraded_expected_lanes";
constexpr std::string_view kEthBer = "fabric_ber_effective_ratio";
constexpr std::string_view kIbBer = "fabric_ber_ib_effective_ratio";
constexpr std::string_view kPauseRatio = "fabric_pfc_pause_ratio";
constexpr std::string_view kStormSeconds = "fabric_pfc_storm_condition_seconds";
constexpr DetectorFamilyName kDetectorFamilies[] = {
    {"link_degraded", kLinkRate},     {"link_degraded", kLinkLanes},
    {"link_degraded", kExpectedRate}, {"link_degraded", kExpectedLanes},
    {"ber_growth", kEthBer},          {"ber_growth", kIbBer},
    {"pfc_storm", kPauseRatio},       {"pfc_storm", kStormSeconds},
};
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

std::string Label(const ClientMetric& metric, std::string_view name) {
  return std::string(detect::LabelOr(metric, name));
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

// The ports: one row per fabric_rdma_port_info sample, with its state, rate and width.
std::vector<PortRow> PortRows(const FamilyIndex& index) {
  std::vector<PortRow> rows;
  Each(index, rdma::kPortInfo.name, [&](const ClientMetric& m, double) {
    PortRow row;
    row.device = Label(m, "device");
    row.port = Label(m, "port");
    row.netdev = Label(m, "netdev");
    row.link_layer = Label(m, "link_layer");
    rows.push_back(std::move(row));
  });
  std::sort(rows.begin(), rows.end(), [](const PortRow& a, const PortRow& b) {
    return std::tie(a.device, a.port) < std::tie(b.device, b.port);
  });
  return rows;
}

PortRow* FindPort(std::vector<PortRow>& rows, const ClientMetric& m) {
  const std::string_view device = detect::LabelOr(m, "device");
  const std::string_view port = detect::LabelOr(m, "port");
  for (PortRow& row : rows) {
    if (row.device == device && row.port == port) return &row;
  }
  return nullptr;
}

PortRow* FindNetdev(std::vector<PortRow>& rows, const ClientMetric& m) {
  const std::string_view netdev = detect::LabelOr(m, "netdev");
  if (netdev.empty()) return nullptr;
  for (PortRow& row : rows) {
    if (row.netdev == netdev) return &row;
  }
  return nullptr;
}

// State, rate and width, judged against link_degraded's expected shape.
void AddLinkShape(const FamilyIndex& index, std::vector<PortRow>& rows) {
  Each(index, rdma::kPortState.name, [&](const ClientMetric& m, double v) {
    if (PortRow* row = FindPort(rows, m)) row->state = static_cast<int>(v);
  });
  // link_degraded's view first (Ethernet: the ethtool speed, not RoCE's synthetic rate), else
  // the rdma collector's.
  Each(index, rdma::kPortRate.name, [&](const ClientMetric& m, double v) {
    if (PortRow* row = FindPort(rows, m)) row->rate_gbps.value = v * kBitsPerByte / kGiga;
  });
  Each(index, rdma::kPortLanes.name, [&](const ClientMetric& m, double v) {
    if (PortRow* row = FindPort(rows, m)) row->width.value = v;
  });
  Each(index, kLinkRate, [&](const ClientMetric& m, double v) {
    if (PortRow* row = FindPort(rows, m)) row->rate_gbps.value = v * kBitsPerByte / kGiga;
  });
  Each(index, kLinkLanes, [&](const ClientMetric& m, double v) {
    if (PortRow* row = FindPort(rows, m)) row->width.value = v;
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
    PortRow* row = FindPort(rows, m);
    if (row == nullptr || row->state_abnormal) return;
    const double gbps = v * kBitsPerByte / kGiga;
    judge(row->rate_gbps, gbps, Label(m, "source"), FormatNumber(gbps, "%g Gb/s"));
  });
  Each(index, kExpectedLanes, [&](const ClientMetric& m, double v) {
    PortRow* row = FindPort(rows, m);
    if (row == nullptr || row->state_abnormal) return;
    judge(row->width, v, Label(m, "source"), FormatNumber(v, "%gx"));
  });
}

// BER and PFC pause from the detectors' evidence families.
void AddErrorsAndPause(const FamilyIndex& index, std::vector<PortRow>& rows) {
  auto raise = [](Reading& reading, double v, std::string detail) {
    if (!reading.value || v > *reading.value) reading.value = v, reading.detail = std::move(detail);
  };
  Each(index, kEthBer, [&](const ClientMetric& m, double v) {
    if (PortRow* row = FindNetdev(rows, m)) raise(row->ber, v, "window " + Label(m, "window"));
  });
  Each(index, kIbBer, [&](const ClientMetric& m, double v) {
    if (PortRow* row = FindPort(rows, m)) raise(row->ber, v, "window " + Label(m, "window"));
  });
  Each(index, kPauseRatio, [&](const ClientMetric& m, double v) {
    if (PortRow* row = FindNetdev(rows, m)) {
      raise(row->pfc_pause, v, Label(m, "direction") + " prio " + Label(m, "priority"));
    }
  });
  Each(index, kStormSeconds, [&](const ClientMetric& m, double v) {
    PortRow* row = FindNetdev(rows, m);
    if (row == nullptr || v <= 0) return;
    Mark(row->pfc_pause, "storm (" + Label(m, "role") + ", priority " + Label(m, "priority") +
                             ", " + FormatNumber(v, "%.0f s") + ")");
  });
}

// Module temperature and the weakest lane's receive power, against the module's own thresholds.
void AddOptics(const FamilyIndex& index, std::vector<PortRow>& rows) {
  Each(index, optics::kTemperature.name, [&](const ClientMetric& m, double v) {
    if (PortRow* row = FindNetdev(rows, m)) row->temperature_celsius.value = v;
  });
  Each(index, optics::kRxPower.name, [&](const ClientMetric& m, double v) {
    PortRow* row = FindNetdev(rows, m);
    if (row == nullptr) return;
    // dBm = 10 log10(mW); a dark lane (0 W) reads -inf, shown as such.
    const double dbm = v > 0 ? 10 * std::log10(v * 1000) : -INFINITY;
    if (!row->rx_power_dbm.value || dbm < *row->rx_power_dbm.value) {
      row->rx_power_dbm.value = dbm;
      row->rx_power_dbm.detail = "lane " + Label(m, "lane");
    }
  });
  Each(index, optics::kTemperatureThreshold.name, [&](const ClientMetric& m, double v) {
    PortRow* row = FindNetdev(rows, m);
    if (row == nullptr || detect::LabelOr(m, "threshold") != "high_warning") return;
    Reading& t = row->temperature_celsius;
    if (t.value && *t.value >= v) Mark(t, FormatNumber(v, "\u2265 high warning %g °C"));
  });
  Each(index, optics::kRxPowerThreshold.name, [&](const ClientMetric& m, double v) {
    PortRow* row = FindNetdev(rows, m);
    if (row == nullptr || detect::LabelOr(m, "threshold") != "low_warning" || v <= 0) return;
    Reading& p = row->rx_power_dbm;
    const double dbm = 10 * std::log10(v * 1000);
    if (p.value && *p.value < dbm) Mark(p, FormatNumber(dbm, "< low warning %.1f dBm"));
  });
  Each(index, optics::kRxLos.name, [&](const ClientMetric& m, double v) {
    PortRow* row = FindNetdev(rows, m);
    if (row != nullptr && v >= 1)
      Mark(row->rx_power_dbm, "loss of signal, lane " + Label(m, "lane"));
  });
}

void AddPeersAndJobs(const FamilyIndex& index, std::vector<PortRow>& rows) {
  Each(index, peer::kPeerInfo.name, [&](const ClientMetric& m, double) {
    PortRow* row = FindPort(rows, m);
    if (row == nullptr) return;
    row->peer_name = Label(m, "peer_name");
    row->peer_port = Label(m, "peer_port");
    row->peer_source = Label(m, "source");
  });
  Each(index, jobs::kDeviceJobInfo.name, [&](const ClientMetric& m, double) {
    const std::string job = Label(m, "scheduler") + ":" + Label(m, "job_id");
    for (PortRow& row : rows) {
      if (row.device == detect::LabelOr(m, "device")) row.jobs.push_back(job);
    }
  });
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
      if (a.detector == "link_flap") {
        row.state_abnormal = true;
        if (row.state_why.empty()) row.state_why = "flapping";
      } else if (a.detector == "link_degraded") {
        Mark(row.rate_gbps, "link_degraded");
      } else if (a.detector == "ber_growth") {
        Mark(row.ber, "ber_growth");
      } else if (a.detector == "pfc_storm") {
        Mark(row.pfc_pause, "pfc_storm");
      } else if (a.detector == "thermal_drift") {
        Mark(row.temperature_celsius, "thermal_drift");
      } else if (a.detector == "optical_drift") {
        Mark(row.rx_power_dbm, "optical_drift");
      }
    }
    row.abnormal = !row.anomalies.empty() || row.state_abnormal || row.rate_gbps.abnormal ||
                   row.width.abnormal || row.ber.abnormal || row.pfc_pause.abnormal ||
                   row.temperature_celsius.abnormal || row.rx_power_dbm.abnormal;
  }
}

std::vector<CollectorRow> CollectorRows(const StatusInputs& inputs, const FamilyIndex& index) {
  std::map<std::string, std::vector<std::string>> missing;  // collector -> "CAP (feature)"
  Each(index, PrivilegeLog::Metrics().front().name, [&](const ClientMetric& m, double v) {
    if (v < 1) return;
    const std::string feature = Label(m, "feature");
    for (const PrivilegeNeed& need : PrivilegeNeeds()) {
      if (need.feature == feature) {
        missing[std::string(need.collector)].push_back(Label(m, "capability") + " (" + feature +
                                                       ")");
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

TopologyMap Topology(const FamilyIndex& index) {
  TopologyMap map;
  auto nic_name = [](const ClientMetric& m) {
    std::string rdma = Label(m, "rdma_device");
    return rdma.empty() ? Label(m, "nic") : rdma;
  };
  std::set<std::string> gpus;
  std::set<std::string> nics;
  Each(index, topology::kPairDistance.name, [&](const ClientMetric& m, double v) {
    const std::string gpu = Label(m, "gpu");
    const std::string nic = nic_name(m);
    gpus.insert(gpu);
    nics.insert(nic);
    map.level[{gpu, nic}] = static_cast<int>(v);
  });
  Each(index, topology::kNearest.name, [&](const ClientMetric& m, double) {
    map.nearest.insert({Label(m, "gpu"), nic_name(m)});
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

std::span<const DetectorFamilyName> DetectorFamiliesRead() { return kDetectorFamilies; }

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
  model.ports = PortRows(index);
  AddLinkShape(index, model.ports);
  AddErrorsAndPause(index, model.ports);
  AddOptics(index, model.ports);
  AddPeersAndJobs(index, model.ports);
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
