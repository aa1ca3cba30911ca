#include "collectors/optics/module_eeprom.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdio>
#include <utility>

#include "collectors/optics/cmis.h"
#include "collectors/optics/sff8472.h"
#include "collectors/optics/sff8636.h"
#include "collectors/ethtool_source/sff8024.h"

namespace fabricwatch::optics {
namespace {

constexpr size_t kPage = 128;

std::string Number(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof(buffer), "%.6g", value);
  return buffer;
}

// The sub-span [offset, offset + length) clipped to the image; empty when it starts past the end.
std::span<const uint8_t> Slice(std::span<const uint8_t> image, size_t offset, size_t length) {
  if (offset >= image.size()) return {};
  return image.subspan(offset, std::min(length, image.size() - offset));
}

}  // namespace

size_t ModuleHalfPagesRead(std::span<const uint8_t> image) {
  constexpr size_t kHalf = 128;
  size_t pages = (image.size() + kHalf - 1) / kHalf;
  if (image.empty() || ModuleTypeFromIdentifier(image[0]) != ModuleType::kSff8636) return pages;
  // SFF-8636 Table 6-20 byte 195 (page 00h options): bit 6 page 01h, bit 7 page 02h present;
  // a paged module's skipped pages are the zeros at 256 and 384 (ModulePagesToRead).
  constexpr size_t kOptions = 195;
  if (image.size() > 2 && (image[2] & 0x04) != 0) return std::min<size_t>(pages, 2);  // Flat_mem
  if (image.size() <= kOptions) return pages;
  const uint8_t options = image[kOptions];
  if (image.size() > 2 * kHalf && (options & (1u << 6)) == 0) --pages;
  if (image.size() > 3 * kHalf && (options & (1u << 7)) == 0) --pages;
  return pages;
}

ModuleType ModuleTypeFromIdentifier(uint8_t identifier) {
  switch (sys::MemoryMapOfIdentifier(identifier)) {
    case sys::ModuleMemoryMap::kSff8472:
      return ModuleType::kSff8472;
    case sys::ModuleMemoryMap::kSff8636:
      return ModuleType::kSff8636;
    case sys::ModuleMemoryMap::kCmis:
      return ModuleType::kCmis;
    case sys::ModuleMemoryMap::kUnknown:
      break;
  }
  return ModuleType::kUnknown;
}

std::string_view ModuleTypeName(ModuleType type) {
  switch (type) {
    case ModuleType::kSff8472:
      return "sff8472";
    case ModuleType::kSff8636:
      return "sff8636";
    case ModuleType::kCmis:
      return "cmis";
    case ModuleType::kUnknown:
      break;
  }
  return "unknown";
}

// SFF-8024 Rev 4.11 Table 4-1 Identifier Values.
std::string_view IdentifierName(uint8_t identifier) {
  switch (identifier) {
    case 0x01: return "GBIC";
    case 0x02: return "Soldered";
    case 0x03: return "SFP";
    case 0x04: return "XBI";
    case 0x05: return "XENPAK";
    case 0x06: return "XFP";
    case 0x07: return "XFF";
    case 0x08: return "XFP-E";
    case 0x09: return "XPAK";
    case 0x0A: return "X2";
    case 0x0B: return "DWDM-SFP";
    case 0x0C: return "QSFP";
    case 0x0D: return "QSFP+";
    case 0x0E: return "CXP";
    case 0x0F: return "HD 4X";
    case 0x10: return "HD 8X";
    case 0x11: return "QSFP28";
    case 0x12: return "CXP2";
    case 0x13: return "CDFP";
    case 0x14: return "HD 4X Fanout";
    case 0x15: return "HD 8X Fanout";
    case 0x16: return "CDFP Style 3";
    case 0x17: return "microQSFP";
    case 0x18: return "QSFP-DD";
    case 0x19: return "OSFP";
    case 0x1A: return "SFP-DD";
    case 0x1B: return "DSFP";
    case 0x1C: return "MiniLink x4";
    case 0x1D: return "MiniLink x8";
    case 0x1E: return "QSFP CMIS";
    case 0x1F: return "SFP-DD CMIS";
    case 0x20: return "SFP+ CMIS";
    default: return "unknown";
  }
}

