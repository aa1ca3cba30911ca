#include "collectors/optics/sff8472.h"

#include <string>

namespace fabricwatch::optics {
namespace {

// SFF-8472 Table 4-1 (A0h).
constexpr size_t kA0Connector = 2;
constexpr size_t kA0CableTechnology = 8;  // bit 2 passive cable, bit 3 active cable (SFP+)
constexpr size_t kA0VendorName = 20;
constexpr size_t kA0VendorOui = 37;
constexpr size_t kA0PartNumber = 40;
constexpr size_t kA0Revision = 56;
constexpr size_t kA0Wavelength = 60;
constexpr size_t kA0Serial = 68;
constexpr size_t kA0DateCode = 84;
constexpr size_t kA0DiagType = 92;        // Table 8-3
constexpr size_t kA0EnhancedOptions = 93; // Table 8-6
constexpr size_t kA0Compliance = 94;      // Table 8-8

// SFF-8472 Table 9-5 / 9-11 / 9-12 (A2h).
constexpr size_t kA2TempThresholds = 0;
constexpr size_t kA2VccThresholds = 8;
constexpr size_t kA2BiasThresholds = 16;
constexpr size_t kA2TxPowerThresholds = 24;
constexpr size_t kA2RxPowerThresholds = 32;
constexpr size_t kA2CalibrationStart = 56;
constexpr size_t kA2CalibrationEnd = 92;
constexpr size_t kA2Temperature = 96;
constexpr size_t kA2Vcc = 98;
constexpr size_t kA2Bias = 100;
constexpr size_t kA2TxPower = 102;
constexpr size_t kA2RxPower = 104;
constexpr size_t kA2Status = 110;
constexpr size_t kA2Alarms = 112;    // 112-113
constexpr size_t kA2Warnings = 116;  // 116-117

double Slope(const PageView& page, size_t address) {  // unsigned 8.8 fixed point
  return page.U8(address) + page.U8(address + 1) / 256.0;
}

// Flags of one measurement from the byte pair at `address` (112-113 alarms or 116-117 warnings).
// Table 9-12: byte 112 b7/b6 temperature high/low, b5/b4 Vcc, b3/b2 bias, b1/b0 Tx power;
// byte 113 b7/b6 Rx power.
struct FlagPair {
  bool high = false;
  bool low = false;
};
FlagPair PairAt(const PageView& a2h, size_t address, int high_bit) {
  uint8_t byte = a2h.U8(address);
  return {(byte >> high_bit & 1) != 0, (byte >> (high_bit - 1) & 1) != 0};
}
Flags Sff8472Flags(const PageView& a2h, size_t byte_offset, int high_bit) {
  FlagPair alarm = PairAt(a2h, kA2Alarms + byte_offset, high_bit);
  FlagPair warning = PairAt(a2h, kA2Warnings + byte_offset, high_bit);
  return Flags{alarm.high, alarm.low, warning.high, warning.low};
}

bool AllZero(const PageView& page, size_t address) { return page.AllEqual(address, 8, 0); }

}  // namespace

Sff8472Calibration Sff8472Calibration::Read(const PageView& a2h) {
  Sff8472Calibration cal;
  // Rx_PWR(4) at 56, (3) at 60, (2) at 64, (1) at 68, (0) at 72.
  for (int i = 0; i < 5; ++i) cal.rx_power[i] = a2h.F32(72 - 4 * i);
  cal.tx_bias_slope = Slope(a2h, 76);
  cal.tx_bias_offset = a2h.S16(78);
  cal.tx_power_slope = Slope(a2h, 80);
  cal.tx_power_offset = a2h.S16(82);
  cal.temperature_slope = Slope(a2h, 84);
  cal.temperature_offset = a2h.S16(86);
  cal.voltage_slope = Slope(a2h, 88);
  cal.voltage_offset = a2h.S16(90);
  return cal;
}

double Sff8472Calibration::TemperatureCelsius(uint16_t raw) const {
  return (temperature_slope * static_cast<int16_t>(raw) + temperature_offset) / 256.0;
}
double Sff8472Calibration::VoltageVolts(uint16_t raw) const {
  return optics::VoltageVolts(voltage_slope * raw + voltage_offset);
}
double Sff8472Calibration::BiasAmperes(uint16_t raw) const {
  return optics::BiasAmperes(tx_bias_slope * raw + tx_bias_offset);
}
double Sff8472Calibration::TxPowerWatts(uint16_t raw) const {
  return PowerWatts(tx_power_slope * raw + tx_power_offset);
}
double Sff8472Calibration::RxPowerWatts(uint16_t raw) const {
  // Horner form of Σ Rx_PWR(i)·raw^i, in double to keep raw^4 (up to 1.8e19) exact enough.
  double x = raw;
  double sum = 0;
  for (int i = 4; i >= 0; --i) sum = sum * x + static_cast<double>(rx_power[i]);
  return PowerWatts(sum);
}

// SFF-8472 Rev 12.x Table 4-1 (A0h serial ID), Tables 8-3/8-6/8-8 (bytes 92-94), Table 9-5
// (A2h thresholds, calibration constants), Table 9-11 (A/D values, byte 110 status), Table 9-12
// (flags); §9.2/§9.3 calibration.
void DecodeSff8472(std::span<const uint8_t> a0h_bytes, std::span<const uint8_t> a2h_bytes,
                   ModuleReading& r) {
  const PageView a0h(a0h_bytes, 0);
  const PageView a2h(a2h_bytes, 0);
  r.Clear();
  r.type = ModuleType::kSff8472;
  r.identifier = a0h.U8(0);
  r.identifier_name.assign(IdentifierName(r.identifier));

  // Identity: fields are taken one by one, so a short A0h (112 or 144 bytes in some databases)
  // still yields what it holds.
  a0h.AsciiInto(kA0VendorName, 16, r.vendor);
  a0h.AsciiInto(kA0PartNumber, 16, r.part_number);
  a0h.AsciiInto(kA0Revision, 4, r.revision);
  a0h.AsciiInto(kA0Serial, 16, r.serial);
  a0h.AsciiInto(kA0DateCode, 8, r.date_code);
  if (a0h.Has(kA0VendorOui, 3)) {
    r.vendor_oui = {a0h.U8(kA0VendorOui), a0h.U8(kA0VendorOui + 1), a0h.U8(kA0VendorOui + 2)};
  }
  if (a0h.Has(kA0Connector)) r.connector = a0h.U8(kA0Connector);
  if (a0h.Has(kA0CableTechnology)) {
    uint8_t cable = a0h.U8(kA0CableTechnology);
    r.media = (cable & 0x04) ? "passive_copper" : (cable & 0x08) ? "active_copper" : "optical";
  }
  // Bytes 60-61: laser wavelength in nm, unless byte 8 declares a copper cable (then they hold
  // cable compliance bits).
  if (r.media == "optical" && a0h.Has(kA0Wavelength, 2) && a0h.U16(kA0Wavelength) != 0) {
    r.wavelength_nm = a0h.U16(kA0Wavelength);
  }
  if (a0h.Has(kA0Compliance)) r.spec_revision = a0h.U8(kA0Compliance);

  if (!a0h.Has(kA0Compliance)) {
    AddWarning(r, StatusCode::kInvalidArgument,
               "SFF-8472 A0h is " + std::to_string(a0h.size()) +
                   " bytes; the identity and diagnostic type need bytes 0-94");
    if (!a0h.Has(kA0DiagType)) return;
  }
  const uint8_t diag_type = a0h.U8(kA0DiagType);
  r.ddm_supported = (diag_type & 0x40) != 0;
  if (!r.ddm_supported) return;
  r.externally_calibrated = (diag_type & 0x10) != 0;
  r.rx_power_measurement =
      (diag_type & 0x08) ? RxPowerMeasurement::kAverage : RxPowerMeasurement::kOma;

  if (!a2h.Has(kA2RxPower, 2)) {
    AddWarning(r, StatusCode::kInvalidArgument,
               a2h.present() ? "SFF-8472 A2h is " + std::to_string(a2h.size()) +
                                   " bytes; the live monitors need bytes 96-105"
                             : "A0h byte 92 advertises diagnostics but the image has no A2h "
                               "(bytes 256-511); no monitor values");
    return;
  }

  Sff8472Calibration cal;  // identity for internally calibrated modules (§9.2)
  if (r.externally_calibrated) {
    if (!a2h.Has(kA2CalibrationStart, kA2CalibrationEnd - kA2CalibrationStart)) {
      AddWarning(r, StatusCode::kInvalidArgument,
                 "externally calibrated but A2h bytes 56-91 (calibration constants) are missing");
      return;
    }
    cal = Sff8472Calibration::Read(a2h);
  }

  r.temperature_celsius = cal.TemperatureCelsius(a2h.U16(kA2Temperature));
  r.supply_voltage_volts = cal.VoltageVolts(a2h.U16(kA2Vcc));
  LaneReading lane;
  lane.tx_bias_amperes = cal.BiasAmperes(a2h.U16(kA2Bias));
  lane.tx_power_watts = cal.TxPowerWatts(a2h.U16(kA2TxPower));
  lane.rx_power_watts = cal.RxPowerWatts(a2h.U16(kA2RxPower));
  if (a2h.Has(kA2Status)) {
    // Table 9-11 byte 110: b2 TX_FAULT state, b1 RX_LOS state (only meaningful if the options
    // in A0h bytes 64-65 say they are implemented; the states read 0 otherwise).
    uint8_t status = a2h.U8(kA2Status);
    lane.tx_fault = (status & 0x04) != 0;
    lane.rx_los = (status & 0x02) != 0;
  }
  // Byte 93 bit 7: alarm/warning flags implemented (Table 8-6).
  if ((a0h.U8(kA0EnhancedOptions) & 0x80) && a2h.Has(kA2Warnings, 2)) {
    r.temperature_flags = Sff8472Flags(a2h, 0, 7);
    r.supply_voltage_flags = Sff8472Flags(a2h, 0, 5);
    lane.tx_bias_flags = Sff8472Flags(a2h, 0, 3);
    lane.tx_power_flags = Sff8472Flags(a2h, 0, 1);
    lane.rx_power_flags = Sff8472Flags(a2h, 1, 7);
  }
  r.lanes.push_back(lane);

  // Thresholds: raw A/D units like the monitors, so calibrated the same way (§9.3). A set whose
  // eight bytes are all zero was never programmed: absent.
  const auto set = [&](size_t address, auto convert) -> std::optional<Thresholds> {
    if (AllZero(a2h, address)) return std::nullopt;
    return ReadThresholds(a2h, address, convert);
  };
  r.thresholds.temperature_celsius =
      set(kA2TempThresholds, [&](uint16_t v) { return cal.TemperatureCelsius(v); });
  r.thresholds.supply_voltage_volts =
      set(kA2VccThresholds, [&](uint16_t v) { return cal.VoltageVolts(v); });
  r.thresholds.tx_bias_amperes =
      set(kA2BiasThresholds, [&](uint16_t v) { return cal.BiasAmperes(v); });
  r.thresholds.tx_power_watts =
      set(kA2TxPowerThresholds, [&](uint16_t v) { return cal.TxPowerWatts(v); });
  r.thresholds.rx_power_watts =
      set(kA2RxPowerThresholds, [&](uint16_t v) { return cal.RxPowerWatts(v); });

  DropImplausibleValues(r);
}

ModuleReading DecodeSff8472(std::span<const uint8_t> a0h, std::span<const uint8_t> a2h) {
  ModuleReading reading;
  DecodeSff8472(a0h, a2h, reading);
  return reading;
}

}  // namespace fabricwatch::optics
