#pragma once
// SFF-8472 (SFP/SFP+/SFP28 management interface): A0h serial ID and A2h diagnostics.
// Spec: SFF-8472 Rev 12.x, Table 4-1 (A0h serial ID fields), Table 8-3 (byte 92, diagnostic
// monitoring type), Table 8-6 (byte 93, enhanced options), Table 9-5 (A2h thresholds and
// external calibration constants), Table 9-11 (A2h A/D values and status bits), Table 9-12
// (alarm/warning flags); §9.2 internal and §9.3 external calibration. Map: docs/reference.md §5.1.

#include <cstdint>
#include <span>

#include "collectors/optics/module_eeprom.h"

namespace fabricwatch::optics {

// SFF-8472 §9.3 external calibration constants (A2h bytes 56-91).
struct Sff8472Calibration {
  float rx_power[5] = {0, 1, 0, 0, 0};  // Rx_PWR(0)..Rx_PWR(4): bytes 72, 68, 64, 60, 56
  double tx_bias_slope = 1, tx_power_slope = 1, temperature_slope = 1, voltage_slope = 1;
  int16_t tx_bias_offset = 0, tx_power_offset = 0, temperature_offset = 0, voltage_offset = 0;

  // Reads bytes 56-91 of A2h (a page with base 0). Unsigned 8.8 fixed-point slopes, signed
  // offsets in the result's raw units, big-endian IEEE-754 Rx power coefficients.
  static Sff8472Calibration Read(const PageView& a2h);

  // `value = slope × raw + offset`, then the internal-calibration LSB (§9.3 items 1-4). The
  // temperature A/D value is signed; the others are unsigned.
  double TemperatureCelsius(uint16_t raw) const;
  double VoltageVolts(uint16_t raw) const;
  double BiasAmperes(uint16_t raw) const;
  double TxPowerWatts(uint16_t raw) const;
  // §9.3 item 5: Rx_PWR = Σ Rx_PWR(i)·raw^i (i = 0..4) in 0.1 µW. ethtool (sfpdiag.c) applies
  // only Rx_PWR(0) + raw·(Rx_PWR(1)+Rx_PWR(2)+Rx_PWR(3)), i.e. linearly; the two agree whenever
  // Rx_PWR(2..4) are 0, which is what most externally calibrated modules program.
  double RxPowerWatts(uint16_t raw) const;
};

// Decodes A0h (`a0h`, up to 256 bytes, may be truncated) and A2h (`a2h`, up to 256 bytes; empty
// when the module has no A2h or it was not read). A2h is decoded only when A0h byte 92 bit 6
// (DDM implemented) is set; when it is set but A2h is missing or short, the reading says so in a
// kInvalidArgument warning and keeps the identity.
ModuleReading DecodeSff8472(std::span<const uint8_t> a0h, std::span<const uint8_t> a2h);
// The same into `reading` (cleared first, its storage reused; see ModuleReading::Clear).
void DecodeSff8472(std::span<const uint8_t> a0h, std::span<const uint8_t> a2h,
                   ModuleReading& reading);

}  // namespace fabricwatch::optics
