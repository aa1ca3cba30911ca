#pragma once
// The status page's model (issue 25 items 5-6): what the page at `/` shows, built from exactly
// what /metrics serves — the collectors' snapshot families, the detectors' evidence families
// (DetectorEngine::Collect()), the agent's own families — and the tracker's active set, so the
// page and a scrape never disagree. Pure: no I/O, no clock, no HTTP; the page assembly
// (status_page.h) gathers the inputs and the renderer (status_html.h) turns the model into HTML.
//
// A port row is abnormal when an active anomaly names its device (and port) or its netdev, or
// when one of its values is out of its threshold:
//   state        not ACTIVE (fabric_rdma_port_state 4) or ACTIVE_DEFER (5)
//   rate, width  below what the port should run at (link_degraded's expected families: the
//                fabric shape of README "Fabric shape")
//   BER          ber_growth names the port (its threshold is the detector's option)
//   PFC          pfc_storm's storm condition holds on a priority, or pfc_storm names the port
// (the column an anomaly marks is the one its detector declares: DetectorDeclaration::marks,
// detectors/core/declaration.h)
//   temperature  at or above the module's own high warning threshold (from its EEPROM)
//   Rx power     below the module's own low warning threshold, or a lane reports loss of signal
// and each abnormal value carries a note that says why, so the page never marks by colour alone.
//
// Thread-safety: values only.

#include <prometheus/metric_family.h>

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/metric_sink.h"
#include "collectors/sys/link_events.h"
#include "collectors/sys/verbs_events.h"
#include "detectors/core/anomaly_tracker.h"
#include "detectors/core/node_model.h"
#include "exporter/pipeline/self_metrics.h"

namespace fabricwatch::exporter::status {

// Families by name, over families that live elsewhere (snapshots, the engine's Collect()). Names
// are unique across the agent's families (the metric reference checks it); should two share one,
// the first counts.
class FamilyIndex {
 public:
  explicit FamilyIndex(std::span<const prometheus::MetricFamily* const> families);
  // nullptr when no family has that name.
  const prometheus::MetricFamily* Find(std::string_view name) const;

 private:
  std::map<std::string_view, const prometheus::MetricFamily*> by_name_;
};

// The families the page reads that a detector exports, through the detector's own MetricDesc
// (its contract header detectors/<name>/<name>_metrics.h), as the collectors' are read;
// status_model_test holds each against the registry's metric tables.
std::span<const MetricDesc* const> DetectorFamiliesRead();

struct StatusInputs {
  std::string hostname;
  std::string sysfs_root;  // --path.sysfs: a replay root shows here
  detect::TimePoint now;
  // Every family /metrics would serve: the agent's own, the engine's, the snapshots'.
  std::vector<const prometheus::MetricFamily*> families;
  // The node model of the same snapshots (detectors/core/node_model.h): the port rows, their
  // neighbours and jobs. Null: no port known.
  std::shared_ptr<const detect::NodeModel> node;
  // The enabled collectors (SelfMetrics::Collectors()), by name.
  std::map<std::string, CollectorHealth> collectors;
  std::vector<detect::ActiveAnomaly> anomalies;
  std::vector<detect::AnomalyTransition> transitions;  // newest first
  std::vector<sys::LinkEvent> link_events;             // newest last (LinkEventLog::Recent)
  std::vector<sys::RdmaPortEvent> rdma_events;         // newest last
  bool link_events_listening = false;
  bool rdma_events_listening = false;
};

// One value of a port, with why it is marked (empty when it is not) and what it is judged
// against ("expected 400 Gb/s (siblings)"), both as plain text.
struct Reading {
  std::optional<double> value;
  bool abnormal = false;
  std::string why;
  std::string detail;
};

struct PortRow {
  std::string device;
  std::string port;
  std::string netdev;
  std::string link_layer;
  std::optional<int> state;  // fabric_rdma_port_state
  bool state_abnormal = false;
  std::string state_why;
  Reading rate_gbps;
  Reading width;
  Reading ber;
  Reading pfc_pause;  // the highest ratio over priorities and directions; detail names it
  Reading temperature_celsius;
  Reading rx_power_dbm;  // the weakest lane
  std::string peer_name;
  std::string peer_port;
  std::string peer_source;
  std::vector<std::string> jobs;       // "slurm:1234"
  std::vector<std::string> anomalies;  // "link_flap critical"
  bool abnormal = false;
};

struct CollectorRow {
  std::string name;
  CollectorHealth health;
  std::optional<double> age_seconds;            // since its last sample; none before the first
  std::vector<std::string> privileges_missing;  // "CAP_NET_ADMIN (module_eeprom)"
};

struct EventRow {
  detect::TimePoint time;
  std::string subject;  // "eth2" or "mlx5_0/1"
  std::string what;     // "carrier down (operstate down)", "port_err"
  bool bad = false;     // a link going down or a port error
};

// GPU x RDMA device path levels (fabric_topology_gpu_nic_distance, nearest_nic_info).
struct TopologyMap {
  std::vector<std::string> gpus;
  std::vector<std::string> nics;  // RDMA device names, else PCI addresses
  std::map<std::pair<std::string, std::string>, int> level;  // (gpu, nic) -> NVML level
  std::set<std::pair<std::string, std::string>> nearest;
};

struct StatusModel {
  std::string hostname;
  std::string sysfs_root;
  detect::TimePoint now;
  std::optional<double> uptime_seconds;  // from process_start_time_seconds
  // No collector has finished a collection yet: nothing below is known, and the page says so
  // instead of showing an empty "all good".
  bool waiting_for_samples = true;
  // Enabled collectors without a finished collection yet: until they have one, "all good" would
  // be a guess (the port grid lacks their columns).
  std::vector<std::string> collectors_pending;
  std::vector<CollectorRow> collectors;
  std::vector<PortRow> ports;
  std::vector<detect::ActiveAnomaly> anomalies;
  std::vector<detect::AnomalyTransition> transitions;
  std::vector<EventRow> events;  // newest first
  bool link_events_listening = false;
  bool rdma_events_listening = false;
  TopologyMap topology;

  size_t AbnormalPorts() const;
  size_t CriticalAnomalies() const;
};

StatusModel BuildStatusModel(const StatusInputs& inputs);

// "PIX" for 10 ... "SYS" for 50 (nvmlGpuTopologyLevel_t); the number as text for another value.
std::string PathLevelName(int level);
// "ACTIVE" for 4 ... (fabric_rdma_port_state's HELP); the number as text for another value.
std::string PortStateName(int state);

}  // namespace fabricwatch::exporter::status
