#pragma once
// The topology collector's families that other parts read (detectors, through their MetricInput
// declarations): the collector's contract, defined once here and used by both sides.

#include "collectors/core/collector_family.h"
#include "base/metric_sink.h"

namespace fabricwatch::topology {

// The collector that exports the families below: its name in the collector registry
// (collectors/registry.cc), in --collector.topology and in Snapshot::collector.
inline constexpr std::string_view kCollector = "topology";
// Its families carry it in their type (collectors/core/collector_family.h).
using Family = FamilyOf<kCollector>;

inline constexpr LabelNames kLinkLabels{"device", "role"};

inline constexpr Family kSpeed{
    "fabric_pcie_link_speed_transfers_per_second",
    "Current PCIe link speed (current_link_speed, GT/s converted to transfers per second). "
    "GPUs and some NICs lower it at idle to save power.",
    MetricKind::kGauge,
    kLinkLabels,
    {},
    {ExportRule::kEndpoints,
     "bridges on the paths (40 of 56 functions on hgx-roce) show through "
     "fabric_pcie_link_downtrained"}};
inline constexpr Family kMaxSpeed{
    "fabric_pcie_link_max_speed_transfers_per_second",
    "Maximum PCIe link speed of the function (max_link_speed), in transfers per second.",
    MetricKind::kGauge,
    kLinkLabels,
    {},
    {ExportRule::kOff, "static; fabric_pcie_link_downtrained says when the link runs below it"}};
inline constexpr Family kWidth{
    "fabric_pcie_link_width_lanes",
    "Current PCIe link width (current_link_width); 0 if the link is down.",
    MetricKind::kGauge,
    kLinkLabels,
    {},
    {ExportRule::kEndpoints,
     "bridges on the paths (40 of 56 functions on hgx-roce) show through "
     "fabric_pcie_link_downtrained"}};
inline constexpr Family kMaxWidth{"fabric_pcie_link_max_width_lanes",
                                  "Maximum PCIe link width of the function (max_link_width).",
                                  MetricKind::kGauge,
                                  kLinkLabels,
                                  {},
                                  {ExportRule::kEndpoints,
                                   "bridges on the paths (40 of 56 functions on hgx-roce) show "
                                   "through fabric_pcie_link_downtrained"}};
inline constexpr Family kAer{
    "fabric_pcie_aer_errors_total",
    "PCIe Advanced Error Reporting errors of the function since boot, by severity "
    "(correctable, nonfatal, fatal), from the TOTAL_ERR_* line of aer_dev_<severity>.",
    MetricKind::kCounter,
    {"device", "role", "severity"}};
// PCI config space (pci_config.h): read from <function>/config, which the kernel shows past
// byte 64 only to CAP_SYS_ADMIN. Each family is absent for a function whose readable bytes do
// not reach the register (an unprivileged agent), never 0.
inline constexpr Family kMaxPayload{
    "fabric_pcie_max_payload_bytes",
    "PCIe Max_Payload_Size the function is programmed with (Device Control bits 7:5, "
    "PCI_EXP_DEVCTL_PAYLOAD). Every function on a peer-to-peer path should agree. Absent "
    "when config space past byte 64 is not readable (needs CAP_SYS_ADMIN).",
    MetricKind::kGauge,
    kLinkLabels,
    {},
    {ExportRule::kOff,
     "static configuration; config_drift's max_payload finding names a function that differs from "
     "its path"}};
inline constexpr Family kMaxPayloadSupported{
    "fabric_pcie_max_payload_supported_bytes",
    "Largest PCIe Max_Payload_Size the function supports (Device Capabilities bits 2:0, "
    "PCI_EXP_DEVCAP_PAYLOAD). Absent when config space past byte 64 is not readable.",
    MetricKind::kGauge,
    kLinkLabels,
    {},
    {ExportRule::kOff, "a static capability of the function"}};
inline constexpr Family kMaxReadRequest{
    "fabric_pcie_max_read_request_bytes",
    "PCIe Max_Read_Request_Size of the function (Device Control bits 14:12, "
    "PCI_EXP_DEVCTL_READRQ). Absent when config space past byte 64 is not readable.",
    MetricKind::kGauge,
    kLinkLabels,
    {},
    {ExportRule::kOff,
     "static configuration; config_drift's max_read_request finding names a function that "
     "differs"}};
inline constexpr LabelNames kAcsLabels{"device", "role", "control"};
inline constexpr Family kAcsControl{
    "fabric_pcie_acs_control",
    "1 if the ACS control is enabled on the function (ACS Control register, PCI_ACS_CTRL; "
    "control = source_validation, translation_blocking, request_redirect, "
    "completion_redirect, upstream_forwarding, egress_control, direct_translated), else 0. "
    "request_redirect or completion_redirect on a bridge between a GPU and a NIC sends their "
    "peer-to-peer traffic through the root complex. Only for functions with the ACS extended "
    "capability, and only when the whole 4096-byte config space is readable (CAP_SYS_ADMIN).",
    MetricKind::kGauge,
    kAcsLabels,
    {},
    {ExportRule::kOff,
     "7 bits per PCI function; config_drift's acs finding names a function whose P2P requests are "
     "redirected"}};
inline constexpr Family kAcsCapable{
    "fabric_pcie_acs_capable",
    "1 if the function implements the ACS control (ACS Capability register, PCI_ACS_CAP), "
    "else 0; same controls and conditions as fabric_pcie_acs_control.",
    MetricKind::kGauge,
    kAcsLabels,
    {},
    {ExportRule::kOff,
     "7 static capability bits per PCI function (196 on hgx-roce); config_drift reads them"}};

inline constexpr LabelNames kPairLabels{"gpu", "nic", "rdma_device"};
inline constexpr Family kPairDistance{
    "fabric_topology_gpu_nic_distance",
    "NVML topology level of the GPU-NIC path: 10 PIX, 20 PXB, 30 PHB, 40 NODE, 50 SYS "
    "(nvmlGpuTopologyLevel_t). Lower is closer; GPUDirect RDMA pays off at 10-20.",
    MetricKind::kGauge, kPairLabels};

// What the GPUs, NICs and the bridges between them are, and the GPUDirect RDMA module: read by
// config_drift (GPU-NIC paths for ACS, MPS and MRRS; the module while GPUs and RDMA NICs exist).
inline constexpr Family kGpuInfo{
    "fabric_topology_gpu_info",
    "A GPU (vendor NVIDIA 0x10de or AMD 0x1002, PCI base class 0x03 or 0x12) by PCI address: "
    "vendor and device ID, host bridge (root complex, pciDDDD:BB), NUMA node (empty when the "
    "kernel reports -1 or nothing) and local CPU list. Constant 1.",
    MetricKind::kInfo,
    {"gpu", "vendor_id", "device_id", "host_bridge", "numa_node", "local_cpulist"},
    {},
    {ExportRule::kOff,
     "the identity of each GPU; the topology series carry the GPU's name and address"}};
inline constexpr Family kNicInfo{
    "fabric_topology_nic_info",
    "A NIC (PCI base class 0x02, or a function behind class/infiniband/*/device; SR-IOV VFs "
    "skipped) by PCI address: vendor and device ID, its RDMA devices and netdevs "
    "(comma-separated), host bridge, NUMA node (empty when unknown) and local CPU list. "
    "Constant 1.",
    MetricKind::kInfo,
    {"nic", "vendor_id", "device_id", "rdma_device", "netdev", "host_bridge", "numa_node",
     "local_cpulist"},
    {},
    {ExportRule::kOff, "the identity of each NIC; the topology series carry the NIC's name"}};
inline constexpr Family kNearest{
    "fabric_topology_gpu_nearest_nic_info",
    "The NICs closest to a GPU (every NIC at the smallest distance; only RDMA-capable NICs "
    "are candidates when the host has any) and their path type. Constant 1.",
    MetricKind::kInfo,
    {"gpu", "nic", "rdma_device", "level"}};
inline constexpr Family kDeviceInfo{
    "fabric_pcie_device_info",
    "A PCI function the topology collector reports on (role gpu, nic, or bridge on their "
    "paths): vendor and device ID, class code, the function or host bridge directly above it, "
    "and its host bridge. Constant 1.",
    MetricKind::kInfo,
    {"device", "role", "vendor_id", "device_id", "pci_class", "upstream", "host_bridge"},
    {},
    {ExportRule::kOff,
     "the identity of each function; every fabric_pcie_* series carries its device and role"}};
inline constexpr Family kPeermem{
    "fabric_topology_gpudirect_rdma_module_loaded",
    "1 if the GPUDirect RDMA kernel module (nvidia_peermem, or the legacy nv_peer_mem) is "
    "loaded (<sysfs>/module/<module> exists), else 0. Exported when an NVIDIA GPU is present.",
    MetricKind::kGauge,
    {"module"}};
}  // namespace fabricwatch::topology
