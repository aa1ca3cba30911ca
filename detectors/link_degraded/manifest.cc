#include "detectors/link_degraded/manifest.h"

#include <yaml-cpp/yaml.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "collectors/core/yaml_checks.h"
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
const std::set<std::string, std::less<>> kExpectationKeys = {
    "rate_gbps", "width",    "lane_speed", "lane_gbps",      "state",     "firmware",
    "board_id",  "hca_type", "link_layer", "pcie_speed_gts", "pcie_width"};
const std::set<std::string, std::less<>> kPortOnlyKeys = {
    "pci_address",        "port",        "device",   "netdev", "mtu",
    "supported_max_gbps", "nearest_gpu", "gpu_level"};
const std::set<std::string, std::less<>> kGroupOnlyKeys = {"count"};

class EntryReader {
 public:
  EntryReader(const YAML::Node& node, const std::string& source, std::string path)
      : node_(node), source_(source), path_(std::move(path)) {}

  const Status& status() const { return status_; }
  bool Has(const char* key) const { return node_[key].IsDefined() && !node_[key].IsNull(); }

  std::string Text(const char* key) {
    if (!Has(key)) return "";
    const YAML::Node value = node_[key];
    if (!value.IsScalar()) Fail(value, key, "expected a string");
    return value.IsScalar() ? value.Scalar() : "";
  }

  std::optional<double> Number(const char* key, double lo, double hi) {
    if (!Has(key)) return std::nullopt;
    const YAML::Node value = node_[key];
    double number = 0;
    if (!value.IsScalar() || value.Tag() == "!" || !YAML::convert<double>::decode(value, number) ||
        !std::isfinite(number)) {
      Fail(value, key, "expected a number");
      return std::nullopt;
    }
    if (number < lo || number > hi) {
      Fail(value, key,
           "must be between " + FormatNumber(lo) + " and " + FormatNumber(hi) + ", got " +
               value.Scalar());
      return std::nullopt;
    }
    return number;
  }

  std::optional<int> Integer(const char* key, int lo, int hi) {
    auto number = Number(key, lo, hi);
    if (!number) return std::nullopt;
    if (*number != std::floor(*number)) {
      Fail(node_[key], key, "expected a whole number, got " + node_[key].Scalar());
      return std::nullopt;
    }
    return static_cast<int>(*number);
  }

  void Fail(const YAML::Node& at, std::string_view key, const std::string& problem) {
    if (!status_.ok()) return;
    status_ = Status(StatusCode::kInvalidArgument, YamlWhere(at, source_) + ": " + path_ + "." +
                                                       std::string(key) + ": " + problem);
  }

  void CheckKeys(const std::set<std::string, std::less<>>& only) {
    for (const auto& entry : node_) {
      const std::string key = entry.first.Scalar();
      if (kExpectationKeys.contains(key) || only.contains(key)) continue;
      std::string known;
      for (const auto* set : {&kExpectationKeys, &only}) {
        for (const std::string& k : *set) known += (known.empty() ? "" : ", ") + k;
      }
      Fail(entry.first, key, "unknown key (known: " + known + ")");
    }
  }

  Expectation ReadExpectation() {
    Expectation e;
    e.rate_gbps = Number("rate_gbps", 0.001, kMaxRateGbps);
    e.width = Integer("width", 1, 12);
    if (e.width && !kWidths.contains(*e.width)) {
      Fail(node_["width"], "width", "must be 1, 2, 4, 8 or 12 lanes");
    }
    e.lane_speed = Text("lane_speed");
    if (!e.lane_speed.empty()) {
      e.lane_gbps = rdma::IbLaneGbps(e.lane_speed);
      if (!e.lane_gbps) {
        Fail(node_["lane_speed"], "lane_speed",
             "unknown generation \"" + e.lane_speed +
                 "\" (known: SDR, DDR, QDR, FDR10, FDR, EDR, HDR, NDR, XDR; or give lane_gbps)");
      }
    }
    if (auto lane = Number("lane_gbps", 0.001, kMaxRateGbps)) {
      if (e.lane_gbps && *e.lane_gbps != *lane) {
        Fail(node_["lane_gbps"], "lane_gbps", "contradicts lane_speed " + e.lane_speed);
      }
      e.lane_gbps = lane;
    }
    if (e.rate_gbps && e.width && e.lane_gbps && *e.width * *e.lane_gbps < *e.rate_gbps * 0.99) {
      Fail(node_["rate_gbps"], "rate_gbps",
           "impossible: " + FormatNumber(*e.rate_gbps) + " Gb/s over " + std::to_string(*e.width) +
               " lanes of " + FormatNumber(*e.lane_gbps) + " Gb/s");
    }
    const std::string state = Text("state");
    if (!state.empty()) {
      e.state = StateByName(state);
      if (!e.state) {
        Fail(node_["state"], "state",
             "unknown state \"" + state + "\" (known: DOWN, INIT, ARMED, ACTIVE, ACTIVE_DEFER)");
      }
    }
    e.firmware = Text("firmware");
    e.board_id = Text("board_id");
    e.hca_type = Text("hca_type");
    e.link_layer = Text("link_layer");
    if (!e.link_layer.empty() && e.link_layer != "InfiniBand" && e.link_layer != "Ethernet") {
      Fail(node_["link_layer"], "link_layer", "must be InfiniBand or Ethernet");
    }
    e.pcie_speed_gts = Number("pcie_speed_gts", 2.5, 256);
    e.pcie_width = Integer("pcie_width", 1, 32);
    return e;
  }

