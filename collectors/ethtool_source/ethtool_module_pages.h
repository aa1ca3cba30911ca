#pragma once
// Module EEPROM page planning (docs/reference.md §5): which half pages make up the flat image of
// docs/design.md §5 for a module type, how they are assembled from reads that may come back short
// or refused, and which failures mean "no module in the cage". Pure: the reads themselves are a
// callback (KernelEthtool's ETHTOOL_MSG_MODULE_EEPROM_GET path), so all of it is tested without a
// kernel.
//
// Thread-safety: stateless functions; safe from any thread.

#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "base/status.h"

namespace fabricwatch::sys {

// One ETHTOOL_MSG_MODULE_EEPROM_GET read: `length` bytes from `offset` of page `page` (bank `bank`)
// behind I2C address `i2c_address`, stored at `image_offset` of the flat image (docs/design.md §5).
// offset + length never crosses 128 (the kernel's half-page rule, K net/ethtool/eeprom.c
// eeprom_parse_request), and a page other than 0 is only read at offset 128.
struct ModulePageRead {
  uint8_t i2c_address = 0x50;
  uint8_t page = 0;
  uint8_t bank = 0;
  uint8_t offset = 0;    // 0: lower half (page 0), 128: upper half
  uint8_t length = 128;  // 1-128
  uint16_t image_offset = 0;
  friend bool operator==(const ModulePageRead&, const ModulePageRead&) = default;
};

// The reads that make up the flat image, in image order, given `known`: the image read so far
// (empty, the lower page, or more). Each call plans with what it is given, so a caller reads the
// first entry whose image_offset is at or past known.size() and asks again (docs/reference.md §5):
// - always: lower page (0x50, page 0, offset 0) at 0;
// - SFF-8472 (identifier 0x03): A0h upper (0x50, page 0, offset 128) at 128; when A0h byte 92 bit 6
//   (DDM implemented) is set, A2h (0x51, page 0) offset 0 at 256 and offset 128 at 384;
// - SFF-8636/8436 (0x0C, 0x0D, 0x11): page 00h at 128; unless lower byte 2 bit 2 (Flat_mem) is set:
//   page 01h at 256 when page 00h byte 195 bit 6 says it exists, page 02h at 384 when bit 7 does
//   (both unknown, so skipped, until page 00h is known), and page 03h (thresholds) at 512. A
//   skipped page is a gap the caller fills with zeros, so page 03h stays at 512;
// - CMIS (0x18, 0x19, 0x1B, 0x1E, 0x1F, 0x20): page 00h at 128; unless lower byte 2 bit 7 (flat
//   memory) is set: pages 01h, 02h, 10h, 11h of bank 0 at 256, 384, 512, 640;
// - any other identifier (or none yet known): upper page 00h at 128.
// A condition byte that `known` does not hold counts as clear.
std::vector<ModulePageRead> ModulePagesToRead(std::span<const uint8_t> known);

// Assembles the flat image with `read`, one ModulePagesToRead() entry at a time; after a short read
// the rest of that half page is asked for again. `read` returns the bytes (at most part.length) or
// the failure, with its errno. Rules: a failure of the lower page (image_offset 0) is returned as
// is; a later page that fails with EINVAL or EOPNOTSUPP before any byte, or reads no byte, ends the
// image there (those pages are absent); a page read short ends the image after its bytes; any
// other failure is returned. kNoData when the lower page reads no byte at all. The image is at
// most 768 bytes and a skipped optional page (SFF-8636 01h/02h) is zeros.
using ModuleReader = std::function<Result<std::vector<uint8_t>>(const ModulePageRead& part)>;
Result<std::vector<uint8_t>> ReadModuleImage(const ModuleReader& read);

// The status ModuleEeprom() gives for a failed read (`error` as the netlink or ioctl path built it,
// errno and extack text in it): kNoData for the "no module" answers that ethtool_kernel.h lists
// (`first_read`: the lower page, or ETHTOOL_GMODULEINFO; `netdev_exists`: SIOCGIFINDEX found the
// netdev), otherwise `error` unchanged.
Status ModuleEepromErrorStatus(const Status& error, bool first_read, bool netdev_exists);

}  // namespace fabricwatch::sys
