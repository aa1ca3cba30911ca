#include "exporter/privileges.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <string>
#include <utility>

#include "collectors/registry.h"

namespace fabricwatch::exporter {
namespace {

constexpr MetricDesc kAllMetrics[] = {kPrivilegeMissing};

// The effective set is read once per start; /proc/self/status is about 1.5 KiB.
constexpr size_t kStatusBytes = 8192;

class PermissionWatchingEthtool final : public sys::EthtoolSource {
 public:
  PermissionWatchingEthtool(std::unique_ptr<sys::EthtoolSource> inner, PrivilegeLog& log)
      : inner_(std::move(inner)), log_(log) {}

  bool HasOwnNetdevs() const override { return inner_->HasOwnNetdevs(); }
  Result<std::vector<std::string>> Netdevs() const override { return inner_->Netdevs(); }
  Status ListNetdevEntries(std::vector<std::string>& names) const override {
    return inner_->ListNetdevEntries(names);
  }
  bool HasLinkQueries() const override { return inner_->HasLinkQueries(); }
  Status ReadStatistics(const std::string& netdev, std::vector<sys::EthtoolStat>& stats) override {
    return inner_->ReadStatistics(netdev, stats);
  }
  Result<sys::PauseInfo> Pause(const std::string& netdev) override { return inner_->Pause(netdev); }
  Result<sys::FecStats> Fec(const std::string& netdev) override { return inner_->Fec(netdev); }
  Result<sys::LinkState> LinkStateOf(const std::string& netdev) override {
    return inner_->LinkStateOf(netdev);
  }
  Result<sys::PfcConfig> Pfc(const std::string& netdev) override { return inner_->Pfc(netdev); }
  Result<uint32_t> PfcStormTimeoutMs(const std::string& netdev) override {
    return inner_->PfcStormTimeoutMs(netdev);
  }
  Result<std::vector<sys::StandardStat>> StandardStats(const std::string& netdev) override {
    return inner_->StandardStats(netdev);
  }
  Result<sys::LinkSettings> LinkSettingsOf(const std::string& netdev) override {
    return inner_->LinkSettingsOf(netdev);
  }
  Status ReadLinkSettings(const std::string& netdev, sys::LinkSettings& settings) override {
    return inner_->ReadLinkSettings(netdev, settings);
  }
  Status ReadModuleEeprom(const std::string& netdev, std::vector<uint8_t>& image) override {
    Status status = inner_->ReadModuleEeprom(netdev, image);
    if (status.code() == StatusCode::kPermissionDenied) log_.Refused("module_eeprom", status);
    return status;
  }
  std::vector<Status> TakeWarnings() override { return inner_->TakeWarnings(); }

 private:
  std::unique_ptr<sys::EthtoolSource> inner_;
  PrivilegeLog& log_;
};

}  // namespace

std::span<const PrivilegeNeed* const> PrivilegeNeeds() {
  static const std::vector<const PrivilegeNeed*> needs = [] {
    std::vector<const PrivilegeNeed*> all;
    for (const CollectorInfo& info : CollectorRegistry()) {
      for (const PrivilegeNeed& need : info.privileges) all.push_back(&need);
    }
    return all;
  }();
  return needs;
}

Result<uint64_t> ParseEffectiveCapabilities(std::string_view proc_status) {
  // proc(5): one "CapEff:\t<16 hex digits>" line; fs/proc/array.c render_cap_t().
  constexpr std::string_view kKey = "CapEff:";
  size_t at = 0;
  while (at < proc_status.size()) {
    size_t end = proc_status.find('\n', at);
    if (end == std::string_view::npos) end = proc_status.size();
    std::string_view line = proc_status.substr(at, end - at);
    at = end + 1;
    if (!line.starts_with(kKey)) continue;
    line.remove_prefix(kKey.size());
    while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
    while (!line.empty() && (line.back() == ' ' || line.back() == '\t' || line.back() == '\r')) {
      line.remove_suffix(1);
    }
    uint64_t value = 0;
    const auto [ptr, ec] = std::from_chars(line.data(), line.data() + line.size(), value, 16);
    if (line.empty() || ec != std::errc() || ptr != line.data() + line.size()) {
      return Error(StatusCode::kInvalidArgument,
                   "CapEff: not a hexadecimal capability set: \"" + std::string(line) + "\"");
    }
    return value;
  }
  return Error(StatusCode::kNotFound, "no CapEff line");
}

Result<uint64_t> EffectiveCapabilities(const sys::FileSystem& filesystem) {
  const std::string path = "/proc/self/status";
  auto fd = filesystem.Open(path);
  if (!fd) return Error(fd.error());
  std::string buf(kStatusBytes, '\0');
  auto n = filesystem.ReadAt0(*fd, buf, path);
  if (!n) return Error(n.error());
  auto caps = ParseEffectiveCapabilities(std::string_view(buf.data(), *n));
  if (!caps) return Error(caps.error().WithContext(path));
  return caps;
}

PrivilegeLog::PrivilegeLog(std::vector<const PrivilegeNeed*> in_use,
                           const Result<uint64_t>& effective,
                           std::shared_ptr<spdlog::logger> logger)
    : log_(std::move(logger)), effective_known_(effective.has_value()) {
  if (!effective) {
    log_->warn(
        "cannot read the effective capabilities ({}); a missing privilege is reported when the "
        "kernel refuses a read",
        effective.error().ToString());
  }
  for (const PrivilegeNeed* need : in_use) {
    const bool held = !effective || (*effective >> need->number & 1) != 0;
    entries_.push_back({need, held, false, !held});
    if (held) continue;
    log_->warn(
        "privilege missing: {} ({} collector, feature {}) is not in the effective capability set; "
        "not exported: {}. Everything else still is. Grant it with AmbientCapabilities={} "
        "(README \"Privileges\")",
        need->capability, need->collector, need->feature, need->loses, need->capability);
  }
}

bool PrivilegeLog::Refused(std::string_view feature, const Status& status) {
  std::lock_guard lock(mutex_);
  for (Entry& entry : entries_) {
    if (entry.need->feature != feature) continue;
    entry.refused = true;
    if (std::exchange(entry.logged, true)) return true;
    log_->warn(
        "privilege missing: the kernel refused {} ({} collector, feature {}){}: {}; not "
        "exported: {}",
        entry.need->capability, entry.need->collector, entry.need->feature,
        effective_known_ ? " although the effective set has it (a user namespace or security "
                           "module?)"
                         : "",
        status.ToString(), entry.need->loses);
    return true;
  }
  return false;
}

bool PrivilegeLog::Missing(std::string_view feature) const {
  std::lock_guard lock(mutex_);
  return std::any_of(entries_.begin(), entries_.end(), [&](const Entry& e) {
    return e.need->feature == feature && (!e.held || e.refused);
  });
}

void PrivilegeLog::Export(MetricSink& sink) const {
  std::lock_guard lock(mutex_);
  for (const Entry& entry : entries_) {
    sink.Add(kPrivilegeMissing,
             {{"capability", entry.need->capability}, {"feature", entry.need->feature}},
             !entry.held || entry.refused ? 1 : 0);
  }
}

std::span<const MetricDesc> PrivilegeLog::Metrics() { return kAllMetrics; }

std::unique_ptr<sys::EthtoolSource> WatchPermissions(std::unique_ptr<sys::EthtoolSource> source,
                                                     PrivilegeLog& log) {
  if (source == nullptr) return nullptr;
  return std::make_unique<PermissionWatchingEthtool>(std::move(source), log);
}

}  // namespace fabricwatch::exporter
