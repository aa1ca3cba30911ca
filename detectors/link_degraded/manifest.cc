#include "detectors/link_degraded/manifest.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "base/yaml_reader.h"
#include "collectors/rdma/rdma_metrics.h"
#include "collectors/sys/bounded_file.h"

namespace fabricwatch::detect::shape {
namespace {

// A manifest is a few hundred lines at most; a bound keeps a wrong path (a log file, a device)
// from being read whole.
constexpr std::uintmax_t kMaxManifestBytes = 1 << 20;
// The fastest port anyone ships is 1.6 Tb/s; a rate beyond 100 Tb/s is a typo (Mb/s for Gb/s).
constexpr double kMaxRateGbps = 100000;
// IBTA widths (docs/reference.md §1.3) and Ethernet lane counts (1, 2, 4, 8).
const std::set<int> kWidths = {1, 2, 4, 8, 12};

// Keys every entry may carry, and those only the port list may (informational ones included).
constexpr std::string_view kExpectationKeys[] = {
    "board_id",       "firmware",   "hca_type",  "lane_gbps", "lane_speed", "link_layer",
    "pcie_speed_gts", "pcie_width", "rate_gbps", "state",     "width"};
constexpr std::string_view kPortOnlyKeys[] = {
    "device", "gpu_level",   "mtu",  "nearest_gpu",
    "netdev", "pci_address", "port", "supported_max_gbps"};
constexpr std::string_view kGroupOnlyKeys[] = {"count"};

std::string FormatNumber(double value) {
  std::ostringstream out;
  out << value;
  return out.str();
}

// Reads the fields of one `ports:` or `groups:` entry. The first error is kept (status()) and
// later reads return nothing, so a reader reads every field and checks once.
class EntryReader {
 public:
  explicit EntryReader(const YamlValue& entry) : entry_(entry) {}

  const Status& status() const { return status_; }

  std::string Text(std::string_view key) { return Keep(entry_.Get(key).String()).value_or(""); }

  std::optional<double> Number(std::string_view key, double lo, double hi) {
    const YamlValue value = entry_.Get(key);
    if (!value.present()) return std::nullopt;
    return Keep(value.Number(lo, hi));
  }

  std::optional<int> Integer(std::string_view key, int lo, int hi) {
    const YamlValue value = entry_.Get(key);
    if (!value.present()) return std::nullopt;
    auto number = Keep(value.Integer(lo, hi));
    if (!number) return std::nullopt;
    return static_cast<int>(*number);
  }

  void Fail(std::string_view key, const std::string& problem) {
    if (status_.ok()) status_ = entry_.Get(key).Fail(problem);
  }

  void CheckKeys(std::span<const std::string_view> only) {
    std::vector<std::string_view> known(std::begin(kExpectationKeys), std::end(kExpectationKeys));
    known.insert(known.end(), only.begin(), only.end());
    std::sort(known.begin(), known.end());
    if (Status s = entry_.CheckKeys(known); !s.ok() && status_.ok()) status_ = s;
  }

  Expectation ReadExpectation() {
    Expectation e;
    e.rate_gbps = Number("rate_gbps", 0.001, kMaxRateGbps);
    e.width = Integer("width", 1, 12);
    if (e.width && !kWidths.contains(*e.width)) Fail("width", "must be 1, 2, 4, 8 or 12 lanes");
    e.lane_speed = Text("lane_speed");
    if (!e.lane_speed.empty()) {
      e.lane_gbps = rdma::IbLaneGbps(e.lane_speed);
      if (!e.lane_gbps) {
        Fail("lane_speed",
             "unknown generation \"" + e.lane_speed +
                 "\" (known: SDR, DDR, QDR, FDR10, FDR, EDR, HDR, NDR, XDR; or give lane_gbps)");
      }
    }
    if (auto lane = Number("lane_gbps", 0.001, kMaxRateGbps)) {
      if (e.lane_gbps && *e.lane_gbps != *lane) {
        Fail("lane_gbps", "contradicts lane_speed " + e.lane_speed);
      }
      e.lane_gbps = lane;
    }
    if (e.rate_gbps && e.width && e.lane_gbps && *e.width * *e.lane_gbps < *e.rate_gbps * 0.99) {
      Fail("rate_gbps", "impossible: " + FormatNumber(*e.rate_gbps) + " Gb/s over " +
                            std::to_string(*e.width) + " lanes of " + FormatNumber(*e.lane_gbps) +
                            " Gb/s");
    }
    const std::string state = Text("state");
    if (!state.empty()) {
      e.state = StateByName(state);
      if (!e.state) {
        Fail("state",
             "unknown state \"" + state + "\" (known: DOWN, INIT, ARMED, ACTIVE, ACTIVE_DEFER)");
      }
    }
    e.firmware = Text("firmware");
    e.board_id = Text("board_id");
    e.hca_type = Text("hca_type");
    e.link_layer = Text("link_layer");
    if (!e.link_layer.empty() && e.link_layer != "InfiniBand" && e.link_layer != "Ethernet") {
      Fail("link_layer", "must be InfiniBand or Ethernet");
    }
    e.pcie_speed_gts = Number("pcie_speed_gts", 2.5, 256);
    e.pcie_width = Integer("pcie_width", 1, 32);
    return e;
  }

