#include "collectors/topology/pci_config.h"

#include <bitset>
#include <cstdio>
#include <string>

namespace fabricwatch::topology {
namespace {

// include/uapi/linux/pci_regs.h
constexpr size_t kHeaderSize = 0x40;         // standard header; capabilities start here
constexpr size_t kCfgSpaceSize = 0x100;      // PCI_CFG_SPACE_SIZE
constexpr size_t kCfgSpaceExpSize = 0x1000;  // PCI_CFG_SPACE_EXP_SIZE
constexpr size_t kVendorId = 0x00;           // PCI_VENDOR_ID
constexpr size_t kStatus = 0x06;             // PCI_STATUS
constexpr uint16_t kStatusCapList = 0x10;    // PCI_STATUS_CAP_LIST
constexpr size_t kCapabilityList = 0x34;     // PCI_CAPABILITY_LIST
constexpr uint8_t kCapIdExp = 0x10;          // PCI_CAP_ID_EXP
constexpr size_t kExpFlags = 0x02;           // PCI_EXP_FLAGS
constexpr uint16_t kExpFlagsType = 0x00f0;   // PCI_EXP_FLAGS_TYPE
constexpr size_t kExpDevCap = 0x04;          // PCI_EXP_DEVCAP
constexpr uint32_t kDevCapPayload = 0x07;    // PCI_EXP_DEVCAP_PAYLOAD
constexpr size_t kExpDevCtl = 0x08;          // PCI_EXP_DEVCTL
constexpr uint16_t kDevCtlPayload = 0x00e0;  // PCI_EXP_DEVCTL_PAYLOAD
constexpr uint16_t kDevCtlReadRq = 0x7000;   // PCI_EXP_DEVCTL_READRQ
constexpr uint16_t kExtCapIdAcs = 0x000d;    // PCI_EXT_CAP_ID_ACS
constexpr size_t kAcsCap = 0x04;             // PCI_ACS_CAP
constexpr size_t kAcsCtrl = 0x06;            // PCI_ACS_CTRL

uint16_t Le16(std::span<const uint8_t> b, size_t at) {
  return static_cast<uint16_t>(b[at] | (b[at + 1] << 8));
}
uint32_t Le32(std::span<const uint8_t> b, size_t at) {
  return static_cast<uint32_t>(b[at]) | (static_cast<uint32_t>(b[at + 1]) << 8) |
         (static_cast<uint32_t>(b[at + 2]) << 16) | (static_cast<uint32_t>(b[at + 3]) << 24);
}

std::string Hex(size_t value) {
  char text[16];
  std::snprintf(text, sizeof text, "0x%03zx", value);
  return text;
}

// A buffer shorter than the full space (64 or 128 bytes to an unprivileged reader) hides
// everything past its end; a full one (256 or 4096) hides nothing.
bool Full(size_t size) { return size == kCfgSpaceSize || size == kCfgSpaceExpSize; }

class Walker {
 public:
  Walker(std::span<const uint8_t> bytes, std::string_view what, PciConfig& out)
      : b_(bytes), what_(what), out_(out) {}

  void Problem(const std::string& message) {
    if (!out_.problem) {
      out_.problem = Status(StatusCode::kInvalidArgument, std::string(what_) + ": " + message);
    }
  }

  // A field of `width` bytes at `at`: readable, hidden by a truncated buffer (false, no
  // problem), or past the end of a full space (false, a problem).
  bool Reaches(size_t at, size_t width, std::string_view field) {
    if (at + width <= b_.size()) return true;
    if (Full(b_.size())) {
      Problem(std::string(field) + " at " + Hex(at) + " runs past the end of the " +
              std::to_string(b_.size()) + "-byte config space");
    }
    return false;
  }

  // 128 << n bytes for n = 0..5 (PCIe Base Spec 7.5.3.3, 7.5.3.4); 6 and 7 are reserved.
  std::optional<uint32_t> Size(unsigned code, std::string_view field) {
    if (code <= 5) return 128u << code;
    Problem(std::string(field) + " holds the reserved encoding " + std::to_string(code));
    return std::nullopt;
  }

