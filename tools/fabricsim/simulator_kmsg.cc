// Simulator, the kernel log (simulator_port.h; issue 23): the lines the drivers print for the
// faults only the log shows, appended to <root>/kmsg as /dev/kmsg records (kmsg_log.h). The
// texts are the format strings of docs/reference.md §9 filled in for this node (its BDFs,
// netdevs and module numbers); func:line tags and pids are those of §9's examples.
//
//   fw_fatal          §9.3 health.c: `Fatal error 1 detected`, the health buffer's first line
//                     and syndrome (err, function tag); the link is down until the end, then
//                     `health recovery succeeded` (mlx5_core_info: info, no tag)
//   module_unplug     §9.5 events.c: `Port module event: module <n>, Cable unplugged` and
//                     `Cable plugged` (mlx5_core_info); the cage is empty meanwhile
//   module_error      §9.5: `Port module event[error]: module <n>, Cable error, <text>` (err,
//                     tag port_module), at the start and every `interval`
//   cmd_timeout       §9.4 cmd.c: `QUERY_VPORT_COUNTER(0x770) timeout. Will cause a leak of a
//                     command resource` (err), `rate` a minute
//   access_reg_flood  §9.4: the mlx5_cmd_out_err ACCESS_REG failure of gpud #1164 (err), `rate`
//                     a second
//   aer_burst         §9.6 aer.c, current wording: the root port's `… Error message received
//                     from <bdf>` (info), then the function's `PCIe Bus Error`, `device [..]
//                     error status/mask` and per-bit lines (warning; err for nonfatal)
//   carrier changes   §9.7 en_main.c mlx5e_update_carrier: `Link down` / `Link up` (netdev_info)
//                     on Ethernet ports, whatever changed the carrier; IPoIB prints none
//
// A repeated line's k-th copy is at start + k * period, each at its own µs, so a flood of
// 10,000 lines a second is written at each step with its lines spread over the second.

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>

#include "tools/fabricsim/simulator.h"
#include "tools/fabricsim/simulator_port.h"

