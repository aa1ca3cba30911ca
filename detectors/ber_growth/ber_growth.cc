#include "detectors/ber_growth/ber_growth.h"

#include <cmath>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "base/duration.h"
#include "collectors/ethtool/ethtool_metrics.h"
#include "collectors/rdma/rdma_metrics.h"
#include "detectors/ber_growth/ber_growth_metrics.h"
#include "detectors/ber_growth/ber_outliers.h"
#include "detectors/ber_growth/ber_window.h"
#include "detectors/core/counter.h"
#include "detectors/core/finding_merge.h"
#include "detectors/core/hysteresis.h"
#include "detectors/core/inputs.h"
#include "detectors/core/linear_trend.h"
#include "detectors/core/node_model.h"
#include "detectors/core/rate_evidence.h"
#include "detectors/core/snapshot_lookup.h"

namespace fabricwatch::detect {
namespace {

using std::chrono::duration;
using Options = BerGrowthOptions;
using ber::EffectiveLevel;
using ber::History;

constexpr std::string_view kName = "ber_growth";

using ber_growth::kEffective;
using ber_growth::kEta;
using ber_growth::kIbEffective;
using ber_growth::kIbSymbolRate;
using ber_growth::kPreFec;
// What ber_growth reads (detectors/core/inputs.h).
constexpr MetricInput kInputs[] = {
    {ethtool::kPhyReceivedBits, {"netdev"}},
    {ethtool::kPhyPcsSymbolErrors, {"netdev"}},
    {ethtool::kPhyCorrectedBits, {"netdev"}},
    {ethtool::kFecCorrectedBits, {"netdev"}},
    {ethtool::kPhyLaneCorrectedBits, {"netdev", "lane"}},
    {rdma::kSymbolErrors, {"device", "port"}},
    {rdma::kPortRate, {"device", "port"}},
    {rdma::kLocalLinkIntegrity, {"device", "port"}},
    {rdma::kExcessiveBufferOverrun, {"device", "port"}},
};
constexpr MetricDesc kMetrics[] = {kEffective, kPreFec, kEta, kIbEffective, kIbSymbolRate};

std::string Sci(double v) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.2g", v);
  return buffer;
}

struct EffectivePair {
  explicit EffectivePair(const Options& o)
      : warning(o.effective_warning_ratio, o.effective_warning_window,
                o.effective_warning_min_errors, o.clear_for, o.evidence_min_samples),
        critical(o.effective_critical_ratio, o.effective_critical_window,
                 o.effective_critical_min_errors, o.clear_for, o.evidence_min_samples) {}
  EffectiveLevel warning;
  EffectiveLevel critical;
};

// With 32-bit counters a drop is ambiguous (wrap or reset); CounterTracker adds 2^32 only when
// the implied rate is physically possible, so the bounds are what the PHY can produce:
//   corrected bits: the FEC limit 2.4e-4 [S24] at 1.6 Tb/s ≈ 4e8/s — beyond that the link is
//   not up; post-FEC symbol errors: 1e6/s (BER 1e-5 at 100 Gb/s, an unusable link).
CounterSpec ErrorSpec(const Options& o, double max_rate) {
  if (o.error_counter_width == 32) return CounterSpec{CounterBehaviour::kWrapping32, 32, max_rate};
  return CounterSpec{};
}
constexpr double kMaxCorrectedPerSecond = 4e8;

ber::OutlierOptions OutliersOf(const Options& o) {
  return {o.outlier_window,   o.outlier_for,    o.clear_for,          o.lane_share,
          o.lane_floor_ratio, o.outlier_factor, o.outlier_floor_ratio};
}
constexpr double kMaxPcsErrorsPerSecond = 1e6;

struct EthPort {
  explicit EthPort(const Options& o)
      : pcs(ErrorSpec(o, kMaxPcsErrorsPerSecond)),
        corrected(ErrorSpec(o, kMaxCorrectedPerSecond)),
        effective(o),
        pre_warning(o.pre_fec_warning_for, o.clear_for),
        pre_critical(o.pre_fec_critical_for, o.clear_for),
        pre_warning_excess(std::chrono::milliseconds(0), o.clear_for),
        pre_critical_excess(std::chrono::milliseconds(0), o.clear_for),
        trend_warning(o.trend_for, o.clear_for),
        trend_critical(o.trend_for, o.clear_for),
        trend(o.trend_lookback, std::chrono::minutes(1)),
        outliers(OutliersOf(o)) {}
  CounterTracker bits;
  CounterTracker pcs;
  CounterTracker corrected;
  History history;
  EffectivePair effective;
  HoldDown pre_warning, pre_critical, trend_warning, trend_critical;
  // The pre-FEC evidence path (§0.4): the integral of (ratio / threshold - 1) over time, never
  // below 0 (a CUSUM); it reaches the rule's `for` at 2x the threshold exactly when the fixed
  // hold does, and sooner the further above it the ratio is.
  HoldDown pre_warning_excess, pre_critical_excess;
  double pre_warning_sum = 0, pre_critical_sum = 0;
  LinearTrend trend;
  std::optional<double> pre_fec_ratio;
  std::optional<double> eta;
  ber::PortOutliers outliers;
  bool seen = false;
};

struct IbPort {
  explicit IbPort(const Options& o)
      : symbol(SpecFor(rdma::kSymbolErrors)),
        lli(SpecFor(rdma::kLocalLinkIntegrity)),
        ebo(SpecFor(rdma::kExcessiveBufferOverrun)),
        effective(o),
        hourly(std::chrono::milliseconds(0), o.clear_for),
        fatal_lli(std::chrono::milliseconds(0), o.clear_for),
        fatal_ebo(std::chrono::milliseconds(0), o.clear_for) {}
  CounterTracker symbol, lli, ebo;
  History history;
  EffectivePair effective;
  HoldDown hourly, fatal_lli, fatal_ebo;
  double errors_last_hour = 0;
  RateWindow hourly_proof;  // the evidence window of the hourly rule (§0.4)
  double rate_bytes = 0;
  uint64_t lli_delta = 0, ebo_delta = 0;
  bool symbol_saturated = false;
  bool seen = false;
};

using PortOfSample = std::optional<PortId> (*)(const prometheus::ClientMetric&);

class BerGrowthDetector final : public Detector {
 public:
  explicit BerGrowthDetector(Options options) : o_(options) {}
  std::string_view name() const override { return kName; }
  std::vector<std::string> inputs() const override { return InputCollectors(kInputs); }

