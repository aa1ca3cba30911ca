#pragma once
// The leaf switch at the far end of each simulated port, and the peer replay text the agent's
// peer collector reads for it (docs/design.md §5.10, issue 24). Pure: no file I/O.
//
// Layout. An HGX preset (one NIC per GPU, NodeSpec::hgx_switches) is cabled rail-optimised, as
// NVIDIA's DGX SuperPOD reference architectures cable compute nodes: the NIC of GPU r connects to
// the leaf of rail r (port i faces `<leaf>-rail<i+1>`), and every node of a scalable unit takes
// the same downlink on each rail leaf (its slot), so collectives between the same GPU index of
// different nodes stay one switch hop apart. The other presets (roce-small, stress-64) are a
// node with all ports on one top-of-rack leaf, `<leaf>`, on consecutive downlinks from
// (slot - 1) * ports + 1. `leaf` (default leaf01) and `slot` (default 1) are options, so that a
// fleet of simulated nodes can face different leaves and ports.
//
// The switch is the one a real fabric of that rate uses: an NVIDIA Quantum-2 QM9790 (NDR, 64
// ports) or Quantum QM8700 (HDR, 40 ports) on InfiniBand, SONiC on a Spectrum-4 SN5600 (200G and
// up) or a Spectrum-3 SN4600C (below) on Ethernet. Its identity is derived from its name, so the
// same name always has the same node GUID and chassis MAC: the GUID in NVIDIA's OUI (10:70:fd),
// the MAC locally administered, the management address in TEST-NET-1 (RFC 5737).
//
// Text formats, copied from the captures in tests/fixtures/smp and tests/fixtures/lldp:
//   smpquery -D nodeinfo 0,<port>   libibmad mad_dump_nodeinfo (collectors/peer/smp_text.h)
//   smpquery -D nodedesc 0,<port>   `Node Description:........MF0;<name>:<model>/U1`, the
//                                   description NVIDIA switch firmware sets
//   lldpctl -f keyvalue <netdev>    lldpd kv_writer (collectors/peer/lldp_keyvalue.h); the
//                                   port id is SONiC's port name, Ethernet<first SerDes lane>

#include <cstdint>
#include <string>

#include "base/status.h"
#include "tools/fabricsim/node.h"

namespace fabricwatch::sim {

struct LeafOptions {
  std::string leaf = "leaf01";  // the leaf's name, or the prefix of each rail's leaf
  int slot = 1;                 // the node's position on its leaf (1-based)
};

// What the port sees at the far end.
struct LeafPort {
  std::string name;       // switch host name: leaf01, leaf01-rail3
  int port = 0;           // switch port number (IB LocalPort; Ethernet front-panel port)
  std::string port_name;  // SONiC port name (Ethernet only): Ethernet16
  uint64_t guid = 0;      // IB node GUID
  std::string mac;        // Ethernet chassis MAC
  std::string mgmt_ip;
  int rid = 1;  // lldpd's index of the chassis (one per distinct switch)
};

// Checks `options` against the node: a usable name (letters, digits, '.', '-', '_'; short enough
// for a 64-byte NodeDescription) and a slot whose downlinks exist on the switch.
Status CheckLeafOptions(const Node& node, const LeafOptions& options);
LeafPort LeafOf(const Node& node, const Port& port, const LeafOptions& options);

// The replay files of one port (the three formats above).
std::string SmpNodeInfoText(const Port& port, const LeafPort& leaf);
std::string SmpNodeDescText(const Port& port, const LeafPort& leaf);
std::string LldpKeyValueText(const Node& node, const Port& port, const LeafPort& leaf);

}  // namespace fabricwatch::sim
