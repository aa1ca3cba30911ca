#include "collectors/optics/optics.h"

#include <linux/capability.h>

#include <array>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

#include "collectors/core/collector_options.h"
#include "collectors/core/device_reads.h"
#include "collectors/core/device_filter.h"
#include "base/duration.h"
#include "collectors/core/transition_log.h"
#include "base/value_parse.h"
#include "collectors/optics/module_eeprom.h"
#include "collectors/optics/optics_metrics.h"
#include "collectors/ethtool_source/ethtool.h"
#include "collectors/sys/listing_watch.h"
#include "collectors/ethtool_source/netdevs.h"
#include "collectors/sys/sysfs.h"

namespace fabricwatch::optics {
namespace {

constexpr std::array<std::string_view, 16> kLanes = {"1",  "2",  "3",  "4",  "5",  "6",
                                                      "7",  "8",  "9",  "10", "11", "12",
                                                      "13", "14", "15", "16"};

// Decode warnings remembered as logged; past this (warnings whose text keeps changing) they are
// forgotten and logged again.
constexpr size_t kMaxWarningsLogged = 4096;

// How often the hwmon channels are looked for again when no listing changed.
constexpr std::chrono::seconds kHwmonRediscovery{60};

constexpr MetricDesc kWavelength{"fabric_optics_module_wavelength_meters",
                                 "Nominal laser wavelength the module states.",
                                 MetricKind::kGauge,
                                 kNetdev,
                                 {},
                                 {ExportRule::kOff, "static, from the module's memory"}};
constexpr MetricDesc kVoltage{"fabric_optics_module_supply_voltage_volts",
                              "Module supply voltage (Vcc) from its digital diagnostics.",
                              MetricKind::kGauge, kNetdev};
constexpr MetricDesc kTxPower{"fabric_optics_lane_tx_power_watts",
                              "Transmitted optical power per lane (lanes counted from 1).",
                              MetricKind::kGauge, kLane};
constexpr MetricDesc kTxLos{"fabric_optics_lane_tx_los",
                            "1 if the lane reports loss of transmit signal.",
                            MetricKind::kGauge,
                            kLane,
                            {},
                            {ExportRule::kNonZero, "a fault flag per lane, 0 on a healthy module"}};
constexpr MetricDesc kTxFault{
    "fabric_optics_lane_tx_fault",
    "1 if the lane reports a Tx fault.",
    MetricKind::kGauge,
    kLane,
    {},
    {ExportRule::kNonZero, "a fault flag per lane, 0 on a healthy module"}};
constexpr MetricDesc kVoltageThreshold{
    "fabric_optics_module_supply_voltage_threshold_volts",
    "The module's own supply-voltage alarm and warning thresholds.",
    MetricKind::kGauge,
    kThreshold,
    {},
    {ExportRule::kOff, "static module thresholds; optics alarm flags and thermal_drift use them"}};
constexpr MetricDesc kTxPowerThreshold{
    "fabric_optics_tx_power_threshold_watts",
    "The module's own transmit-power alarm and warning thresholds.",
    MetricKind::kGauge,
    kThreshold,
    {},
    {ExportRule::kOff,
     "static module thresholds; the module's own alarm flags say when they are crossed"}};
constexpr MetricDesc kAlarm{
    "fabric_optics_alarm_flag",
    "1 while the module raises an alarm or warning flag: quantity (temperature, "
    "supply_voltage, tx_bias, tx_power, rx_power), threshold (high_alarm, low_alarm, "
    "high_warning, low_warning), lane (empty for module-level quantities).",
    MetricKind::kGauge,
    {"netdev", "lane", "quantity", "threshold"},
    {},
    {ExportRule::kNonZero,
     "56 flags per module (448 on hgx-roce), all 0 on a healthy module; a raised flag is exported "
     "from then on"}};
constexpr MetricDesc kWarnings{
    "fabric_optics_module_decode_warnings",
    "Problems found decoding the module's EEPROM (missing pages, implausible values that were "
    "dropped, a truncated image); details in the agent's log.",
    MetricKind::kGauge,
    kNetdev,
    {},
    {ExportRule::kNonZero, "0 for a module whose memory decodes cleanly"}};
constexpr MetricDesc kHwmonTemperature{
    "fabric_optics_hwmon_temperature_celsius",
    "Temperature the NIC driver publishes under hwmon (mlx5, kernel 6.6+): sensor \"asic\" or "
    "\"module<N>\" (the transceiver of the function's port), for IB and Ethernet ports alike.",
    MetricKind::kGauge, {"pci_address", "rdma_device", "sensor"}};
constexpr MetricDesc kHwmonCritical{
    "fabric_optics_hwmon_critical_celsius",
    "The sensor's critical temperature (temp*_crit).",
    MetricKind::kGauge,
    {"pci_address", "rdma_device", "sensor"},
    {},
    {ExportRule::kOff, "a static threshold; thermal_drift uses it"}};
constexpr MetricDesc kHwmonHighest{
    "fabric_optics_hwmon_highest_celsius",
    "The highest temperature the sensor has recorded (temp*_highest).",
    MetricKind::kGauge,
    {"pci_address", "rdma_device", "sensor"},
    {},
    {ExportRule::kOff, "a peak since boot; fabric_optics_hwmon_temperature_celsius is the value"}};

constexpr MetricDesc kAllMetrics[] = {
    kInfo,          kPresent,          kLastRead,      kWavelength,       kTemperature,
    kVoltage,       kBias,             kTxPower,       kRxPower,          kRxLos,
    kTxLos,         kTxFault,          kTemperatureThreshold, kVoltageThreshold,
    kBiasThreshold, kTxPowerThreshold, kRxPowerThreshold,     kAlarm,   kWarnings,
    kHwmonTemperature, kHwmonCritical, kHwmonHighest};

constexpr CollectorOptionSpec kOptions[] = {
    {"device-include",
     "Regular expression of netdevs whose modules are read. Default: every netdev with a PCI "
     "parent or an RDMA device.",
     ""},
    {"device-exclude", "Regular expression of netdevs whose modules are not read.", ""},
    {"module-interval",
     "How often each module's EEPROM is read again (reads are spread over the collector's "
     "runs).",
     "30s"},
};

constexpr std::string_view kThresholdNames[] = {"high_alarm", "low_alarm", "high_warning",
                                                "low_warning"};

class OpticsCollector final : public Collector {
 public:
  OpticsCollector(const CollectorContext& context, DeviceFilter filter, bool explicit_include,
                  std::chrono::milliseconds module_interval)
      : sysfs_(context.sysfs),
        clock_(context.clock),
        source_(context.ethtool),
        logger_(context.logger),
        transitions_(context.logger),
        filter_(std::move(filter)),
        explicit_include_(explicit_include),
        module_interval_(module_interval),
        collector_interval_(context.interval) {}

