#include "tools/fabricsim/leaf_switch.h"

#include <cstdio>
#include <string_view>

#include "collectors/peer/smp_text.h"

namespace fabricwatch::sim {
namespace {

// The switch model a port of this link layer and rate is cabled to.
struct SwitchModel {
  const char* model;   // IB: the part in the NodeDescription; Ethernet: SONiC's HwSku
  unsigned num_ports;  // IB NodeInfo NumPorts; Ethernet: front-panel ports
  unsigned downlinks;  // ports a node may use (the others are uplinks, none kept back here)
  uint32_t device_id;  // IB NodeInfo DevId
  int lanes_per_port;  // SONiC names port n Ethernet<lanes * (n - 1)>
};

SwitchModel ModelOf(const Port& port) {
  if (port.link_layer == LinkLayer::kInfiniBand) {
    // Quantum-2 values as in the capture tests/fixtures/smp/ib-leaf; Quantum (HDR): 40 ports.
    if (port.rate_gbps >= 400) return {"MQM9790", 65, 64, 0xd2f2, 0};
    return {"MQM8700", 41, 40, 0xcf08, 0};
  }
  // Spectrum-4 SN5600: 64 800G cages, 8 SerDes lanes each; Spectrum-3 SN4600C: 64x100G, 4 lanes.
  if (port.rate_gbps >= 200) return {"ACS-SN5600", 64, 64, 0, 8};
  return {"Mellanox-SN4600C-C64", 64, 64, 0, 4};
}

// FNV-1a: a stable identity from the switch name (not std::hash, which may differ by build).
uint64_t NameHash(std::string_view name) {
  uint64_t h = 0xcbf29ce484222325ULL;
  for (char c : name) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ULL;
  }
  return h;
}

bool RailLayout(const Node& node) { return node.spec.hgx_switches; }

int SwitchPort(const Node& node, const Port& port, const LeafOptions& options) {
  if (RailLayout(node)) return options.slot;
  return (options.slot - 1) * static_cast<int>(node.ports.size()) + port.index + 1;
}

}  // namespace

Status CheckLeafOptions(const Node& node, const LeafOptions& options) {
  // "MF0;" + name + "-rail99:MQM8700/U1" must fit the 64-byte NodeDescription.
  constexpr size_t kMaxName = 40;
  if (options.leaf.empty() || options.leaf.size() > kMaxName) {
    return Status(StatusCode::kInvalidArgument, "leaf name '" + options.leaf + "': want 1 to " +
                                                    std::to_string(kMaxName) + " characters");
  }
  for (char c : options.leaf) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '.' || c == '-' || c == '_';
    if (!ok) {
      return Status(StatusCode::kInvalidArgument,
                    "leaf name '" + options.leaf +
                        "': a host name of letters, digits, '.', '-' and '_' only");
    }
  }
  for (const Port& p : node.ports) {
    const int port = SwitchPort(node, p, options);
    const SwitchModel model = ModelOf(p);
    if (options.slot < 1 || port > static_cast<int>(model.downlinks)) {
      return Status(StatusCode::kInvalidArgument,
                    "slot " + std::to_string(options.slot) + " puts " + p.rdma_device +
                        " on switch port " + std::to_string(port) + " of its leaf, a " +
                        model.model + " with " + std::to_string(model.downlinks) + " node ports");
    }
  }
  return Status::Ok();
}

LeafPort LeafOf(const Node& node, const Port& port, const LeafOptions& options) {
  LeafPort leaf;
  const bool rails = RailLayout(node);
  leaf.name = rails ? options.leaf + "-rail" + std::to_string(port.index + 1) : options.leaf;
  leaf.rid = rails ? port.index + 1 : 1;
  leaf.port = SwitchPort(node, port, options);
  const SwitchModel model = ModelOf(port);
  if (model.lanes_per_port > 0) {
    leaf.port_name = "Ethernet" + std::to_string(model.lanes_per_port * (leaf.port - 1));
  }
  const uint64_t h = NameHash(leaf.name);
  leaf.guid = 0x1070fd0300000000ULL | (h & 0xffffff);
  char mac[18];
  // Locally administered (bit 1 of the first octet), unicast (bit 0 clear): IEEE 802 §8.2.2.
  std::snprintf(mac, sizeof(mac), "%02x:%02x:%02x:%02x:%02x:%02x",
                static_cast<unsigned>(((h >> 40) & 0xfc) | 0x02),
                static_cast<unsigned>((h >> 32) & 0xff), static_cast<unsigned>((h >> 24) & 0xff),
                static_cast<unsigned>((h >> 16) & 0xff), static_cast<unsigned>((h >> 8) & 0xff),
                static_cast<unsigned>(h & 0xff));
  leaf.mac = mac;
  leaf.mgmt_ip = "192.0.2." + std::to_string(1 + h % 254);
  return leaf;
}

std::string SmpNodeInfoText(const Port& port, const LeafPort& leaf) {
  const SwitchModel model = ModelOf(port);
  const std::string guid = peer::FormatGuid(leaf.guid);
  char ids[96];
  std::snprintf(ids, sizeof(ids), "DevId:...........................0x%04x\n", model.device_id);
  const auto line = [](const char* name_and_dots, const std::string& value) {
    return std::string(name_and_dots) + value + "\n";
  };
  std::string text =
      "# Node info: DR path slid 65535; dlid 65535; 0," + std::to_string(port.port_num) + "\n";
  text += line("BaseVers:........................", "1");
  text += line("ClassVers:.......................", "1");
  text += line("NodeType:........................", "Switch");
  text += line("NumPorts:........................", std::to_string(model.num_ports));
  text += line("SystemGuid:......................", guid);
  text += line("Guid:............................", guid);
  text += line("PortGuid:........................", guid);
  text += line("PartCap:.........................", "8");
  text += ids;
  text += line("Revision:........................", "0x000000a0");
  text += line("LocalPort:.......................", std::to_string(leaf.port));
  text += line("VendorId:........................", "0x0002c9");
  return text;
}

std::string SmpNodeDescText(const Port& port, const LeafPort& leaf) {
  return "Node Description:........MF0;" + leaf.name + ":" + ModelOf(port).model + "/U1\n";
}

std::string LldpKeyValueText(const Node& node, const Port& port, const LeafPort& leaf) {
  const std::string k = "lldp." + port.netdev + ".";
  std::string text;
  text += k + "via=LLDP\n";
  text += k + "rid=" + std::to_string(leaf.rid) + "\n";
  // Known since the simulation began (lldpd's age counts from the neighbour's last change).
  text += k + "age=0 day, 00:00:00\n";
  text += k + "chassis.mac=" + leaf.mac + "\n";
  text += k + "chassis.name=" + leaf.name + "\n";
  text += k + "chassis.descr=SONiC Software Version: SONiC.202311 - HwSku: " + ModelOf(port).model +
          "\n";
  text += k + "chassis.mgmt-ip=" + leaf.mgmt_ip + "\n";
  text += k + "chassis.Bridge.enabled=on\n";
  text += k + "chassis.Router.enabled=on\n";
  text += k + "port.ifname=" + leaf.port_name + "\n";
  // SONiC's port description, set by the fabric's cabling plan to the host and its interface.
  text += k + "port.descr=" + node.spec.hostname + ":" + port.netdev + "\n";
  text += k + "port.ttl=120\n";
  return text;
}

}  // namespace fabricwatch::sim
