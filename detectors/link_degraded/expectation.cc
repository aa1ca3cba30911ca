#include "detectors/link_degraded/expectation.h"

#include <cmath>
#include <set>
#include <tuple>

#include "detectors/core/hysteresis.h"

namespace fabricwatch::detect::shape {
namespace {

constexpr int kStateVersion = 1;
constexpr double kMaxGbps = 100000;  // as the manifest's bound (manifest.cc)

// A link as the majority vote compares it: the rate in centi-Gb/s (rates print with at most one
// decimal, and Ethernet speeds are whole Mb/s), the width (0 = unknown), the lane rate.
struct Link {
  int64_t centi_gbps = 0;
  int width = 0;
  int64_t centi_lane = 0;
  auto operator<=>(const Link&) const = default;
};

int64_t Centi(double gbps) { return std::llround(gbps * 100); }

std::optional<Link> LinkOf(const PortShape& port) {
  if (!port.up() || !port.rate_gbps) return std::nullopt;
  return Link{Centi(*port.rate_gbps), port.width.value_or(0),
              port.lane_gbps ? Centi(*port.lane_gbps) : 0};
}

// Strictly better: a higher rate, or the same rate over more lanes (a 4X HDR link and a 2X NDR
// link both carry 200 Gb/s; the wider one is the card's shape).
bool Better(const Link& candidate, const PortHistory& h) {
  if (!h.best_rate_gbps) return true;
  const int64_t best = Centi(*h.best_rate_gbps);
  if (candidate.centi_gbps != best) return candidate.centi_gbps > best;
  return candidate.width > h.best_width.value_or(0);
}

bool BelowBest(const Link& link, const PortHistory& h) {
  if (!h.best_rate_gbps) return false;
  return link.centi_gbps < Centi(*h.best_rate_gbps) ||
         (link.width > 0 && link.width < h.best_width.value_or(0)) ||
         (link.centi_lane > 0 && link.centi_lane < Centi(h.best_lane_gbps.value_or(0)));
}

void SetBest(PortHistory& h, const PortShape& port) {
  h.best_rate_gbps = port.rate_gbps;
  h.best_width = port.width;
  h.best_lane_gbps = port.lane_gbps;
}

// The link a strict majority of the group's up ports run, if any.
std::optional<Link> Majority(const std::vector<const PortShape*>& group) {
  std::map<Link, int> votes;
  int voters = 0;
  for (const PortShape* port : group) {
    if (auto link = LinkOf(*port)) ++votes[*link], ++voters;
  }
  for (const auto& [link, count] : votes) {
    if (2 * count > voters) return link;
  }
  return std::nullopt;
}

// The firmware a strict majority of the devices of one board id run (devices, not ports: a
// dual-port card has one firmware).
std::map<std::string, std::string> FirmwareMajority(const NodeShape& shape) {
  std::map<std::string, std::map<std::string, std::string>> by_board;  // board -> device -> fw
  for (const PortShape& port : shape.ports) {
    if (!port.board_id.empty() && !port.firmware.empty()) {
      by_board[port.board_id][port.device] = port.firmware;
    }
  }
  std::map<std::string, std::string> majority;
  for (const auto& [board, devices] : by_board) {
    std::map<std::string, int> votes;
    for (const auto& [device, firmware] : devices) ++votes[firmware];
    for (const auto& [firmware, count] : votes) {
      if (2 * count > static_cast<int>(devices.size()) && devices.size() >= 2) {
        majority[board] = firmware;
      }
    }
  }
  return majority;
}

void ApplyManifest(const Expectation& e, PortExpectation& out) {
  auto pin = [](auto& expected, const auto& value) {
    if (value) expected.value = *value, expected.source = "manifest";
  };
  pin(out.rate_gbps, e.rate_gbps);
  pin(out.width, e.width);
  pin(out.lane_gbps, e.lane_gbps);
  if (e.lane_gbps) out.lane_speed = e.lane_speed;
  if (e.state) {
    out.should_be_up = *e.state == kStateActive || *e.state == kStateActiveDefer;
    out.up_source = "manifest";
  }
  if (!e.firmware.empty()) out.firmware = e.firmware, out.firmware_source = "manifest";
  if (!e.board_id.empty()) out.board_id = e.board_id;
  if (!e.hca_type.empty()) out.hca_type = e.hca_type;
  if (!e.link_layer.empty()) out.link_layer = e.link_layer;
  if (e.pcie_speed_gts) out.pcie_speed_gts = e.pcie_speed_gts;
  if (e.pcie_width) out.pcie_width = e.pcie_width;
}

std::string LinkText(const Link& link) {
  std::string text = FormatFixed(static_cast<double>(link.centi_gbps) / 100, 0) + " Gb/s";
  if (link.width > 0) text += " " + std::to_string(link.width) + "X";
  return text;
}

}  // namespace

std::string SiblingGroup(const PortShape& port) {
  return port.hca_type + "|" + port.board_id + "|" + port.link_layer;
}

std::vector<std::string> ExpectationModel::Learn(const NodeShape& shape, TimePoint now,
                                                 std::chrono::milliseconds relearn_after) {
  std::map<std::string, std::vector<const PortShape*>> groups;
  for (const PortShape& port : shape.ports) {
    PortHistory& h = history_[port.key];
    h.device = port.device;
    h.netdev = port.netdev;
    h.link_layer = port.link_layer;
    h.group = SiblingGroup(port);
    h.last_seen = now;
    if (port.up()) h.seen_up = true;
    if (auto link = LinkOf(port); link && Better(*link, h)) SetBest(h, port);
    groups[h.group].push_back(&port);
  }
  std::vector<std::string> relearned;
  for (const auto& [group, ports] : groups) {
    // Reconfigured: every port of a group of two or more runs the same link, below its best.
    std::optional<Link> common;
    bool reconfigured = ports.size() >= 2;
    for (const PortShape* port : ports) {
      auto link = LinkOf(*port);
      if (!reconfigured || !link || (common && *link != *common) ||
          !BelowBest(*link, history_[port->key])) {
        reconfigured = false;
        break;
      }
      common = link;
    }
    if (!reconfigured) {
      relearn_pending_.erase(group);
      continue;
    }
    auto [pending, fresh] = relearn_pending_.try_emplace(group, now);
    if (now - pending->second < relearn_after) continue;
    for (const PortShape* port : ports) SetBest(history_[port->key], *port);
    relearn_pending_.erase(pending);
    relearned.push_back("all " + std::to_string(ports.size()) + " " + ports.front()->link_layer +
                        " ports of HCA type " + ports.front()->hca_type + " (board " +
                        ports.front()->board_id + ") now run " + LinkText(*common) +
                        ", below their past best: the node was reconfigured, their expected "
                        "link is learned again");
  }
  return relearned;
}

std::map<PortKey, PortExpectation> ExpectationModel::Expect(const NodeShape& shape,
                                                            const Manifest* manifest) const {
  std::map<std::string, std::vector<const PortShape*>> groups;
  // Should-be-up siblings are same-model ports with the same port number on other devices: port
  // 2 of a dual-port card is often unused on every card of a node.
  std::map<std::pair<std::string, int>, std::vector<const PortShape*>> by_port_number;
  for (const PortShape& port : shape.ports) {
    groups[SiblingGroup(port)].push_back(&port);
    by_port_number[{SiblingGroup(port), port.key.port}].push_back(&port);
  }
  const std::map<std::string, std::string> firmware = FirmwareMajority(shape);
  std::map<PortKey, PortExpectation> out;
  for (const PortShape& port : shape.ports) {
    PortExpectation e;
    if (manifest != nullptr) {
      for (const ManifestGroup& g : manifest->groups) {
        if (g.Selects(port)) ApplyManifest(g.expect, e);
      }
      for (const ManifestPort& p : manifest->ports) {
        if (p.Matches(port)) ApplyManifest(p.expect, e);
      }
    }
    const bool pin_rate = e.rate_gbps.value.has_value(), pin_width = e.width.value.has_value(),
               pin_lane = e.lane_gbps.value.has_value();
    auto learn = [&](double rate, int width, double lane, const char* source) {
      if (!pin_rate && rate > 0) e.rate_gbps.Raise(rate, source);
      if (!pin_width && width > 0) e.width.Raise(width, source);
      if (!pin_lane && lane > 0) e.lane_gbps.Raise(lane, source);
    };
    const auto& group = groups[SiblingGroup(port)];
    if (auto majority = Majority(group)) {
      learn(static_cast<double>(majority->centi_gbps) / 100, majority->width,
            static_cast<double>(majority->centi_lane) / 100, "siblings");
    }
    auto h = history_.find(port.key);
    if (h != history_.end() && h->second.best_rate_gbps) {
      learn(*h->second.best_rate_gbps, h->second.best_width.value_or(0),
            h->second.best_lane_gbps.value_or(0), "history");
    }
    if (port.ethernet() && group.size() == 1 && port.supported_max_gbps && !pin_rate) {
      e.rate_gbps.Raise(*port.supported_max_gbps, "supported");
    }
    if (e.up_source.empty()) {
      int up = 0, others = 0;
      for (const PortShape* sibling : by_port_number[{SiblingGroup(port), port.key.port}]) {
        if (sibling == &port) continue;
        ++others;
        if (sibling->up()) ++up;
      }
      // A port seen up before needs no expectation to be missed when it is down: link_flap
      // reports it (link_signals.cc). This is for ports that have never been up.
      if (others >= 2 && 2 * up > others) {
        e.should_be_up = true, e.up_source = "siblings";
      }
    }
    if (e.firmware.empty()) {
      auto majority = firmware.find(port.board_id);
      if (majority != firmware.end()) e.firmware = majority->second, e.firmware_source = "siblings";
    }
    out.emplace(port.key, std::move(e));
  }
  return out;
}

nlohmann::json ExpectationModel::Save() const {
  nlohmann::json ports = nlohmann::json::array();
  for (const auto& [key, h] : history_) {
    nlohmann::json entry = {{"pci_address", key.pci_address},
                            {"port", key.port},
                            {"device", h.device},
                            {"netdev", h.netdev},
                            {"link_layer", h.link_layer},
                            {"group", h.group},
                            {"seen_up", h.seen_up},
                            {"last_seen", EpochSeconds(h.last_seen)}};
    if (h.best_rate_gbps) entry["best_rate_gbps"] = *h.best_rate_gbps;
    if (h.best_width) entry["best_width"] = *h.best_width;
    if (h.best_lane_gbps) entry["best_lane_gbps"] = *h.best_lane_gbps;
    ports.push_back(std::move(entry));
  }
  return {{"version", kStateVersion}, {"ports", std::move(ports)}};
}

Status ExpectationModel::Load(const nlohmann::json& state, StateLoadCheck& check) {
  if (!state.is_object() || !state.contains("version")) return Status::Ok();  // nothing saved
  if (state["version"] != kStateVersion) {
    return Status(StatusCode::kInvalidArgument,
                  "link_degraded state of version " + state["version"].dump() +
                      " (this agent reads version " + std::to_string(kStateVersion) +
                      "): ignored, the expected shape is learned again");
  }
  const nlohmann::json& ports = state.value("ports", nlohmann::json::array());
  if (!ports.is_array()) return Status(StatusCode::kInvalidArgument, "link_degraded state: ports");
  for (const nlohmann::json& entry : ports) {
    if (!entry.is_object() || !entry.contains("pci_address") || !entry["pci_address"].is_string()) {
      check.Drop(StateLoadCheck::kOutOfRange);
      continue;
    }
    auto port = check.Count(entry.value("port", nlohmann::json()), 255);
    auto last_seen = check.Past(entry.value("last_seen", nlohmann::json()));
    if (!port || !last_seen) continue;
    PortHistory h;
    auto text = [&](const char* key) {
      const auto it = entry.find(key);
      return it != entry.end() && it->is_string() ? it->get<std::string>() : std::string();
    };
    h.device = text("device");
    h.netdev = text("netdev");
    h.link_layer = text("link_layer");
    h.group = text("group");
    h.seen_up = entry.value("seen_up", nlohmann::json(false)) == true;
    h.last_seen = *last_seen;
    bool valid = true;
    if (entry.contains("best_rate_gbps")) {
      auto rate = check.Number(entry["best_rate_gbps"], 0, kMaxGbps);
      auto width = check.Count(entry.value("best_width", nlohmann::json(0)), 32);
      auto lane = check.Number(entry.value("best_lane_gbps", nlohmann::json(0)), 0, kMaxGbps);
      valid = rate && width && lane;
      if (valid) {
        h.best_rate_gbps = *rate;
        if (*width > 0) h.best_width = static_cast<int>(*width);
        if (*lane > 0) h.best_lane_gbps = *lane;
      }
    }
    if (valid) history_[{entry["pci_address"].get<std::string>(), static_cast<int>(*port)}] = h;
  }
  return Status::Ok();
}

}  // namespace fabricwatch::detect::shape
