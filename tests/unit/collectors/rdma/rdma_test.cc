// Collector `rdma` against fixture trees: facts of the fixtures, absent sources, injected
// failures (through FakeFileSystem: CI runs as root, so permissions cannot fail for real),
// kept-open descriptors, rediscovery, and devices that come and go between collections. The
// golden expositions are data: tests/golden/collectors/rdma/ (golden_test.cc).

#include "collectors/rdma/rdma.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "collectors/sys/sysfs.h"
#include "tests/testing/collector_context.h"
#include "tests/testing/fake_filesystem.h"
#include "tests/testing/log_lines.h"
#include "tests/testing/test_paths.h"

namespace fabricwatch::rdma {
namespace {

namespace fs = std::filesystem;
using fabricwatch::testing::CountLogLines;
using testing::FakeFileSystem;
using testing::FixturePath;
using ::testing::HasSubstr;
using ::testing::Not;

// The collector keeps at most RLIMIT_NOFILE/2 files open (read when it is built); the
// kept-open tests need every file of rdma-mlx5 (about 170) to fit.
bool RaiseFdLimit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return false;
  if (limit.rlim_cur != RLIM_INFINITY && limit.rlim_cur < 1024) {
    limit.rlim_cur = std::min<rlim_t>(1024, limit.rlim_max);
    setrlimit(RLIMIT_NOFILE, &limit);
    getrlimit(RLIMIT_NOFILE, &limit);
  }
  return limit.rlim_cur == RLIM_INFINITY || limit.rlim_cur >= 1024;
}

// The exposition has `line` as one whole line.
MATCHER_P(HasLine, line, "has the line \"" + std::string(line) + "\"") {
  return ("\n" + std::string(arg)).find("\n" + std::string(line) + "\n") != std::string::npos;
}

int CountLines(const std::string& text, std::string_view prefix, std::string_view suffix) {
  std::istringstream lines(text);
  int n = 0;
  for (std::string line; std::getline(lines, line);) {
    if (line.starts_with(prefix) && line.ends_with(suffix)) ++n;
  }
  return n;
}

// The lines of an exposition that contain `needle`.
std::vector<std::string> LinesWith(const std::string& text, std::string_view needle) {
  std::istringstream lines(text);
  std::vector<std::string> out;
  for (std::string line; std::getline(lines, line);) {
    if (line.find(needle) != std::string::npos) out.push_back(line);
  }
  return out;
}

// Builds the collector over `root` with `fs` and runs collections.
class Harness {
 public:
  Harness(const std::string& root, const sys::FileSystem& fs, CollectorOptions options = {},
          std::shared_ptr<spdlog::logger> logger = nullptr)
      : inputs_(root, fs, std::move(options)) {
    if (logger != nullptr) inputs_.UseLogger(std::move(logger));
    auto collector = NewRdmaCollector(inputs_.Context());
    EXPECT_TRUE(collector) << collector.error().ToString();
    if (collector) collector_ = std::move(*collector);
  }

  struct Run {
    Status status;
    size_t errors;
    std::vector<Status> error_list;
    std::string text;
  };
  Run Collect() {
    MetricSink sink;
    Status status = collector_->Collect(sink);
    Run run{status, sink.error_count(), sink.errors(), ""};
    run.text = testing::Exposition(sink.TakeFamilies());
    return run;
  }
  // Tests move it forward (rediscovery-interval).
  testing::TestClock& clock() { return inputs_.clock(); }

 private:
  testing::CollectorTestContext inputs_;
  std::unique_ptr<Collector> collector_;
};

// A writable copy of a fixture tree (symlinks kept), removed at the end of the test.
class TreeCopy {
 public:
  explicit TreeCopy(std::string_view scenario) {
    root_ = fs::temp_directory_path() /
            ("fabricwatch-rdma-" + std::to_string(::getpid()) + "-" + std::to_string(counter_++));
    fs::remove_all(root_);
    fs::copy(FixturePath("sysfs/" + std::string(scenario)), root_,
             fs::copy_options::recursive | fs::copy_options::copy_symlinks);
  }
  ~TreeCopy() { fs::remove_all(root_); }
  std::string sys() const { return (root_ / "sys").string(); }
  std::string Path(const std::string& relative) const { return sys() + "/" + relative; }
  void Write(const std::string& relative, const std::string& value) const {
    std::ofstream(root_ / "sys" / relative, std::ios::trunc) << value << "\n";
  }

