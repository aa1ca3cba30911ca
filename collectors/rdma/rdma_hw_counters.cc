#include <array>

#include "collectors/rdma/rdma_counters.h"

namespace fabricwatch::rdma {
namespace {

// ---- hw_counters/ (docs/reference.md §1.6). Driver counters are named by each driver, so the
// same meaning has a different file name per vendor; names that mean the same thing share one
// curated metric, so loss and congestion dashboards and detectors work across vendors. A name is
// mapped only where its definition in the kernel source says the same as the metric's help;
// everything else stays reachable as fabric_rdma_port_hw_stat_total{counter}.
constexpr MetricDesc kCnpSent{
    "fabric_rdma_port_cnp_sent_total",
    "Congestion notification packets (CNPs) sent by this port as notification point in reply "
    "to ECN-marked packets (mlx5 np_cnp_sent, irdma cnpSent, bnxt_re tx_cnp_pkts, from Linux "
    "6.18 np_cnp_pkts).",
    MetricKind::kCounter, kPortLabels};
constexpr MetricDesc kCnpHandled{
    "fabric_rdma_port_cnp_handled_total",
    "CNPs received and acted on by this port as reaction point, i.e. its send rate was "
    "reduced (mlx5 rp_cnp_handled, irdma cnpHandled). bnxt_re from Linux 6.18 reports every "
    "CNP received under rp_cnp_handled (its former rx_cnp_pkts).",
    MetricKind::kCounter, kPortLabels};
constexpr MetricDesc kCnpIgnored{
    "fabric_rdma_port_cnp_ignored_total",
    "CNPs received but ignored, e.g. congestion control not enabled for the flow or priority "
    "(mlx5 rp_cnp_ignored, irdma cnpIgnored).",
    MetricKind::kCounter,
    kPortLabels,
    {},
    {ExportRule::kOff,
     "CNPs the reaction point did not act on; fabric_rdma_port_cnp_handled_total is the signal"}};
constexpr MetricDesc kEcnMarked{
    "fabric_rdma_port_ecn_marked_packets_total",
    "RoCEv2 packets received with the ECN congestion-experienced mark "
    "(mlx5 np_ecn_marked_roce_packets, irdma RxECNMrkd, bnxt_re rx_ecn_marked_pkts).",
    MetricKind::kCounter, kPortLabels};
constexpr MetricDesc kOutOfBuffer{
    "fabric_rdma_port_out_of_buffer_drops_total",
    "Packets dropped because the receive queue had no posted buffer: the "
    "receiving application is not keeping up (mlx5 out_of_buffer, bnxt_re rx_out_of_buffer).",
    MetricKind::kCounter, kPortLabels};
constexpr MetricDesc kOutOfSequence{
    "fabric_rdma_port_out_of_sequence_packets_total",
    "Out-of-order packets received, a sign of loss upstream (mlx5 out_of_sequence, bnxt_re "
    "oos_drop_count, irdma gen3 \"Rcvd Out of order packets\").",
    MetricKind::kCounter, kPortLabels};
constexpr MetricDesc kPacketSeqErr{
    "fabric_rdma_port_packet_sequence_errors_total",
    "NAK sequence-error packets received by a requester, a sign of loss (mlx5 packet_seq_err, "
    "bnxt_re seq_err_naks_rcvd, irdma gen3 \"Nak Sequence Error\").",
    MetricKind::kCounter, kPortLabels};
constexpr MetricDesc kImpliedNak{
    "fabric_rdma_port_implied_nak_sequence_errors_total",
    "Implied NAK sequence errors seen by a requester (mlx5 "
    "implied_nak_seq_err, irdma gen3 \"Nak Sequence Error Implied\").",
    MetricKind::kCounter,
    kPortLabels,
    {},
    {ExportRule::kOff, "a kind of fabric_rdma_port_packet_sequence_errors_total"}};
constexpr MetricDesc kLocalAckTimeout{
    "fabric_rdma_port_local_ack_timeouts_total",
    "ACK timer expirations of reliable QPs, the classic loss indicator "
    "(mlx5 local_ack_timeout_err, bnxt_re to_retransmits, irdma gen3 RTO, efa "
    "retrans_timeout_events).",
    MetricKind::kCounter, kPortLabels};
constexpr MetricDesc kDuplicateRequest{
    "fabric_rdma_port_duplicate_requests_total",
    "Requests received that had already been executed, because the peer retransmitted "
    "(mlx5 duplicate_request, bnxt_re dup_req).",
    MetricKind::kCounter,
    kPortLabels,
    {},
    {ExportRule::kOff,
     "a consequence of the requester's retries, which fabric_rdma_port_local_ack_timeouts_total "
     "counts"}};
constexpr MetricDesc kRnrNakRetry{
    "fabric_rdma_port_rnr_nak_retries_total",
    "Receiver-not-ready NAKs received while the retry limit was not yet exceeded "
    "(mlx5 rnr_nak_retry_err, bnxt_re rnr_naks_rcvd, irdma gen3 \"RNR received\").",
    MetricKind::kCounter,
    kPortLabels,
    {},
    {ExportRule::kOff,
     "receiver-not-ready retries that worked; fabric_rdma_port_rnr_retries_exceeded_total counts "
     "the failures"}};
constexpr MetricDesc kTransportRetriesExceeded{
    "fabric_rdma_port_transport_retries_exceeded_total",
    "QPs that exceeded their transport retry count and went to error: a connection was lost "
    "(mlx5 req_transport_retries_exceeded, bnxt_re max_retry_exceeded).",
    MetricKind::kCounter, kPortLabels};
constexpr MetricDesc kRnrRetriesExceeded{
    "fabric_rdma_port_rnr_retries_exceeded_total",
    "QPs that exceeded their RNR retry count and went to error (mlx5 req_rnr_retries_exceeded).",
    MetricKind::kCounter, kPortLabels};
constexpr MetricDesc kAdpRetrans{
    "fabric_rdma_port_adaptive_retransmissions_total",
    "Adaptive retransmissions (mlx5 roce_adp_retrans).",
    MetricKind::kCounter,
    kPortLabels,
    {},
    {ExportRule::kOff,
     "retransmissions that worked; fabric_rdma_port_adaptive_retransmission_timeouts_total counts "
     "the ones that did not"}};
constexpr MetricDesc kAdpRetransTimeouts{
    "fabric_rdma_port_adaptive_retransmission_timeouts_total",
    "Timeouts under adaptive retransmission (mlx5 roce_adp_retrans_to).", MetricKind::kCounter,
    kPortLabels};
constexpr MetricDesc kSlowRestart{
    "fabric_rdma_port_slow_restarts_total",
    "Times slow restart was used after loss (mlx5 roce_slow_restart).",
    MetricKind::kCounter,
    kPortLabels,
    {},
    {ExportRule::kOff, "RoCE slow restart (rate recovery after idle), not a fault signal"}};
constexpr MetricDesc kSlowRestartCnps{
    "fabric_rdma_port_slow_restart_cnps_total",
    "CNPs generated by slow restart (mlx5 roce_slow_restart_cnps).",
    MetricKind::kCounter,
    kPortLabels,
    {},
    {ExportRule::kOff, "RoCE slow restart (rate recovery after idle), not a fault signal"}};
constexpr MetricDesc kSlowRestartTrans{
    "fabric_rdma_port_slow_restart_transitions_total",
    "Transitions into the slow-restart state (mlx5 roce_slow_restart_trans).",
    MetricKind::kCounter,
    kPortLabels,
    {},
    {ExportRule::kOff, "RoCE slow restart (rate recovery after idle), not a fault signal"}};
constexpr MetricDesc kIcrcErrors{"fabric_rdma_port_icrc_errors_total",
                                 "RoCE packets received with an invalid ICRC, i.e. corrupted (mlx5 "
                                 "rx_icrc_encapsulated, irdma gen3 \"CRC errors\").",
                                 MetricKind::kCounter, kPortLabels};
constexpr MetricDesc kRxWriteRequests{
    "fabric_rdma_port_receive_write_requests_total",
    "RDMA WRITE requests received as responder (mlx5 rx_write_requests, bnxt_re rx_write_req).",
    MetricKind::kCounter,
    kPortLabels,
    {},
    {ExportRule::kOff, "workload statistics, not fault signals"}};
constexpr MetricDesc kRxReadRequests{
    "fabric_rdma_port_receive_read_requests_total",
    "RDMA READ requests received as responder (mlx5 rx_read_requests, bnxt_re rx_read_req).",
    MetricKind::kCounter,
    kPortLabels,
    {},
    {ExportRule::kOff, "workload statistics, not fault signals"}};
constexpr MetricDesc kRxAtomicRequests{
    "fabric_rdma_port_receive_atomic_requests_total",
    "Atomic requests received as responder (mlx5 rx_atomic_requests, bnxt_re rx_atomic_req).",
    MetricKind::kCounter,
    kPortLabels,
    {},
    {ExportRule::kOff, "workload statistics, not fault signals"}};
constexpr MetricDesc kRxDctConnect{"fabric_rdma_port_receive_dct_connects_total",
                                   "DC target connect requests received (mlx5 rx_dct_connect).",
                                   MetricKind::kCounter,
                                   kPortLabels,
                                   {},
                                   {ExportRule::kOff, "workload statistics, not fault signals"}};
constexpr MetricDesc kReqCqeErrors{"fabric_rdma_port_requester_cqe_errors_total",
                                   "Requester completions with error (mlx5 req_cqe_error; bnxt_re "
                                   "from Linux 6.18, the sum of its requester error counters).",
                                   MetricKind::kCounter, kPortLabels};
constexpr MetricDesc kRespCqeErrors{
    "fabric_rdma_port_responder_cqe_errors_total",
    "Responder completions with error (mlx5 resp_cqe_error; bnxt_re from Linux 6.18).",
    MetricKind::kCounter, kPortLabels};
constexpr MetricDesc kReqCqeFlush{
    "fabric_rdma_port_requester_cqe_flush_errors_total",
    "Requester completions flushed because the QP moved to error (mlx5 req_cqe_flush_error).",
    MetricKind::kCounter,
    kPortLabels,
    {},
    {ExportRule::kOff,
     "flushes follow any queue-pair error, counted in "
     "fabric_rdma_port_requester_cqe_errors_total"}};
constexpr MetricDesc kRespCqeFlush{
    "fabric_rdma_port_responder_cqe_flush_errors_total",
    "Responder completions flushed because the QP moved to error (mlx5 resp_cqe_flush_error).",
    MetricKind::kCounter,
    kPortLabels,
    {},
    {ExportRule::kOff,
     "flushes follow any queue-pair error, counted in "
     "fabric_rdma_port_responder_cqe_errors_total"}};
constexpr MetricDesc kReqRemoteAccess{
    "fabric_rdma_port_requester_remote_access_errors_total",
    "Remote access (rkey or permission) errors seen by a requester "
    "(mlx5 req_remote_access_errors, bnxt_re remote_access_err).",
    MetricKind::kCounter, kPortLabels};
constexpr MetricDesc kRespRemoteAccess{
    "fabric_rdma_port_responder_remote_access_errors_total",
    "Remote access errors seen by a responder (mlx5 resp_remote_access_errors).",
    MetricKind::kCounter, kPortLabels};
constexpr MetricDesc kReqRemoteInvalid{
    "fabric_rdma_port_requester_remote_invalid_requests_total",
    "Remote Invalid Request NAKs received by a requester (mlx5 req_remote_invalid_request, bnxt_re "
    "remote_invalid_req_err).",
    MetricKind::kCounter, kPortLabels};
constexpr MetricDesc kRespLocalLength{
    "fabric_rdma_port_responder_local_length_errors_total",
    "Responder local length errors (mlx5 resp_local_length_error).", MetricKind::kCounter,
    kPortLabels};

constexpr MetricDesc kCnpReceived{
    "fabric_rdma_port_cnp_received_total",
    "CNPs received by this port as reaction point, acted on or not (bnxt_re rx_cnp_pkts). mlx5 "
    "and irdma split this count into fabric_rdma_port_cnp_handled_total and "
    "fabric_rdma_port_cnp_ignored_total.",
    MetricKind::kCounter, kPortLabels};
constexpr MetricDesc kRetransmittedPackets{
    "fabric_rdma_port_retransmitted_packets_total",
    "Packets the transport sent again after a timeout or loss indication (efa retrans_pkts, the "
    "SRD transport's retransmissions).",
    MetricKind::kCounter, kPortLabels};

// One row per file name. A name two drivers share (tx_bytes: bnxt_re and efa) is one row, which
// must hold for both; a test keeps the names unique.
constexpr CounterSpec kHwCounters[] = {
    // mlx5 (K drivers/infiniband/hw/mlx5/counters.c: mlx5_ib_q_cnts, mlx5_ib_cong_cnts,
    // mlx5_ib_ext_ppcnt_cnts; K Documentation/networking/device_drivers/ethernet/mellanox/
    // mlx5/counters.rst).
    {"np_cnp_sent", &kCnpSent, 1, 0},
    {"rp_cnp_handled", &kCnpHandled, 1, 0},
    {"rp_cnp_ignored", &kCnpIgnored, 1, 0},
    {"np_ecn_marked_roce_packets", &kEcnMarked, 1, 0},
    {"out_of_buffer", &kOutOfBuffer, 1, 0},
    {"out_of_sequence", &kOutOfSequence, 1, 0},
    {"packet_seq_err", &kPacketSeqErr, 1, 0},
    {"implied_nak_seq_err", &kImpliedNak, 1, 0},
    {"local_ack_timeout_err", &kLocalAckTimeout, 1, 0},
    {"duplicate_request", &kDuplicateRequest, 1, 0},
    {"rnr_nak_retry_err", &kRnrNakRetry, 1, 0},
    {"req_transport_retries_exceeded", &kTransportRetriesExceeded, 1, 0},
    {"req_rnr_retries_exceeded", &kRnrRetriesExceeded, 1, 0},
    {"roce_adp_retrans", &kAdpRetrans, 1, 0},
    {"roce_adp_retrans_to", &kAdpRetransTimeouts, 1, 0},
    {"roce_slow_restart", &kSlowRestart, 1, 0},
    {"roce_slow_restart_cnps", &kSlowRestartCnps, 1, 0},
    {"roce_slow_restart_trans", &kSlowRestartTrans, 1, 0},
    {"rx_icrc_encapsulated", &kIcrcErrors, 1, 0},
    {"rx_write_requests", &kRxWriteRequests, 1, 0},
    {"rx_read_requests", &kRxReadRequests, 1, 0},
    {"rx_atomic_requests", &kRxAtomicRequests, 1, 0},
    {"rx_dct_connect", &kRxDctConnect, 1, 0},
    {"req_cqe_error", &kReqCqeErrors, 1, 0},
    {"resp_cqe_error", &kRespCqeErrors, 1, 0},
    {"req_cqe_flush_error", &kReqCqeFlush, 1, 0},
    {"resp_cqe_flush_error", &kRespCqeFlush, 1, 0},
    {"req_remote_access_errors", &kReqRemoteAccess, 1, 0},
    {"resp_remote_access_errors", &kRespRemoteAccess, 1, 0},
    {"req_remote_invalid_request", &kReqRemoteInvalid, 1, 0},
    {"resp_local_length_error", &kRespLocalLength, 1, 0},

    // irdma, E810 (gen2) and X722 (gen1) (K drivers/infiniband/hw/irdma/verbs.c
    // irdma_hw_stat_names, v5.14 to v6.x): only the DCQCN counters mean what mlx5's do. The rest
    // are IP, TCP (iWARP) and iWARP-verb counters (ip4InDiscards, tcpRetransSegs, RxUDP, ...):
    // tcpRetransSegs counts TCP segments of iWARP connections, not RoCE retransmissions.
    {"cnpSent", &kCnpSent, 1, 0},
    {"cnpHandled", &kCnpHandled, 1, 0},
    {"cnpIgnored", &kCnpIgnored, 1, 0},
    {"RxECNMrkd", &kEcnMarked, 1, 0},
    // irdma gen3 (E830/IPU, ig3rdma; irdma_hw_stat_descs gains these with the "RDMA/irdma: Add
    // GEN3 HW statistics support" series, linux-rdma 2025, in mainline with ig3rdma_hw.c). The
    // file names contain blanks, as the driver spells them.
    {"RNR received", &kRnrNakRetry, 1, 0},
    {"Nak Sequence Error", &kPacketSeqErr, 1, 0},
    {"Nak Sequence Error Implied", &kImpliedNak, 1, 0},
    {"RTO", &kLocalAckTimeout, 1, 0},
    {"Rcvd Out of order packets", &kOutOfSequence, 1, 0},
    {"CRC errors", &kIcrcErrors, 1, 0},

    // bnxt_re, NetXtreme-E / Thor (K drivers/infiniband/hw/bnxt_re/hw_counters.c
    // bnxt_re_stat_descs, v6.6: the CNP, ECN and rx_out_of_buffer names exist only on gen P5+
    // chips with extended stats, bnxt_re_copy_ext_stats). to_retransmits counts retransmissions
    // after the ACK timer expired, i.e. local ACK timeouts; oos_drop_count is
    // res_oos_drop_count / rx_out_of_sequence. rx_cnp_pkts counts every CNP received, handled or
    // not, so it is its own family. tx/rx_pkts and tx/rx_bytes are the RoCE function's unicast
    // traffic (ctx_hw_stats rx_ucast_*), in packets and bytes.
    {"tx_cnp_pkts", &kCnpSent, 1, 0},
    {"rx_cnp_pkts", &kCnpReceived, 1, 0},
    {"rx_ecn_marked_pkts", &kEcnMarked, 1, 0},
    {"rx_out_of_buffer", &kOutOfBuffer, 1, 0},
    {"oos_drop_count", &kOutOfSequence, 1, 0},
    {"seq_err_naks_rcvd", &kPacketSeqErr, 1, 0},
    {"to_retransmits", &kLocalAckTimeout, 1, 0},
    {"dup_req", &kDuplicateRequest, 1, 0},
    {"rnr_naks_rcvd", &kRnrNakRetry, 1, 0},
    {"max_retry_exceeded", &kTransportRetriesExceeded, 1, 0},
    {"remote_access_err", &kReqRemoteAccess, 1, 0},
    {"remote_invalid_req_err", &kReqRemoteInvalid, 1, 0},
    {"rx_write_req", &kRxWriteRequests, 1, 0},
    {"rx_read_req", &kRxReadRequests, 1, 0},
    {"rx_atomic_req", &kRxAtomicRequests, 1, 0},
    // bnxt_re from Linux 6.18 ("RDMA/bnxt_re: RoCE related hardware counters update", linux-rdma
    // 14 Aug 2025, <20250814112555.221665-7-kalesh-anakkur.purayil@broadcom.com>, in the v6.18
    // RDMA pull): the counters above take mlx5's names (local_ack_timeout_err, packet_seq_err,
    // rnr_nak_retry_err, implied_nak_seq_err, duplicate_request, out_of_sequence, out_of_buffer,
    // rx_*_requests, req_remote_*, rp_cnp_handled, np_ecn_marked_roce_packets), so they join the
    // mlx5 rows; rp_cnp_handled then counts every CNP received, as rx_cnp_pkts did. Only the CNPs
    // sent got a name of their own.
    {"np_cnp_pkts", &kCnpSent, 1, 0},
    // bnxt_re and efa alike: bytes and packets of the RDMA port, already in bytes (neither has
    // the IBA counters/ directory these families otherwise come from).
    {"tx_bytes", &kXmitBytes, 1, 0},
    {"rx_bytes", &kRcvBytes, 1, 0},
    {"tx_pkts", &kXmitPackets, 1, 0},
    {"rx_pkts", &kRcvPackets, 1, 0},

    // efa, AWS (K drivers/infiniband/hw/efa/efa_verbs.c EFA_DEFINE_PORT_STATS; the retrans_*
    // and *_remote_* names came with the device's network statistics, after rdma_write_*). SRD has
    // no CNP, ECN or PFC: EFA does its own congestion
    // control in the Nitro card. retrans_timeout_events counts retransmission-timer expiries.
    {"retrans_timeout_events", &kLocalAckTimeout, 1, 0},
    {"retrans_pkts", &kRetransmittedPackets, 1, 0},
};

constexpr std::array<const MetricDesc*, 33> kHwCurated = {&kCnpSent,
                                                          &kCnpHandled,
                                                          &kCnpIgnored,
                                                          &kCnpReceived,
                                                          &kEcnMarked,
                                                          &kOutOfBuffer,
                                                          &kOutOfSequence,
                                                          &kPacketSeqErr,
                                                          &kImpliedNak,
                                                          &kLocalAckTimeout,
                                                          &kDuplicateRequest,
                                                          &kRnrNakRetry,
                                                          &kTransportRetriesExceeded,
                                                          &kRnrRetriesExceeded,
                                                          &kRetransmittedPackets,
                                                          &kAdpRetrans,
                                                          &kAdpRetransTimeouts,
                                                          &kSlowRestart,
                                                          &kSlowRestartCnps,
                                                          &kSlowRestartTrans,
                                                          &kIcrcErrors,
                                                          &kRxWriteRequests,
                                                          &kRxReadRequests,
                                                          &kRxAtomicRequests,
                                                          &kRxDctConnect,
                                                          &kReqCqeErrors,
                                                          &kRespCqeErrors,
                                                          &kReqCqeFlush,
                                                          &kRespCqeFlush,
                                                          &kReqRemoteAccess,
                                                          &kRespRemoteAccess,
                                                          &kReqRemoteInvalid,
                                                          &kRespLocalLength};

}  // namespace

const CounterSpec* FindHwCounter(std::string_view file) {
  for (const CounterSpec& spec : kHwCounters) {
    if (spec.file == file) return &spec;
  }
  return nullptr;
}

std::span<const CounterSpec> HwCounterTable() { return kHwCounters; }
std::span<const MetricDesc* const> HwCounterMetrics() { return kHwCurated; }

}  // namespace fabricwatch::rdma
