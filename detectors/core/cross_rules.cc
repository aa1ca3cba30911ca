#include "detectors/core/cross_rules.h"

#include <algorithm>
#include <array>

#include "collectors/rdma/rdma_metrics.h"
#include "detectors/core/anomaly_tracker.h"
#include "detectors/registry.h"

namespace fabricwatch::detect {
namespace {

// fabric_rdma_port_state values a port carries data in (IBTA PortState).
constexpr int kStateActive = 4;
constexpr int kStateActiveDefer = 5;

// The findings that can explain others, by (detector, port key).
using OwnerIndex = std::map<std::pair<std::string, CrossRulePort>, std::vector<Finding*>>;

struct Verdict {
  Finding* owner = nullptr;  // the finding that explains it (annotated), may be null
  std::string cause;         // empty: not suppressed
};

struct RuleInput {
  const Finding& finding;
  const CrossRulePort& port;  // its port
  const OwnerIndex& owners;
  std::optional<int> port_state;  // fabric_rdma_port_state of that port, if known
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

// One rule on one finding, as the detectors declare it (declaration.h): explained by the owner's
// finding that establishes the fact on the port, else (when the rule says so) by the port's state.
Verdict Judge(const CrossRule& rule, const RuleInput& in) {
  const SuppressionRule& declared = *rule.declared;
  if (declared.applies != nullptr && !declared.applies(in.finding)) return {};
  if (rule.fact != nullptr) {
    Finding* owner = Owner(in, rule.owner, [&](const Finding& f) {
      return rule.fact->holds == nullptr || rule.fact->holds(f);
    });
    if (owner != nullptr) {
      return {owner,
              std::string(rule.owner) + " " + std::string(declared.says) + ": " + owner->reason};
    }
  }
  if (declared.when_port_not_active && in.port_state && *in.port_state != kStateActive &&
      *in.port_state != kStateActiveDefer) {
    return {nullptr, "the port is not ACTIVE (fabric_rdma_port_state " +
                         FormatFixed(*in.port_state, 0) + ")"};
  }
  return {};
}

// The rules the registry's detectors declare, in registry order; the owner of each is the first
// detector that declares the fact it is explained by.
std::vector<CrossRule> DeclaredRules() {
  std::vector<CrossRule> rules;
  for (const DetectorInfo& info : DetectorRegistry()) {
    for (const SuppressionRule& declared : info.declaration.suppressed_when) {
      CrossRule rule{.name = declared.name,
                     .suppressed = info.name,
                     .why = declared.why,
                     .declared = &declared};
      for (const DetectorInfo& other : DetectorRegistry()) {
        for (const PortFactSource& fact : other.declaration.establishes) {
          if (rule.fact == nullptr && fact.fact == declared.explained_by) {
            rule.owner = other.name;
            rule.fact = &fact;
          }
        }
      }
      rules.push_back(rule);
    }
  }
  return rules;
}

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

std::span<const CrossRule> CrossRuleTable() {
  static const std::vector<CrossRule> rules = DeclaredRules();
  return rules;
}
std::span<const MetricDesc> CrossRules::Metrics() { return kMetrics; }

std::map<std::pair<std::string, std::string>, uint64_t> CrossRules::InitialCounts() {
  std::map<std::pair<std::string, std::string>, uint64_t> counts;
  for (const CrossRule& rule : CrossRuleTable()) {
    counts[{std::string(rule.suppressed), std::string(rule.name)}] = 0;
  }
  return counts;
}

std::optional<CrossRulePort> CrossRules::PortOf(const EntityLabels& entity, const NodeModel& node) {
  std::string_view device, port, netdev;
  for (const auto& [name, value] : entity) {
    if (name == "device") device = value;
    if (name == "port") port = value;
    if (name == "netdev") netdev = value;
  }
  if (!device.empty() && !port.empty()) {
    if (std::optional<PortId> id = PortId::FromLabels(device, port)) return *id;
    return std::nullopt;
  }
  if (netdev.empty()) return std::nullopt;
  if (const RdmaPort* rdma_port = node.PortOfNetdev(netdev)) return rdma_port->id;
  return std::string(netdev);
}

std::vector<Suppression> CrossRules::Apply(FindingsByDetector& findings, const NodeModel& node) {
  OwnerIndex owners;
  for (auto& [detector, list] : findings) {
    for (Finding& f : list) {
      if (auto port = PortOf(f.entity, node)) owners[{detector, *port}].push_back(&f);
    }
  }
  std::vector<Suppression> started;
  std::set<std::string> suppressed_now;
  // Decided first, removed afterwards: the owners' pointers stay valid while the rules run.
  std::map<std::string, std::vector<size_t>, std::less<>> to_remove;
  std::vector<std::pair<Finding*, std::string_view>> annotations;
  for (const CrossRule& rule : CrossRuleTable()) {
    auto list = findings.find(rule.suppressed);
    if (list == findings.end()) continue;
    for (size_t i = 0; i < list->second.size(); ++i) {
      const Finding& f = list->second[i];
      const std::optional<CrossRulePort> port = PortOf(f.entity, node);
      if (!port) continue;
      const RdmaPort* rdma_port =
          std::holds_alternative<PortId>(*port) ? node.Port(std::get<PortId>(*port)) : nullptr;
      const std::optional<int> state = rdma_port ? rdma_port->state : std::nullopt;
      Verdict verdict = Judge(rule, {f, *port, owners, state});
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
