#include "collectors/optics/sff8636.h"

#include <string>

namespace fabricwatch::optics {
namespace {

// SFF-8636 Rev 2.10a Table 6-2 (lower page).
constexpr size_t kRevision = 1;
constexpr size_t kStatus = 2;        // Table 6-3: bit 2 Flat_mem, bit 0 Data_Not_Ready
constexpr size_t kLos = 3;           // bits 0-3 Rx LOS lanes 1-4, bits 4-7 Tx LOS lanes 1-4
constexpr size_t kTxFault = 4;       // bits 0-3 Tx fault lanes 1-4
constexpr size_t kTempFlags = 6;     // Table 6-5: b7 high alarm, b6 low alarm, b5/b4 warnings
constexpr size_t kVccFlags = 7;
constexpr size_t kRxPowerFlags = 9;  // Table 6-6: 9-10 Rx power, 11-12 bias, 13-14 Tx power
constexpr size_t kBiasFlags = 11;
constexpr size_t kTxPowerFlags = 13;
constexpr size_t kTemperature = 22;  // Table 6-7
constexpr size_t kVcc = 26;
constexpr size_t kRxPower = 34;  // lanes 1-4, 2 bytes each
constexpr size_t kBias = 42;
constexpr size_t kTxPower = 50;
constexpr size_t kLowerEnd = 58;  // one past the last monitor byte

// Table 6-15 (upper page 00h).
constexpr size_t kConnector = 130;
constexpr size_t kDeviceTechnology = 147;  // Table 6-16: bits 7-4 transmitter technology
constexpr size_t kVendorName = 148;
constexpr size_t kVendorOui = 165;
constexpr size_t kPartNumber = 168;
constexpr size_t kRevisionField = 184;
constexpr size_t kWavelength = 186;  // 186-187, units of 0.05 nm (optical transmitters)
constexpr size_t kSerial = 196;
constexpr size_t kDateCode = 212;
constexpr size_t kDiagType = 220;  // Table 6-23

// Table 6-29 (page 03h).
constexpr size_t kTempThresholds = 128;
constexpr size_t kVccThresholds = 144;
constexpr size_t kRxPowerThresholds = 176;
constexpr size_t kBiasThresholds = 184;
constexpr size_t kTxPowerThresholds = 192;

constexpr int kLanes = 4;

// Lane flags (Table 6-6): two lanes per byte, lane 1 in bits 7-4 of the first byte (high alarm,
// low alarm, high warning, low warning), lane 2 in bits 3-0, lanes 3/4 likewise in the next byte.
Flags LaneFlags(const PageView& lower, size_t first_byte, int lane) {
  uint8_t byte = lower.U8(first_byte + lane / 2);
  int top = (lane % 2 == 0) ? 7 : 3;
  return FlagsFromBits(byte, top, top - 1, top - 2, top - 3);
}

std::string_view Media(uint8_t technology) {
  uint8_t transmitter = technology >> 4;
  if (transmitter == 0x0A || transmitter == 0x0B) return "passive_copper";
  if (transmitter >= 0x0C) return "active_copper";
  return "optical";
}

}  // namespace

// SFF-8636 Rev 2.10a Tables 6-2..6-7 (lower page), 6-15/6-16/6-23 (page 00h), 6-29 (page 03h).
void DecodeSff8636(const Sff8636Pages& pages, ModuleReading& r) {
  const PageView lower(pages.lower, 0);
  const PageView page00(pages.page00, 128);
  const PageView page03(pages.page03, 128);
  r.Clear();
  r.type = ModuleType::kSff8636;
  r.identifier = lower.U8(0);
  r.identifier_name.assign(IdentifierName(r.identifier));
  if (lower.Has(kRevision)) r.spec_revision = lower.U8(kRevision);
  r.flat_memory = (lower.U8(kStatus) & 0x04) != 0;

  if (!lower.Has(0, 128)) {
    AddWarning(r, StatusCode::kInvalidArgument,
               "SFF-8636 lower page is " + std::to_string(lower.size()) +
                   " bytes of 128; flags and monitors need bytes 0-57");
  }
  if (!page00.present()) {
    AddWarning(r, StatusCode::kInvalidArgument,
               "SFF-8636 upper page 00h (image bytes 128-255) is missing: no identity, and "
               "without the device technology (byte 147) and monitoring type (byte 220) the "
               "lower-page monitors are not reported");
  } else if (!page00.Has(128, 128)) {
    AddWarning(r, StatusCode::kInvalidArgument,
               "SFF-8636 upper page 00h holds bytes 128-" + std::to_string(page00.end() - 1) +
                   " only; later identity fields are absent");
  }

  // Identity (Table 6-15), field by field.
  if (page00.Has(kConnector)) r.connector = page00.U8(kConnector);
  page00.AsciiInto(kVendorName, 16, r.vendor);
  page00.AsciiInto(kPartNumber, 16, r.part_number);
  page00.AsciiInto(kRevisionField, 2, r.revision);
  page00.AsciiInto(kSerial, 16, r.serial);
  page00.AsciiInto(kDateCode, 8, r.date_code);
  if (page00.Has(kVendorOui, 3)) {
    r.vendor_oui = {page00.U8(kVendorOui), page00.U8(kVendorOui + 1), page00.U8(kVendorOui + 2)};
  }
  if (page00.Has(kDeviceTechnology)) {
    r.media.assign(Media(page00.U8(kDeviceTechnology)));
    // Bytes 186-187: wavelength × 20 for optical transmitters, copper attenuation otherwise.
    if (r.media == "optical" && page00.Has(kWavelength, 2) && page00.U16(kWavelength) != 0) {
      r.wavelength_nm = page00.U16(kWavelength) / 20.0;
    }
  }
  if (!page00.Has(kDiagType) || !page00.Has(kDeviceTechnology)) return;

  // Table 6-23 byte 220: b5 temperature monitoring, b4 supply voltage monitoring (both reserved,
  // i.e. 0, in SFF-8436, so an older module with 0 there still monitors), b3 Rx power type
  // (1 average, 0 OMA), b2 Tx power measured. A passive copper cable that sets none of
  // b5/b4/b2 has no diagnostics; every other module has the lower-page monitors.
  const uint8_t diag = page00.U8(kDiagType);
  r.ddm_supported = !(r.media == "passive_copper" && (diag & 0x34) == 0);
  if (!r.ddm_supported) return;
  r.rx_power_measurement = (diag & 0x08) ? RxPowerMeasurement::kAverage : RxPowerMeasurement::kOma;
  const bool tx_power_measured = (diag & 0x04) != 0;

  if (!lower.Has(0, kLowerEnd)) return;  // warned above
  if (lower.U8(kStatus) & 0x01) {
    AddWarning(r, StatusCode::kInvalidArgument,
               "SFF-8636 byte 2 Data_Not_Ready is set: monitor values may not be valid yet");
  }
  r.temperature_celsius = TemperatureCelsius(lower.S16(kTemperature));
  r.supply_voltage_volts = VoltageVolts(lower.U16(kVcc));
  r.temperature_flags = FlagsFromBits(lower.U8(kTempFlags), 7, 6, 5, 4);
  r.supply_voltage_flags = FlagsFromBits(lower.U8(kVccFlags), 7, 6, 5, 4);
  const uint8_t los = lower.U8(kLos);
  const uint8_t fault = lower.U8(kTxFault);
  for (int lane = 0; lane < kLanes; ++lane) {
    LaneReading l;
    l.rx_power_watts = PowerWatts(lower.U16(kRxPower + 2 * lane));
    l.tx_bias_amperes = BiasAmperes(lower.U16(kBias + 2 * lane));
    l.rx_power_flags = LaneFlags(lower, kRxPowerFlags, lane);
    l.tx_bias_flags = LaneFlags(lower, kBiasFlags, lane);
    if (tx_power_measured) {
      l.tx_power_watts = PowerWatts(lower.U16(kTxPower + 2 * lane));
      l.tx_power_flags = LaneFlags(lower, kTxPowerFlags, lane);
    }
    l.rx_los = (los >> lane & 1) != 0;
    l.tx_los = (los >> (lane + 4) & 1) != 0;
    l.tx_fault = (fault >> lane & 1) != 0;
    r.lanes.push_back(l);
  }

  // Page 03h thresholds (Table 6-29): only a paged module has them.
  if (!r.flat_memory) {
    if (!page03.Has(kTempThresholds, kTxPowerThresholds + 8 - kTempThresholds)) {
      AddWarning(r, StatusCode::kInvalidArgument,
                 "paged SFF-8636 module (Flat_mem = 0) but page 03h (image bytes 512-639) is " +
                     std::string(page03.present() ? "truncated" : "missing") +
                     "; no thresholds");
    } else {
      const auto set = [&](size_t address, auto convert) -> std::optional<Thresholds> {
        if (page03.AllEqual(address, 8, 0)) return std::nullopt;  // never programmed
        return ReadThresholds(page03, address, convert);
      };
      r.thresholds.temperature_celsius = set(kTempThresholds, [](uint16_t v) {
        return TemperatureCelsius(static_cast<int16_t>(v));
      });
      r.thresholds.supply_voltage_volts =
          set(kVccThresholds, [](uint16_t v) { return VoltageVolts(v); });
      r.thresholds.rx_power_watts =
          set(kRxPowerThresholds, [](uint16_t v) { return PowerWatts(v); });
      r.thresholds.tx_bias_amperes =
          set(kBiasThresholds, [](uint16_t v) { return BiasAmperes(v); });
      if (tx_power_measured) {
        r.thresholds.tx_power_watts =
            set(kTxPowerThresholds, [](uint16_t v) { return PowerWatts(v); });
      }
    }
  }
  DropImplausibleValues(r);
}

ModuleReading DecodeSff8636(const Sff8636Pages& pages) {
  ModuleReading reading;
  DecodeSff8636(pages, reading);
  return reading;
}

}  // namespace fabricwatch::optics
