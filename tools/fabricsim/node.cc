#include "tools/fabricsim/node.h"

#include <algorithm>
#include <cstdio>

#include "tools/fabricsim/link_rate.h"

namespace fabricwatch::sim {
namespace {

std::string Hex2(int v) {
  char buf[8];
  std::snprintf(buf, sizeof(buf), "%02x", v & 0xff);
  return buf;
}

std::string Bdf(int bus, int dev, int fn) {
  char buf[24];
  std::snprintf(buf, sizeof(buf), "0000:%02x:%02x.%d", bus & 0xff, dev, fn);
  return buf;
}

// The card a rate and link layer suggest (PCI IDs from the kernel's mlx5 pci table,
// drivers/net/ethernet/mellanox/mlx5/core/main.c, hca_type as the IB core prints it).
struct CardModel {
  uint16_t pci_device;
  const char* part;
  const char* board_id;
  const char* fw_ver;
  double pcie_gts;
  int pcie_width;
};

CardModel CardFor(const HcaSpec& hca) {
  const int gbps = std::max(hca.card_gbps, hca.rate_gbps);
  if (gbps >= 400) return {0x1021, "MT4129", "MT_0000000838", "28.39.1002", 32.0, 16};
  if (gbps >= 200) return {0x101b, "MT4123", "MT_0000000223", "20.38.1002", 16.0, 16};
  if (gbps >= 100) return {0x101d, "MT4125", "MT_0000000359", "22.36.1010", 16.0, 16};
  return {0x101f, "MT4127", "MT_0000000531", "26.36.1010", 16.0, 8};
}

PciFunction Bridge(const std::string& parent, int bus, int dev, int numa, double gts, int width,
                   uint16_t vendor = 0x1000, uint16_t device = 0xc030) {
  PciFunction f;
  f.bdf = Bdf(bus, dev, 0);
  f.path = parent + "/" + f.bdf;
  f.vendor = vendor;
  f.device = device;
  f.pci_class = 0x060400;
  f.numa_node = numa;
  f.driver = "pcieport";
  f.link_speed_gts = gts;
  f.link_width = width;
  return f;
}

PciFunction Gpu(const std::string& parent, int bus, int numa) {
  PciFunction f;
  f.bdf = Bdf(bus, 0, 0);
  f.path = parent + "/" + f.bdf;
  f.vendor = 0x10de;
  f.device = 0x2330;  // H100 SXM5
  f.pci_class = 0x030200;
  f.numa_node = numa;
  f.driver = "nvidia";
  f.is_gpu = true;
  return f;
}

class Builder {
 public:
  explicit Builder(const NodeSpec& spec) { node_.spec = spec; }

  int Add(PciFunction f) {
    node_.functions.push_back(std::move(f));
    return static_cast<int>(node_.functions.size()) - 1;
  }
  void AddGpu(PciFunction f) { node_.gpus.push_back(Add(std::move(f))); }

  // The functions of one card at `bus` below `parent`.
  void AddCard(const std::string& parent, int bus, int numa, int hca_index, const HcaSpec& hca) {
    const CardModel card = CardFor(hca);
    for (int fn = 0; fn < hca.ports; ++fn) {
      PciFunction f;
      f.bdf = Bdf(bus, 0, fn);
      f.path = parent + "/" + f.bdf;
      f.vendor = 0x15b3;
      f.device = card.pci_device;
      f.pci_class = hca.link_layer == LinkLayer::kInfiniBand ? 0x020700 : 0x020000;
      f.numa_node = numa;
      f.driver = "mlx5_core";
      f.link_speed_gts = card.pcie_gts;
      f.link_width = card.pcie_width;
      const int pci = Add(f);

      Port p;
      p.index = static_cast<int>(node_.ports.size());
      p.hca = hca_index;
      p.function = fn;
      p.rdma_device = "mlx5_" + std::to_string(p.index);
      p.link_layer = hca.link_layer;
      p.rate_gbps = hca.rate_gbps;
      p.card_gbps = std::max(hca.card_gbps, hca.rate_gbps);
      const Trained trained = *TrainedFor(hca.rate_gbps);  // checked by Build()
      p.lanes = trained.width;
      p.lane_speed = trained.speed;
      p.rate_text = RateText(trained);
      const std::string bus_dec = std::to_string(bus);
      if (hca.link_layer == LinkLayer::kEthernet) {
        p.netdev = "enp" + bus_dec + "s0f" + std::to_string(fn) + "np" + std::to_string(fn);
        p.module = hca.module;
      } else {
        p.netdev = "ibp" + bus_dec + "s0" + (fn == 0 ? "" : "f" + std::to_string(fn));
        p.module = ModuleType::kNone;  // IB: no module EEPROM through ethtool (README, optics)
        p.lid = static_cast<uint16_t>(0x10 + p.index);
      }
      p.ifindex = 4 + p.index;
      const int serial = 0x10 + p.index;
      p.node_guid = "b83f:d203:00" + Hex2(hca_index) + ":" + Hex2(bus) + Hex2(serial);
      p.mac = "b8:3f:d2:" + Hex2(hca_index) + ":" + Hex2(bus) + ":" + Hex2(serial);
      p.module_number = fn;
      p.channels = hca.channels;
      p.pci = pci;
      p.part = card.part;
      p.board_id = card.board_id;
      p.fw_ver = card.fw_ver;
      p.pci_device = card.pci_device;
      node_.ports.push_back(std::move(p));
    }
  }

