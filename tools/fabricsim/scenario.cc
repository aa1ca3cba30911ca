#include "tools/fabricsim/scenario.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <fstream>
#include <limits>
#include <optional>
#include <regex>
#include <sstream>
#include <vector>

#include "base/yaml_reader.h"
#include "tools/fabricsim/kmsg_log.h"
#include "tools/fabricsim/link_rate.h"
#include "tools/fabricsim/scenario_yaml.h"

namespace fabricwatch::sim {
namespace {

using scenario_yaml::Seconds;

constexpr std::array<FaultInfo, 37> kFaults = {{
    {"congestion",
     "heavy but flowing PFC on a priority: pause both ways with XON transitions, ECN marks and "
     "CNPs, throughput down but moving",
     false, 60, "priority=3 rate=60000 (pause frames/s received)"},
    {"pfc_storm_source",
     "this NIC transmits continuous PFC pause on the priority and its receive makes no progress",
     false, 60, "priority=3"},
    {"pfc_storm_victim",
     "this NIC receives continuous PFC pause on the priority (no XON) and cannot transmit on it",
     false, 60, "priority=3"},
    {"link_flap",
     "the link goes down and up `count` times, every `period` s, down for `down` s each "
     "(IB: state, phys_state, link_downed; netdev: carrier counters, link_down_events_phy)",
     false, 0, "count=3 period=10 down=1 (duration: count*period)"},
    {"link_down", "the link is down (Polling) for the whole duration", false, 60, ""},
    {"ber_growth",
     "pre-FEC bit error ratio grows log-linearly to `ber` over `ramp` s (0: at once) and stays "
     "there; past 1e-6 uncorrected symbol errors appear (IB symbol_error/port_rcv_errors, mlx5 "
     "rx_pcs_symbol_err_phy, CRC errors). With `lane`, that lane carries 97% of the corrected "
     "bits (rx_err_lane_<N-1>_phy) and the others 1% each",
     false, 120, "ber=1e-5 lane (all lanes when omitted) ramp=(duration)"},
    {"ib_micro_flap",
     "InfiniBand port: the link retrains without going down `count` times, every `period` s "
     "(counters/link_error_recovery +1 each; state stays ACTIVE, link_downed unchanged). A "
     "down+up shorter than the poll is link_flap with down: 0",
     false, 0, "count=3 period=60 (duration: count*period)"},
    {"module_temp_ramp",
     "module temperature ramps linearly to target_celsius over `ramp` s, holds it to the end of "
     "the duration, then recovers",
     false, 120, "target_celsius=(high alarm + 3) ramp=(duration)"},
    {"rx_power_decay", "receive power of one lane decays to target_dbm", false, 120,
     "lane=1 target_dbm=-13"},
    {"laser_bias_creep", "laser bias current of one lane creeps up to target_ma", false, 300,
     "lane=1 target_ma=(high warning + 1 mA)"},
    {"counter_reset", "driver reload: every counter of the port restarts from 0", true, 0, ""},
    {"counter_wrap32",
     "the netdev's byte and packet counters are 32-bit and wrap (sysfs statistics and ethtool)",
     false, 60, ""},
    {"hot_unplug",
     "the PCI function disappears (device, netdev, RDMA device) and comes back "
     "with fresh counters after `duration`",
     false, 30, ""},
    {"module_swap",
     "the transceiver is pulled and another one (new serial) inserted after `duration`; the link "
     "is down meanwhile",
     false, 5, ""},
    // Faults that sit still: the link trains short of what the port can do, or a part of the
    // node is not what it should be. A downgrade starts and ends without a link event (as if
    // the port had trained that way); link_retrain is the training itself.
    {"ib_speed_downgrade",
     "the InfiniBand port trains at a slower lane speed on all its lanes (400 Gb/sec (4X NDR) -> "
     "200 Gb/sec (4X HDR)): ports/<n>/rate, the IPoIB netdev's speed and ethtool link file",
     false, 300, "speed=(one generation lower: NDR->HDR)"},
    {"ib_width_downgrade",
     "the InfiniBand port trains on fewer lanes (400 Gb/sec (4X NDR) -> 100 Gb/sec (1X NDR)); "
     "`speed` slows its lanes too and `phys_state` is what phys_state shows (the field's "
     "5 Gb/sec (1X DDR) with 0: <unknown> and 4: ACTIVE is width=1 speed=DDR phys_state=0)",
     false, 300, "width=1 (1 or 2) speed=(the port's) phys_state=5"},
    {"eth_speed_downgrade",
     "the Ethernet port links at a lower speed on the same lanes (400G -> 200GBASE-CR4): "
     "net speed, the ethtool link file's Speed and the RoCE rate (200 Gb/sec (4X HDR))",
     false, 300, "speed_gbps=(the next lower lane speed: 200 on a 400G port)"},
    {"port_stuck_init",
     "the InfiniBand port's physical link is up (5: LinkUp) but no subnet manager answers: "
     "state 2: INIT, lid and sm_lid 0x0, the IPoIB carrier off, no traffic",
     false, 120, ""},
    {"hca_missing",
     "a reboot that does not find the card: every PCI function of the HCA (its RDMA devices, "
     "netdevs and ethtool entries) is absent for `duration`, then comes back as after a reseat "
     "(new ifindex, counters from 0)",
     false, 120, ""},
    {"fw_mismatch",
     "the card runs another firmware (fw_ver of every function of the HCA), as after a reboot "
     "with a different image flashed; the original comes back at the end",
     false, 300, "fw_ver=(one minor release older: 28.39.1002 -> 28.38.1002)"},
    {"link_retrain",
     "the link goes down for `down` s, then runs at a lower rate for `degraded` s while it "
     "trains (InfiniBand: `width` lanes at `speed`; Ethernet: `speed_gbps`), then at full rate",
     false, 0,
     "down=1 degraded=3 width=1 speed=(the port's) speed_gbps=(half) (duration: "
     "down+degraded)"},
    // Configuration drift (issue 21): settings that cost bandwidth without moving a counter. Each
    // sits for `duration:` (default 5 min) and the healthy value is written back at its end.
    {"pfc_off",
     "PFC disabled on the RoCE priority 3 of one Ethernet port (ethtool/<netdev>/qos `enabled` "
     "row all 0)",
     false, 300, ""},
    {"ecn_off",
     "ECN disabled on the RoCE priority 3 of one Ethernet port (net/<netdev>/ecn/roce_np and "
     "roce_rp enable/3 = 0)",
     false, 300, ""},
    {"trust_pcp",
     "one Ethernet port trusts PCP while the fabric marks DSCP (qos `Priority trust state: pcp`, "
     "no dscp2prio rows)",
     false, 300, ""},
    {"mtu_1500", "one RoCE netdev runs MTU 1500 while its siblings run 9000 (net/<netdev>/mtu)",
     false, 300, ""},
    {"global_pause_on",
     "802.3x global pause on (RX and TX) together with PFC on one Ethernet port "
     "(ethtool/<netdev>/pause)",
     false, 300, ""},
    {"storm_prevention_off",
     "PFC storm prevention off on one Ethernet port (ethtool/<netdev>/tunables "
     "pfc-prevention-tout: 0)",
     false, 300, ""},
    {"peermem_unloaded",
     "node-wide (no device:): the GPUDirect RDMA module nvidia_peermem is not loaded "
     "(sys/module/nvidia_peermem absent)",
     false, 300, ""},
    {"acs_redirect",
     "ACS P2P Request and Completion Redirect on in the switch downstream port above `gpu:` "
     "(its PCI config space), so GPU-NIC peer traffic goes through the root complex; needs a "
     "PCIe switch (hgx-* presets)",
     false, 300, "gpu=(PCI address or index)"},
    {"mps_mismatch",
     "one function on a GPU-NIC path (`gpu:`, or the NIC of device:/netdev:) runs a "
     "MaxPayloadSize (and optionally MaxReadRequestSize) unlike the rest of its path (256, MRRS "
     "512)",
     false, 300, "mps=128 mrrs=(unchanged) (bytes: 128..4096, a power of 2)"},
    // PCIe health (issue 22): what pcie_degraded reads (topology collector).
    {"pcie_downtrain",
     "one function on a GPU-NIC path (`gpu:`, or the NIC of device:/netdev:) trains its PCIe "
     "link below its maximum: current_link_width (x16 -> x8) and/or current_link_speed, and "
     "the config space's Link Status; max_link_* and Link Capabilities stay",
     false, 600, "link_width=(half the maximum) link_gts=(the maximum) (2.5 5 8 16 32 64)"},
    {"aer_burst",
     "one function (`gpu:`, or the NIC of device:/netdev:) reports `count` correctable AER "
     "errors (aer_dev_correctable RxErr and TOTAL_ERR_COR) and `nonfatal` nonfatal ones "
     "(aer_dev_nonfatal CmpltTO, TOTAL_ERR_NONFATAL), spread over the duration; they stay "
     "counted after it. The kernel log gets the root port's `Correctable Error message received "
     "from <bdf>` and the function's AER lines (nonfatal: `Uncorrectable (Non-Fatal)`), one group "
     "per 10 s while errors arrive",
     false, 60, "count=50 nonfatal=0"},
    // Faults only the driver's log shows (issue 23): records in <root>/kmsg (--path.kmsg) with
    // the texts of docs/reference.md §9, printed against the port's PCI function.
    {"fw_fatal",
     "mlx5 firmware fatal error: kmsg `Fatal error 1 detected`, `Health issue observed, firmware "
     "internal error, severity(3) ERROR:`, `synd 0x1: firmware internal error`; the link is down "
     "for `duration`, then `health recovery succeeded` and the link comes back",
     false, 60, ""},
    {"module_unplug",
     "the cable is pulled from the port's cage and put back after `duration`: kmsg `Port module "
     "event: module <n>, Cable unplugged` / `Cable plugged` and the netdev's `Link down` / `Link "
     "up`; carrier down meanwhile, ethtool module_unplug +1",
     false, 30, ""},
    {"module_error",
     "the port's module reports an error: kmsg `Port module event[error]: module <n>, Cable "
     "error, <text>` at the start and every `interval`; high_temperature, bad_cable and "
     "bus_stuck also count in ethtool module_high_temp, module_bad_shorted, module_bus_stuck",
     false, 60,
     "error=high_temperature (bad_cable power_budget bus_stuck no_eeprom unsupported) "
     "interval=60s"},
    {"cmd_timeout",
     "mlx5 firmware commands time out: kmsg `QUERY_VPORT_COUNTER(0x770) timeout. Will cause a "
     "leak of a command resource`, `rate` lines a minute from the start",
     false, 600, "rate=2 (per minute)"},
    {"access_reg_flood",
     "a flood of failed register reads (gpud #1164): kmsg `ACCESS_REG(0x805) op_mod(0x1) failed, "
     "status bad operation(0x2), syndrome (0x9a6171), err(-22)`, `rate` lines a second, each at "
     "its own microsecond",
     false, 300, "rate=20 (lines per second, at most 100000)"},
}};

bool IsPowerOfTwoSize(int64_t v) {
  for (int64_t s = 128; s <= 4096; s *= 2) {
    if (v == s) return true;
  }
  return false;
}

constexpr double kAnyNumber = std::numeric_limits<double>::max();

// Numeric parameters (unquoted numbers), integer ones with their range, durations (a Prometheus
// duration or seconds) and text.
constexpr std::array<std::string_view, 9> kNumericParams = {
    "rate",      "count",      "ber",      "target_celsius", "target_dbm",
    "target_ma", "speed_gbps", "nonfatal", "link_gts"};
struct IntegerParam {
  std::string_view name;
  int min, max;
};
constexpr std::array<IntegerParam, 3> kIntegerParams = {
    {{"width", 1, 2}, {"phys_state", 0, 7}, {"link_width", 1, 32}}};
constexpr std::array<std::string_view, 5> kSecondsParams = {"period", "down", "degraded", "ramp",
                                                            "interval"};
constexpr std::array<std::string_view, 3> kTextParams = {"speed", "fw_ver", "error"};

template <size_t N>
bool OneOf(const std::array<std::string_view, N>& names, std::string_view key) {
  return std::find(names.begin(), names.end(), key) != names.end();
}

// Every key an event accepts (ParseEvent's CheckKeys).
std::vector<std::string_view> EventKeys() {
  std::vector<std::string_view> keys = {"at",  "fault", "duration", "device",   "netdev", "port",
                                        "gpu", "mps",   "mrrs",     "priority", "lane"};
  keys.insert(keys.end(), kNumericParams.begin(), kNumericParams.end());
  for (const IntegerParam& p : kIntegerParams) keys.push_back(p.name);
  keys.insert(keys.end(), kSecondsParams.begin(), kSecondsParams.end());
  keys.insert(keys.end(), kTextParams.begin(), kTextParams.end());
  return keys;
}

// `speed:` (an IBTA lane speed), `error:` (module_error's kind) and `fw_ver:`
// (major.minor.subminor, as fw_ver prints it).
Status CheckText(const YamlValue& value, std::string_view key, const std::string& text) {
  if (key == "speed" && FindLaneSpeed(text) < 0) {
    std::string known;
    for (const LaneSpeed& s : LaneSpeeds())
      known += (known.empty() ? "" : ", ") + std::string(s.name);
    return value.Fail("unknown lane speed \"" + text + "\" (known: " + known + ")");
  }
  if (key == "error" && FindModuleError(text) == nullptr) {
    std::string known;
    for (const ModuleErrorKind& k : ModuleErrorKinds())
      known += (known.empty() ? "" : ", ") + std::string(k.name);
    return value.Fail("unknown module error \"" + text + "\" (known: " + known + ")");
  }
  if (key == "fw_ver" && !std::regex_match(text, std::regex("[0-9]+\\.[0-9]+\\.[0-9]+"))) {
    return value.Fail("expected major.minor.subminor, got \"" + text + "\"");
  }
  return Status::Ok();
}

// A numeric parameter (kNumericParams) with its own bounds.
Result<double> NumericParam(const YamlValue& value, std::string_view key) {
  auto v = value.Number(-kAnyNumber, kAnyNumber);
  if (!v) return Error(v.error());
  if ((key == "rate" || key == "count" || key == "ber" || key == "speed_gbps") && *v <= 0) {
    return Error(value.Fail("must be positive"));
  }
  if (key == "nonfatal" && *v < 0) return Error(value.Fail("is negative"));
  if (key == "link_gts" && *v != 2.5 && *v != 5 && *v != 8 && *v != 16 && *v != 32 && *v != 64) {
    return Error(value.Fail("expected a PCIe speed (2.5, 5, 8, 16, 32 or 64 GT/s), got \"" +
                            *value.Scalar() + "\""));
  }
  return *v;
}

// A parameter of the fault (a key past at:, duration:, the target and port:) into `ev`.
Status ReadParam(const YamlValue& value, const std::string& key, ScenarioEvent& ev) {
  if (key == "mps" || key == "mrrs") {
    auto v = value.Integer(0, 1 << 20);
    if (!v || !IsPowerOfTwoSize(*v)) {
      auto text = value.Scalar();
      return value.Fail("expected 128, 256, 512, 1024, 2048 or 4096 bytes, got " +
                        (text ? "\"" + *text + "\"" : std::string("no value")));
    }
    ev.params[key] = static_cast<double>(*v);
  } else if (key == "priority" || key == "lane") {
    auto v = key == "priority" ? value.Integer(0, 7) : value.Integer(1, 8);
    if (!v) return v.error();
    (key == "priority" ? ev.priority : ev.lane) = static_cast<int>(*v);
  } else if (OneOf(kSecondsParams, key)) {
    auto s = Seconds(value);
    if (!s) return s.error();
    if ((key == "period" || key == "interval") && *s <= 0) return value.Fail("must be positive");
    ev.params[key] = *s;
  } else if (OneOf(kNumericParams, key)) {
    auto v = NumericParam(value, key);
    if (!v) return v.error();
    ev.params[key] = *v;
  } else if (OneOf(kTextParams, key)) {
    auto text = value.Scalar();
    if (!text) return text.error();
    if (Status s = CheckText(value, key, *text); !s.ok()) return s;
    ev.text[key] = *text;
  } else {
    for (const IntegerParam& p : kIntegerParams) {
      if (p.name != key) continue;
      auto v = value.Integer(p.min, p.max);
      if (!v) return v.error();
      ev.params[key] = static_cast<double>(*v);
    }
  }
  return Status::Ok();
}

// One key of an event (checked against EventKeys) into `ev`.
Status ReadEventKey(const YamlEntry& entry, ScenarioEvent& ev, bool& has_duration) {
  const std::string& key = entry.key;
  const YamlValue& value = entry.value;
  if (key == "fault") return Status::Ok();  // read first (ParseEvent)
  if (key == "at" || key == "duration") {
    auto s = Seconds(value);
    if (!s) return s.error();
    (key == "at" ? ev.at_s : ev.duration_s) = *s;
    has_duration |= key == "duration";
  } else if (key == "device" || key == "netdev") {
    auto name = value.Scalar();
    if (!name) return name.error();
    (key == "device" ? ev.device : ev.netdev) = *name;
  } else if (key == "gpu") {
    auto gpu = value.Scalar();
    if (!gpu || gpu->empty()) return value.Fail("expected a PCI address or an index");
    ev.gpu = *gpu;
  } else if (key == "port") {
    auto port = value.Integer(1, 2);
    if (!port) return port.error();
    ev.port = static_cast<int>(*port);
  } else {
    return ReadParam(value, key, ev);
  }
  return Status::Ok();
}

// What the event names must fit its fault (TargetOf).
Status CheckTarget(const YamlValue& node, const ScenarioEvent& ev) {
  const bool port = !ev.device.empty() || !ev.netdev.empty();
  const bool gpu = !ev.gpu.empty();
  switch (TargetOf(ev.fault)) {
    case FaultTarget::kPort:
      if (gpu) return node.Get("gpu").Fail(ev.fault + " names a port, not a gpu:");
      if (!port) return node.Fail("event " + ev.fault + " names no device: or netdev:");
      break;
    case FaultTarget::kNode:
      if (port || gpu) return node.Fail(ev.fault + " is node-wide: no device:, netdev: or gpu:");
      break;
    case FaultTarget::kGpu:
      if (port) return node.Fail(ev.fault + " names a gpu:, not a device: or netdev:");
      if (!gpu) return node.Fail("event " + ev.fault + " names no gpu:");
      break;
    case FaultTarget::kGpuOrPort:
      if (port && gpu) return node.Fail(ev.fault + " names a gpu: or a port, not both");
      if (!port && !gpu)
        return node.Fail("event " + ev.fault + " names no gpu:, device: or netdev:");
      break;
  }
  return Status::Ok();
}

// The fault's duration when the event gives none: link_flap and ib_micro_flap last their
// count*period, link_retrain its down+degraded.
double DerivedDuration(const ScenarioEvent& ev, double default_s) {
  auto param = [&](const char* name, double fallback) {
    auto it = ev.params.find(name);
    return it == ev.params.end() ? fallback : it->second;
  };
  if (ev.fault == "link_flap" || ev.fault == "ib_micro_flap") {
    return param("count", 3) * param("period", ev.fault == "link_flap" ? 10 : 60);
  }
  if (ev.fault == "link_retrain") return param("down", 1) + param("degraded", 3);
  return default_s;
}

Result<ScenarioEvent> ParseEvent(const YamlValue& node) {
  if (!node.IsMap()) return Error(node.Fail("an event must be a mapping (at:, fault:)"));
  if (Status s = node.CheckKeys(EventKeys()); !s.ok()) return Error(s);
  ScenarioEvent ev;
  ev.line = node.line();
  const YamlValue fault = node.Get("fault");
  if (!fault.present()) return Error(node.Fail("event without fault:"));
  if (!node.Get("at").present()) return Error(node.Fail("event without at:"));
  auto name = fault.Scalar();
  if (!name) return Error(name.error());
  ev.fault = *name;
  const FaultInfo* info = FindFault(ev.fault);
  if (info == nullptr) {
    std::string known;
    for (const FaultInfo& f : Faults()) known += (known.empty() ? "" : ", ") + std::string(f.name);
    return Error(fault.Fail("unknown fault \"" + ev.fault + "\" (known: " + known + ")"));
  }
  bool has_duration = false;
  auto entries = node.Entries();
  if (!entries) return Error(entries.error());
  for (const YamlEntry& entry : *entries) {
    if (Status s = ReadEventKey(entry, ev, has_duration); !s.ok()) return Error(s);
  }
  if (Status s = CheckTarget(node, ev); !s.ok()) return Error(s);
  if (info->instant && has_duration && ev.duration_s > 0) {
    return Error(node.Get("duration").Fail(ev.fault + " is instantaneous: no duration"));
  }
  if (!has_duration) ev.duration_s = DerivedDuration(ev, info->default_duration_s);
  if (!info->instant && ev.duration_s <= 0) {
    return Error(node.Fail(ev.fault + " needs a positive duration"));
  }
  return ev;
}

}  // namespace

FaultTarget TargetOf(std::string_view fault) {
  if (fault == "peermem_unloaded") return FaultTarget::kNode;
  if (fault == "acs_redirect") return FaultTarget::kGpu;
  if (fault == "mps_mismatch" || fault == "pcie_downtrain" || fault == "aer_burst") {
    return FaultTarget::kGpuOrPort;
  }
  return FaultTarget::kPort;
}

std::span<const FaultInfo> Faults() { return kFaults; }

const FaultInfo* FindFault(std::string_view name) {
  for (const FaultInfo& f : kFaults) {
    if (f.name == name) return &f;
  }
  return nullptr;
}

Result<Scenario> ParseScenario(std::string_view text, std::string_view source_name) {
  Scenario sc;
  sc.source = std::string(source_name);
  auto document = YamlDocument::Parse(text, sc.source);
  if (!document) return Error(document.error());
  const YamlValue& root = document->root();
  if (!root.IsMap()) return Error(root.Fail("a scenario is a mapping with duration: and events:"));
  static constexpr std::string_view kKeys[] = {"preset", "duration", "events", "expect",
                                               "description"};
  if (Status s = root.CheckKeys(kKeys); !s.ok()) return Error(s);
  auto entries = root.Entries();
  if (!entries) return Error(entries.error());
  std::optional<YamlValue> expect_node;
  for (const YamlEntry& entry : *entries) {
    if (entry.key == "preset") {
      auto preset = entry.value.String();
      if (!preset) return Error(preset.error());
      sc.preset = *preset;
    } else if (entry.key == "duration") {
      auto s = Seconds(entry.value);
      if (!s) return Error(s.error());
      sc.duration_s = *s;
    } else if (entry.key == "events") {
      if (!entry.value.IsSequence()) return Error(entry.value.Fail("expected a list"));
      auto items = entry.value.Items();
      if (!items) return Error(items.error());
      for (const YamlValue& item : *items) {
        auto ev = ParseEvent(item);
        if (!ev) return Error(ev.error());
        sc.events.push_back(std::move(*ev));
      }
    } else if (entry.key == "expect") {
      expect_node = entry.value;  // read once the events are known (its fault is one of them)
    }
    // description: free text for people.
  }
  if (sc.duration_s <= 0) {
    double end = 0;
    for (const ScenarioEvent& ev : sc.events) end = std::max(end, ev.at_s + ev.duration_s);
    if (end <= 0) return Error(document->Fail("no duration: and no events"));
    sc.duration_s = end + 30;  // a quiet tail so the end of the last fault is seen
  }
  for (const ScenarioEvent& ev : sc.events) {
    if (ev.at_s >= sc.duration_s) {
      return Error(StatusCode::kInvalidArgument, sc.source + ":" + std::to_string(ev.line) +
                                                     ": event " + ev.fault + " starts at " +
                                                     std::to_string(static_cast<long>(ev.at_s)) +
                                                     "s, after the scenario's duration");
    }
  }
  std::stable_sort(sc.events.begin(), sc.events.end(),
                   [](const ScenarioEvent& a, const ScenarioEvent& b) { return a.at_s < b.at_s; });
  if (expect_node) {
    auto expect = scenario_yaml::ParseExpectation(*expect_node, sc.events);
    if (!expect) return Error(expect.error());
    sc.expect = std::move(*expect);
  }
  return sc;
}

Result<Scenario> LoadScenario(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Error(FromErrno(errno, "open scenario " + path));
  std::stringstream buf;
  buf << in.rdbuf();
  return ParseScenario(buf.str(), path);
}

}  // namespace fabricwatch::sim
