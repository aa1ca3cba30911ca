#pragma once
// Simulator: animates a simulated node (node.h) from a scenario (scenario.h), writing a replay
// root (docs/design.md §5) the way the kernel updates sysfs.
//
//   <root>/sys      sysfs replay root: --path.sysfs=<root>/sys
//   <root>/ethtool  ethtool replay dir: <netdev>/statistics (`ethtool -S` text),
//                   <netdev>/module-eeprom (flat module image) and <netdev>/link (`ethtool
//                   <netdev>` text): --path.ethtool=<root>/ethtool
//   <root>/kmsg     kernel-log replay file: /dev/kmsg records (docs/reference.md §9.1) of the
//                   lines the drivers print, appended as simulated time passes (kmsg_log.h):
//                   --path.kmsg=<root>/kmsg
//   <root>/smp      peer replay of every InfiniBand port: <dev>/<port>/{nodeinfo,nodedesc}, the
//                   `smpquery -D nodeinfo|nodedesc 0,<port>` text of its leaf switch
//                   (leaf_switch.h): --path.smp=<root>/smp
//   <root>/lldp     peer replay of every Ethernet port: <netdev>, the `lldpctl -f keyvalue`
//                   text of its leaf switch: --path.lldp=<root>/lldp
//
// Time is simulated: one tick per simulated second. Nothing here sleeps or reads a clock, so
// tests drive it deterministically:
//
//   auto node = sim::BuildPreset("hgx-roce");
//   auto scenario = sim::ParseScenario(yaml, "test.yaml");
//   auto sim = sim::Simulator::Create(*node, *scenario, dir, {.seed = 1});
//   (*sim)->WriteInitial();                 // the tree at t=0
//   auto injections = (*sim)->AdvanceTo(90); // ticks 1..90; files now show t=90
//   // ... run the collectors / detectors on dir, compare with (*sim)->EthtoolStat(...) ...
//
// The `fabricsim run` CLI calls AdvanceTo(t) once per wall period (1 s / speed) and prints each
// Injection as a JSON line. Healthy traffic with noise is the background; faults change it while
// they are active. Counter semantics follow the kernel: IB PMA error counters saturate at their
// IBA width (symbol_error 16 bit, link_downed 8 bit, ...), port_xmit/rcv_data count 4-octet
// words, mlx5 *_pause_duration counts microseconds, counters restart from 0 after a driver
// reload or a hot re-plug.
//
// Thread-safety: none; one owner.

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "base/status.h"
#include "collectors/core/roots.h"
#include "tools/fabricsim/kmsg_log.h"
#include "tools/fabricsim/leaf_switch.h"
#include "tools/fabricsim/module.h"
#include "tools/fabricsim/node.h"
#include "tools/fabricsim/pci_config_image.h"
#include "tools/fabricsim/scenario.h"
#include "tools/fabricsim/tree_writer.h"

