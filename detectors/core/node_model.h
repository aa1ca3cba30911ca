#pragma once
// The node model (issue 36, docs/design.md §4 "Node model"): what the collectors say the node is —
// its RDMA devices and ports, their netdevs, the netdevs' link settings, the transceiver modules,
// the PCI functions and GPU–NIC paths, the neighbours at the far end of each port and the jobs that
// hold each device — built once from the collectors' snapshots by NodeModelBuilder and read by
// every consumer: detectors (SnapshotView::node), the cross rules, attribution and the status page.
// Before it, each of them rebuilt the port inventory from fabric_rdma_port_info on its own, with
// its own rules for a missing label or a failed collection.
//
// Entities are keyed by typed ids (PortId), never by "device/port" strings. Values the collector
// did not report (or reported as NaN or out of range) are nullopt: a consumer decides what an
// unknown means, the model never guesses.
//
// Freshness: each collector's facts are replaced wholesale by its next snapshot, so a family the
// collector no longer reports leaves no stale value behind. One exception, on purpose: the RDMA
// ports' identity (which ports exist, their link layer and netdev) is kept when an rdma snapshot
// carries no fabric_rdma_port_info (a failed collection, or the last device gone: the sink drops
// empty families, so the two look alike), so that a finding's name does not change mid-episode
// and a RoCE port never turns into an IB port. ports_reported() says whether the newest rdma
// snapshot carried it.
//
// Thread-safety: a builder is used by one thread (the detector engine's); the models it
// publishes (Current()) are immutable and may be read from any thread (the status page).

#include <compare>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "collectors/core/family_label.h"
#include "detectors/core/detector.h"
#include "detectors/core/inputs.h"

namespace fabricwatch::detect {

// A port of an RDMA device: /sys/class/infiniband/<device>/ports/<port>. Ordered by device name,
// then by port number (so port 2 sorts before port 10).
struct PortId {
  std::string device;
  uint32_t port = 0;

  auto operator<=>(const PortId&) const = default;
  // The port as its entity label and sysfs directory name spell it: "1".
  std::string PortLabel() const { return std::to_string(port); }
  // "mlx5_0/1", for log lines and reasons.
  std::string Text() const { return device + "/" + PortLabel(); }
  // From the labels device and port; nullopt when either is empty or the port is not a number.
  static std::optional<PortId> FromLabels(std::string_view device, std::string_view port);
};

// The RDMA port a sample of one of the rdma collector's per-port families (labels device, port)
// names, label names checked against Family (collectors/core/family_label.h).
template <const auto& Family>
std::optional<PortId> PortIdOf(const prometheus::ClientMetric& sample) {
  return PortId::FromLabels(Label<Family>(sample, "device"), Label<Family>(sample, "port"));
}

// IBA link layer of a port (sysfs link_layer). Kernels before RoCE report none: InfiniBand.
enum class LinkLayer { kInfiniBand, kEthernet };

struct RdmaPort {
  PortId id;
  LinkLayer link_layer = LinkLayer::kInfiniBand;
  std::string link_layer_text;  // as the collector reported it ("" on old kernels)
  // RoCE: the netdev of the port's GIDs; IB: the device's IPoIB netdev of that port; "" none.
  std::string netdev;
  std::string lane_speed_name;  // "NDR", "HDR", ... from rate (synthetic on RoCE)
  // Values from the newest rdma snapshot.
  std::optional<int> state;       // IBA PortState: 1 DOWN, 2 INIT, 3 ARMED, 4 ACTIVE, 5 DEFER
  std::optional<int> phys_state;  // IBA PortPhysicalState: 5 LinkUp
  std::optional<int> sm_lid;
  std::optional<int> lanes;
  std::optional<double> rate_bytes_per_second;
  std::optional<double> lane_speed_bytes_per_second;
  std::optional<int> active_mtu, max_mtu;  // IB MTU in bytes (verbs active_mtu, max_mtu)

