#pragma once
// The simulated node: what hardware exists and what it is called. Pure data, no file I/O.
//
// A node is built from a NodeSpec (a description: HCAs with their ports, link layer, rate, device
// kind, transceiver type, channels; GPUs; NUMA nodes; PCIe layout). Each HCA port is its own PCI
// function and its own RDMA device with port 1, as mlx5 does (a dual-port ConnectX is two
// functions, mlx5_0 and mlx5_1). Names follow the kernel: mlx5_<n>, systemd predictable netdev
// names enp<bus>s0f<fn>np<fn> (Ethernet, phys_port_name p<fn>) and ibp<bus>s0[f<fn>] (IPoIB).

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace fabricwatch::sim {

enum class LinkLayer { kInfiniBand, kEthernet };
// SFP: SFF-8472 (512-byte image); QSFP28: SFF-8636 (640); QSFP-DD / OSFP: CMIS 5.0 (768).
enum class ModuleType { kNone, kSfp, kQsfp28, kQsfpDd, kOsfp };

std::string_view LinkLayerName(LinkLayer layer);
std::string_view ModuleTypeName(ModuleType type);

struct HcaSpec {
  int ports = 1;  // PCI functions of the card
  LinkLayer link_layer = LinkLayer::kEthernet;
  int rate_gbps = 400;        // the rate its links train at: 800, 400, 200, 100, 50, 40, 25 or 10
  int card_gbps = 0;          // the card's fastest rate, which picks the model (0: rate_gbps)
  std::string kind = "mlx5";  // device kind: the driver (only mlx5 is modelled)
  ModuleType module = ModuleType::kOsfp;
  int channels = 12;  // mlx5 channels (queue pairs) per netdev: the per-channel ethtool families
};

struct NodeSpec {
  std::string preset;
  std::string hostname = "sim-node";
  std::vector<HcaSpec> hcas;
  int gpus = 0;
  int numa_nodes = 2;
  // HGX layout: GPU i and NIC i under one second-level PCIe switch (PIX), two pairs per root
  // port (PXB), two root complexes per socket (NODE), two sockets (SYS). Needs gpus == ports.
  bool hgx_switches = false;
};

// A PCI function or bridge of the tree.
struct PciFunction {
  std::string path;  // under devices/: "pci0000:15/0000:15:01.0/0000:16:00.0"
  std::string bdf;   // "0000:16:00.0"
  uint16_t vendor = 0;
  uint16_t device = 0;
  uint32_t pci_class = 0;
  int numa_node = 0;
  std::string driver;  // empty: none bound
  double link_speed_gts = 32.0;  // current = max unless downtrained
  int link_width = 16;
  bool is_gpu = false;
};

// One HCA port: an RDMA device (port 1), its PCI function, its netdev and its module.
struct Port {
  int index = 0;     // position in Node::ports
  int hca = 0;       // index of the card
  int function = 0;  // PCI function number on the card
  std::string rdma_device;  // mlx5_<n>
  int port_num = 1;
  LinkLayer link_layer = LinkLayer::kEthernet;
  int rate_gbps = 400;
  int card_gbps = 400;      // the card's fastest rate (a ConnectX-7 is 400 even at HDR)
  int lanes = 4;            // electrical/optical lanes of the link (and of the module)
  int lane_speed = 0;       // index into LaneSpeeds() (link_rate.h): NDR for 400G
  std::string rate_text;    // "400 Gb/sec (4X NDR)" as ports/<n>/rate prints it
  std::string netdev;       // RoCE netdev or IPoIB netdev
  int ifindex = 0;
  std::string mac;          // netdev address
  std::string node_guid;    // "b83f:d203:00aa:bb02"
  uint16_t lid = 0;
  ModuleType module = ModuleType::kNone;  // kNone: no module EEPROM through ethtool (IB)
  int module_number = 0;    // mlx5 hwmon "Module<N>": the cage number on the card
  int channels = 12;
  int pci = 0;              // index in Node::functions
  std::string part;         // hca_type "MT4129"
  std::string board_id;
  std::string fw_ver;
  uint16_t pci_device = 0;  // 0x1021 ConnectX-7
};

struct Node {
  NodeSpec spec;
  std::vector<PciFunction> functions;  // bridges, GPUs and NICs, parents before children
  std::vector<Port> ports;
  std::vector<int> gpus;  // indexes into functions

  // Lookups by name; null when absent.
  const Port* FindRdmaDevice(std::string_view device) const;
  const Port* FindNetdev(std::string_view netdev) const;
  std::vector<std::string> RdmaDevices() const;
  std::vector<std::string> Netdevs() const;
};

// The presets: roce-small, hgx-ib, hgx-ib-hdr, hgx-roce, stress-64.
std::vector<std::string> PresetNames();
std::string_view PresetDescription(std::string_view name);
Result<NodeSpec> PresetSpec(std::string_view name);
Result<Node> BuildNode(const NodeSpec& spec);
Result<Node> BuildPreset(std::string_view name);

}  // namespace fabricwatch::sim