namespace fabricwatch::sim {

struct Injection {
  double sim_time = 0;
  std::string event;  // "start" or "end"
  std::string fault;
  std::string device;  // RDMA device of the port, or the PCI address a PCIe fault changed
  int port = 1;        // 0: not a port's fault (node-wide or PCIe)
  std::string netdev;
  std::optional<int> priority;
  std::optional<int> lane;
  int line = 0;  // the scenario line of the event
};

// One JSON line: {"sim_time":..,"time":..,"event":..,"fault":..,"entity":{..},"line":..}.
std::string InjectionJson(const Injection& injection, double unix_time);

struct SimOptions {
  uint64_t seed = 1;
  bool loop = false;  // repeat the scenario timeline forever
  LeafOptions leaf = {};  // the switches the ports face (leaf_switch.h)
};

// The IBA PortCounters files (counters/), in the kernel's order (core/sysfs.c pma_table).
enum PmaCounter {
  kSymbolError, kLinkErrorRecovery, kLinkDowned, kPortRcvErrors, kPortRcvRemotePhysicalErrors,
  kPortRcvSwitchRelayErrors, kPortXmitDiscards, kPortXmitConstraintErrors,
  kPortRcvConstraintErrors, kLocalLinkIntegrityErrors, kExcessiveBufferOverrunErrors,
  kVl15Dropped, kPortXmitData, kPortRcvData, kPortXmitPackets, kPortRcvPackets, kPortXmitWait,
  kUnicastXmitPackets, kUnicastRcvPackets, kMulticastXmitPackets, kMulticastRcvPackets,
  kPmaCount
};
const char* PmaName(int counter);
// The value sysfs prints for a true count: the narrow IBA counters stop at all-ones.
uint64_t PmaPrinted(int counter, uint64_t value);

// The netdev's statistics/ files (net-sysfs.c NETSTAT_ENTRY), sorted as ls lists them.
enum NetStat {
  kCollisions, kMulticast, kRxBytes, kRxCompressed, kRxCrcErrors, kRxDropped, kRxErrors,
  kRxFifoErrors, kRxFrameErrors, kRxLengthErrors, kRxMissedErrors, kRxNohandler, kRxOverErrors,
  kRxPackets, kTxAbortedErrors, kTxBytes, kTxCarrierErrors, kTxCompressed, kTxDropped, kTxErrors,
  kTxFifoErrors, kTxHeartbeatErrors, kTxPackets, kTxWindowErrors, kNetStatCount
};
const char* NetStatName(int stat);

class Simulator {
 public:
  static Result<std::unique_ptr<Simulator>> Create(Node node, Scenario scenario,
                                                   std::string root, SimOptions options = {});
  ~Simulator();

  // Writes the whole tree for t = now() (0 after Create). Idempotent.
  Status WriteInitial();
  // Runs the ticks up to `sim_seconds` (whole seconds), then writes the files for that instant.
  // Returns the injections that happened, in order. Going back in time is an error. Past the
  // scenario's duration (without loop) the node carries healthy traffic only.
  Result<std::vector<Injection>> AdvanceTo(double sim_seconds);

  double now() const { return static_cast<double>(now_); }
  // True once the scenario's duration has passed (never with loop).
  bool finished() const;
  const Node& node() const { return node_; }
  const Scenario& scenario() const { return scenario_; }
  const std::string& sysfs_root() const { return sysfs_root_; }
  const std::string& ethtool_root() const { return ethtool_root_; }
  // The kernel-log replay file (created by WriteInitial, appended to by AdvanceTo).
  const std::string& kmsg_path() const { return kmsg_path_; }
  // A /proc replay (--path.procfs, docs/design.md §5.10): empty, no process holds a device yet.
  const std::string& procfs_root() const { return procfs_root_; }
  // Peer replays (--path.smp, --path.lldp): both exist, empty where no port has that link layer.
  const std::string& smp_root() const { return smp_root_; }
  const std::string& lldp_root() const { return lldp_root_; }
  // All of the above as the agent's roots: what --path.sysfs, --path.ethtool and each
  // collector's --path.<source> are given to read this node (Roots::Flags() spells them).
  Roots roots() const;
  // The switch at the far end of a port.
  LeafPort Leaf(const Port& port) const { return LeafOf(node_, port, options_.leaf); }

  // What the files say now (for tests): the printed values.
  std::optional<uint64_t> EthtoolStat(const std::string& netdev, const std::string& name) const;
  std::vector<std::string> EthtoolStatNames(const std::string& netdev) const;
  std::optional<uint64_t> NetdevStat(const std::string& netdev, NetStat stat) const;
  std::optional<uint64_t> PmaValue(const std::string& device, PmaCounter counter) const;
  const ModuleState* Module(const std::string& netdev) const;
  bool LinkUp(const std::string& netdev) const;
  bool Present(const std::string& netdev) const;
  uint64_t files_written() const { return writer_.writes(); }