  std::string Where() const { return YamlWhere(node_, source_); }

 private:
  static std::string FormatNumber(double value) {
    std::ostringstream out;
    out << value;
    return out.str();
  }

  const YAML::Node& node_;
  const std::string& source_;
  std::string path_;
  Status status_;
};

Result<ManifestPort> ReadPort(const YAML::Node& node, const std::string& source, size_t index) {
  EntryReader r(node, source, "ports[" + std::to_string(index) + "]");
  if (!node.IsMap()) {
    return Error(StatusCode::kInvalidArgument, r.Where() + ": ports[" + std::to_string(index) +
                                                   "]: expected a mapping of port fields");
  }
  r.CheckKeys(kPortOnlyKeys);
  ManifestPort p;
  p.where = r.Where();
  p.pci_address = r.Text("pci_address");
  p.port = r.Integer("port", 1, 255);
  p.device = r.Text("device");
  p.netdev = r.Text("netdev");
  p.expect = r.ReadExpectation();
  r.Number("mtu", 68, 65536);
  r.Number("supported_max_gbps", 0.001, kMaxRateGbps);
  r.Text("nearest_gpu");
  r.Text("gpu_level");
  if (r.status().ok() && p.pci_address.empty() && p.device.empty() && p.netdev.empty()) {
    return Error(StatusCode::kInvalidArgument,
                 p.where + ": ports[" + std::to_string(index) +
                     "]: names no port (give pci_address, device or netdev)");
  }
  if (!r.status().ok()) return Error(r.status());
  return p;
}

Result<ManifestGroup> ReadGroup(const YAML::Node& node, const std::string& source, size_t index) {
  EntryReader r(node, source, "groups[" + std::to_string(index) + "]");
  if (!node.IsMap()) {
    return Error(StatusCode::kInvalidArgument,
                 r.Where() + ": groups[" + std::to_string(index) + "]: expected a mapping");
  }
  r.CheckKeys(kGroupOnlyKeys);
  ManifestGroup g;
  g.where = r.Where();
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
  auto loaded = LoadStrictYaml(text, source);
  if (!loaded) return Error(loaded.error());
  YAML::Node root = std::move(*loaded);  // not const: operator[] const on an absent key throws
  Manifest manifest;
  manifest.source = source;
  if (root.IsNull()) return manifest;  // an empty file pins nothing
  if (!root.IsMap()) {
    return Error(StatusCode::kInvalidArgument,
                 YamlWhere(root, source) + ": expected a mapping with ports: and/or groups:");
  }
  if (Status s = CheckNoDuplicateKeys(root, source); !s.ok()) return Error(s);
  for (const auto& entry : root) {
    const std::string key = entry.first.Scalar();
    if (key != "ports" && key != "groups") {
      return Error(StatusCode::kInvalidArgument, YamlWhere(entry.first, source) + ": " + key +
                                                     ": unknown key (known: ports, groups)");
    }
    if (!entry.second.IsSequence() && !entry.second.IsNull()) {
      return Error(StatusCode::kInvalidArgument,
                   YamlWhere(entry.second, source) + ": " + key + ": expected a list");
    }
  }
  const YAML::Node ports = root["ports"];
  for (size_t i = 0; ports.IsSequence() && i < ports.size(); ++i) {
    auto port = ReadPort(ports[i], source, i);
    if (!port) return Error(port.error());
    manifest.ports.push_back(std::move(*port));
  }
  const YAML::Node groups = root["groups"];
  for (size_t i = 0; groups.IsSequence() && i < groups.size(); ++i) {
    auto group = ReadGroup(groups[i], source, i);
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
