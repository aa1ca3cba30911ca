#include "collectors/rdma/rdma.h"

#include <sys/resource.h>

#include <algorithm>
#include <cerrno>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "collectors/core/collector_options.h"
#include "collectors/core/device_reads.h"
#include "collectors/core/device_filter.h"
#include "base/duration.h"
#include "collectors/core/transition_log.h"
#include "base/value_parse.h"
#include "collectors/rdma/rdma_counters.h"
#include "collectors/rdma/rdma_metrics.h"
#include "collectors/rdma/rdma_events.h"
#include "collectors/rdma/rdma_hw_netlink.h"
#include "collectors/rdma/rdma_mtu.h"
#include "collectors/rdma/rdma_parse.h"
#include "collectors/rdma/rdma_port_metrics.h"
#include "collectors/sys/sysfs.h"
#include "collectors/sys/verbs_events.h"

namespace fabricwatch::rdma {
namespace {

// Kept-open counter files per collector, and never more than half the open-file limit (the agent
// raises its soft limit to the hard one at start); beyond this, files are read open/read/close.
// A node with 16 HCA ports holds about 900, the 64-port stress preset of tools/bench about 4700.
constexpr size_t kMaxKeptOpenFiles = 8192;
// A listed device that could not be discovered is retried this soon.
constexpr std::chrono::seconds kFailedDeviceRetry{5};
constexpr int kActiveState = 4;     // IB_PORT_ACTIVE
constexpr int kLinkUpPhysState = 5;  // LinkUp

constexpr CollectorOptionSpec kOptions[] = {
    {"device-include", "Regular expression of RDMA device names to include (default: all).", ""},
    {"device-exclude", "Regular expression of RDMA device names to exclude.", ""},
    {"rediscovery-interval",
     "How often devices, ports and counter files are listed again even when the device list "
     "did not change.",
     "60s"},
    {"mtu-interval",
     "How often the IB MTU of each port is read again (ibv_query_port, on mlx5 a firmware "
     "command per port; the ports/<n>/active_mtu and max_mtu files of a replay root). An MTU "
     "changes only when an operator changes it.",
     "10s"},
    {"hw-counters-source",
     "Where ports/<n>/hw_counters values come from: auto (RDMA netlink, one request per port, "
     "where the kernel answers; else the files), netlink (the same, a fallback logged as a "
     "warning) or sysfs (one read per file). Replay roots always read the files.",
     "auto"},
};

std::vector<MetricDesc> AllMetrics() {
  std::vector<MetricDesc> all = {kDeviceInfo,    kPortInfo,   kPortState, kPortPhysState,
                                 kPortActive,    kPortLinkUp, kPortRate,  kPortLanes,
                                 kPortLaneSpeed, kPortLid,    kPortSmLid, kPortActiveMtu,
                                 kPortMaxMtu,    kSaturated};
  for (const MetricDesc* desc : CuratedCounterMetrics()) all.push_back(*desc);
  all.push_back(kPmaOther);
  all.push_back(kHwOther);
  all.push_back(kDeviceHw);
  all.push_back(kHwCounterSource);
  for (const MetricDesc& desc : PortEventMetrics()) all.push_back(desc);
  return all;
}

// An errno that a counter legitimately answers on some functions (a restricted PF, a PMA the
// firmware refuses): the counter is omitted and logged once, not counted as an agent error.
bool IsUnsupportedCounterError(const Status& status) {
  const int e = status.sys_errno();
  return e == EINVAL || e == EIO || e == EOPNOTSUPP || e == ENODATA;
}

class RdmaCollector final : public Collector {
 public:
  RdmaCollector(const CollectorContext& context, DeviceFilter filter,
                std::chrono::milliseconds rediscovery, std::unique_ptr<PortMtuSource> mtu_source,
                std::chrono::milliseconds mtu_interval, HwCounterSource hw_source)
      : sysfs_(context.sysfs),
        rdma_events_(context.rdma_events),
        clock_(context.clock),
        logger_(context.logger),
        transitions_(context.logger),
        filter_(std::move(filter)),
        rediscovery_(rediscovery),
        mtu_(std::move(mtu_source), mtu_interval, context.logger),
        hw_netlink_(hw_source, context.roots.host, context.logger) {
    rlimit limit{};
    fd_budget_ = kMaxKeptOpenFiles;
    if (getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY) {
      fd_budget_ = std::min<size_t>(fd_budget_, limit.rlim_cur / 2);
    }
  }

