// Simulator, the fabric's shape (simulator_port.h): how each link trained (width and lane
// speed), whether an IB port is logically up, whether the card is there and which firmware it
// runs; the faults that change these and sit still (no counter moves); and the files that show
// them, rewritten in place each second:
//
//   ports/<n>/rate        "400 Gb/sec (4X NDR)"; while down what mlx5 reports for a port with
//                         no link: 4X SDR on InfiniBand, 4X QDR on RoCE (mlx5_query_port_roce's
//                         default before translate_eth_proto_oper)
//   ports/<n>/state       "4: ACTIVE", "2: INIT" (no SM), "1: DOWN"
//   ports/<n>/phys_state  "5: LinkUp", "2: Polling" while down, or what a fault shows
//   ports/<n>/lid, sm_lid "0x0" on RoCE and on an IB port that no SM has configured
//   <dev>/fw_ver          the card's running firmware
//   net/<netdev>/speed    width x lane speed in Mb/s, -1 while down (net-sysfs speed_show)
//   ethtool/<netdev>/link `ethtool <netdev>` as ethtool 6.x prints it over netlink (netlink/
//                         settings.c: link modes, then link info, WoL, debug, link state)
//
// A RoCE port's rate follows its Ethernet mode (translate_eth_ext_proto_oper): 400GAUI-4 is
// 4X NDR, 200GBASE-CR4 (4 lanes of 50G PAM4) 4X HDR, CAUI-4 4X EDR, 25GBASE-CR 1X EDR. An
// Ethernet downgrade keeps the port's lanes and slows each one, as autonegotiation with a
// slower partner does; its Lanes line stays 4.

#include <cstdio>
#include <string>
#include <string_view>

#include "tools/fabricsim/link_rate.h"
#include "tools/fabricsim/simulator.h"
#include "tools/fabricsim/simulator_port.h"

namespace fabricwatch::sim {
namespace {

std::string Hex16(unsigned v) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "0x%x", v);
  return buf;
}

// phys_state_to_str (drivers/infiniband/core/sysfs.c).
std::string PhysState(int state) {
  static constexpr const char* kNames[] = {
      "<unknown>",         "Sleep",   "Polling", "Disabled", "PortConfigurationTraining", "LinkUp",
      "LinkErrorRecovery", "Phy Test"};
  const bool known = state >= 0 && state < 8;
  return std::to_string(state) + ": " + (known ? kNames[state] : kNames[0]);
}

// The Ethernet link modes mlx5 maps from its extended PTYS protocols
// (mlx5e_build_ptys2ethtool_map), in the kernel's bit order (enum ethtool_link_mode_bit_indices),
// which is the order ethtool prints them in; names as the kernel's link_mode_names.
struct LinkMode {
  const char* name;
  int gbps;
  int lanes;
};
// clang-format off
constexpr LinkMode kLinkModes[] = {
    {"1000baseKX/Full", 1, 1},           {"10000baseKR/Full", 10, 1},
    {"40000baseKR4/Full", 40, 4},        {"40000baseCR4/Full", 40, 4},
    {"40000baseSR4/Full", 40, 4},        {"40000baseLR4/Full", 40, 4},
    {"25000baseCR/Full", 25, 1},         {"25000baseKR/Full", 25, 1},
    {"25000baseSR/Full", 25, 1},         {"50000baseCR2/Full", 50, 2},
    {"50000baseKR2/Full", 50, 2},        {"100000baseKR4/Full", 100, 4},
    {"100000baseSR4/Full", 100, 4},      {"100000baseCR4/Full", 100, 4},
    {"100000baseLR4_ER4/Full", 100, 4},  {"50000baseSR2/Full", 50, 2},
    {"1000baseX/Full", 1, 1},            {"10000baseCR/Full", 10, 1},
    {"10000baseSR/Full", 10, 1},         {"10000baseLR/Full", 10, 1},
    {"10000baseER/Full", 10, 1},         {"50000baseKR/Full", 50, 1},
    {"50000baseSR/Full", 50, 1},         {"50000baseCR/Full", 50, 1},
    {"50000baseLR_ER_FR/Full", 50, 1},   {"50000baseDR/Full", 50, 1},
    {"100000baseKR2/Full", 100, 2},      {"100000baseSR2/Full", 100, 2},
    {"100000baseCR2/Full", 100, 2},      {"100000baseLR2_ER2_FR2/Full", 100, 2},
    {"100000baseDR2/Full", 100, 2},      {"200000baseKR4/Full", 200, 4},
    {"200000baseSR4/Full", 200, 4},      {"200000baseLR4_ER4_FR4/Full", 200, 4},
    {"200000baseDR4/Full", 200, 4},      {"200000baseCR4/Full", 200, 4},
    {"100000baseKR/Full", 100, 1},       {"100000baseSR/Full", 100, 1},
    {"100000baseLR_ER_FR/Full", 100, 1}, {"100000baseDR/Full", 100, 1},
    {"100000baseCR/Full", 100, 1},       {"200000baseKR2/Full", 200, 2},
    {"200000baseSR2/Full", 200, 2},      {"200000baseLR2_ER2_FR2/Full", 200, 2},
    {"200000baseDR2/Full", 200, 2},      {"200000baseCR2/Full", 200, 2},
    {"400000baseKR4/Full", 400, 4},      {"400000baseSR4/Full", 400, 4},
    {"400000baseLR4_ER4_FR4/Full", 400, 4}, {"400000baseDR4/Full", 400, 4},
    {"400000baseCR4/Full", 400, 4},
};
// clang-format on

