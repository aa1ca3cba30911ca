#pragma once
// Pluggable-module EEPROM decoding: the types every spec decoder fills, and the dispatch on the
// identifier byte (docs/reference.md §5; SFF-8024 Rev 4.x Table 4-1 "Identifier Values").
//
// Everything here is pure: bytes in, a ModuleReading out. The collector reads the pages (netlink
// MODULE_EEPROM_GET, the legacy ioctl, or a replay image) and hands them over. Values are in the
// SI base units the exporter publishes: °C, volts, amperes, watts.
//
// Bad input never crashes and never reads out of bounds. What cannot be decoded is absent
// (std::nullopt / empty), and the reason is one entry of ModuleReading::warnings:
//   kInvalidArgument  bytes that are missing (a truncated image, a page the module advertises but
//                     the image lacks) or nonsensical (a monitor or threshold set that cannot be
//                     right, e.g. the bnxt_en "garbage DOM"); the value is omitted, not guessed;
//   kUnimplemented    an identifier this decoder does not know.

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace fabricwatch::optics {

enum class ModuleType {
  kUnknown,
  kSff8472,  // SFP/SFP+/SFP28: A0h + A2h
  kSff8636,  // QSFP/QSFP+/QSFP28: SFF-8636 (and its predecessor SFF-8436)
  kCmis,     // QSFP-DD, OSFP, DSFP, QSFP112/QSFP+ CMIS, SFP-DD, SFP+ CMIS: CMIS 3.0-5.x
};

// SFF-8024 Table 4-1. 0x03 → SFF-8472; 0x0C, 0x0D, 0x11 → SFF-8636; 0x18, 0x19, 0x1B, 0x1E,
// 0x1F, 0x20 → CMIS (docs/reference.md §5 table, ethtool module-common.h MODULE_ID_*); else
// kUnknown.
ModuleType ModuleTypeFromIdentifier(uint8_t identifier);
std::string_view ModuleTypeName(ModuleType type);  // "sff8472", "sff8636", "cmis", "unknown"
// SFF-8024 Table 4-1 short names ("SFP", "QSFP28", "QSFP-DD", ...); "unknown" otherwise.
std::string_view IdentifierName(uint8_t identifier);
// SFF-8024 Table 4-3 connector names ("LC", "MPO 1x12", "No separable connector", ...).
std::string_view ConnectorName(uint8_t connector);

// A module's own limits for one measurement, in the measurement's SI unit.
struct Thresholds {
  double high_alarm = 0;
  double low_alarm = 0;
  double high_warning = 0;
  double low_warning = 0;
  friend bool operator==(const Thresholds&, const Thresholds&) = default;
};

// Latched alarm/warning flags for one measurement (true = raised).
struct Flags {
  bool high_alarm = false;
  bool low_alarm = false;
  bool high_warning = false;
  bool low_warning = false;
  friend bool operator==(const Flags&, const Flags&) = default;
};

struct ModuleThresholds {
  std::optional<Thresholds> temperature_celsius;
  std::optional<Thresholds> supply_voltage_volts;
  std::optional<Thresholds> tx_bias_amperes;
  std::optional<Thresholds> tx_power_watts;
  std::optional<Thresholds> rx_power_watts;
  friend bool operator==(const ModuleThresholds&, const ModuleThresholds&) = default;
};

// One media lane; `lanes[i]` is lane i + 1.
struct LaneReading {
  std::optional<double> tx_bias_amperes;
  std::optional<double> tx_power_watts;
  std::optional<double> rx_power_watts;
  std::optional<Flags> tx_bias_flags;
  std::optional<Flags> tx_power_flags;
  std::optional<Flags> rx_power_flags;
  std::optional<bool> rx_los;
  std::optional<bool> tx_los;
  std::optional<bool> tx_fault;
  friend bool operator==(const LaneReading&, const LaneReading&) = default;
};

enum class RxPowerMeasurement { kUnknown, kAverage, kOma };

struct ModuleReading {
  ModuleType type = ModuleType::kUnknown;
  uint8_t identifier = 0;
  std::string identifier_name;  // IdentifierName(identifier)
  // SFF-8472 A0h byte 94, SFF-8636 byte 1, CMIS byte 1 (0x40 = 4.0); absent if not in the image.
  std::optional<uint8_t> spec_revision;

  // Identity: trimmed ASCII, non-printable bytes replaced by '?'. Empty if not in the image.
  std::string vendor;
  std::string part_number;
  std::string serial;
  std::string revision;
  std::string date_code;  // "YYMMDDLL" as stored, trimmed
  std::optional<std::array<uint8_t, 3>> vendor_oui;
  std::optional<uint8_t> connector;  // SFF-8024 Table 4-3 code; ConnectorName() for the text
  // "optical", "mmf", "smf", "passive_copper", "active_copper", "active_cable", "base_t" or ""
  // (unknown / not in the image).
  std::string media;
  std::optional<double> wavelength_nm;  // optical modules that state one

  bool flat_memory = false;  // SFF-8636 byte 2 bit 2 / CMIS byte 2 bit 7 (SFP: false)
  // The module implements diagnostics: SFF-8472 A0h byte 92 bit 6; SFF-8636 / CMIS: see the
  // decoder. False for passive copper and for modules whose capability bytes are not in the image.
  bool ddm_supported = false;
  bool externally_calibrated = false;  // SFF-8472 A0h byte 92 bit 4
  RxPowerMeasurement rx_power_measurement = RxPowerMeasurement::kUnknown;
  // CMIS byte 3 bits 3-1: "low_power", "power_up", "ready", "power_down", "fault", "reserved".
  std::string module_state;
  std::optional<uint8_t> tx_bias_multiplier;  // CMIS page 01h byte 160 bits 4-3 (1, 2, 4)

  std::optional<double> temperature_celsius;
  std::optional<double> supply_voltage_volts;
  std::optional<Flags> temperature_flags;
  std::optional<Flags> supply_voltage_flags;
  // 1 entry for SFP, 4 for QSFP, the media lane count of application 1 for CMIS (8 when the
  // descriptor does not say); empty when the module has no lane diagnostics.
  std::vector<LaneReading> lanes;
  ModuleThresholds thresholds;

  std::vector<Status> warnings;  // non-fatal: what is missing or nonsensical, and why

  // Back to a default-constructed reading, keeping the storage of its strings and vectors, so a
  // reading decoded again into the same object allocates nothing while the module's strings fit
  // what they held (docs/design.md §8: no allocation per sample).
  void Clear();
  friend bool operator==(const ModuleReading&, const ModuleReading&) = default;
};

// Decodes a flat image as docs/design.md §5 lays it out (replay files, the legacy ioctl):
//   SFF-8472: A0h (0-255) then A2h (256-511);
//   SFF-8636/8436: lower page, then upper pages 00h, 01h, 02h, 03h (128 bytes each, ≤ 640);
//   CMIS: lower page, then pages 00h, 01h, 02h, 10h, 11h of bank 0 (768 bytes).
// A shorter image means the later pages are absent. Fails (kInvalidArgument) only for an empty
// image; everything else yields a reading with warnings for what could not be decoded.
Result<ModuleReading> DecodeModuleImage(std::span<const uint8_t> image);
// The same into `reading` (cleared first, its storage reused): what the optics collector calls
// on every module read. On error `reading` is cleared.
Status DecodeModuleImage(std::span<const uint8_t> image, ModuleReading& reading);

// The 128-byte half pages a kernel reads over the module's bus for `image` (one
// ETHTOOL_MSG_MODULE_EEPROM_GET each): the plan of collectors/ethtool_source/ethtool_module_pages.h
// ModulePagesToRead, counted without building it (it runs on every module read, which allocates
// nothing): every half page the image holds, less the SFF-8636 optional pages 01h and 02h that
// page 00h does not advertise (zeros in the image, never read). The fabricwatch_collector_
// device_reads kind module_eeprom_page (collectors/core/device_reads.h).
size_t ModuleHalfPagesRead(std::span<const uint8_t> image);

// ---- Shared by the spec decoders (sff8472.cc, sff8636.cc, cmis.cc) ----

// Bytes of one page as read, addressed as the spec addresses them: `base` is 0 for a lower page
// or an SFF-8472 A0h/A2h page, 128 for an upper page. Fewer bytes than the page holds is allowed
// (truncated image); Has() says whether a field is there. Reading an absent byte yields 0.
class PageView {
 public:
  PageView() = default;
  PageView(std::span<const uint8_t> bytes, size_t base) : bytes_(bytes), base_(base) {}

  bool present() const { return !bytes_.empty(); }
  size_t size() const { return bytes_.size(); }
  size_t end() const { return base_ + bytes_.size(); }  // one past the last address held
  bool Has(size_t address, size_t length = 1) const {
    return address >= base_ && address - base_ + length <= bytes_.size();
  }
  uint8_t U8(size_t address) const { return Has(address) ? bytes_[address - base_] : 0; }
  uint16_t U16(size_t address) const {  // big-endian, as all three specs store words
    return static_cast<uint16_t>(U8(address) << 8 | U8(address + 1));
  }
  int16_t S16(size_t address) const { return static_cast<int16_t>(U16(address)); }
  float F32(size_t address) const;  // big-endian IEEE-754 single
  bool AllEqual(size_t address, size_t length, uint8_t value) const;
  // Space-padded ASCII field: trimmed, non-printable bytes replaced by '?'; "" if absent.
  std::string Ascii(size_t address, size_t length) const;
  // The same into `text` (its storage reused).
  void AsciiInto(size_t address, size_t length, std::string& text) const;

 private:
  std::span<const uint8_t> bytes_;
  size_t base_ = 0;
};

// Raw-unit conversions common to the three specs (docs/reference.md §5 "Common unit conversions").
inline double TemperatureCelsius(int16_t raw) { return raw / 256.0; }  // 1/256 °C
inline double VoltageVolts(double raw) { return raw / 1e4; }  // 100 µV steps
inline double BiasAmperes(double raw) { return raw / 5e5; }   // 2 µA steps
inline double PowerWatts(double raw) { return raw / 1e7; }    // 0.1 µW steps
// (Dividing by the exact step count rounds correctly: 3500 steps of 2 µA print as 0.007 A, where
// 3500 * 2e-6 prints as 0.006999999999999999.)

// Four thresholds stored high alarm, low alarm, high warning, low warning, 2 bytes each from
// `address` (SFF-8472 A2h, SFF-8636 page 03h and CMIS page 02h all use this order).
// `to_si` converts one raw word. Absent when the bytes are not there.
template <typename Convert>
std::optional<Thresholds> ReadThresholds(const PageView& page, size_t address, Convert to_si) {
  if (!page.Has(address, 8)) return std::nullopt;
  return Thresholds{to_si(page.U16(address)), to_si(page.U16(address + 2)),
                    to_si(page.U16(address + 4)), to_si(page.U16(address + 6))};
}

// Four flag bits of one measurement: bit positions of high alarm, low alarm, high warning, low
// warning within `byte`.
Flags FlagsFromBits(uint8_t byte, int high_alarm, int low_alarm, int high_warning,
                    int low_warning);

// Drops nonsense: a temperature outside −60..150 °C, a supply outside 2.0..5.0 V, a negative or
// non-finite bias/power, a threshold set that is non-finite, out of range or not ordered
// high alarm ≥ high warning ≥ low warning ≥ low alarm. Each drop adds a kInvalidArgument warning
// naming the value. Threshold sets whose four raw words are all zero must be dropped by the
// decoder before (a module that programmed none), without a warning.
void DropImplausibleValues(ModuleReading& reading);

// "0x1f"
std::string Hex8(uint8_t value);
void AddWarning(ModuleReading& reading, StatusCode code, std::string message);

}  // namespace fabricwatch::optics
