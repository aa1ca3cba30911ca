#pragma once
// The shape manifest (--shape.file, README "Fabric shape"): what the node's fabric should look
// like, as much or as little of it as the operator wants to pin. One file serves a whole SKU.
//
//   ports:                        # a port list; `fabricwatch --shape.print` writes one
//     - pci_address: "0000:18:00.0"   # which port: pci_address (+ port), or device (+ port),
//       port: 1                       #   or netdev; at least one of the three
//       rate_gbps: 400                # every field below is optional
//       width: 4
//       lane_speed: NDR               # or lane_gbps: 100
//       state: ACTIVE
//       firmware: "28.39.1002"
//   groups:                       # or counts: "8 InfiniBand ports at >= 400G 4X"
//     - link_layer: InfiniBand        # selectors: link_layer, board_id, hca_type (all optional)
//       count: 8                      # this many such ports must be present
//       rate_gbps: 400
//       width: 4
//
// Meaning of the expectation fields (the same in both lists):
//   rate_gbps, width, lane_speed/lane_gbps, pcie_speed_gts, pcie_width   at least this
//   state                                                                 this state (ACTIVE: up)
//   firmware, board_id, hca_type, link_layer (ports only)                 exactly this
// A `ports:` entry may also carry the informational fields the shape prints (device, netdev,
// mtu, supported_max_gbps, nearest_gpu, gpu_level): accepted so that a printed shape is a valid
// manifest, not checked by link_degraded (MTU and placement are configuration, not link shape).
// Errors — an unknown key, a duplicate key, a wrong type, an impossible rate or width, an unknown
// generation or state — name file:line:column and the key.
//
// Thread-safety: values only.

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "detectors/link_degraded/port_shape.h"

namespace fabricwatch::detect::shape {

struct Expectation {
  std::optional<double> rate_gbps;
  std::optional<int> width;
  std::optional<double> lane_gbps;
  std::string lane_speed;  // the generation name the manifest gave, for messages
  std::optional<int> state;
  std::string firmware;
  std::string board_id;
  std::string hca_type;
  std::string link_layer;
  std::optional<double> pcie_speed_gts;
  std::optional<int> pcie_width;
};

struct ManifestPort {
  std::string where;  // "file:line:column" of the entry
  std::string pci_address;
  std::optional<int> port;
  std::string device;
  std::string netdev;
  Expectation expect;
  bool Matches(const PortShape& shape) const;
  std::string Name() const;  // how messages name it: "mlx5_0 port 1", "0000:18:00.0/1", "ib0"
};

struct ManifestGroup {
  std::string where;
  std::string link_layer;  // selectors; empty = any
  std::string board_id;
  std::string hca_type;
  std::optional<int> count;
  Expectation expect;
  bool Selects(const PortShape& shape) const;
  std::string Name() const;  // "InfiniBand ports", "ports of board MT_0000000838"
};

struct Manifest {
  std::string source;
  std::vector<ManifestPort> ports;
  std::vector<ManifestGroup> groups;
  bool empty() const { return ports.empty() && groups.empty(); }
};

Result<Manifest> ParseManifest(std::string_view text, const std::string& source);
Result<Manifest> LoadManifest(const std::string& path);

}  // namespace fabricwatch::detect::shape