  void Observe(const SnapshotView& snapshot) override {
    if (snapshot.From<ethtool::kCollector>()) ObserveEthtool(snapshot);
    if (snapshot.From<rdma::kCollector>()) ObserveRdma(snapshot);
  }

  std::vector<Finding> Evaluate(TimePoint /*now*/) override {
    std::vector<Finding> signals;
    for (const auto& [netdev, p] : eth_) {
      const EntityLabels entity{{"netdev", netdev}};
      AddEffective(signals, entity, netdev, p.effective);
      ber::AddOutlierFindings(netdev, p.outliers, outliers_, signals);
      const double pre = p.pre_fec_ratio.value_or(0);
      std::vector<Evidence> pre_evidence{{"pre_fec_ber_ratio", pre},
                                         {"fec_limit_ratio", o_.fec_limit_ratio}};
      if (p.eta) pre_evidence.push_back({"projected_seconds_to_fec_limit", *p.eta});
      for (auto [latch, excess, severity, what] :
           {std::tuple{&p.pre_critical, &p.pre_critical_excess, Severity::kCritical,
                       "above " + Sci(o_.pre_fec_critical_ratio)},
            std::tuple{&p.pre_warning, &p.pre_warning_excess, Severity::kWarning,
                       "above " + Sci(o_.pre_fec_warning_ratio)}}) {
        if (!latch->active() && !excess->active()) continue;
        signals.push_back({severity, entity, pre, pre_evidence,
                           netdev + " pre-FEC BER " + Sci(pre) + " " + what + " (FEC limit " +
                               Sci(o_.fec_limit_ratio) + ")",
                           false});
      }
      for (auto [latch, severity] : {std::pair{&p.trend_critical, Severity::kCritical},
                                     std::pair{&p.trend_warning, Severity::kWarning}}) {
        if (!latch->active()) continue;
        signals.push_back({severity, entity, pre, pre_evidence,
                           netdev + " pre-FEC BER " + Sci(pre) + " projected to reach the FEC " +
                               "limit " + Sci(o_.fec_limit_ratio) + " in " +
                               (p.eta ? Sci(*p.eta / 3600) + " h" : std::string("(now)")),
                           false});
      }
    }
    for (const auto& [key, p] : ib_) {
      const EntityLabels entity{{"device", key.first}, {"port", key.second}};
      const std::string where = key.first + " port " + key.second;
      AddEffective(signals, entity, where, p.effective);
      if (p.hourly.active()) {
        std::vector<Evidence> evidence{{"symbol_errors_last_hour", p.errors_last_hour}};
        std::string reason = where + " " + Sci(p.errors_last_hour) +
                             " symbol errors in the last hour (> " +
                             Sci(o_.ib_symbol_errors_per_hour) + ")";
        if (p.hourly_proof.proven) {
          evidence.push_back({"symbol_errors", p.hourly_proof.events});
          evidence.push_back({"window_seconds", p.hourly_proof.seconds});
          reason += "; " + Sci(p.hourly_proof.events) + " in " + Sci(p.hourly_proof.seconds) +
                    " s prove more than " + Sci(o_.ib_symbol_errors_per_hour) + " per hour";
        }
        signals.push_back(
            {Severity::kCritical, entity, p.errors_last_hour, evidence, std::move(reason), true});
      }
      for (auto [latch, delta, counter] :
           {std::tuple{&p.fatal_lli, p.lli_delta, "local_link_integrity_errors"},
            std::tuple{&p.fatal_ebo, p.ebo_delta, "excessive_buffer_overrun_errors"}}) {
        if (!latch->active()) continue;
        signals.push_back(
            {Severity::kCritical,
             entity,
             static_cast<double>(delta),
             {{std::string(counter) + "_increase", static_cast<double>(delta)}},
             where + " " + counter + " increased by " + std::to_string(delta) + " (fatal class)",
             true});
      }
    }
    return MergeFindings(std::move(signals));
  }

