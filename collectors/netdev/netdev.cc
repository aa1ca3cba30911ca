#include "collectors/netdev/netdev.h"

#include <cerrno>
#include <chrono>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "collectors/core/collector_options.h"
#include "collectors/core/device_reads.h"
#include "collectors/core/device_filter.h"
#include "collectors/core/transition_log.h"
#include "base/value_parse.h"
#include "collectors/netdev/netdev_metrics.h"
#include "collectors/netdev/netdev_parse.h"
#include "collectors/sys/link_events.h"
#include "collectors/sys/sysfs.h"

namespace fabricwatch::netdev {
namespace {

// About 20 counter files each. 128 covers a 64-port node's fabric netdevs and their host
// interfaces; a host with hundreds of container veths reads the rest open/read/close.
constexpr size_t kMaxKeptOpenInterfaces = 128;
// How often the netdev -> RDMA device map is rebuilt when the interface set did not change.
constexpr std::chrono::seconds kRdmaMapRefresh{30};

constexpr MetricDesc kInfo{
    "fabric_netdev_info",
    "Network interface facts from /sys/class/net/<netdev>: driver (device/driver link), PCI "
    "function (device link), the RDMA device it carries traffic for, RFC 2863 operstate, duplex "
    "and MAC address. Constant 1.",
    MetricKind::kInfo,
    {"netdev", "driver", "pci_address", "rdma_device", "operstate", "duplex", "address"}};
constexpr MetricDesc kAdminUp{
    "fabric_netdev_admin_up",
    "1 if the interface is administratively up (IFF_UP in flags).",
    MetricKind::kGauge,
    {"netdev"},
    {},
    {ExportRule::kOff,
     "the operator's own setting; fabric_netdev_oper_up and fabric_netdev_carrier say whether the "
     "port works, and link_flap reads it to tell maintenance from a fault"}};
constexpr MetricDesc kOperUp{"fabric_netdev_oper_up",
                             "1 if the RFC 2863 operational state (operstate) is up.",
                             MetricKind::kGauge,
                             {"netdev"}};
constexpr MetricDesc kCarrierChanges{
    "fabric_netdev_carrier_changes_total",
    "Carrier transitions counted by the kernel (carrier_changes, 32-bit, kernel 3.15+).",
    MetricKind::kCounter,
    {"netdev"},
    {},
    {ExportRule::kOff, "the sum of fabric_netdev_carrier_{up,down}_changes_total"}};
constexpr MetricDesc kCarrierUp{
    "fabric_netdev_carrier_up_changes_total",
    "Carrier up transitions counted by the kernel (carrier_up_count, 32-bit, kernel 4.16+).",
    MetricKind::kCounter,
    {"netdev"},
    {},
    {ExportRule::kOff,
     "every up follows a down: fabric_netdev_carrier_down_changes_total counts the flaps"}};
constexpr MetricDesc kRxBytes{"fabric_netdev_receive_bytes_total",
                              "Bytes received (statistics/rx_bytes).", MetricKind::kCounter,
                              {"netdev"}};
constexpr MetricDesc kTxBytes{"fabric_netdev_transmit_bytes_total",
                              "Bytes transmitted (statistics/tx_bytes).", MetricKind::kCounter,
                              {"netdev"}};
constexpr MetricDesc kRxPackets{
    "fabric_netdev_receive_packets_total",
    "Packets received (statistics/rx_packets).",
    MetricKind::kCounter,
    {"netdev"},
    {},
    {ExportRule::kOff,
     "bytes tell the load; packet counts are node_exporter's too (node_network_*)"}};
constexpr MetricDesc kTxPackets{
    "fabric_netdev_transmit_packets_total",
    "Packets transmitted (statistics/tx_packets).",
    MetricKind::kCounter,
    {"netdev"},
    {},
    {ExportRule::kOff,
     "bytes tell the load; packet counts are node_exporter's too (node_network_*)"}};
constexpr MetricDesc kRxErrors{"fabric_netdev_receive_errors_total",
                               "Receive errors (statistics/rx_errors).", MetricKind::kCounter,
                               {"netdev"}};
constexpr MetricDesc kTxErrors{"fabric_netdev_transmit_errors_total",
                               "Transmit errors (statistics/tx_errors).", MetricKind::kCounter,
                               {"netdev"}};
constexpr MetricDesc kRxDropped{"fabric_netdev_receive_dropped_total",
                                "Received packets dropped (statistics/rx_dropped).",
                                MetricKind::kCounter,
                                {"netdev"}};
constexpr MetricDesc kTxDropped{"fabric_netdev_transmit_dropped_total",
                                "Transmitted packets dropped (statistics/tx_dropped).",
                                MetricKind::kCounter,
                                {"netdev"}};
constexpr MetricDesc kLinkEvents{
    "fabric_netdev_link_events_total",
    "Carrier transitions seen by the rtnetlink listener since the agent started, by the state "
    "the link went to (transition=up|down); includes transitions inferred from the kernel's "
    "carrier counters when notifications were coalesced.",
    MetricKind::kCounter,
    {"netdev", "transition"}};
constexpr MetricDesc kLastLinkEvent{
    "fabric_netdev_link_last_event_timestamp_seconds",
    "Unix time of the last carrier transition seen by the rtnetlink listener.",
    MetricKind::kGauge,
    {"netdev"}};
constexpr MetricDesc kListenerUp{
    "fabricwatch_link_listener_up",
    "1 while the rtnetlink link-event listener is running, 0 if it stopped or failed to start.",
    MetricKind::kGauge,
    {}};
constexpr MetricDesc kListenerOverruns{
    "fabricwatch_link_listener_overruns_total",
    "rtnetlink receive-buffer overruns (ENOBUFS); each one triggered a resynchronising dump.",
    MetricKind::kCounter,
    {}};

// Plain counters and gauges read the same way; the table drives both reading and emission.
struct NumericAttribute {
  std::string_view file;
  const MetricDesc* desc;
};
constexpr NumericAttribute kNumericAttributes[] = {
    {"carrier_changes", &kCarrierChanges},  {"carrier_up_count", &kCarrierUp},
    {"carrier_down_count", &kCarrierDown},  {"mtu", &kMtu},
    {"statistics/rx_bytes", &kRxBytes},     {"statistics/tx_bytes", &kTxBytes},
    {"statistics/rx_packets", &kRxPackets}, {"statistics/tx_packets", &kTxPackets},
    {"statistics/rx_errors", &kRxErrors},   {"statistics/tx_errors", &kTxErrors},
    {"statistics/rx_dropped", &kRxDropped}, {"statistics/tx_dropped", &kTxDropped},
};

constexpr MetricDesc kAllMetrics[] = {
    kInfo,    kAdminUp,  kOperUp,    kOperState, kCarrier,  kCarrierChanges, kCarrierUp,
    kCarrierDown, kMtu,  kSpeed,     kRxBytes,   kTxBytes,  kRxPackets,      kTxPackets,
    kRxErrors, kTxErrors, kRxDropped, kTxDropped, kLinkEvents, kLastLinkEvent, kListenerUp,
    kListenerOverruns};

constexpr CollectorOptionSpec kOptions[] = {
    {"device-include", "Regular expression of netdev names to include (default: all).", ""},
    {"device-exclude", "Regular expression of netdev names to exclude.", "^lo$"},
};

// An attribute that may legitimately be missing here: absent file (older kernel) or EINVAL
// (carrier/speed/duplex of a down interface). Those are omitted quietly; anything else counts.
bool IsQuietlyAbsent(const Status& status) {
  return status.sys_errno() == ENOENT || status.sys_errno() == EINVAL;
}

class NetdevCollector final : public Collector {
 public:
  NetdevCollector(const CollectorContext& context, DeviceFilter filter)
      : sysfs_(context.sysfs),
        link_events_(context.link_events),
        clock_(context.clock),
        transitions_(context.logger),
        filter_(std::move(filter)) {}

