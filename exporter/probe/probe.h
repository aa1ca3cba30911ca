#pragma once
// The active RDMA probe (issue 37): a short RDMA WRITE bandwidth and latency measurement of one
// port, over an RC queue pair, with no external tool at run time (libibverbs only).
//
// Two paths, both on this node (docs/probe.md):
//   - loopback: two RC QPs on the same port, connected to each other through the port's own
//     address (its LID on InfiniBand, its GID on RoCE). The HCA turns the packets around, so this
//     measures the HCA, its PCIe path and the port's logic; on most NICs not the cable.
//   - pair: a QP on the probed port and a QP on a partner port of the node, connected through
//     the fabric (the partner's LID or GID): the packets cross the wire, so this measures the link.
//
//   auto prober = NewVerbsProber();
//   ProbeMeasurement m = prober->Measure(target, options);   // bounded by options.timeout
//   ProbeVerdict v = ClassifyProbe(m, expected_bits_per_second, degraded_fraction);
//
// Every verbs resource (PD, MR, CQ, QP, context) has an RAII owner and is destroyed before
// Measure() returns, on every path: success, error and timeout.
//
// One probe at a time on the node: Measure() holds flock(LOCK_EX) on a lock file
// (kProbeLockPath) for the whole measurement, whoever runs it (the agent, `fabricwatch probe`,
// `fabricwatch check --check.probe`). Held by another process for longer than
// min(timeout / 2, 2 s, the time the data phases can spare): kUnsupported, "another probe runs
// on this node". A lock file that is missing and cannot be created (a root probe creates it 0644;
// the package's tmpfiles.d entry creates it at boot; the agent's unit has /run read-only): the
// probe runs without the lock and says so in ProbeMeasurement::lock (docs/probe.md §3).
//
// Thread-safety: a prober is used by one thread at a time.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace fabricwatch::probe {

// An RDMA port of this node, as sysfs names it (class/infiniband/<device>/ports/<port>).
struct PortRef {
  std::string device;
  uint32_t port = 1;
  bool operator==(const PortRef&) const = default;
  auto operator<=>(const PortRef&) const = default;
};

struct ProbeTarget {
  PortRef port;
  // The far end for the pair path; nullopt: loopback on `port`.
  std::optional<PortRef> partner;
};

struct ProbeMeasurement;

struct ProbeOptions {
  // How long the bandwidth phase posts writes (the latency phase adds up to a tenth of it).
  std::chrono::milliseconds duration{1000};
  // The whole measurement, set-up included; a probe past it stops, destroys its resources and
  // reports kTimeout (in the bandwidth or latency phase) or kSetupError (before them). The
  // clean-up after the deadline can add up to ~200 ms (waiting for the flushed work requests)
  // plus the time the driver takes to destroy the QPs, CQs and MRs.
  std::chrono::milliseconds timeout{5000};
  // Size of one RDMA WRITE of the bandwidth phase, and how many are kept in flight. Memory
  // registered: 2 × message_bytes × window (source and destination buffers).
  uint32_t message_bytes = 64 * 1024;
  uint32_t window = 16;
  // The ranges `fabricwatch probe` accepts (the config's probe.message-size and probe.window
  // take the same): at most 2 × 4 MiB × 128 = 1 GiB pinned.
  static constexpr uint32_t kMinMessageBytes = 64;
  static constexpr uint32_t kMaxMessageBytes = 4u << 20;
  static constexpr uint32_t kMaxWindow = 128;
  // Called from Measure()'s thread as each phase starts: "setup" (before the lock and the verbs
  // set-up), "data" (the bandwidth phase begins), "cleanup" (the data phases, or the set-up, have
  // ended: `measurement` holds the result, before the resources are destroyed). Empty: none.
  // `fabricwatch probe --progress` prints them, so a parent that kills a stuck child can tell
  // where it stuck (process_prober.h).
  std::function<void(std::string_view phase, const ProbeMeasurement& measurement)> on_phase;
  // Register a GPU buffer instead of host memory (needs the GPUDirect RDMA module); not built
  // into this version: a request for it is answered kUnsupported with the reason.
  bool gpu_memory = false;
};