 private:
  // The value, or nullopt after recording the first error.
  template <typename T>
  std::optional<T> Keep(Result<T> value) {
    if (!status_.ok()) return std::nullopt;
    if (!value) {
      status_ = value.error();
      return std::nullopt;
    }
    return std::move(*value);
  }

  const YamlValue& entry_;
  Status status_;
};

Result<ManifestPort> ReadPort(const YamlValue& entry) {
  if (!entry.IsMap()) return Error(entry.Fail("expected a mapping of port fields"));
  EntryReader r(entry);
  r.CheckKeys(kPortOnlyKeys);
  ManifestPort p;
  p.where = entry.Where();
  p.pci_address = r.Text("pci_address");
  p.port = r.Integer("port", 1, 255);
  p.device = r.Text("device");
  p.netdev = r.Text("netdev");
  p.expect = r.ReadExpectation();
  r.Number("mtu", 68, 65536);
  r.Number("supported_max_gbps", 0.001, kMaxRateGbps);
  r.Text("nearest_gpu");
  r.Text("gpu_level");
  if (!r.status().ok()) return Error(r.status());
  if (p.pci_address.empty() && p.device.empty() && p.netdev.empty()) {
    return Error(entry.Fail("names no port (give pci_address, device or netdev)"));
  }
  return p;
}

Result<ManifestGroup> ReadGroup(const YamlValue& entry) {
  if (!entry.IsMap()) return Error(entry.Fail("expected a mapping"));
  EntryReader r(entry);
  r.CheckKeys(kGroupOnlyKeys);
  ManifestGroup g;
  g.where = entry.Where();
  g.count = r.Integer("count", 0, 4096);
  g.expect = r.ReadExpectation();
  // In a group, these three select the ports the group is about.
  g.link_layer = std::exchange(g.expect.link_layer, "");
  g.board_id = std::exchange(g.expect.board_id, "");
  g.hca_type = std::exchange(g.expect.hca_type, "");
  if (!r.status().ok()) return Error(r.status());
  return g;
}

}  // namespace

bool ManifestPort::Matches(const PortShape& shape) const {
  const int number = port.value_or(1);
  if (!pci_address.empty()) return shape.key.pci_address == pci_address && shape.key.port == number;
  if (!device.empty()) return shape.device == device && shape.key.port == number;
  return !netdev.empty() && shape.netdev == netdev;
}

std::string ManifestPort::Name() const {
  const std::string number = std::to_string(port.value_or(1));
  if (!pci_address.empty()) return pci_address + "/" + number;
  if (!device.empty()) return device + " port " + number;
  return netdev;
}

bool ManifestGroup::Selects(const PortShape& shape) const {
  return (link_layer.empty() || shape.link_layer == link_layer) &&
         (board_id.empty() || shape.board_id == board_id) &&
         (hca_type.empty() || shape.hca_type == hca_type);
}

std::string ManifestGroup::Name() const {
  std::string name = link_layer.empty() ? "" : link_layer + " ";
  name += "ports";
  if (!board_id.empty()) name += " of board " + board_id;
  if (!hca_type.empty()) name += " of HCA type " + hca_type;
  return name;
}

Result<Manifest> ParseManifest(std::string_view text, const std::string& source) {
  auto document = YamlDocument::Parse(text, source);
  if (!document) return Error(document.error());
  Manifest manifest;
  manifest.source = source;
  if (document->empty()) return manifest;  // an empty file pins nothing
  const YamlValue& root = document->root();
  if (!root.IsMap()) return Error(root.Fail("expected a mapping with ports: and/or groups:"));
  static constexpr std::string_view kKeys[] = {"ports", "groups"};
  if (Status s = root.CheckKeys(kKeys); !s.ok()) return Error(s);
  auto ports = root.Get("ports").Items();
  if (!ports) return Error(ports.error());
  auto groups = root.Get("groups").Items();
  if (!groups) return Error(groups.error());
  for (const YamlValue& entry : *ports) {
    auto port = ReadPort(entry);
    if (!port) return Error(port.error());
    manifest.ports.push_back(std::move(*port));
  }
  for (const YamlValue& entry : *groups) {
    auto group = ReadGroup(entry);
    if (!group) return Error(group.error());
    manifest.groups.push_back(std::move(*group));
  }
  return manifest;
}

Result<Manifest> LoadManifest(const std::string& path) {
  auto file = sys::ReadBoundedFile(path, {.kind = "shape file", .max_bytes = kMaxManifestBytes});
  if (!file) return Error(file.error());
  return ParseManifest(file->text, path);
}

}  // namespace fabricwatch::detect::shape
