#include "collectors/sys/kmsg_patterns.h"

namespace fabricwatch::sys {
namespace {

using enum EventSeverity;
using EventClass::kCommandTimeout, EventClass::kFatal, EventClass::kLinkCause, EventClass::kModule,
    EventClass::kNoisy, EventClass::kCountOnly;

// Sources, by kernel file (docs/reference.md §9 quotes each format string).
constexpr std::string_view kHealth = "drivers/net/ethernet/mellanox/mlx5/core/health.c";
constexpr std::string_view kCmd = "drivers/net/ethernet/mellanox/mlx5/core/cmd.c";
constexpr std::string_view kEvents = "drivers/net/ethernet/mellanox/mlx5/core/events.c";
constexpr std::string_view kEq = "drivers/net/ethernet/mellanox/mlx5/core/eq.c";
constexpr std::string_view kEnMain = "drivers/net/ethernet/mellanox/mlx5/core/en_main.c";
constexpr std::string_view kAer = "drivers/pci/pcie/aer.c";
constexpr std::string_view kIbQp = "drivers/infiniband/hw/mlx5/qp.c";
constexpr std::string_view kIntel = "Intel e1000e/igb/ixgbe/i40e/ice netdev_info (unverified)";
constexpr std::string_view kManual = "operator manuals (docs/reference.md §9.9, unverified)";

// First match wins: specific rows before general ones (ACCESS_REG before any command failure,
// "recovered after timeout" before "timeout", module errors before the plain module event).
constexpr KernelEventPattern kPatterns[] = {
    // mlx5 health (§9.3).
    {"fw_fatal", kCritical, kFatal, {"Fatal error ", " detected"}, kHealth},
    {"health_compromised", kCritical, kFatal, {"health compromised"}, kHealth},
    {"health_syndrome", kCritical, kFatal, {"Health issue observed, "}, kHealth},
    {"health_syndrome", kCritical, kFatal, {"synd 0x", ": "}, kHealth},
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
    // mlx5 command interface (§9.4).
    {"cmd_recovered", kInfo, kCountOnly, {"(0x", "recovered after timeout"}, kCmd},
    {"cmd_timeout", kWarning, kCommandTimeout, {"(0x", ") timeout. Will cause a leak"}, kCmd},
    {"cmd_timeout", kWarning, kCommandTimeout, {"(0x", "Async, timeout. Will cause a leak"}, kCmd},
    {"cmd_timeout", kWarning, kCommandTimeout, {"(0x", ") No done completion"}, kCmd},
    {"cmd_timeout", kWarning, kCommandTimeout, {"(0x", "canceled on out of queue timeout"}, kCmd},
    {"access_reg_failed", kWarning, kNoisy, {"ACCESS_REG(0x805)", " failed, status "}, kCmd},
    {"cmd_failed", kWarning, kNoisy, {"(0x", ") op_mod(0x", " failed, status "}, kCmd},
    // Port module events (§9.5): the error rows first, both spellings of "Bus stuck".
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
    {"pcie_insufficient_power",
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
    // PCIe AER (§9.6): current and pre-2025 wording; "Correct" covers Correctable and Corrected.
    {"pcie_aer_inaccessible", kCritical, kFatal, {"AER: ", "Bus Error: ", "Inaccessible"}, kAer},
    {"pcie_aer_fatal",
     kCritical,
     kFatal,
     {"AER: ", "Bus Error: severity=Uncorrect", "(Fatal)"},
     kAer},
    {"pcie_aer_nonfatal",
     kWarning,
     kNoisy,
     {"AER: ", "Bus Error: severity=Uncorrect", "(Non-Fatal)"},
     kAer},
    {"pcie_aer_corrected", kWarning, kNoisy, {"AER: ", "Bus Error: severity=Correct"}, kAer},
    {"pcie_aer_received", kInfo, kCountOnly, {"AER: ", " Error message", " from "}, kAer},
    // The detail lines after a Bus Error line (status/mask, one line per error bit).
    {"pcie_aer_detail", kInfo, kCountOnly, {"AER: ", " device [", "] error status/mask="}, kAer},
    {"pcie_aer_detail", kInfo, kCountOnly, {"AER:   ["}, kAer},
    {"pcie_aer_received", kInfo, kCountOnly, {"AER: ", " error received: "}, kAer},
    // Link lines (§9.7): evidence for link_flap.
    {"link_down", kInfo, kLinkCause, {": Link down"}, kEnMain},
    {"link_up", kInfo, kLinkCause, {": Link up"}, kEnMain},
    {"link_down", kInfo, kLinkCause, {"NIC Link is Down"}, kIntel},
    {"link_up", kInfo, kLinkCause, {"NIC Link is Up"}, kIntel},
    // RDMA and completion queues (§9.8).
    {"qp_fatal", kWarning, kNoisy, {": QP ", " error: ", " (0x"}, kIbQp},
    {"cq_error", kWarning, kNoisy, {"CQ error on CQN 0x"}, kEq},
    {"cq_error", kWarning, kNoisy, {"Async event for bogus CQ"}, kEq},
    // Strings operators are told to grep for (§9.9). None was found in a kernel source: kept so
    // that a driver or kernel that prints them is heard, named as the manuals name them.
    {"pfc_pause_on", kWarning, kNoisy, {"PFC-PAUSE-ON"}, kManual},
    {"drv_internal_error", kWarning, kNoisy, {"DRV_INTERNAL_ERROR"}, kManual},
    {"health_poll_failed", kCritical, kFatal, {"health poll failed"}, kManual},
    {"link_down", kInfo, kLinkCause, {"ost carrier"}, kManual},  // "Lost carrier", "lost carrier"
};

constexpr std::string_view kFabricDrivers[] = {
    "mlx5_core", "mlx5_ib", "mlx4_core", "mlx4_en", "mlx4_ib", "ib_core", "ib_uverbs", "ib_ipoib",
    "rdma_cm",   "bnxt_en", "bnxt_re",   "irdma",   "ice",     "i40e",    "efa",       "hfi1",
};

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
  for (const KernelEventPattern& pattern : kPatterns) {
    if (MatchesInOrder(message, pattern)) return &pattern;
  }
  return nullptr;
}

const KernelEventPattern* FindKernelEvent(std::string_view event) {
  for (const KernelEventPattern& pattern : kPatterns) {
    if (pattern.event == event) return &pattern;
  }
  return nullptr;
}

std::span<const std::string_view> FabricDrivers() { return kFabricDrivers; }

std::optional<std::string_view> FabricDriverOf(std::string_view message) {
  const std::string_view word = message.substr(0, message.find(' '));
  for (std::string_view driver : kFabricDrivers) {
    if (word == driver) return driver;
  }
  // pr_err lines of mlx5_ib name the RDMA device, not the driver: "mlx5_0/1: ..." and
  // "rocep2s0/1: ..." (§9.8) are mlx5_ib's.
  if (word.size() > 1 && word.back() == ':' && word.find('/') != std::string_view::npos) {
    return std::string_view("mlx5_ib");
  }
  return std::nullopt;
}

}  // namespace fabricwatch::sys