  void Export(MetricSink& sink) const override {
    for (const auto& [netdev, p] : eth_) {
      for (const EffectiveLevel* level : {&p.effective.warning, &p.effective.critical}) {
        if (level->last.bits > 0) {
          sink.Add(kEffective, {{"netdev", netdev}, {"window", level->window_label}}, level->ratio);
        }
      }
      if (p.pre_fec_ratio) sink.Add(kPreFec, {{"netdev", netdev}}, *p.pre_fec_ratio);
      if (p.eta) sink.Add(kEta, {{"netdev", netdev}}, *p.eta);
    }
    for (const auto& [key, p] : ib_) {
      for (const EffectiveLevel* level : {&p.effective.warning, &p.effective.critical}) {
        if (level->last.bits > 0) {
          sink.Add(kIbEffective,
                   {{"device", key.first}, {"port", key.second}, {"window", level->window_label}},
                   level->ratio);
        }
      }
      sink.Add(kIbSymbolRate, {{"device", key.first}, {"port", key.second}},
               p.errors_last_hour / 3600);
    }
  }

 private:
  void AddEffective(std::vector<Finding>& signals, const EntityLabels& entity,
                    const std::string& where, const EffectivePair& pair) const {
    for (auto [level, severity] : {std::pair{&pair.critical, Severity::kCritical},
                                   std::pair{&pair.warning, Severity::kWarning}}) {
      if (!level->latch.active()) continue;
      // The window that raised it: the evidence window when it proves the claim, else the fixed.
      const bool proof = level->proof.proven;
      const double errors = proof ? level->proof.events : level->last.errors;
      const double bits = proof ? level->proof.exposure : level->last.bits;
      const double seconds = proof ? level->proof.seconds : level->last.seconds;
      const double ratio = bits > 0 ? errors / bits : level->ratio;
      std::vector<Evidence> evidence{{"effective_ber_ratio", ratio},
                                     {"errors", errors},
                                     {"bits", bits},
                                     {"window_seconds", seconds}};
      std::string reason = where + " effective BER " + Sci(ratio) + " > " + Sci(level->threshold) +
                           " (" + Sci(errors) + " errors in " + Sci(bits) + " bits over " +
                           Sci(seconds) + " s";
      if (proof) {
        evidence.push_back({"lower_bound_ratio", level->proof.bound});
        reason += "; " + Sci(o_.confidence * 100) + "% lower bound " + Sci(level->proof.bound);
      }
      signals.push_back(
          {severity, entity, ratio, evidence, reason + ")", severity == Severity::kCritical});
    }
  }

