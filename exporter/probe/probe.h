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
// Thread-safety: a prober is used by one thread at a time (the probe runner serialises probes:
// never more than one at a time on the node).

#include <chrono>
#include <cstdint>
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

struct ProbeOptions {
  // How long the bandwidth phase posts writes (the latency phase adds up to a tenth of it).
  std::chrono::milliseconds duration{1000};
  // The whole measurement, set-up and clean-up included; a probe past it stops, destroys its
  // resources and reports kTimeout.
  std::chrono::milliseconds timeout{5000};
  // Size of one RDMA WRITE of the bandwidth phase, and how many are kept in flight. Memory
  // registered: 2 × message_bytes × window (source and destination buffers).
  uint32_t message_bytes = 64 * 1024;
  uint32_t window = 16;
  // Register a GPU buffer instead of host memory (needs the GPUDirect RDMA module); not built
  // into this version: a request for it is answered kUnsupported with the reason.
  bool gpu_memory = false;
};

// What the measurement itself found, before any threshold.
enum class ProbeOutcome {
  kOk,           // data moved; bandwidth and latency are valid
  kPortDown,     // the port (or the partner's) is not ACTIVE: nothing was posted
  kError,        // a verbs call or a work completion failed (error says which and why)
  kTimeout,      // the measurement did not finish within options.timeout
  kUnsupported,  // no such device, no memory-lock allowance, no verbs access, GPU buffer asked
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
};

class PortProber {
 public:
  virtual ~PortProber() = default;
  virtual ProbeMeasurement Measure(const ProbeTarget& target, const ProbeOptions& options) = 0;
};

// The libibverbs prober (exporter/probe/verbs_probe.cc).
std::unique_ptr<PortProber> NewVerbsProber();

// The verdict a drain or `fabricwatch check` acts on.
enum class ProbeVerdict {
  kHealthy,      // kOk and bandwidth >= degraded_fraction × expected rate
  kDegraded,     // kOk but slower than that
  kFailed,       // kPortDown, kError, kTimeout
  kUnavailable,  // kUnsupported: the probe says nothing about the port
};
std::string_view ProbeVerdictName(ProbeVerdict verdict);  // "healthy", "degraded", ...

// `expected_bits_per_second`: the port's expected link rate (the shape manifest or learned
// shape, else the rate the port reports); 0 when unknown, then kOk is kHealthy.
ProbeVerdict ClassifyProbe(const ProbeMeasurement& measurement, double expected_bits_per_second,
                           double degraded_fraction);

}  // namespace fabricwatch::probe
