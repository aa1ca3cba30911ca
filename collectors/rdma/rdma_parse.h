#pragma once
// Pure parsers for /sys/class/infiniband attribute values (docs/reference.md §1; kernel
// drivers/infiniband/core/sysfs.c and Documentation/ABI/stable/sysfs-class-infiniband).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"
#include "collectors/rdma/rdma_metrics.h"  // IbLaneGbps

namespace fabricwatch::rdma {

// "<n>: <NAME>" as state, phys_state and node_type print it ("4: ACTIVE", "5: LinkUp",
// "1: CA", "0: <unknown>"). The number is authoritative; the name is kept for info labels.
struct NumberedName {
  int id = 0;
  std::string name;
};
Result<NumberedName> ParseNumberedName(std::string_view text, std::string_view what);

// `rate`: "%d%s Gb/sec (%dX%s)" (rate_show in core/sysfs.c): "400 Gb/sec (4X NDR)",
// "2.5 Gb/sec (1X)" (SDR prints no suffix), "5 Gb/sec (1X DDR)". Some drivers print
// "0 GB/sec" with no width for a port that is down.
struct PortRate {
  double bytes_per_second = 0;
  int lanes = 0;      // 0 when the string carries no width
  std::string speed;  // "SDR", "DDR", "QDR", "FDR10", "FDR", "EDR", "HDR", "NDR", "XDR", "" (none)
  // Per-lane rate in Gb/s: the generation's nominal lane rate when `speed` names a known one,
  // else the rate divided by the width; 0 when neither is known (no width, or a rate of 0).
  double lane_gbps = 0;
};
Result<PortRate> ParseRate(std::string_view text, std::string_view what);

// A counter file: unsigned decimal, or "N/A (no PMA)" from kernels whose PMA query failed
// (node_exporter issue 966; current kernels return an errno instead) -> nullopt.
Result<std::optional<uint64_t>> ParseCounterValue(std::string_view text, std::string_view what);

// `lid`, `sm_lid`: "0x%x".
Result<uint32_t> ParseLid(std::string_view text, std::string_view what);

// enum ibv_mtu (libibverbs/verbs.h: IBV_MTU_256 = 1, 512, 1024, 2048, IBV_MTU_4096 = 5) in bytes;
// any other value is an error (a provider bug or a newer enum value). ibv_query_port reports the
// port's active_mtu and max_mtu in it.
Result<int> IbMtuBytes(int ibv_mtu);

// The replay form of an IB MTU (docs/design.md §5.1, ports/<n>/active_mtu and max_mtu): the
// bytes, alone ("4096") or as ibv_devinfo prints them with the enum value ("4096 (5)"). Bytes
// other than 256, 512, 1024, 2048 or 4096, or an enum value that disagrees, are errors naming
// `what`.
Result<int> ParseIbMtu(std::string_view text, std::string_view what);

}  // namespace fabricwatch::rdma