  void ObserveEthtool(const SnapshotView& snapshot) {
    const Families& families = snapshot.families;
    const TimePoint time = snapshot.time;
    for (auto& [n, p] : eth_) p.seen = false;
    ForEachSample(
        families, ethtool::kPhyReceivedBits,
        [&](const prometheus::ClientMetric& m, double bits_value) {
          const std::string netdev(Label<ethtool::kPhyReceivedBits>(m, "netdev"));
          // No netdev names no port a finding could name.
          if (netdev.empty() || !(bits_value >= 0)) return;
          EthPort& p = eth_.try_emplace(netdev, o_).first->second;
          p.seen = true;
          auto pcs = FindValue<ethtool::kPhyPcsSymbolErrors>(families, {{"netdev", netdev}});
          auto corrected = FindValue<ethtool::kPhyCorrectedBits>(families, {{"netdev", netdev}});
          if (!corrected) {
            corrected = FindValue<ethtool::kFecCorrectedBits>(families, {{"netdev", netdev}});
          }
          const CounterStep bits = p.bits.Update(static_cast<uint64_t>(bits_value), time);
          std::optional<double> errors, corr;
          if (pcs && *pcs >= 0) {
            const CounterStep s = p.pcs.Update(static_cast<uint64_t>(*pcs), time);
            if (s.valid) errors = static_cast<double>(s.delta);
          } else {
            p.pcs.Forget();
          }
          if (corrected && *corrected >= 0) {
            const CounterStep s = p.corrected.Update(static_cast<uint64_t>(*corrected), time);
            if (s.valid) corr = static_cast<double>(s.delta);
          } else {
            p.corrected.Forget();
          }
          if (bits.valid && bits.delta > 0) {
            p.history.Add(time, bits.seconds, static_cast<double>(bits.delta), errors, corr,
                          o_.history);
          }
          p.effective.warning.Update(p.history, time, o_.clear_factor, bounds_);
          p.effective.critical.Update(p.history, time, o_.clear_factor, bounds_);
          // This sample's own pre-FEC ratio feeds the evidence path (§0.4).
          std::optional<double> sample_ratio;
          if (bits.valid && bits.delta > 0 && corr) sample_ratio = *corr / bits.delta;
          UpdatePreFec(p, time, bits.valid ? bits.seconds : 0, sample_ratio);
        });
    std::erase_if(eth_, [](const auto& e) { return !e.second.seen; });
    UpdateOutliers(families, time);
  }

