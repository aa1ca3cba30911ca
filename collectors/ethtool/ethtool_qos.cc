#include "collectors/ethtool/ethtool_qos.h"

#include <array>
#include <string_view>

#include "collectors/ethtool/ethtool_families.h"
#include "collectors/ethtool/ethtool_metrics.h"

namespace fabricwatch::ethtool {
namespace {

constexpr MetricDesc kMetrics[] = {kQosTrust, kQosDscpMap, kQosDefaultPriority};
constexpr std::array<std::string_view, 8> kPriorityNames = {"0", "1", "2", "3", "4", "5", "6", "7"};

}  // namespace

std::span<const MetricDesc> QosMetrics() { return kMetrics; }

void EmitPfcConfig(const std::string& netdev, const sys::PfcConfig& config, MetricSink& sink,
                   std::string& map_buffer) {
  const LabelPair n{"netdev", netdev};
  if (config.pfc_cap) sink.Add(kPfcCap, {n}, *config.pfc_cap);
  for (size_t prio = 0; prio < kPriorityNames.size(); ++prio) {
    const LabelPair p{"priority", kPriorityNames[prio]};
    if (config.enabled_mask) sink.Add(kPfcEnabled, {n, p}, (*config.enabled_mask >> prio) & 1);
    if (config.requests && prio < config.requests->size()) {
      sink.Add(kPfcDcbFrames, {n, p, {"direction", "tx"}},
               static_cast<double>((*config.requests)[prio]));
    }
    if (config.indications && prio < config.indications->size()) {
      sink.Add(kPfcDcbFrames, {n, p, {"direction", "rx"}},
               static_cast<double>((*config.indications)[prio]));
    }
  }
  if (!config.trust.empty()) sink.AddInfo(kQosTrust, {n, {"trust", config.trust}});
  map_buffer.assign(config.dscp_priority.size(), '-');
  bool any = false;
  for (size_t dscp = 0; dscp < config.dscp_priority.size(); ++dscp) {
    if (const auto& prio = config.dscp_priority[dscp]; prio && *prio < 8) {
      map_buffer[dscp] = static_cast<char>('0' + *prio);
      any = true;
    }
  }
  if (any) sink.AddInfo(kQosDscpMap, {n, {"map", map_buffer}});
  if (config.default_priority) sink.Add(kQosDefaultPriority, {n}, *config.default_priority);
}

}  // namespace fabricwatch::ethtool
