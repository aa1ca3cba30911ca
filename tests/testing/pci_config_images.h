#pragma once
// PCI configuration-space images built byte by byte (the binary of
// <sysfs>/bus/pci/devices/<bdf>/config, docs/design.md §5): the standard header, a capability
// list with the PCI Express capability (PCIe Base Spec 7.5.3) and an extended capability list
// with ACS (7.7.8), at the offsets of Linux include/uapi/linux/pci_regs.h. Shared by the parser
// tests, the topology collector tests and the fuzz seeds (tools/fuzz/make_seeds.cc).

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

namespace fabricwatch::testing {

class PciConfigImage {
 public:
  // A 4096-byte space (zero-filled) with vendor/device IDs and class code, no capabilities.
  explicit PciConfigImage(uint16_t vendor = 0x15b3, uint16_t device = 0x1021,
                          uint32_t class_code = 0x020700);

  PciConfigImage& Put8(size_t at, uint8_t value);
  PciConfigImage& Put16(size_t at, uint16_t value);
  PciConfigImage& Put32(size_t at, uint32_t value);
  // A standard capability header at `at` (ID, next). The first one called also sets
  // PCI_STATUS_CAP_LIST and PCI_CAPABILITY_LIST (0x34) to `at`.
  PciConfigImage& Cap(uint8_t at, uint8_t id, uint8_t next);
  // The PCI Express capability (ID 0x10, version 2) at `at`: port type (PCI_EXP_TYPE_*), and
  // the size codes n (128 << n bytes) of MPS supported (DevCap), MPS and MRRS (DevCtl).
  PciConfigImage& Pcie(uint8_t at, uint8_t next, uint8_t port_type, uint8_t mps_supported,
                       uint8_t mps, uint8_t mrrs);
  // An extended capability header at `at` (ID, version 1, next).
  PciConfigImage& ExtCap(uint16_t at, uint16_t id, uint16_t next);
  // The ACS extended capability (ID 0x000d) with its Capability and Control registers.
  PciConfigImage& Acs(uint16_t at, uint16_t next, uint16_t capability, uint16_t control);

  // The first `size` bytes (64 as an unprivileged reader sees them, 256, or 4096).
  std::vector<uint8_t> Bytes(size_t size = 4096) const;

 private:
  std::vector<uint8_t> bytes_;
  bool has_caps_ = false;
};

// A ConnectX-like endpoint or switch port: power management (0x40) -> MSI-X (0x50) ->
// PCI Express (0x60); extended list AER (0x100) -> ACS (0x148, when acs is given) -> 0.
struct AcsRegs {
  uint16_t capability;
  uint16_t control;
};
PciConfigImage TypicalPciConfig(uint8_t port_type, uint8_t mps_supported, uint8_t mps, uint8_t mrrs,
                                std::optional<AcsRegs> acs = std::nullopt);

}  // namespace fabricwatch::testing