 private:
  struct StatRule {
    int source = -1;  // traffic source index, -1: driven directly or constant
    double fraction = 0;
    double carry = 0;
  };
  struct ActiveFault {
    const ScenarioEvent* event;
    int port;       // -1: not a port's fault
    int function;   // the PCI function a PCIe fault changes, or -1
    int64_t start;  // sim second
    int64_t end;
  };
  struct PortState;

  Simulator(Node node, Scenario scenario, std::string root, SimOptions options);
  Status Init();
  Result<int> Resolve(const ScenarioEvent& ev) const;
  void Tick(std::vector<Injection>& out);
  void StartFault(const ScenarioEvent& ev, int port, int function, std::vector<Injection>& out);
  void EndFault(size_t active_index, std::vector<Injection>& out);
  Injection MakeInjection(const ScenarioEvent& ev, int port, int function, const char* what) const;
  // How each ethtool statistic of `ps` follows the traffic (its StatRule); a per-channel
  // statistic gets its channel's share of `channel_weight`.
  static void SetStatRules(PortState& ps, const std::vector<double>& channel_weight);
  // One simulated second of a port: ApplyFaults(), then (while present) the traffic, PFC, PHY
  // and temperatures, drawing their noise from one distribution in that order.
  void StepPort(PortState& ps);
  // The faults active on `ps` this second: its per-tick inputs, link state and module readings.
  void ApplyFaults(PortState& ps);
  // This second's traffic and the counters it moves; returns the utilisation drawn.
  double StepTraffic(PortState& ps, std::normal_distribution<double>& noise);
  void StepPfc(PortState& ps, std::normal_distribution<double>& noise);
  void StepPhy(PortState& ps, std::normal_distribution<double>& noise);
  void StepTemperatures(PortState& ps, double util, std::normal_distribution<double>& noise);
  // The physical link and, on IB, the logical state; counts the link-down and carrier events.
  void SetLink(PortState& ps, bool up, bool logical_active = true);
  void ResetCounters(PortState& ps);
  Status WriteStatic(const PortState& ps);
  Status WriteGlobal();
  // The peer replays of every port (written once: the cabling does not change).
  Status WritePeers();
  // vendor, device, class, NUMA node, local CPUs and PCIe link speed/width of one function.
  Status WritePciAttributes(const PciFunction& f);
  Status WritePort(PortState& ps);
  int UverbsIndex(const std::string& rdma_device) const;
  Status Unplug(PortState& ps);
  // The fabric's shape (simulator_link.cc): faults that train a link short of its port, hold an
  // IB port in INIT, take a card away or change its firmware, and the files that show them.
  static Status CheckShapeFault(const ScenarioEvent& ev, const Port& port);
  void StartShapeFault(const ScenarioEvent& ev, PortState& ps);
  void EndShapeFault(const ScenarioEvent& ev, PortState& ps);
  // This second of a shape fault on `ps`: its training, `down` while a retrain has the link
  // down, `logical_active` false while the port is held in INIT.
  void ApplyShapeFault(PortState& ps, const ActiveFault& af, bool& down,
                       bool& logical_active) const;
  // Every port of the card `ps` is on (a card's functions share its presence and firmware).
  std::vector<PortState*> CardPorts(const PortState& ps);
  // Back after a hot-unplug or a missing card: a new device instance with fresh counters.
  void Replug(PortState& ps);
  // Configuration (simulator_config.cc): the lossless-RoCE settings of each Ethernet port, the
  // GPUDirect module and the PCI config space of every function, and the faults that drift
  // them. CheckConfigFault validates a port's fault; ResolveFunction finds the function a
  // PCIe fault changes (-1 for the others).
  void InitConfig();
  static Status CheckConfigFault(const ScenarioEvent& ev, const Port& port);
  Result<int> ResolveFunction(const ScenarioEvent& ev, const Port* port) const;
  // pcie_downtrain's link_width/link_gts fit `function` (at most its maximum, not both equal).
  Result<int> CheckDowntrain(const ScenarioEvent& ev, int function) const;
  // True when `ev` is a configuration fault (it was applied or reverted).
  bool StartConfigFault(const ScenarioEvent& ev, PortState* ps, int function);
  bool EndConfigFault(const ScenarioEvent& ev, PortState* ps, int function);
  Status WritePortConfig(const PortState& ps);
  Status WritePciConfig(const PciFunction& f);
  // current_link_speed/width (pcie_downtrain) and aer_dev_* (aer_burst) of one function.
  Status WritePciLink(const PciFunction& f);
  Status WritePciAer(const PciFunction& f);
  // PCIe faults (simulator_config.cc): this second of an aer_burst (its errors so far).
  void StepPcie();
  Status WriteNodeConfig();
  // Kernel-log records (simulator_kmsg.cc, docs/reference.md §9): the faults only the driver's
  // log shows (fw_fatal, module_unplug, module_error, cmd_timeout, access_reg_flood), the mlx5e
  // link lines of every carrier change and aer_burst's AER lines. Start/EndLogFault are true
  // when `ev` is such a fault (its lines written, its state changed).
  static Status CheckLogFault(const ScenarioEvent& ev, const Port& port);
  bool StartLogFault(const ScenarioEvent& ev, PortState& ps);
  bool EndLogFault(const ActiveFault& af, PortState& ps);
  // The repeated lines of the active faults (a flood, a command timeout every so often, a
  // module error every `interval`) whose time has come by now_, each at its own µs.
  void StepKmsg();
  void LogRepeated(const ActiveFault& af);
  // `Link down` / `Link up` (mlx5e_update_carrier's netdev_info) when `ps`'s carrier changed.
  void LogCarrier(const PortState& ps);
  // aer_burst: the root port's and the function's AER lines, a few groups per burst.
  void LogAer(const ActiveFault& af, bool correctable, bool nonfatal);
  Status CreateKmsg();
  Status FlushKmsg();
  std::string QosText(const PortState& ps) const;
  // ports/<n>/{rate,state,phys_state,lid,sm_lid}, fw_ver, the netdev's speed and duplex and
  // ethtool/<netdev>/link.
  Status WriteLinkFiles(const PortState& ps);
  // `ethtool <netdev>` as ethtool 6.x prints it over netlink for this port now.
  std::string LinkText(const PortState& ps) const;
  std::string EthtoolText(const PortState& ps) const;
  uint64_t Printed(const PortState& ps, int stat_index) const;
  uint64_t PrintedNet(const PortState& ps, int stat) const;
  const PortState* FindState(const std::string& netdev) const;