  Result<Node> Build() {
    const NodeSpec& spec = node_.spec;
    if (spec.hcas.empty()) return Error(StatusCode::kInvalidArgument, "node has no HCA");
    if (spec.numa_nodes < 1) return Error(StatusCode::kInvalidArgument, "numa_nodes < 1");
    int total_ports = 0;
    for (const HcaSpec& h : spec.hcas) {
      if (h.ports < 1 || h.ports > 8)
        return Error(StatusCode::kInvalidArgument, "HCA ports must be 1..8");
      if (h.kind != "mlx5")
        return Error(StatusCode::kInvalidArgument, "device kind '" + h.kind + "' not modelled");
      if (!TrainedFor(h.rate_gbps))
        return Error(StatusCode::kInvalidArgument,
                     "HCA rate " + std::to_string(h.rate_gbps) +
                         " Gb/s not modelled (800, 400, 200, 100, 50, 40, 25, 10)");
      total_ports += h.ports;
    }
    if (spec.hgx_switches) {
      if (spec.gpus != total_ports || total_ports != 8)
        return Error(StatusCode::kInvalidArgument, "hgx layout needs 8 GPUs and 8 NIC ports");
      BuildHgx();
    } else {
      BuildFlat();
    }
    return std::move(node_);
  }

 private:
  // The HGX H100 shape of tests/fixtures/sysfs/make_fixtures.sh (topo-hgx).
  void BuildHgx() {
    int pair = 0;
    const int host_bridges[] = {0x10, 0x30, 0x90, 0xb0};
    for (int i = 0; i < 4; ++i) {
      const int b = host_bridges[i];
      const int numa = i < 2 ? 0 : 1;
      const std::string hb = "pci0000:" + Hex2(b);
      PciFunction rp = Bridge(hb, b, 1, numa, 32.0, 16, 0x8086, 0x352a);
      Add(rp);
      PciFunction usp = Bridge(rp.path, b + 1, 0, numa, 32.0, 16);
      Add(usp);
      for (int half = 0; half < 2; ++half) {
        PciFunction dsp = Bridge(usp.path, b + 2, half, numa, 32.0, 16);
        Add(dsp);
        const int base = b + 3 + half * 4;
        PciFunction usp2 = Bridge(dsp.path, base, 0, numa, 32.0, 16);
        Add(usp2);
        PciFunction dspg = Bridge(usp2.path, base + 1, 0, numa, 32.0, 16);
        PciFunction dspn = Bridge(usp2.path, base + 1, 1, numa, 32.0, 16);
        Add(dspg);
        Add(dspn);
        AddGpu(Gpu(dspg.path, base + 2, numa));
        AddCard(dspn.path, base + 3, numa, pair, node_.spec.hcas[pair]);
        ++pair;
      }
    }
  }

  // Every card and GPU on its own root port; host bridges spread over the NUMA nodes.
  void BuildFlat() {
    const NodeSpec& spec = node_.spec;
    const int slots = static_cast<int>(spec.hcas.size()) + spec.gpus;
    int bus = 0x10;
    for (int slot = 0; slot < slots; ++slot, bus += 4) {
      const int numa = slot * spec.numa_nodes / slots;
      PciFunction rp = Bridge("pci0000:" + Hex2(bus), bus, 1, numa, 32.0, 16, 0x8086, 0x352a);
      Add(rp);
      const int hca = slot < static_cast<int>(spec.hcas.size()) ? slot : -1;
      if (hca >= 0) {
        AddCard(rp.path, bus + 1, numa, hca, spec.hcas[hca]);
      } else {
        AddGpu(Gpu(rp.path, bus + 1, numa));
      }
    }
  }

