// libFuzzer target for the PCI config-space parser (collectors/topology/pci_config.h
// ParsePciConfig, the replay format of <sysfs>/bus/pci/devices/<bdf>/config, issue 21): the
// file's bytes.
//
// Besides the sanitizers' checks, every result must honour the parser's contract: errors and
// problems carry a message, sizes are 128 << n with n ≤ 5, capabilities lie where the buffer
// reaches them (the PCIe one past the header, the ACS one in the extended space of a 4096-byte
// buffer), and a field is never reported past the end of the buffer.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <span>

#include "collectors/topology/pci_config.h"

namespace {

void Check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "invariant violated: %s\n", what);
    std::abort();
  }
}

void CheckSize(const std::optional<uint32_t>& bytes) {
  if (!bytes) return;
  Check(*bytes >= 128 && *bytes <= 4096 && (*bytes & (*bytes - 1)) == 0,
        "a size that is not 128 << n, n <= 5");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto parsed =
      fabricwatch::topology::ParsePciConfig(std::span<const uint8_t>(data, size), "fuzz/config");
  if (!parsed) {
    Check(!parsed.error().message().empty(), "an error without a message");
    Check(size < 64 || size > 4096 || (data[0] == 0xff && data[1] == 0xff),
          "an error for a well-sized buffer with a vendor ID");
    return 0;
  }
  const auto& c = *parsed;
  Check(c.size == size, "size not the buffer's");
  Check(!c.problem || !c.problem->message().empty(), "a problem without a message");
  CheckSize(c.max_payload_supported);
  CheckSize(c.max_payload);
  CheckSize(c.max_read_request);
  if (c.pcie_offset) {
    Check(*c.pcie_offset >= 0x40 && (*c.pcie_offset & 3) == 0, "a PCIe capability off the list");
    if (c.max_payload) Check(*c.pcie_offset + 0x0aU <= size, "DevCtl past the buffer");
    if (c.max_payload_supported) Check(*c.pcie_offset + 0x08U <= size, "DevCap past the buffer");
  } else {
    Check(!c.port_type && !c.max_payload && !c.max_payload_supported && !c.max_read_request,
          "PCIe fields without the capability");
  }
  if (c.acs_offset) {
    Check(size == 4096, "ACS outside a 4096-byte buffer");
    Check(*c.acs_offset >= 0x100 && (*c.acs_offset & 3) == 0, "ACS off the extended list");
    Check(c.acs_control.has_value() == c.acs_capability.has_value(), "half an ACS capability");
  } else {
    Check(!c.acs_control && !c.acs_capability, "ACS registers without the capability");
  }
  return 0;
}
