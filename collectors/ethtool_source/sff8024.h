#pragma once
// SFF-8024 Rev 4.11 Table 4-1: which memory map a module's identifier byte (byte 0 of its
// EEPROM) means. The one grouping of identifiers: the module-page planner (which pages to ask
// the kernel for, ethtool_module_pages.cc) and the optics decoders (optics/module_eeprom.cc)
// both read it from here.

#include <cstdint>

namespace fabricwatch::sys {

enum class ModuleMemoryMap { kUnknown, kSff8472, kSff8636, kCmis };

constexpr ModuleMemoryMap MemoryMapOfIdentifier(uint8_t identifier) {
  switch (identifier) {
    case 0x03:  // SFP/SFP+/SFP28
      return ModuleMemoryMap::kSff8472;
    case 0x0C:  // QSFP (INF-8438)
    case 0x0D:  // QSFP+ (SFF-8436 or SFF-8636)
    case 0x11:  // QSFP28 (SFF-8636)
      return ModuleMemoryMap::kSff8636;
    case 0x18:  // QSFP-DD
    case 0x19:  // OSFP
    case 0x1B:  // DSFP
    case 0x1E:  // QSFP+ or later with CMIS (QSFP112)
    case 0x1F:  // SFP-DD with CMIS
    case 0x20:  // SFP+ and later with CMIS
      return ModuleMemoryMap::kCmis;
    default:
      return ModuleMemoryMap::kUnknown;
  }
}

}  // namespace fabricwatch::sys
