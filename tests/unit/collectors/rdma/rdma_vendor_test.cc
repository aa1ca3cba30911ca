// Collector `rdma` on the hw_counters of vendors beyond mlx5: bnxt_re, irdma (gen2 and gen3
// names) and efa, replayed from tests/fixtures/real/sysfs/ (SOURCES.md says which values are
// captured and which invented). Each vendor's loss and congestion counters must land in the same
// curated families mlx5's do, with their values; the counters with no equivalent stay under
// fabric_rdma_port_hw_stat_total{counter}.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <string_view>
#include <utility>

#include "collectors/rdma/rdma.h"
#include "collectors/rdma/rdma_counters.h"
#include "collectors/sys/sysfs.h"
#include "tests/testing/collector_context.h"
#include "tests/testing/test_paths.h"

namespace fabricwatch::rdma {
namespace {

using testing::FixturePath;
using ::testing::HasSubstr;
using ::testing::Not;

MATCHER_P(HasLine, line, "has the line \"" + std::string(line) + "\"") {
  return ("\n" + std::string(arg)).find("\n" + std::string(line) + "\n") != std::string::npos;
}

// One collection of the replay tree `scenario` (under tests/fixtures/real/sysfs/).
std::string CollectOnce(const std::string& scenario) {
  testing::CollectorTestContext inputs(FixturePath("real/sysfs/" + scenario + "/sys"));
  auto collector = NewRdmaCollector(inputs.Context());
  EXPECT_TRUE(collector) << collector.error().ToString();
  if (!collector) return {};
  MetricSink sink;
  const Status status = (*collector)->Collect(sink);
  EXPECT_TRUE(status.ok()) << status.ToString();
  EXPECT_EQ(sink.error_count(), 0u);
  return testing::Exposition(sink.TakeFamilies());
}

std::string Line(std::string_view family, std::string_view device, std::string_view value) {
  return std::string(family) + "{device=\"" + std::string(device) + "\",port=\"1\"} " +
         std::string(value);
}

std::string Generic(std::string_view device, std::string_view counter, std::string_view value) {
  return "fabric_rdma_port_hw_stat_total{device=\"" + std::string(device) +
         "\",port=\"1\",counter=\"" + std::string(counter) + "\"} " + std::string(value);
}

// The loss and congestion counters whose values both replay trees of bnxt_re hold (v6.6 and v6.18
// names), in the family each must land in.
void ExpectBnxtReSharedFamilies(const std::string& text) {
  const std::string d = "bnxt_re0";
  const std::pair<std::string_view, std::string_view> kShared[] = {
      {"fabric_rdma_port_cnp_sent_total", "5120"},
      {"fabric_rdma_port_ecn_marked_packets_total", "5133"},
      {"fabric_rdma_port_local_ack_timeouts_total", "17"},
      {"fabric_rdma_port_packet_sequence_errors_total", "9"},
      {"fabric_rdma_port_out_of_sequence_packets_total", "23"},
      {"fabric_rdma_port_out_of_buffer_drops_total", "7"},
      {"fabric_rdma_port_duplicate_requests_total", "11"},
      {"fabric_rdma_port_rnr_nak_retries_total", "4"},
      {"fabric_rdma_port_transport_retries_exceeded_total", "1"},
      {"fabric_rdma_port_requester_remote_access_errors_total", "6"},
      {"fabric_rdma_port_requester_remote_invalid_requests_total", "3"},
      {"fabric_rdma_port_receive_write_requests_total", "88210311"},
      {"fabric_rdma_port_transmit_bytes_total", "1961963339776"},
  };
  for (const auto& [family, value] : kShared) EXPECT_THAT(text, HasLine(Line(family, d, value)));
}

TEST(RdmaVendorTest, bnxt_re_loss_and_congestion_counters_share_the_curated_families) {
  const std::string text = CollectOnce("bnxt_re-kernel-v6.6-names");
  const std::string d = "bnxt_re0";
  ExpectBnxtReSharedFamilies(text);
  EXPECT_THAT(text, HasLine(Line("fabric_rdma_port_cnp_received_total", d, "6014")));
  EXPECT_THAT(text, HasLine(Line("fabric_rdma_port_receive_read_requests_total", d, "120044")));
  EXPECT_THAT(text, HasLine(Line("fabric_rdma_port_receive_atomic_requests_total", d, "15")));
  // Bytes are bytes here (no 4-octet-word scaling as for counters/port_xmit_data).
  EXPECT_THAT(text, HasLine(Line("fabric_rdma_port_receive_bytes_total", d, "1973924782080")));
  EXPECT_THAT(text, HasLine(Line("fabric_rdma_port_transmit_packets_total", d, "479005112")));
  EXPECT_THAT(text, HasLine(Line("fabric_rdma_port_receive_packets_total", d, "481920113")));
  // No equivalent: kept by name. No CNP "handled" split, no ICRC, no link_downed.
  EXPECT_THAT(text, HasLine(Generic(d, "missing_resp", "2")));
  EXPECT_THAT(text, HasLine(Generic(d, "rx_roce_good_bytes", "1973924700000")));
  EXPECT_THAT(text, Not(HasSubstr("fabric_rdma_port_cnp_handled_total{device=\"bnxt_re0\"")));
  EXPECT_THAT(text, Not(HasSubstr("fabric_rdma_port_link_downed_total{device=\"bnxt_re0\"")));
  // The port's facts: RoCE, state ACTIVE, the rate the detectors read.
  EXPECT_THAT(text, HasLine(Line("fabric_rdma_port_state", d, "4")));
  EXPECT_THAT(text, HasLine(Line("fabric_rdma_port_rate_bytes_per_second", d, "25000000000")));
}

// Linux 6.18 renamed bnxt_re's counters after mlx5's (docs/reference.md §1.6): the same values must
// land in the same families, but for the received CNPs, now rp_cnp_handled. A node that upgrades
// its kernel keeps its dashboards and detectors.
TEST(RdmaVendorTest, bnxt_re_linux_6_18_names_land_in_the_same_families) {
  const std::string text = CollectOnce("bnxt_re-kernel-v6.18-names");
  const std::string d = "bnxt_re0";
  ExpectBnxtReSharedFamilies(text);
  EXPECT_THAT(text, HasLine(Line("fabric_rdma_port_cnp_handled_total", d, "6014")));
  EXPECT_THAT(text, Not(HasSubstr("fabric_rdma_port_cnp_received_total{device=\"bnxt_re0\"")));
  EXPECT_THAT(text, HasLine(Line("fabric_rdma_port_requester_cqe_errors_total", d, "9")));
  // The former missing_resp is an implied NAK now, by the driver's own name.
  EXPECT_THAT(text, Not(HasSubstr("counter=\"missing_resp\"")));
  EXPECT_THAT(text, Not(HasSubstr("counter=\"active_qps\"")));
  EXPECT_THAT(text, HasLine(Generic(d, "rx_roce_good_bytes", "1973924700000")));
}

TEST(RdmaVendorTest, irdma_gen2_congestion_and_gen3_loss_counters_share_the_curated_families) {
  const std::string text = CollectOnce("irdma-kernel-names");
  // E810 (gen2): DCQCN counters only; TCP/IP counters keep their names.
  EXPECT_THAT(text, HasLine(Line("fabric_rdma_port_cnp_handled_total", "irdma0", "4410")));
  EXPECT_THAT(text, HasLine(Line("fabric_rdma_port_cnp_ignored_total", "irdma0", "12")));
  EXPECT_THAT(text, HasLine(Line("fabric_rdma_port_cnp_sent_total", "irdma0", "3987")));
  EXPECT_THAT(text, HasLine(Line("fabric_rdma_port_ecn_marked_packets_total", "irdma0", "4021")));
  EXPECT_THAT(text, HasLine(Generic("irdma0", "tcpRetransSegs", "31")));
  EXPECT_THAT(text, HasLine(Generic("irdma0", "ip4InOctets", "918273645501")));
  EXPECT_THAT(text, Not(HasSubstr("fabric_rdma_port_local_ack_timeouts_total{device=\"irdma0\"")));
  // gen3: loss counters, file names with blanks.
  const std::string d = "irdma1";
  EXPECT_THAT(text, HasLine(Line("fabric_rdma_port_local_ack_timeouts_total", d, "44")));
  EXPECT_THAT(text, HasLine(Line("fabric_rdma_port_packet_sequence_errors_total", d, "21")));
  EXPECT_THAT(text, HasLine(Line("fabric_rdma_port_implied_nak_sequence_errors_total", d, "6")));
  EXPECT_THAT(text, HasLine(Line("fabric_rdma_port_out_of_sequence_packets_total", d, "57")));
  EXPECT_THAT(text, HasLine(Line("fabric_rdma_port_rnr_nak_retries_total", d, "8")));
  EXPECT_THAT(text, HasLine(Line("fabric_rdma_port_icrc_errors_total", d, "2")));
  EXPECT_THAT(text, HasLine(Line("fabric_rdma_port_cnp_handled_total", d, "880")));
  EXPECT_THAT(text, HasLine(Generic(d, "RNR sent", "5")));
  EXPECT_THAT(text, HasLine(Generic(d, "InRdmaWrites", "7712004")));
}

TEST(RdmaVendorTest, efa_captured_counters_give_traffic_and_keep_the_rest_by_name) {
  // Values captured on a p4d-class instance (SOURCES.md): the driver of 2023, before retrans_*.
  const std::string text = CollectOnce("efa-ib-sample-capture");
  const std::string d = "rdmap144s27";
  EXPECT_THAT(text, HasLine(Line("fabric_rdma_port_transmit_bytes_total", d, "84417311044934")));
  EXPECT_THAT(text, HasLine(Line("fabric_rdma_port_receive_bytes_total", d, "85466418782288")));
  EXPECT_THAT(text, HasLine(Line("fabric_rdma_port_transmit_packets_total", d, "11002381069")));
  EXPECT_THAT(text, HasLine(Line("fabric_rdma_port_receive_packets_total", d, "1776383627")));
  EXPECT_THAT(text, HasLine(Generic(d, "rdma_read_resp_bytes", "82752269975546")));
  EXPECT_THAT(text, HasLine(Generic(d, "rx_drops", "0")));
  EXPECT_THAT(text, Not(HasSubstr("counter=\"lifespan\"")));
  // EFA has no CNP, ECN, PFC or IBA error counters: none of those families for it.
  for (const char* family : {"cnp_sent", "cnp_handled", "ecn_marked_packets", "symbol_errors",
                             "link_downed", "local_ack_timeouts"}) {
    EXPECT_THAT(text, Not(HasSubstr(std::string("fabric_rdma_port_") + family +
                                    "_total{device=\"rdmap144s27\"")))
        << family;
  }
}

TEST(RdmaVendorTest, efa_network_statistics_map_timeouts_and_retransmissions) {
  const std::string text = CollectOnce("efa-aws-user-guide");
  const std::string d = "rdmap0s31";
  EXPECT_THAT(text, HasLine(Line("fabric_rdma_port_local_ack_timeouts_total", d, "0")));
  EXPECT_THAT(text, HasLine(Line("fabric_rdma_port_retransmitted_packets_total", d, "0")));
  EXPECT_THAT(text, HasLine(Generic(d, "unresponsive_remote_events", "0")));
  EXPECT_THAT(text, HasLine(Generic(d, "impaired_remote_conn_events", "0")));
  EXPECT_THAT(text, HasLine(Generic(d, "retrans_bytes", "0")));
}

TEST(RdmaVendorTest, hw_counter_names_are_unique_and_every_family_is_in_the_reference) {
  std::set<std::string_view> names;
  std::set<const MetricDesc*> curated;
  for (const MetricDesc* desc : CuratedCounterMetrics()) curated.insert(desc);
  for (const CounterSpec& spec : HwCounterTable()) {
    EXPECT_TRUE(names.insert(spec.file).second) << "duplicate row " << spec.file;
    EXPECT_TRUE(curated.contains(spec.desc)) << spec.file << " maps to an unlisted family";
    EXPECT_EQ(FindHwCounter(spec.file), &spec);
  }
  EXPECT_EQ(FindHwCounter("lifespan"), nullptr);
  EXPECT_EQ(FindHwCounter("tcpRetransSegs"), nullptr);
}

}  // namespace
}  // namespace fabricwatch::rdma
