// Opening, addressing and connecting the probe's two RC QPs (verbs_probe.h). Every step that
// fails says which port, which call and why, in one line.

#include <string.h>
#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <string>

#include "detectors/link_degraded/port_state.h"
#include "exporter/probe/verbs_probe.h"

namespace fabricwatch::probe {
namespace {

ProbeFailure Failure(ProbeOutcome outcome, std::string message) {
  return ProbeFailure{outcome, std::move(message)};
}

// "rxe0/1: ibv_create_cq: Cannot allocate memory". A verbs call of the set-up that fails is the
// host's error (memory, a changed GID table), not evidence about the port: kSetupError (probe.h).
ProbeFailure CallFailed(const ProbeSide& side, std::string_view call, int err) {
  return Failure(ProbeOutcome::kSetupError,
                 side.label + ": " + std::string(call) + ": " + strerror(err));
}

// The port states and physical states as sysfs writes them: the names the shape and the findings
// use (detectors/link_degraded/port_state.h), so a probe's "DOWN (phys Polling)" reads the same.
std::string_view PortStateName(ibv_port_state state) {
  const std::string_view name = detect::shape::StateName(static_cast<int>(state));
  return name.empty() ? "unknown" : name;
}
std::string_view PhysStateName(uint8_t phys) {
  const std::string_view name = detect::shape::PhysStateName(phys);
  return name.empty() ? "unknown" : name;
}

bool Ipv4Mapped(const ibv_gid& gid) {
  const uint8_t* raw = gid.raw;
  return std::all_of(raw, raw + 10, [](uint8_t b) { return b == 0; }) && raw[10] == 0xff &&
         raw[11] == 0xff;
}
bool ZeroGid(const ibv_gid& gid) {
  return std::all_of(gid.raw, gid.raw + 16, [](uint8_t b) { return b == 0; });
}

}  // namespace

std::string PortLabel(const PortRef& ref) { return ref.device + "/" + std::to_string(ref.port); }

StepResult OpenSide(const PortRef& ref, ProbeSide& side) {
  side.label = PortLabel(ref);
  int count = 0;
  errno = 0;
  sys::VerbsDeviceList list(ibv_get_device_list(&count));
  if (!list) {
    const int err = errno != 0 ? errno : ENODEV;
    return Failure(ProbeOutcome::kUnsupported,
                   "no RDMA device " + ref.device + ": ibv_get_device_list: " + strerror(err) +
                       (err == ENOSYS ? " (no RDMA stack: ib_uverbs not loaded?)" : ""));
  }
  ibv_device* device = nullptr;
  std::string names;
  for (int i = 0; i < count; ++i) {
    const char* name = ibv_get_device_name(list.get()[i]);
    if (name != nullptr && ref.device == name) device = list.get()[i];
    if (name != nullptr) names += (names.empty() ? "" : ", ") + std::string(name);
  }
  if (device == nullptr) {
    return Failure(ProbeOutcome::kUnsupported,
                   "no RDMA device " + ref.device + " (ibv_get_device_list lists " +
                       (names.empty() ? std::string("none") : names) + ")");
  }
  side.context.reset(ibv_open_device(device));
  if (!side.context) {
    const int err = errno != 0 ? errno : ENODEV;
    // No access to /dev/infiniband/uverbsN says nothing about the port.
    const bool access = err == EACCES || err == EPERM;
    return Failure(access ? ProbeOutcome::kUnsupported : ProbeOutcome::kSetupError,
                   side.label + ": ibv_open_device: " + strerror(err));
  }
  ibv_device_attr device_attr{};
  if (int err = ibv_query_device(side.context.get(), &device_attr); err != 0) {
    return CallFailed(side, "ibv_query_device", err);
  }
  if (ref.port < 1 || ref.port > device_attr.phys_port_cnt) {
    return Failure(ProbeOutcome::kUnsupported,
                   ref.device + " has no port " + std::to_string(ref.port) + " (" +
                       std::to_string(device_attr.phys_port_cnt) + " port(s))");
  }
  side.port = static_cast<uint8_t>(ref.port);
  if (int err = ibv_query_port(side.context.get(), side.port, &side.port_attr); err != 0) {
    return CallFailed(side, "ibv_query_port", err);
  }
  // ACTIVE_DEFER is ACTIVE with the port's state change deferred (it carries traffic): the check
  // and the sysfs collectors count both as active.
  if (side.port_attr.state != IBV_PORT_ACTIVE && side.port_attr.state != IBV_PORT_ACTIVE_DEFER) {
    return Failure(ProbeOutcome::kPortDown,
                   "port " + std::to_string(ref.port) + " of " + ref.device + " is " +
                       std::string(PortStateName(side.port_attr.state)) + " (phys " +
                       std::string(PhysStateName(side.port_attr.phys_state)) + ")");
  }
  return std::nullopt;
}

StepResult ResolveAddress(ProbeSide& side) {
  side.address.ethernet = side.port_attr.link_layer == IBV_LINK_LAYER_ETHERNET;
  if (!side.address.ethernet) {
    side.address.lid = side.port_attr.lid;
    return std::nullopt;
  }
  // RoCE v2 (routable, UDP) and, of those, the GID of an IPv4 address: the entry perftest's
  // -x and most RoCE fabrics use. Another RoCE v2 entry (an IPv6 address) is the fallback.
  int fallback = -1;
  ibv_gid fallback_gid{};
  int last_err = 0;
  for (int i = 0; i < side.port_attr.gid_tbl_len; ++i) {
    ibv_gid_entry entry{};
    if (int err = ibv_query_gid_ex(side.context.get(), side.port, i, &entry, 0); err != 0) {
      last_err = err;  // ENODATA: an empty entry
      continue;
    }
    if (entry.gid_type != IBV_GID_TYPE_ROCE_V2 || ZeroGid(entry.gid)) continue;
    if (Ipv4Mapped(entry.gid)) {
      side.address.gid = entry.gid;
      side.address.gid_index = i;
      return std::nullopt;
    }
    if (fallback < 0) fallback = i, fallback_gid = entry.gid;
  }
  if (fallback >= 0) {
    side.address.gid = fallback_gid;
    side.address.gid_index = fallback;
    return std::nullopt;
  }
  // The host's address configuration, not the port's health: kSetupError.
  return Failure(ProbeOutcome::kSetupError,
                 side.label + ": no RoCE v2 GID in its " +
                     std::to_string(side.port_attr.gid_tbl_len) + " GID entries (an IP address " +
                     "on its netdev?)" +
                     (last_err != 0 && last_err != ENODATA
                          ? std::string("; ibv_query_gid_ex: ") + strerror(last_err)
                          : std::string()));
}

StepResult CreateResources(ProbeSide& side, size_t buffer_bytes, uint32_t max_send_wr) {
  side.pd.reset(ibv_alloc_pd(side.context.get()));
  if (!side.pd) return CallFailed(side, "ibv_alloc_pd", errno != 0 ? errno : ENOMEM);
  if (int err = side.buffer.Map(buffer_bytes); err != 0) {
    return CallFailed(side, "mmap(" + std::to_string(buffer_bytes) + " B)", err);
  }
  uint8_t* raw = side.buffer.get();
  // A process that forks while the probe runs (the agent's hooks) must not take the pinned
  // pages copy-on-write: the HCA would go on writing into the child's copy.
  madvise(raw, buffer_bytes, MADV_DONTFORK);
  memset(raw, 0x5a, buffer_bytes);
  side.mr.reset(ibv_reg_mr(side.pd.get(), raw, buffer_bytes,
                           IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE));
  if (!side.mr) {
    const int err = errno != 0 ? errno : ENOMEM;
    // Pinning is charged to RLIMIT_MEMLOCK (ib_umem_get); a low limit is the host's setting,
    // not the port's health.
    if (err == ENOMEM || err == EPERM) {
      return Failure(ProbeOutcome::kUnsupported,
                     side.label + ": ibv_reg_mr(" + std::to_string(buffer_bytes) +
                         " B): " + strerror(err) +
                         " (RLIMIT_MEMLOCK too low to pin the probe's buffers? "
                         "LimitMEMLOCK= / ulimit -l)");
    }
    return CallFailed(side, "ibv_reg_mr", err);
  }
  const int cqe = static_cast<int>(max_send_wr) + 4;
  side.cq.reset(ibv_create_cq(side.context.get(), cqe, nullptr, nullptr, 0));
  if (!side.cq) return CallFailed(side, "ibv_create_cq", errno != 0 ? errno : ENOMEM);
  ibv_qp_init_attr init{};
  init.send_cq = side.cq.get();
  init.recv_cq = side.cq.get();
  init.qp_type = IBV_QPT_RC;
  init.cap.max_send_wr = max_send_wr;
  init.cap.max_recv_wr = 1;
  init.cap.max_send_sge = 1;
  init.cap.max_recv_sge = 1;
  side.qp.reset(ibv_create_qp(side.pd.get(), &init));
  if (!side.qp) return CallFailed(side, "ibv_create_qp", errno != 0 ? errno : ENOMEM);
  side.address.qp_num = side.qp->qp_num;
  return std::nullopt;
}

namespace {

// The QP's RC transport timeouts: 4.096 us × 2^14 ≈ 67 ms per try, 3 retries: a path that
// drops everything fails the write in about 0.3 s, well inside the probe's timeout (IBTA
// vol. 1 §9.7.6.1.3 and ibv_modify_qp(3): timeout, retry_cnt, rnr_retry).
constexpr uint8_t kQpTimeout = 14;
constexpr uint8_t kRetryCount = 3;
constexpr uint8_t kRnrRetry = 3;
constexpr uint32_t kPsn = 0x1000;

StepResult Modify(ProbeSide& side, ibv_qp_attr& attr, int mask, std::string_view to) {
  if (int err = ibv_modify_qp(side.qp.get(), &attr, mask); err != 0) {
    return CallFailed(side, "ibv_modify_qp(" + std::string(to) + ")", err);
  }
  return std::nullopt;
}

StepResult ToInit(ProbeSide& side) {
  ibv_qp_attr attr{};
  attr.qp_state = IBV_QPS_INIT;
  attr.pkey_index = 0;
  attr.port_num = side.port;
  attr.qp_access_flags = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_LOCAL_WRITE;
  return Modify(side, attr, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS,
                "INIT");
}

StepResult ToRtr(ProbeSide& side, const QpAddress& peer, ibv_mtu mtu) {
  ibv_qp_attr attr{};
  attr.qp_state = IBV_QPS_RTR;
  attr.path_mtu = mtu;
  attr.dest_qp_num = peer.qp_num;
  attr.rq_psn = kPsn;
  attr.max_dest_rd_atomic = 1;
  attr.min_rnr_timer = 12;
  attr.ah_attr.port_num = side.port;
  attr.ah_attr.sl = 0;
  if (side.address.ethernet) {
    // RoCE has no LIDs: the GRH carries the address (the peer's GID, ours by index).
    attr.ah_attr.is_global = 1;
    attr.ah_attr.grh.dgid = peer.gid;
    attr.ah_attr.grh.sgid_index = static_cast<uint8_t>(side.address.gid_index);
    attr.ah_attr.grh.hop_limit = 64;
  } else {
    attr.ah_attr.is_global = 0;
    attr.ah_attr.dlid = peer.lid;
  }
  return Modify(side, attr,
                IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                    IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER,
                "RTR");
}

StepResult ToRts(ProbeSide& side) {
  ibv_qp_attr attr{};
  attr.qp_state = IBV_QPS_RTS;
  attr.timeout = kQpTimeout;
  attr.retry_cnt = kRetryCount;
  attr.rnr_retry = kRnrRetry;
  attr.sq_psn = kPsn;
  attr.max_rd_atomic = 1;
  return Modify(side, attr,
                IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
                    IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC,
                "RTS");
}

}  // namespace

StepResult ConnectPair(ProbeSide& a, ProbeSide& b) {
  if (a.address.ethernet != b.address.ethernet) {
    return Failure(ProbeOutcome::kUnsupported,
                   a.label + " and " + b.label +
                       " have different link layers (InfiniBand and Ethernet): no RC path");
  }
  const ibv_mtu mtu = std::min(a.port_attr.active_mtu, b.port_attr.active_mtu);
  for (ProbeSide* side : {&a, &b}) {
    if (auto failed = ToInit(*side)) return failed;
  }
  if (auto failed = ToRtr(a, b.address, mtu)) return failed;
  if (auto failed = ToRtr(b, a.address, mtu)) return failed;
  for (ProbeSide* side : {&a, &b}) {
    if (auto failed = ToRts(*side)) return failed;
  }
  return std::nullopt;
}

void ResetToError(ProbeSide& side) {
  if (!side.qp) return;
  ibv_qp_attr attr{};
  attr.qp_state = IBV_QPS_ERR;
  ibv_modify_qp(side.qp.get(), &attr, IBV_QP_STATE);
}

}  // namespace fabricwatch::probe
