// The kernel log pattern table (collectors/sys/kmsg_patterns.h) against the real lines of
// docs/reference.md §9: every example there matches the event the table promises, both
// spellings where the kernel reworded a line, and the table itself is well-formed.

#include "collectors/sys/kmsg_patterns.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

namespace fabricwatch::sys {
namespace {

struct Case {
  const char* line;
  const char* event;  // nullptr: no pattern matches
};

// Lines as /dev/kmsg gives them, unescaped (docs/reference.md §9.3–§9.9).
const Case kCases[] = {
    // mlx5 health (§9.3), current and older wording.
    {"mlx5_core 0000:3b:00.0: poll_health:836:(pid 0): Fatal error 1 detected", "fw_fatal"},
    {"mlx5_core 0000:3b:00.0: poll_health:822:(pid 0): device's health compromised - reached "
     "miss count",
     "health_compromised"},
    {"mlx5_core 0000:3b:00.0: poll_health:800:(pid 0): device's health compromised",
     "health_compromised"},
    {"mlx5_core 0000:3b:00.0: print_health_info:431:(pid 0): Health issue observed, firmware "
     "internal error, severity(3) ERROR:",
     "health_syndrome"},
    {"mlx5_core 0000:3b:00.0: print_health_info:450:(pid 0): synd 0x1: firmware internal error",
     "health_syndrome"},
    {"mlx5_core 0000:3b:00.0: print_health_info:440:(pid 0): assert_var[0] 0x00000000",
     "health_dump"},
    {"mlx5_core 0000:3b:00.0: print_health_info:455:(pid 0): ext_synd 0x8005", "health_dump"},
    {"mlx5_core 0000:3b:00.0: mlx5_health_try_recover:339:(pid 7): PCI slot is unavailable",
     "pci_slot_unavailable"},
    {"mlx5_core 0000:3b:00.0: mlx5_fw_fatal_reporter_err_work:700:(pid 9): Cold reset is "
     "required",
     "cold_reset_required"},
    {"mlx5_core 0000:3b:00.0: mlx5_health_try_recover:352:(pid 9): health recovery failed",
     "health_recovery_failed"},
    {"mlx5_core 0000:3b:00.0: health recovery succeeded", "health_recovery_ok"},
    {"mlx5_core 0000:3b:00.0: mlx5_health_try_recover:330:(pid 9): starting health recovery flow",
     "health_recovery_started"},
    // Command interface (§9.4): ACCESS_REG before the general failure, recovered before timeout.
    {"mlx5_core 0000:d2:00.0: mlx5_cmd_out_err:838:(pid 1441871): ACCESS_REG(0x805) op_mod(0x1) "
     "failed, status bad operation(0x2), syndrome (0x9a6171), err(-22)",
     "access_reg_failed"},
    {"mlx5_core 0000:03:00.0: mlx5_cmd_check:776:(pid 6016): QUERY_VPORT_COUNTER(0x770) "
     "op_mod(0x0) failed, status bad parameter(0x3), syndrome (0x5ab1b7)",
     "cmd_failed"},
    {"mlx5_core 0000:3b:00.0: cmd_exec:1088:(pid 1234): QUERY_VPORT_COUNTER(0x770) timeout. Will "
     "cause a leak of a command resource",
     "cmd_timeout"},
    {"mlx5_core 0000:3b:00.0: mlx5_cmd_comp_handler:1700:(pid 0): cmd[3]: ACCESS_REG(0x805) "
     "Async, timeout. Will cause a leak of a command resource",
     "cmd_timeout"},
    {"mlx5_core 0000:3b:00.0: mlx5_cmd_eq_recover:300:(pid 0): cmd[3]: ACCESS_REG(0x805) "
     "recovered after timeout",
     "cmd_recovered"},
    // Module events (§9.5), both spellings of Bus stuck.
    {"mlx5_core 0000:3b:00.0: Port module event: module 0, Cable unplugged", "module_unplugged"},
    {"mlx5_core 0000:3b:00.0: Port module event: module 0, Cable plugged", "module_plugged"},
    {"mlx5_core 0000:3b:00.0: port_module:1182:(pid 0): Port module event[error]: module 0, "
     "Cable error, High Temperature",
     "module_high_temperature"},
    {"mlx5_core 0000:3b:00.0: port_module:1182:(pid 0): Port module event[error]: module 1, "
     "Cable error, Bus stuck (I2C or data shorted)",
     "module_bus_stuck"},
    {"mlx5_core 0000:3b:00.0: Port module event[error]: module 1, Cable error, Bus stuck(I2C or "
     "data shorted)",
     "module_bus_stuck"},
    {"mlx5_core 0000:3b:00.0: port_module:1182:(pid 0): Port module event[error]: module 0, "
     "Cable error, Power budget exceeded",
     "module_power_budget_exceeded"},
    {"mlx5_core 0000:3b:00.0: port_module:1182:(pid 0): Port module event[error]: module 0, "
     "Cable error, Bad or shorted cable/module",
     "module_bad_cable"},
    {"mlx5_core 0000:3b:00.0: port_module:1182:(pid 0): Port module event[error]: module 0, "
     "Cable error, One or more network ports have been powered down due to "
     "insufficient/unadvertised power on the PCIe slot",
     "pcie_insufficient_power"},
    {"mlx5_core 0000:3b:00.0: mlx5_pcie_event:326:(pid 1207): Detected insufficient power on the "
     "PCIe slot (27W).",
     "pcie_slot_power_low"},
    {"mlx5_core 0000:3b:00.0: High temperature on sensors with bit set 0x1 0x0.",
     "device_high_temperature"},
    // AER (§9.6): current and pre-2025 wording.
    {"pcieport 0000:00:01.1: AER: Correctable Error message received from 0000:3b:00.0",
     "pcie_aer_received"},
    {"pcieport 0000:00:01.1: AER: Corrected error received: 0000:3b:00.0", "pcie_aer_received"},
    {"mlx5_core 0000:3b:00.0: AER: PCIe Bus Error: severity=Correctable", "pcie_aer_corrected"},
    {"mlx5_core 0000:3b:00.0: AER: PCIe Bus Error: severity=Corrected, type=Physical Layer, "
     "(Receiver ID)",
     "pcie_aer_corrected"},
    {"mlx5_core 0000:3b:00.0: AER: PCIe Bus Error: severity=Uncorrectable (Non-Fatal)",
     "pcie_aer_nonfatal"},
    {"mlx5_core 0000:3b:00.0: AER: PCIe Bus Error: severity=Uncorrected (Fatal), type=Transaction "
     "Layer, (Requester ID)",
     "pcie_aer_fatal"},
    {"mlx5_core 0000:3b:00.0: AER: PCIe Bus Error: severity=Uncorrectable (Fatal) (Inaccessible)",
     "pcie_aer_inaccessible"},
    {"mlx5_core 0000:3b:00.0: AER:   device [15b3:1021] error status/mask=00000001/0000e000",
     "pcie_aer_detail"},
    {"mlx5_core 0000:3b:00.0: AER:   [ 0] RxErr             | Receiver    | Physical Layer",
     "pcie_aer_detail"},
    // Links (§9.7), RDMA (§9.8), manual strings (§9.9).
    {"mlx5_core 0000:3b:00.0 enp59s0f0np0: Link down", "link_down"},
    {"mlx5_core 0000:3b:00.0 enp59s0f0np0: Link up", "link_up"},
    {"ice 0000:17:00.0 ens1f0: NIC Link is Down", "link_down"},
    {"rocep2s0/1: QP 137 error: unrecognized status (0x41 0x0 0x0)", "qp_fatal"},
    {"mlx5_core 0000:02:00.0: cq_err_event_notifier:517:(pid 4374): CQ error on CQN 0x407, "
     "syndrome 0x1",
     "cq_error"},
    {"switchd: PFC-PAUSE-ON priority 3", "pfc_pause_on"},
    {"drv: DRV_INTERNAL_ERROR 507899", "drv_internal_error"},
    {"mlx5_core 0000:3b:00.0: health poll failed", "health_poll_failed"},
    {"e1000e 0000:00:19.0 eno1: lost carrier", "link_down"},
    // Lines that are not faults.
    {"mlx5_core 0000:3b:00.0: firmware version: 28.39.1002", nullptr},
    {"mlx5_core 0000:3b:00.0: E-Switch: Total vports 10, per vport: max uc(128) max mc(2048)",
     nullptr},
    {"usb 1-1: new high-speed USB device number 2 using xhci_hcd", nullptr},
    {"", nullptr},
};

TEST(KmsgPatterns, RealLinesMatchTheirEvent) {
  for (const Case& c : kCases) {
    const KernelEventPattern* pattern = MatchKernelEvent(c.line);
    if (c.event == nullptr) {
      EXPECT_EQ(pattern, nullptr) << c.line << " matched " << pattern->event;
    } else {
      ASSERT_NE(pattern, nullptr) << c.line;
      EXPECT_EQ(pattern->event, c.event) << c.line;
    }
  }
}

TEST(KmsgPatterns, TableIsWellFormed) {
  std::set<std::string_view> events;
  for (const KernelEventPattern& p : KernelEventPatterns()) {
    // Event names are label values: snake_case, bounded.
    ASSERT_FALSE(p.event.empty());
    EXPECT_LE(p.event.size(), 40u) << p.event;
    for (char c : p.event) EXPECT_TRUE((c >= 'a' && c <= 'z') || c == '_') << p.event;
    EXPECT_FALSE(p.fragments[0].empty()) << p.event;
    EXPECT_FALSE(p.source.empty()) << p.event;
    // Rows of one event agree on what it is: driver_fault judges an event by its name, so a
    // warning row sharing a critical row's name would page as critical (issue 38: the slot
    // power notice did).
    const KernelEventPattern* first = FindKernelEvent(p.event);
    ASSERT_NE(first, nullptr);
    EXPECT_EQ(first->event_class, p.event_class) << p.event;
    EXPECT_EQ(first->severity, p.severity) << p.event;
    events.insert(p.event);
  }
  EXPECT_GE(events.size(), 30u);
  EXPECT_EQ(FindKernelEvent("no_such_event"), nullptr);
}

TEST(KmsgPatterns, FabricDriverOfFirstWord) {
  EXPECT_EQ(FabricDriverOf("mlx5_core 0000:3b:00.0: anything"), "mlx5_core");
  // A pr_* line with the module name and no device (issue 38: "mlx5_core: INFO: synd 0x8: ...").
  EXPECT_EQ(FabricDriverOf("ib_core: something"), "ib_core");
  EXPECT_EQ(FabricDriverOf("mlx5_core: INFO: synd 0x8: unrecoverable hardware error"),
            "mlx5_core");
  EXPECT_EQ(FabricPciDriverOf("mlx5_0/1: QP 1 error"), "mlx5_core");
  EXPECT_EQ(FabricPciDriverOf("irdma 0000:3b:00.0: bad"), "ice");
  EXPECT_EQ(FabricDriverOf("mlx5_0/1: QP 1 error"), "mlx5_ib");
  EXPECT_EQ(FabricDriverOf("nvidia 0000:1c:00.0: Xid 79"), std::nullopt);
  EXPECT_EQ(FabricDriverOf(""), std::nullopt);
}

}  // namespace
}  // namespace fabricwatch::sys
