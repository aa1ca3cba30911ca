#include "collectors/optics/cmis.h"

#include <string>

namespace fabricwatch::optics {
namespace {

// CMIS 5.2 Table 8-4..8-19 (lower page).
constexpr size_t kRevision = 1;
constexpr size_t kMemoryModel = 2;  // bit 7: 1 = flat memory (lower page + page 00h only)
constexpr size_t kModuleState = 3;  // bits 3-1
constexpr size_t kModuleFlags = 9;  // Table 8-8
constexpr size_t kTemperature = 14;
constexpr size_t kVcc = 16;
constexpr size_t kMediaType = 85;  // Table 8-19 / SFF-8024 Table 4-5
constexpr size_t kApp1LaneCounts = 88;  // application 1: b7-4 host lanes, b3-0 media lanes

// Page 00h (Tables 8-24..8-28).
constexpr size_t kVendorName = 129;
constexpr size_t kVendorOui = 145;
constexpr size_t kPartNumber = 148;
constexpr size_t kRevisionField = 164;
constexpr size_t kSerial = 166;
constexpr size_t kDateCode = 182;
constexpr size_t kConnector = 203;

// Page 01h (Tables 8-42/8-43).
constexpr size_t kNominalWavelength = 138;  // 138-139, units of 0.05 nm
constexpr size_t kModuleMonitors = 159;     // b0 temperature, b1 Vcc
constexpr size_t kLaneMonitors = 160;       // b0 Tx bias, b1 Tx power, b2 Rx power, b4-3 scale

// Page 02h (Table 8-61).
constexpr size_t kTempThresholds = 128;
constexpr size_t kVccThresholds = 136;
constexpr size_t kTxPowerThresholds = 176;
constexpr size_t kBiasThresholds = 184;
constexpr size_t kRxPowerThresholds = 192;

// Page 11h (Tables 8-77..8-80), bank 0: bit n of a flag byte = lane n + 1.
constexpr size_t kTxFault = 135;
constexpr size_t kTxLos = 136;
constexpr size_t kTxPowerFlags = 139;  // 139-142 high alarm, low alarm, high warning, low warning
constexpr size_t kBiasFlags = 143;     // 143-146
constexpr size_t kRxLos = 147;
constexpr size_t kRxPowerFlags = 149;  // 149-152
constexpr size_t kTxPowerMonitor = 154;  // 154-169, 2 bytes per lane
constexpr size_t kBiasMonitor = 170;     // 170-185
constexpr size_t kRxPowerMonitor = 186;  // 186-201

constexpr int kBankLanes = 8;

std::string_view ModuleState(uint8_t byte3) {
  switch ((byte3 >> 1) & 0x07) {
    case 1: return "low_power";
    case 2: return "power_up";
    case 3: return "ready";
    case 4: return "power_down";
    case 5: return "fault";
    default: return "reserved";
  }
}

// SFF-8024 Table 4-5 module media type (CMIS byte 85).
std::string_view Media(uint8_t media_type) {
  switch (media_type) {
    case 0x01: return "mmf";
    case 0x02: return "smf";
    case 0x03: return "passive_copper";
    case 0x04: return "active_cable";
    case 0x05: return "base_t";
    default: return "";
  }
}

Flags LaneFlags(const PageView& page11, size_t first, int lane) {
  return Flags{(page11.U8(first) >> lane & 1) != 0, (page11.U8(first + 1) >> lane & 1) != 0,
               (page11.U8(first + 2) >> lane & 1) != 0, (page11.U8(first + 3) >> lane & 1) != 0};
}

std::string MissingPage(const char* name, const PageView& page, int image_offset) {
  return std::string("paged CMIS module but page ") + name + " (image bytes " +
         std::to_string(image_offset) + "-" + std::to_string(image_offset + 127) + ") is " +
         (page.present() ? "truncated" : "missing");
}

// What page 01h advertises (CMIS 5.2 Table 8-42/8-43); a flat-memory module has no page 01h.
struct CmisSupport {
  bool temperature = false, vcc = false;
  bool bias = false, tx_power = false, rx_power = false;
  int bias_scale = 1;  // Tx bias multiplier on the 2 µA LSB
};

CmisSupport ReadAdvertisement(const PageView& page01, ModuleReading& r) {
  CmisSupport support;
  const bool passive_copper = r.media == "passive_copper";
  if (r.flat_memory) {
    // No page 01h to advertise anything: the lower-page module monitors are read unless the
    // module is a passive copper cable (which has no sensors); no lane monitors exist.
    support.temperature = support.vcc = !passive_copper;
    return support;
  }
  if (!page01.Has(128, 128)) {
    AddWarning(r, StatusCode::kInvalidArgument,
               MissingPage("01h", page01, 256) +
                   "; monitor support and wavelength unknown, "
                   "no lane data");
    return support;
  }
  uint8_t module_monitors = page01.U8(kModuleMonitors);
  uint8_t lane_monitors = page01.U8(kLaneMonitors);
  support.temperature = (module_monitors & 0x01) != 0;
  support.vcc = (module_monitors & 0x02) != 0;
  support.bias = (lane_monitors & 0x01) != 0;
  support.tx_power = (lane_monitors & 0x02) != 0;
  support.rx_power = (lane_monitors & 0x04) != 0;
  switch ((lane_monitors >> 3) & 0x03) {
    case 0:
      support.bias_scale = 1;
      break;
    case 1:
      support.bias_scale = 2;
      break;
    case 2:
      support.bias_scale = 4;
      break;
    default:
      support.bias_scale = 1;
      if (support.bias) {
        AddWarning(r, StatusCode::kInvalidArgument,
                   "page 01h byte 160 bits 4-3 = 11b (reserved Tx bias multiplier); tx bias "
                   "omitted");
        support.bias = false;
      }
  }
  if (support.bias) r.tx_bias_multiplier = static_cast<uint8_t>(support.bias_scale);
  if ((r.media == "mmf" || r.media == "smf") && page01.U16(kNominalWavelength) != 0) {
    r.wavelength_nm = page01.U16(kNominalWavelength) * 0.05;
  }
  return support;
}

// Page 02h: the module's alarm and warning thresholds of what it monitors (Table 8-61).
void ReadThresholdPage(const PageView& page02, const CmisSupport& support, ModuleReading& r) {
  if (!page02.Has(128, 128)) {
    AddWarning(r, StatusCode::kInvalidArgument,
               MissingPage("02h", page02, 384) + "; no thresholds");
    return;
  }
  const double bias_lsb = support.bias_scale;  // multiplier on the 2 µA LSB
  const auto set = [&](bool supported, size_t address, auto convert) -> std::optional<Thresholds> {
    if (!supported || page02.AllEqual(address, 8, 0)) return std::nullopt;
    return ReadThresholds(page02, address, convert);
  };
  r.thresholds.temperature_celsius = set(support.temperature, kTempThresholds, [](uint16_t v) {
    return TemperatureCelsius(static_cast<int16_t>(v));
  });
  r.thresholds.supply_voltage_volts =
      set(support.vcc, kVccThresholds, [](uint16_t v) { return VoltageVolts(v); });
  r.thresholds.tx_power_watts =
      set(support.tx_power, kTxPowerThresholds, [](uint16_t v) { return PowerWatts(v); });
  r.thresholds.tx_bias_amperes =
      set(support.bias, kBiasThresholds, [&](uint16_t v) { return BiasAmperes(v * bias_lsb); });
  r.thresholds.rx_power_watts =
      set(support.rx_power, kRxPowerThresholds, [](uint16_t v) { return PowerWatts(v); });
}

// Page 11h: per-lane flags and monitors of the first `lanes` lanes (Tables 8-77..8-80).
void ReadLanePage(const PageView& page11, const CmisSupport& support, int lanes, ModuleReading& r) {
  const bool any_lane_monitor = support.bias || support.tx_power || support.rx_power;
  if (!page11.Has(128, 128)) {
    AddWarning(r, StatusCode::kInvalidArgument, MissingPage("11h", page11, 640) + "; no lane data");
    return;
  }
  if (!any_lane_monitor) return;
  const double bias_lsb = support.bias_scale;
  for (int lane = 0; lane < lanes; ++lane) {
    LaneReading l;
    const uint8_t bit = static_cast<uint8_t>(1u << lane);
    l.tx_fault = (page11.U8(kTxFault) & bit) != 0;
    l.tx_los = (page11.U8(kTxLos) & bit) != 0;
    l.rx_los = (page11.U8(kRxLos) & bit) != 0;
    if (support.tx_power) {
      l.tx_power_watts = PowerWatts(page11.U16(kTxPowerMonitor + 2 * lane));
      l.tx_power_flags = LaneFlags(page11, kTxPowerFlags, lane);
    }
    if (support.bias) {
      l.tx_bias_amperes = BiasAmperes(page11.U16(kBiasMonitor + 2 * lane) * bias_lsb);
      l.tx_bias_flags = LaneFlags(page11, kBiasFlags, lane);
    }
    if (support.rx_power) {
      l.rx_power_watts = PowerWatts(page11.U16(kRxPowerMonitor + 2 * lane));
      l.rx_power_flags = LaneFlags(page11, kRxPowerFlags, lane);
    }
    r.lanes.push_back(l);
  }
}

}  // namespace

// CMIS 5.2 Tables 8-4, 8-8, 8-10, 8-19 (lower page), 8-24..8-28 (page 00h), 8-42/8-43 (page 01h
// advertisement), 8-61 (page 02h thresholds), 8-77..8-80 (page 11h lane flags and monitors).
//
// Tx bias multiplier: page 01h byte 160 bits 4-3 ("TxBiasCurrentScalingFactor": 00b ×1, 01b ×2,
// 10b ×4). We multiply the 2 µA LSB by it, for the monitors and the page 02h bias thresholds,
// as docs/reference.md §5.3 and SONiC do; ethtool's cmis.c divides instead (shifts right), so for a
// ×2 module ethtool prints a quarter of our value. docs/reference.md Appendix C: the spec text
// itself was not re-read; if it turns out to mean division, change `bias_scale` in
// ReadAdvertisement() only.
void DecodeCmis(const CmisPages& pages, ModuleReading& r) {
  const PageView lower(pages.lower, 0);
  const PageView page00(pages.page00, 128);
  const PageView page01(pages.page01, 128);
  const PageView page02(pages.page02, 128);
  const PageView page11(pages.page11, 128);
  r.Clear();
  r.type = ModuleType::kCmis;
  r.identifier = lower.U8(0);
  r.identifier_name.assign(IdentifierName(r.identifier));
  if (lower.Has(kRevision)) r.spec_revision = lower.U8(kRevision);
  r.flat_memory = (lower.U8(kMemoryModel) & 0x80) != 0;
  if (lower.Has(kModuleState)) r.module_state.assign(ModuleState(lower.U8(kModuleState)));

  if (!lower.Has(0, 128)) {
    AddWarning(r, StatusCode::kInvalidArgument,
               "CMIS lower page is " + std::to_string(lower.size()) +
                   " bytes of 128; module monitors, media type and lane count unavailable");
  }
  if (lower.Has(kMediaType)) r.media.assign(Media(lower.U8(kMediaType)));

  // Identity (page 00h).
  if (!page00.Has(128, 128)) {
    AddWarning(r, StatusCode::kInvalidArgument,
               std::string("CMIS page 00h (image bytes 128-255) is ") +
                   (page00.present() ? "truncated" : "missing") + "; identity incomplete");
  }
  page00.AsciiInto(kVendorName, 16, r.vendor);
  page00.AsciiInto(kPartNumber, 16, r.part_number);
  page00.AsciiInto(kRevisionField, 2, r.revision);
  page00.AsciiInto(kSerial, 16, r.serial);
  page00.AsciiInto(kDateCode, 8, r.date_code);
  if (page00.Has(kVendorOui, 3)) {
    r.vendor_oui = {page00.U8(kVendorOui), page00.U8(kVendorOui + 1), page00.U8(kVendorOui + 2)};
  }
  if (page00.Has(kConnector)) r.connector = page00.U8(kConnector);
  if (!lower.Has(0, 128)) return;

  // Lane count: media lanes of application 1 (the module's default application); a DR4 behind
  // an 8-lane host interface has 4 media lanes and page 11h lanes 5-8 read 0.
  int lanes = lower.U8(kApp1LaneCounts) & 0x0F;
  if (lanes < 1 || lanes > kBankLanes) lanes = kBankLanes;

  const CmisSupport support = ReadAdvertisement(page01, r);
  r.ddm_supported =
      support.temperature || support.vcc || support.bias || support.tx_power || support.rx_power;

  const uint8_t module_flags = lower.U8(kModuleFlags);
  if (support.temperature) {
    r.temperature_celsius = TemperatureCelsius(lower.S16(kTemperature));
    r.temperature_flags = FlagsFromBits(module_flags, 0, 1, 2, 3);
  }
  if (support.vcc) {
    r.supply_voltage_volts = VoltageVolts(lower.U16(kVcc));
    r.supply_voltage_flags = FlagsFromBits(module_flags, 4, 5, 6, 7);
  }

  if (!r.flat_memory && page01.Has(128, 128)) {
    ReadThresholdPage(page02, support, r);
    ReadLanePage(page11, support, lanes, r);
  }
  DropImplausibleValues(r);
}

ModuleReading DecodeCmis(const CmisPages& pages) {
  ModuleReading reading;
  DecodeCmis(pages, reading);
  return reading;
}

}  // namespace fabricwatch::optics