 private:
  static inline int counter_ = 0;
  fs::path root_;
};

const std::string kMlx5 = "sysfs/rdma-mlx5/sys";
const std::string kLegacy = "sysfs/rdma-legacy/sys";
const std::string kMalformed = "sysfs/rdma-malformed/sys";
const std::string kMlx5_0Port = "class/infiniband/mlx5_0/ports/1";
const std::string kMlx5_1Port = "class/infiniband/mlx5_1/ports/1";

// ---------------------------------------------------------------- facts

TEST(RdmaCollectorTest, mlx5_infiniband_port_facts) {
  sys::RealFileSystem real;
  Harness harness(FixturePath(kMlx5), real);
  const std::string text = harness.Collect().text;
  EXPECT_THAT(text, HasLine("fabric_rdma_device_info{device=\"mlx5_0\",node_type=\"CA\","
                            "fw_ver=\"28.39.1002\",node_guid=\"b83f:d203:00aa:bb02\","
                            "sys_image_guid=\"b83f:d203:00aa:bb02\",hca_type=\"MT4129\","
                            "board_id=\"MT_0000000838\",node_desc=\"gpu-node-17 mlx5_0\","
                            "pci_address=\"0000:18:00.0\",netdevs=\"ib0\"} 1"));
  // IPoIB: the netdev whose dev_port is 0 carries port 1 (the IB GID table names none).
  EXPECT_THAT(text, HasLine("fabric_rdma_port_info{device=\"mlx5_0\",port=\"1\",link_layer="
                            "\"InfiniBand\",netdev=\"ib0\",speed=\"NDR\"} 1"));
  EXPECT_THAT(text, HasLine("fabric_rdma_port_state{device=\"mlx5_0\",port=\"1\"} 4"));
  EXPECT_THAT(text, HasLine("fabric_rdma_port_active{device=\"mlx5_0\",port=\"1\"} 1"));
  EXPECT_THAT(text, HasLine("fabric_rdma_port_phys_state{device=\"mlx5_0\",port=\"1\"} 5"));
  EXPECT_THAT(text, HasLine("fabric_rdma_port_physical_link_up{device=\"mlx5_0\",port=\"1\"} 1"));
  // 400 Gb/s = 50 GB/s.
  EXPECT_THAT(text, HasLine("fabric_rdma_port_rate_bytes_per_second{device=\"mlx5_0\","
                            "port=\"1\"} 50000000000"));
  EXPECT_THAT(text, HasLine("fabric_rdma_port_lanes{device=\"mlx5_0\",port=\"1\"} 4"));
  EXPECT_THAT(text, HasLine("fabric_rdma_port_lid{device=\"mlx5_0\",port=\"1\"} 26"));
  EXPECT_THAT(text, HasLine("fabric_rdma_port_sm_lid{device=\"mlx5_0\",port=\"1\"} 1"));
  // 4-octet words become bytes; the first is above 2^32 (64-bit), the second below it but
  // still 64-bit because the unicast files prove the extended table.
  EXPECT_THAT(text, HasLine("fabric_rdma_port_transmit_bytes_total{device=\"mlx5_0\","
                            "port=\"1\"} 29554428907532"));
  EXPECT_THAT(text, HasLine("fabric_rdma_port_receive_bytes_total{device=\"mlx5_0\","
                            "port=\"1\"} 15669060056"));
  EXPECT_THAT(text, HasLine("fabric_rdma_port_unicast_transmit_packets_total{device=\"mlx5_0\","
                            "port=\"1\"} 5293846011"));
  EXPECT_THAT(text, HasLine("fabric_rdma_port_multicast_receive_packets_total{device=\"mlx5_0\","
                            "port=\"1\"} 1111"));
  // 64-bit data counters carry no saturation flag; the narrow error counters do.
  EXPECT_THAT(text, Not(HasSubstr("fabric_rdma_port_saturated{device=\"mlx5_0\",port=\"1\","
                                  "counter=\"port_xmit_data\"}")));
  EXPECT_THAT(text, Not(HasSubstr("fabric_rdma_port_saturated{device=\"mlx5_0\",port=\"1\","
                                  "counter=\"port_rcv_data\"}")));
  EXPECT_THAT(text, HasLine("fabric_rdma_port_saturated{device=\"mlx5_0\",port=\"1\","
                            "counter=\"link_downed\"} 0"));
  EXPECT_THAT(text, HasLine("fabric_rdma_port_link_downed_total{device=\"mlx5_0\",port=\"1\"} 1"));
  // hw_counters: curated names, the unknown one by its file name, lifespan nowhere.
  EXPECT_THAT(text, HasLine("fabric_rdma_port_local_ack_timeouts_total{device=\"mlx5_0\","
                            "port=\"1\"} 131"));
  EXPECT_THAT(text, HasLine("fabric_rdma_port_rnr_retries_exceeded_total{device=\"mlx5_0\","
                            "port=\"1\"} 2"));
  EXPECT_THAT(text, HasLine("fabric_rdma_port_transport_retries_exceeded_total{device="
                            "\"mlx5_0\",port=\"1\"} 1"));
  EXPECT_THAT(text, HasLine("fabric_rdma_port_out_of_buffer_drops_total{device=\"mlx5_0\","
                            "port=\"1\"} 23"));
  EXPECT_THAT(text, HasLine("fabric_rdma_port_adaptive_retransmissions_total{device=\"mlx5_0\","
                            "port=\"1\"} 99"));
  EXPECT_THAT(text, HasLine("fabric_rdma_port_hw_stat_total{device=\"mlx5_0\",port=\"1\","
                            "counter=\"resp_rnr_nak\"} 17"));
  EXPECT_THAT(text, Not(HasSubstr("lifespan")));
  EXPECT_THAT(text, Not(HasSubstr("fabric_rdma_port_pma_stat_total")));
  EXPECT_THAT(text, Not(HasSubstr("fabric_rdma_device_hw_stat_total")));
}

TEST(RdmaCollectorTest, mlx5_roce_lag_and_renamed_device_facts) {
  sys::RealFileSystem real;
  Harness harness(FixturePath(kMlx5), real);
  const std::string text = harness.Collect().text;
  // RoCE: the GID table names the netdev; no LIDs on Ethernet.
  EXPECT_THAT(text, HasLine("fabric_rdma_port_info{device=\"mlx5_1\",port=\"1\",link_layer="
                            "\"Ethernet\",netdev=\"enp65s0f1np1\",speed=\"HDR\"} 1"));
  EXPECT_THAT(text, Not(HasSubstr("fabric_rdma_port_lid{device=\"mlx5_1\"")));
  EXPECT_THAT(text, Not(HasSubstr("fabric_rdma_port_sm_lid{device=\"mlx5_1\"")));
  EXPECT_THAT(text, HasLine("fabric_rdma_port_rate_bytes_per_second{device=\"mlx5_1\","
                            "port=\"1\"} 25000000000"));
  // Saturated exactly where a counter sits at its all-ones maximum.
  EXPECT_THAT(text, HasLine("fabric_rdma_port_symbol_errors_total{device=\"mlx5_1\","
                            "port=\"1\"} 65535"));
  EXPECT_THAT(text, HasLine("fabric_rdma_port_saturated{device=\"mlx5_1\",port=\"1\","
                            "counter=\"symbol_error\"} 1"));
  EXPECT_THAT(text, HasLine("fabric_rdma_port_saturated{device=\"mlx5_1\",port=\"1\","
                            "counter=\"link_downed\"} 1"));
  EXPECT_THAT(text, HasLine("fabric_rdma_port_saturated{device=\"mlx5_1\",port=\"1\","
                            "counter=\"link_error_recovery\"} 0"));
  // Without the extended table the 32-bit data counters can saturate too: flagged (0 here).
  EXPECT_THAT(text, HasLine("fabric_rdma_port_saturated{device=\"mlx5_1\",port=\"1\","
                            "counter=\"port_xmit_data\"} 0"));
  EXPECT_THAT(text, HasLine("fabric_rdma_port_saturated{device=\"mlx5_1\",port=\"1\","
                            "counter=\"port_xmit_wait\"} 0"));
  EXPECT_EQ(CountLines(text, "fabric_rdma_port_saturated{", "} 1"), 2);
  EXPECT_THAT(text, Not(HasSubstr("fabric_rdma_port_unicast_transmit_packets_total{device="
                                  "\"mlx5_1\"")));
  // Congestion: one metric per meaning.
  EXPECT_THAT(text, HasLine("fabric_rdma_port_cnp_sent_total{device=\"mlx5_1\",port=\"1\"} "
                            "900110"));
  EXPECT_THAT(text, HasLine("fabric_rdma_port_cnp_handled_total{device=\"mlx5_1\",port=\"1\"} "
                            "884213"));
  EXPECT_THAT(text, HasLine("fabric_rdma_port_cnp_ignored_total{device=\"mlx5_1\",port=\"1\"} "
                            "12"));
  EXPECT_THAT(text, HasLine("fabric_rdma_port_ecn_marked_packets_total{device=\"mlx5_1\","
                            "port=\"1\"} 901377"));
  EXPECT_THAT(text, HasLine("fabric_rdma_port_icrc_errors_total{device=\"mlx5_1\",port=\"1\"} "
                            "2"));
  // RoCE LAG: the bond carries the port; the device link names the first PF.
  EXPECT_THAT(text, HasLine("fabric_rdma_port_info{device=\"mlx5_bond_0\",port=\"1\","
                            "link_layer=\"Ethernet\",netdev=\"bond0\",speed=\"HDR\"} 1"));
  EXPECT_THAT(text, HasSubstr("fabric_rdma_device_info{device=\"mlx5_bond_0\""));
  EXPECT_THAT(text, HasSubstr("pci_address=\"0000:c1:00.0\",netdevs=\"enp193s0f0np0\"} 1"));
  // A systemd-renamed device is found like any other; its down port still prints a rate.
  EXPECT_THAT(text, HasLine("fabric_rdma_port_state{device=\"ibp202s0\",port=\"1\"} 1"));
  EXPECT_THAT(text, HasLine("fabric_rdma_port_active{device=\"ibp202s0\",port=\"1\"} 0"));
  EXPECT_THAT(text, HasLine("fabric_rdma_port_phys_state{device=\"ibp202s0\",port=\"1\"} 3"));
  EXPECT_THAT(text, HasLine("fabric_rdma_port_physical_link_up{device=\"ibp202s0\",port=\"1\"} "
                            "0"));
  EXPECT_THAT(text, HasLine("fabric_rdma_port_lid{device=\"ibp202s0\",port=\"1\"} 65535"));
  EXPECT_THAT(text, HasLine("fabric_rdma_port_info{device=\"ibp202s0\",port=\"1\",link_layer="
                            "\"InfiniBand\",netdev=\"ibp202s0\",speed=\"SDR\"} 1"));
  // Port 2: state 0 and phys_state 0 are numbers like any other; no netdev has dev_port 1.
  EXPECT_THAT(text, HasLine("fabric_rdma_port_state{device=\"ibp202s0\",port=\"2\"} 0"));
  EXPECT_THAT(text, HasLine("fabric_rdma_port_phys_state{device=\"ibp202s0\",port=\"2\"} 0"));
  EXPECT_THAT(text, HasLine("fabric_rdma_port_rate_bytes_per_second{device=\"ibp202s0\","
                            "port=\"2\"} 625000000"));
  EXPECT_THAT(text, HasLine("fabric_rdma_port_lanes{device=\"ibp202s0\",port=\"2\"} 1"));
  EXPECT_THAT(text, HasLine("fabric_rdma_port_info{device=\"ibp202s0\",port=\"2\",link_layer="
                            "\"InfiniBand\",netdev=\"\",speed=\"DDR\"} 1"));
}

TEST(RdmaCollectorTest, legacy_driver_facts) {
  sys::RealFileSystem real;
  Harness harness(FixturePath(kLegacy), real);
  const std::string text = harness.Collect().text;
  // mlx4: counters_ext/ replaces the 32-bit twin (stuck at 2^32-1 in counters/).
  EXPECT_THAT(text, HasLine("fabric_rdma_port_transmit_bytes_total{device=\"mlx4_0\","
                            "port=\"1\"} 106036453180"));
  EXPECT_THAT(text, HasLine("fabric_rdma_port_receive_bytes_total{device=\"mlx4_0\","
                            "port=\"1\"} 21812386588"));
  EXPECT_THAT(text, Not(HasSubstr("fabric_rdma_port_saturated{device=\"mlx4_0\",port=\"1\","
                                  "counter=\"port_xmit_data")));
  EXPECT_THAT(text, HasLine("fabric_rdma_port_unicast_transmit_packets_total{device=\"mlx4_0\","
                            "port=\"1\"} 85733001"));
  EXPECT_THAT(text, HasLine("fabric_rdma_port_pma_stat_total{device=\"mlx4_0\",port=\"1\","
                            "counter=\"port_rcv_discards\"} 2"));
  EXPECT_THAT(text, HasLine("fabric_rdma_port_info{device=\"mlx4_0\",port=\"1\",link_layer="
                            "\"InfiniBand\",netdev=\"ib0\",speed=\"FDR\"} 1"));
  EXPECT_THAT(text, HasLine("fabric_rdma_port_info{device=\"mlx4_0\",port=\"2\",link_layer="
                            "\"Ethernet\",netdev=\"enp130s0d1\",speed=\"QDR\"} 1"));
  EXPECT_THAT(text, HasSubstr("netdevs=\"enp130s0d1,ib0\"} 1"));
  // hfi1: 64-bit data without unicast files; a board_id with spaces is one label value.
  EXPECT_THAT(text, HasLine("fabric_rdma_port_transmit_bytes_total{device=\"hfi1_0\","
                            "port=\"1\"} 1085336050176"));
  EXPECT_THAT(text, Not(HasSubstr("fabric_rdma_port_saturated{device=\"hfi1_0\",port=\"1\","
                                  "counter=\"port_xmit_data\"}")));
  EXPECT_THAT(text, HasSubstr("board_id=\"Intel Omni-Path Host Fabric Interface Adapter 100 "
                              "Series\""));
  // qib: 32-bit data and packet counters at 2^32-1 are saturated, and still exported.
  for (const char* counter :
       {"port_xmit_data", "port_rcv_data", "port_xmit_packets", "port_rcv_packets"}) {
    EXPECT_THAT(text, HasLine("fabric_rdma_port_saturated{device=\"qib0\",port=\"1\",counter=\"" +
                              std::string(counter) + "\"} 1"));
  }
  EXPECT_THAT(text, HasLine("fabric_rdma_port_transmit_bytes_total{device=\"qib0\",port=\"1\"} "
                            "17179869180"));
  EXPECT_EQ(CountLines(text, "fabric_rdma_port_saturated{", "} 1"), 4);
  // i40iw: "N/A (no PMA)" everywhere: no counter series at all, and no error.
  EXPECT_THAT(text, HasSubstr("fabric_rdma_device_info{device=\"i40iw0\",node_type=\"RNIC\""));
  EXPECT_THAT(text, HasLine("fabric_rdma_port_state{device=\"i40iw0\",port=\"1\"} 4"));
  EXPECT_EQ(CountLines(text, "fabric_rdma_port_saturated{device=\"i40iw0\"", ""), 0);
  EXPECT_THAT(text, Not(HasSubstr("_total{device=\"i40iw0\"")));
  // irdma's congestion names share mlx5's metrics; its other counters keep their names.
  EXPECT_THAT(text, HasLine("fabric_rdma_port_cnp_handled_total{device=\"irdma0\",port=\"1\"} "
                            "5521"));
  EXPECT_THAT(text, HasLine("fabric_rdma_port_cnp_ignored_total{device=\"irdma0\",port=\"1\"} "
                            "7"));
  EXPECT_THAT(text, HasLine("fabric_rdma_port_cnp_sent_total{device=\"irdma0\",port=\"1\"} "
                            "6010"));
  EXPECT_THAT(text, HasLine("fabric_rdma_port_ecn_marked_packets_total{device=\"irdma0\","
                            "port=\"1\"} 6123"));
  EXPECT_THAT(text, HasLine("fabric_rdma_port_hw_stat_total{device=\"irdma0\",port=\"1\","
                            "counter=\"InRdmaWrites\"} 88120"));
  // bnxt_re: no counters/ at all; its port hw counters join the curated families
  // (rdma_vendor_test.cc covers the whole table); one device-level counter.
  EXPECT_THAT(text, HasLine("fabric_rdma_port_cnp_received_total{device=\"bnxt_re0\","
                            "port=\"1\"} 3110"));
  EXPECT_THAT(text, HasLine("fabric_rdma_port_local_ack_timeouts_total{device=\"bnxt_re0\","
                            "port=\"1\"} 14"));
  EXPECT_THAT(text, HasLine("fabric_rdma_device_hw_stat_total{device=\"bnxt_re0\","
                            "counter=\"resize_cq_cnt\"} 3"));
  EXPECT_EQ(CountLines(text, "fabric_rdma_device_hw_stat_total{", ""), 1);
  EXPECT_THAT(text, HasSubstr("fabric_rdma_device_info{device=\"bnxt_re0\",node_type=\"CA\","
                              "fw_ver=\"224.0.110.0\",node_guid=\"5e1a:b2ff:fe01:7c40\","
                              "sys_image_guid=\"5e1a:b2ff:fe01:7c40\",hca_type=\"\","
                              "board_id=\"\""));
  EXPECT_THAT(text, Not(HasSubstr("lifespan")));
}

TEST(RdmaCollectorTest, malformed_values_are_omitted_counted_and_the_rest_emitted) {
  sys::RealFileSystem real;
  Harness harness(FixturePath(kMalformed), real);
  Harness::Run run = harness.Collect();
  ASSERT_TRUE(run.status.ok()) << run.status.ToString();
  // mlx5_0: node_type "CA", state "ACTIVE", rate "fast", lid 0x1ffff, symbol_error "12abc",
  // link_downed empty, hw out_of_buffer 2^64. VL15_dropped "N/A (no PMA)" is no error, and
  // mlx5_2 (no ports/) is skipped quietly.
  EXPECT_EQ(run.errors, 7u);
  std::string messages;
  for (const Status& error : run.error_list) messages += error.ToString() + "\n";
  for (const char* file :
       {"mlx5_0/node_type", "ports/1/state", "ports/1/rate", "ports/1/lid", "counters/symbol_error",
        "counters/link_downed", "hw_counters/out_of_buffer"}) {
    EXPECT_THAT(messages, HasSubstr(file));
  }

  // Each bad value is absent, not 0...
  const std::string bad = "{device=\"mlx5_0\",port=\"1\"}";
  for (const char* metric :
       {"fabric_rdma_port_state", "fabric_rdma_port_active",
        "fabric_rdma_port_rate_bytes_per_second", "fabric_rdma_port_lanes", "fabric_rdma_port_lid",
        "fabric_rdma_port_symbol_errors_total", "fabric_rdma_port_link_downed_total",
        "fabric_rdma_port_vl15_dropped_total", "fabric_rdma_port_out_of_buffer_drops_total"}) {
    EXPECT_THAT(run.text, Not(HasSubstr(metric + bad))) << metric;
  }
  EXPECT_THAT(run.text, Not(HasSubstr("{device=\"mlx5_0\",port=\"1\",counter=\"symbol_error\"}")));
  EXPECT_THAT(run.text, Not(HasSubstr("{device=\"mlx5_0\",port=\"1\",counter=\"link_downed\"}")));
  // ...and the good values next to them are still there.
  EXPECT_THAT(run.text, HasLine("fabric_rdma_port_phys_state" + bad + " 5"));
  EXPECT_THAT(run.text, HasLine("fabric_rdma_port_sm_lid" + bad + " 1"));
  EXPECT_THAT(run.text, HasLine("fabric_rdma_port_transmit_bytes_total" + bad + " 4000"));
  EXPECT_THAT(run.text, HasLine("fabric_rdma_port_out_of_sequence_packets_total" + bad + " 3"));
  EXPECT_THAT(run.text, HasLine("fabric_rdma_port_info{device=\"mlx5_0\",port=\"1\",link_layer="
                                "\"InfiniBand\",netdev=\"\",speed=\"\"} 1"));
  EXPECT_THAT(run.text, HasSubstr("fabric_rdma_device_info{device=\"mlx5_0\",node_type=\"\","));
  EXPECT_THAT(run.text, HasLine("fabric_rdma_port_state{device=\"mlx5_0\",port=\"2\"} 4"));
  // The healthy device is complete.
  const std::string good = "{device=\"mlx5_1\",port=\"1\"}";
  for (const std::string& line :
       {"fabric_rdma_port_state" + good + " 4", "fabric_rdma_port_active" + good + " 1",
        "fabric_rdma_port_phys_state" + good + " 5",
        "fabric_rdma_port_physical_link_up" + good + " 1",
        "fabric_rdma_port_rate_bytes_per_second" + good + " 50000000000",
        "fabric_rdma_port_lanes" + good + " 4", "fabric_rdma_port_lid" + good + " 28",
        "fabric_rdma_port_sm_lid" + good + " 1",
        "fabric_rdma_port_symbol_errors_total" + good + " 0",
        "fabric_rdma_port_transmit_bytes_total" + good + " 20000",
        "fabric_rdma_port_receive_bytes_total" + good + " 24000",
        "fabric_rdma_port_transmit_wait_total" + good + " 9",
        "fabric_rdma_port_out_of_buffer_drops_total" + good + " 1",
        "fabric_rdma_port_local_ack_timeouts_total" + good + " 3"}) {
    EXPECT_THAT(run.text, HasLine(line));
  }
  // Exactly what the healthy device gives on its own, without its broken neighbour.
  Harness alone(FixturePath(kMalformed), real, {{"device-include", "^mlx5_1$"}});
  Harness::Run alone_run = alone.Collect();
  EXPECT_EQ(alone_run.errors, 0u);
  EXPECT_EQ(LinesWith(run.text, "device=\"mlx5_1\""),
            LinesWith(alone_run.text, "device=\"mlx5_1\""));
  EXPECT_GT(LinesWith(alone_run.text, "device=\"mlx5_1\"").size(), 30u);
  EXPECT_THAT(run.text, Not(HasSubstr("mlx5_2")));
}

// ---------------------------------------------------------------- absent sources, options

TEST(RdmaCollectorTest, empty_root_is_no_data) {
  sys::RealFileSystem real;
  Harness harness(FixturePath("sysfs/empty/sys"), real);
  Harness::Run run = harness.Collect();
  EXPECT_EQ(run.status.code(), StatusCode::kNoData);
  EXPECT_EQ(run.errors, 0u);
  EXPECT_EQ(run.text, "");
}

TEST(RdmaCollectorTest, class_net_without_class_infiniband_is_no_data) {
  sys::RealFileSystem real;
  ASSERT_TRUE(fs::is_directory(FixturePath("sysfs/malformed/sys/class/net")));
  ASSERT_FALSE(fs::exists(FixturePath("sysfs/malformed/sys/class/infiniband")));
  Harness harness(FixturePath("sysfs/malformed/sys"), real);
  Harness::Run run = harness.Collect();
  EXPECT_EQ(run.status.code(), StatusCode::kNoData);
  EXPECT_THAT(run.status.message(), HasSubstr("class/infiniband"));
  EXPECT_EQ(run.errors, 0u);
  EXPECT_EQ(run.text, "");
}

TEST(RdmaCollectorTest, empty_class_infiniband_is_no_data) {
  TreeCopy tree("empty");
  fs::create_directories(tree.Path("class/infiniband"));
  sys::RealFileSystem real;
  Harness harness(tree.sys(), real);
  Harness::Run run = harness.Collect();
  EXPECT_EQ(run.status.code(), StatusCode::kNoData);
  EXPECT_EQ(run.errors, 0u);
  EXPECT_EQ(run.text, "");
}

TEST(RdmaCollectorTest, unreadable_class_infiniband_is_an_error_not_no_data) {
  const std::string root = FixturePath(kMlx5);
  FakeFileSystem fake;
  fake.Inject(FakeFileSystem::Op::kListDir, root + "/class/infiniband", EACCES);
  Harness harness(root, fake);
  Harness::Run run = harness.Collect();
  EXPECT_EQ(run.status.code(), StatusCode::kPermissionDenied);
  EXPECT_THAT(run.status.message(), HasSubstr("class/infiniband"));
}

TEST(RdmaCollectorTest, include_and_exclude_filters) {
  sys::RealFileSystem real;
  Harness harness(FixturePath(kMlx5), real,
                  {{"device-include", "^mlx5_.*$"}, {"device-exclude", "^mlx5_bond_.*$"}});
  const std::string text = harness.Collect().text;
  EXPECT_THAT(text, HasSubstr("device=\"mlx5_0\""));
  EXPECT_THAT(text, HasSubstr("device=\"mlx5_1\""));
  EXPECT_THAT(text, Not(HasSubstr("device=\"mlx5_bond_0\"")));
  EXPECT_THAT(text, Not(HasSubstr("device=\"ibp202s0\"")));
}

TEST(RdmaCollectorTest, everything_filtered_out_is_no_data) {
  sys::RealFileSystem real;
  Harness harness(FixturePath(kMlx5), real, {{"device-include", "^nothing$"}});
  Harness::Run run = harness.Collect();
  EXPECT_EQ(run.status.code(), StatusCode::kNoData);
  EXPECT_EQ(run.text, "");
}

TEST(RdmaCollectorTest, invalid_options_are_factory_errors_naming_the_flag) {
  const std::pair<CollectorOptions, const char*> cases[] = {
      {{{"device-include", "([unclosed"}}, "--collector.rdma.device-include"},
      {{{"device-exclude", "*bad"}}, "--collector.rdma.device-exclude"},
      {{{"rediscovery-interval", "soon"}}, "--collector.rdma.rediscovery-interval"},
      {{{"rediscovery-interval", "60"}}, "--collector.rdma.rediscovery-interval"},
  };
  for (const auto& [options, flag] : cases) {
    testing::CollectorTestContext inputs(FixturePath(kMlx5), options);
    auto collector = NewRdmaCollector(inputs.Context());
    ASSERT_FALSE(collector) << flag;
    EXPECT_EQ(collector.error().code(), StatusCode::kInvalidArgument) << flag;
    EXPECT_THAT(collector.error().message(), HasSubstr(flag));
  }
  CollectorOptions good{{"rediscovery-interval", "5m"}, {"device-include", "^mlx5_\\d+$"}};
  testing::CollectorTestContext inputs(FixturePath(kMlx5), good);
  EXPECT_TRUE(NewRdmaCollector(inputs.Context()));
}

// ---------------------------------------------------------------- injected failures

TEST(RdmaCollectorTest, unsupported_counter_errnos_are_omitted_not_counted) {
  const std::string root = FixturePath(kMlx5);
  const std::string port = root + "/" + kMlx5_0Port;
  FakeFileSystem fake;
  // A restricted PF or a firmware that refuses the PMA: EINVAL, EIO, EOPNOTSUPP.
  fake.Inject(FakeFileSystem::Op::kRead, port + "/counters/port_rcv_errors", EINVAL);
  fake.Inject(FakeFileSystem::Op::kRead, port + "/hw_counters/out_of_sequence", EIO);
  fake.Inject(FakeFileSystem::Op::kRead, root + "/" + kMlx5_1Port + "/counters/symbol_error",
              EOPNOTSUPP);
  std::ostringstream log;
  auto logger = std::make_shared<spdlog::logger>(
      "rdma", std::make_shared<spdlog::sinks::ostream_sink_mt>(log));
  Harness harness(root, fake, {}, logger);
  Harness::Run run = harness.Collect();
  ASSERT_TRUE(run.status.ok()) << run.status.ToString();
  EXPECT_EQ(run.errors, 0u);
  const std::string p0 = "{device=\"mlx5_0\",port=\"1\"}";
  EXPECT_THAT(run.text, Not(HasSubstr("fabric_rdma_port_receive_errors_total" + p0)));
  EXPECT_THAT(run.text, Not(HasSubstr("fabric_rdma_port_out_of_sequence_packets_total" + p0)));
  EXPECT_THAT(run.text,
              Not(HasSubstr("{device=\"mlx5_0\",port=\"1\",counter=\"port_rcv_errors\"}")));
  EXPECT_THAT(run.text, Not(HasSubstr("fabric_rdma_port_symbol_errors_total{device=\"mlx5_1\"")));
  EXPECT_THAT(run.text, Not(HasSubstr("device=\"mlx5_1\",port=\"1\",counter=\"symbol_error\"")));
  // The rest of the port and of the device is there.
  EXPECT_THAT(run.text, HasLine("fabric_rdma_port_transmit_discards_total" + p0 + " 12"));
  EXPECT_THAT(run.text, HasLine("fabric_rdma_port_local_ack_timeouts_total" + p0 + " 131"));
  EXPECT_THAT(run.text, HasLine("fabric_rdma_port_state" + p0 + " 4"));
  EXPECT_THAT(run.text, HasLine("fabric_rdma_port_link_downed_total{device=\"mlx5_1\","
                                "port=\"1\"} 255"));
  // Retried each tick, still not counted; logged once per file.
  Harness::Run again = harness.Collect();
  EXPECT_EQ(again.errors, 0u);
  EXPECT_THAT(again.text, Not(HasSubstr("fabric_rdma_port_receive_errors_total" + p0)));
  logger->flush();
  std::string logged = log.str();
  int lines = 0;
  for (size_t at = 0; (at = logged.find("counter not readable", at)) != std::string::npos; ++at) {
    ++lines;
  }
  EXPECT_EQ(lines, 3) << logged;
  // The fault clears: the counters come back.
  fake.Clear();
  Harness::Run healed = harness.Collect();
  EXPECT_EQ(healed.errors, 0u);
  EXPECT_THAT(healed.text, HasLine("fabric_rdma_port_receive_errors_total" + p0 + " 3"));
  EXPECT_THAT(healed.text, HasLine("fabric_rdma_port_out_of_sequence_packets_total" + p0 + " 5"));
}

TEST(RdmaCollectorTest, permission_denied_counter_is_omitted_and_counted) {
  const std::string root = FixturePath(kMlx5);
  const std::string file = root + "/" + kMlx5_0Port + "/hw_counters/np_cnp_sent";
  FakeFileSystem fake;
  fake.Inject(FakeFileSystem::Op::kOpen, file, EACCES);
  Harness harness(root, fake);
  Harness::Run run = harness.Collect();
  ASSERT_TRUE(run.status.ok()) << run.status.ToString();
  EXPECT_EQ(run.errors, 1u);
  ASSERT_EQ(run.error_list.size(), 1u);
  EXPECT_EQ(run.error_list[0].code(), StatusCode::kPermissionDenied);
  EXPECT_THAT(run.error_list[0].message(), HasSubstr("mlx5_0/ports/1/hw_counters/np_cnp_sent"));
  const std::string p0 = "{device=\"mlx5_0\",port=\"1\"}";
  EXPECT_THAT(run.text, Not(HasSubstr("fabric_rdma_port_cnp_sent_total" + p0)));
  EXPECT_THAT(run.text, HasLine("fabric_rdma_port_cnp_handled_total" + p0 + " 0"));
  EXPECT_THAT(run.text, HasLine("fabric_rdma_port_transmit_bytes_total" + p0 + " 29554428907532"));
  EXPECT_THAT(run.text, HasLine("fabric_rdma_port_cnp_sent_total{device=\"mlx5_1\",port=\"1\"} "
                                "900110"));
}

TEST(RdmaCollectorTest, infiniband_gid_table_einval_falls_back_to_dev_port) {
  // What a real kernel answers for gid_attrs/ndevs/<i> of an IB port.
  const std::string root = FixturePath(kMlx5);
  FakeFileSystem fake;
  fake.Inject(FakeFileSystem::Op::kRead, root + "/" + kMlx5_0Port + "/gid_attrs/ndevs/0", EINVAL);
  Harness harness(root, fake);
  Harness::Run run = harness.Collect();
  ASSERT_TRUE(run.status.ok());
  EXPECT_EQ(run.errors, 0u);
  EXPECT_THAT(run.text, HasLine("fabric_rdma_port_info{device=\"mlx5_0\",port=\"1\",link_layer="
                                "\"InfiniBand\",netdev=\"ib0\",speed=\"NDR\"} 1"));
}

// ---------------------------------------------------------------- devices come and go

TEST(RdmaCollectorTest, enodev_on_port_state_rediscovers_the_device) {
  if (!RaiseFdLimit()) GTEST_SKIP() << "RLIMIT_NOFILE below 1024: files would not stay open";
  TreeCopy tree("rdma-mlx5");
  FakeFileSystem fake;
  Harness harness(tree.sys(), fake);
  ASSERT_TRUE(harness.Collect().status.ok());
  const std::string p1 = "{device=\"mlx5_1\",port=\"1\"}";

  // The device goes away under a kept descriptor: the read says ENODEV.
  fake.InjectReads(tree.Path(kMlx5_1Port + "/state"), ENODEV, 1);
  // A counter file that only a rediscovery can find.
  tree.Write(kMlx5_1Port + "/hw_counters/new_counter", "5");
  Harness::Run vanished = harness.Collect();
  ASSERT_TRUE(vanished.status.ok()) << vanished.status.ToString();
  EXPECT_EQ(vanished.errors, 0u);
  EXPECT_THAT(vanished.text, Not(HasSubstr("fabric_rdma_port_state" + p1)));
  EXPECT_THAT(vanished.text, Not(HasSubstr("fabric_rdma_port_active" + p1)));
  EXPECT_THAT(vanished.text, HasLine("fabric_rdma_port_phys_state" + p1 + " 5"));
  EXPECT_THAT(vanished.text, Not(HasSubstr("new_counter")));

  // Next collection: same device list, interval not elapsed, but the device is rediscovered.
  const int opens = fake.open_calls();
  Harness::Run rediscovered = harness.Collect();
  EXPECT_EQ(rediscovered.errors, 0u);
  EXPECT_GT(fake.open_calls(), opens);
  EXPECT_THAT(rediscovered.text, HasLine("fabric_rdma_port_state" + p1 + " 4"));
  EXPECT_THAT(rediscovered.text, HasLine("fabric_rdma_port_hw_stat_total{device=\"mlx5_1\","
                                         "port=\"1\",counter=\"new_counter\"} 5"));

  // Now it is really gone (its class link dangles, as during a hot-unplug): one collection
  // notices through ENODEV, the next drops every series of the device without an error.
  fs::remove_all(fs::canonical(tree.Path("class/infiniband/mlx5_1")));
  fake.InjectReads(tree.Path(kMlx5_1Port + "/state"), ENODEV, 1);
  Harness::Run noticing = harness.Collect();
  EXPECT_EQ(noticing.errors, 0u);
  Harness::Run gone = harness.Collect();
  ASSERT_TRUE(gone.status.ok()) << gone.status.ToString();
  EXPECT_EQ(gone.errors, 0u);
  EXPECT_THAT(gone.text, Not(HasSubstr("device=\"mlx5_1\"")));
  EXPECT_THAT(gone.text, HasLine("fabric_rdma_port_state{device=\"mlx5_0\",port=\"1\"} 4"));
}

TEST(RdmaCollectorTest, device_appearing_later_is_picked_up) {
  TreeCopy tree("rdma-mlx5");
  sys::RealFileSystem real;
  Harness harness(tree.sys(), real);
  ASSERT_THAT(harness.Collect().text, Not(HasSubstr("mlx5_9")));

  // A new function with its own RDMA device (a VF being created, a hot-plugged card).
  const std::string pf = "devices/pci0000:40/0000:40:01.1/0000:41:00.2";
  fs::create_directories(tree.Path(pf + "/infiniband"));
  fs::copy(fs::canonical(tree.Path("class/infiniband/mlx5_1")),
           tree.Path(pf + "/infiniband/mlx5_9"),
           fs::copy_options::recursive | fs::copy_options::copy_symlinks);
  fs::remove(tree.Path(pf + "/infiniband/mlx5_9/device"));
  fs::create_directory_symlink("../../../0000:41:00.2",
                               tree.Path(pf + "/infiniband/mlx5_9/device"));
  fs::create_directory_symlink("../../" + pf + "/infiniband/mlx5_9",
                               tree.Path("class/infiniband/mlx5_9"));
  tree.Write("class/infiniband/mlx5_9/ports/1/hw_counters/np_cnp_sent", "77");

  Harness::Run run = harness.Collect();
  ASSERT_TRUE(run.status.ok());
  EXPECT_EQ(run.errors, 0u);
  EXPECT_THAT(run.text, HasLine("fabric_rdma_port_cnp_sent_total{device=\"mlx5_9\",port=\"1\"} "
                                "77"));
  EXPECT_THAT(run.text, HasSubstr("fabric_rdma_device_info{device=\"mlx5_9\""));
  EXPECT_THAT(run.text, HasSubstr("pci_address=\"0000:41:00.2\",netdevs=\"\"} 1"));
  EXPECT_THAT(run.text, HasLine("fabric_rdma_port_cnp_sent_total{device=\"mlx5_1\",port=\"1\"} "
                                "900110"));
}

TEST(RdmaCollectorTest, device_removed_between_collections_leaves_no_stale_series) {
  TreeCopy tree("rdma-mlx5");
  sys::RealFileSystem real;
  Harness harness(tree.sys(), real);
  ASSERT_THAT(harness.Collect().text, HasSubstr("device=\"mlx5_bond_0\""));

  fs::remove_all(fs::canonical(tree.Path("class/infiniband/mlx5_bond_0")));
  fs::remove(tree.Path("class/infiniband/mlx5_bond_0"));
  Harness::Run run = harness.Collect();
  ASSERT_TRUE(run.status.ok());
  EXPECT_EQ(run.errors, 0u);
  EXPECT_THAT(run.text, Not(HasSubstr("mlx5_bond_0")));
  EXPECT_THAT(run.text, HasSubstr("device=\"mlx5_0\""));
  EXPECT_THAT(run.text, HasSubstr("device=\"ibp202s0\""));
}

// ---------------------------------------------------------------- kept descriptors, rediscovery

TEST(RdmaCollectorTest, counter_files_are_kept_open_and_reread) {
  if (!RaiseFdLimit()) GTEST_SKIP() << "RLIMIT_NOFILE below 1024: files would not stay open";
  TreeCopy tree("rdma-mlx5");
  FakeFileSystem fake;  // passes through to the real copy, counting opens
  Harness harness(tree.sys(), fake, {{"rediscovery-interval", "60s"}});
  ASSERT_TRUE(harness.Collect().status.ok());
  const int opens_after_first = fake.open_calls();
  const int reads_after_first = fake.read_calls();
  tree.Write(kMlx5_0Port + "/hw_counters/out_of_buffer", "24");
  tree.Write(kMlx5_0Port + "/counters/port_xmit_data", "7388607226884");
  tree.Write(kMlx5_0Port + "/state", "1: DOWN");
  harness.clock().offset += std::chrono::seconds(59);
  Harness::Run second = harness.Collect();
  EXPECT_EQ(second.errors, 0u);
  // No file was opened again: every value came from pread on a kept descriptor...
  EXPECT_EQ(fake.open_calls(), opens_after_first);
  EXPECT_GT(fake.read_calls(), reads_after_first);
  // ...and in-place rewrites (the replay-root contract) are seen.
  const std::string p0 = "{device=\"mlx5_0\",port=\"1\"}";
  EXPECT_THAT(second.text, HasLine("fabric_rdma_port_out_of_buffer_drops_total" + p0 + " 24"));
  EXPECT_THAT(second.text,
              HasLine("fabric_rdma_port_transmit_bytes_total" + p0 + " 29554428907536"));
  EXPECT_THAT(second.text, HasLine("fabric_rdma_port_state" + p0 + " 1"));
  EXPECT_THAT(second.text, HasLine("fabric_rdma_port_active" + p0 + " 0"));
}

TEST(RdmaCollectorTest, rediscovery_after_the_interval_finds_new_counter_files) {
  if (!RaiseFdLimit()) GTEST_SKIP() << "RLIMIT_NOFILE below 1024: files would not stay open";
  TreeCopy tree("rdma-mlx5");
  FakeFileSystem fake;
  Harness harness(tree.sys(), fake, {{"rediscovery-interval", "60s"}});
  ASSERT_TRUE(harness.Collect().status.ok());
  const int opens = fake.open_calls();
  tree.Write(kMlx5_0Port + "/hw_counters/rx_new_counter", "42");
  const std::string line =
      "fabric_rdma_port_hw_stat_total{device=\"mlx5_0\",port=\"1\",counter=\"rx_new_counter\"} 42";

  harness.clock().offset += std::chrono::seconds(30);
  Harness::Run early = harness.Collect();
  EXPECT_THAT(early.text, Not(HasSubstr("rx_new_counter")));
  EXPECT_EQ(fake.open_calls(), opens);

  harness.clock().offset += std::chrono::seconds(30);
  Harness::Run due = harness.Collect();
  EXPECT_EQ(due.errors, 0u);
  EXPECT_THAT(due.text, HasLine(line));
  EXPECT_GT(fake.open_calls(), opens);

  // And the files of the new listing are kept open in turn.
  const int opens_after_rediscovery = fake.open_calls();
  harness.clock().offset += std::chrono::seconds(1);
  EXPECT_THAT(harness.Collect().text, HasLine(line));
  EXPECT_EQ(fake.open_calls(), opens_after_rediscovery);
}

// ---------------------------------------------------------------- known bugs

TEST(RdmaCollectorTest, port_xmit_wait_saturates_at_32_bits_with_the_extended_table) {
  // Regression: port_xmit_wait always comes from the 32-bit PortCounters attribute, also when the
  // kernel uses the PortCountersExtended table for the data counters (docs/reference.md §1.4:
  // "Error counters (and port_xmit_wait) always come from PortCounters and keep their IBA widths";
  // kernel core/sysfs.c pma_attrs_ext lists port_pma_attr_port_xmit_wait). RdmaCollector::
  // CollectCounter drops the saturation check of every 32-bit counter on an extended-width port
  // (`if (bits == 32 && (counter.extended_width || ...)) bits = 0;`), so a port_xmit_wait stuck
  // at 4294967295 on an mlx5/mlx4 port is never flagged (no fabric_rdma_port_saturated series
  // for it at all). node_exporter's mlx4 fixture has exactly that value.
  TreeCopy tree("rdma-mlx5");
  tree.Write(kMlx5_0Port + "/counters/port_xmit_wait", "4294967295");
  sys::RealFileSystem real;
  Harness harness(tree.sys(), real);
  const std::string text = harness.Collect().text;
  EXPECT_THAT(text, HasLine("fabric_rdma_port_saturated{device=\"mlx5_0\",port=\"1\","
                            "counter=\"port_xmit_wait\"} 1"));
}

TEST(RdmaCollectorTest, a_symlink_loop_device_is_one_warning_not_one_per_retry) {
  // Issue 19: a device whose discovery fails with ELOOP is retried every 5 s; the runs between
  // the retries did not check it, and logged it "recovered" each time, then warned again.
  TreeCopy tree("rdma-mlx5");
  fs::create_directory_symlink("loop0", tree.Path("class/infiniband/loop0"));
  std::ostringstream log;
  auto logger = std::make_shared<spdlog::logger>(
      "rdma", std::make_shared<spdlog::sinks::ostream_sink_mt>(log));
  sys::RealFileSystem real;
  Harness harness(tree.sys(), real, {}, logger);
  size_t errors = 0;
  for (int second = 0; second < 60; ++second) {
    Harness::Run run = harness.Collect();
    ASSERT_TRUE(run.status.ok()) << run.status.ToString();
    errors += run.errors;
    EXPECT_THAT(run.text, HasSubstr("device=\"mlx5_0\""));
    harness.clock().offset += std::chrono::seconds(1);
  }
  logger->flush();
  // One warning when it starts, no recovery while it lasts; every retry still counts.
  EXPECT_EQ(CountLogLines(log.str(), {"loop0", "Too many levels of symbolic links"}), 1)
      << log.str();
  EXPECT_EQ(CountLogLines(log.str(), {"recovered"}), 0) << log.str();
  EXPECT_GE(errors, 60u / 5);

  // The loop goes away: one recovery line at the next retry.
  fs::remove(tree.Path("class/infiniband/loop0"));
  for (int second = 0; second < 10; ++second) {
    harness.Collect();
    harness.clock().offset += std::chrono::seconds(1);
  }
  logger->flush();
  EXPECT_EQ(CountLogLines(log.str(), {"loop0", "recovered"}), 1) << log.str();
}

// fabricwatch_collector_device_reads (collectors/core/device_reads.h) on rdma-mlx5: 5 ports
// (3 InfiniBand: ibp202s0 ports 1 and 2, mlx5_0 port 1; 2 RoCE: mlx5_1, mlx5_bond_0). Every
// count below is a file the fixture lists (ls tests/fixtures/sysfs/rdma-mlx5/sys/class/
// infiniband/*/ports/*/...).
TEST(RdmaDeviceReadsTest, reads_per_sample_by_kind_on_the_mlx5_fixture) {
  sys::RealFileSystem real;
  Harness harness(FixturePath(kMlx5), real);
  const std::string reads = "fabricwatch_collector_device_reads{collector=\"rdma\",kind=";
  Harness::Run first = harness.Collect();
  ASSERT_TRUE(first.status.ok()) << first.status.ToString();
  // counters/: 21 (ibp202s0/1) + 0 (ibp202s0/2) + 21 (mlx5_0) + 17 (mlx5_1) + 21 (mlx5_bond_0):
  // one PMA MAD each.
  EXPECT_THAT(first.text, HasLine(reads + "\"pma_counter_file\"} 80"));
  // hw_counters/ without lifespan: 32 (mlx5_0) + 18 (mlx5_1) + 7 (mlx5_bond_0).
  EXPECT_THAT(first.text, HasLine(reads + "\"hw_counter_file\"} 57"));
  // ib_query_port: state, phys_state and rate of 5 ports, lid and sm_lid of the 3 IB ports
  // (21), and the first MTU query of each port (5).
  EXPECT_THAT(first.text, HasLine(reads + "\"port_query\"} 26"));
  // A replay root is read from its files: no RDMA netlink request.
  EXPECT_THAT(first.text, Not(HasSubstr("kind=\"hw_counter_netlink_request\"")));

  // The steady state: the MTU is not asked again within mtu-interval (10s).
  Harness::Run second = harness.Collect();
  EXPECT_THAT(second.text, HasLine(reads + "\"pma_counter_file\"} 80"));
  EXPECT_THAT(second.text, HasLine(reads + "\"hw_counter_file\"} 57"));
  EXPECT_THAT(second.text, HasLine(reads + "\"port_query\"} 21"));
  harness.clock().offset += std::chrono::seconds(10);
  EXPECT_THAT(harness.Collect().text, HasLine(reads + "\"port_query\"} 26"));
}

// The netlink path asks one RDMA_NLDEV_CMD_STAT_GET per port instead of one read per
// hw_counters file; on a replay root the option changes nothing (the files are the data).
TEST(RdmaDeviceReadsTest, hw_counters_source_sysfs_counts_the_same_files) {
  sys::RealFileSystem real;
  Harness harness(FixturePath(kMlx5), real, {{"hw-counters-source", "sysfs"}});
  const std::string text = harness.Collect().text;
  EXPECT_THAT(text, HasLine("fabricwatch_collector_device_reads{collector=\"rdma\",kind=\"hw_"
                            "counter_file\"} 57"));
  EXPECT_THAT(text, Not(HasSubstr("kind=\"hw_counter_netlink_request\"")));
}

}  // namespace
}  // namespace fabricwatch::rdma
