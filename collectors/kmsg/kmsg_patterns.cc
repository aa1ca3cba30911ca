#include "collectors/kmsg/kmsg_patterns.h"

#include <utility>

#include "base/value_parse.h"

namespace fabricwatch::kmsg {
namespace {

using enum EventSeverity;
using EventClass::kCommandTimeout, EventClass::kDegraded, EventClass::kFatal,
    EventClass::kLinkCause, EventClass::kModule, EventClass::kNoisy, EventClass::kCountOnly;

// Sources, by kernel file. Every wording, with the kernels it appears in and a line rendered from
// it, is in tests/fixtures/kmsg/format-strings.tsv (a test matches each); docs/reference.md §9
// quotes the formats.
constexpr std::string_view kHealth = "drivers/net/ethernet/mellanox/mlx5/core/health.c";
constexpr std::string_view kMain = "drivers/net/ethernet/mellanox/mlx5/core/main.c";
constexpr std::string_view kCmd = "drivers/net/ethernet/mellanox/mlx5/core/cmd.c";
constexpr std::string_view kEvents = "drivers/net/ethernet/mellanox/mlx5/core/events.c";
constexpr std::string_view kEq = "drivers/net/ethernet/mellanox/mlx5/core/eq.c";
constexpr std::string_view kQp = "drivers/net/ethernet/mellanox/mlx5/core/qp.c";
constexpr std::string_view kEnMain = "drivers/net/ethernet/mellanox/mlx5/core/en_main.c";
constexpr std::string_view kTxReporter = "drivers/net/ethernet/mellanox/mlx5/core/en/reporter_tx.c";
constexpr std::string_view kRxReporter = "drivers/net/ethernet/mellanox/mlx5/core/en/reporter_rx.c";
constexpr std::string_view kEnHealth = "drivers/net/ethernet/mellanox/mlx5/core/en/health.c";
constexpr std::string_view kPages = "drivers/net/ethernet/mellanox/mlx5/core/pagealloc.c";
constexpr std::string_view kIbQp = "drivers/infiniband/hw/mlx5/qp.c";
constexpr std::string_view kIbCq = "drivers/infiniband/hw/mlx5/cq.c";
constexpr std::string_view kEnTx = "drivers/net/ethernet/mellanox/mlx5/core/en_tx.c";
constexpr std::string_view kEfaCom = "drivers/infiniband/hw/efa/efa_com.c";
constexpr std::string_view kEfaMain = "drivers/infiniband/hw/efa/efa_main.c";
constexpr std::string_view kIceMain = "drivers/net/ethernet/intel/ice/ice_main.c";
constexpr std::string_view kBnxt = "drivers/net/ethernet/broadcom/bnxt/bnxt.c";
constexpr std::string_view kBnxtHwrm = "drivers/net/ethernet/broadcom/bnxt/bnxt_hwrm.c";
constexpr std::string_view kIonicMain = "drivers/net/ethernet/pensando/ionic/ionic_main.c";
constexpr std::string_view kIpoib = "drivers/infiniband/ulp/ipoib/ipoib_main.c";
constexpr std::string_view kIpoibMcast = "drivers/infiniband/ulp/ipoib/ipoib_multicast.c";
constexpr std::string_view kIrdmaHw = "drivers/infiniband/hw/irdma/hw.c";
constexpr std::string_view kIrdmaMain = "drivers/infiniband/hw/irdma/main.c";
constexpr std::string_view kIrdmaUtils = "drivers/infiniband/hw/irdma/utils.c";
constexpr std::string_view kBnxtReRcfw = "drivers/infiniband/hw/bnxt_re/qplib_rcfw.c";
constexpr std::string_view kIbDevice = "drivers/infiniband/core/device.c";
constexpr std::string_view kIbCache = "drivers/infiniband/core/cache.c";
constexpr std::string_view kIbMad = "drivers/infiniband/core/mad.c";
constexpr std::string_view kAer = "drivers/pci/pcie/aer.c";
constexpr std::string_view kAerErr = "drivers/pci/pcie/err.c";
constexpr std::string_view kDpc = "drivers/pci/pcie/dpc.c";
constexpr std::string_view kPci = "drivers/pci/pci.c";
constexpr std::string_view kDriverCore = "drivers/base/dd.c";
constexpr std::string_view kWatchdog = "net/sched/sch_generic.c";
constexpr std::string_view kIntel = "drivers/net/ethernet/intel/{ixgbe,i40e,ice}, broadcom/bnxt";
constexpr std::string_view kManual = "operator manuals (docs/reference.md §9.9, unverified)";

// First match wins: specific rows before general ones (ACCESS_REG before any command failure,
// "recovered after timeout" before "timeout", module errors before the plain module event, an
// inaccessible Bus Error before the fatal one, the 6.9+ watchdog line before the older one).
// Fragments hold the words every version shares, never one version's punctuation: AER lines are
// matched with or without the "AER: " that only some printers add (pci_printk has no dev_fmt).
constexpr KernelEventPattern kPatterns[] = {
    // mlx5 health (§9.3), health.c 5.4 to current.
    {"fw_fatal", kCritical, kFatal, {"Fatal error ", " detected"}, kHealth},
    {"health_compromised", kCritical, kFatal, {"health compromised"}, kHealth},
    // A syndrome the firmware rates WARNING (severity 4, 5.17+): degraded, not lost. Milder ones
    // are printed at their own priority, which milder_event below reads.
    {"health_warning", kWarning, kDegraded, {"Health issue observed, ", ") WARNING"}, kHealth},
    {"health_syndrome",
     kCritical,
     kFatal,
     {"Health issue observed, "},
     kHealth,
     {},
     "health_warning"},
    // Also "mlx5_core: INFO: synd 0x8: ..." (a report's line with no device name). The synd line
    // is printed at the buffer's severity: at warning or milder it is that warning's.
    {"health_syndrome", kCritical, kFatal, {"synd 0x", ": "}, kHealth, {}, "health_warning"},
    {"pci_slot_unavailable", kCritical, kFatal, {"PCI slot is unavailable"}, kHealth},
    {"cold_reset_required", kCritical, kFatal, {"Cold reset is required"}, kHealth},
    {"health_recovery_failed", kCritical, kFatal, {"health recovery failed"}, kHealth},
    {"health_recovery_failed", kCritical, kFatal, {"health recovery flow aborted"}, kHealth},
    {"health_recovery_failed", kCritical, kFatal, {"Driver is in error state"}, kHealth},
    // The rest of the health-buffer dump (print_health_info): context for the lines above.
    {"health_dump", kInfo, kCountOnly, {"assert_var["}, kHealth},
    {"health_dump", kInfo, kCountOnly, {"assert_exit_ptr 0x"}, kHealth},
    {"health_dump", kInfo, kCountOnly, {"assert_callra 0x"}, kHealth},
    {"health_dump", kInfo, kCountOnly, {"fw_ver "}, kHealth},
    {"health_dump", kInfo, kCountOnly, {"ext_synd 0x"}, kHealth},
    {"health_dump", kInfo, kCountOnly, {"hw_id 0x"}, kHealth},
    {"health_dump", kInfo, kCountOnly, {"irisc_index "}, kHealth},
    {"health_recovery_ok", kInfo, kCountOnly, {"health recovery succeeded"}, kHealth},
    {"health_recovery_started", kWarning, kCountOnly, {"starting health recovery flow"}, kHealth},
    {"health_recovery_started", kWarning, kCountOnly, {"handling bad device here"}, kHealth},
    {"health_recovery_started", kWarning, kCountOnly, {"NIC SW reset in progress"}, kHealth},
    // Probe failures: mlx5 main.c (init_one up to 5.x "mlx5_load_one failed", probe_one since
    // "mlx5_init_one failed"), efa_main.c, and the driver core's line for any driver (dd.c,
    // printk then pr_warn, same words 2.6 to current). The function never came up: fatal.
    {"probe_failed", kCritical, kFatal, {"mlx5_load_one failed with error code "}, kMain},
    {"probe_failed", kCritical, kFatal, {"mlx5_init_one failed with error code "}, kMain},
    {"probe_failed", kCritical, kFatal, {"mlx5_pci_init failed with error code "}, kMain},
    {"probe_failed", kCritical, kFatal, {"handle_hca_cap failed"}, kMain},
    // The driver core since 6.10 (release not pinned): dev_err, the prefix names the device.
    {"probe_failed", kCritical, kFatal, {"probe with driver ", " failed with error "}, kDriverCore},
    // wait_fw_init gave up (pre-initializing 4.x-current, initializing 5.x+), or the command
    // interface never came up: the firmware did not start.
    {"probe_failed", kCritical, kFatal, {"Firmware over ", " MS in ", "initializing state"}, kMain},
    {"probe_failed", kCritical, kFatal, {"Failed initializing command interface"}, kMain},
    // ib_core (§9.13): the RDMA device is not registered, or its ports cannot send MADs (no SM,
    // no CM on that port). "infiniband <ibdev>: " lines name no PCI function.
    {"probe_failed", kCritical, kFatal, {"Couldn't set up InfiniBand P_Key/GID cache"}, kIbDevice},
    {"probe_failed", kCritical, kFatal, {"Couldn't change QP", " state to INIT: "}, kIbMad},
    {"probe_failed", kCritical, kFatal, {"Couldn't start port"}, kIbMad},
    {"probe_failed", kCritical, kFatal, {"Couldn't open port "}, kIbMad},
    {"probe_failed", kCritical, kFatal, {"EFA device init failed"}, kEfaMain},
    {"probe_failed",
     kCritical,
     kFatal,
     {": probe of ", " failed with error "},
     kDriverCore,
     "probe of "},
    // Command interfaces (§9.4): mlx5 cmd.c; bnxt HWRM (bnxt_hwrm.c since 5.16, bnxt.c before);
    // ionic dev commands (ionic_main.c). ACCESS_REG before the general failure, recovered before
    // timeout; "failed" alone, since a report shows ACCESS_REG failures without ", status".
    {"cmd_recovered", kInfo, kCountOnly, {"(0x", "recovered after timeout"}, kCmd},
    {"cmd_recovered", kInfo, kCountOnly, {"Command completion arrived after timeout"}, kCmd},
    {"cmd_timeout", kWarning, kCommandTimeout, {"(0x", ") timeout. Will cause a leak"}, kCmd},
    {"cmd_timeout", kWarning, kCommandTimeout, {"(0x", "Async, timeout. Will cause a leak"}, kCmd},
    {"cmd_timeout", kWarning, kCommandTimeout, {"(0x", ") No done completion"}, kCmd},
    {"cmd_timeout", kWarning, kCommandTimeout, {"(0x", "canceled on out of queue timeout"}, kCmd},
    {"cmd_timeout", kWarning, kCommandTimeout, {"Error (timeout: ", ") msg {0x"}, kBnxtHwrm},
    {"cmd_timeout", kWarning, kCommandTimeout, {"DEV_CMD ", " error, TIMEOUT ("}, kIonicMain},
    // bnxt_re's firmware channel (§9.13): every command after a stall fails until reload.
    {"cmd_timeout", kWarning, kCommandTimeout, {"cmdq[", "]=", " timedout ("}, kBnxtReRcfw},
    {"cmd_timeout", kWarning, kCommandTimeout, {"FW STALL Detected. cmdq["}, kBnxtReRcfw},
    // irdma's control QP (§9.13): -110 is -ETIMEDOUT, the wait that also requests a reset.
    {"cmd_timeout", kWarning, kCommandTimeout, {"Error][op_code=", "] status=-110 "}, kIrdmaUtils},
    {"access_reg_failed", kWarning, kNoisy, {"ACCESS_REG(0x805)", " failed"}, kCmd},
    {"cmd_failed", kWarning, kNoisy, {"(0x", ") op_mod(0x", " failed"}, kCmd},
    {"cmd_failed", kWarning, kNoisy, {"DEV_CMD ", " error, ", ") failed"}, kIonicMain},
    {"cmd_failed", kWarning, kNoisy, {"Error][op_code=", "] status="}, kIrdmaUtils},
    {"cmd_failed", kWarning, kNoisy, {"cqp opcode = 0x", " maj_err_code = 0x"}, kIrdmaHw},
    // mlx5 page exchange with the firmware (pagealloc.c, 4.x-current): pages the firmware asked
    // for and did not get, or did not give back (the counter lines are WARN()s, no device name).
    {"fw_pages_failed",
     kWarning,
     kNoisy,
     {"FW pages counter is ", " after reclaiming all pages"},
     kPages},
    {"fw_pages_failed", kWarning, kNoisy, {"FW did not return all pages"}, kPages},
    {"fw_pages_failed", kWarning, kNoisy, {": give fail "}, kPages},
    {"fw_pages_failed", kWarning, kNoisy, {": reclaim fail "}, kPages},
    // EFA admin queue (efa_com.c, 5.4 to current): a command that gets no completion closes the
    // admin queue (EFA_AQ_STATE_RUNNING cleared), so every later command fails until a reset:
    // one command-timeout class for the lot.
    {"efa_admin_queue_error",
     kWarning,
     kCommandTimeout,
     {"Failed to process command ", " comp_status "},
     kEfaCom},
    {"efa_admin_queue_error",
     kWarning,
     kCommandTimeout,
     {"Failed to submit command ", " (opcode "},
     kEfaCom},
    {"efa_admin_queue_error",
     kWarning,
     kCommandTimeout,
     {"didn't send any completion for ", "admin cmd"},
     kEfaCom},
    {"efa_admin_queue_error",
     kWarning,
     kCommandTimeout,
     {"didn't receive any MSI-X interrupt for admin cmd"},
     kEfaCom},
    {"efa_admin_queue_error",
     kWarning,
     kCommandTimeout,
     {"Wait for completion (polling) timeout"},
     kEfaCom},
    {"efa_admin_queue_error", kWarning, kCommandTimeout, {"Admin queue is closed"}, kEfaCom},
    {"efa_admin_queue_error",
     kWarning,
     kCommandTimeout,
     {"comp_ctx is NULL. Changing the admin queue running state"},
     kEfaCom},
    {"efa_admin_queue_error",
     kWarning,
     kCommandTimeout,
     {"Completion context for command_id ", " is occupied"},
     kEfaCom},
    {"efa_admin_queue_error",
     kWarning,
     kCommandTimeout,
     {"Reading register timed out. expected: req id["},
     kEfaCom},
    // EFA device reset (efa_com_dev_reset, efa_com_admin_init): upstream resets only at probe and
    // remove and has no recovery path, so a reset that does not complete leaves no device.
    {"efa_reset", kCritical, kFatal, {"Reset indication didn't turn "}, kEfaCom},
    {"efa_reset", kCritical, kFatal, {"Device isn't ready, can't reset device"}, kEfaCom},
    {"efa_reset", kCritical, kFatal, {"Device isn't ready, abort com init"}, kEfaCom},
    // efa_main.c handles only keep-alive AENQ events but enables the fatal-error and warning
    // groups: a device's fatal-error notification prints only this line.
    {"efa_unknown_event",
     kWarning,
     kNoisy,
     {"Unknown event was received or event with unimplemented handler"},
     kEfaMain},
    // Port module events (§9.5): events.c 5.1+ (port.c before, same words, level info); the
    // error rows first, both spellings of "Bus stuck".
    {"pcie_insufficient_power",
     kCritical,
     kFatal,
     {"Port module event", "insufficient/unadvertised power on the PCIe slot"},
     kEvents},
    {"module_power_budget_exceeded",
     kWarning,
     kModule,
     {"Port module event", "Power budget exceeded"},
     kEvents},
    {"module_unsupported",
     kWarning,
     kModule,
     {"Port module event", "Long Range for non MLNX cable"},
     kEvents},
    {"module_bus_stuck", kWarning, kModule, {"Port module event", "Bus stuck"}, kEvents},
    {"module_no_eeprom",
     kWarning,
     kModule,
     {"Port module event", "No EEPROM/retry timeout"},
     kEvents},
    {"module_unsupported",
     kWarning,
     kModule,
     {"Port module event", "Enforce part number list"},
     kEvents},
    {"module_unsupported", kWarning, kModule, {"Port module event", "Unknown identifier"}, kEvents},
    {"module_high_temperature",
     kWarning,
     kModule,
     {"Port module event", "High Temperature"},
     kEvents},
    {"module_bad_cable", kWarning, kModule, {"Port module event", "Bad or shorted cable"}, kEvents},
    {"module_unplugged", kWarning, kLinkCause, {"Port module event", "Cable unplugged"}, kEvents},
    {"module_plugged", kInfo, kLinkCause, {"Port module event", "Cable plugged"}, kEvents},
    {"module_disabled", kWarning, kModule, {"Port module event", "Cable disabled"}, kEvents},
    {"module_unknown", kWarning, kModule, {"Port module event", "Unknown "}, kEvents},
    // PCIe slot power and device temperature (§9.5).
    // A warning of its own name: the module row above of the same words is the fatal one
    // ("ports have been powered down"), and driver_fault reads severity by event name.
    {"pcie_slot_power_low",
     kWarning,
     kModule,
     {"Detected insufficient power on the PCIe slot"},
     kEvents},
    {"pcie_power_unknown",
     kInfo,
     kCountOnly,
     {"PCIe slot power capability was not advertised"},
     kEvents},
    {"pcie_power_ok", kInfo, kCountOnly, {"PCIe slot advertised sufficient power"}, kEvents},
    {"device_high_temperature", kWarning, kModule, {"High temperature on sensors"}, kEvents},
    // PCIe AER (§9.6), aer.c. "Bus Error" is printed with pci_printk (no "AER: ", 5.4 to
    // current) except the Inaccessible one (pci_err, "AER: "); "Correct"/"Uncorrect" cover
    // Corrected/Uncorrected (to 6.7) and Correctable/Uncorrectable (6.8+); "PCIe" is "CXL" for a
    // CXL device (6.16+), so the fragments start at "Bus Error".
    {"pcie_aer_inaccessible",
     kCritical,
     kFatal,
     {"Bus Error: severity=Uncorrect", "Inaccessible"},
     kAer},
    {"pcie_aer_fatal", kCritical, kFatal, {"Bus Error: severity=Uncorrect", "(Fatal)"}, kAer},
    {"pcie_aer_nonfatal", kWarning, kNoisy, {"Bus Error: severity=Uncorrect", "(Non-Fatal)"}, kAer},
    {"pcie_aer_corrected", kWarning, kNoisy, {"Bus Error: severity=Correct"}, kAer},
    // The Root Port's line naming the source: "error received: <bdf>" to 6.9, "error message
    // received from <bdf>" 6.10+ (and stable backports), "found no error details for <bdf>"
    // 6.10-6.15.
    {"pcie_aer_received",
     kInfo,
     kCountOnly,
     {"AER: ", "rror message received from "},
     kAer,
     " from "},
    {"pcie_aer_received", kInfo, kCountOnly, {"AER: ", " error received: "}, kAer, "received: "},
    {"pcie_aer_received",
     kInfo,
     kCountOnly,
     {"AER: ", "found no error details for "},
     kAer,
     "details for "},
    // The detail lines after a Bus Error line: status/mask, one line per error bit (with or
    // without "AER: "), the TLP header, and the firmware-first (APEI) dump of pci_print_aer.
    {"pcie_aer_detail", kInfo, kCountOnly, {" device [", "] error status/mask="}, kAer},
    {"pcie_aer_detail", kInfo, kCountOnly, {"AER:   ["}, kAer},
    {"pcie_aer_detail", kInfo, kCountOnly, {":    ["}, kAer},
    {"pcie_aer_detail", kInfo, kCountOnly, {"  TLP Header"}, kAer},
    {"pcie_aer_detail", kInfo, kCountOnly, {"aer_status: 0x", ", aer_mask: 0x"}, kAer},
    {"pcie_aer_detail", kInfo, kCountOnly, {"aer_layer=", ", aer_agent="}, kAer},
    {"pcie_aer_detail", kInfo, kCountOnly, {"aer_uncor_severity: 0x"}, kAer},
    // AER and DPC recovery (err.c, aer.c aer_root_reset, dpc.c): "Device recovery failed" (4.x)
    // and "device recovery failed" (5.x+); "Can't"/"can't recover"; "Root Port link has been
    // reset" (5.4), "... reset (%d)" (5.10+), "%s Port link ..." Root or Downstream (6.x).
    {"pcie_aer_recovery_failed", kCritical, kFatal, {"evice recovery failed"}, kAerErr},
    {"pcie_aer_recovery_failed",
     kCritical,
     kFatal,
     {"an't recover (no error_detected callback)"},
     kAerErr},
    {"pcie_aer_recovered", kInfo, kCountOnly, {"evice recovery successful"}, kAerErr},
    {"pcie_link_reset", kWarning, kDegraded, {" Port link has been reset"}, kAer},
    // DPC took the link below the port down: "containment event, status:%#06x source:%#06x"
    // (to 6.x), "..., %s received from <bdf>" (newest).
    {"pcie_dpc_containment",
     kWarning,
     kDegraded,
     {"containment event, status:", " received from "},
     kDpc,
     "received from "},
    {"pcie_dpc_containment", kWarning, kDegraded, {"containment event, status:"}, kDpc},
    // A slow PCIe link (pci.c __pcie_print_link_status): "8 GT/s x8" (PCIE_SPEED2STR, to 5.x),
    // "8.0 GT/s PCIe x8" (pci_speed_string); the pcie_degraded detector owns the finding.
    {"pcie_bandwidth_limited",
     kWarning,
     kCountOnly,
     {"available PCIe bandwidth, limited by ", " link at "},
     kPci},
    // Transmit timeouts: the kernel watchdog (sch_generic.c: "NETDEV WATCHDOG: <netdev>
    // (<driver>): transmit queue %u timed out" to 6.8, " %u ms" added 6.5; netdev_crit with
    // "CPU: %d: " 6.9+), and the drivers' own report of the same timeout.
    {"netdev_watchdog",
     kWarning,
     kDegraded,
     {"NETDEV WATCHDOG: CPU: ", "transmit queue ", " timed out"},
     kWatchdog},
    {"netdev_watchdog",
     kWarning,
     kDegraded,
     {"NETDEV WATCHDOG: ", "): transmit queue ", " timed out"},
     kWatchdog,
     "NETDEV WATCHDOG: "},
    {"netdev_watchdog", kWarning, kDegraded, {"TX timeout on queue: ", ", SQ: 0x"}, kTxReporter},
    {"netdev_watchdog", kWarning, kDegraded, {"TX timeout detected, starting reset task"}, kBnxt},
    {"netdev_watchdog", kWarning, kDegraded, {"transmit timeout: latency ", " msecs"}, kIpoib},
    // bnxt firmware reset notice (bnxt_async_event_process): the driver resets and recovers.
    {"fw_reset", kWarning, kDegraded, {"Firmware ", " reset event"}, kBnxt},
    // irdma on ice (§9.13; main.c 5.14-6.15, icrdma_if.c since): ice forwards a critical
    // interrupt cause, irdma names the error and asks ice for a function reset.
    {"rdma_oicr_event", kInfo, kCountOnly, {"ICE OICR event notification: oicr = 0x"}, kIrdmaMain},
    {"fw_fatal", kCritical, kFatal, {"critical PE Error, GLPE_CRITERR=0x"}, kIrdmaMain},
    {"fw_fatal", kCritical, kFatal, {": HMC Error"}, kIrdmaMain},
    {"fw_fatal", kCritical, kFatal, {": PE Push Error"}, kIrdmaMain},
    {"health_recovery_started", kWarning, kCountOnly, {": Requesting a reset"}, kIrdmaMain},
    // mlx5e health reporters (§9.13): an error CQE on a queue (the queue is recovered), an RX
    // timeout, and interrupts the EQ missed ("Recover" 5.3-5.5 reporter_tx.c, "Recovered" since).
    {"cqe_error", kWarning, kNoisy, {"ERR CQE on SQ: 0x"}, kTxReporter},
    {"cqe_error", kWarning, kNoisy, {"ERR CQE on RQ: 0x"}, kRxReporter},
    // The error CQE itself: mlx5e's dump (netdev_err), mlx5_ib's (debug level upstream, seen
    // where dynamic debug is on). "Error" and "error" keep the two rows apart.
    {"cqe_error", kWarning, kNoisy, {"Error cqe on cqn 0x", ", ci 0x"}, kEnTx},
    {"cqe_error", kWarning, kNoisy, {" error cqe on cqn 0x"}, kIbCq},
    {"rx_timeout", kWarning, kDegraded, {"RX timeout on channel: ", "RQ: 0x"}, kRxReporter},
    {"eq_missed_interrupts", kWarning, kDegraded, {" eqes on EQ 0x"}, kEnHealth},
    // IPoIB cannot join a multicast group (the broadcast group: the interface carries nothing);
    // ipoib_warn for the first 20 failures of a group, -ETIMEDOUT/-EAGAIN only at debug level.
    {"ipoib_mcast_join_failed",
     kWarning,
     kNoisy,
     {"multicast join failed for ", ", status "},
     kIpoibMcast},
    // ice without its DDP package (ice_main.c, 5.5+): the netdev works, RDMA and DCB are off.
    {"ice_safe_mode", kWarning, kDegraded, {"Entering Safe Mode"}, kIceMain},
    {"ice_safe_mode", kWarning, kDegraded, {"Device now in Safe Mode"}, kIceMain},
    // Link lines (§9.7): evidence for link_flap. ice says "up", the others "Up".
    {"link_down", kInfo, kLinkCause, {": Link down"}, kEnMain},
    {"link_up", kInfo, kLinkCause, {": Link up"}, kEnMain},
    {"link_down", kInfo, kLinkCause, {"NIC Link is Down"}, kIntel},
    {"link_up", kInfo, kLinkCause, {"NIC Link is Up"}, kIntel},
    {"link_up", kInfo, kLinkCause, {"NIC Link is up"}, kIceMain},
    // RDMA and completion queues (§9.8).
    {"qp_fatal", kWarning, kNoisy, {": QP ", " error: ", " (0x"}, kIbQp},
    {"qp_fatal", kWarning, kNoisy, {"abnormal ae_id = 0x", " qp_id = "}, kIrdmaHw},
    {"cq_error", kWarning, kNoisy, {"Processing an iWARP related AE for CQ misc = 0x"}, kIrdmaHw},
    // ib_core's port cache could not be refreshed after a port event (cache.c).
    {"ib_port_query_failed", kWarning, kNoisy, {"ib_query_port failed ("}, kIbCache},
    {"cq_error", kWarning, kNoisy, {"CQ error on CQN 0x"}, kEq},
    {"cq_error", kWarning, kNoisy, {"Async event for bogus CQ"}, kEq},
    // mlx5_get_rsc (qp.c, 4.x-5.x; MLNX_OFED): an event for a QP/SRQ the driver no longer has.
    {"bogus_async_event", kWarning, kNoisy, {"Async event for bogus resource"}, kQp},
    // Strings operators are told to grep for (§9.9). None was found in a kernel source: kept so
    // that a driver or kernel that prints them is heard, named as the manuals name them.
    {"pfc_pause_on", kWarning, kNoisy, {"PFC-PAUSE-ON"}, kManual},
    {"drv_internal_error", kWarning, kNoisy, {"DRV_INTERNAL_ERROR"}, kManual},
    {"health_poll_failed", kCritical, kFatal, {"health poll failed"}, kManual},
    {"link_down", kInfo, kLinkCause, {"ost carrier"}, kManual},  // "Lost carrier", "lost carrier"
};

constexpr std::string_view kFabricDrivers[] = {
    "mlx5_core", "mlx5_ib",  "mlx4_core", "mlx4_en", "mlx4_ib", "ib_core",
    "ib_uverbs", "ib_ipoib", "rdma_cm",   "bnxt_en", "bnxt_re", "irdma",
    "ice",       "i40e",     "efa",       "hfi1",    "ionic",
};

// Kernel source directories and the PCI driver bound to the functions their lines are about
// (the RDMA half of a NIC prints as its own module but the function is the Ethernet driver's).
constexpr std::pair<std::string_view, std::string_view> kSourceDrivers[] = {
    {"drivers/net/ethernet/mellanox/mlx5/", "mlx5_core"},
    {"drivers/infiniband/hw/mlx5/", "mlx5_core"},
    {"drivers/net/ethernet/mellanox/mlx4/", "mlx4_core"},
    {"drivers/infiniband/hw/mlx4/", "mlx4_core"},
    {"drivers/infiniband/hw/efa/", "efa"},
    {"drivers/net/ethernet/amazon/ena/", "ena"},
    {"drivers/net/ethernet/intel/ice/", "ice"},
    {"drivers/infiniband/hw/irdma/", "ice"},
    {"drivers/net/ethernet/intel/i40e/", "i40e"},
    {"drivers/net/ethernet/intel/ixgbe/", "ixgbe"},
    {"drivers/net/ethernet/broadcom/bnxt/", "bnxt_en"},
    {"drivers/infiniband/hw/bnxt_re/", "bnxt_en"},
    {"drivers/net/ethernet/pensando/ionic/", "ionic"},
    {"drivers/infiniband/hw/ionic/", "ionic"},
};

// The PCI driver of a fabric driver's line (mlx5_ib prints about mlx5_core's functions).
std::string_view PciDriverOf(std::string_view driver) {
  if (driver == "mlx5_ib") return "mlx5_core";
  if (driver == "mlx4_ib" || driver == "mlx4_en") return "mlx4_core";
  if (driver == "irdma") return "ice";
  if (driver == "bnxt_re") return "bnxt_en";
  return driver;
}

bool MatchesInOrder(std::string_view message, const KernelEventPattern& pattern) {
  size_t from = 0;
  for (std::string_view fragment : pattern.fragments) {
    if (fragment.empty()) break;
    const size_t at = message.find(fragment, from);
    if (at == std::string_view::npos) return false;
    from = at + fragment.size();
  }
  return true;
}

}  // namespace

std::string_view EventSeverityName(EventSeverity severity) {
  switch (severity) {
    case kInfo:
      return "info";
    case kWarning:
      return "warning";
    case kCritical:
      return "critical";
  }
  return "unknown";
}

std::span<const KernelEventPattern> KernelEventPatterns() { return kPatterns; }

const KernelEventPattern* MatchKernelEvent(std::string_view message) {
  // The PCI driver that printed the line, when its dev_printk prefix says so ("<drv> <bdf>").
  std::optional<std::string_view> printer;
  if (const size_t space = message.find(' '); space != std::string_view::npos) {
    const std::string_view device = message.substr(space + 1, 12);
    if (IsPciAddress(device)) printer = PciDriverOf(message.substr(0, space));
  }
  for (const KernelEventPattern& pattern : kPatterns) {
    if (!MatchesInOrder(message, pattern)) continue;
    if (printer) {
      const auto owner = PciDriverOfPattern(pattern);
      if (owner && *owner != *printer) continue;
    }
    return &pattern;
  }
  return nullptr;
}

const KernelEventPattern* MatchKernelEvent(std::string_view message, uint8_t priority) {
  const KernelEventPattern* pattern = MatchKernelEvent(message);
  constexpr uint8_t kLogLevelWarning = 4;  // include/linux/kern_levels.h
  if (pattern != nullptr && !pattern->milder_event.empty() && priority >= kLogLevelWarning) {
    return FindKernelEvent(pattern->milder_event);
  }
  return pattern;
}

const KernelEventPattern* FindKernelEvent(std::string_view event) {
  for (const KernelEventPattern& pattern : kPatterns) {
    if (pattern.event == event) return &pattern;
  }
  return nullptr;
}

std::span<const std::string_view> FabricDrivers() { return kFabricDrivers; }

std::optional<std::string_view> PciDriverOfPattern(const KernelEventPattern& pattern) {
  for (const auto& [directory, driver] : kSourceDrivers) {
    if (pattern.source.starts_with(directory)) return driver;
  }
  return std::nullopt;
}

std::optional<std::string_view> FabricPciDriverOf(std::string_view message) {
  const auto driver = FabricDriverOf(message);
  if (!driver) return std::nullopt;
  return PciDriverOf(*driver);
}

std::optional<std::string_view> FabricDriverOf(std::string_view message) {
  std::string_view word = message.substr(0, message.find(' '));
  // "mlx5_core: INFO: synd 0x8: ..." (pr_* with the module name and no device).
  if (word.ends_with(':') && word.find('/') == std::string_view::npos) word.remove_suffix(1);
  for (std::string_view driver : kFabricDrivers) {
    if (word == driver) return driver;
  }
  // pr_err lines of mlx5_ib name the RDMA device, not the driver: "mlx5_0/1: ..." and
  // "rocep2s0/1: ..." (§9.8) are mlx5_ib's.
  if (const size_t slash = word.find('/'); slash != std::string_view::npos && slash > 0 &&
                                           word.size() > slash + 2 && word.back() == ':') {
    // "<ibdev>/<port>:" with a decimal port; not "/dev/sda1:".
    const std::string_view port = word.substr(slash + 1, word.size() - slash - 2);
    if (port.find_first_not_of("0123456789") == std::string_view::npos) {
      return std::string_view("mlx5_ib");
    }
  }
  return std::nullopt;
}

}  // namespace fabricwatch::kmsg
