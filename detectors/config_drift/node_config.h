#pragma once
// The node's configuration as config_drift sees it (issue 21, README "Configuration drift"):
// per fabric port the lossless-fabric settings and the MTU, per PCI function on the GPU-NIC
// paths MPS, MRRS and ACS redirect, and the GPUDirect RDMA module. Built from the collectors'
// typed families only (ConfigInputs() declares them), never from a device.
//
// Where each field comes from:
//   fabric port                 a netdev of an Ethernet RDMA port (the node model), or one
//                               that reports PFC (fabric_pfc_enabled: a DCB-capable NIC)
//   pfc                         fabric_pfc_enabled{netdev,priority}
//   trust, dscp_map             fabric_qos_trust_info, fabric_qos_dscp_priority_map_info
//   storm timeout               fabric_pfc_storm_prevention_timeout_seconds
//   global pause                fabric_ethtool_pause_enabled{netdev,direction}
//   ecn                         fabric_roce_ecn_enabled{netdev,priority,role}
//   priority bytes              fabric_ethtool_priority_bytes_total (rx + tx): the RoCE priority
//   mtu                         fabric_netdev_mtu_bytes
//   rdma port, its netdev,      the node model (detectors/core/node_model.h), from
//   state and ib mtu            fabric_rdma_port_info, _state, _active_mtu_bytes, _max_mtu_bytes
//   functions, upstream         fabric_pcie_device_info{device,role,upstream}
//   mps, mrrs                   fabric_pcie_max_payload_bytes, _max_read_request_bytes
//   acs redirect                fabric_pcie_acs_control{control=request_redirect|completion_...}
//   nearest pairs               fabric_topology_gpu_nearest_nic_info{gpu,nic,level}
//   GPUs, RDMA NICs             fabric_topology_gpu_info{vendor_id}, fabric_topology_nic_info
//   GPUDirect module            fabric_topology_gpudirect_rdma_module_loaded{module}
// Every field is optional: a collector that is off, or a value its source does not report,
// leaves it empty, and no check reads an empty field as drift.
//
// Thread-safety: values only.

#include <array>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "detectors/core/inputs.h"
#include "detectors/core/node_model.h"
#include "detectors/core/snapshot_lookup.h"

namespace fabricwatch::detect::drift {

struct PortConfig {
  std::string netdev;
  bool roce = false;                         // the netdev of an Ethernet RDMA port
  std::array<std::optional<bool>, 8> pfc{};  // PFC enabled, per priority
  std::string trust;                         // "dscp", "pcp" or "" (unknown)
  std::string dscp_map;                      // 64 characters, or "" (none reported)
  std::optional<double> storm_timeout_seconds;
  std::optional<bool> pause_rx;
  std::optional<bool> pause_tx;
  // RoCE ECN enable per priority, np (index 0) and rp (index 1).
  std::array<std::array<std::optional<bool>, 2>, 8> ecn{};
  std::array<std::optional<double>, 8> priority_bytes{};  // rx + tx
  std::optional<int> mtu;

  bool AnyPfc() const;
};

// An RDMA port that reports its IB MTU (issue 34). RoCE ports are here as well as, by their
// netdev, in NodeConfig::ports.
struct RdmaPortConfig {
  std::string device;
  std::string port;
  std::string netdev;      // from the node model; "" for an IB port without IPoIB
  std::string link_layer;  // "InfiniBand", "Ethernet" or "" (not reported)
  std::optional<int> state;
  std::optional<int> active_mtu;  // bytes
  std::optional<int> max_mtu;     // bytes
};

struct PciFunction {
  std::string bdf;
  std::string role;      // gpu, nic, bridge
  std::string upstream;  // the function or host bridge directly above it
  std::optional<int> max_payload;
  std::optional<int> max_read_request;
  std::optional<bool> request_redirect;
  std::optional<bool> completion_redirect;
};

struct GpuNicPair {
  std::string gpu;
  std::string nic;
  std::string level;  // PIX, PXB, PHB, NODE, SYS
};

struct NodeConfig {
  std::vector<PortConfig> ports;           // sorted by netdev
  std::vector<RdmaPortConfig> rdma_ports;  // those with an active IB MTU, by device and port
  std::map<std::string, PciFunction> functions;
  std::vector<GpuNicPair> nearest;
  std::map<std::string, bool> gpudirect_modules;  // module -> loaded; empty when not reported
  bool nvidia_gpu = false;
  bool rdma_nic = false;
};

// The node model (the RDMA ports) and the latest kept families of each collector; nullptr where
// a collector has not reported.
struct ConfigSources {
  const NodeModel* node = nullptr;
  const Families* netdev = nullptr;
  const Families* ethtool = nullptr;
  const Families* topology = nullptr;
};

NodeConfig BuildNodeConfig(const ConfigSources& sources);

// The collector families BuildNodeConfig reads (detectors/core/inputs.h).
std::span<const MetricInput> ConfigInputs();

// The functions from `bdf` up to the host bridge (bdf first), following upstream; stops at a
// function it does not know and after 32 steps (a loop in hostile input).
std::vector<std::string> UpstreamChain(const NodeConfig& config, const std::string& bdf);

}  // namespace fabricwatch::detect::drift