  // §3.4: the per-lane corrected bits and every port's window pre-FEC BER, then the outliers.
  void UpdateOutliers(const Families& families, TimePoint time) {
    std::map<std::string, std::vector<std::string>> lanes;
    ForEachSample(
        families, ethtool::kPhyLaneCorrectedBits,
        [&](const prometheus::ClientMetric& m, double value) {
          auto it = eth_.find(std::string(Label<ethtool::kPhyLaneCorrectedBits>(m, "netdev")));
          const std::string lane(Label<ethtool::kPhyLaneCorrectedBits>(m, "lane"));
          if (it == eth_.end() || lane.empty() || !(value >= 0)) return;
          it->second.outliers.lanes.Add(lane, static_cast<uint64_t>(value), time, outliers_.window);
          lanes[it->first].push_back(lane);
        });
    std::map<std::string, ber::PortOutliers*> ports;
    for (auto& [netdev, p] : eth_) {
      p.outliers.lanes.Retain(lanes[netdev]);
      const History::Sum window = p.history.Last(time, outliers_.window);
      p.outliers.ratio.reset();
      if (window.pre_bits > 0) p.outliers.ratio = window.corrected / window.pre_bits;
      ber::UpdateLane(p.outliers, outliers_, time);
      ports[netdev] = &p.outliers;
    }
    ber::UpdateSiblings(ports, outliers_, time);
  }

  // The IB hourly rule: more than ib-symbol-errors-per-hour in the last hour (the fixed count),
  // or an evidence window (§0.4) whose errors prove a rate above it.
  void UpdateHourly(IbPort& p, TimePoint time) {
    p.errors_last_hour = p.history.Last(time, std::chrono::hours(1)).errors;
    const RateRule rule{o_.ib_symbol_errors_per_hour / 3600, o_.ib_symbol_min_errors, 0, 3600,
                        o_.evidence_min_samples};
    RateScan scan(bounds_, rule, RateScan::Claim::kAbove, rule.threshold);
    p.history.ForEachNewest([&](const History::Sum& s) {
      return scan.Add(s.errors, s.seconds, s.seconds, s.error_samples);
    });
    p.hourly_proof = scan.window();
    p.hourly.Update(p.errors_last_hour > o_.ib_symbol_errors_per_hour || p.hourly_proof.proven,
                    !p.hourly_proof.proven &&
                        p.errors_last_hour < o_.ib_symbol_errors_per_hour * o_.clear_factor,
                    time);
  }

  void UpdatePreFec(EthPort& p, TimePoint time, double step_seconds,
                    std::optional<double> sample_ratio) {
    const History::Sum window = p.history.Last(time, o_.pre_fec_window);
    if (window.pre_bits <= 0) {
      p.pre_fec_ratio.reset();
      return;
    }
    const double ratio = window.corrected / window.pre_bits;
    p.pre_fec_ratio = ratio;
    const double cf = o_.clear_factor;
    p.pre_warning.Update(ratio > o_.pre_fec_warning_ratio, ratio < o_.pre_fec_warning_ratio * cf,
                         time);
    p.pre_critical.Update(ratio > o_.pre_fec_critical_ratio, ratio < o_.pre_fec_critical_ratio * cf,
                          time);
    // The evidence path (§0.4): each sample's excess over the threshold integrated over time (a
    // CUSUM); the window ratio decides the clear, as for the fixed hold.
    for (auto [sum, latch, threshold, hold] :
         {std::tuple{&p.pre_warning_sum, &p.pre_warning_excess, o_.pre_fec_warning_ratio,
                     o_.pre_fec_warning_for},
          std::tuple{&p.pre_critical_sum, &p.pre_critical_excess, o_.pre_fec_critical_ratio,
                     o_.pre_fec_critical_for}}) {
      if (sample_ratio) *sum = std::max(0.0, *sum + (*sample_ratio / threshold - 1) * step_seconds);
      latch->Update(*sum >= Seconds(hold), ratio < threshold * cf, time);
      if (ratio < threshold * cf) *sum = 0;
    }
    // log10 of a zero ratio is undefined: a window with no corrected bits sits at the floor of
    // what it could have measured (one error in its bits), which keeps the fit honest.
    p.trend.Add(time, std::log10(std::max(ratio, 1 / window.pre_bits)));
    const auto fit = p.trend.Evaluate(10, o_.trend_min_span);
    p.eta = fit ? fit->SecondsToReach(std::log10(o_.fec_limit_ratio)) : std::nullopt;
    const double warn_h = Seconds(o_.trend_warning_horizon);
    const double crit_h = Seconds(o_.trend_critical_horizon);
    p.trend_warning.Update(p.eta && *p.eta <= warn_h, !p.eta || *p.eta > 1.5 * warn_h, time);
    p.trend_critical.Update(p.eta && *p.eta <= crit_h, !p.eta || *p.eta > 1.5 * crit_h, time);
  }

