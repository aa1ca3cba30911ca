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
// PCI config space (pci_config.h): read from <function>/config, which the kernel shows past
// byte 64 only to CAP_SYS_ADMIN. Each family is absent for a function whose readable bytes do
// not reach the register (an unprivileged agent), never 0.
inline constexpr MetricDesc kMaxPayload{
    "fabric_pcie_max_payload_bytes",
    "PCIe Max_Payload_Size the function is programmed with (Device Control bits 7:5, "
    "PCI_EXP_DEVCTL_PAYLOAD). Every function on a peer-to-peer path should agree. Absent "
    "when config space past byte 64 is not readable (needs CAP_SYS_ADMIN).",
    MetricKind::kGauge, kLinkLabels};
inline constexpr MetricDesc kMaxPayloadSupported{
    "fabric_pcie_max_payload_supported_bytes",
    "Largest PCIe Max_Payload_Size the function supports (Device Capabilities bits 2:0, "
    "PCI_EXP_DEVCAP_PAYLOAD). Absent when config space past byte 64 is not readable.",
    MetricKind::kGauge, kLinkLabels};
inline constexpr MetricDesc kMaxReadRequest{
    "fabric_pcie_max_read_request_bytes",
    "PCIe Max_Read_Request_Size of the function (Device Control bits 14:12, "
    "PCI_EXP_DEVCTL_READRQ). Absent when config space past byte 64 is not readable.",
    MetricKind::kGauge, kLinkLabels};
inline constexpr LabelNames kAcsLabels{"device", "role", "control"};
inline constexpr MetricDesc kAcsControl{
    "fabric_pcie_acs_control",
    "1 if the ACS control is enabled on the function (ACS Control register, PCI_ACS_CTRL; "
    "control = source_validation, translation_blocking, request_redirect, "
    "completion_redirect, upstream_forwarding, egress_control, direct_translated), else 0. "
    "request_redirect or completion_redirect on a bridge between a GPU and a NIC sends their "
    "peer-to-peer traffic through the root complex. Only for functions with the ACS extended "
    "capability, and only when the whole 4096-byte config space is readable (CAP_SYS_ADMIN).",
    MetricKind::kGauge, kAcsLabels};
inline constexpr MetricDesc kAcsCapable{
    "fabric_pcie_acs_capable",
    "1 if the function implements the ACS control (ACS Capability register, PCI_ACS_CAP), "
    "else 0; same controls and conditions as fabric_pcie_acs_control.",
    MetricKind::kGauge, kAcsLabels};

inline constexpr LabelNames kPairLabels{"gpu", "nic", "rdma_device"};
inline constexpr MetricDesc kPairDistance{
    "fabric_topology_gpu_nic_distance",
    "NVML topology level of the GPU-NIC path: 10 PIX, 20 PXB, 30 PHB, 40 NODE, 50 SYS "
    "(nvmlGpuTopologyLevel_t). Lower is closer; GPUDirect RDMA pays off at 10-20.",
    MetricKind::kGauge, kPairLabels};
}  // namespace fabricwatch::topology