namespace fabricwatch::sim {
namespace {

// A flood faster than this is a mistake in the scenario, not a kernel (the worst case
// is 10,000 lines a second).
constexpr double kMaxLinesPerSecond = 100000;
// aer.c rate-limits per device: a burst prints a group when errors arrive, at most one per
// this many seconds here, so a burst of 50 errors is a few groups, not 50.
constexpr int64_t kAerLogEvery = 10;

uint64_t Us(int64_t sim_seconds) { return static_cast<uint64_t>(sim_seconds) * 1000000; }

bool IsLogFault(std::string_view fault) {
  return fault == "fw_fatal" || fault == "module_unplug" || fault == "module_error" ||
         fault == "cmd_timeout" || fault == "access_reg_flood";
}

// The period of a fault's repeated line in seconds, or 0 when it has none.
double RepeatPeriod(const ScenarioEvent& ev) {
  if (ev.fault == "module_error") return EventParam(ev, "interval", 60);
  if (ev.fault == "cmd_timeout") return 60.0 / EventParam(ev, "rate", 2);
  if (ev.fault == "access_reg_flood") return 1.0 / EventParam(ev, "rate", 20);
  return 0;
}

std::string ModuleEvent(const Port& p, std::string_view status) {
  return "Port module event: module " + std::to_string(p.module_number) + ", " +
         std::string(status);
}

// The Root Port above `f` (the first bridge of its devices/ path), which prints the "received
// from" line; a function straight on the root complex gets the usual first root port.
std::string RootPortOf(const PciFunction& f) {
  const size_t first = f.path.find('/');
  const size_t second = first == std::string::npos ? first : f.path.find('/', first + 1);
  if (second == std::string::npos) return "0000:00:01.0";
  return f.path.substr(first + 1, second - first - 1);
}

// aer.c's per-bit line: "  [%2d] %-17s | %-11s | %-17s%s" (name, agent, layer, " (First)").
std::string AerBitLine(int bit, const char* name, const char* agent, const char* layer,
                       bool first) {
  char buf[128];
  std::snprintf(buf, sizeof(buf), "  [%2d] %-17s | %-11s | %-17s%s", bit, name, agent, layer,
                first ? " (First)" : "");
  return buf;
}

}  // namespace

Status Simulator::CheckLogFault(const ScenarioEvent& ev, const Port& p) {
  if (ev.fault != "cmd_timeout" && ev.fault != "access_reg_flood") return Status::Ok();
  const double per_second = 1.0 / RepeatPeriod(ev);
  if (per_second > kMaxLinesPerSecond) {
    return Status(StatusCode::kInvalidArgument,
                  ev.fault + " on " + p.rdma_device + ": rate " +
                      std::to_string(static_cast<long>(EventParam(ev, "rate", 0))) +
                      " is over 100000 lines a second");
  }
  return Status::Ok();
}

bool Simulator::StartLogFault(const ScenarioEvent& ev, PortState& ps) {
  if (!IsLogFault(ev.fault)) return false;
  const std::string& bdf = ps.pci->bdf;
  const uint64_t t = Us(now_);
  if (ev.fault == "fw_fatal") {
    // poll_health found fatal sensor 1 (PCI reads all-ones), then print_health_info dumps the
    // health buffer: its first line and the syndrome (§9.3's example).
    kmsg_.Add(t, kKmsgErr, Mlx5TaggedPrefix(bdf, "poll_health", 836, 0) + "Fatal error 1 detected",
              bdf);
    kmsg_.Add(t, kKmsgErr,
              Mlx5TaggedPrefix(bdf, "print_health_info", 431, 0) +
                  "Health issue observed, firmware internal error, severity(3) ERROR:",
              bdf);
    kmsg_.Add(
        t, kKmsgErr,
        Mlx5TaggedPrefix(bdf, "print_health_info", 450, 0) + "synd 0x1: firmware internal error",
        bdf);
  } else if (ev.fault == "module_unplug") {
    // The cage is empty: the link drops (ApplyFaults) and mlx5e prints `Link down` after it.
    kmsg_.Add(t, kKmsgInfo, DevPrefix("mlx5_core", bdf) + ModuleEvent(*ps.port, "Cable unplugged"),
              bdf);
    ps.module_present = false;
    ps.Add("module_unplug", 1);
  }
  kmsg_lines_[&ev] = 0;  // repeated lines (StepKmsg) start with one at the start
  return true;
}

bool Simulator::EndLogFault(const ActiveFault& af, PortState& ps) {
  const ScenarioEvent& ev = *af.event;
  if (!IsLogFault(ev.fault)) return false;
  LogRepeated(af);  // the copies due before the end
  kmsg_lines_.erase(&ev);
  const std::string& bdf = ps.pci->bdf;
  const uint64_t t = Us(now_);
  if (ev.fault == "fw_fatal") {
    kmsg_.Add(t, kKmsgInfo, DevPrefix("mlx5_core", bdf) + "health recovery succeeded", bdf);
  } else if (ev.fault == "module_unplug") {
    // The same cable back: the link returns this second (ApplyFaults), `Link up` after it.
    kmsg_.Add(t, kKmsgInfo, DevPrefix("mlx5_core", bdf) + ModuleEvent(*ps.port, "Cable plugged"),
              bdf);
    ps.module_present = true;
  }
  return true;
}

void Simulator::StepKmsg() {
  for (const ActiveFault& af : active_) {
    if (af.port >= 0) LogRepeated(af);
  }
}

void Simulator::LogRepeated(const ActiveFault& af) {
  const ScenarioEvent& ev = *af.event;
  const double period = RepeatPeriod(ev);
  if (period <= 0 || af.port < 0) return;
  PortState& ps = *ports_[af.port];
  const std::string& bdf = ps.pci->bdf;
  std::string text;
  const ModuleErrorKind* error = nullptr;
  if (ev.fault == "module_error") {
    auto it = ev.text.find("error");
    error = FindModuleError(it == ev.text.end() ? "high_temperature" : it->second);
    if (error == nullptr) return;  // checked by the scenario parser
    text = Mlx5TaggedPrefix(bdf, "port_module", 1182, 0) + "Port module event[error]: module " +
           std::to_string(ps.port->module_number) + ", Cable error, " + std::string(error->text);
  } else if (ev.fault == "cmd_timeout") {
    text = Mlx5TaggedPrefix(bdf, "cmd_exec", 1088, 1234) +
           "QUERY_VPORT_COUNTER(0x770) timeout. Will cause a leak of a command resource";
  } else {
    text = Mlx5TaggedPrefix(bdf, "mlx5_cmd_out_err", 838, 1441871) +
           "ACCESS_REG(0x805) op_mod(0x1) failed, status bad operation(0x2), syndrome "
           "(0x9a6171), err(-22)";
  }
  uint64_t& k = kmsg_lines_[&ev];
  const uint64_t start = Us(af.start), end = Us(af.end), now = Us(now_);
  while (true) {
    const uint64_t at =
        start + static_cast<uint64_t>(std::llround(static_cast<double>(k) * period * 1e6));
    if (at > now || at >= end) break;
    kmsg_.Add(at, kKmsgErr, text, bdf);
    if (error != nullptr && error->stat != nullptr) ps.Add(error->stat, 1);
    ++k;
  }
}

void Simulator::LogCarrier(const PortState& ps) {
  // A function that is going away (hot_unplug, hca_missing) prints its removal, not a link line.
  if (!ps.present || ps.port->link_layer != LinkLayer::kEthernet) return;
  const std::string& bdf = ps.pci->bdf;
  kmsg_.Add(
      Us(now_), kKmsgInfo,
      NetdevPrefix("mlx5_core", bdf, ps.port->netdev) + (ps.Carrier() ? "Link up" : "Link down"),
      bdf);
}

void Simulator::LogAer(const ActiveFault& af, bool correctable, bool nonfatal) {
  if (!correctable && !nonfatal) return;
  auto [it, fresh] = aer_logged_.try_emplace(af.event, INT64_MIN / 2, INT64_MIN / 2);
  auto& [last_cor, last_nonfatal] = it->second;
  const PciFunction& f = node_.functions[static_cast<size_t>(af.function)];
  const std::string root = RootPortOf(f);
  const std::string dev = DevPrefix(f.driver.empty() ? "pci" : f.driver, f.bdf) + "AER: ";
  char id[24];
  std::snprintf(id, sizeof(id), "[%04x:%04x]", f.vendor, f.device);
  const uint64_t t = Us(now_);
  if (correctable && now_ - last_cor >= kAerLogEvery) {
    last_cor = now_;
    // RxErr (bit 0), what aer_dev_correctable counts; the mask (Advisory Non-Fatal, Corrected
    // Internal, Header Log Overflow) as in §9.6's example.
    kmsg_.Add(t, kKmsgInfo,
              DevPrefix("pcieport", root) + "AER: Correctable Error message received from " + f.bdf,
              root);
    kmsg_.Add(t, kKmsgWarning, dev + "PCIe Bus Error: severity=Correctable", f.bdf);
    kmsg_.Add(t, kKmsgWarning, dev + "  device " + id + " error status/mask=00000001/0000e000",
              f.bdf);
    kmsg_.Add(t, kKmsgWarning, dev + AerBitLine(0, "RxErr", "Receiver", "Physical Layer", false),
              f.bdf);
  }
  if (nonfatal && now_ - last_nonfatal >= kAerLogEvery) {
    last_nonfatal = now_;
    // CmpltTO (bit 14), the error aer_dev_nonfatal counts; a completion timeout's agent is the
    // requester (aer.c's requester mask), and it is the first error logged.
    kmsg_.Add(t, kKmsgInfo,
              DevPrefix("pcieport", root) +
                  "AER: Uncorrectable (Non-Fatal) Error message received from " + f.bdf,
              root);
    kmsg_.Add(t, kKmsgErr, dev + "PCIe Bus Error: severity=Uncorrectable (Non-Fatal)", f.bdf);
    kmsg_.Add(t, kKmsgErr, dev + "  device " + id + " error status/mask=00004000/00000000", f.bdf);
    kmsg_.Add(t, kKmsgErr, dev + AerBitLine(14, "CmpltTO", "Requester", "Transaction Layer", true),
              f.bdf);
  }
}

Status Simulator::CreateKmsg() {
  if (kmsg_created_) return Status::Ok();
  // A new run is a new boot: an old file is emptied in place (a reader sees it shrink and reads
  // it again from the start), never replaced.
  FW_TRY(writer_.MakeDirs("."));
  FW_TRY(writer_.Write("kmsg", ""));
  kmsg_created_ = true;
  return Status::Ok();
}

Status Simulator::FlushKmsg() {
  FW_TRY(CreateKmsg());
  if (kmsg_.pending() == 0) return Status::Ok();
  return writer_.Append("kmsg", kmsg_.TakeBatch());
}

}  // namespace fabricwatch::sim
