#pragma once
// Pure parsers and classifiers of the `topology` collector (docs/reference.md §6). No I/O.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace fabricwatch::topology {

// current_link_speed / max_link_speed: "16.0 GT/s PCIe" (kernels ≥ 5.7), "8 GT/s" and
// "2.5 GT/s" (older kernels) → transfers per second (16e9). "Unknown" / "Unknown speed" (no
// link, or a speed the kernel cannot name) → nullopt. Anything else is an InvalidArgument.
Result<std::optional<double>> ParseLinkSpeed(std::string_view text, std::string_view what);

// vendor / device / class: "0x10de", "0x030200" (0x-prefixed hex as pci-sysfs.c prints it).
Result<uint32_t> ParsePciHex(std::string_view text, std::string_view what);

// aer_dev_correctable / aer_dev_nonfatal / aer_dev_fatal: one "Name count" line per error
// bit, then "TOTAL_ERR_COR|TOTAL_ERR_NONFATAL|TOTAL_ERR_FATAL count". `total` is the
// TOTAL_ERR_* value, or the sum of the lines when a kernel printed none.
struct AerStats {
  std::vector<std::pair<std::string, uint64_t>> counters;
  uint64_t total = 0;
  bool has_total_line = false;
};
Result<AerStats> ParseAerStats(std::string_view text, std::string_view what);

// The place of a PCI function in the tree, from the (sysfs-relative or absolute) path its
// bus/pci/devices/<bdf> link resolves to, e.g.
//   devices/pci0000:3a/0000:3a:00.0/0000:3b:00.0/0000:3c:08.0/0000:3e:00.0
// → host_bridge "pci0000:3a", chain {0000:3a:00.0, 0000:3b:00.0, 0000:3c:08.0, 0000:3e:00.0}
// (bridges from the root port down, the function itself last). The host bridge is the last
// "pciDDDD:BB" component before the trailing run of BDFs, so a VMD domain (pci10000:e0 below
// an endpoint of pci0000:00) is its own host bridge, as it is to the CPU.
struct PciPath {
  std::string host_bridge;
  std::vector<std::string> chain;
};
Result<PciPath> SplitPciPath(std::string_view path);

// The last PCI function on a device path: ".../0000:00:03.0/virtio0/net/eth0" → "0000:00:03.0";
// nullopt when the path has none below a host bridge (devices/virtual/net/lo).
std::optional<std::string> EnclosingPciFunction(std::string_view path);

// Joins a relative symlink target onto the directory holding the link and folds "." and
// ".." lexically, without touching the filesystem (replay roots must not resolve against the
// host's /sys): NormalizeLinkTarget("bus/pci/devices", "../../../devices/pci0000:00/x") ==
// "devices/pci0000:00/x". An absolute target keeps its own root ("/sys/devices/..." →
// "/sys/devices/..."). Going above the root is an InvalidArgument.
Result<std::string> NormalizeLinkTarget(std::string_view link_dir, std::string_view target);

// nvidia-smi topo -m link types, ordered from near to far, with NVML's numeric levels.
enum class Level { kX, kPix, kPxb, kPhb, kNode, kSys };
std::string_view LevelName(Level level);  // "X", "PIX", "PXB", "PHB", "NODE", "SYS"
int LevelDistance(Level level);           // 0, 10, 20, 30, 40, 50 (nvmlGpuTopologyLevel_t)

struct Endpoint {
  PciPath path;
  std::optional<int> numa_node;  // nullopt: numa_node absent or -1
};

// docs/reference.md §6.4:
//   same function → X; different host bridges → NODE when both NUMA nodes are known and equal,
//   or both unknown (no proximity info: a single-node host or a VM), SYS otherwise (different
//   nodes, or only one side known: locality cannot be shown); same host bridge and no common
//   bridge → PHB; else, below the deepest common bridge, at most one bridge on each side → PIX,
//   more → PXB.
Level Classify(const Endpoint& a, const Endpoint& b);

enum class DeviceKind { kOther, kGpu, kNic, kBridge };
// GPU: vendor NVIDIA (0x10de) or AMD (0x1002) with base class 0x03 (display) or 0x12
// (processing accelerator) — never by class alone (BMC VGA, e.g. ASPEED 0x1a03). NIC: base
// class 0x02 (Ethernet 0x0200, InfiniBand 0x0207, other 0x0280). Bridge: PCI-to-PCI 0x0604xx
// (root ports, switch upstream/downstream ports). The collector adds the functions behind
// class/infiniband/*/device to the NICs whatever their class.
DeviceKind ClassifyDevice(uint32_t vendor, uint32_t class_code);

// "0x10de" style label value.
std::string HexId(uint32_t value, int digits);

}  // namespace fabricwatch::topology