// The fastest lane a card's SerDes runs: ConnectX-7 100G PAM4, ConnectX-6 and 6 Dx 50G PAM4,
// ConnectX-6 Lx 25G NRZ.
int CardLaneGbps(const Port& p) { return p.card_gbps >= 400 ? 100 : p.card_gbps >= 100 ? 50 : 25; }

// "Supported link modes:   A\n\t<24 spaces>B\n..." (dump_link_modes: one mode a line, the
// continuation aligned under the first).
std::string ModeList(std::string_view label, const Port& p) {
  const int cage_lanes = p.module == ModuleType::kSfp ? 1 : 4;
  const int lane_gbps = CardLaneGbps(p);
  std::string out = "\t" + std::string(label);
  bool first = true;
  for (const LinkMode& m : kLinkModes) {
    if (m.lanes > cage_lanes || m.gbps > p.card_gbps || m.gbps > lane_gbps * m.lanes) continue;
    if (!first) out += "\n\t" + std::string(label.size(), ' ');
    out += m.name;
    first = false;
  }
  return out + "\n";
}

// The training an Ethernet downgrade asks of `p`: `speed_gbps` (default: the next slower lane
// speed) on the port's own lanes; nullopt when no Ethernet mode runs that.
std::optional<Trained> EthernetTraining(const Port& p, const ScenarioEvent& ev) {
  const int lane = LaneSpeeds()[p.lane_speed].deci_gbps / 10;
  const int slower = lane >= 100 ? 50 : lane >= 50 ? 25 : 10;
  const double gbps = EventParam(ev, "speed_gbps", slower * p.lanes);
  const int whole = static_cast<int>(gbps);
  if (whole != gbps || whole % p.lanes != 0) return std::nullopt;
  auto speed = EthernetLaneSpeed(whole / p.lanes);
  if (!speed) return std::nullopt;
  return Trained{p.lanes, *speed};
}

int TextSpeed(const ScenarioEvent& ev, int fallback) {
  auto it = ev.text.find("speed");
  return it == ev.text.end() ? fallback : FindLaneSpeed(it->second);
}

// The InfiniBand training of ib_width_downgrade and of link_retrain's lower rate.
Trained IbTraining(const Port& p, const ScenarioEvent& ev) {
  return {static_cast<int>(EventParam(ev, "width", 1)), TextSpeed(ev, p.lane_speed)};
}

// One minor release older ("28.39.1002" -> "28.38.1002"), a newer one from minor 0.
std::string OtherFirmware(const std::string& fw) {
  const size_t a = fw.find('.'), b = fw.find('.', a + 1);
  if (a == std::string::npos || b == std::string::npos) return fw + ".1";
  const int minor = std::stoi(fw.substr(a + 1, b - a - 1));
  return fw.substr(0, a + 1) + std::to_string(minor > 0 ? minor - 1 : minor + 1) + fw.substr(b);
}

}  // namespace

