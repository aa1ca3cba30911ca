#pragma once
// SFF-8636 (QSFP+/QSFP28 management interface; also SFF-8436 QSFP+, whose lower page and page
// 00h share these offsets). Spec: SFF-8636 Rev 2.10a, Table 6-2 (lower page map), Table 6-3
// (byte 2 status: Flat_mem, Data_Not_Ready), Tables 6-4..6-6 (interrupt flags bytes 3-14),
// Table 6-7 (free-side monitors bytes 22-57), Table 6-15 (upper page 00h serial ID), Table 6-16
// (byte 147 device technology), Table 6-23 (byte 220 diagnostic monitoring type), Table 6-29
// (page 03h module and channel thresholds). Map: docs/reference.md §5.2.

#include <cstdint>
#include <span>

#include "collectors/optics/module_eeprom.h"

namespace fabricwatch::optics {

// Each span holds the page's bytes as read (empty = not read): `lower` bytes 0-127, the upper
// pages bytes 128-255 of page 00h and page 03h. A short span is a truncated page.
struct Sff8636Pages {
  std::span<const uint8_t> lower;
  std::span<const uint8_t> page00;
  std::span<const uint8_t> page03;
};

// Identity from page 00h; monitors, flags and LOS/fault from the lower page; thresholds from page
// 03h, only for a paged module (Flat_mem = 0). Diagnostics (ddm_supported) need page 00h: a
// passive copper cable (byte 147 transmitter technology 0xA/0xB) with no monitor bits in byte 220
// has none, and without page 00h nothing says whether the lower page monitors are real.
// Tx power is decoded only when byte 220 bit 2 says it is measured.
ModuleReading DecodeSff8636(const Sff8636Pages& pages);
// The same into `reading` (cleared first, its storage reused; see ModuleReading::Clear).
void DecodeSff8636(const Sff8636Pages& pages, ModuleReading& reading);

}  // namespace fabricwatch::optics