  // One sample, and the device reads it made (collectors/core/device_reads.h).
  Status Collect(MetricSink& sink) override {
    reads_.Reset();
    Status status = CollectModules(sink);
    reads_.Emit("optics", sink);
    return status;
  }

 private:
  Status CollectModules(MetricSink& sink);
  struct Module {
    std::chrono::system_clock::time_point last_attempt{};
    std::chrono::system_clock::time_point last_read{};
    // The last decoded reading, valid while `has_reading`; kept when invalid so that the next
    // decode reuses its strings and vectors.
    ModuleReading reading;
    bool has_reading = false;
    bool absent = false;       // the cage is empty
    bool unsupported = false;  // the driver cannot read modules: asked again next interval
    StatusCode quiet_code = StatusCode::kOk;  // the expected failure last logged (kNoData, ...)
  };

  Result<std::vector<std::string>> Netdevs();
  // Brings netdevs_ up to date: chosen again (Netdevs()) only when a listing changed.
  Status RefreshNetdevs();
  void Read(const std::string& netdev, Module& module, MetricSink& sink);
  void Emit(const std::string& netdev, const Module& module, MetricSink& sink);
  void CollectHwmon(MetricSink& sink);
  // Finds the mlx5 hwmon channels again; CollectHwmon() does it when a listing it depends on
  // changed or every kHwmonRediscovery.
  void DiscoverHwmon();