  void ObserveRdma(const SnapshotView& snapshot) {
    const Families& families = snapshot.families;
    const TimePoint time = snapshot.time;
    for (auto& [k, p] : ib_) p.seen = false;
    // RoCE ports (link_layer Ethernet in the node model) are judged by their netdev's PHY/FEC
    // counters only (docs/detection.md §3.3): their PMA symbol_error is the same PHY seen again,
    // and the IB rules would raise a second finding, on {device, port}, for one fault. A port the
    // model does not know, or an empty link_layer (kernels before RoCE), is InfiniBand.
    const NodeModel& node = snapshot.Node();
    auto port_for = [&](std::optional<PortId> id) -> IbPort* {
      if (!id) return nullptr;
      if (const RdmaPort* known = node.Port(*id); known != nullptr && known->ethernet()) {
        return nullptr;
      }
      IbPort& p = ib_.try_emplace({id->device, id->PortLabel()}, o_).first->second;
      p.seen = true;
      return &p;
    };
    ForEachSample(families, rdma::kSymbolErrors,
                  [&](const prometheus::ClientMetric& m, double value) {
                    IbPort* p = port_for(PortIdOf<rdma::kSymbolErrors>(m));
                    if (p == nullptr || !(value >= 0)) return;
                    const auto rate = FindValue<rdma::kPortRate>(
                        families, {{"device", Label<rdma::kSymbolErrors>(m, "device")},
                                   {"port", Label<rdma::kSymbolErrors>(m, "port")}});
                    p->rate_bytes = rate.value_or(0);
                    const CounterStep step = p->symbol.Update(static_cast<uint64_t>(value), time);
                    p->symbol_saturated = step.saturated;
                    if (step.valid && p->rate_bytes > 0) {
                      p->history.Add(time, step.seconds, p->rate_bytes * 8 * step.seconds,
                                     static_cast<double>(step.delta), std::nullopt, o_.history);
                    }
                    p->effective.warning.Update(p->history, time, o_.clear_factor, bounds_);
                    p->effective.critical.Update(p->history, time, o_.clear_factor, bounds_);
                    UpdateHourly(*p, time);
                  });
    auto fatal = [&](const MetricDesc& family, PortOfSample port_of,
                     CounterTracker IbPort::*tracker, HoldDown IbPort::*latch,
                     uint64_t IbPort::*last) {
      ForEachSample(families, family, [&](const prometheus::ClientMetric& m, double value) {
        IbPort* p = port_for(port_of(m));
        if (p == nullptr || !(value >= 0)) return;
        const CounterStep step = (p->*tracker).Update(static_cast<uint64_t>(value), time);
        // Saturated = unknown: neither raise nor clear (docs/detection.md §0.2).
        const bool grew = step.valid && step.delta > 0;
        if (grew) p->*last = step.delta;
        (p->*latch).Update(grew, step.valid && step.delta == 0, time);
      });
    };
    fatal(rdma::kLocalLinkIntegrity, PortIdOf<rdma::kLocalLinkIntegrity>, &IbPort::lli,
          &IbPort::fatal_lli, &IbPort::lli_delta);
    fatal(rdma::kExcessiveBufferOverrun, PortIdOf<rdma::kExcessiveBufferOverrun>, &IbPort::ebo,
          &IbPort::fatal_ebo, &IbPort::ebo_delta);
    std::erase_if(ib_, [](const auto& e) { return !e.second.seen; });
  }

