#include "collectors/rdma/rdma_hw_netlink.h"

#include <algorithm>

#include "base/value_parse.h"

namespace fabricwatch::rdma {
namespace {

bool Listed(std::span<const std::string> sorted, std::string_view name) {
  auto it = std::lower_bound(sorted.begin(), sorted.end(), name,
                             [](const std::string& a, std::string_view b) { return a < b; });
  return it != sorted.end() && *it == name;
}

// The first reply name the sysfs directory does not list, or "" (no allocation).
std::string_view UnlistedName(std::span<const std::string> sorted,
                              std::span<const sys::RdmaHwCounter> reply) {
  for (const sys::RdmaHwCounter& c : reply) {
    if (!Listed(sorted, c.name)) return c.name;
  }
  return {};
}

}  // namespace

Result<HwCounterSource> ParseHwCounterSource(std::string_view text, std::string_view flag) {
  if (text == "auto") return HwCounterSource::kAuto;
  if (text == "netlink") return HwCounterSource::kNetlink;
  if (text == "sysfs") return HwCounterSource::kSysfs;
  return Error(StatusCode::kInvalidArgument, std::string(flag) + ": \"" + std::string(text) +
                                                 "\" is not one of auto, netlink, sysfs");
}

HwSourceDecision DecideHwCounterSource(HwCounterSource mode, bool live_sysfs, const Status& probe,
                                       std::span<const std::string> sysfs_names,
                                       std::span<const sys::RdmaHwCounter> reply) {
  if (mode == HwCounterSource::kSysfs) return {false, "option hw-counters-source=sysfs"};
  if (!live_sysfs) return {false, "a replay root is read (--path.sysfs is not the host's /sys)"};
  if (!probe.ok()) return {false, "the kernel did not answer: " + probe.ToString()};
  if (std::string_view name = UnlistedName(sysfs_names, reply); !name.empty()) {
    return {false, "the kernel reports counter \"" + std::string(name) +
                       "\", which the directory does not list"};
  }
  return {true, {}};
}

HwCounterNetlink::HwCounterNetlink(HwCounterSource mode, bool live_sysfs,
                                   std::shared_ptr<spdlog::logger> logger)
    : mode_(mode), live_sysfs_(live_sysfs), logger_(std::move(logger)) {
  if (mode_ != HwCounterSource::kSysfs && live_sysfs_) {
    netlink_ = std::make_unique<sys::RdmaNetlink>();
  }
}

void HwCounterNetlink::BeginDiscovery() {
  indexes_.clear();
  if (!netlink_) return;
  auto devices = netlink_->ListDevices();
  if (!devices) {
    dump_status_ = devices.error();
    return;
  }
  dump_status_ = Status::Ok();
  for (sys::RdmaDeviceIndex& d : *devices) indexes_.emplace_back(std::move(d.name), d.index);
}

HwNetlinkPort HwCounterNetlink::DiscoverPort(const std::string& device, const std::string& port,
                                             std::vector<std::string> names, std::string dir) {
  HwNetlinkPort state;
  state.dir = std::move(dir);
  state.names = std::move(names);
  std::sort(state.names.begin(), state.names.end());
  if (state.names.empty()) return state;  // no hw_counters: nothing to choose
  Status probe = dump_status_;
  if (netlink_ && probe.ok()) {
    auto it = std::find_if(indexes_.begin(), indexes_.end(),
                           [&](const auto& entry) { return entry.first == device; });
    auto number = ParseUint64(port, "port");
    if (it == indexes_.end()) {
      probe = Status(StatusCode::kNotFound, "RDMA netlink GET does not list " + device);
    } else if (!number || *number > UINT32_MAX) {
      probe = Status(StatusCode::kInvalidArgument, "port " + port + " is not a number");
    } else {
      state.dev_index = it->second;
      state.port = static_cast<uint32_t>(*number);
      probe = netlink_->PortHwCounters(state.dev_index, state.port, device, state.reply);
    }
  }
  const HwSourceDecision decision =
      DecideHwCounterSource(mode_, live_sysfs_, probe, state.names, state.reply);
  state.reply.clear();
  if (decision.netlink) {
    state.netlink = true;
    logger_->debug(
        "{} port {}: hw counters by RDMA netlink STAT_GET (ibdev index {}), one "
        "request per sample instead of {} reads of {}",
        device, port, state.dev_index, state.names.size(), state.dir);
  } else if (mode_ == HwCounterSource::kSysfs || !live_sysfs_) {
    logger_->debug("{} port {}: hw counters read from {} ({})", device, port, state.dir,
                   decision.reason);
  } else {
    FallBack(device, state, decision.reason);
  }
  return state;
}

void HwCounterNetlink::FallBack(const std::string& device, HwNetlinkPort& port,
                                const std::string& reason) {
  port.netlink = false;
  port.sampled = false;
  port.reply.clear();
  // Once per port for the life of the collector, not per sample nor per rediscovery.
  if (!logged_.insert(device + "/" + std::to_string(port.port) + port.dir).second) return;
  const auto level = mode_ == HwCounterSource::kNetlink ? spdlog::level::warn : spdlog::level::info;
  logger_->log(level,
               "{}: hw counters not read by RDMA netlink ({}); reading the files of {} "
               "instead, nothing is lost",
               device, reason, port.dir);
}

bool HwCounterNetlink::Sample(const std::string& device, HwNetlinkPort& port) {
  port.sampled = false;
  if (!port.netlink || !netlink_) return false;
  if (Status s = netlink_->PortHwCounters(port.dev_index, port.port, device, port.reply); !s.ok()) {
    if (sys::IsRdmaDeviceMismatch(s)) {
      Reindex(device, port, s);
      return true;
    }
    FallBack(device, port, "the kernel did not answer: " + s.ToString());
    return true;
  }
  if (std::string_view name = UnlistedName(port.names, port.reply); !name.empty()) {
    FallBack(device, port,
             "the kernel reports counter \"" + std::string(name) +
                 "\", which the directory does not list");
    return true;
  }
  port.sampled = true;
  return true;
}

void HwCounterNetlink::Reindex(const std::string& device, HwNetlinkPort& port,
                               const Status& mismatch) {
  // The device was deleted and another one took its ibdev index (or it came back under another):
  // this sample reads the files, and the indexes are listed again for the next one.
  port.sampled = false;
  port.reply.clear();
  logger_->info("{}; listing the RDMA devices again, this sample read from {}", mismatch.message(),
                port.dir);
  BeginDiscovery();
  const uint32_t stale = port.dev_index;
  if (Status found = FindDeviceIndex(indexes_, dump_status_, device, stale, port.dev_index);
      !found.ok()) {
    FallBack(device, port, found.ToString());
  }
}

Status FindDeviceIndex(std::span<const std::pair<std::string, uint32_t>> indexes,
                       const Status& dump, const std::string& device, uint32_t stale,
                       uint32_t& index) {
  if (!dump.ok()) return dump;
  auto it = std::find_if(indexes.begin(), indexes.end(),
                         [&](const auto& entry) { return entry.first == device; });
  if (it == indexes.end()) {
    return Status(StatusCode::kNotFound, "RDMA netlink GET does not list " + device +
                                             " (ibdev index " + std::to_string(stale) +
                                             " is another device's)");
  }
  index = it->second;
  return Status::Ok();
}

bool HwCounterNetlink::Value(const HwNetlinkPort& port, std::string_view name, int& slot,
                             uint64_t& value) {
  if (!port.sampled) return false;
  const auto& reply = port.reply;
  // The reply keeps the driver's order, so the hint is right unless an optional counter was
  // enabled or disabled since the last sample.
  if (slot >= 0 && static_cast<size_t>(slot) < reply.size() && reply[slot].name == name) {
    value = reply[slot].value;
    return true;
  }
  for (size_t i = 0; i < reply.size(); ++i) {
    if (reply[i].name == name) {
      slot = static_cast<int>(i);
      value = reply[i].value;
      return true;
    }
  }
  return false;
}

void HwCounterNetlink::Emit(const std::string& device, const std::string& port,
                            const HwNetlinkPort& state, MetricSink& sink) {
  if (state.names.empty()) return;
  sink.Add(kHwCounterSource,
           {{"device", device}, {"port", port}, {"source", state.netlink ? "netlink" : "sysfs"}},
           1);
}

}  // namespace fabricwatch::rdma