Status Simulator::CheckShapeFault(const ScenarioEvent& ev, const Port& p) {
  const std::string name = p.rdma_device + " (" + p.netdev + ")";
  const bool ethernet = p.link_layer == LinkLayer::kEthernet;
  auto bad = [](const std::string& what) { return Status(StatusCode::kInvalidArgument, what); };
  const bool ib_only = ev.fault == "ib_speed_downgrade" || ev.fault == "ib_width_downgrade" ||
                       ev.fault == "port_stuck_init";
  if (ib_only && ethernet) {
    return bad(ev.fault + " needs an InfiniBand port; " + name +
               " is Ethernet (RoCE: eth_speed_downgrade)");
  }
  if (ev.fault == "eth_speed_downgrade" && !ethernet) {
    return bad(ev.fault + " needs an Ethernet (RoCE) port; " + name + " is InfiniBand");
  }
  const std::string port_speed(LaneSpeeds()[p.lane_speed].name);
  if (ev.fault == "ib_speed_downgrade") {
    const int speed = TextSpeed(ev, SlowerLaneSpeed(p.lane_speed));
    if (speed >= p.lane_speed) {
      return bad("speed " + std::string(LaneSpeeds()[speed].name) + " is not slower than " + name +
                 "'s " + port_speed);
    }
  }
  if (ev.fault == "ib_width_downgrade" || (ev.fault == "link_retrain" && !ethernet)) {
    const Trained t = IbTraining(p, ev);
    if (t.width >= p.lanes) {
      return bad("width " + std::to_string(t.width) + " is not narrower than " + name + "'s " +
                 std::to_string(p.lanes) + "X");
    }
    if (t.speed > p.lane_speed) {
      return bad("speed " + std::string(LaneSpeeds()[t.speed].name) + " is faster than " + name +
                 "'s " + port_speed);
    }
  }
  if (ev.fault == "eth_speed_downgrade" || (ev.fault == "link_retrain" && ethernet)) {
    const auto t = EthernetTraining(p, ev);
    if (!t || RateGbps(*t) >= p.rate_gbps) {
      const std::string lanes = std::to_string(p.lanes);
      return bad("speed_gbps " + std::to_string(EventParam(ev, "speed_gbps", 0)).substr(0, 6) +
                 ": no Ethernet mode below " + std::to_string(p.rate_gbps) + "G runs it on the " +
                 lanes + " lanes of " + name + " (lanes of 10, 25, 50 or 100 Gb/s)");
    }
  }
  return Status::Ok();
}

std::vector<Simulator::PortState*> Simulator::CardPorts(const PortState& ps) {
  std::vector<PortState*> out;
  for (auto& q : ports_) {
    if (q->port->hca == ps.port->hca) out.push_back(q.get());
  }
  return out;
}

void Simulator::Replug(PortState& ps) {
  ps.present = true;
  ResetCounters(ps);
  ps.link_up = true;
}

void Simulator::StartShapeFault(const ScenarioEvent& ev, PortState& ps) {
  if (ev.fault == "hca_missing") {
    for (PortState* q : CardPorts(ps)) q->present = false;
  } else if (ev.fault == "fw_mismatch") {
    auto it = ev.text.find("fw_ver");
    const std::string fw = it != ev.text.end() ? it->second : OtherFirmware(ps.port->fw_ver);
    for (PortState* q : CardPorts(ps)) q->fw_ver = fw;
  }
}

void Simulator::EndShapeFault(const ScenarioEvent& ev, PortState& ps) {
  if (ev.fault == "hca_missing") {
    // A reseat: every function comes back as a new device instance.
    for (PortState* q : CardPorts(ps)) Replug(*q);
  } else if (ev.fault == "fw_mismatch") {
    for (PortState* q : CardPorts(ps)) q->fw_ver = q->port->fw_ver;
  }
}

void Simulator::ApplyShapeFault(PortState& ps, const ActiveFault& af, bool& down,
                                bool& logical_active) const {
  const ScenarioEvent& ev = *af.event;
  const Port& p = *ps.port;
  if (ev.fault == "ib_speed_downgrade") {
    ps.trained.speed = TextSpeed(ev, SlowerLaneSpeed(p.lane_speed));
  } else if (ev.fault == "ib_width_downgrade") {
    ps.trained = IbTraining(p, ev);
    ps.phys_state_up = static_cast<int>(EventParam(ev, "phys_state", 5));
  } else if (ev.fault == "eth_speed_downgrade") {
    ps.trained = *EthernetTraining(p, ev);  // checked by CheckShapeFault
  } else if (ev.fault == "port_stuck_init") {
    logical_active = false;
  } else if (ev.fault == "link_retrain") {
    if (static_cast<double>(now_ - af.start) < EventParam(ev, "down", 1)) {
      down = true;
    } else {
      ps.trained =
          p.link_layer == LinkLayer::kEthernet ? *EthernetTraining(p, ev) : IbTraining(p, ev);
    }
  }
}

