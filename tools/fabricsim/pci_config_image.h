#pragma once
// PCI configuration space of a simulated function, as <sysfs>/bus/pci/devices/<bdf>/config
// exposes it to CAP_SYS_ADMIN (docs/design.md §5, "The PCI config file"): 4096 bytes,
// little-endian, with a real capability list at the offsets of Linux
// include/uapi/linux/pci_regs.h:
//
//   0x00  vendor, device; 0x04 command; 0x06 status (PCI_STATUS_CAP_LIST); 0x08 revision and
//         class code; 0x0e header type (0 endpoint, 1 bridge; bit 7 multi-function);
//         bridges: 0x18 primary/secondary/subordinate bus; 0x34 capabilities pointer -> 0x40
//   0x40  Power Management (ID 0x01) -> 0x50 MSI-X (0x11, endpoints) or MSI (0x05, bridges)
//         -> 0x60 PCI Express (0x10, version 2; PCIe Base Spec 7.5.3):
//           +0x02 flags: Device/Port Type bits 7:4
//           +0x04 Device Capabilities: Max_Payload_Size Supported bits 2:0
//           +0x08 Device Control: Max_Payload_Size bits 7:5, Max_Read_Request_Size bits 14:12
//           +0x0c Link Capabilities: max speed bits 3:0, max width bits 9:4, port number 31:24
//           +0x12 Link Status: current speed 3:0, negotiated width 9:4, DLL Link Active (ports)
//                 (link_gts_now/link_width_now when set, else the maximum)
//           +0x2c Link Capabilities 2: supported speeds vector; +0x30 Link Control 2: target
//   0x100 AER (extended ID 0x0001) -> 0x148 ACS (0x000d; PCIe Base Spec 7.7.8, ports with
//         acs only): +0x04 ACS Capability, +0x06 ACS Control (SV 0, TB 1, RR 2, CR 3, UF 4,
//         EC 5, DT 6).
//
// Sizes are encoded as 128 << n bytes (n = 0..5). Pure; no I/O.

#include <cstdint>
#include <optional>
#include <vector>

namespace fabricwatch::sim {

// PCI_EXP_TYPE_* (Device/Port Type).
inline constexpr uint8_t kPcieEndpoint = 0x0, kPcieRootPort = 0x4, kPcieUpstreamPort = 0x5,
                         kPcieDownstreamPort = 0x6;
// ACS Capability/Control bits.
inline constexpr uint16_t kAcsSourceValidation = 0x0001, kAcsRequestRedirect = 0x0004,
                          kAcsCompletionRedirect = 0x0008, kAcsUpstreamForwarding = 0x0010;

struct PciConfigSpec {
  uint16_t vendor = 0;
  uint16_t device = 0;
  uint32_t class_code = 0;
  bool multi_function = false;
  uint8_t port_type = kPcieEndpoint;  // bridges: root, upstream or downstream port
  uint8_t secondary_bus = 0;          // bridges
  uint8_t subordinate_bus = 0;
  uint8_t port_number = 0;  // Link Capabilities bits 31:24 (ports)
  // Size codes n: 128 << n bytes.
  uint8_t mps_supported = 2;
  uint8_t mps = 1;
  uint8_t mrrs = 2;
  double link_gts = 32.0;  // the maximum (Link Capabilities)
  int link_width = 16;
  // What the link trained at (Link Status); 0: the maximum. pcie_downtrain lowers them.
  double link_gts_now = 0;
  int link_width_now = 0;
  struct Acs {
    uint16_t capability;
    uint16_t control;
  };
  std::optional<Acs> acs;
};

// The size code of `bytes` (128 -> 0 ... 4096 -> 5); bytes must be one of those.
uint8_t SizeCode(int bytes);

// The 4096-byte image.
std::vector<uint8_t> RenderPciConfig(const PciConfigSpec& spec);

}  // namespace fabricwatch::sim
