#include "collectors/rdma/rdma_counters.h"

#include <array>

#include "collectors/rdma/rdma_metrics.h"

namespace fabricwatch::rdma {
namespace {

// ---- IBA PortCounters / PortCountersExtended (docs/reference.md §1.4; IBA vol. 1
// §16.1.3.5/16.1.4.11, kernel drivers/infiniband/core/sysfs.c PORT_PMA_ATTR tables).
constexpr MetricDesc kRcvErrors{
    "fabric_rdma_port_receive_errors_total",
    "Received packets with errors (counters/port_rcv_errors; 16-bit, saturates).",
    MetricKind::kCounter, kPortLabels};
constexpr MetricDesc kRcvRemotePhysErrors{
    "fabric_rdma_port_receive_remote_physical_errors_total",
    "Received packets marked bad by an upstream hop (counters/port_rcv_remote_physical_errors; "
    "16-bit, saturates).",
    MetricKind::kCounter, kPortLabels};
constexpr MetricDesc kRcvSwitchRelayErrors{
    "fabric_rdma_port_receive_switch_relay_errors_total",
    "Packets that could not be relayed (counters/port_rcv_switch_relay_errors; 16-bit, "
    "saturates).",
    MetricKind::kCounter, kPortLabels};
constexpr MetricDesc kXmitDiscards{
    "fabric_rdma_port_transmit_discards_total",
    "Outbound packets discarded because the port was down or congested "
    "(counters/port_xmit_discards; 16-bit, saturates).",
    MetricKind::kCounter, kPortLabels};
constexpr MetricDesc kXmitConstraintErrors{
    "fabric_rdma_port_transmit_constraint_errors_total",
    "Packets not sent because of partition or raw filtering "
    "(counters/port_xmit_constraint_errors; 8-bit, saturates).",
    MetricKind::kCounter, kPortLabels};
constexpr MetricDesc kRcvConstraintErrors{
    "fabric_rdma_port_receive_constraint_errors_total",
    "Received packets dropped because of partition or raw filtering "
    "(counters/port_rcv_constraint_errors; 8-bit, saturates).",
    MetricKind::kCounter, kPortLabels};
constexpr MetricDesc kVl15Dropped{
    "fabric_rdma_port_vl15_dropped_total",
    "Incoming VL15 (subnet management) packets dropped for lack of resources "
    "(counters/VL15_dropped; 16-bit, saturates).",
    MetricKind::kCounter, kPortLabels};
constexpr MetricDesc kXmitBytes{
    "fabric_rdma_port_transmit_bytes_total",
    "Data bytes transmitted (counters/port_xmit_data or counters_ext/port_xmit_data_64, which "
    "count 4-octet words and are multiplied by 4 here). On mlx5 RoCE ports this is RDMA traffic "
    "only.",
    MetricKind::kCounter, kPortLabels};
constexpr MetricDesc kRcvBytes{
    "fabric_rdma_port_receive_bytes_total",
    "Data bytes received (counters/port_rcv_data or counters_ext/port_rcv_data_64, 4-octet words "
    "multiplied by 4 here). On mlx5 RoCE ports this is RDMA traffic only.",
    MetricKind::kCounter, kPortLabels};
constexpr MetricDesc kXmitPackets{
    "fabric_rdma_port_transmit_packets_total",
    "Packets transmitted (counters/port_xmit_packets or counters_ext/port_xmit_packets_64).",
    MetricKind::kCounter, kPortLabels};
constexpr MetricDesc kRcvPackets{
    "fabric_rdma_port_receive_packets_total",
    "Packets received (counters/port_rcv_packets or counters_ext/port_rcv_packets_64).",
    MetricKind::kCounter, kPortLabels};
constexpr MetricDesc kXmitWait{
    "fabric_rdma_port_transmit_wait_total",
    "Ticks during which the port had data to send but no flow-control credits "
    "(counters/port_xmit_wait; the tick length is implementation-defined).",
    MetricKind::kCounter, kPortLabels};
constexpr MetricDesc kUnicastXmit{"fabric_rdma_port_unicast_transmit_packets_total",
                                  "Unicast packets transmitted (counters/unicast_xmit_packets or "
                                  "counters_ext/port_unicast_xmit_packets).",
                                  MetricKind::kCounter, kPortLabels};
constexpr MetricDesc kUnicastRcv{"fabric_rdma_port_unicast_receive_packets_total",
                                 "Unicast packets received (counters/unicast_rcv_packets or "
                                 "counters_ext/port_unicast_rcv_packets).",
                                 MetricKind::kCounter, kPortLabels};
constexpr MetricDesc kMulticastXmit{
    "fabric_rdma_port_multicast_transmit_packets_total",
    "Multicast packets transmitted (counters/multicast_xmit_packets or "
    "counters_ext/port_multicast_xmit_packets).",
    MetricKind::kCounter, kPortLabels};
constexpr MetricDesc kMulticastRcv{"fabric_rdma_port_multicast_receive_packets_total",
                                   "Multicast packets received (counters/multicast_rcv_packets or "
                                   "counters_ext/port_multicast_rcv_packets).",
                                   MetricKind::kCounter, kPortLabels};

constexpr CounterSpec kPmaCounters[] = {
    {"symbol_error", &kSymbolErrors, 1, kSymbolErrors.range.bits},
    {"link_error_recovery", &kLinkErrorRecovery, 1, kLinkErrorRecovery.range.bits},
    {"link_downed", &kLinkDowned, 1, kLinkDowned.range.bits},
    {"port_rcv_errors", &kRcvErrors, 1, 16},
    {"port_rcv_remote_physical_errors", &kRcvRemotePhysErrors, 1, 16},
    {"port_rcv_switch_relay_errors", &kRcvSwitchRelayErrors, 1, 16},
    {"port_xmit_discards", &kXmitDiscards, 1, 16},
    {"port_xmit_constraint_errors", &kXmitConstraintErrors, 1, 8},
    {"port_rcv_constraint_errors", &kRcvConstraintErrors, 1, 8},
    {"local_link_integrity_errors", &kLocalLinkIntegrity, 1, kLocalLinkIntegrity.range.bits},
    {"excessive_buffer_overrun_errors", &kExcessiveBufferOverrun, 1,
     kExcessiveBufferOverrun.range.bits},
    {"VL15_dropped", &kVl15Dropped, 1, 16},
    // 32-bit when the PortCountersExtended table is not in use (the collector knows which);
    // port_xmit_wait always comes from the 32-bit PortCounters (core/sysfs.c pma_attrs_ext).
    {"port_xmit_data", &kXmitBytes, 4, 32, true},
    {"port_rcv_data", &kRcvBytes, 4, 32, true},
    {"port_xmit_packets", &kXmitPackets, 1, 32, true},
    {"port_rcv_packets", &kRcvPackets, 1, 32, true},
    {"port_xmit_wait", &kXmitWait, 1, 32},
    {"unicast_xmit_packets", &kUnicastXmit, 1, 0},
    {"unicast_rcv_packets", &kUnicastRcv, 1, 0},
    {"multicast_xmit_packets", &kMulticastXmit, 1, 0},
    {"multicast_rcv_packets", &kMulticastRcv, 1, 0},
    // counters_ext/ (mlx4): 64-bit; they replace their 32-bit counters/ twins.
    {"port_xmit_data_64", &kXmitBytes, 4, 0},
    {"port_rcv_data_64", &kRcvBytes, 4, 0},
    {"port_xmit_packets_64", &kXmitPackets, 1, 0},
    {"port_rcv_packets_64", &kRcvPackets, 1, 0},
    {"port_unicast_xmit_packets", &kUnicastXmit, 1, 0},
    {"port_unicast_rcv_packets", &kUnicastRcv, 1, 0},
    {"port_multicast_xmit_packets", &kMulticastXmit, 1, 0},
    {"port_multicast_rcv_packets", &kMulticastRcv, 1, 0},
};

// ---- hw_counters (docs/reference.md §1.6; kernel drivers/infiniband/hw/mlx5/counters.c,
// drivers/infiniband/hw/irdma/verbs.c). Vendor names that mean the same thing share a metric,
// so congestion dashboards work across mlx5 and irdma.
constexpr MetricDesc kCnpSent{
    "fabric_rdma_port_cnp_sent_total",
    "Congestion notification packets (CNPs) sent by this port as notification point in reply "
    "to ECN-marked packets (mlx5 np_cnp_sent, irdma cnpSent).",
    MetricKind::kCounter, kPortLabels};
constexpr MetricDesc kCnpHandled{
    "fabric_rdma_port_cnp_handled_total",
    "CNPs received and acted on by this port as reaction point, i.e. its send rate was "
    "reduced (mlx5 rp_cnp_handled, irdma cnpHandled).",
    MetricKind::kCounter, kPortLabels};
constexpr MetricDesc kCnpIgnored{
    "fabric_rdma_port_cnp_ignored_total",
    "CNPs received but ignored, e.g. congestion control not enabled for the flow or priority "
    "(mlx5 rp_cnp_ignored, irdma cnpIgnored).",
    MetricKind::kCounter, kPortLabels};
constexpr MetricDesc kEcnMarked{"fabric_rdma_port_ecn_marked_packets_total",
                                "RoCEv2 packets received with the ECN congestion-experienced mark "
                                "(mlx5 np_ecn_marked_roce_packets, irdma RxECNMrkd).",
                                MetricKind::kCounter, kPortLabels};
constexpr MetricDesc kOutOfBuffer{
    "fabric_rdma_port_out_of_buffer_drops_total",
    "Packets dropped because the receive queue had no posted buffer (mlx5 out_of_buffer): the "
    "receiving application is not keeping up.",
    MetricKind::kCounter, kPortLabels};
constexpr MetricDesc kOutOfSequence{
    "fabric_rdma_port_out_of_sequence_packets_total",
    "Out-of-order packets received, a sign of loss upstream (mlx5 out_of_sequence).",
    MetricKind::kCounter, kPortLabels};
constexpr MetricDesc kPacketSeqErr{
    "fabric_rdma_port_packet_sequence_errors_total",
    "NAK sequence-error packets received by a requester (mlx5 packet_seq_err): loss.",
    MetricKind::kCounter, kPortLabels};
constexpr MetricDesc kImpliedNak{
    "fabric_rdma_port_implied_nak_sequence_errors_total",
    "Implied NAK sequence errors seen by a requester (mlx5 implied_nak_seq_err).",
    MetricKind::kCounter, kPortLabels};
constexpr MetricDesc kLocalAckTimeout{
    "fabric_rdma_port_local_ack_timeouts_total",
    "ACK timer expirations of reliable QPs, the classic loss indicator "
    "(mlx5 local_ack_timeout_err).",
    MetricKind::kCounter, kPortLabels};
constexpr MetricDesc kDuplicateRequest{
    "fabric_rdma_port_duplicate_requests_total",
    "Requests received that had already been executed, because the peer retransmitted "
    "(mlx5 duplicate_request).",
    MetricKind::kCounter, kPortLabels};
constexpr MetricDesc kRnrNakRetry{
    "fabric_rdma_port_rnr_nak_retries_total",
    "Receiver-not-ready NAKs received while the retry limit was not yet exceeded "
    "(mlx5 rnr_nak_retry_err).",
    MetricKind::kCounter, kPortLabels};
constexpr MetricDesc kTransportRetriesExceeded{
    "fabric_rdma_port_transport_retries_exceeded_total",
    "QPs that exceeded their transport retry count and went to error: a connection was lost "
    "(mlx5 req_transport_retries_exceeded).",
    MetricKind::kCounter, kPortLabels};
constexpr MetricDesc kRnrRetriesExceeded{
    "fabric_rdma_port_rnr_retries_exceeded_total",
    "QPs that exceeded their RNR retry count and went to error (mlx5 req_rnr_retries_exceeded).",
    MetricKind::kCounter, kPortLabels};
constexpr MetricDesc kAdpRetrans{"fabric_rdma_port_adaptive_retransmissions_total",
                                 "Adaptive retransmissions (mlx5 roce_adp_retrans).",
                                 MetricKind::kCounter, kPortLabels};
constexpr MetricDesc kAdpRetransTimeouts{
    "fabric_rdma_port_adaptive_retransmission_timeouts_total",
    "Timeouts under adaptive retransmission (mlx5 roce_adp_retrans_to).", MetricKind::kCounter,
    kPortLabels};
constexpr MetricDesc kSlowRestart{
    "fabric_rdma_port_slow_restarts_total",
    "Times slow restart was used after loss (mlx5 roce_slow_restart).", MetricKind::kCounter,
    kPortLabels};
constexpr MetricDesc kSlowRestartCnps{
    "fabric_rdma_port_slow_restart_cnps_total",
    "CNPs generated by slow restart (mlx5 roce_slow_restart_cnps).", MetricKind::kCounter,
    kPortLabels};
constexpr MetricDesc kSlowRestartTrans{
    "fabric_rdma_port_slow_restart_transitions_total",
    "Transitions into the slow-restart state (mlx5 roce_slow_restart_trans).", MetricKind::kCounter,
    kPortLabels};
constexpr MetricDesc kIcrcErrors{
    "fabric_rdma_port_icrc_errors_total",
    "RoCE packets received with an invalid ICRC, i.e. corrupted (mlx5 rx_icrc_encapsulated).",
    MetricKind::kCounter, kPortLabels};
constexpr MetricDesc kRxWriteRequests{
    "fabric_rdma_port_receive_write_requests_total",
    "RDMA WRITE requests received as responder (mlx5 rx_write_requests).", MetricKind::kCounter,
    kPortLabels};
constexpr MetricDesc kRxReadRequests{
    "fabric_rdma_port_receive_read_requests_total",
    "RDMA READ requests received as responder (mlx5 rx_read_requests).", MetricKind::kCounter,
    kPortLabels};
constexpr MetricDesc kRxAtomicRequests{
    "fabric_rdma_port_receive_atomic_requests_total",
    "Atomic requests received as responder (mlx5 rx_atomic_requests).", MetricKind::kCounter,
    kPortLabels};
constexpr MetricDesc kRxDctConnect{"fabric_rdma_port_receive_dct_connects_total",
                                   "DC target connect requests received (mlx5 rx_dct_connect).",
                                   MetricKind::kCounter, kPortLabels};
constexpr MetricDesc kReqCqeErrors{"fabric_rdma_port_requester_cqe_errors_total",
                                   "Requester completions with error (mlx5 req_cqe_error).",
                                   MetricKind::kCounter, kPortLabels};
constexpr MetricDesc kRespCqeErrors{"fabric_rdma_port_responder_cqe_errors_total",
                                    "Responder completions with error (mlx5 resp_cqe_error).",
                                    MetricKind::kCounter, kPortLabels};
constexpr MetricDesc kReqCqeFlush{
    "fabric_rdma_port_requester_cqe_flush_errors_total",
    "Requester completions flushed because the QP moved to error (mlx5 req_cqe_flush_error).",
    MetricKind::kCounter, kPortLabels};
constexpr MetricDesc kRespCqeFlush{
    "fabric_rdma_port_responder_cqe_flush_errors_total",
    "Responder completions flushed because the QP moved to error (mlx5 resp_cqe_flush_error).",
    MetricKind::kCounter, kPortLabels};
constexpr MetricDesc kReqRemoteAccess{
    "fabric_rdma_port_requester_remote_access_errors_total",
    "Remote access (rkey or permission) errors seen by a requester "
    "(mlx5 req_remote_access_errors).",
    MetricKind::kCounter, kPortLabels};
constexpr MetricDesc kRespRemoteAccess{
    "fabric_rdma_port_responder_remote_access_errors_total",
    "Remote access errors seen by a responder (mlx5 resp_remote_access_errors).",
    MetricKind::kCounter, kPortLabels};
constexpr MetricDesc kReqRemoteInvalid{
    "fabric_rdma_port_requester_remote_invalid_requests_total",
    "Remote Invalid Request NAKs received by a requester (mlx5 req_remote_invalid_request).",
    MetricKind::kCounter, kPortLabels};
constexpr MetricDesc kRespLocalLength{
    "fabric_rdma_port_responder_local_length_errors_total",
    "Responder local length errors (mlx5 resp_local_length_error).", MetricKind::kCounter,
    kPortLabels};

constexpr CounterSpec kHwCounters[] = {
    {"np_cnp_sent", &kCnpSent, 1, 0},
    {"cnpSent", &kCnpSent, 1, 0},
    {"rp_cnp_handled", &kCnpHandled, 1, 0},
    {"cnpHandled", &kCnpHandled, 1, 0},
    {"rp_cnp_ignored", &kCnpIgnored, 1, 0},
    {"cnpIgnored", &kCnpIgnored, 1, 0},
    {"np_ecn_marked_roce_packets", &kEcnMarked, 1, 0},
    {"RxECNMrkd", &kEcnMarked, 1, 0},
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
};

constexpr std::array<const MetricDesc*, 52> kCurated = {
    &kSymbolErrors, &kLinkErrorRecovery, &kLinkDowned, &kRcvErrors, &kRcvRemotePhysErrors,
    &kRcvSwitchRelayErrors, &kXmitDiscards, &kXmitConstraintErrors, &kRcvConstraintErrors,
    &kLocalLinkIntegrity, &kExcessiveBufferOverrun, &kVl15Dropped, &kXmitBytes, &kRcvBytes,
    &kXmitPackets, &kRcvPackets, &kXmitWait, &kUnicastXmit, &kUnicastRcv, &kMulticastXmit,
    &kMulticastRcv, &kCnpSent, &kCnpHandled, &kCnpIgnored, &kEcnMarked, &kOutOfBuffer,
    &kOutOfSequence, &kPacketSeqErr, &kImpliedNak, &kLocalAckTimeout, &kDuplicateRequest,
    &kRnrNakRetry, &kTransportRetriesExceeded, &kRnrRetriesExceeded, &kAdpRetrans,
    &kAdpRetransTimeouts, &kSlowRestart, &kSlowRestartCnps, &kSlowRestartTrans, &kIcrcErrors,
    &kRxWriteRequests, &kRxReadRequests, &kRxAtomicRequests, &kRxDctConnect, &kReqCqeErrors,
    &kRespCqeErrors, &kReqCqeFlush, &kRespCqeFlush, &kReqRemoteAccess, &kRespRemoteAccess,
    &kReqRemoteInvalid, &kRespLocalLength};

template <size_t N>
const CounterSpec* Find(const CounterSpec (&table)[N], std::string_view file) {
  for (const CounterSpec& spec : table) {
    if (spec.file == file) return &spec;
  }
  return nullptr;
}

}  // namespace

const CounterSpec* FindPmaCounter(std::string_view file) { return Find(kPmaCounters, file); }
const CounterSpec* FindHwCounter(std::string_view file) { return Find(kHwCounters, file); }
std::span<const MetricDesc* const> CuratedCounterMetrics() { return kCurated; }

}  // namespace fabricwatch::rdma