  // The state file (issue 22 item 6): each port's windows and pre-FEC trend, so a restart in the
  // middle of a slow BER growth keeps its detection time. Latches are not kept: a finding that
  // was active is raised again by its windows, and the engine restores its start time.
  nlohmann::json SaveState() const override {
    nlohmann::json eth = nlohmann::json::object(), ib = nlohmann::json::object();
    for (const auto& [netdev, p] : eth_) {
      nlohmann::json trend = nlohmann::json::array();
      for (const auto& [t, v] : p.trend.Points()) {
        trend.push_back({std::chrono::duration<double>(t.time_since_epoch()).count(), v});
      }
      eth[netdev] = {{"history", p.history.ToJson()},
                     {"trend", trend},
                     {"pre_fec_excess", {p.pre_warning_sum, p.pre_critical_sum}}};
    }
    for (const auto& [key, p] : ib_)
      ib[key.first + "/" + key.second] = {{"history", p.history.ToJson()}};
    return {{"version", kStateVersion}, {"eth", eth}, {"ib", ib}};
  }

  Status LoadState(const nlohmann::json& state, StateLoadCheck& check) override {
    auto bad = [](const std::string& what) {
      return Status(StatusCode::kInvalidArgument, "detector ber_growth: state: " + what);
    };
    if (!state.is_object()) return bad("not an object");
    if (state.empty()) return Status::Ok();  // nothing saved yet
    if (state.value("version", 0) != kStateVersion) return bad("unsupported version");
    const auto eth = state.find("eth");
    const auto ib = state.find("ib");
    if (eth == state.end() || !eth->is_object() || ib == state.end() || !ib->is_object()) {
      return bad("missing eth or ib");
    }
    for (const auto& [netdev, j] : eth->items()) {
      EthPort p(o_);
      if (!j.is_object() || !p.history.FromJson(j.value("history", nlohmann::json()), check)) {
        return bad("netdev " + netdev + ": malformed history");
      }
      std::vector<std::pair<TimePoint, double>> points;
      for (const auto& point : j.value("trend", nlohmann::json::array())) {
        if (!point.is_array() || point.size() != 2) return bad("netdev " + netdev + ": trend");
        auto t = check.Past(point[0]);
        auto v = check.Number(point[1], -30, 1);  // log10 of a ratio
        if (t && v) points.emplace_back(*t, *v);
      }
      p.trend.Restore(points);
      const auto& excess = j.value("pre_fec_excess", nlohmann::json::array());
      if (excess.is_array() && excess.size() == 2) {
        const double most = Seconds(o_.pre_fec_warning_for) + Seconds(o_.pre_fec_critical_for);
        p.pre_warning_sum = check.Number(excess[0], 0, most).value_or(0);
        p.pre_critical_sum = check.Number(excess[1], 0, most).value_or(0);
      }
      eth_.insert_or_assign(netdev, std::move(p));
    }
    for (const auto& [key, j] : ib->items()) {
      const size_t slash = key.rfind('/');
      IbPort p(o_);
      if (slash == std::string::npos || !j.is_object() ||
          !p.history.FromJson(j.value("history", nlohmann::json()), check)) {
        return bad("port " + key + ": malformed");
      }
      ib_.insert_or_assign({key.substr(0, slash), key.substr(slash + 1)}, std::move(p));
    }
    return Status::Ok();
  }

  static constexpr int kStateVersion = 1;
  Options o_;
  PoissonBounds bounds_{o_.confidence};
  ber::OutlierOptions outliers_ = OutliersOf(o_);
  std::map<std::string, EthPort> eth_;
  std::map<std::pair<std::string, std::string>, IbPort> ib_;
};

}  // namespace

std::span<const MetricDesc> BerGrowthDetectorMetrics() { return kMetrics; }
std::span<const MetricInput> BerGrowthDetectorInputs() { return kInputs; }

Status ValidateBerGrowthDetectorOptions(const DetectorOptions& options) {
  return StatusOf(ParseBerGrowthOptions(options));
}

Result<std::unique_ptr<Detector>> MakeBerGrowthDetector(const DetectorOptions& options) {
  Result<BerGrowthOptions> parsed = ParseBerGrowthOptions(options);
  if (!parsed) return Error(parsed.error());
  return std::unique_ptr<Detector>(new BerGrowthDetector(*parsed));
}

}  // namespace fabricwatch::detect
