#pragma once
// Test helpers for detector scenarios: synthetic collector snapshots (MetricFamily vectors as a
// collector's MetricSink would build them) and a log of the findings a detector raised and
// cleared over a simulated timeline.

#include <prometheus/metric_family.h>

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "collectors/optics/optics_metrics.h"
#include "detectors/core/detector.h"
#include "tests/unit/detectors/detector_feed.h"
#include "tests/testing/families.h"

namespace fabricwatch::detect::testing {

using Labels = std::vector<std::pair<std::string, std::string>>;

// Builds one snapshot's families; samples of one name share a family, in first-use order.
// The shared test helper that builds collector families (tests/testing/families.h).
using SnapshotBuilder = fabricwatch::testing::Families;

// "warning{netdev=eth0,lane=1}": a finding's identity minus the detector name.
inline std::string FindingKey(const Finding& finding) {
  std::string key = std::string(SeverityName(finding.severity)) + "{";
  for (size_t i = 0; i < finding.entity.size(); ++i) {
    if (i > 0) key += ",";
    key += finding.entity[i].first + "=" + finding.entity[i].second;
  }
  return key + "}";
}

// Feeds snapshots, evaluates after each and records first raise / last clear per finding key.
class FindingLog {
 public:
  using TimePoint = detect::TimePoint;
  explicit FindingLog(Detector& detector) : detector_(detector) {}

  void Feed(std::string_view collector, TimePoint time, const SnapshotBuilder& snapshot) {
    feed_(detector_, collector, time, snapshot.families());
    EvaluateAt(time);
  }
  void EvaluateAt(TimePoint time) {
    std::map<std::string, Finding> now;
    for (Finding& f : detector_.Evaluate(time)) now.emplace(FindingKey(f), std::move(f));
    for (const auto& [key, f] : now) {
      if (!active_.contains(key)) {
        ++raises_[key];
        if (!first_raise_.contains(key)) first_raise_[key] = time;
        last_finding_[key] = f;
      }
    }
    for (const auto& [key, f] : active_) {
      if (!now.contains(key)) last_clear_[key] = time;
    }
    active_ = std::move(now);
  }

  bool Active(const std::string& key) const { return active_.contains(key); }
  const std::map<std::string, Finding>& active() const { return active_; }
  std::optional<TimePoint> FirstRaise(const std::string& key) const {
    auto it = first_raise_.find(key);
    return it == first_raise_.end() ? std::nullopt : std::optional(it->second);
  }
  std::optional<TimePoint> LastClear(const std::string& key) const {
    auto it = last_clear_.find(key);
    return it == last_clear_.end() ? std::nullopt : std::optional(it->second);
  }
  // Every key ever raised, with its raise count.
  const std::map<std::string, int>& raises() const { return raises_; }
  const Finding* LastRaised(const std::string& key) const {
    auto it = last_finding_.find(key);
    return it == last_finding_.end() ? nullptr : &it->second;
  }

 private:
  fabricwatch::testing::DetectorFeed feed_;
  Detector& detector_;
  std::map<std::string, Finding> active_;
  std::map<std::string, TimePoint> first_raise_;
  std::map<std::string, TimePoint> last_clear_;
  std::map<std::string, int> raises_;
  std::map<std::string, Finding> last_finding_;
};

// One transceiver as the optics collector exports it (collectors/optics/optics.cc).
struct OpticsModule {
  std::string netdev = "eth0";
  std::string serial = "SN0001";
  double temperature = 45;
  std::optional<double> temp_high_warning = 70;
  std::optional<double> temp_high_alarm = 75;
  std::vector<double> rx_power_watts;  // per lane, lanes counted from 1
  std::vector<double> tx_bias_amperes;
  std::optional<double> rx_low_warning;  // watts
  std::optional<double> rx_low_alarm;
  std::optional<double> bias_high_warning;  // amperes
  std::optional<double> bias_high_alarm;
};

inline void AddOptics(SnapshotBuilder& b, const OpticsModule& m, detect::TimePoint read_time) {
  const Labels nd{{"netdev", m.netdev}};
  b.Gauge(optics::kInfo,
          {{"netdev", m.netdev},
           {"identifier", "qsfp28"},
           {"memory_map", "sff8636"},
           {"vendor", "ACME"},
           {"part_number", "QSFP-100G-SR4"},
           {"serial", m.serial},
           {"revision", "A"},
           {"date_code", "240101"},
           {"connector", "mpo"},
           {"media", "mmf"},
           {"wavelength_nm", "850"}},
          1);
  b.Gauge(optics::kPresent, nd, 1);
  b.Gauge(optics::kLastRead, nd,
          std::chrono::duration<double>(read_time.time_since_epoch()).count());
  b.Gauge(optics::kTemperature, nd, m.temperature);
  auto threshold = [&](const MetricDesc& family, const char* which, std::optional<double> v) {
    if (v) b.Gauge(family, {{"netdev", m.netdev}, {"threshold", which}}, *v);
  };
  threshold(optics::kTemperatureThreshold, "high_warning", m.temp_high_warning);
  threshold(optics::kTemperatureThreshold, "high_alarm", m.temp_high_alarm);
  threshold(optics::kRxPowerThreshold, "low_warning", m.rx_low_warning);
  threshold(optics::kRxPowerThreshold, "low_alarm", m.rx_low_alarm);
  threshold(optics::kBiasThreshold, "high_warning", m.bias_high_warning);
  threshold(optics::kBiasThreshold, "high_alarm", m.bias_high_alarm);
  for (size_t i = 0; i < m.rx_power_watts.size(); ++i) {
    b.Gauge(optics::kRxPower, {{"netdev", m.netdev}, {"lane", std::to_string(i + 1)}},
            m.rx_power_watts[i]);
  }
  for (size_t i = 0; i < m.tx_bias_amperes.size(); ++i) {
    b.Gauge(optics::kBias, {{"netdev", m.netdev}, {"lane", std::to_string(i + 1)}},
            m.tx_bias_amperes[i]);
  }
}

inline detect::TimePoint T0() {
  // A fixed, arbitrary epoch for simulated timelines (2025-01-01T00:00:00Z).
  return detect::TimePoint(std::chrono::seconds(1735689600));
}

inline double UnixSeconds(detect::TimePoint t) {
  return std::chrono::duration<double>(t.time_since_epoch()).count();
}

}  // namespace fabricwatch::detect::testing
