#pragma once
// CMIS (Common Management Interface Specification) 3.0-5.x for QSFP-DD, OSFP, QSFP112, ...
// Spec: OIF-CMIS-05.2 (layout unchanged since CMIS 4.0): Table 8-4 (lower page byte 2 memory
// model, byte 3 module state), Table 8-8 (byte 9 module flags), Table 8-10 (bytes 14-17 module
// monitors), Table 8-19 (byte 85 media type, bytes 86+ application descriptors), Table 8-24..8-28
// (page 00h identity), Table 8-42/8-43 (page 01h bytes 138-139 wavelength, 142 banks, 159-160
// monitor advertisement incl. the Tx bias multiplier), Table 8-61 (page 02h thresholds),
// Tables 8-77..8-80 (page 11h lane flags and monitors). Map: docs/reference.md §5.3.

#include <cstdint>
#include <span>

#include "collectors/optics/module_eeprom.h"

namespace fabricwatch::optics {

// Each span holds the page's bytes as read (empty = not read): `lower` bytes 0-127, the upper
// pages bytes 128-255 (pages 10h/11h of bank 0). A short span is a truncated page.
struct CmisPages {
  std::span<const uint8_t> lower;
  std::span<const uint8_t> page00;
  std::span<const uint8_t> page01;
  std::span<const uint8_t> page02;
  std::span<const uint8_t> page10;
  std::span<const uint8_t> page11;
};

// Module monitors (temperature, Vcc) come from the lower page when page 01h byte 159 advertises
// them; for a flat-memory module (no page 01h) they are decoded unless the media is passive
// copper. Thresholds from page 02h, lane monitors and flags from page 11h (bank 0), each only
// where page 01h byte 160 advertises the monitor. Tx bias LSB = 2 µA × the multiplier of byte
// 160 bits 4-3 (×1, ×2, ×4), applied to monitors and thresholds alike (see cmis.cc).
ModuleReading DecodeCmis(const CmisPages& pages);
// The same into `reading` (cleared first, its storage reused; see ModuleReading::Clear).
void DecodeCmis(const CmisPages& pages, ModuleReading& reading);

}  // namespace fabricwatch::optics