  // One sample, and the device reads it made (collectors/core/device_reads.h).
  Status Collect(MetricSink& sink) override {
    reads_.Reset();
    Status status = CollectDevices(sink);
    reads_.Add(DeviceRead::kPortQuery, mtu_.TakeQueries());
    reads_.Emit("rdma", sink);
    return status;
  }

 private:
  Status CollectDevices(MetricSink& sink);
  enum class Source { kPma, kPmaExt, kHw, kDeviceHw };
  struct CounterFile {
    sys::AttributeFile file;
    std::string name;
    Source source;
    const CounterSpec* spec;  // null: exported in a generic family
    bool extended_width;      // the port uses PortCountersExtended (64-bit data counters)
    int netlink_slot = -1;    // hw counters: its position in the last netlink reply
  };
  struct Port {
    std::string number;
    std::string link_layer;
    std::string netdev;
    sys::AttributeFile state, phys_state, rate, lid, sm_lid;
    std::vector<CounterFile> counters;
    HwNetlinkPort hw;  // hw_counters by netlink or by file (rdma_hw_netlink.h)
  };
  struct Device {
    std::string name;
    std::string node_type, fw_ver, node_guid, sys_image_guid, hca_type, board_id, node_desc;
    std::string pci_address, netdevs;
    std::vector<Port> ports;
    std::vector<CounterFile> hw_counters;
    bool vanished = false;  // a read said the device is gone: rediscover next tick
  };

  bool TakeFd() {
    if (fds_kept_ >= fd_budget_) return false;
    ++fds_kept_;
    return true;
  }
  sys::AttributeFile File(const std::string& relative) {
    return sys::AttributeFile(sysfs_, relative, TakeFd());
  }
  std::string ReadOptional(const std::string& relative) const {
    auto text = sysfs_.ReadString(relative);
    return text ? *text : std::string();
  }
  Result<Device> Discover(const std::string& name, MetricSink& sink);
  Port DiscoverPort(const std::string& device, const std::string& base, const std::string& number,
                    const std::map<int, std::string>& netdev_by_port, MetricSink& sink);
  void AddCounterFiles(const std::string& dir, Source source, std::vector<CounterFile>& out,
                       MetricSink& sink);
  void CollectDevice(Device& device, MetricSink& sink);
  void CollectEvents(MetricSink& sink);
  void CollectCounter(const std::string& device, const std::string* port, CounterFile& counter,
                      MetricSink& sink, Device& owner, const HwNetlinkPort* hw = nullptr);
  bool ReadCounterFile(CounterFile& counter, MetricSink& sink, Device& owner, uint64_t& raw);
  void Fail(MetricSink& sink, const std::string& key, const Status& status) {
    sink.RecordError(status);
    transitions_.Failed(key, status);
  }

