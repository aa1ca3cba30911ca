// The kernel log pattern table (collectors/kmsg/kmsg_patterns.h) against the real lines of
// docs/reference.md §9: every example there matches the event the table promises, both
// spellings where the kernel reworded a line, and the table itself is well-formed.

#include "collectors/kmsg/kmsg_patterns.h"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tests/testing/test_paths.h"

namespace fabricwatch::kmsg {
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
    // Issue 38: wordings of real logs and of the kernels 5.4 to current
    // (tests/fixtures/kmsg/format-strings.tsv has each with its versions and file).
    {"mlx5_core: INFO: synd 0x8: unrecoverable hardware error.", "health_syndrome"},
    {"mlx5_core 0000:05:00.0: mlx5_port_module_event:1142:(pid 0): Port module event[error]: "
     "module 0, Cable error, High Temperature",
     "module_high_temperature"},
    {"mlx5_core 0000:d2:00.0: mlx5_cmd_out_err:805:(pid 2210): ACCESS_REG(0x805) op_mod(0x1) "
     "failed",
     "access_reg_failed"},
    {"mlx5_core 0000:3b:00.0: mlx5_get_rsc:132:(pid 0): Async event for bogus resource 0x1c4",
     "bogus_async_event"},
    {"mlx5_core 0000:3b:00.0: mlx5_load_one failed with error code -22", "probe_failed"},
    {"mlx5_core 0000:03:00.0: mlx5_function_setup:1093:(pid 6016): handle_hca_cap failed",
     "probe_failed"},
    {"mlx5_core: probe of 0000:3b:00.0 failed with error -22", "probe_failed"},
    {"efa 0000:00:06.0: EFA device init failed", "probe_failed"},
    // AER: the Bus Error lines have no "AER: " (pci_printk); the inaccessible one has.
    {"pcieport 0000:03:01.0: PCIe Bus Error: severity=Uncorrected (Non-Fatal), type=Transaction "
     "Layer, (Requester ID)",
     "pcie_aer_nonfatal"},
    {"mlx5_core 0000:3b:00.0: PCIe Bus Error: severity=Uncorrectable (Fatal), type=Transaction "
     "Layer, (Requester ID)",
     "pcie_aer_fatal"},
    {"pcieport 0000:00:1c.5: PCIe Bus Error: severity=Corrected, type=Physical Layer, (Receiver "
     "ID)",
     "pcie_aer_corrected"},
    {"pcieport 0000:3a:00.0: AER: PCIe Bus Error: severity=Uncorrected (Fatal), "
     "type=Inaccessible, (Unregistered Agent ID)",
     "pcie_aer_inaccessible"},
    {"mlx5_core 0000:3b:00.0: AER: PCIe Bus Error: severity=Corrected, type=Inaccessible, "
     "(Unregistered Agent ID)",
     "pcie_aer_corrected"},
    {"pcieport 0000:00:01.1: AER: Correctable error message received from 0000:3b:00.0",
     "pcie_aer_received"},
    {"pcieport 0000:00:01.1: AER: found no error details for 0000:3b:00.0", "pcie_aer_received"},
    {"mlx5_core 0000:3b:00.0:   device [15b3:1021] error status/mask=00000001/0000e000",
     "pcie_aer_detail"},
    {"pcieport 0000:00:1c.5:    [ 0] RxErr                  (First)", "pcie_aer_detail"},
    {"pcieport 0000:00:1d.0: AER: device recovery failed", "pcie_aer_recovery_failed"},
    {"pcieport 0000:00:03.1: AER: Device recovery failed", "pcie_aer_recovery_failed"},
    {"xhci_hcd 0000:3e:00.0: AER: can't recover (no error_detected callback)",
     "pcie_aer_recovery_failed"},
    {"pcieport 0000:00:03.1: AER: device recovery successful", "pcie_aer_recovered"},
    {"pcieport 0000:00:03.1: Root Port link has been reset", "pcie_link_reset"},
    {"pcieport 0000:3a:00.0: AER: Root Port link has been reset (0)", "pcie_link_reset"},
    {"pcieport 0000:3a:00.0: DPC: containment event, status:0x1f01 source:0x0000",
     "pcie_dpc_containment"},
    {"mlx5_core 0000:3b:00.0: 63.008 Gb/s available PCIe bandwidth, limited by 8.0 GT/s PCIe x8 "
     "link at 0000:3a:00.0 (capable of 252.048 Gb/s with 16.0 GT/s PCIe x16 link)",
     "pcie_bandwidth_limited"},
    {"mlx5_core 0000:3b:00.0: 31.504 Gb/s available PCIe bandwidth, limited by 8 GT/s x4 link "
     "at 0000:3a:00.0 (capable of 126.016 Gb/s with 8 GT/s x16 link)",
     "pcie_bandwidth_limited"},
    // Transmit timeouts, both watchdog wordings, and resets.
    {"NETDEV WATCHDOG: enp59s0f0np0 (mlx5_core): transmit queue 3 timed out", "netdev_watchdog"},
    {"bnxt_en 0000:04:00.0 eth0: NETDEV WATCHDOG: CPU: 2: transmit queue 1 timed out 5123 ms",
     "netdev_watchdog"},
    {"bnxt_en 0000:04:00.0 eth0: TX timeout detected, starting reset task!", "netdev_watchdog"},
    {"bnxt_en 0000:3b:00.0 ens1f0np0: Firmware fatal reset event received", "fw_reset"},
    {"bnxt_en 0000:3b:00.0 ens1f0np0: Error (timeout: 500015) msg {0x23 0x2b2} len:0",
     "cmd_timeout"},
    {"ionic 0000:b5:00.0: DEV_CMD IONIC_CMD_LIF_INIT (22) error, TIMEOUT (-110) failed",
     "cmd_timeout"},
    {"ionic 0000:b5:00.0: DEV_CMD IONIC_CMD_PORT_IDENTIFY (20) error, IONIC_RC_ENOSUPP (11) "
     "failed",
     "cmd_failed"},
    // ice, EFA.
    {"ice 0000:17:00.0 ens1f0: NIC Link is up 100 Gbps Full Duplex, Requested FEC: RS-FEC, "
     "Negotiated FEC: RS-FEC, Autoneg Advertised: On, Autoneg Negotiated: True, Flow Control: None",
     "link_up"},
    {"ice 0000:17:00.0: Package download failed. Advanced features disabled - Device now in Safe "
     "Mode",
     "ice_safe_mode"},
    {"efa 0000:00:06.0 efa_0: Failed to process command CREATE_QP (opcode 1) comp_status 1 err "
     "-12",
     "efa_admin_queue_error"},
    {"efa 0000:00:06.0 efa_0: Admin queue is closed", "efa_admin_queue_error"},
    {"(null): Reset indication didn't turn on", "efa_reset"},
    // irdma, bnxt_re, ib_core, IPoIB, mlx5e health reporters, mlx5 pages (§9.13).
    {"ice 0000:31:00.0 rocep49s0f0: ICE OICR event notification: oicr = 0x06000803",
     "rdma_oicr_event"},
    {"ice 0000:31:00.0 rocep49s0f0: HMC Error", "fw_fatal"},
    {"ice 0000:31:00.0 rocep49s0f0: critical PE Error, GLPE_CRITERR=0x00011424", "fw_fatal"},
    {"ice 0000:31:00.0 rocep49s0f0: Requesting a reset", "health_recovery_started"},
    {"ice 0000:17:00.0 rocep23s0f0: [Modify QP Cmd Error][op_code=5] status=-110 waiting=1 "
     "completion_err=0 maj=0x0 min=0x0",
     "cmd_timeout"},
    {"ice 0000:17:00.0 rocep23s0f0: [Destroy QP Cmd Error][op_code=10] status=-5 waiting=1 "
     "completion_err=1 maj=0x8001 min=0x8002",
     "cmd_failed"},
    {"ice 0000:17:00.0 rocep23s0f0: abnormal ae_id = 0x503 bool qp=1 qp_id = 17, ae_src=5",
     "qp_fatal"},
    {"bnxt_en 0000:12:00.0: QPLIB: bnxt_re_is_fw_stalled: FW STALL Detected. cmdq[0xe]=0x3 "
     "waited (103641 > 100000) msec active 1 ",
     "cmd_timeout"},
    {"bnxt_en 0000:12:00.0: QPLIB: cmdq[0]=0x1 timedout (20000)msec", "cmd_timeout"},
    {"infiniband bnxt_re0: Couldn't change QP1 state to INIT: -110", "probe_failed"},
    {"infiniband bnxt_re0: Couldn't open port 1", "probe_failed"},
    {"infiniband syz1: ib_query_port failed (-19)", "ib_port_query_failed"},
    {"ib0: multicast join failed for ff12:401b:ffff:0000:0000:0000:ffff:ffff, status -22",
     "ipoib_mcast_join_failed"},
    {"mlx5_core 0000:6f:00.0: wait_fw_init:201:(pid 8): Firmware over 120000 MS in "
     "pre-initializing state, aborting",
     "probe_failed"},
    {"mlx5_core 0000:56:00.0: mlx5_cmd_comp_handler:1709:(pid 0): Command completion arrived "
     "after timeout (entry idx = 0).",
     "cmd_recovered"},
    {"FW pages counter is 1024 after reclaiming all pages", "fw_pages_failed"},
    {"mlx5_core 0000:3b:00.0: pages_work_handler:550:(pid 9): give fail -12", "fw_pages_failed"},
    {"mlx5_core 0000:3b:00.0 enp59s0f0np0: ERR CQE on SQ: 0x1c4", "cqe_error"},
    {"mlx5_core 0000:3b:00.0 enp59s0f0np0: RX timeout on channel: 2, RQ: 0x46, CQ: 0x47",
     "rx_timeout"},
    {"mlx5_core 0000:3b:00.0 enp59s0f0np0: Recover 3 eqes on EQ 0x25", "eq_missed_interrupts"},
    {"infiniband rocep33s0f0: mlx5_poll_one:527:(pid 0): Responder error cqe on cqn 0x406:",
     "cqe_error"},
    {"mlx5_core 0000:3b:00.0 enp59s0f0np0: Error cqe on cqn 0x407, ci 0x1, sqn 0x8c, opcode 0xd, "
     "syndrome 0x2, vendor syndrome 0x0",
     "cqe_error"},
    {"bnxt_en 0000:43:00.0: probe with driver bnxt_en failed with error -16", "probe_failed"},
    // Lines that are not faults.
    {"infiniband rocep33s0f0: mlx5_poll_one:530:(pid 0): syndrome 0x5, vendor syndrome 0xf9",
     nullptr},
    {"ice 0000:31:00.0 rocep49s0f0: Q1 Resource Check", nullptr},
    {"mlx5_core 0000:3b:00.0 enp59s0f0np0: EQ 0x25: Cons = 0x1a, irqn = 0x7f", nullptr},
    {"infiniband bnxt_re0: Device registered with IB successfully", nullptr},
    {"pcieport 0000:00:01.0: AER: enabled with IRQ 122", nullptr},
    {"mlx5_core 0000:3b:00.0: 252.048 Gb/s available PCIe bandwidth (16.0 GT/s PCIe x16 link)",
     nullptr},
    {"ice 0000:17:00.0: The DDP package was successfully loaded: ICE OS Default Package version "
     "1.3.30.0",
     nullptr},
    {"efa 0000:00:06.0 efa_0: IB device registered", nullptr},
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

// What driver_fault makes of each event: it looks the event name up (FindKernelEvent) and acts on
// that row's severity and class, so this is the severity and class a finding gets. A new event
// name fails here until it is given one on purpose.
struct Expected {
  EventSeverity severity;
  EventClass event_class;
};
const std::map<std::string_view, Expected> kExpected = {
    {"fw_fatal", {EventSeverity::kCritical, EventClass::kFatal}},
    {"health_compromised", {EventSeverity::kCritical, EventClass::kFatal}},
    {"health_syndrome", {EventSeverity::kCritical, EventClass::kFatal}},
    {"health_warning", {EventSeverity::kWarning, EventClass::kDegraded}},
    {"pci_slot_unavailable", {EventSeverity::kCritical, EventClass::kFatal}},
    {"cold_reset_required", {EventSeverity::kCritical, EventClass::kFatal}},
    {"health_recovery_failed", {EventSeverity::kCritical, EventClass::kFatal}},
    {"health_dump", {EventSeverity::kInfo, EventClass::kCountOnly}},
    {"health_recovery_ok", {EventSeverity::kInfo, EventClass::kCountOnly}},
    {"health_recovery_started", {EventSeverity::kWarning, EventClass::kCountOnly}},
    {"probe_failed", {EventSeverity::kCritical, EventClass::kFatal}},
    {"cmd_recovered", {EventSeverity::kInfo, EventClass::kCountOnly}},
    {"cmd_timeout", {EventSeverity::kWarning, EventClass::kCommandTimeout}},
    {"access_reg_failed", {EventSeverity::kWarning, EventClass::kNoisy}},
    {"cmd_failed", {EventSeverity::kWarning, EventClass::kNoisy}},
    {"efa_admin_queue_error", {EventSeverity::kWarning, EventClass::kCommandTimeout}},
    {"efa_reset", {EventSeverity::kCritical, EventClass::kFatal}},
    {"efa_unknown_event", {EventSeverity::kWarning, EventClass::kNoisy}},
    {"pcie_insufficient_power", {EventSeverity::kCritical, EventClass::kFatal}},
    {"module_power_budget_exceeded", {EventSeverity::kWarning, EventClass::kModule}},
    {"module_unsupported", {EventSeverity::kWarning, EventClass::kModule}},
    {"module_bus_stuck", {EventSeverity::kWarning, EventClass::kModule}},
    {"module_no_eeprom", {EventSeverity::kWarning, EventClass::kModule}},
    {"module_high_temperature", {EventSeverity::kWarning, EventClass::kModule}},
    {"module_bad_cable", {EventSeverity::kWarning, EventClass::kModule}},
    {"module_unplugged", {EventSeverity::kWarning, EventClass::kLinkCause}},
    {"module_plugged", {EventSeverity::kInfo, EventClass::kLinkCause}},
    {"module_disabled", {EventSeverity::kWarning, EventClass::kModule}},
    {"module_unknown", {EventSeverity::kWarning, EventClass::kModule}},
    {"pcie_slot_power_low", {EventSeverity::kWarning, EventClass::kModule}},
    {"pcie_power_unknown", {EventSeverity::kInfo, EventClass::kCountOnly}},
    {"pcie_power_ok", {EventSeverity::kInfo, EventClass::kCountOnly}},
    {"device_high_temperature", {EventSeverity::kWarning, EventClass::kModule}},
    {"pcie_aer_inaccessible", {EventSeverity::kCritical, EventClass::kFatal}},
    {"pcie_aer_fatal", {EventSeverity::kCritical, EventClass::kFatal}},
    {"pcie_aer_nonfatal", {EventSeverity::kWarning, EventClass::kNoisy}},
    {"pcie_aer_corrected", {EventSeverity::kWarning, EventClass::kNoisy}},
    {"pcie_aer_received", {EventSeverity::kInfo, EventClass::kCountOnly}},
    {"pcie_aer_detail", {EventSeverity::kInfo, EventClass::kCountOnly}},
    {"pcie_aer_recovery_failed", {EventSeverity::kCritical, EventClass::kFatal}},
    {"pcie_aer_recovered", {EventSeverity::kInfo, EventClass::kCountOnly}},
    {"pcie_link_reset", {EventSeverity::kWarning, EventClass::kDegraded}},
    {"pcie_dpc_containment", {EventSeverity::kWarning, EventClass::kDegraded}},
    {"pcie_bandwidth_limited", {EventSeverity::kWarning, EventClass::kCountOnly}},
    {"netdev_watchdog", {EventSeverity::kWarning, EventClass::kDegraded}},
    {"fw_reset", {EventSeverity::kWarning, EventClass::kDegraded}},
    {"ice_safe_mode", {EventSeverity::kWarning, EventClass::kDegraded}},
    {"link_down", {EventSeverity::kInfo, EventClass::kLinkCause}},
    {"link_up", {EventSeverity::kInfo, EventClass::kLinkCause}},
    {"qp_fatal", {EventSeverity::kWarning, EventClass::kNoisy}},
    {"cq_error", {EventSeverity::kWarning, EventClass::kNoisy}},
    {"bogus_async_event", {EventSeverity::kWarning, EventClass::kNoisy}},
    {"pfc_pause_on", {EventSeverity::kWarning, EventClass::kNoisy}},
    {"drv_internal_error", {EventSeverity::kWarning, EventClass::kNoisy}},
    {"health_poll_failed", {EventSeverity::kCritical, EventClass::kFatal}},
    {"fw_pages_failed", {EventSeverity::kWarning, EventClass::kNoisy}},
    {"rdma_oicr_event", {EventSeverity::kInfo, EventClass::kCountOnly}},
    {"cqe_error", {EventSeverity::kWarning, EventClass::kNoisy}},
    {"rx_timeout", {EventSeverity::kWarning, EventClass::kDegraded}},
    {"eq_missed_interrupts", {EventSeverity::kWarning, EventClass::kDegraded}},
    {"ipoib_mcast_join_failed", {EventSeverity::kWarning, EventClass::kNoisy}},
    {"ib_port_query_failed", {EventSeverity::kWarning, EventClass::kNoisy}},
};

TEST(KmsgPatterns, EveryRowHasItsSeverityAndClassAsDriverFaultSeesIt) {
  std::set<std::string_view> seen;
  for (const KernelEventPattern& row : KernelEventPatterns()) {
    const auto expected = kExpected.find(row.event);
    ASSERT_NE(expected, kExpected.end()) << row.event << " has no expected severity and class";
    EXPECT_EQ(row.severity, expected->second.severity) << row.event << " " << row.fragments[0];
    EXPECT_EQ(row.event_class, expected->second.event_class)
        << row.event << " " << row.fragments[0];
    // driver_fault's view: the row FindKernelEvent answers for this name.
    const KernelEventPattern* by_name = FindKernelEvent(row.event);
    ASSERT_NE(by_name, nullptr) << row.event;
    EXPECT_EQ(EventSeverityName(by_name->severity), EventSeverityName(row.severity))
        << row.event << " " << row.fragments[0];
    EXPECT_EQ(by_name->event_class, row.event_class) << row.event << " " << row.fragments[0];
    seen.insert(row.event);
  }
  for (const auto& [event, expected] : kExpected) EXPECT_TRUE(seen.contains(event)) << event;
  // The issue 38 cases: a slot power notice is a warning, never a drain.
  EXPECT_EQ(MatchKernelEvent("mlx5_core 0000:3b:00.0: Detected insufficient power on the PCIe "
                             "slot (27W).")
                ->severity,
            EventSeverity::kWarning);
}

struct Wording {
  std::string event, driver, file, versions, format, example;
};

std::vector<Wording> ReadFormatStrings() {
  std::istringstream in(testing::ReadTextFile(testing::FixturePath("kmsg/format-strings.tsv")));
  std::vector<Wording> wordings;
  std::string line;
  bool header = true;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    if (header) {  // event, driver, file, versions, format, example, read_in
      EXPECT_TRUE(line.starts_with("event\tdriver\tfile\tversions\tformat\texample")) << line;
      header = false;
      continue;
    }
    std::vector<std::string> columns;
    std::istringstream fields(line);
    for (std::string field; std::getline(fields, field, '\t');) columns.push_back(field);
    EXPECT_EQ(columns.size(), 7u) << line;
    if (columns.size() < 6) continue;
    wordings.push_back({columns[0], columns[1], columns[2], columns[3], columns[4], columns[5]});
  }
  return wordings;
}