// What the measurement itself found, before any threshold. Only kPortDown, kError and kTimeout
// are evidence about the port (ClassifyProbe: kFailed, which confirms a drain); an error of the
// host (memory, a verbs call of the set-up, a starved set-up) is kSetupError and says nothing
// about the port.
enum class ProbeOutcome {
  kOk,           // data moved; bandwidth and latency are valid
  kPortDown,     // the port (or the partner's) is not ACTIVE (nor ACTIVE_DEFER): nothing posted
  kError,        // a work completion failed (IBV_WC_RETRY_EXC_ERR, ...): error says which
  kTimeout,      // the bandwidth or latency phase did not finish within options.timeout
  kUnsupported,  // no such device, no memory-lock allowance, no verbs access, GPU buffer asked,
                 // another probe runs on this node (the node-wide lock is held)
  kSetupError,   // set-up failed on this host: a verbs call of the set-up or of posting (ENOMEM
                 // from mmap, ibv_alloc_pd, ibv_create_cq/qp; EINVAL from ibv_modify_qp when
                 // the GID table changed; ibv_open_device; no RoCE v2 GID), or the timeout hit
                 // before the bandwidth phase began (set-up starved of CPU)
};
std::string_view ProbeOutcomeName(ProbeOutcome outcome);  // "ok", "port_down", ...

struct ProbeMeasurement {
  ProbeOutcome outcome = ProbeOutcome::kUnsupported;
  std::string error;  // one line, names the device, the call and the errno/status; "" when kOk
  std::string path;   // "loopback" or "pair"
  double bandwidth_bytes_per_second = 0;  // bytes of completed writes / bandwidth phase time
  // Round trip of one signalled 64-byte RDMA WRITE (request out, ACK back), median and maximum
  // over the latency phase; an RC write completes only when the responder's ACK arrives.
  std::chrono::nanoseconds latency_median{0};
  std::chrono::nanoseconds latency_max{0};
  uint64_t bytes_written = 0;
  uint64_t writes_completed = 0;
  std::chrono::nanoseconds elapsed{0};  // the whole call, set-up and clean-up included
  size_t registered_bytes = 0;          // memory pinned for the measurement
  // The node-wide lock: "held", "unlocked: <why>" (the lock file is missing and could not be
  // created: the probe ran without it), "" when the call did not get that far.
  std::string lock;
};

class PortProber {
 public:
  virtual ~PortProber() = default;
  virtual ProbeMeasurement Measure(const ProbeTarget& target, const ProbeOptions& options) = 0;
};

// The node-wide probe lock. In /run (root's, 0755), not the 1777 /run/lock, so that no user can
// plant it (a 0600 file or a held lock there would stop every probe). A root probe creates it
// 0644 when missing, the package's tmpfiles.d entry (deploy/fabricwatch.tmpfiles) at boot; any
// other probe opens it read-only (flock needs no write access).
inline constexpr std::string_view kProbeLockPath = "/run/fabricwatch-probe.lock";

// The time the data phases need once the set-up is done: the bandwidth phase (`duration`), the
// latency phase (a tenth of it) and kDataPhaseSlack for the last completions. A probe with less
// time left before its timeout (a slow lock wait or set-up) stops before the bandwidth phase with
// kSetupError instead of timing out in it, which would read as the port's failure.
inline constexpr std::chrono::milliseconds kDataPhaseSlack{200};
std::chrono::nanoseconds DataPhaseTime(std::chrono::milliseconds duration);
// "" when `left` (the time before the deadline) is enough for the data phases, else the
// kSetupError message: "not enough time left after the lock wait and set-up (0.8 s of 5 s; the
// data phases need 1.3 s)".
std::string DataPhaseShortfall(std::chrono::nanoseconds left, const ProbeOptions& options);

// The libibverbs prober (exporter/probe/verbs_probe.cc); `lock_path`: the node-wide lock file
// (tests pass their own).
std::unique_ptr<PortProber> NewVerbsProber(std::string lock_path = std::string(kProbeLockPath));

// The verdict a drain or `fabricwatch check` acts on.
enum class ProbeVerdict {
  kHealthy,      // kOk and bandwidth >= degraded_fraction × expected rate
  kDegraded,     // kOk but slower than that
  kFailed,       // kPortDown, kError, kTimeout
  kUnavailable,  // kUnsupported, kSetupError: the probe says nothing about the port
};
std::string_view ProbeVerdictName(ProbeVerdict verdict);  // "healthy", "degraded", ...

// `expected_bits_per_second`: the port's expected link rate (the shape manifest or learned
// shape, else the rate the port reports); 0 when unknown, then kOk is kHealthy.
ProbeVerdict ClassifyProbe(const ProbeMeasurement& measurement, double expected_bits_per_second,
                           double degraded_fraction);

}  // namespace fabricwatch::probe
