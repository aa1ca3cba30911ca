#pragma once
// Internals of Simulator shared by its source files, not for other users:
//   simulator.cc        the scenario timeline: faults start and end, injections, time;
//   simulator_step.cc   one simulated second of a port: faults, traffic, the counters it moves;
//   simulator_files.cc  the replay root's files (sysfs tree and ethtool directory);
//   simulator_link.cc   the fabric's shape: how each link trained, the card's presence and
//                       firmware, and the files that show them (rate, state, ethtool link).
//   simulator_config.cc configuration and PCIe faults (RoCE settings, config space, AER);
//   simulator_kmsg.cc   the kernel-log replay file and the faults only the log shows.

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "tools/fabricsim/link_rate.h"
#include "tools/fabricsim/simulator.h"

namespace fabricwatch::sim {

inline constexpr uint64_t kMask32 = 0xffffffffULL;
// The priority RoCE traffic runs on (DSCP 26 -> priority 3): PFC and ECN are on there.
inline constexpr int kRocePriority = 3;

#define FW_TRY(expr)                             \
  do {                                           \
    if (Status s_ = (expr); !s_.ok()) return s_; \
  } while (0)

// A numeric parameter of the event, or `fallback` when the scenario does not set it.
inline double EventParam(const ScenarioEvent& ev, const char* key, double fallback) {
  auto it = ev.params.find(key);
  return it == ev.params.end() ? fallback : it->second;
}

// Traffic sources the ethtool statistics follow (see StatRule).
// clang-format off
enum Source {
  kSwRxPkt, kSwRxByte, kSwTxPkt, kSwTxByte,          // the kernel's own traffic (netdev stack)
  kWireRxPkt, kWireRxByte, kWireTxPkt, kWireTxByte,  // everything on the port
  kRdmaRxPkt, kRdmaRxByte, kRdmaTxPkt, kRdmaTxByte,  // RoCE, bypassing the stack
  kSourceCount
};
// clang-format on

// mlx5 port hw_counters (drivers/infiniband/hw/mlx5/counters.c), as in a ConnectX-7 capture.
// clang-format off
inline constexpr const char* kHwCounters[] = {
    "duplicate_request", "implied_nak_seq_err", "lifespan", "local_ack_timeout_err",
    "np_cnp_sent", "np_ecn_marked_roce_packets", "out_of_buffer", "out_of_sequence",
    "packet_seq_err", "req_cqe_error", "req_cqe_flush_error", "req_remote_access_errors",
    "req_remote_invalid_request", "req_rnr_retries_exceeded", "req_transport_retries_exceeded",
    "resp_cqe_error", "resp_cqe_flush_error", "resp_local_length_error",
    "resp_remote_access_errors", "rnr_nak_retry_err", "roce_adp_retrans", "roce_adp_retrans_to",
    "roce_slow_restart", "roce_slow_restart_cnps", "roce_slow_restart_trans", "rp_cnp_handled",
    "rp_cnp_ignored", "rx_atomic_requests", "rx_dct_connect", "rx_icrc_encapsulated",
    "rx_read_requests", "rx_write_requests"};
// clang-format on
inline constexpr int kHwCount = sizeof(kHwCounters) / sizeof(kHwCounters[0]);
// The position of hw_counters file `name` in kHwCounters, or -1.
int HwIndex(std::string_view name);

struct Simulator::PortState {
  const Port* port = nullptr;
  const PciFunction* pci = nullptr;
  std::string dev_dir;  // devices/<path>/infiniband/<dev>, relative to sys
  std::string net_dir;  // devices/<path>/net/<netdev>
  std::string hwmon;    // hwmon<N>
  bool present = true;
  bool link_up = true;
  bool module_present = true;
  int generation = 0;  // re-plugs and reloads: new ifindex
  uint64_t carrier_changes = 2, carrier_up = 1, carrier_down = 1;
  std::array<uint64_t, kNetStatCount> net{};
  std::array<uint64_t, kPmaCount> pma{};
  std::array<uint64_t, kHwCount> hw{};
  std::vector<std::string> stat_names;
  std::vector<uint64_t> stats;
  std::vector<StatRule> rules;
  std::unordered_map<std::string, int> stat_index;
  std::vector<int> pfc_priorities;
  // counter_wrap32: printed = (value + offset) mod 2^32 for the wrapped statistics.
  bool wrap32 = false;
  std::unordered_map<int, uint64_t> wrap_offset_stats;
  std::array<uint64_t, kNetStatCount> wrap_offset_net{};
  ModuleState module;
  ModuleState module_base;  // healthy values to recover to
  double asic_temp = 55.0;
  double asic_highest = 55.0;
  double module_highest = 45.0;
  double utilization = 0.5;
  std::array<double, kSourceCount> inc{};
  // Per-tick inputs derived from the active faults.
  int storm_source_prio = -1, storm_victim_prio = -1, congestion_prio = -1;
  double congestion_rate = 0;
  int64_t storm_started = -1;
  double ber = 0;
  int ber_lane = -1;
  // How the link trained this second (simulator_link.cc): lanes and lane speed, the data rate
  // the traffic runs at, whether an IB port is logically up (false: stuck in INIT, no SM) and
  // what phys_state shows while the link is up. fw_ver is the card's running firmware.
  Trained trained;
  double gbps = 0;
  bool logical_active = true;
  int phys_state_up = 5;  // 5: LinkUp
  std::string fw_ver;
  // Configuration (simulator_config.cc): what mlnx_qos, `ethtool -a`, `ethtool --get-tunable`,
  // the ECN switches and the MTU show; the configuration faults change it. Written when dirty.
  uint8_t pfc_enabled = uint8_t{1} << kRocePriority;
  bool trust_dscp = true;
  bool ecn_enabled = true;  // on the RoCE priority (the others stay on)
  bool global_pause = false;
  int storm_timeout_ms = 100;
  int mtu = 9000;
  bool config_dirty = true;

  // The netdev's carrier: the link is up and, on IB, the port is ACTIVE (IPoIB turns the
  // carrier on only then).
  bool Carrier() const { return link_up && logical_active; }

  int Idx(const std::string& name) const {
    auto it = stat_index.find(name);
    return it == stat_index.end() ? -1 : it->second;
  }
  void Add(int idx, uint64_t v) {
    if (idx >= 0) stats[idx] += v;
  }
  void Add(const std::string& name, uint64_t v) { Add(Idx(name), v); }
};

}  // namespace fabricwatch::sim