  Node node_;
  Scenario scenario_;
  SimOptions options_;
  TreeWriter writer_;
  std::string sysfs_root_;
  std::string ethtool_root_;
  std::string kmsg_path_;
  std::string procfs_root_;
  std::string smp_root_;
  std::string lldp_root_;
  KmsgLog kmsg_;
  bool kmsg_created_ = false;
  // Repeated log lines written so far by each active fault, and the last AER groups (correctable,
  // nonfatal) an aer_burst printed.
  std::map<const ScenarioEvent*, uint64_t> kmsg_lines_;
  std::map<const ScenarioEvent*, std::pair<int64_t, int64_t>> aer_logged_;
  std::mt19937_64 rng_;
  int64_t now_ = 0;
  std::vector<int> event_port_;             // scenario event -> port index (-1: none)
  std::vector<int> event_function_;         // scenario event -> PCI function of a PCIe fault (-1)
  std::vector<PciConfigSpec> pci_healthy_;  // by function index
  std::vector<PciConfigSpec> pci_now_;      // with the active faults
  // AER errors counted by aer_burst, by function index: {correctable, nonfatal}.
  std::vector<std::pair<uint64_t, uint64_t>> pci_aer_;
  std::map<const ScenarioEvent*, std::pair<uint64_t, uint64_t>> aer_base_;  // at the burst start
  bool peermem_loaded_ = true;
  bool node_config_dirty_ = false;
  std::vector<std::unique_ptr<PortState>> ports_;
  std::vector<ActiveFault> active_;
};

}  // namespace fabricwatch::sim