  // One sample, and the device reads it made (collectors/core/device_reads.h).
  Status Collect(MetricSink& sink) override {
    reads_.Reset();
    Status status = CollectInterfaces(sink);
    reads_.Emit("netdev", sink);
    return status;
  }

 private:
  Status CollectInterfaces(MetricSink& sink);
  struct Interface {
    std::string name;
    int64_t ifindex = -1;
    bool keep_open = true;
    std::string driver;
    std::string pci_address;
    sys::AttributeFile ifindex_file;
    sys::AttributeFile flags, operstate, carrier, speed, duplex, address;
    std::vector<sys::AttributeFile> numeric;  // parallel to kNumericAttributes
  };

  Interface Open(const std::string& name, bool keep_open) const;
  enum class Outcome { kEmitted, kGone, kNotInterface, kReused };
  // kGone: vanished or unreadable; kNotInterface: a plain file in class/net (bonding_masters);
  // kReused: the name now belongs to another ifindex.
  Outcome CollectInterface(Interface& itf, MetricSink& sink);
  void RefreshRdmaMap(const std::vector<std::string>& names);
  void Fail(MetricSink& sink, const std::string& key, const Status& status) {
    sink.RecordError(status);
    transitions_.Failed(key, status);
  }

  const sys::SysFs& sysfs_;
  sys::LinkEventLog* link_events_;
  const Clock& clock_;
  TransitionLog transitions_;
  DeviceFilter filter_;
  std::map<std::string, Interface, std::less<>> interfaces_;
  std::set<std::string, std::less<>> not_interfaces_;  // files listed in class/net
  std::map<std::string, std::string, std::less<>> rdma_device_of_;
  std::vector<std::string> rdma_map_names_;
  std::chrono::system_clock::time_point rdma_map_time_{};
  // class/net as listed and filtered this sample: kept from sample to sample so that listing
  // the directory allocates nothing once the names are known.
  std::vector<std::string> names_;
  DeviceReadCounts reads_;  // this sample's
};

NetdevCollector::Interface NetdevCollector::Open(const std::string& name, bool keep_open) const {
  const std::string dir = "class/net/" + name + "/";
  auto file = [&](std::string_view attribute) {
    return sys::AttributeFile(sysfs_, dir + std::string(attribute), keep_open);
  };
  Interface itf{.name = name,
                .ifindex = -1,
                .keep_open = keep_open,
                .driver = {},
                .pci_address = {},
                .ifindex_file = file("ifindex"),
                .flags = file("flags"),
                .operstate = file("operstate"),
                .carrier = file("carrier"),
                .speed = file("speed"),
                .duplex = file("duplex"),
                .address = file("address"),
                .numeric = {}};
  for (const NumericAttribute& attribute : kNumericAttributes) {
    itf.numeric.push_back(file(attribute.file));
  }
  // Virtual interfaces (veth, bridges, lo) have no device link: empty labels, not errors.
  if (auto pci = sysfs_.ReadLinkBasename(dir + "device"); pci && IsPciAddress(*pci)) {
    itf.pci_address = *pci;
  }
  if (auto driver = sysfs_.ReadLinkBasename(dir + "device/driver")) itf.driver = *driver;
  return itf;
}

void NetdevCollector::RefreshRdmaMap(const std::vector<std::string>& names) {
  auto now = clock_.Now();
  if (names == rdma_map_names_ && now - rdma_map_time_ < kRdmaMapRefresh) return;
  rdma_map_names_ = names;
  rdma_map_time_ = now;
  rdma_device_of_.clear();
  auto devices = sysfs_.ListDir("class/infiniband");
  if (!devices) return;  // no RDMA devices on this host: nothing to map
  for (const std::string& device : *devices) {
    const std::string base = "class/infiniband/" + device;
    // The netdevs of the device's PCI function (several for multi-port functions).
    if (auto netdevs = sysfs_.ListDir(base + "/device/net")) {
      for (const std::string& netdev : *netdevs) rdma_device_of_.try_emplace(netdev, device);
    }
    // RoCE: the netdev behind each port's GID table (the bond in RoCE LAG).
    if (auto ports = sysfs_.ListDir(base + "/ports")) {
      for (const std::string& port : *ports) {
        const std::string ndevs = base + "/ports/" + port + "/gid_attrs/ndevs";
        auto entries = sysfs_.ListDir(ndevs);
        if (!entries) continue;
        for (const std::string& entry : *entries) {
          auto netdev = sysfs_.ReadString(ndevs + "/" + entry);
          if (netdev && !netdev->empty()) rdma_device_of_.try_emplace(*netdev, device);
        }
      }
    }
  }
}

NetdevCollector::Outcome NetdevCollector::CollectInterface(Interface& itf, MetricSink& sink) {
  const std::string& name = itf.name;
  const LabelPair netdev{"netdev", name};

  auto ifindex = itf.ifindex_file.ReadInt64();
  if (!ifindex) {
    if (ifindex.error().sys_errno() == ENOTDIR) return Outcome::kNotInterface;
    Fail(sink, name, ifindex.error().WithContext("netdev " + name + " skipped (vanished or unreadable)"));
    return Outcome::kGone;
  }
  if (itf.ifindex >= 0 && itf.ifindex != *ifindex) return Outcome::kReused;
  itf.ifindex = *ifindex;

  // Each AttributeFile reads into its own buffer, so the views stay valid until this interface
  // is collected again: no copy of the text per sample.
  auto read_text = [&](sys::AttributeFile& file,
                       bool may_be_absent) -> std::optional<std::string_view> {
    auto value = file.Read();
    if (value) return *value;
    if (!(may_be_absent && IsQuietlyAbsent(value.error()))) {
      Fail(sink, file.path(), value.error());
    }
    return std::nullopt;
  };

  std::string_view operstate_name = "unknown";
  if (auto text = read_text(itf.operstate, false)) {
    if (auto code = ParseOperState(*text)) {
      operstate_name = *text;
      sink.Add(kOperState, {netdev}, *code);
      sink.Add(kOperUp, {netdev}, *code == 6 ? 1.0 : 0.0);
    } else {
      Fail(sink, itf.operstate.path(), code.error().WithContext(itf.operstate.path()));
    }
  }
  if (auto text = read_text(itf.flags, false)) {
    if (auto up = ParseAdminUp(*text, itf.flags.path())) {
      sink.Add(kAdminUp, {netdev}, *up ? 1.0 : 0.0);
    } else {
      Fail(sink, itf.flags.path(), up.error());
    }
  }
  if (auto text = read_text(itf.carrier, true)) {
    if (auto carrier = ParseUint64(*text, itf.carrier.path()); carrier && *carrier <= 1) {
      sink.Add(kCarrier, {netdev}, static_cast<double>(*carrier));
    } else {
      Fail(sink, itf.carrier.path(),
           carrier ? Status(StatusCode::kInvalidArgument,
                            itf.carrier.path() + ": carrier is neither 0 nor 1")
                   : carrier.error());
    }
  }
  // speed and duplex: each read is the driver's get_link_ksettings (net-sysfs.c speed_show,
  // duplex_show), a firmware register read on mlx5e (collectors/core/device_reads.h).
  reads_.Add(DeviceRead::kLinkSettingsQuery, 2);
  if (auto text = read_text(itf.speed, true)) {
    if (auto speed = ParseSpeedBytesPerSecond(*text, itf.speed.path())) {
      if (speed->has_value()) sink.Add(kSpeed, {netdev}, **speed);
    } else {
      Fail(sink, itf.speed.path(), speed.error());
    }
  }
  for (size_t i = 0; i < itf.numeric.size(); ++i) {
    // statistics/<name>: dev_get_stats, the driver's ndo_get_stats64, per file.
    if (kNumericAttributes[i].file.starts_with("statistics/")) {
      reads_.Add(DeviceRead::kNetdevStatisticsFile);
    }
    auto value = itf.numeric[i].ReadUint64();
    if (value) {
      sink.Add(*kNumericAttributes[i].desc, {netdev}, static_cast<double>(*value));
    } else if (value.error().sys_errno() != ENOENT) {
      Fail(sink, itf.numeric[i].path(), value.error());
    }
  }
  const std::string_view duplex = read_text(itf.duplex, true).value_or("");
  const std::string_view address = read_text(itf.address, true).value_or("");
  auto rdma = rdma_device_of_.find(name);
  sink.AddInfo(kInfo, {netdev,
                       {"driver", itf.driver},
                       {"pci_address", itf.pci_address},
                       {"rdma_device", rdma == rdma_device_of_.end() ? "" : rdma->second},
                       {"operstate", operstate_name},
                       {"duplex", duplex},
                       {"address", address}});
  return Outcome::kEmitted;
}

Status NetdevCollector::CollectInterfaces(MetricSink& sink) {
  if (Status listed = sysfs_.ListDirInto("class/net", names_); !listed.ok()) {
    if (listed.code() == StatusCode::kNotFound) {
      return Status(StatusCode::kNoData, sysfs_.Path("class/net") + " does not exist");
    }
    return listed;
  }
  // Interface names fit std::string's inline buffer (IFNAMSIZ), so erasing moves no heap.
  std::erase_if(names_, [&](const std::string& n) { return !filter_.Accepts(n); });
  RefreshRdmaMap(names_);

  // Forget interfaces that disappeared; open new ones (kept open while the budget lasts).
  const auto listed = [&](const std::string& name) {
    return std::binary_search(names_.begin(), names_.end(), name);
  };
  std::erase_if(interfaces_, [&](const auto& entry) { return !listed(entry.first); });
  std::erase_if(not_interfaces_, [&](const std::string& name) { return !listed(name); });
  size_t kept_open = 0;
  for (const auto& [name, itf] : interfaces_) kept_open += itf.keep_open ? 1 : 0;

  size_t emitted = 0;
  for (const std::string& name : names_) {
    if (not_interfaces_.contains(name)) continue;
    auto it = interfaces_.find(name);
    if (it == interfaces_.end()) {
      bool keep_open = kept_open < kMaxKeptOpenInterfaces;
      kept_open += keep_open ? 1 : 0;
      it = interfaces_.emplace(name, Open(name, keep_open)).first;
    }
    Outcome outcome = CollectInterface(it->second, sink);
    if (outcome == Outcome::kEmitted) {
      ++emitted;
      continue;
    }
    if (it->second.keep_open) --kept_open;
    interfaces_.erase(it);
    if (outcome == Outcome::kNotInterface) not_interfaces_.insert(name);
    if (outcome == Outcome::kReused) {
      // The name now belongs to a new interface: read it right away with fresh descriptors.
      Interface fresh = Open(name, kept_open < kMaxKeptOpenInterfaces);
      kept_open += fresh.keep_open ? 1 : 0;
      if (CollectInterface(fresh, sink) == Outcome::kEmitted) {
        interfaces_.emplace(name, std::move(fresh));
        ++emitted;
      } else if (fresh.keep_open) {
        --kept_open;
      }
    }
  }

  if (link_events_ != nullptr) {
    sink.Add(kListenerUp, {}, link_events_->listening() ? 1.0 : 0.0);
    sink.Add(kListenerOverruns, {}, static_cast<double>(link_events_->overruns()));
    auto counts = link_events_->CountsByNetdev();
    for (const auto& [name, itf] : interfaces_) {
      auto c = counts.find(name);
      const sys::LinkEventCounts zero;
      const auto& n = c == counts.end() ? zero : c->second;
      sink.Add(kLinkEvents, {{"netdev", name}, {"transition", "up"}}, static_cast<double>(n.up));
      sink.Add(kLinkEvents, {{"netdev", name}, {"transition", "down"}},
               static_cast<double>(n.down));
      if (c != counts.end()) {
        sink.Add(kLastLinkEvent, {{"netdev", name}},
                 std::chrono::duration<double>(n.last_event.time_since_epoch()).count());
      }
    }
  }
  transitions_.EndCollection();
  if (emitted == 0 && sink.error_count() == 0) {
    return Status(StatusCode::kNoData, "no network interface matched in " +
                                           sysfs_.Path("class/net"));
  }
  return Status::Ok();
}

}  // namespace

std::span<const MetricDesc> NetdevMetrics() { return kAllMetrics; }
std::span<const CollectorOptionSpec> NetdevOptions() { return kOptions; }

Result<std::unique_ptr<Collector>> NewNetdevCollector(const CollectorContext& context) {
  const CollectorOptionReader options("netdev", context.options, kOptions);
  auto filter = options.Devices();
  if (!filter) return Error(filter.error());
  return std::unique_ptr<Collector>(new NetdevCollector(context, std::move(*filter)));
}

}  // namespace fabricwatch::netdev
