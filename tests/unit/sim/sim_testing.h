#pragma once
// fabricsim test helpers shared by the simulator's unit tests: a simulator on a preset and a
// scenario, and one collection by every registered collector on its replay root.

#include <gtest/gtest.h>
#include <spdlog/sinks/null_sink.h>

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "collectors/registry.h"
#include "collectors/ethtool_source/ethtool_replay.h"
#include "collectors/sys/sysfs.h"
#include "tools/fabricsim/simulator.h"

namespace fabricwatch::sim::simtest {

class FixedClock final : public Clock {
 public:
  std::chrono::system_clock::time_point Now() const override {
    return std::chrono::system_clock::time_point(std::chrono::seconds(1795000000));
  }
};

// Samples of one collection, by metric name and label set.
struct Samples {
  std::map<std::string, std::vector<std::pair<std::map<std::string, std::string>, double>>> by_name;
  size_t errors = 0;
  std::string error_text;

  std::optional<double> Get(const std::string& name,
                            const std::map<std::string, std::string>& labels) const {
    auto it = by_name.find(name);
    if (it == by_name.end()) return std::nullopt;
    for (const auto& [have, value] : it->second) {
      bool match = true;
      for (const auto& [k, v] : labels) {
        auto l = have.find(k);
        if (l == have.end() || l->second != v) match = false;
      }
      if (match) return value;
    }
    return std::nullopt;
  }
  size_t Count(const std::string& name) const {
    auto it = by_name.find(name);
    return it == by_name.end() ? 0 : it->second.size();
  }
};

// Runs every registered collector once on the simulator's replay root, as the agent does with
// --path.sysfs=ROOT/sys --path.ethtool=ROOT/ethtool --path.kmsg=ROOT/kmsg --path.procfs=ROOT/proc
// --path.smp=ROOT/smp --path.lldp=ROOT/lldp (the flags fabricsim prints).
inline Samples CollectAll(const Simulator& sim) {
  sys::RealFileSystem real;
  sys::SysFs sysfs(sim.sysfs_root(), real);
  sys::ReplayEthtool replay(sim.ethtool_root(), real);
  FixedClock clock;
  CollectorOptions options;
  Samples out;
  for (const CollectorInfo& info : CollectorRegistry()) {
    auto logger = std::make_shared<spdlog::logger>(std::string(info.name),
                                                   std::make_shared<spdlog::sinks::null_sink_mt>());
    CollectorContext context{.sysfs = sysfs,
                             .ethtool = &replay,
                             .clock = clock,
                             .logger = logger,
                             .options = options,
                             // One optics run reads every module (reads are spread otherwise).
                             .interval = std::chrono::seconds(30),
                             .roots = sim.roots()};
    auto collector = info.factory(context);
    EXPECT_TRUE(collector) << info.name << ": " << collector.error().ToString();
    if (!collector) continue;
    MetricSink sink;
    Status status = (*collector)->Collect(sink);
    EXPECT_TRUE(status.ok()) << info.name << ": " << status.ToString();
    out.errors += sink.error_count();
    for (const Status& e : sink.errors())
      out.error_text += std::string(info.name) + ": " + e.ToString() + "\n";
    for (const prometheus::MetricFamily& family : sink.TakeFamilies()) {
      for (const prometheus::ClientMetric& m : family.metric) {
        std::map<std::string, std::string> labels;
        for (const auto& l : m.label) labels[l.name] = l.value;
        double v = m.counter.value;
        if (family.type == prometheus::MetricType::Gauge) v = m.gauge.value;
        if (family.type == prometheus::MetricType::Untyped) v = m.untyped.value;
        out.by_name[family.name].emplace_back(std::move(labels), v);
      }
    }
  }
  return out;
}

inline Scenario Quiet(double duration = 600) {
  Scenario s;
  s.source = "quiet";
  s.duration_s = duration;
  return s;
}

inline std::unique_ptr<Simulator> MakeSim(const std::string& preset, Scenario scenario,
                                          const std::string& root) {
  auto node = BuildPreset(preset);
  EXPECT_TRUE(node) << node.error().ToString();
  auto sim = Simulator::Create(std::move(*node), std::move(scenario), root, {.seed = 7});
  EXPECT_TRUE(sim) << sim.error().ToString();
  EXPECT_TRUE((*sim)->WriteInitial().ok());
  return std::move(*sim);
}

inline std::unique_ptr<Simulator> MakeSim(const std::string& preset, const std::string& yaml,
                                          const std::string& root) {
  auto scenario = ParseScenario(yaml, "test.yaml");
  EXPECT_TRUE(scenario) << scenario.error().ToString();
  return MakeSim(preset, std::move(*scenario), root);
}

inline uint64_t Stat(const Simulator& sim, const std::string& netdev, const std::string& name) {
  auto v = sim.EthtoolStat(netdev, name);
  EXPECT_TRUE(v) << netdev << " " << name;
  return v.value_or(0);
}

}  // namespace fabricwatch::sim::simtest