  const sys::SysFs& sysfs_;
  const Clock& clock_;
  sys::EthtoolSource* source_;
  std::shared_ptr<spdlog::logger> logger_;
  TransitionLog transitions_;
  DeviceFilter filter_;
  bool explicit_include_;
  std::chrono::milliseconds module_interval_;
  std::chrono::milliseconds collector_interval_;
  std::map<std::string, Module> modules_;

  // One mlx5 hwmon temperature channel (temp<N>_*), with its files kept open.
  struct HwmonChannel {
    std::string pci_address, rdma_device, sensor;
    std::vector<std::pair<const MetricDesc*, sys::AttributeFile>> files;  // _input, _crit, _highest
  };
  std::vector<HwmonChannel> hwmon_channels_;
  // class/hwmon and class/infiniband, which the hwmon channels are found from.
  sys::ListingWatch hwmon_listings_{2, kHwmonRediscovery};
  // The netdevs whose modules are read, chosen again when netdev_listings_ change.
  sys::ListingWatch netdev_listings_{2, kHwmonRediscovery};
  std::vector<std::string> netdevs_;
  std::vector<std::string> due_;  // this run's overdue modules (kept: no allocation per run)
  std::vector<uint8_t> image_;    // the module image being decoded (kept: read into in place)
  // Decode warnings already logged, by hash of netdev and message: a module that keeps the same
  // warning is logged once, and checking costs no string.
  std::unordered_set<size_t> warnings_logged_;
  DeviceReadCounts reads_;  // this sample's
};

Result<std::vector<std::string>> OpticsCollector::Netdevs() {
  auto selected = sys::FabricNetdevCandidates(sysfs_, *source_, explicit_include_);
  if (!selected) return selected;
  std::erase_if(*selected, [&](const std::string& n) { return !filter_.Accepts(n); });
  return selected;
}

Status OpticsCollector::RefreshNetdevs() {
  if (Status status = sys::ListNetdevSources(sysfs_, source_, netdev_listings_); !status.ok()) {
    return status;
  }
  const auto now = clock_.Now();
  if (netdev_listings_.Unchanged(now)) return Status::Ok();
  auto netdevs = Netdevs();
  if (!netdevs) return netdevs.error();
  netdevs_ = std::move(*netdevs);
  netdev_listings_.MarkChosen(now);
  return Status::Ok();
}

void OpticsCollector::Read(const std::string& netdev, Module& module, MetricSink& sink) {
  module.last_attempt = clock_.Now();
  const Status status = source_->ReadModuleEeprom(netdev, image_);
  // The half pages read over the module's bus; a failed read asked for the lower page, unless
  // the driver cannot read modules at all or the netdev is gone.
  const bool reached =
      status.code() != StatusCode::kUnimplemented && status.code() != StatusCode::kNotFound;
  reads_.Add(DeviceRead::kModuleEepromPage,
             status.ok() ? ModuleHalfPagesRead(image_) : (reached ? 1 : 0));
  if (!status.ok()) {
    module.has_reading = false;
    if (status.code() == StatusCode::kNoData || status.code() == StatusCode::kUnimplemented ||
        status.code() == StatusCode::kNotFound) {
      module.absent = status.code() == StatusCode::kNoData;
      module.unsupported = !module.absent;
      // Logged when the port enters this state, not on every probe of an empty cage.
      if (std::exchange(module.quiet_code, status.code()) != status.code()) {
        logger_->debug("{}: no module EEPROM: {}", netdev, status.message());
      }
      return;
    }
    // Anything else (EPERM without CAP_NET_ADMIN, an I2C error): counted, last values dropped
    // rather than re-exported as if fresh.
    module.quiet_code = StatusCode::kOk;
    sink.RecordError(status);
    transitions_.Failed(netdev + "/module-eeprom", status);
    return;
  }
  module.quiet_code = StatusCode::kOk;
  // Decoded into the module's kept reading: while the module's strings fit what they held
  // before, a read allocates nothing.
  if (Status status = DecodeModuleImage(image_, module.reading); !status.ok()) {
    module.has_reading = false;
    const Status named = status.WithContext(netdev + " module EEPROM");
    sink.RecordError(named);
    transitions_.Failed(netdev + "/decode", named);
    return;
  }
  for (const Status& warning : module.reading.warnings) {
    const size_t key =
        std::hash<std::string_view>{}(netdev)*31 + std::hash<std::string_view>{}(warning.message());
    if (warnings_logged_.size() >= kMaxWarningsLogged) warnings_logged_.clear();
    if (warnings_logged_.insert(key).second) {
      logger_->info("{} module: {}", netdev, warning.message());
    }
  }
  module.absent = false;
  module.unsupported = false;
  module.has_reading = true;
  module.last_read = module.last_attempt;
}

void OpticsCollector::Emit(const std::string& netdev, const Module& module, MetricSink& sink) {
  const LabelPair n{"netdev", netdev};
  if (module.absent) {
    sink.Add(kPresent, {n}, 0);
    return;
  }
  if (!module.has_reading) return;
  const ModuleReading& r = module.reading;
  sink.Add(kPresent, {n}, 1);
  sink.Add(kLastRead, {n}, std::chrono::duration<double>(module.last_read.time_since_epoch()).count());
  const std::string_view connector = r.connector ? ConnectorName(*r.connector) : "";
  char wavelength[32] = "";
  if (r.wavelength_nm) snprintf(wavelength, sizeof(wavelength), "%g", *r.wavelength_nm);
  sink.AddInfo(kInfo, {n,
                       {"identifier", r.identifier_name},
                       {"memory_map", ModuleTypeName(r.type)},
                       {"vendor", r.vendor},
                       {"part_number", r.part_number},
                       {"serial", r.serial},
                       {"revision", r.revision},
                       {"date_code", r.date_code},
                       {"connector", connector},
                       {"media", r.media},
                       {"wavelength_nm", wavelength}});
  sink.Add(kWarnings, {n}, static_cast<double>(r.warnings.size()));
  if (r.wavelength_nm) sink.Add(kWavelength, {n}, *r.wavelength_nm * 1e-9);
  if (r.temperature_celsius) sink.Add(kTemperature, {n}, *r.temperature_celsius);
  if (r.supply_voltage_volts) sink.Add(kVoltage, {n}, *r.supply_voltage_volts);

  auto flags = [&](std::string_view lane, std::string_view quantity,
                   const std::optional<Flags>& f) {
    if (!f) return;
    const bool values[] = {f->high_alarm, f->low_alarm, f->high_warning, f->low_warning};
    for (size_t i = 0; i < 4; ++i) {
      sink.Add(kAlarm, {n, {"lane", lane}, {"quantity", quantity}, {"threshold", kThresholdNames[i]}},
               values[i] ? 1 : 0);
    }
  };
  flags("", "temperature", r.temperature_flags);
  flags("", "supply_voltage", r.supply_voltage_flags);
  for (size_t i = 0; i < r.lanes.size() && i < kLanes.size(); ++i) {
    const LaneReading& lane = r.lanes[i];
    const LabelPair l{"lane", kLanes[i]};
    if (lane.tx_bias_amperes) sink.Add(kBias, {n, l}, *lane.tx_bias_amperes);
    if (lane.tx_power_watts) sink.Add(kTxPower, {n, l}, *lane.tx_power_watts);
    if (lane.rx_power_watts) sink.Add(kRxPower, {n, l}, *lane.rx_power_watts);
    if (lane.rx_los) sink.Add(kRxLos, {n, l}, *lane.rx_los ? 1 : 0);
    if (lane.tx_los) sink.Add(kTxLos, {n, l}, *lane.tx_los ? 1 : 0);
    if (lane.tx_fault) sink.Add(kTxFault, {n, l}, *lane.tx_fault ? 1 : 0);
    flags(kLanes[i], "tx_bias", lane.tx_bias_flags);
    flags(kLanes[i], "tx_power", lane.tx_power_flags);
    flags(kLanes[i], "rx_power", lane.rx_power_flags);
  }
  auto thresholds = [&](const MetricDesc& desc, const std::optional<Thresholds>& t) {
    if (!t) return;
    const double values[] = {t->high_alarm, t->low_alarm, t->high_warning, t->low_warning};
    for (size_t i = 0; i < 4; ++i) sink.Add(desc, {n, {"threshold", kThresholdNames[i]}}, values[i]);
  };
  thresholds(kTemperatureThreshold, r.thresholds.temperature_celsius);
  thresholds(kVoltageThreshold, r.thresholds.supply_voltage_volts);
  thresholds(kBiasThreshold, r.thresholds.tx_bias_amperes);
  thresholds(kTxPowerThreshold, r.thresholds.tx_power_watts);
  thresholds(kRxPowerThreshold, r.thresholds.rx_power_watts);
}

void OpticsCollector::DiscoverHwmon() {
  hwmon_channels_.clear();
  // PCI function -> RDMA device, to name the HCA a sensor belongs to.
  std::map<std::string, std::string> rdma_of_pci;
  for (const std::string& device : hwmon_listings_.listing(1)) {
    auto pci = sysfs_.ReadLinkBasename("class/infiniband/" + device + "/device");
    if (pci) rdma_of_pci.try_emplace(*pci, device);
  }
  for (const std::string& hwmon : hwmon_listings_.listing(0)) {
    const std::string dir = "class/hwmon/" + hwmon;
    auto name = sysfs_.ReadString(dir + "/name");
    if (!name || *name != "mlx5") continue;  // the driver names its hwmon device (mlx5 hwmon.c)
    auto pci = sysfs_.ReadLinkBasename(dir + "/device");
    if (!pci || !IsPciAddress(*pci)) continue;
    auto rdma = rdma_of_pci.find(*pci);
    auto files = sysfs_.ListDir(dir);
    if (!files) continue;
    for (const std::string& file : *files) {
      // temp<N>_label names the channel; temp<N>_{input,crit,highest} hold millidegrees.
      if (!file.starts_with("temp") || !file.ends_with("_label")) continue;
      const std::string channel = file.substr(0, file.size() - 6);
      auto label = sysfs_.ReadString(dir + "/" + file);
      if (!label) continue;
      HwmonChannel& found = hwmon_channels_.emplace_back();
      found.pci_address = *pci;
      found.rdma_device = rdma == rdma_of_pci.end() ? std::string() : rdma->second;
      for (char c : *label) {
        found.sensor += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      }
      for (auto [suffix, desc] : {std::pair{"_input", &kHwmonTemperature},
                                  {"_crit", &kHwmonCritical}, {"_highest", &kHwmonHighest}}) {
        found.files.emplace_back(desc, sys::AttributeFile(sysfs_, dir + "/" + channel + suffix));
      }
    }
  }
}

void OpticsCollector::CollectHwmon(MetricSink& sink) {
  for (auto [i, dir] : {std::pair{0, "class/hwmon"}, {1, "class/infiniband"}}) {
    std::vector<std::string>& listing = hwmon_listings_.listing(i);
    if (!sysfs_.ListDirInto(dir, listing).ok()) listing.clear();
  }
  const auto now = clock_.Now();
  if (!hwmon_listings_.Unchanged(now)) {
    DiscoverHwmon();
    hwmon_listings_.MarkChosen(now);
  }
  for (HwmonChannel& channel : hwmon_channels_) {
    const std::array<LabelPair, 3> labels = {LabelPair{"pci_address", channel.pci_address},
                                             LabelPair{"rdma_device", channel.rdma_device},
                                             LabelPair{"sensor", channel.sensor}};
    for (auto& [desc, file] : channel.files) {
      // An absent file (no _highest on older kernels) is remembered by AttributeFile: quiet.
      if (file.known_absent()) continue;
      reads_.Add(DeviceRead::kHwmonFile);  // mlx5 hwmon.c: an MTMP register read per file
      auto value = file.ReadInt64();
      if (value) {
        sink.Add(*desc, labels, static_cast<double>(*value) / 1000.0);
      } else if (value.error().sys_errno() != ENOENT) {
        sink.RecordError(value.error());
        transitions_.Failed(file.path(), value.error());
      }
    }
  }
}

Status OpticsCollector::CollectModules(MetricSink& sink) {
  const size_t errors_before = sink.error_count();
  if (source_ != nullptr) {
    if (Status status = RefreshNetdevs(); status.ok()) {
      std::erase_if(modules_, [&](const auto& entry) {
        return std::find(netdevs_.begin(), netdevs_.end(), entry.first) == netdevs_.end();
      });
      // Spread the reads: at most a share of the modules per run, the most overdue first.
      const auto now = clock_.Now();
      std::vector<std::string>& due = due_;
      due.clear();
      for (const std::string& netdev : netdevs_) {
        Module& module = modules_[netdev];
        if (module.last_attempt == std::chrono::system_clock::time_point{} ||
            now - module.last_attempt >= module_interval_) {
          due.push_back(netdev);
        }
      }
      std::sort(due.begin(), due.end(), [&](const std::string& a, const std::string& b) {
        return modules_[a].last_attempt < modules_[b].last_attempt;
      });
      const size_t runs_per_interval = std::max<size_t>(
          1, static_cast<size_t>(module_interval_ / std::max(collector_interval_,
                                                              std::chrono::milliseconds(1))));
      const size_t per_run =
          std::max<size_t>(1, (netdevs_.size() + runs_per_interval - 1) / runs_per_interval);
      const size_t read = std::min(due.size(), per_run);
      for (size_t i = 0; i < read; ++i) Read(due[i], modules_[due[i]], sink);
      for (const std::string& netdev : netdevs_) {
        // A module not read in this run keeps its failure (if any) until it is read again: a
        // bad EEPROM is one warning, not a warning and a false "recovered" per module interval.
        if (std::find(due.begin(), due.begin() + static_cast<std::ptrdiff_t>(read), netdev) ==
            due.begin() + static_cast<std::ptrdiff_t>(read)) {
          transitions_.Keep(netdev);
        }
        Emit(netdev, modules_[netdev], sink);
      }
    } else if (status.code() != StatusCode::kNotFound) {
      sink.RecordError(status);
    }
  }
  CollectHwmon(sink);
  transitions_.EndCollection();
  if (sink.sample_count() == 0 && sink.error_count() == errors_before) {
    return Status(StatusCode::kNoData, "no transceiver module and no mlx5 hwmon sensor found");
  }
  return Status::Ok();
}

}  // namespace

std::span<const MetricDesc> OpticsMetrics() { return kAllMetrics; }
std::span<const CollectorOptionSpec> OpticsOptions() { return kOptions; }

std::span<const PrivilegeNeed> OpticsPrivileges() {
  // net/ethtool/ioctl.c lets anyone run the GET commands it lists (GSTATS, GSTRINGS, GTUNABLE,
  // ...); ETHTOOL_GMODULEINFO/GMODULEEEPROM are not among them, and ETHTOOL_MSG_MODULE_EEPROM_GET
  // is a GENL_UNS_ADMIN_PERM operation (net/ethtool/netlink.c): both need CAP_NET_ADMIN in the
  // network namespace's user namespace (docs/reference.md §3). Only when the kernel is read: the
  // host's own netdevs, no --path.ethtool replay.
  static constexpr PrivilegeNeed kNeeds[] = {
      {.capability = "CAP_NET_ADMIN",
       .number = CAP_NET_ADMIN,
       .feature = "module_eeprom",
       .collector = kCollector,
       .loses = "transceiver identity, power, temperature and alarm metrics from the module "
                "EEPROM (fabric_optics_* except the mlx5 hwmon temperature)",
       .in_use = [](const Roots& roots) { return roots.ethtool.empty() && roots.host; }}};
  return kNeeds;
}

Result<std::unique_ptr<Collector>> NewOpticsCollector(const CollectorContext& context) {
  const CollectorOptionReader options("optics", context.options, kOptions);
  auto filter = options.Devices();
  if (!filter) return Error(filter.error());
  auto interval = options.Duration("module-interval");
  if (!interval) return Error(interval.error());
  return std::unique_ptr<Collector>(
      new OpticsCollector(context, std::move(*filter), options.IsSet("device-include"), *interval));
}

}  // namespace fabricwatch::optics