// SFF-8024 Rev 4.11 Table 4-3 Connector Types.
std::string_view ConnectorName(uint8_t connector) {
  switch (connector) {
    case 0x00: return "unknown";
    case 0x01: return "SC";
    case 0x02: return "FC Style 1 copper";
    case 0x03: return "FC Style 2 copper";
    case 0x04: return "BNC/TNC";
    case 0x05: return "FC coax";
    case 0x06: return "Fiber Jack";
    case 0x07: return "LC";
    case 0x08: return "MT-RJ";
    case 0x09: return "MU";
    case 0x0A: return "SG";
    case 0x0B: return "Optical pigtail";
    case 0x0C: return "MPO 1x12";
    case 0x0D: return "MPO 2x16";
    case 0x20: return "HSSDC II";
    case 0x21: return "Copper pigtail";
    case 0x22: return "RJ45";
    case 0x23: return "No separable connector";
    case 0x24: return "MXC 2x16";
    case 0x25: return "CS optical";
    case 0x26: return "SN optical";
    case 0x27: return "MPO 2x12";
    case 0x28: return "MPO 1x16";
    default: return "vendor specific or reserved";
  }
}

float PageView::F32(size_t address) const {
  uint32_t bits = static_cast<uint32_t>(U16(address)) << 16 | U16(address + 2);
  return std::bit_cast<float>(bits);
}

bool PageView::AllEqual(size_t address, size_t length, uint8_t value) const {
  for (size_t i = 0; i < length; ++i) {
    if (U8(address + i) != value) return false;
  }
  return true;
}

std::string PageView::Ascii(size_t address, size_t length) const {
  std::string text;
  AsciiInto(address, length, text);
  return text;
}

void PageView::AsciiInto(size_t address, size_t length, std::string& text) const {
  text.clear();
  if (!Has(address, length)) return;
  // NUL padding is as common as space padding in the field; treat both as padding.
  const auto padding = [&](size_t i) {
    const uint8_t c = U8(address + i);
    return c == 0 || c == ' ';
  };
  size_t first = 0, end = length;
  while (first < end && padding(first)) ++first;
  while (end > first && padding(end - 1)) --end;
  for (size_t i = first; i < end; ++i) {
    const uint8_t c = U8(address + i);
    text.push_back(c == 0 ? ' ' : (c >= 0x20 && c < 0x7F) ? static_cast<char>(c) : '?');
  }
}

void ModuleReading::Clear() {
  // Moved out, reset, moved back: the strings' and vectors' buffers survive the reset.
  ModuleReading fresh;
  const auto keep = [](auto& from, auto& to) {
    to = std::move(from);
    to.clear();
  };
  keep(identifier_name, fresh.identifier_name);
  keep(vendor, fresh.vendor);
  keep(part_number, fresh.part_number);
  keep(serial, fresh.serial);
  keep(revision, fresh.revision);
  keep(date_code, fresh.date_code);
  keep(media, fresh.media);
  keep(module_state, fresh.module_state);
  keep(lanes, fresh.lanes);
  keep(warnings, fresh.warnings);
  *this = std::move(fresh);
}

Flags FlagsFromBits(uint8_t byte, int high_alarm, int low_alarm, int high_warning,
                    int low_warning) {
  return Flags{(byte >> high_alarm & 1) != 0, (byte >> low_alarm & 1) != 0,
               (byte >> high_warning & 1) != 0, (byte >> low_warning & 1) != 0};
}

std::string Hex8(uint8_t value) {
  char buffer[8];
  std::snprintf(buffer, sizeof(buffer), "0x%02x", value);
  return buffer;
}

void AddWarning(ModuleReading& reading, StatusCode code, std::string message) {
  reading.warnings.emplace_back(code, std::move(message));
}

