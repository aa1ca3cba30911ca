#include "detectors/link_degraded/link_signals.h"

#include <cmath>
#include <utility>

namespace fabricwatch::detect::shape {
namespace {

constexpr double kBytesPerGbit = 1e9 / 8.0;
// Rates compare with a relative tolerance: FDR's 14.0625 Gb/s lanes print as 56 Gb/s per 4X,
// Ethernet speeds are whole Mb/s.
constexpr double kTolerance = 0.999;

bool Below(double actual, double expected) { return actual < expected * kTolerance; }

std::string Gbps(double gbps) {
  return FormatFixed(gbps, gbps == std::floor(gbps) ? 0 : 1) + " Gb/s";
}

std::string SourceText(const std::string& source) {
  if (source == "manifest") return "the manifest";
  if (source == "siblings") return "its same-model siblings";
  if (source == "history") return "its own past best";
  if (source == "supported") return "its fastest supported link mode";
  return source;
}

std::string UpSourceText(const std::string& source) {
  if (source == "manifest") return "the manifest says ACTIVE";
  if (source == "siblings") return "most same-model siblings with its port number are up";
  return source;
}

// A state number the IBTA does not define reads as its number, never as "".
std::string StateText(int state) {
  const std::string_view name = StateName(state);
  return name.empty() ? "in state " + std::to_string(state) : std::string(name);
}

// Why a port in INIT or ARMED stays there: an sm_lid of 0 says no subnet manager has swept it;
// an sm_lid that could not be read says nothing either way (never "sm_lid 0").
std::string SmText(std::optional<int> sm_lid) {
  if (!sm_lid) return " (sm_lid unreadable: whether a subnet manager runs is unknown)";
  if (*sm_lid == 0) return " with no subnet manager (sm_lid 0)";
  return " (the subnet manager at LID " + std::to_string(*sm_lid) + " did not activate it)";
}

std::string PortName(const PortShape& p) {
  std::string name = p.device + " port " + std::to_string(p.key.port);
  if (p.ethernet() && !p.netdev.empty()) name = p.netdev + " (" + name + ")";
  return name;
}

// "4X NDR (400 Gb/s)" / "1 lane of 25 Gb/s (25 Gb/s)" / "200 Gb/s": only what is known, the
// width with its unit in the right number.
std::string LinkShapeText(std::optional<int> width, const std::string& lane_speed,
                          std::optional<double> lane_gbps, std::optional<double> rate_gbps) {
  std::string text;
  if (width && !lane_speed.empty()) {
    text = std::to_string(*width) + "X " + lane_speed;  // IBTA: "4X NDR"
  } else if (width) {
    text = std::to_string(*width) + (*width == 1 ? " lane" : " lanes");
    if (lane_gbps) text += " of " + Gbps(*lane_gbps);
  } else if (lane_gbps) {
    text = Gbps(*lane_gbps) + " per lane";
  }
  if (rate_gbps) text = text.empty() ? Gbps(*rate_gbps) : text + " (" + Gbps(*rate_gbps) + ")";
  return text;
}

std::string LinkText(const PortShape& p) {
  return LinkShapeText(p.width, p.lane_speed, p.lane_gbps, p.rate_gbps);
}

// The expectation's fields can come from different sources (width and lane rate from the port's
// history, the rate from its fastest supported mode): where width x lane rate is not the expected
// rate, the lane rate is the expected rate over the expected width, so the text and the evidence
// never state a link that contradicts itself ("1 lanes of 10 Gb/s per lane, 25 Gb/s").
struct ExpectedLink {
  std::optional<int> width;
  std::string lane_speed;
  std::optional<double> lane_gbps;
  std::optional<double> rate_gbps;
};

ExpectedLink Consistent(const PortExpectation& e) {
  ExpectedLink link{e.width.value, e.lane_speed, e.lane_gbps.value, e.rate_gbps.value};
  if (link.width && *link.width > 0 && link.rate_gbps) {
    const double lane = *link.rate_gbps / *link.width;
    // 1 %: FDR's 14.0625 Gb/s lanes make 56.25 Gb/s over 4X, printed as 56 Gb/s.
    if (!link.lane_gbps || std::fabs(*link.lane_gbps - lane) > 0.01 * lane) {
      link.lane_gbps = lane;
      link.lane_speed.clear();  // the generation name belonged to the other lane rate
    }
  }
  return link;
}

std::string ExpectedText(const PortExpectation& e) {
  const ExpectedLink link = Consistent(e);
  return LinkShapeText(link.width, link.lane_speed, link.lane_gbps, link.rate_gbps);
}

void AddLinkEvidence(const PortShape& p, const PortExpectation& e, std::vector<Evidence>& out) {
  const ExpectedLink expected = Consistent(e);
  if (p.rate_gbps) out.push_back({"rate_bytes_per_second", *p.rate_gbps * kBytesPerGbit});
  if (expected.rate_gbps) {
    out.push_back({"expected_rate_bytes_per_second", *expected.rate_gbps * kBytesPerGbit});
  }
  if (p.width) out.push_back({"width_lanes", static_cast<double>(*p.width)});
  if (expected.width) {
    out.push_back({"expected_width_lanes", static_cast<double>(*expected.width)});
  }
  if (p.lane_gbps) out.push_back({"lane_speed_bytes_per_second", *p.lane_gbps * kBytesPerGbit});
  if (expected.lane_gbps) {
    out.push_back({"expected_lane_speed_bytes_per_second", *expected.lane_gbps * kBytesPerGbit});
  }
}

void AssessLink(const PortShape& p, const PortExpectation& e, std::vector<Condition>& out) {
  const std::string key = p.key.Text();
  Condition width{"width|" + key, Hold::kDegraded};
  Condition speed{"speed|" + key, Hold::kDegraded};
  const EntityLabels entity = PortEntity(p.device, p.key.port, p.netdev, p.link_layer);
  if (!p.up() || !p.rate_gbps) {
    // A port that is not up reports a stale rate: no verdict either way.
    width.verdict = speed.verdict = Verdict::kUnknown;
    out.push_back(std::move(width));
    out.push_back(std::move(speed));
    return;
  }
  const bool width_loss = p.width && e.width.value && *p.width < *e.width.value;
  const bool lane_loss =
      p.lane_gbps && e.lane_gbps.value && Below(*p.lane_gbps, *e.lane_gbps.value);
  const bool rate_short = e.rate_gbps.value && Below(*p.rate_gbps, *e.rate_gbps.value);
  const bool speed_loss = lane_loss || (rate_short && !width_loss);
  const std::string expected = ExpectedText(e);
  if (width_loss) {
    width.verdict = Verdict::kRaise;
    width.finding = {Severity::kCritical,
                     entity,
                     static_cast<double>(*p.width),
                     {},
                     PortName(p) + " lost lanes: trained at " + LinkText(p) + ", expected " +
                         expected + " (from " + SourceText(e.width.source) + ")"};
    AddLinkEvidence(p, e, width.finding.evidence);
  }
  if (speed_loss) {
    const std::string& source = lane_loss ? e.lane_gbps.source : e.rate_gbps.source;
    speed.verdict = Verdict::kRaise;
    speed.finding = {Severity::kWarning,
                     entity,
                     (lane_loss ? *p.lane_gbps : *p.rate_gbps) * kBytesPerGbit,
                     {},
                     PortName(p) + " runs slower than it should: " + LinkText(p) + ", expected " +
                         expected + " (from " + SourceText(source) + ")"};
    AddLinkEvidence(p, e, speed.finding.evidence);
  }
  out.push_back(std::move(width));
  out.push_back(std::move(speed));
}

// Only for a port never seen up (the state file's history included): the outages of a port
// seen up are link_flap's (sustained down, flapping, downtime), which keeps its own seen-up
// state across restarts too. One fault, one finding.
void AssessState(const PortShape& p, const PortExpectation& e, bool ever_up,
                 std::vector<Condition>& out) {
  const std::string key = p.key.Text();
  const EntityLabels entity = PortEntity(p.device, p.key.port, p.netdev, p.link_layer);
  Condition stuck{"stuck|" + key, Hold::kStuck};
  Condition down{"down|" + key, Hold::kDown};
  const bool stuck_now = p.link_layer == "InfiniBand" && p.phys_state == kPhysLinkUp &&
                         (p.state == kStateInit || p.state == kStateArmed);
  std::vector<Evidence> evidence;
  if (p.state) evidence.push_back({"port_state", static_cast<double>(*p.state)});
  if (p.phys_state) evidence.push_back({"phys_state", static_cast<double>(*p.phys_state)});
  if (p.sm_lid) evidence.push_back({"sm_lid", static_cast<double>(*p.sm_lid)});
  if (stuck_now && !ever_up) {
    stuck.verdict = Verdict::kRaise;
    stuck.finding = {Severity::kCritical, entity, static_cast<double>(*p.state), evidence,
                     PortName(p) + " has its physical link up but is stuck in " +
                         std::string(StateName(*p.state)) + SmText(p.sm_lid)};
  }
  if (!p.up() && !stuck_now && p.state && e.should_be_up && !ever_up) {
    std::string phys = p.phys_state ? std::string(PhysStateName(*p.phys_state)) : "";
    down.verdict = Verdict::kRaise;
    down.finding = {Severity::kCritical, entity, static_cast<double>(*p.state), evidence,
                    PortName(p) + " is " + StateText(*p.state) +
                        (phys.empty() ? "" : " (physical state " + phys + ")") +
                        " but should be up (" + UpSourceText(e.up_source) + ")"};
  }
  out.push_back(std::move(stuck));
  out.push_back(std::move(down));
}

// Firmware and the card's identity against siblings or the manifest; one condition per device.
void AssessCard(const PortShape& p, const PortExpectation& e, std::set<std::string>& devices_done,
                std::vector<Condition>& out) {
  if (!devices_done.insert(p.device).second) return;
  Condition firmware{"firmware|" + p.device, Hold::kDegraded};
  std::string differs;
  if (!e.firmware.empty() && !p.firmware.empty() && p.firmware != e.firmware) {
    differs = "firmware " + p.firmware + ", expected " + e.firmware + " (from " +
              SourceText(e.firmware_source) + ")";
  }
  auto check = [&](const char* what, const std::string& actual, const std::string& expected) {
    if (expected.empty() || actual == expected) return;
    differs += (differs.empty() ? "" : "; ") + std::string(what) + " " +
               (actual.empty() ? "unknown" : actual) + ", the manifest says " + expected;
  };
  check("board id", p.board_id, e.board_id);
  check("HCA type", p.hca_type, e.hca_type);
  check("link layer", p.link_layer, e.link_layer);
  if (!differs.empty()) {
    firmware.verdict = Verdict::kRaise;
    firmware.finding = {
        Severity::kWarning, {{"device", p.device}}, 0, {}, p.device + ": " + differs};
  }
  out.push_back(std::move(firmware));
}

// A NIC's PCIe link below the manifest while it runs at its own maximum (below its maximum is
// pcie_degraded's finding).
void AssessPcie(const PortShape& p, const PortExpectation& e, std::set<std::string>& done,
                std::vector<Condition>& out) {
  if (!done.insert(p.key.pci_address).second) return;
  const std::string id = p.key.pci_address;
  const EntityLabels entity{{"device", p.device}};
  Condition width{"pcie_width|" + id, Hold::kDegraded};
  Condition speed{"pcie_speed|" + id, Hold::kDegraded};
  if (e.pcie_width && p.pcie_width && *p.pcie_width > 0 && *p.pcie_width < *e.pcie_width &&
      (!p.pcie_max_width || *p.pcie_width >= *p.pcie_max_width)) {
    width.verdict = Verdict::kRaise;
    width.finding = {Severity::kCritical,
                     entity,
                     static_cast<double>(*p.pcie_width),
                     {{"pcie_width_lanes", static_cast<double>(*p.pcie_width)},
                      {"expected_pcie_width_lanes", static_cast<double>(*e.pcie_width)}},
                     p.device + " (PCI " + id + ") PCIe link is x" + std::to_string(*p.pcie_width) +
                         ", the manifest says x" + std::to_string(*e.pcie_width)};
  }
  if (e.pcie_speed_gts && p.pcie_speed_gts && Below(*p.pcie_speed_gts, *e.pcie_speed_gts) &&
      (!p.pcie_max_speed_gts || !Below(*p.pcie_speed_gts, *p.pcie_max_speed_gts))) {
    speed.verdict = Verdict::kRaise;
    speed.finding = {Severity::kWarning,
                     entity,
                     *p.pcie_speed_gts * 1e9,
                     {{"pcie_speed_transfers_per_second", *p.pcie_speed_gts * 1e9},
                      {"expected_pcie_speed_transfers_per_second", *e.pcie_speed_gts * 1e9}},
                     p.device + " (PCI " + id + ") PCIe link runs " +
                         FormatFixed(*p.pcie_speed_gts, 1) + " GT/s, the manifest says " +
                         FormatFixed(*e.pcie_speed_gts, 1) + " GT/s"};
  }
  out.push_back(std::move(width));
  out.push_back(std::move(speed));
}

PortShape FromHistory(const PortKey& key, const PortHistory& h) {
  PortShape p;
  p.key = key;
  p.device = h.device;
  p.netdev = h.netdev;
  p.link_layer = h.link_layer;
  return p;
}

void AssessMissing(const AssessInput& in, std::vector<Condition>& out) {
  std::vector<PortShape> absent;
  for (const auto& [key, h] : in.history) {
    Condition missing{"missing|" + key.Text(), Hold::kMissing};
    const PortShape* live = in.shape.Find(key);
    if (live == nullptr) {
      absent.push_back(FromHistory(key, h));
      missing.verdict = Verdict::kRaise;
      missing.finding = {Severity::kCritical,
                         PortEntity(h.device, key.port, h.netdev, h.link_layer),
                         0,
                         {},
                         h.device + " port " + std::to_string(key.port) + " (PCI " +
                             key.pci_address +
                             ") is missing: seen before (state file), absent now"};
    }
    out.push_back(std::move(missing));
    Condition netdev{"netdev|" + key.Text(), Hold::kMissing};
    if (live != nullptr && !h.netdev.empty() && live->netdev.empty()) {
      netdev.verdict = Verdict::kRaise;
      netdev.finding = {Severity::kWarning,
                        PortEntity(live->device, key.port, "", ""),
                        0,
                        {},
                        live->device + " port " + std::to_string(key.port) +
                            " has lost its netdev " + h.netdev + " (seen before, absent now)"};
    }
    out.push_back(std::move(netdev));
  }
  if (in.manifest == nullptr) return;
  for (const ManifestPort& port : in.manifest->ports) {
    Condition missing{"missing|" + port.where, Hold::kMissing};
    bool present = false, covered = false;
    for (const PortShape& p : in.shape.ports) present = present || port.Matches(p);
    for (const PortShape& p : absent) covered = covered || port.Matches(p);
    if (!present && !covered) {
      missing.verdict = Verdict::kRaise;
      missing.finding = {
          Severity::kCritical,
          port.netdev.empty()
              ? EntityLabels{{"device", port.device.empty() ? port.pci_address : port.device},
                             {"port", std::to_string(port.port.value_or(1))}}
              : EntityLabels{{"netdev", port.netdev}},
          0,
          {},
          "port " + port.Name() + " of the manifest (" + port.where + ") is missing"};
    }
    out.push_back(std::move(missing));
  }
  for (const ManifestGroup& group : in.manifest->groups) {
    if (!group.count) continue;
    int present = 0;
    for (const PortShape& p : in.shape.ports) present += group.Selects(p) ? 1 : 0;
    Condition count{"count|" + group.where, Hold::kMissing};
    if (present < *group.count) {
      count.verdict = Verdict::kRaise;
      count.finding = {Severity::kCritical,
                       {},
                       static_cast<double>(present),
                       {{"ports", static_cast<double>(present)},
                        {"expected_ports", static_cast<double>(*group.count)}},
                       group.Name() + ": " + std::to_string(present) + " present, the manifest (" +
                           group.where + ") expects " + std::to_string(*group.count)};
    }
    out.push_back(std::move(count));
  }
}

}  // namespace

EntityLabels PortEntity(const std::string& device, int port, const std::string& netdev,
                        const std::string& link_layer) {
  if (link_layer == "Ethernet" && !netdev.empty()) return {{"netdev", netdev}};
  return {{"device", device}, {"port", std::to_string(port)}};
}

std::vector<Condition> Assess(const AssessInput& in) {
  std::vector<Condition> out;
  std::set<std::string> devices_done, functions_done;
  static const PortExpectation kNone;
  for (const PortShape& p : in.shape.ports) {
    auto it = in.expected.find(p.key);
    const PortExpectation& e = it == in.expected.end() ? kNone : it->second;
    AssessLink(p, e, out);
    auto h = in.history.find(p.key);
    AssessState(p, e, h != in.history.end() && h->second.seen_up, out);
    AssessCard(p, e, devices_done, out);
    AssessPcie(p, e, functions_done, out);
  }
  AssessMissing(in, out);
  return out;
}

}  // namespace fabricwatch::detect::shape