  Node node_;
};

}  // namespace

std::string_view LinkLayerName(LinkLayer layer) {
  return layer == LinkLayer::kInfiniBand ? "InfiniBand" : "Ethernet";
}

std::string_view ModuleTypeName(ModuleType type) {
  switch (type) {
    case ModuleType::kNone: return "none";
    case ModuleType::kSfp: return "SFP";
    case ModuleType::kQsfp28: return "QSFP28";
    case ModuleType::kQsfpDd: return "QSFP-DD";
    case ModuleType::kOsfp: return "OSFP";
  }
  return "?";
}

const Port* Node::FindRdmaDevice(std::string_view device) const {
  for (const Port& p : ports) {
    if (p.rdma_device == device) return &p;
  }
  return nullptr;
}

const Port* Node::FindNetdev(std::string_view netdev) const {
  for (const Port& p : ports) {
    if (p.netdev == netdev) return &p;
  }
  return nullptr;
}

std::vector<std::string> Node::RdmaDevices() const {
  std::vector<std::string> out;
  for (const Port& p : ports) out.push_back(p.rdma_device);
  return out;
}

std::vector<std::string> Node::Netdevs() const {
  std::vector<std::string> out;
  for (const Port& p : ports) out.push_back(p.netdev);
  return out;
}

std::vector<std::string> PresetNames() {
  return {"roce-small", "hgx-ib", "hgx-ib-hdr", "hgx-roce", "stress-64"};
}

std::string_view PresetDescription(std::string_view name) {
  if (name == "roce-small")
    return "1 GPU; ConnectX-6 Dx 2x100G RoCE (QSFP28) and ConnectX-6 Lx 1x25G RoCE (SFP28)";
  if (name == "hgx-ib") return "HGX H100-like: 8 GPUs, 8x ConnectX-7 400G InfiniBand (NDR)";
  if (name == "hgx-ib-hdr")
    return "HGX H100-like on an HDR fabric: 8 GPUs, 8x ConnectX-7 InfiniBand, every port "
           "200 Gb/s 4X HDR";
  if (name == "hgx-roce")
    return "HGX H100-like: 8 GPUs, 8x ConnectX-7 400G RoCE (OSFP and QSFP-DD CMIS modules)";
  if (name == "stress-64") return "benchmark: 8 GPUs, 32x dual-port 200G RoCE = 64 HCA ports";
  return "";
}

Result<NodeSpec> PresetSpec(std::string_view name) {
  NodeSpec spec;
  spec.preset = std::string(name);
  if (name == "roce-small") {
    spec.hostname = "sim-roce-small";
    spec.hcas = {{.ports = 2, .rate_gbps = 100, .module = ModuleType::kQsfp28, .channels = 8},
                 {.ports = 1, .rate_gbps = 25, .module = ModuleType::kSfp, .channels = 4}};
    spec.gpus = 1;
    spec.numa_nodes = 1;
  } else if (name == "hgx-ib" || name == "hgx-ib-hdr" || name == "hgx-roce") {
    spec.hostname = std::string("sim-") + std::string(name);
    const bool ib = name != "hgx-roce";
    for (int i = 0; i < 8; ++i) {
      // hgx-ib-hdr: the same ConnectX-7 cards, cabled to HDR switches (every port at HDR).
      spec.hcas.push_back({.ports = 1,
                           .link_layer = ib ? LinkLayer::kInfiniBand : LinkLayer::kEthernet,
                           .rate_gbps = name == "hgx-ib-hdr" ? 200 : 400,
                           .card_gbps = 400,
                           // Two cages of the RoCE node hold QSFP-DD, the rest OSFP (both CMIS).
                           .module = i % 4 == 3 ? ModuleType::kQsfpDd : ModuleType::kOsfp,
                           .channels = 12});
    }
    spec.gpus = 8;
    spec.hgx_switches = true;
  } else if (name == "stress-64") {
    spec.hostname = "sim-stress-64";
    for (int i = 0; i < 32; ++i) {
      spec.hcas.push_back({.ports = 2, .rate_gbps = 200, .module = ModuleType::kQsfpDd,
                           .channels = 12});
    }
    spec.gpus = 8;
  } else {
    std::string known;
    for (const std::string& n : PresetNames()) known += (known.empty() ? "" : ", ") + n;
    return Error(StatusCode::kInvalidArgument,
                 "unknown preset '" + std::string(name) + "' (known: " + known + ")");
  }
  return spec;
}

Result<Node> BuildNode(const NodeSpec& spec) { return Builder(spec).Build(); }

Result<Node> BuildPreset(std::string_view name) {
  auto spec = PresetSpec(name);
  if (!spec) return Error(spec.error());
  return BuildNode(*spec);
}

}  // namespace fabricwatch::sim
