#include "tests/testing/pci_config_images.h"

#include <algorithm>

namespace fabricwatch::testing {

PciConfigImage::PciConfigImage(uint16_t vendor, uint16_t device, uint32_t class_code)
    : bytes_(4096, 0) {
  Put16(0x00, vendor);                                // PCI_VENDOR_ID
  Put16(0x02, device);                                // PCI_DEVICE_ID
  Put32(0x08, class_code << 8);                       // PCI_CLASS_REVISION: class in bits 31:8
  if ((class_code >> 8) == 0x0604) Put8(0x0e, 0x01);  // PCI_HEADER_TYPE_BRIDGE
}

PciConfigImage& PciConfigImage::Put8(size_t at, uint8_t value) {
  bytes_.at(at) = value;
  return *this;
}
PciConfigImage& PciConfigImage::Put16(size_t at, uint16_t value) {
  Put8(at, static_cast<uint8_t>(value));
  return Put8(at + 1, static_cast<uint8_t>(value >> 8));
}
PciConfigImage& PciConfigImage::Put32(size_t at, uint32_t value) {
  Put16(at, static_cast<uint16_t>(value));
  return Put16(at + 2, static_cast<uint16_t>(value >> 16));
}

PciConfigImage& PciConfigImage::Cap(uint8_t at, uint8_t id, uint8_t next) {
  if (!has_caps_) {
    has_caps_ = true;
    Put16(0x06, static_cast<uint16_t>(bytes_[0x06] | 0x10));  // PCI_STATUS_CAP_LIST
    Put8(0x34, at);                                           // PCI_CAPABILITY_LIST
  }
  Put8(at, id);               // PCI_CAP_LIST_ID
  return Put8(at + 1, next);  // PCI_CAP_LIST_NEXT
}

PciConfigImage& PciConfigImage::Pcie(uint8_t at, uint8_t next, uint8_t port_type,
                                     uint8_t mps_supported, uint8_t mps, uint8_t mrrs) {
  Cap(at, 0x10, next);                                                 // PCI_CAP_ID_EXP
  Put16(at + 0x02, static_cast<uint16_t>(0x0002 | (port_type << 4)));  // PCI_EXP_FLAGS
  // PCI_EXP_DEVCAP: MPS supported in 2:0, plus Extended Tag (bit 5) and FLR (bit 28) as real
  // devices report them, so the decoder must mask.
  Put32(at + 0x04, 0x10000020u | (mps_supported & 0x7u));
  // PCI_EXP_DEVCTL: error reporting enables (3:0), relaxed ordering (4), MPS (7:5), Extended
  // Tag (8), No Snoop (11), MRRS (14:12).
  Put16(at + 0x08, static_cast<uint16_t>(0x091f | ((mps & 0x7) << 5) | ((mrrs & 0x7) << 12)));
  return *this;
}

PciConfigImage& PciConfigImage::ExtCap(uint16_t at, uint16_t id, uint16_t next) {
  return Put32(at, static_cast<uint32_t>(id) | (1u << 16) | (static_cast<uint32_t>(next) << 20));
}

PciConfigImage& PciConfigImage::Acs(uint16_t at, uint16_t next, uint16_t capability,
                                    uint16_t control) {
  ExtCap(at, 0x000d, next);          // PCI_EXT_CAP_ID_ACS
  Put16(at + 0x04, capability);      // PCI_ACS_CAP
  return Put16(at + 0x06, control);  // PCI_ACS_CTRL
}

std::vector<uint8_t> PciConfigImage::Bytes(size_t size) const {
  return std::vector<uint8_t>(bytes_.begin(),
                              bytes_.begin() + static_cast<long>(std::min(size, bytes_.size())));
}

PciConfigImage TypicalPciConfig(uint8_t port_type, uint8_t mps_supported, uint8_t mps, uint8_t mrrs,
                                std::optional<AcsRegs> acs) {
  const bool bridge = port_type == 4 || port_type == 5 || port_type == 6;
  PciConfigImage image(bridge ? 0x1000 : 0x15b3, bridge ? 0xc030 : 0x1021,
                       bridge ? 0x060400 : 0x020700);
  image
      .Cap(0x40, 0x01, 0x50)  // PCI_CAP_ID_PM
      .Cap(0x50, 0x11, 0x60)  // PCI_CAP_ID_MSIX
      .Pcie(0x60, 0x00, port_type, mps_supported, mps, mrrs);
  image.ExtCap(0x100, 0x0001, acs ? 0x148 : 0);  // PCI_EXT_CAP_ID_ERR (AER)
  if (acs) image.Acs(0x148, 0, acs->capability, acs->control);
  return image;
}

}  // namespace fabricwatch::testing