  const sys::SysFs& sysfs_;
  sys::RdmaPortEventLog* rdma_events_;
  const Clock& clock_;
  std::shared_ptr<spdlog::logger> logger_;
  TransitionLog transitions_;
  DeviceFilter filter_;
  std::chrono::milliseconds rediscovery_;
  PortMtuCollector mtu_;
  HwCounterNetlink hw_netlink_;
  size_t fd_budget_;
  size_t fds_kept_ = 0;
  std::vector<std::string> known_names_;
  // class/infiniband as listed this sample (kept: listing then allocates nothing).
  std::vector<std::string> listed_;
  std::chrono::system_clock::time_point last_discovery_{};
  bool retry_failed_ = false;  // a listed device could not be discovered last time
  std::vector<Device> devices_;
  std::set<std::string> unsupported_logged_;
  // The curated families the port being collected already has a series in. A member, cleared
  // per port, so its storage is reused from sample to sample (docs/design.md §8).
  std::vector<const MetricDesc*> used_descs_;
  DeviceReadCounts reads_;  // this sample's
};

void RdmaCollector::AddCounterFiles(const std::string& dir, Source source,
                                    std::vector<CounterFile>& out, MetricSink& sink) {
  auto names = sysfs_.ListDir(dir);
  if (!names) {
    if (names.error().code() != StatusCode::kNotFound) Fail(sink, dir, names.error());
    return;
  }
  for (const std::string& name : *names) {
    // hw_counters/lifespan is the caching period of the counters (ms), a setting.
    if ((source == Source::kHw || source == Source::kDeviceHw) && name == "lifespan") continue;
    const CounterSpec* spec = nullptr;
    if (source == Source::kPma || source == Source::kPmaExt) spec = FindPmaCounter(name);
    if (source == Source::kHw) spec = FindHwCounter(name);
    out.push_back({File(dir + "/" + name), name, source, spec, false});
  }
}

RdmaCollector::Port RdmaCollector::DiscoverPort(const std::string& device,
                                                const std::string& base,
                                                const std::string& number,
                                                const std::map<int, std::string>& netdev_by_port,
                                                MetricSink& sink) {
  const std::string dir = base + "/ports/" + number;
  Port port{.number = number,
            .link_layer = ReadOptional(dir + "/link_layer"),
            .netdev = {},
            .state = File(dir + "/state"),
            .phys_state = File(dir + "/phys_state"),
            .rate = File(dir + "/rate"),
            .lid = File(dir + "/lid"),
            .sm_lid = File(dir + "/sm_lid"),
            .counters = {},
            .hw = {}};
  // RoCE: the GID table names the netdev (reading an empty slot or an IB port gives EINVAL).
  if (auto entries = sysfs_.ListDir(dir + "/gid_attrs/ndevs")) {
    for (const std::string& entry : *entries) {
      auto netdev = sysfs_.ReadString(dir + "/gid_attrs/ndevs/" + entry);
      if (netdev && !netdev->empty()) {
        port.netdev = *netdev;
        break;
      }
    }
  }
  // IPoIB: the device's netdev whose dev_port is this port's number minus one.
  if (port.netdev.empty()) {
    auto n = ParseInt64(number, "port");
    if (n) {
      auto it = netdev_by_port.find(static_cast<int>(*n));
      if (it != netdev_by_port.end()) port.netdev = it->second;
    }
  }
  (void)device;

  std::vector<CounterFile> pma;
  AddCounterFiles(dir + "/counters", Source::kPma, pma, sink);
  std::vector<CounterFile> ext;
  AddCounterFiles(dir + "/counters_ext", Source::kPmaExt, ext, sink);
  // The kernel picks the PortCountersExtended table (64-bit data) when the PMA advertises it;
  // the unicast/multicast files exist only then (core/sysfs.c pma_table selection). A data
  // value above 2^32-1 proves it too; the collector checks that at read time.
  bool extended = false;
  for (const CounterFile& c : pma) extended |= c.name == "unicast_xmit_packets";
  std::set<const MetricDesc*> from_ext;
  for (const CounterFile& c : ext) {
    if (c.spec != nullptr) from_ext.insert(c.spec->desc);
  }
  for (CounterFile& c : pma) {
    // counters_ext (mlx4) supersedes its 32-bit twin in counters/.
    if (c.spec != nullptr && from_ext.contains(c.spec->desc)) continue;
    c.extended_width = extended;
    port.counters.push_back(std::move(c));
  }
  for (CounterFile& c : ext) {
    c.extended_width = true;
    port.counters.push_back(std::move(c));
  }
  AddCounterFiles(dir + "/hw_counters", Source::kHw, port.counters, sink);
  std::vector<std::string> hw_names;
  for (const CounterFile& c : port.counters) {
    if (c.source == Source::kHw) hw_names.push_back(c.name);
  }
  port.hw = hw_netlink_.DiscoverPort(device, number, std::move(hw_names),
                                     sysfs_.Path(dir + "/hw_counters"));
  return port;
}

Result<RdmaCollector::Device> RdmaCollector::Discover(const std::string& name, MetricSink& sink) {
  const std::string base = "class/infiniband/" + name;
  Device device;
  device.name = name;
  auto ports = sysfs_.ListDir(base + "/ports");
  if (!ports) {
    // A device directory without ports/ is not a usable RDMA device (or it vanished).
    return Error(ports.error().WithContext("rdma device " + name));
  }
  if (auto node_type = sysfs_.ReadString(base + "/node_type")) {
    auto parsed = ParseNumberedName(*node_type, sysfs_.Path(base + "/node_type"));
    if (parsed) {
      device.node_type = parsed->name;
    } else {
      Fail(sink, base + "/node_type", parsed.error());
    }
  }
  device.fw_ver = ReadOptional(base + "/fw_ver");
  device.node_guid = ReadOptional(base + "/node_guid");
  device.sys_image_guid = ReadOptional(base + "/sys_image_guid");
  device.hca_type = ReadOptional(base + "/hca_type");
  device.board_id = ReadOptional(base + "/board_id");
  device.node_desc = ReadOptional(base + "/node_desc");
  if (auto pci = sysfs_.ReadLinkBasename(base + "/device"); pci && IsPciAddress(*pci)) {
    device.pci_address = *pci;
  }
  std::map<int, std::string> netdev_by_port;  // port number -> IPoIB netdev
  if (auto netdevs = sysfs_.ListDir(base + "/device/net")) {
    for (const std::string& netdev : *netdevs) {
      if (!device.netdevs.empty()) device.netdevs += ",";
      device.netdevs += netdev;
      // dev_port is 0-based (net/core/net-sysfs.c); IPoIB sets it to port - 1. Kernels before
      // 3.15 had no dev_port and IPoIB used dev_id ("0x0") for the same purpose.
      const std::string dir = base + "/device/net/" + netdev;
      auto dev_port = sysfs_.ReadUint64(dir + "/dev_port");
      if (!dev_port) dev_port = sysfs_.ReadUint64(dir + "/dev_id");
      if (dev_port && *dev_port < 256) {
        netdev_by_port.try_emplace(static_cast<int>(*dev_port) + 1, netdev);
      }
    }
  }
  AddCounterFiles(base + "/hw_counters", Source::kDeviceHw, device.hw_counters, sink);
  for (const std::string& number : *ports) {
    if (!ParseUint64(number, "port")) continue;  // only numbered port directories
    device.ports.push_back(DiscoverPort(name, base, number, netdev_by_port, sink));
  }
  return device;
}

bool RdmaCollector::ReadCounterFile(CounterFile& counter, MetricSink& sink, Device& owner,
                                    uint64_t& raw) {
  const bool pma = counter.source == Source::kPma || counter.source == Source::kPmaExt;
  reads_.Add(pma ? DeviceRead::kPmaCounterFile : DeviceRead::kHwCounterFile);
  auto text = counter.file.Read();
  if (!text) {
    const Status& error = text.error();
    if (error.sys_errno() == ENODEV || error.sys_errno() == ENOENT) {
      owner.vanished = true;  // hot-unplug between discovery and now: rediscover next tick
      return false;
    }
    if (IsUnsupportedCounterError(error)) {
      if (unsupported_logged_.insert(counter.file.path()).second) {
        logger_->info("counter not readable, omitted and retried each tick: {}",
                      error.ToString());
      }
      return false;
    }
    Fail(sink, counter.file.path(), error);
    return false;
  }
  auto value = ParseCounterValue(*text, counter.file.path());
  if (!value) {
    Fail(sink, counter.file.path(), value.error());
    return false;
  }
  if (!value->has_value()) return false;  // "N/A (no PMA)"
  raw = **value;
  return true;
}

void RdmaCollector::CollectCounter(const std::string& device, const std::string* port,
                                   CounterFile& counter, MetricSink& sink, Device& owner,
                                   const HwNetlinkPort* hw) {
  uint64_t raw = 0;
  if (!(counter.source == Source::kHw && hw != nullptr &&
        HwCounterNetlink::Value(*hw, counter.name, counter.netlink_slot, raw)) &&
      !ReadCounterFile(counter, sink, owner, raw)) {
    return;
  }
  if (counter.source == Source::kDeviceHw) {
    sink.Add(kDeviceHw, {{"device", device}, {"counter", counter.name}},
             static_cast<double>(raw));
    return;
  }
  const LabelPair d{"device", device};
  const LabelPair p{"port", *port};
  const CounterSpec* spec = counter.spec;
  // Two vendor names for one metric on the same port (never seen, but possible with a future
  // driver): the second goes to the generic family rather than becoming a duplicate series.
  if (spec != nullptr) {
    if (std::find(used_descs_.begin(), used_descs_.end(), spec->desc) != used_descs_.end()) {
      spec = nullptr;
    } else {
      used_descs_.push_back(spec->desc);
    }
  }
  if (spec == nullptr) {
    sink.Add(counter.source == Source::kHw ? kHwOther : kPmaOther,
             {d, p, {"counter", counter.name}}, static_cast<double>(raw));
    return;
  }
  sink.Add(*spec->desc, {d, p}, static_cast<double>(raw) * spec->scale);
  int bits = spec->saturating_bits;
  if (spec->widened_by_extended_table && (counter.extended_width || raw > 0xffffffffULL)) {
    bits = 0;  // served from the 64-bit PortCountersExtended
  }
  if (bits > 0) {
    const uint64_t max = (uint64_t{1} << bits) - 1;
    sink.Add(kSaturated, {d, p, {"counter", counter.name}}, raw == max ? 1.0 : 0.0);
  }
}

void RdmaCollector::CollectDevice(Device& device, MetricSink& sink) {
  const LabelPair d{"device", device.name};
  sink.AddInfo(kDeviceInfo, {d,
                             {"node_type", device.node_type},
                             {"fw_ver", device.fw_ver},
                             {"node_guid", device.node_guid},
                             {"sys_image_guid", device.sys_image_guid},
                             {"hca_type", device.hca_type},
                             {"board_id", device.board_id},
                             {"node_desc", device.node_desc},
                             {"pci_address", device.pci_address},
                             {"netdevs", device.netdevs}});
  for (CounterFile& counter : device.hw_counters) {
    CollectCounter(device.name, nullptr, counter, sink, device);
  }
  for (Port& port : device.ports) {
    const LabelPair p{"port", port.number};
    std::string speed;
    // state, phys_state, rate, lid and sm_lid: each read is one ib_query_port (device_reads.h).
    auto numbered = [&](sys::AttributeFile& file) -> std::optional<int> {
      reads_.Add(DeviceRead::kPortQuery);
      auto text = file.Read();
      if (!text) {
        if (text.error().sys_errno() == ENODEV) device.vanished = true;
        if (text.error().sys_errno() != ENOENT && text.error().sys_errno() != ENODEV) {
          Fail(sink, file.path(), text.error());
        }
        return std::nullopt;
      }
      auto parsed = ParseNumberedName(*text, file.path());
      if (!parsed) {
        Fail(sink, file.path(), parsed.error());
        return std::nullopt;
      }
      return parsed->id;
    };
    if (auto state = numbered(port.state)) {
      sink.Add(kPortState, {d, p}, *state);
      sink.Add(kPortActive, {d, p}, *state == kActiveState ? 1 : 0);
    }
    if (auto phys = numbered(port.phys_state)) {
      sink.Add(kPortPhysState, {d, p}, *phys);
      sink.Add(kPortLinkUp, {d, p}, *phys == kLinkUpPhysState ? 1 : 0);
    }
    reads_.Add(DeviceRead::kPortQuery);
    if (auto text = port.rate.Read()) {
      if (auto rate = ParseRate(*text, port.rate.path())) {
        sink.Add(kPortRate, {d, p}, rate->bytes_per_second);
        if (rate->lanes > 0) sink.Add(kPortLanes, {d, p}, rate->lanes);
        if (rate->lane_gbps > 0) sink.Add(kPortLaneSpeed, {d, p}, rate->lane_gbps * 1e9 / 8.0);
        speed = rate->speed;
      } else {
        Fail(sink, port.rate.path(), rate.error());
      }
    } else if (int err = text.error().sys_errno(); err == ENODEV) {
      device.vanished = true;  // unregistered under us (hot unplug), as for the state files
    } else if (err != ENOENT && err != EINVAL) {   // EINVAL: rate_show() cannot print the
      Fail(sink, port.rate.path(), text.error());  // width or speed: omitted, not an error
    }
    // LIDs mean something only on InfiniBand; RoCE ports print 0.
    if (port.link_layer == "InfiniBand") {
      for (auto [file, desc] : {std::pair{&port.lid, &kPortLid}, {&port.sm_lid, &kPortSmLid}}) {
        reads_.Add(DeviceRead::kPortQuery);
        auto text = file->Read();
        if (!text) continue;  // qib/hfi1 quirks aside, absent LIDs are not errors
        if (auto lid = ParseLid(*text, file->path())) {
          sink.Add(*desc, {d, p}, *lid);
        } else {
          Fail(sink, file->path(), lid.error());
        }
      }
    }
    if (Status mtu = mtu_.Collect(device.name, port.number, clock_.Now(), sink); !mtu.ok()) {
      Fail(sink, device.name + "/" + port.number + "/mtu", mtu);
    }
    sink.AddInfo(kPortInfo, {d, p, {"link_layer", port.link_layer}, {"netdev", port.netdev},
                             {"speed", speed}});
    used_descs_.clear();
    if (hw_netlink_.Sample(device.name, port.hw)) reads_.Add(DeviceRead::kHwCounterNetlinkRequest);
    HwCounterNetlink::Emit(device.name, port.number, port.hw, sink);
    for (CounterFile& counter : port.counters) {
      CollectCounter(device.name, &port.number, counter, sink, device, &port.hw);
    }
  }
}

void RdmaCollector::CollectEvents(MetricSink& sink) {
  PortEventCounts counts = rdma_events_->Counts();
  // Every known port starts with zero port_active/port_err, so alerts never meet an absent
  // series; events of ports we do not list (device_fatal on port 0) are added as seen. Not for a
  // device the listener forgot (gone; listed here until the next rediscovery): N → absent.
  for (const Device& device : devices_) {
    if (rdma_events_->IsForgotten(device.name)) continue;
    for (const Port& port : device.ports) {
      auto number = ParseInt64(port.number, "port");
      if (!number) continue;
      for (const char* event : sys::kPrimaryPortEvents) {
        counts.try_emplace({device.name, static_cast<int>(*number), event}, 0);
      }
    }
  }
  EmitPortEvents(*rdma_events_, counts, sink);
}

Status RdmaCollector::CollectDevices(MetricSink& sink) {
  if (Status listed = sysfs_.ListDirInto("class/infiniband", listed_); !listed.ok()) {
    if (listed.code() == StatusCode::kNotFound) {
      devices_.clear();
      return Status(StatusCode::kNoData, sysfs_.Path("class/infiniband") + " does not exist");
    }
    return listed;
  }
  std::erase_if(listed_, [&](const std::string& n) { return !filter_.Accepts(n); });
  const std::vector<std::string>& names = listed_;

  const auto now = clock_.Now();
  bool rediscover = names != known_names_ || now - last_discovery_ >= rediscovery_ ||
                    (retry_failed_ && now - last_discovery_ >= kFailedDeviceRetry);
  for (const Device& device : devices_) rediscover |= device.vanished;
  if (rediscover) {
    devices_.clear();
    fds_kept_ = 0;
    retry_failed_ = false;
    hw_netlink_.BeginDiscovery();
    if (rdma_events_ != nullptr) rdma_events_->RetainForgotten(names);  // bounds the set
    for (const std::string& name : names) {
      auto device = Discover(name, sink);
      if (!device) {
        // E.g. listed before its ports/ directory exists (registration in progress): try again
        // soon rather than at the next full rediscovery.
        retry_failed_ = true;
        // Gone between the listing and now, or not a device: quiet; anything else counts.
        if (device.error().code() != StatusCode::kNotFound) {
          Fail(sink, name, device.error());
        } else {
          logger_->debug("{}", device.error().ToString());
        }
        continue;
      }
      devices_.push_back(std::move(*device));
    }
    known_names_ = names;
    last_discovery_ = now;
    mtu_.Retain(names);  // a device gone: its cached MTUs are forgotten
  } else {
    // A device whose discovery failed (a symlink loop, ELOOP) is tried again only at the next
    // rediscovery: until then it is still failing, not recovered.
    for (const std::string& name : names) transitions_.Keep(name);
  }
  for (Device& device : devices_) CollectDevice(device, sink);
  mtu_.EndCollection();  // closes this collection's verbs contexts
  if (rdma_events_ != nullptr) CollectEvents(sink);
  transitions_.EndCollection();
  if (devices_.empty() && sink.error_count() == 0) {
    return Status(StatusCode::kNoData,
                  "no RDMA device in " + sysfs_.Path("class/infiniband"));
  }
  return Status::Ok();
}

}  // namespace

std::span<const MetricDesc> RdmaMetrics() {
  static const std::vector<MetricDesc> all = AllMetrics();  // built once from constexpr tables
  return all;
}
std::span<const CollectorOptionSpec> RdmaOptions() { return kOptions; }
Result<std::unique_ptr<Collector>> NewRdmaCollectorWithMtuSource(
    const CollectorContext& context, std::unique_ptr<PortMtuSource> mtu_source) {
  const CollectorOptionReader options("rdma", context.options, kOptions);
  auto filter = options.Devices();
  if (!filter) return Error(filter.error());
  auto interval = options.Duration("rediscovery-interval");
  if (!interval) return Error(interval.error());
  auto mtu_interval = options.Duration("mtu-interval");
  if (!mtu_interval) return Error(mtu_interval.error());
  auto hw_source =
      ParseHwCounterSource(options.Value("hw-counters-source"), options.Flag("hw-counters-source"));
  if (!hw_source) return Error(hw_source.error());
  return std::unique_ptr<Collector>(new RdmaCollector(
      context, std::move(*filter), *interval, std::move(mtu_source), *mtu_interval, *hw_source));
}

Result<std::unique_ptr<Collector>> NewRdmaCollector(const CollectorContext& context) {
  // libibverbs describes this host's devices, so it answers only for the host's own /sys; a
  // replay root carries the MTUs as files (docs/design.md §5.1).
  return NewRdmaCollectorWithMtuSource(
      context, context.roots.host ? MakeVerbsMtuSource() : MakeReplayMtuSource(context.sysfs));
}

}  // namespace fabricwatch::rdma