void DropImplausibleValues(ModuleReading& reading) {
  const auto bad = [&](std::string message) {
    AddWarning(reading, StatusCode::kInvalidArgument, std::move(message));
  };
  // `lane` is 0 for a module-level value, else the lane counted from 1. The message is built only
  // for a value that is dropped: a plausible reading costs no string.
  const auto check_value = [&](std::optional<double>& value, size_t lane, const char* what,
                               double low, double high, const char* unit) {
    if (!value || (std::isfinite(*value) && *value >= low && *value <= high)) return;
    bad((lane == 0 ? std::string() : "lane " + std::to_string(lane) + " ") + what + " " +
        Number(*value) + " " + unit + " is outside the plausible " + Number(low) + ".." +
        Number(high) + " " + unit + "; omitted");
    value.reset();
  };
  constexpr double kMaxBias = 1.0;   // A; no module laser draws an ampere
  constexpr double kMaxPower = 1.0;  // W; +30 dBm
  check_value(reading.temperature_celsius, 0, "module temperature", -60, 150, "°C");
  check_value(reading.supply_voltage_volts, 0, "supply voltage", 2.0, 5.0, "V");
  for (size_t i = 0; i < reading.lanes.size(); ++i) {
    LaneReading& lane = reading.lanes[i];
    check_value(lane.tx_bias_amperes, i + 1, "tx bias", 0, kMaxBias, "A");
    check_value(lane.tx_power_watts, i + 1, "tx power", 0, kMaxPower, "W");
    check_value(lane.rx_power_watts, i + 1, "rx power", 0, kMaxPower, "W");
  }

  const auto check_set = [&](std::optional<Thresholds>& set, const char* what, double low,
                             double high) {
    if (!set) return;
    const Thresholds& t = *set;
    bool finite = std::isfinite(t.high_alarm) && std::isfinite(t.low_alarm) &&
                  std::isfinite(t.high_warning) && std::isfinite(t.low_warning);
    bool in_range = finite && t.low_alarm >= low && t.high_alarm <= high;
    bool ordered = finite && t.high_alarm >= t.high_warning &&
                   t.high_warning >= t.low_warning && t.low_warning >= t.low_alarm;
    if (in_range && ordered) return;
    bad(std::string(what) + " thresholds (high alarm " + Number(t.high_alarm) + ", low alarm " +
        Number(t.low_alarm) + ", high warning " + Number(t.high_warning) + ", low warning " +
        Number(t.low_warning) + ") are " + (ordered ? "out of range" : "not ordered") +
        "; omitted");
    set.reset();
  };
  check_set(reading.thresholds.temperature_celsius, "temperature", -60, 150);
  // Vcc thresholds are ordered like any other but may sit anywhere in 0..6.5535 V.
  check_set(reading.thresholds.supply_voltage_volts, "supply voltage", 0, 7);
  check_set(reading.thresholds.tx_bias_amperes, "tx bias", 0, kMaxBias);
  check_set(reading.thresholds.tx_power_watts, "tx power", 0, kMaxPower);
  check_set(reading.thresholds.rx_power_watts, "rx power", 0, kMaxPower);
}

Result<ModuleReading> DecodeModuleImage(std::span<const uint8_t> image) {
  ModuleReading reading;
  if (Status status = DecodeModuleImage(image, reading); !status.ok()) return Error(status);
  return reading;
}

Status DecodeModuleImage(std::span<const uint8_t> image, ModuleReading& reading) {
  if (image.empty()) {
    reading.Clear();
    return Status(StatusCode::kInvalidArgument, "module EEPROM image is empty");
  }
  const uint8_t identifier = image[0];
  size_t layout_size = 0;
  switch (ModuleTypeFromIdentifier(identifier)) {
    case ModuleType::kSff8472:
      // docs/design.md §5 / docs/reference.md §3.1: A0h at 0, A2h at 256.
      DecodeSff8472(Slice(image, 0, 256), Slice(image, 256, 256), reading);
      layout_size = 512;
      break;
    case ModuleType::kSff8636:
      // Lower page, then pages 00h, 01h, 02h, 03h: page N's upper half at 128 + 128·N.
      DecodeSff8636({.lower = Slice(image, 0, kPage),
                     .page00 = Slice(image, kPage, kPage),
                     .page03 = Slice(image, 4 * kPage, kPage)},
                    reading);
      layout_size = 5 * kPage;
      break;
    case ModuleType::kCmis:
      DecodeCmis({.lower = Slice(image, 0, kPage),
                  .page00 = Slice(image, 1 * kPage, kPage),
                  .page01 = Slice(image, 2 * kPage, kPage),
                  .page02 = Slice(image, 3 * kPage, kPage),
                  .page10 = Slice(image, 4 * kPage, kPage),
                  .page11 = Slice(image, 5 * kPage, kPage)},
                 reading);
      layout_size = 6 * kPage;
      break;
    case ModuleType::kUnknown:
      reading.Clear();
      reading.identifier = identifier;
      reading.identifier_name.assign(IdentifierName(identifier));
      AddWarning(reading, StatusCode::kUnimplemented,
                 "module identifier " + Hex8(identifier) + " (" + reading.identifier_name +
                     ") is not decoded (SFF-8472, SFF-8636 and CMIS only)");
      return Status::Ok();
  }
  if (image.size() > layout_size) {
    AddWarning(reading, StatusCode::kInvalidArgument,
               "image is " + std::to_string(image.size()) + " bytes; bytes past " +
                   std::to_string(layout_size) + " ignored");
  }
  return Status::Ok();
}

}  // namespace fabricwatch::optics
