#include "collectors/ethtool/ethtool_link.h"

#include <algorithm>
#include <array>
#include <optional>

#include "collectors/ethtool/ethtool_metrics.h"

namespace fabricwatch::ethtool {
namespace {

constexpr MetricDesc kLinkInfo{
    "fabric_ethtool_link_info",
    "Duplex (full, half; empty when unknown) and connector port as ethtool names it (FIBRE, "
    "Direct Attach Copper, Twisted Pair, Other, ...; ETHTOOL_A_LINKINFO_PORT) of the current link. "
    "Constant 1.",
    MetricKind::kInfo,
    {"netdev", "duplex", "port"},
    {},
    {ExportRule::kOff,
     "static attributes of the link (duplex, connector), what ethtool NETDEV prints"}};

constexpr std::array<MetricDesc, 6> kMetrics = {
    kLinkSpeed,   kLinkLanes, kLinkSupportedMaxSpeed, kLinkAdvertisedMaxSpeed,
    kLinkAutoneg, kLinkInfo};

// Mb/s → bytes per second.
double BytesPerSecond(uint32_t mbps) { return static_cast<double>(mbps) * 1e6 / 8; }

}  // namespace

std::span<const MetricDesc> LinkMetrics() { return kMetrics; }

void EmitLinkSettings(const std::string& netdev, const sys::LinkSettings& settings,
                      MetricSink& sink) {
  const LabelPair n{"netdev", netdev};
  const std::pair<const MetricDesc*, const std::optional<uint32_t>*> speeds[] = {
      {&kLinkSpeed, &settings.speed_mbps},
      {&kLinkSupportedMaxSpeed, &settings.max_supported_speed_mbps},
      {&kLinkAdvertisedMaxSpeed, &settings.max_advertised_speed_mbps}};
  for (const auto& [desc, mbps] : speeds) {
    if (*mbps) sink.Add(*desc, {n}, BytesPerSecond(**mbps));
  }
  if (settings.lanes) sink.Add(kLinkLanes, {n}, *settings.lanes);
  if (settings.autoneg) sink.Add(kLinkAutoneg, {n}, *settings.autoneg ? 1 : 0);
  if (!settings.duplex.empty() || !settings.port.empty()) {
    sink.AddInfo(kLinkInfo, {n, {"duplex", settings.duplex}, {"port", settings.port}});
  }
}

Result<const sys::LinkSettings*> LinkSettingsCache::Get(const std::string& netdev,
                                                        sys::EthtoolSource& source,
                                                        std::chrono::system_clock::time_point now) {
  auto it = entries_.find(netdev);
  // A clock that stepped back also reads again.
  if (it != entries_.end() && now >= it->second.read_at && now - it->second.read_at < interval_) {
    return &it->second.settings;
  }
  // Read into the entry's own settings, so that an unchanged answer allocates nothing.
  if (it == entries_.end()) it = entries_.emplace(netdev, Entry{}).first;
  ++reads_;
  if (Status status = source.ReadLinkSettings(netdev, it->second.settings); !status.ok()) {
    entries_.erase(it);
    return Error(status);
  }
  it->second.read_at = now;
  return &it->second.settings;
}

void LinkSettingsCache::Retain(const std::vector<std::string>& netdevs) {
  std::erase_if(entries_, [&](const auto& entry) {
    return std::find(netdevs.begin(), netdevs.end(), entry.first) == netdevs.end();
  });
}

}  // namespace fabricwatch::ethtool
