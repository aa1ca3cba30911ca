#pragma once
// The node's fabric shape (issue 20, README "Fabric shape"): one record per fabric port — a port
// of an RDMA device, InfiniBand or RoCE — keyed by the PCI address of its function and its port
// number, so that a renamed RDMA device or netdev keeps its identity across reboots.
//
// The shape is built from the node model (detectors/core/node_model.h), itself built from the
// collectors' typed families only (rdma, netdev, ethtool, topology; ShapeInputs() declares them),
// never from a device, so the link_degraded detector and `fabricwatch --shape.print` see exactly
// the same thing.
//
// Where each field comes from (the families the model reads it from):
//   device, port, link_layer, netdev   fabric_rdma_port_info
//   firmware, board_id, hca_type, pci  fabric_rdma_device_info
//   state, phys_state, sm_lid          fabric_rdma_port_state, _phys_state, _sm_lid
//   InfiniBand rate, width, lane       fabric_rdma_port_rate_bytes_per_second, _lanes,
//                                      _lane_speed_bytes_per_second (rate parsed apart)
//   Ethernet rate                      fabric_ethtool_link_speed_bytes_per_second, else
//                                      fabric_netdev_speed_bytes_per_second, else the RoCE rate
//   Ethernet width, supported max      fabric_ethtool_link_lanes, _supported_max_speed_...
//                                      (the RoCE rate's "4X HDR" is synthetic: never a width)
//   mtu                                fabric_netdev_mtu_bytes of the port's netdev
//   pcie speed and width               fabric_pcie_link_* of the function (role nic)
//   nearest GPU and its path level     fabric_topology_gpu_nic_distance (smallest)
// Every field is optional: a collector that is off, or a value the source does not report,
// leaves it empty, and nothing downstream reads an empty field as a fault.
//
// Thread-safety: values only.

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "detectors/core/inputs.h"
#include "detectors/core/node_model.h"
#include "detectors/core/snapshot_lookup.h"
#include "detectors/link_degraded/port_state.h"

namespace fabricwatch::detect::shape {

struct PortKey {
  std::string pci_address;  // "0000:18:00.0"; the device name when no PCI address is known
  int port = 1;
  auto operator<=>(const PortKey&) const = default;
  std::string Text() const;  // "0000:18:00.0/1"
};

struct PortShape {
  PortKey key;
  std::string device;      // RDMA device, "mlx5_0"
  std::string netdev;      // RoCE netdev or IPoIB netdev; "" when none
  std::string link_layer;  // "InfiniBand", "Ethernet" or "" (unknown)
  std::optional<int> state;
  std::optional<int> phys_state;
  std::optional<int> sm_lid;                 // InfiniBand only
  std::optional<double> rate_gbps;           // whole port
  std::optional<int> width;                  // lanes
  std::optional<double> lane_gbps;           // per lane
  std::string lane_speed;                    // IBTA generation name ("NDR"); InfiniBand only
  std::optional<double> supported_max_gbps;  // Ethernet: the fastest supported link mode
  std::optional<int> mtu;
  std::string firmware;
  std::string board_id;
  std::string hca_type;
  std::optional<double> pcie_speed_gts;
  std::optional<int> pcie_width;
  std::optional<double> pcie_max_speed_gts;
  std::optional<int> pcie_max_width;
  std::string nearest_gpu;  // PCI address of the closest GPU
  std::string gpu_level;    // PIX, PXB, PHB, NODE or SYS

  bool ethernet() const { return link_layer == "Ethernet"; }
  // Logically up: ACTIVE or ACTIVE_DEFER. On RoCE the state follows the carrier.
  bool up() const { return state && (*state == kStateActive || *state == kStateActiveDefer); }
};

struct NodeShape {
  std::vector<PortShape> ports;  // sorted by key
  const PortShape* Find(const PortKey& key) const;
};

// The shape of every RDMA port in the node model (detectors/core/node_model.h); empty when the
// newest rdma snapshot reported no port facts.
NodeShape BuildShape(const NodeModel& node);

// The collector families the shape reads, through the node model (detectors/core/inputs.h).
std::span<const MetricInput> ShapeInputs();

// The shape as YAML: a `ports:` list that is itself a valid --shape.file manifest (README
// "Fabric shape"), with a header comment naming the host.
std::string ShapeToYaml(const NodeShape& shape, std::string_view hostname);

}  // namespace fabricwatch::detect::shape