  bool ethernet() const { return link_layer == LinkLayer::kEthernet; }
  // ACTIVE or ACTIVE_DEFER (include/rdma/ib_verbs.h enum ib_port_state).
  bool active() const { return state && (*state == 4 || *state == 5); }
};

struct RdmaDevice {
  std::string name;
  std::string firmware, board_id, hca_type, node_guid;
  std::string pci_address;  // "" when the device has no PCI function (rxe, siw)
};

// A netdev's link as the netdev and ethtool collectors see it.
struct NetdevLink {
  std::string name;
  std::optional<int> mtu;
  std::optional<double> speed_bytes_per_second;          // sysfs speed (netdev collector)
  std::optional<double> ethtool_speed_bytes_per_second;  // ETHTOOL_MSG_LINKMODES speed
  std::optional<double> supported_max_bytes_per_second;  // the fastest supported link mode
  std::optional<int> ethtool_lanes;
};

// A transceiver module in a netdev's cage.
struct Module {
  std::string netdev;
  std::optional<bool> present;  // the driver said whether the cage holds a module
  std::string serial;           // "" until its EEPROM identity was read
};

// A PCI function the topology collector reports on (role gpu, nic or bridge).
struct PciFunction {
  std::string address;  // "0000:17:00.0"
  std::string role;
  std::string upstream;     // the function or host bridge directly above it
  std::string host_bridge;  // its root complex
  std::optional<double> speed_transfers_per_second, max_speed_transfers_per_second;
  std::optional<int> width, max_width;
};

// One GPU–NIC pair with its PCIe distance (nvmlGpuTopologyLevel_t: 10 PIX ... 50 SYS).
struct GpuNicDistance {
  std::string gpu, nic;
  double distance = 0;
};

// The neighbour at the far end of a port (fabric_port_peer_info).
struct Peer {
  std::string name, port;
  std::string source;  // where it was learned: lldpd, lldp, smp
  // "leaf-12 Ethernet1/7": Finding::peer's form.
  std::string Text() const { return name + " " + port; }
};

class NodeModel {
 public:
  // The RDMA ports, ordered by PortId.
  std::span<const RdmaPort> ports() const { return ports_; }
  const RdmaPort* Port(const PortId& id) const;
  // The port whose netdev this is; the lowest such port when several share it (a RoCE netdev of
  // a multi-port device), whatever order the collector listed them in.
  const RdmaPort* PortOfNetdev(std::string_view netdev) const;
  // The port an entity names: {device, port}; else {netdev}, or {device, netdev} (driver_fault);
  // else {device} alone when the device has exactly one port. nullptr when none matches.
  const RdmaPort* PortNamedBy(const EntityLabels& entity) const;
  // Whether the newest rdma snapshot reported the ports' facts (see the header comment).
  bool ports_reported() const { return ports_reported_; }

  std::span<const RdmaDevice> devices() const { return devices_; }
  const RdmaDevice* Device(std::string_view name) const;

  const NetdevLink* Netdev(std::string_view name) const;
  const Module* ModuleOf(std::string_view netdev) const;

  std::span<const PciFunction> pci_functions() const { return functions_; }
  const PciFunction* Function(std::string_view address) const;
  std::span<const GpuNicDistance> gpu_nic_distances() const { return distances_; }

  // The neighbour of a port: by its device and port, else by its netdev; nullptr when unknown.
  const Peer* PeerOf(const RdmaPort& port) const;
  const Peer* PeerOfNetdev(std::string_view netdev) const;
  // "scheduler:job" of every job holding `device` open, sorted; empty when none is known.
  std::vector<std::string> JobsOn(std::string_view device) const;

 private:
  friend class NodeModelBuilder;
  std::vector<RdmaPort> ports_;
  bool ports_reported_ = false;
  std::vector<RdmaDevice> devices_;
  std::map<std::string, NetdevLink, std::less<>> netdevs_;
  std::map<std::string, Module, std::less<>> modules_;
  std::vector<PciFunction> functions_;
  std::vector<GpuNicDistance> distances_;
  std::map<PortId, Peer> peer_by_port_;
  std::map<std::string, Peer, std::less<>> peer_by_netdev_;
  std::map<std::string, std::set<std::string>, std::less<>> jobs_by_device_;
};

class NodeModelBuilder {
 public:
  // The collectors whose snapshots the model reads.
  static std::span<const std::string_view> Collectors();
  // The families and labels it reads, checked against the collectors' tables like a detector's
  // (tests/unit/exporter/detector_inputs_test.cc).
  static std::span<const MetricInput> Inputs();
  // Takes one collector snapshot into the model; snapshots of collectors the model does not
  // read change nothing. Returns true when the model may have changed.
  bool Observe(std::string_view collector, const std::vector<prometheus::MetricFamily>& families);
  // The model as of the last Observe. Published models are immutable and shared: a consumer may
  // keep one as long as it likes; a copy is made only after an Observe changed the model.
  std::shared_ptr<const NodeModel> Current();
  const NodeModel& model() const { return model_; }

 private:
  void ObserveRdma(const std::vector<prometheus::MetricFamily>& families);
  void ObserveNetdev(const std::vector<prometheus::MetricFamily>& families);
  void ObserveEthtool(const std::vector<prometheus::MetricFamily>& families);
  void ObserveOptics(const std::vector<prometheus::MetricFamily>& families);
  void ObserveTopology(const std::vector<prometheus::MetricFamily>& families);
  void ObservePeer(const std::vector<prometheus::MetricFamily>& families);
  void ObserveJobs(const std::vector<prometheus::MetricFamily>& families);
  // apply(port, value) for every sample of Family (labels device, port) whose port is known.
  template <const auto& Family, typename Apply>
  void PortValue(const std::vector<prometheus::MetricFamily>& families, Apply&& apply);
  RdmaPort* MutablePort(const PortId& id);
  void ForgetSilentNetdevs();

  NodeModel model_;
  std::shared_ptr<const NodeModel> published_;
};

}  // namespace fabricwatch::detect