std::string Simulator::LinkText(const PortState& ps) const {
  const Port& p = *ps.port;
  const bool ethernet = p.link_layer == LinkLayer::kEthernet;
  std::string t = "Settings for " + p.netdev + ":\n";
  if (ethernet) {
    // mlx5e: the cage's connector (FIBRE for the optical modules simulated, none while empty),
    // symmetric pause supported but off (a PFC port), autoneg on, the active FEC advertised.
    const bool cage = ps.module_present;
    t += cage ? "\tSupported ports: [ FIBRE ]\n" : "\tSupported ports: [  ]\n";
    t += ModeList("Supported link modes:   ", p);
    t += "\tSupported pause frame use: Symmetric\n\tSupports auto-negotiation: Yes\n";
    t += CardLaneGbps(p) >= 50 ? "\tSupported FEC modes: None\t RS\t BASER\t LLRS\n"
                               : "\tSupported FEC modes: None\t RS\t BASER\n";
    t += ModeList("Advertised link modes:  ", p);
    t += "\tAdvertised pause frame use: No\n\tAdvertised auto-negotiation: Yes\n";
    t += "\tAdvertised FEC modes: RS\n";
  } else {
    // mlx5 IPoIB (mlx5i_get_link_ksettings): no link modes, speed from the IB port's width and
    // lane speed, port Other, autoneg off.
    t += "\tSupported ports: [  ]\n\tSupported link modes:   Not reported\n";
    t += "\tSupported pause frame use: No\n\tSupports auto-negotiation: No\n";
    t += "\tSupported FEC modes: Not reported\n\tAdvertised link modes:  Not reported\n";
    t += "\tAdvertised pause frame use: No\n\tAdvertised auto-negotiation: No\n";
    t += "\tAdvertised FEC modes: Not reported\n";
  }
  if (ps.link_up) {
    t += "\tSpeed: " + std::to_string(RateMbps(ps.trained)) + "Mb/s\n";
    if (ethernet) t += "\tLanes: " + std::to_string(ps.trained.width) + "\n";
    t += "\tDuplex: Full\n";
  } else {
    t += "\tSpeed: Unknown!\n\tDuplex: Unknown! (255)\n";
  }
  t += ethernet ? "\tAuto-negotiation: on\n" : "\tAuto-negotiation: off\n";
  t += ethernet ? (ps.module_present ? "\tPort: FIBRE\n" : "\tPort: None\n") : "\tPort: Other\n";
  t += "\tPHYAD: 0\n\tTransceiver: internal\n";
  if (ethernet) {
    // mlx5e_get_wol without wol_g: nothing supported; msglevel MLX5E_MSG_LEVEL (link).
    t += "\tSupports Wake-on: d\n\tWake-on: d\n";
    t += "\tCurrent message level: 0x00000004 (4)\n\t\t\t       link\n";
  }
  t += ps.Carrier() ? "\tLink detected: yes\n" : "\tLink detected: no\n";
  return t;
}

Status Simulator::WriteLinkFiles(const PortState& ps) {
  TreeWriter& w = writer_;
  const Port& p = *ps.port;
  const bool ethernet = p.link_layer == LinkLayer::kEthernet;
  const std::string port = "sys/" + ps.dev_dir + "/ports/" + std::to_string(p.port_num);
  const Trained no_link{4, FindLaneSpeed(ethernet ? "QDR" : "SDR")};
  FW_TRY(w.Write(port + "/rate", RateText(ps.link_up ? ps.trained : no_link) + "\n"));
  FW_TRY(w.Write(port + "/state", !ps.link_up         ? "1: DOWN\n"
                                  : ps.logical_active ? "4: ACTIVE\n"
                                                      : "2: INIT\n"));
  FW_TRY(w.Write(port + "/phys_state",
                 (ps.link_up ? PhysState(ps.phys_state_up) : PhysState(2)) + "\n"));
  const bool configured = !ethernet && ps.logical_active;  // a subnet manager assigned the LIDs
  FW_TRY(w.Write(port + "/lid", Hex16(configured ? p.lid : 0) + "\n"));
  FW_TRY(w.Write(port + "/sm_lid", Hex16(configured ? 1 : 0) + "\n"));
  FW_TRY(w.Write("sys/" + ps.dev_dir + "/fw_ver", ps.fw_ver + "\n"));
  const std::string net = "sys/" + ps.net_dir;
  FW_TRY(
      w.Write(net + "/speed", ps.link_up ? std::to_string(RateMbps(ps.trained)) + "\n" : "-1\n"));
  FW_TRY(w.Write(net + "/duplex", ps.link_up ? "full\n" : "unknown\n"));
  FW_TRY(w.Write("ethtool/" + p.netdev + "/link", LinkText(ps)));
  return Status::Ok();
}

}  // namespace fabricwatch::sim
