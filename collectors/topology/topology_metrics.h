#pragma once
// The topology collector's families that other parts read (detectors, through their MetricInput
// declarations): the collector's contract, defined once here and used by both sides.

#include "collectors/core/metric_sink.h"

namespace fabricwatch::topology {

inline constexpr LabelNames kLinkLabels{"device", "role"};

inline constexpr MetricDesc kSpeed{
    "fabric_pcie_link_speed_transfers_per_second",
    "Current PCIe link speed (current_link_speed, GT/s converted to transfers per second). "
    "GPUs and some NICs lower it at idle to save power.",
    MetricKind::kGauge, kLinkLabels};
inline constexpr MetricDesc kMaxSpeed{
    "fabric_pcie_link_max_speed_transfers_per_second",
    "Maximum PCIe link speed of the function (max_link_speed), in transfers per second.",
    MetricKind::kGauge, kLinkLabels};
inline constexpr MetricDesc kWidth{
    "fabric_pcie_link_width_lanes",
    "Current PCIe link width (current_link_width); 0 if the link is down.", MetricKind::kGauge,
    kLinkLabels};
inline constexpr MetricDesc kMaxWidth{"fabric_pcie_link_max_width_lanes",
                                      "Maximum PCIe link width of the function (max_link_width).",
                                      MetricKind::kGauge, kLinkLabels};
inline constexpr MetricDesc kAer{
    "fabric_pcie_aer_errors_total",
    "PCIe Advanced Error Reporting errors of the function since boot, by severity "
    "(correctable, nonfatal, fatal), from the TOTAL_ERR_* line of aer_dev_<severity>.",
    MetricKind::kCounter,
    {"device", "role", "severity"}};
inline constexpr LabelNames kPairLabels{"gpu", "nic", "rdma_device"};
inline constexpr MetricDesc kPairDistance{
    "fabric_topology_gpu_nic_distance",
    "NVML topology level of the GPU-NIC path: 10 PIX, 20 PXB, 30 PHB, 40 NODE, 50 SYS "
    "(nvmlGpuTopologyLevel_t). Lower is closer; GPUDirect RDMA pays off at 10-20.",
    MetricKind::kGauge, kPairLabels};
}  // namespace fabricwatch::topology