  void PcieCapability(size_t at) {
    out_.pcie_offset = static_cast<uint8_t>(at);
    if (Reaches(at + kExpFlags, 2, "PCI Express Capabilities register")) {
      out_.port_type = static_cast<uint8_t>((Le16(b_, at + kExpFlags) & kExpFlagsType) >> 4);
    }
    if (Reaches(at + kExpDevCap, 4, "Device Capabilities register")) {
      out_.max_payload_supported =
          Size(Le32(b_, at + kExpDevCap) & kDevCapPayload, "Max_Payload_Size Supported");
    }
    if (Reaches(at + kExpDevCtl, 2, "Device Control register")) {
      const uint16_t ctl = Le16(b_, at + kExpDevCtl);
      out_.max_payload = Size((ctl & kDevCtlPayload) >> 5, "Max_Payload_Size");
      out_.max_read_request = Size((ctl & kDevCtlReadRq) >> 12, "Max_Read_Request_Size");
    }
  }

  // The standard list: 8-bit pointers, each at or above 0x40, low 2 bits masked.
  void Capabilities() {
    if (!(Le16(b_, kStatus) & kStatusCapList)) return;
    std::bitset<kCfgSpaceSize / 4> seen;
    size_t at = b_[kCapabilityList] & ~size_t{3};
    while (at != 0) {
      if (at < kHeaderSize) {
        Problem("capability pointer " + Hex(at) + " points into the 64-byte header");
        return;
      }
      if (seen[at / 4]) {
        Problem("capability list loops back to " + Hex(at));
        return;
      }
      seen[at / 4] = true;
      if (!Reaches(at, 2, "capability")) return;  // hidden past a truncated buffer
      if (b_[at] == kCapIdExp) {
        PcieCapability(at);
        return;
      }
      at = b_[at + 1] & ~size_t{3};
    }
  }

  // The extended list (PCIe Base Spec 7.6.3): from 0x100, 12-bit next pointers.
  void ExtendedCapabilities() {
    if (b_.size() != kCfgSpaceExpSize) return;
    std::bitset<kCfgSpaceExpSize / 4> seen;
    size_t at = kCfgSpaceSize;
    while (at != 0) {
      if (at < kCfgSpaceSize) {
        Problem("extended capability pointer " + Hex(at) + " points below 0x100");
        return;
      }
      if (seen[at / 4]) {
        Problem("extended capability list loops back to " + Hex(at));
        return;
      }
      seen[at / 4] = true;
      const uint32_t header = Le32(b_, at);  // at ≤ 0xffc: always inside 4096 bytes
      // An empty list reads 0 (or all ones on a device that has none).
      if (header == 0 || header == 0xffffffff) return;
      if ((header & 0xffff) == kExtCapIdAcs) {
        out_.acs_offset = static_cast<uint16_t>(at);
        if (Reaches(at + kAcsCtrl, 2, "ACS extended capability")) {
          out_.acs_capability = Le16(b_, at + kAcsCap);
          out_.acs_control = Le16(b_, at + kAcsCtrl);
        }
        return;
      }
      at = (header >> 20) & 0xffc;  // PCI_EXT_CAP_NEXT
    }
  }

 private:
  std::span<const uint8_t> b_;
  std::string_view what_;
  PciConfig& out_;
};

}  // namespace

Result<PciConfig> ParsePciConfig(std::span<const uint8_t> bytes, std::string_view what) {
  if (bytes.size() < kHeaderSize) {
    return Error(StatusCode::kInvalidArgument,
                 std::string(what) + ": " + std::to_string(bytes.size()) +
                     " bytes, shorter than the 64-byte PCI configuration header");
  }
  if (bytes.size() > kCfgSpaceExpSize) {
    return Error(StatusCode::kInvalidArgument,
                 std::string(what) + ": " + std::to_string(bytes.size()) +
                     " bytes, longer than the 4096-byte PCI Express configuration space");
  }
  if (Le16(bytes, kVendorId) == 0xffff) {
    return Error(
        StatusCode::kUnavailable,
        std::string(what) + ": vendor ID reads 0xffff: the function is gone or not responding");
  }
  PciConfig out;
  out.size = bytes.size();
  Walker walker(bytes, what, out);
  walker.Capabilities();
  walker.ExtendedCapabilities();
  return out;
}

std::string_view PortTypeName(uint8_t type) {
  switch (type) {  // PCI_EXP_TYPE_*
    case 0x0:
      return "endpoint";
    case 0x1:
      return "legacy_endpoint";
    case 0x4:
      return "root_port";
    case 0x5:
      return "upstream_port";
    case 0x6:
      return "downstream_port";
    case 0x7:
      return "pcie_pci_bridge";
    case 0x8:
      return "pci_pcie_bridge";
    case 0x9:
      return "rc_endpoint";
    case 0xa:
      return "rc_event_collector";
    default:
      return "unknown";
  }
}

}  // namespace fabricwatch::topology
