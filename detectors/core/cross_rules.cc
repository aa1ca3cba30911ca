#include "detectors/core/cross_rules.h"

#include <algorithm>
#include <array>

#include "collectors/rdma/rdma_metrics.h"
#include "detectors/core/anomaly_tracker.h"

namespace fabricwatch::detect {
namespace {

// fabric_rdma_port_state values a port carries data in (IBTA PortState).
constexpr double kStateActive = 4;
constexpr double kStateActiveDefer = 5;

// The findings that can explain others, by (detector, port key).
using OwnerIndex = std::map<std::pair<std::string, std::string>, std::vector<Finding*>>;

struct Verdict {
  Finding* owner = nullptr;  // the finding that explains it (annotated), may be null
  std::string cause;         // empty: not suppressed
};

struct RuleInput {
  const Finding& finding;
  const std::string& port;  // its port key
  const OwnerIndex& owners;
  std::optional<double> port_state;  // fabric_rdma_port_state of that port, if known
};

std::optional<double> EvidenceValue(const Finding& f, std::string_view name) {
  for (const Evidence& e : f.evidence) {
    if (e.name == name) return e.value;
  }
  return std::nullopt;
}

// The first warning-or-critical finding of `detector` on the port that `accept` takes.
template <typename Accept>
Finding* Owner(const RuleInput& in, std::string_view detector, Accept accept) {
  auto it = in.owners.find({std::string(detector), in.port});
  if (it == in.owners.end()) return nullptr;
  for (Finding* f : it->second) {
    if (f->severity != Severity::kInfo && accept(*f)) return f;
  }
  return nullptr;
}

Verdict StormOnFlappingLink(const RuleInput& in) {
  Finding* flap = Owner(in, "link_flap", [](const Finding&) { return true; });
  if (flap == nullptr) return {};
  return {flap, "link_flap reports the link flapping or down: " + flap->reason};
}

Verdict BerOnDownPort(const RuleInput& in) {
  Finding* flap = Owner(in, "link_flap", [](const Finding& f) {
    return f.severity == Severity::kCritical || EvidenceValue(f, "down_seconds").value_or(0) > 0;
  });
  if (flap != nullptr) return {flap, "link_flap reports the port down: " + flap->reason};
  if (in.port_state && *in.port_state != kStateActive && *in.port_state != kStateActiveDefer) {
    return {nullptr, "the port is not ACTIVE (fabric_rdma_port_state " +
                         FormatFixed(*in.port_state, 0) + ")"};
  }
  return {};
}

Verdict OutageOfPortSeenUp(const RuleInput& in) {
  // Only link_degraded's port-state findings (down, stuck) carry port_state evidence; its width,
  // speed, firmware and missing findings are not outages.
  if (!EvidenceValue(in.finding, "port_state")) return {};
  Finding* flap = Owner(in, "link_flap", [](const Finding&) { return true; });
  if (flap == nullptr) return {};
  return {flap, "link_flap counted downs of this port, so it was up: " + flap->reason};
}

using RuleFn = Verdict (*)(const RuleInput&);

constexpr CrossRule kCrossRules[] = {
    {"storm_on_flapping_link", "pfc_storm", "link_flap",
     "a flapping link pauses and stalls without a storm; SONiC moved its PFC watchdog to "
     "pause-duration counters to stop false storms on flapping links"},
    {"ber_on_down_port", "ber_growth", "link_flap",
     "a port that is down or training has no BER to judge: its errors are the outage's"},
    {"outage_of_port_seen_up", "link_degraded", "link_flap",
     "link_flap owns the outages of ports ever seen up, link_degraded the never-up ones "
     "(detectors/link_degraded/link_degraded.h)"},
};
constexpr RuleFn kRuleFns[] = {StormOnFlappingLink, BerOnDownPort, OutageOfPortSeenUp};
static_assert(std::size(kCrossRules) == std::size(kRuleFns));

constexpr MetricDesc kSuppressed{
    "fabricwatch_findings_suppressed_total",
    "Findings suppressed by a cross-detector rule (one fault, one finding; README \"Detectors\"): "
    "counted once when a finding's suppression starts. rule: storm_on_flapping_link, "
    "ber_on_down_port, outage_of_port_seen_up.",
    MetricKind::kCounter,
    {"detector", "rule"}};
constexpr MetricDesc kMetrics[] = {kSuppressed};

std::string SuppressionKey(std::string_view rule, std::string_view detector, const Finding& f) {
  return std::string(rule) + '|' + std::string(detector) + '|' +
         std::string(SeverityName(f.severity)) + '|' + EntityText(f.entity);
}

void Annotate(Finding& owner, std::string_view suppressed_detector) {
  const std::string name = std::string(suppressed_detector) + "_suppressed";
  if (EvidenceValue(owner, name)) return;
  owner.evidence.push_back({name, 1});
  owner.reason += "; explains the " + std::string(suppressed_detector) +
                  " finding(s) on this port (suppressed: one fault, one finding)";
}

}  // namespace

std::span<const CrossRule> CrossRuleTable() { return kCrossRules; }
std::span<const MetricDesc> CrossRules::Metrics() { return kMetrics; }

std::map<std::pair<std::string, std::string>, uint64_t> CrossRules::InitialCounts() {
  std::map<std::pair<std::string, std::string>, uint64_t> counts;
  for (const CrossRule& rule : kCrossRules) {
    counts[{std::string(rule.suppressed), std::string(rule.name)}] = 0;
  }
  return counts;
}

void CrossRules::ObservePorts(const Families& rdma) {
  ports_.clear();
  by_netdev_.clear();
  ForEachSample(rdma, rdma::kPortInfo, [&](const prometheus::ClientMetric& m, double) {
    const std::string key =
        std::string(LabelOr(m, "device")) + "/" + std::string(LabelOr(m, "port"));
    Port& port = ports_[key];
    port.netdev = std::string(LabelOr(m, "netdev"));
    if (!port.netdev.empty()) by_netdev_[port.netdev] = key;
  });
  ForEachSample(rdma, rdma::kPortState, [&](const prometheus::ClientMetric& m, double value) {
    ports_[std::string(LabelOr(m, "device")) + "/" + std::string(LabelOr(m, "port"))].state = value;
  });
}

std::optional<std::string> CrossRules::PortKey(const EntityLabels& entity) const {
  std::string device, port, netdev;
  for (const auto& [name, value] : entity) {
    if (name == "device") device = value;
    if (name == "port") port = value;
    if (name == "netdev") netdev = value;
  }
  if (!device.empty() && !port.empty()) return device + "/" + port;
  if (netdev.empty()) return std::nullopt;
  auto it = by_netdev_.find(netdev);
  return it != by_netdev_.end() ? it->second : "netdev:" + netdev;
}

std::optional<double> CrossRules::PortState(const std::string& key) const {
  auto it = ports_.find(key);
  return it != ports_.end() ? it->second.state : std::nullopt;
}

std::vector<Suppression> CrossRules::Apply(FindingsByDetector& findings) {
  OwnerIndex owners;
  for (auto& [detector, list] : findings) {
    for (Finding& f : list) {
      if (auto port = PortKey(f.entity)) owners[{detector, *port}].push_back(&f);
    }
  }
  std::vector<Suppression> started;
  std::set<std::string> suppressed_now;
  // Decided first, removed afterwards: the owners' pointers stay valid while the rules run.
  std::map<std::string, std::vector<size_t>, std::less<>> to_remove;
  std::vector<std::pair<Finding*, std::string_view>> annotations;
  for (size_t r = 0; r < std::size(kCrossRules); ++r) {
    const CrossRule& rule = kCrossRules[r];
    auto list = findings.find(rule.suppressed);
    if (list == findings.end()) continue;
    for (size_t i = 0; i < list->second.size(); ++i) {
      const Finding& f = list->second[i];
      const std::optional<std::string> port = PortKey(f.entity);
      if (!port) continue;
      Verdict verdict = kRuleFns[r]({f, *port, owners, PortState(*port)});
      if (verdict.cause.empty()) continue;
      if (verdict.owner != nullptr) annotations.emplace_back(verdict.owner, rule.suppressed);
      auto& remove = to_remove[list->first];
      if (std::find(remove.begin(), remove.end(), i) != remove.end()) continue;
      remove.push_back(i);
      const std::string key = SuppressionKey(rule.name, rule.suppressed, f);
      suppressed_now.insert(key);
      if (suppressed_.contains(key)) continue;
      ++counts_[{std::string(rule.suppressed), std::string(rule.name)}];
      started.push_back({&rule, std::string(rule.suppressed), f, std::move(verdict.cause)});
    }
  }
  for (auto& [owner, detector] : annotations) Annotate(*owner, detector);
  for (auto& [detector, indexes] : to_remove) {
    std::vector<Finding>& list = findings.find(detector)->second;
    std::sort(indexes.rbegin(), indexes.rend());
    for (size_t i : indexes) list.erase(list.begin() + static_cast<std::ptrdiff_t>(i));
  }
  suppressed_ = std::move(suppressed_now);
  return started;
}

void CrossRules::Export(MetricSink& sink) const {
  for (const auto& [key, count] : counts_) {
    sink.Add(kSuppressed, {{"detector", key.first}, {"rule", key.second}},
             static_cast<double>(count));
  }
}

}  // namespace fabricwatch::detect
