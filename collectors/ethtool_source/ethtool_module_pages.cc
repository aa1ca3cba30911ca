#include "collectors/ethtool_source/ethtool_module_pages.h"

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <string>
#include <string_view>

#include "collectors/ethtool_source/sff8024.h"

namespace fabricwatch::sys {
namespace {

// ETH_MODULE_EEPROM_PAGE_LEN (K include/linux/ethtool.h): one request reads at most a half page.
constexpr size_t kHalfPage = 128;

// ---------------------------------------------------------------- module memory (docs/reference.md
// §5)
constexpr uint8_t kI2cA0 = 0x50;  // A0h: SFF-8472 serial ID, and the only address of QSFP/CMIS
constexpr uint8_t kI2cA2 = 0x51;  // A2h: SFF-8472 diagnostics
bool IsSff8472(uint8_t id) { return MemoryMapOfIdentifier(id) == ModuleMemoryMap::kSff8472; }
bool IsSff8636(uint8_t id) { return MemoryMapOfIdentifier(id) == ModuleMemoryMap::kSff8636; }
bool IsCmis(uint8_t id) { return MemoryMapOfIdentifier(id) == ModuleMemoryMap::kCmis; }
constexpr size_t kSff8472DiagType = 92;  // A0h: bit 6 digital diagnostics implemented
constexpr uint8_t kSff8472DdmBit = 1u << 6;
constexpr size_t kSff8636Status = 2;          // lower page: bit 2 Flat_mem
constexpr uint8_t kSff8636FlatMem = 1u << 2;  // E qsfp.h SFF8636_STATUS_PAGE_3_PRESENT (sic)
constexpr size_t kSff8636Options4 = 195;      // page 00h (E qsfp.h SFF8636_OPTION_4_OFFSET)
constexpr uint8_t kSff8636Page01 = 1u << 6;   // SFF8636_O4_PAGE_01_PRESENT
constexpr uint8_t kSff8636Page02 = 1u << 7;   // SFF8636_O4_PAGE_02_PRESENT
constexpr size_t kCmisMemoryModel = 2;        // lower page: bit 7 flat memory
constexpr uint8_t kCmisFlat = 1u << 7;

}  // namespace

std::vector<ModulePageRead> ModulePagesToRead(std::span<const uint8_t> known) {
  auto byte = [known](size_t address) -> uint8_t {
    return address < known.size() ? known[address] : 0;
  };
  auto upper = [](uint8_t page, uint16_t image_offset, uint8_t i2c = kI2cA0) {
    return ModulePageRead{i2c, page, 0, kHalfPage, kHalfPage, image_offset};
  };
  std::vector<ModulePageRead> reads = {ModulePageRead{kI2cA0, 0, 0, 0, kHalfPage, 0}};
  if (known.empty()) return reads;  // the identifier decides the rest
  const uint8_t id = known[0];
  reads.push_back(upper(0x00, 128));  // A0h upper / page 00h, for every module type
  if (IsSff8472(id)) {
    // A2h has no page select in this sense: its two halves are page 0 offsets 0 and 128.
    if ((byte(kSff8472DiagType) & kSff8472DdmBit) != 0) {
      reads.push_back(ModulePageRead{kI2cA2, 0, 0, 0, kHalfPage, 256});
      reads.push_back(upper(0x00, 384, kI2cA2));
    }
  } else if (IsSff8636(id)) {
    if ((byte(kSff8636Status) & kSff8636FlatMem) == 0) {
      // Pages 01h/02h are optional (advertised on page 00h); 03h exists in every paged module.
      const uint8_t options = byte(kSff8636Options4);
      if ((options & kSff8636Page01) != 0) reads.push_back(upper(0x01, 256));
      if ((options & kSff8636Page02) != 0) reads.push_back(upper(0x02, 384));
      reads.push_back(upper(0x03, 512));
    }
  } else if (IsCmis(id)) {
    if ((byte(kCmisMemoryModel) & kCmisFlat) == 0) {
      reads.push_back(upper(0x01, 256));
      reads.push_back(upper(0x02, 384));
      reads.push_back(upper(0x10, 512));
      reads.push_back(upper(0x11, 640));
    }
  }
  return reads;
}

Result<std::vector<uint8_t>> ReadModuleImage(const ModuleReader& read) {
  std::vector<uint8_t> image;
  for (;;) {
    const std::vector<ModulePageRead> plan = ModulePagesToRead(image);
    auto next = std::find_if(plan.begin(), plan.end(), [&](const ModulePageRead& entry) {
      return entry.image_offset >= image.size();
    });
    if (next == plan.end()) return image;
    const bool lower = next->image_offset == 0;
    // A driver may read less than asked (mlx5 stops at a 0-byte MCIA answer): ask for the rest.
    std::vector<uint8_t> bytes;
    while (bytes.size() < next->length) {
      ModulePageRead part = *next;
      part.offset = static_cast<uint8_t>(next->offset + bytes.size());
      part.length = static_cast<uint8_t>(next->length - bytes.size());
      auto data = read(part);
      if (!data) {
        const int err = data.error().sys_errno();
        if (!lower && bytes.empty() && (err == EINVAL || err == EOPNOTSUPP)) return image;
        return Error(data.error());
      }
      if (data->size() > part.length) {
        return Error(StatusCode::kInvalidArgument,
                     "malformed module EEPROM read: " + std::to_string(data->size()) +
                         " bytes for a request of " + std::to_string(part.length));
      }
      if (data->empty()) break;
      bytes.insert(bytes.end(), data->begin(), data->end());
    }
    if (bytes.empty()) {
      if (!lower) return image;
      return Error(Status(StatusCode::kNoData,
                          "module EEPROM: the driver read no byte of the lower page (no module "
                          "answered)"));
    }
    image.resize(next->image_offset, 0);  // a skipped optional page reads as zeros
    image.insert(image.end(), bytes.begin(), bytes.end());
    if (bytes.size() < next->length) return image;  // a later page would land at a wrong offset
  }
}

Status ModuleEepromErrorStatus(const Status& error, bool first_read, bool netdev_exists) {
  const int err = error.sys_errno();
  std::string_view why;
  if (err == ENODEV && netdev_exists) {
    why = "no module in the cage";  // K drivers/net/phy/sfp.c: !(sfp->state & SFP_F_PRESENT)
  } else if (first_read && (err == EIO || err == ENXIO || err == EREMOTEIO)) {
    why = "no module answered";  // mlx5 MCIA status, I2C address not ACKed
  } else if (first_read && err == EINVAL &&
             error.message().find("not inserted") != std::string::npos) {
    why = "no module in the cage";  // bnxt_en extack "Transceiver module not inserted"
  } else {
    return error;
  }
  return Status(StatusCode::kNoData, error.message() + " (" + std::string(why) + ")", err);
}

}  // namespace fabricwatch::sys