// tests/fixtures/kmsg/format-strings.tsv: every wording read in the kernel sources (5.4 to
// current) matches the table and maps to its event; every row of the table is the one that
// matches at least one wording, so no row is untested and none is shadowed by an earlier one.
TEST(KmsgPatterns, EveryWordingInTheFormatTableMatchesItsEvent) {
  const std::vector<Wording> wordings = ReadFormatStrings();
  ASSERT_GE(wordings.size(), 100u);
  std::set<const KernelEventPattern*> used;
  for (const Wording& w : wordings) {
    EXPECT_FALSE(w.file.empty() || w.versions.empty() || w.format.empty()) << w.example;
    const KernelEventPattern* pattern = MatchKernelEvent(w.example);
    ASSERT_NE(pattern, nullptr) << w.example;
    EXPECT_EQ(pattern->event, w.event) << w.example;
    used.insert(pattern);
  }
  for (const KernelEventPattern& row : KernelEventPatterns()) {
    if (row.source.starts_with("operator manuals")) continue;  // no kernel prints them (§9.9)
    EXPECT_TRUE(used.contains(&row)) << "no wording in format-strings.tsv reaches the row "
                                     << row.event << " {" << row.fragments[0] << "}";
  }
}

TEST(KmsgPatterns, FabricDriverOfFirstWord) {
  EXPECT_EQ(FabricDriverOf("mlx5_core 0000:3b:00.0: anything"), "mlx5_core");
  // A pr_* line with the module name and no device (issue 38: "mlx5_core: INFO: synd 0x8: ...").
  EXPECT_EQ(FabricDriverOf("ib_core: something"), "ib_core");
  EXPECT_EQ(FabricDriverOf("mlx5_core: INFO: synd 0x8: unrecoverable hardware error"), "mlx5_core");
  EXPECT_EQ(FabricPciDriverOf("mlx5_0/1: QP 1 error"), "mlx5_core");
  EXPECT_EQ(FabricPciDriverOf("irdma 0000:3b:00.0: bad"), "ice");
  EXPECT_EQ(FabricDriverOf("mlx5_0/1: QP 1 error"), "mlx5_ib");
  EXPECT_EQ(FabricDriverOf("nvidia 0000:1c:00.0: Xid 79"), std::nullopt);
  EXPECT_EQ(FabricDriverOf(""), std::nullopt);
}

