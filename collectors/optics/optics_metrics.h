#pragma once
// The optics collector's families that other parts read (detectors, through their MetricInput
// declarations): the collector's contract, defined once here and used by both sides.

#include "collectors/core/collector_family.h"
#include "base/metric_sink.h"

namespace fabricwatch::optics {

// The collector that exports the families below: its name in the collector registry
// (collectors/registry.cc), in --collector.optics and in Snapshot::collector.
inline constexpr std::string_view kCollector = "optics";
// Its families carry it in their type (collectors/core/collector_family.h).
using Family = FamilyOf<kCollector>;

inline constexpr LabelNames kNetdev{"netdev"};
inline constexpr LabelNames kLane{"netdev", "lane"};
inline constexpr LabelNames kThreshold{"netdev", "threshold"};

inline constexpr Family kInfo{
    "fabric_optics_info",
    "Transceiver identity from its EEPROM: SFF-8024 identifier, memory map (sff8472, sff8636, "
    "cmis), vendor, part number, serial, revision, date code, connector, media and nominal "
    "wavelength. A module swap shows as a new series (new serial) while the old one disappears. "
    "Constant 1.",
    MetricKind::kInfo,
    {"netdev", "identifier", "memory_map", "vendor", "part_number", "serial", "revision",
     "date_code", "connector", "media", "wavelength_nm"}};
inline constexpr Family kPresent{
    "fabric_optics_module_present",
    "1 if a module answered in the port's cage, 0 if the cage is empty (the driver said so).",
    MetricKind::kGauge, kNetdev};
inline constexpr Family kLastRead{
    "fabric_optics_last_read_timestamp_seconds",
    "Unix time of the last successful read of the module's EEPROM; values are re-exported "
    "between reads (every module-interval).",
    MetricKind::kGauge, kNetdev};
inline constexpr Family kTemperature{"fabric_optics_module_temperature_celsius",
                                     "Module temperature from its digital diagnostics.",
                                     MetricKind::kGauge, kNetdev};
inline constexpr Family kBias{"fabric_optics_lane_tx_bias_amperes",
                              "Laser bias current per lane (lanes counted from 1).",
                              MetricKind::kGauge, kLane};
inline constexpr Family kRxPower{
    "fabric_optics_lane_rx_power_watts",
    "Received optical power per lane (lanes counted from 1); average or OMA as the module "
    "measures it. Dashboards show dBm = 10*log10(watts*1000).",
    MetricKind::kGauge, kLane};
inline constexpr Family kRxLos{
    "fabric_optics_lane_rx_los",
    "1 if the lane reports loss of received signal.",
    MetricKind::kGauge,
    kLane,
    {},
    {ExportRule::kNonZero, "a fault flag per lane, 0 on a healthy module"}};
inline constexpr Family kTemperatureThreshold{
    "fabric_optics_module_temperature_threshold_celsius",
    "The module's own temperature alarm and warning thresholds (threshold=high_alarm, "
    "low_alarm, high_warning, low_warning).",
    MetricKind::kGauge,
    kThreshold,
    {},
    {ExportRule::kAlarmThresholds,
     "the recording rules measure the margin to the high alarm; the warning levels show in the "
     "module's warning flags"}};
inline constexpr Family kBiasThreshold{
    "fabric_optics_tx_bias_threshold_amperes",
    "The module's own laser-bias alarm and warning thresholds.",
    MetricKind::kGauge,
    kThreshold,
    {},
    {ExportRule::kOff,
     "static module thresholds; the module's own alarm flags say when they are crossed"}};
inline constexpr Family kRxPowerThreshold{
    "fabric_optics_rx_power_threshold_watts",
    "The module's own receive-power alarm and warning thresholds.",
    MetricKind::kGauge,
    kThreshold,
    {},
    {ExportRule::kAlarmThresholds,
     "the recording rules measure the margin to the low alarm; the warning levels show in the "
     "module's warning flags"}};
}  // namespace fabricwatch::optics
