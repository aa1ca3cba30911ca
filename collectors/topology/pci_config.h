#pragma once
// Pure parser of PCI configuration space, as <sysfs>/bus/pci/devices/<bdf>/config exposes it
// (docs/reference.md §6.1, §6.5; docs/design.md §5). No I/O.
//
// The kernel (drivers/pci/pci-sysfs.c, pci_read_config) returns the whole space only to
// CAP_SYS_ADMIN: 256 bytes (conventional) or 4096 (PCI Express extended space); any other
// reader gets the 64-byte header (128 for a CardBus bridge). A shorter buffer therefore means
// "not readable with this privilege": a field past its end is absent, never an error and
// never 0.
//
// Walked, with the offsets and masks of Linux include/uapi/linux/pci_regs.h:
//   - the capability list (PCI Local Bus 3.0 §6.7; PCIe Base Spec 7.5.1.1): PCI_STATUS (0x06)
//     bit PCI_STATUS_CAP_LIST (0x10) says a list exists, PCI_CAPABILITY_LIST (0x34) holds the
//     first pointer, each entry is PCI_CAP_LIST_ID (+0) and PCI_CAP_LIST_NEXT (+1); pointers
//     have their low 2 bits masked (reserved, as the kernel's __pci_find_next_cap_ttl does)
//     and must lie at or above 0x40 (past the header);
//   - to the PCI Express capability, PCI_CAP_ID_EXP (0x10), PCIe Base Spec 7.5.3:
//       PCI_EXP_FLAGS  (+0x02) bits 7:4 PCI_EXP_FLAGS_TYPE: Device/Port Type;
//       PCI_EXP_DEVCAP (+0x04) bits 2:0 PCI_EXP_DEVCAP_PAYLOAD: Max_Payload_Size Supported;
//       PCI_EXP_DEVCTL (+0x08) bits 7:5 PCI_EXP_DEVCTL_PAYLOAD: Max_Payload_Size,
//                              bits 14:12 PCI_EXP_DEVCTL_READRQ: Max_Read_Request_Size;
//     each size encoded as 128 << n bytes, n = 0..5 (6 and 7 are reserved);
//   - only in a 4096-byte buffer, the extended capability list from 0x100
//     (PCI_CFG_SPACE_SIZE; PCIe Base Spec 7.6.3): header dword with PCI_EXT_CAP_ID (bits 15:0)
//     and PCI_EXT_CAP_NEXT (bits 31:20, low 2 bits masked), to the ACS extended capability,
//     PCI_EXT_CAP_ID_ACS (0x000D), PCIe Base Spec 7.7.8: PCI_ACS_CAP (+0x04) and PCI_ACS_CTRL
//     (+0x06), 16 bits each, with the bits PCI_ACS_SV 0, PCI_ACS_TB 1, PCI_ACS_RR 2,
//     PCI_ACS_CR 3, PCI_ACS_UF 4, PCI_ACS_EC 5, PCI_ACS_DT 6.
//
// Errors: a buffer shorter than the 64-byte header, or a vendor ID of 0xffff (the all-ones a
// read of a removed or dead function returns), is an error for the whole device. A broken list
// (a loop, a pointer into the header, a capability that runs past the end of a full space, a
// reserved size encoding) is a `problem`: the walk stops there and what was decoded before it
// is kept.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

#include "base/status.h"

namespace fabricwatch::topology {

// The ACS Capability / Control bits (PCIe Base Spec 7.7.8.2, 7.7.8.3), in bit order, with the
// label value the collector exports for each.
struct AcsBit {
  uint16_t mask;
  std::string_view name;
};
inline constexpr AcsBit kAcsBits[] = {
    {0x0001, "source_validation"},     // PCI_ACS_SV
    {0x0002, "translation_blocking"},  // PCI_ACS_TB
    {0x0004, "request_redirect"},      // PCI_ACS_RR
    {0x0008, "completion_redirect"},   // PCI_ACS_CR
    {0x0010, "upstream_forwarding"},   // PCI_ACS_UF
    {0x0020, "egress_control"},        // PCI_ACS_EC
    {0x0040, "direct_translated"},     // PCI_ACS_DT
};

struct PciConfig {
  size_t size = 0;  // bytes readable
  // PCI Express capability; nullopt: no capability, or beyond what was readable.
  std::optional<uint8_t> pcie_offset;
  std::optional<uint8_t> port_type;               // PCI_EXP_FLAGS_TYPE >> 4 (PCI_EXP_TYPE_*)
  std::optional<uint32_t> max_payload_supported;  // bytes, DevCap
  std::optional<uint32_t> max_payload;            // bytes, DevCtl
  std::optional<uint32_t> max_read_request;       // bytes, DevCtl
  // ACS extended capability; only in a 4096-byte buffer.
  std::optional<uint16_t> acs_offset;
  std::optional<uint16_t> acs_capability;  // PCI_ACS_CAP
  std::optional<uint16_t> acs_control;     // PCI_ACS_CTRL
  // The first structural problem met (the walk stopped there); nullopt when none.
  std::optional<Status> problem;
};

// `what` names the source in errors (the config file's path).
Result<PciConfig> ParsePciConfig(std::span<const uint8_t> bytes, std::string_view what);

// PCI_EXP_TYPE_* name of a Device/Port Type (PCIe Base Spec 7.5.3.2): "endpoint",
// "legacy_endpoint", "root_port", "upstream_port", "downstream_port", "pcie_pci_bridge",
// "pci_pcie_bridge", "rc_endpoint", "rc_event_collector"; "unknown" for reserved values.
std::string_view PortTypeName(uint8_t type);

}  // namespace fabricwatch::topology