// efa_com.c was derived from ENA's ena_com.c and shares its words: a line ENA printed is not an
// EFA fault; a row of no driver's own source (AER) matches whoever printed it.
TEST(KmsgPatterns, ADriversRowsDoNotMatchAnotherDriversLine) {
  ASSERT_NE(MatchKernelEvent("efa 0000:00:06.0 efa_0: Device isn't ready, abort com init"),
            nullptr);
  EXPECT_EQ(MatchKernelEvent("ena 0000:00:05.0 eth0: Device isn't ready, abort com init"), nullptr);
  EXPECT_EQ(MatchKernelEvent("ena 0000:00:05.0 (unnamed net_device) (uninitialized): Reset "
                             "indication didn't turn on"),
            nullptr);
  EXPECT_EQ(
      MatchKernelEvent("nvidia 0000:1c:00.0: poll_health:836:(pid 0): Fatal error 1 detected"),
      nullptr);
  const KernelEventPattern* aer = MatchKernelEvent(
      "nvidia 0000:1c:00.0: PCIe Bus Error: severity=Corrected, type=Physical Layer");
  ASSERT_NE(aer, nullptr);
  EXPECT_EQ(aer->event, "pcie_aer_corrected");
  EXPECT_EQ(FabricDriverOf("/dev/sda1: something"), std::nullopt);
}

// A row's milder event at warning priority or milder (mlx5 prints the health buffer at the
// firmware's severity).
TEST(KmsgPatterns, MilderEventByPriority) {
  const std::string_view synd =
      "mlx5_core 0000:3b:00.0: print_health_info:447:(pid 0): synd 0x1: firmware internal error";
  EXPECT_EQ(MatchKernelEvent(synd, 3)->event, "health_syndrome");
  EXPECT_EQ(MatchKernelEvent(synd, 4)->event, "health_warning");
  EXPECT_EQ(MatchKernelEvent(synd, 6)->event, "health_warning");
  EXPECT_EQ(MatchKernelEvent("mlx5_core 0000:3b:00.0: poll_health:836:(pid 0): Fatal error 1 "
                             "detected",
                             4)
                ->event,
            "fw_fatal");
  for (const KernelEventPattern& row : KernelEventPatterns()) {
    if (!row.milder_event.empty()) EXPECT_NE(FindKernelEvent(row.milder_event), nullptr);
  }
}

}  // namespace
}  // namespace fabricwatch::kmsg
