// Collector `ethtool`: with a fake EthtoolSource (kernel-mode families, "not supported",
// passthrough, interface selection) and with replay directories. The goldens of the vendor
// replays are data: tests/golden/collectors/ethtool/ (golden_test.cc).

#include "collectors/ethtool/ethtool.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>

#include "collectors/ethtool_source/ethtool.h"
#include "collectors/ethtool_source/ethtool_replay.h"
#include "collectors/sys/sysfs.h"
#include "tests/testing/collector_context.h"
#include "tests/testing/fifo.h"
#include "tests/testing/temp_dir.h"
#include "tests/testing/test_paths.h"

namespace fabricwatch::ethtool {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;

Status NotSupported() { return Status(StatusCode::kUnimplemented, "Operation not supported"); }

// Answers per netdev; anything not configured is "not supported", as veth answers.
class FakeSource final : public sys::EthtoolSource {
 public:
  std::map<std::string, std::vector<sys::EthtoolStat>> stats;
  std::map<std::string, sys::PauseInfo> pause;
  std::map<std::string, sys::FecStats> fec;
  std::map<std::string, sys::LinkState> link;
  std::map<std::string, sys::PfcConfig> pfc;
  std::map<std::string, uint32_t> storm_timeout_ms;
  std::map<std::string, Status> stats_error;
  std::map<std::string, std::vector<sys::StandardStat>> standard;
  std::map<std::string, sys::LinkSettings> link_settings;
  std::map<std::string, Status> link_settings_error;
  int calls = 0;
  int link_settings_calls = 0;

  template <typename T>
  Result<T> Answer(const std::map<std::string, T>& table, const std::string& netdev) {
    ++calls;
    auto it = table.find(netdev);
    if (it == table.end()) return Error(NotSupported());
    return it->second;
  }
  Status ReadStatistics(const std::string& netdev, std::vector<sys::EthtoolStat>& out) override {
    if (auto it = stats_error.find(netdev); it != stats_error.end()) return it->second;
    auto answer = Answer(stats, netdev);
    if (!answer) return answer.error();
    out = std::move(*answer);
    return Status::Ok();
  }
  Result<sys::PauseInfo> Pause(const std::string& netdev) override { return Answer(pause, netdev); }
  Result<sys::FecStats> Fec(const std::string& netdev) override { return Answer(fec, netdev); }
  Result<sys::LinkState> LinkStateOf(const std::string& netdev) override {
    return Answer(link, netdev);
  }
  Result<sys::PfcConfig> Pfc(const std::string& netdev) override { return Answer(pfc, netdev); }
  Result<uint32_t> PfcStormTimeoutMs(const std::string& netdev) override {
    return Answer(storm_timeout_ms, netdev);
  }
  Result<std::vector<sys::StandardStat>> StandardStats(const std::string& netdev) override {
    return Answer(standard, netdev);
  }
  Result<sys::LinkSettings> LinkSettingsOf(const std::string& netdev) override {
    ++link_settings_calls;
    if (auto it = link_settings_error.find(netdev); it != link_settings_error.end()) {
      ++calls;
      return Error(it->second);
    }
    return Answer(link_settings, netdev);
  }
};

struct CollectRun {
  Status status;
  size_t errors;
  std::vector<Status> error_list;
  std::string text;
};

class Harness {
 public:
  Harness(const std::string& sysfs_root, sys::EthtoolSource* source, CollectorOptions options = {})
      : inputs_(sysfs_root, std::move(options)) {
    log_stream_ = std::make_shared<std::ostringstream>();
    auto logger = std::make_shared<spdlog::logger>(
        "ethtool", std::make_shared<spdlog::sinks::ostream_sink_mt>(*log_stream_));
    logger->set_level(spdlog::level::debug);
    inputs_.UseLogger(logger);
    CollectorContext context = inputs_.Context();
    context.ethtool = source;
    auto collector = NewEthtoolCollector(context);
    EXPECT_TRUE(collector) << collector.error().ToString();
    if (collector) collector_ = std::move(*collector);
  }
  CollectRun Collect() {
    MetricSink sink;
    Status status = collector_->Collect(sink);
    CollectRun run{status, sink.error_count(), sink.errors(), ""};
    run.text = testing::Exposition(sink.TakeFamilies());
    return run;
  }
  std::string log() const { return log_stream_->str(); }
  // Tests move time on by hand (offset).
  testing::TestClock& clock() { return inputs_.clock(); }

 private:
  testing::CollectorTestContext inputs_;
  std::shared_ptr<std::ostringstream> log_stream_;
  std::unique_ptr<Collector> collector_;
};

const std::string kRoceNode = testing::FixturePath("sysfs/roce-node/sys");

TEST(EthtoolCollectorTest, default_selection_is_pci_and_rdma_netdevs) {
  FakeSource source;
  for (const char* netdev : {"enp65s0f0np0", "enp65s0f1np1", "ib0", "eno1", "docker0", "lo"}) {
    source.stats[netdev] = {{"rx_discards_phy", 1}};
  }
  Harness harness(kRoceNode, &source);
  CollectRun run = harness.Collect();
  ASSERT_TRUE(run.status.ok()) << run.status.ToString();
  for (const char* selected : {"enp65s0f0np0", "enp65s0f1np1", "ib0", "eno1"}) {
    EXPECT_THAT(run.text, HasSubstr("fabric_ethtool_driver_stats{netdev=\"" +
                                    std::string(selected) + "\"} 1"));
  }
  // Bridges, veth and loopback have no PCI parent.
  EXPECT_THAT(run.text, Not(HasSubstr("netdev=\"docker0\"")));
  EXPECT_THAT(run.text, Not(HasSubstr("netdev=\"lo\"")));
}

TEST(EthtoolCollectorTest, device_include_replaces_the_default_rule) {
  FakeSource source;
  source.stats["docker0"] = {{"rx_packets", 5}};
  Harness harness(kRoceNode, &source, {{"device-include", "^docker0$"}});
  CollectRun run = harness.Collect();
  EXPECT_THAT(run.text, HasSubstr("fabric_ethtool_driver_stats{netdev=\"docker0\"} 1"));
  EXPECT_THAT(run.text, Not(HasSubstr("netdev=\"eno1\"")));
}

TEST(EthtoolCollectorTest, standard_kernel_families) {
  FakeSource source;
  const std::string n = "enp65s0f0np0";
  source.stats[n] = {};
  source.pause[n] = {.autoneg = false,
                     .rx_enabled = true,
                     .tx_enabled = std::nullopt,
                     .tx_frames = 7,
                     .rx_frames = std::nullopt};
  source.fec[n] = {.active_mode = "rs",
                   .corrected_blocks = {100, 40, 60},
                   .uncorrectable_blocks = {2, 1, 1},
                   .corrected_bits = {}};
  source.link[n] = {.link = true, .ext_down_count = 3, .ext_state = std::nullopt};
  source.pfc[n] = {.pfc_cap = 8,
                   .enabled_mask = 0x08,
                   .requests = std::vector<uint64_t>{0, 0, 0, 11, 0, 0, 0, 0},
                   .indications = std::vector<uint64_t>{0, 0, 0, 22, 0, 0, 0, 0}};
  source.storm_timeout_ms[n] = 8000;
  source.standard[n] = {{"eth-mac", "FrameCheckSequenceErrors", 4}, {"rmon", "jabbers", 1}};
  Harness harness(kRoceNode, &source, {{"device-include", "^enp65s0f0np0$"}});
  CollectRun run = harness.Collect();
  ASSERT_TRUE(run.status.ok());
  EXPECT_EQ(run.errors, 0u);
  const std::string t = run.text;
  EXPECT_THAT(t, HasSubstr("fabric_ethtool_mac_pause_frames_total{netdev=\"" + n +
                           "\",direction=\"tx\"} 7"));
  EXPECT_THAT(t, Not(HasSubstr("direction=\"rx\"} 7")));  // absent stays absent
  EXPECT_THAT(t,
              HasSubstr("fabric_ethtool_pause_enabled{netdev=\"" + n + "\",direction=\"rx\"} 1"));
  EXPECT_THAT(
      t, Not(HasSubstr("fabric_ethtool_pause_enabled{netdev=\"" + n + "\",direction=\"tx\"}")));
  EXPECT_THAT(t, HasSubstr("fabric_ethtool_pause_autoneg{netdev=\"" + n + "\"} 0"));
  EXPECT_THAT(t, HasSubstr("fabric_ethtool_fec_info{netdev=\"" + n + "\",mode=\"rs\"} 1"));
  EXPECT_THAT(t, HasSubstr("fabric_ethtool_fec_corrected_blocks_total{netdev=\"" + n + "\"} 100"));
  EXPECT_THAT(t, HasSubstr("fabric_ethtool_fec_lane_corrected_blocks_total{netdev=\"" + n +
                           "\",lane=\"1\"} 60"));
  EXPECT_THAT(t,
              HasSubstr("fabric_ethtool_fec_uncorrectable_blocks_total{netdev=\"" + n + "\"} 2"));
  EXPECT_THAT(t, Not(HasSubstr("fabric_ethtool_fec_corrected_bit_errors_total")));
  EXPECT_THAT(t, HasSubstr("fabric_ethtool_link_ext_down_events_total{netdev=\"" + n + "\"} 3"));
  EXPECT_THAT(t, HasSubstr("fabric_pfc_enabled{netdev=\"" + n + "\",priority=\"3\"} 1"));
  EXPECT_THAT(t, HasSubstr("fabric_pfc_enabled{netdev=\"" + n + "\",priority=\"4\"} 0"));
  EXPECT_THAT(t, HasSubstr("fabric_pfc_dcb_frames_total{netdev=\"" + n +
                           "\",priority=\"3\",direction=\"rx\"} 22"));
  EXPECT_THAT(t, HasSubstr("fabric_pfc_capable_traffic_classes{netdev=\"" + n + "\"} 8"));
  EXPECT_THAT(t, HasSubstr("fabric_pfc_storm_prevention_timeout_seconds{netdev=\"" + n + "\"} 8"));
  EXPECT_THAT(t, HasSubstr("fabric_ethtool_standard_stat_total{netdev=\"" + n +
                           "\",group=\"eth-mac\",stat=\"FrameCheckSequenceErrors\"} 4"));
}

TEST(EthtoolCollectorTest, not_supported_is_quiet_and_logged_once) {
  FakeSource source;  // everything unsupported, as on veth
  Harness harness(kRoceNode, &source, {{"device-include", "^eno1$"}});
  for (int i = 0; i < 5; ++i) {
    CollectRun run = harness.Collect();
    EXPECT_TRUE(run.status.ok());
    EXPECT_EQ(run.errors, 0u);
  }
  const std::string log = harness.log();
  // Eight capabilities, each logged once at debug over five collections, never warned.
  size_t lines = 0;
  for (size_t at = 0; (at = log.find("[debug] eno1:", at)) != std::string::npos; ++at) ++lines;
  EXPECT_EQ(lines, 8u) << log;
  EXPECT_THAT(log, Not(HasSubstr("[warning]")));
  // Each request was asked once: the answer is remembered (for a minute, by the fixed clock).
  EXPECT_EQ(source.calls, 8);
}

TEST(EthtoolCollectorTest, a_failing_netdev_is_counted_and_the_others_emitted) {
  FakeSource source;
  source.stats["eno1"] = {{"rx_discards_phy", 1}};
  source.stats_error["ib0"] = Status(StatusCode::kPermissionDenied, "ioctl ib0: denied", EPERM);
  source.stats_error["enp65s0f1np1"] = Status(StatusCode::kNotFound, "gone", ENODEV);
  Harness harness(kRoceNode, &source);
  CollectRun run = harness.Collect();
  ASSERT_TRUE(run.status.ok());
  EXPECT_EQ(run.errors, 1u);  // EPERM counts; a vanished netdev does not
  EXPECT_THAT(run.text, HasSubstr("fabric_ethtool_driver_stats{netdev=\"eno1\"} 1"));
}

TEST(EthtoolCollectorTest, passthrough_is_opt_in_and_reports_collisions) {
  FakeSource source;
  source.stats["eno1"] = {{"rx_vport_unicast_packets", 10},
                          {"rx-bytes", 1},
                          {"rx_bytes", 2},
                          {"tx_queue_0_packets", 3}};
  {
    Harness off(kRoceNode, &source, {{"device-include", "^eno1$"}});
    EXPECT_THAT(off.Collect().text, Not(HasSubstr("fabric_ethtool_rx_vport_unicast_packets")));
  }
  Harness on(kRoceNode, &source,
             {{"device-include", "^eno1$"},
              {"metrics-include", "^(rx|tx)"},
              {"metrics-exclude", "queue"}});
  CollectRun run = on.Collect();
  EXPECT_THAT(run.text, HasSubstr("fabric_ethtool_rx_vport_unicast_packets{netdev=\"eno1\"} 10"));
  EXPECT_THAT(run.text, Not(HasSubstr("tx_queue_0_packets")));
  // "rx-bytes" and "rx_bytes" sanitise to one name: the first keeps it, the second is reported.
  EXPECT_THAT(run.text, HasSubstr("fabric_ethtool_rx_bytes{netdev=\"eno1\"} 1"));
  EXPECT_EQ(run.errors, 1u);
  ASSERT_EQ(run.error_list.size(), 1u);
  EXPECT_THAT(run.error_list[0].message(), HasSubstr("rx_bytes"));
  // Reported once, not every collection.
  EXPECT_EQ(on.Collect().errors, 0u);
}

TEST(EthtoolCollectorTest, roce_ecn_enables_from_ofed_sysfs) {
  const fs::path root = fs::temp_directory_path() / ("fw-ecn-" + std::to_string(::getpid()));
  fs::remove_all(root);
  for (const char* role : {"roce_np", "roce_rp"}) {
    const fs::path dir = root / "class/net/eth0/ecn" / role / "enable";
    fs::create_directories(dir);
    for (int prio = 0; prio < 8; ++prio) {
      std::ofstream(dir / std::to_string(prio)) << (prio == 3 ? "1\n" : "0\n");
    }
  }
  FakeSource source;
  source.stats["eth0"] = {};
  Harness harness(root.string(), &source, {{"device-include", "^eth0$"}});
  CollectRun run = harness.Collect();
  fs::remove_all(root);
  EXPECT_THAT(run.text, HasSubstr("fabric_roce_ecn_enabled{netdev=\"eth0\",priority=\"3\","
                                  "role=\"np\"} 1"));
  EXPECT_THAT(run.text, HasSubstr("fabric_roce_ecn_enabled{netdev=\"eth0\",priority=\"2\","
                                  "role=\"rp\"} 0"));
}

TEST(EthtoolCollectorTest, no_source_is_no_data) {
  Harness harness(kRoceNode, nullptr);
  EXPECT_EQ(harness.Collect().status.code(), StatusCode::kNoData);
}

TEST(EthtoolCollectorTest, invalid_options_name_the_flag) {
  for (const auto& [key, flag] : std::vector<std::pair<std::string, std::string>>{
           {"metrics-include", "--collector.ethtool.metrics-include"},
           {"device-exclude", "--collector.ethtool.device-exclude"}}) {
    testing::CollectorTestContext inputs(kRoceNode, {{key, "(["}});
    auto collector = NewEthtoolCollector(inputs.Context());
    ASSERT_FALSE(collector);
    EXPECT_THAT(collector.error().message(), HasSubstr(flag));
  }
}

// Replay directories (--path.ethtool) with the vendor formats: normalised families, labels and
// units.
TEST(EthtoolReplayFactsTest, mlx5_pfc_per_priority_in_seconds) {
  sys::RealFileSystem real;
  sys::ReplayEthtool replay(testing::FixturePath("ethtool/mlx5"), real);
  Harness harness(testing::FixturePath("sysfs/empty/sys"), &replay);
  const std::string t = harness.Collect().text;
  // Every priority, both directions, for the PFC-enabled port.
  for (int prio = 0; prio < 8; ++prio) {
    for (const char* dir : {"rx", "tx"}) {
      EXPECT_THAT(t, HasSubstr("fabric_pfc_pause_frames_total{netdev=\"enp65s0f0np0\",priority=\"" +
                               std::to_string(prio) + "\",direction=\"" + dir + "\"}"));
      EXPECT_THAT(t, HasSubstr("fabric_pfc_pause_duration_seconds_total{netdev=\"enp65s0f0np0\","
                               "priority=\"" +
                               std::to_string(prio) + "\",direction=\"" + dir + "\"}"));
    }
  }
  EXPECT_THAT(t, HasSubstr("fabric_ethtool_pause_storm_events_total{netdev=\"enp65s0f0np0\","
                           "severity=\"warning\"}"));
  EXPECT_THAT(t, HasSubstr("fabric_ethtool_pause_storm_events_total{netdev=\"enp65s0f0np0\","
                           "severity=\"error\"}"));
  // The replay has no kernel-only data: nothing from pause/FEC netlink.
  EXPECT_THAT(t, Not(HasSubstr("fabric_ethtool_fec_")));
  // PFC and QoS come from the qos file (`mlnx_qos -i` text) of the port that has one.
  EXPECT_THAT(t, HasSubstr("fabric_pfc_enabled{netdev=\"enp65s0f0np0\",priority=\"3\"} 1"));
  EXPECT_THAT(t, HasSubstr("fabric_pfc_enabled{netdev=\"enp65s0f0np0\",priority=\"4\"} 0"));
  EXPECT_THAT(t, HasSubstr("fabric_qos_trust_info{netdev=\"enp65s0f0np0\",trust=\"dscp\"} 1"));
  EXPECT_THAT(t, HasSubstr("fabric_qos_dscp_priority_map_info{netdev=\"enp65s0f0np0\",map=\""
                           "00000000111111112222222233333333444444445555555566666666"
                           "77777777\"} 1"));
  EXPECT_THAT(t, Not(HasSubstr("fabric_pfc_enabled{netdev=\"enp65s0f1np1\"")));
  EXPECT_THAT(t, Not(HasSubstr("fabric_pfc_capable_traffic_classes")));  // mlnx_qos prints none
  // Global pause from the pause files (`ethtool -a`), storm prevention from the tunables files.
  EXPECT_THAT(
      t, HasSubstr("fabric_ethtool_pause_enabled{netdev=\"enp65s0f0np0\",direction=\"tx\"} 0"));
  EXPECT_THAT(
      t, HasSubstr("fabric_ethtool_pause_enabled{netdev=\"enp65s0f1np1\",direction=\"rx\"} 1"));
  EXPECT_THAT(t, HasSubstr("fabric_ethtool_pause_autoneg{netdev=\"enp65s0f1np1\"} 1"));
  EXPECT_THAT(t, HasSubstr("fabric_ethtool_mac_pause_frames_total{netdev=\"enp65s0f0np0\","
                           "direction=\"rx\"} 0"));
  EXPECT_THAT(
      t, HasSubstr("fabric_pfc_storm_prevention_timeout_seconds{netdev=\"enp65s0f0np0\"} 0.1"));
  EXPECT_THAT(t,
              HasSubstr("fabric_pfc_storm_prevention_timeout_seconds{netdev=\"enp65s0f1np1\"} 0"));
}

TEST(EthtoolReplayFactsTest, a_qos_file_with_unknown_lines_is_read_for_what_it_knows) {
  const fs::path dir = fs::temp_directory_path() / ("fw-qos-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "eth7");
  std::ofstream(dir / "eth7/statistics") << "NIC statistics:\n     rx_prio3_pause: 12\n";
  std::ofstream(dir / "eth7/qos") << "Priority trust state: pcp\nA line from a newer tool: 1\n"
                                     "PFC configuration:\n\tpriority 0 1 2 3 4 5 6 7\n"
                                     "\tenabled  0 0 0 1 0 0 0 0\n";
  sys::RealFileSystem real;
  sys::ReplayEthtool replay(dir.string(), real);
  Harness harness(testing::FixturePath("sysfs/empty/sys"), &replay);
  const auto first = harness.Collect();
  EXPECT_THAT(first.text, HasSubstr("fabric_pfc_enabled{netdev=\"eth7\",priority=\"3\"} 1"));
  EXPECT_THAT(first.text, HasSubstr("fabric_qos_trust_info{netdev=\"eth7\",trust=\"pcp\"} 1"));
  EXPECT_THAT(first.text, Not(HasSubstr("fabric_qos_dscp_priority_map_info")));
  EXPECT_EQ(first.errors, 1u) << "the unknown line is counted once";
  const auto again = harness.Collect();
  EXPECT_EQ(again.errors, 0u) << "an unchanged file is not parsed (nor counted) again";
  EXPECT_THAT(again.text, HasSubstr("fabric_pfc_enabled{netdev=\"eth7\",priority=\"3\"} 1"));
  fs::remove_all(dir);
}

TEST(EthtoolReplayFactsTest, malformed_lines_are_counted_and_good_stats_kept) {
  const fs::path dir = fs::temp_directory_path() / ("fw-ethtool-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir / "eth9");
  std::ofstream(dir / "eth9/statistics")
      << "NIC statistics:\n     rx_prio3_pause: 12\n     tx_prio3_pause: notanumber\n"
         "     rx_discards_phy\n     link_down_events_phy: 2\n";
  sys::RealFileSystem real;
  sys::ReplayEthtool replay(dir.string(), real);
  Harness harness(testing::FixturePath("sysfs/empty/sys"), &replay);
  CollectRun run = harness.Collect();
  fs::remove_all(dir);
  ASSERT_TRUE(run.status.ok());
  EXPECT_EQ(run.errors, 2u);
  EXPECT_THAT(run.text, HasSubstr("fabric_pfc_pause_frames_total{netdev=\"eth9\",priority=\"3\","
                                  "direction=\"rx\"} 12"));
  EXPECT_THAT(run.text, HasSubstr("fabric_ethtool_link_down_events_total{netdev=\"eth9\"} 2"));
  EXPECT_THAT(run.text, HasSubstr("fabric_ethtool_driver_stats{netdev=\"eth9\"} 2"));
}

TEST(EthtoolReplayFactsTest, empty_replay_directory_is_no_data) {
  const fs::path dir = fs::temp_directory_path() / ("fw-ethtool-e-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  sys::RealFileSystem real;
  sys::ReplayEthtool replay(dir.string(), real);
  Harness harness(testing::FixturePath("sysfs/empty/sys"), &replay);
  EXPECT_EQ(harness.Collect().status.code(), StatusCode::kNoData);
  fs::remove_all(dir);
}

// `count` statistic lines of `ethtool -S` text.
std::string StatisticsText(size_t count) {
  std::string text = "NIC statistics:\n";
  for (size_t i = 0; i < count; ++i) text += "     rx" + std::to_string(i) + "_packets: 1\n";
  return text;
}

// Issue 19: a 100,000-line statistics file took the agent from 13.5 to 28 MB, and it kept
// 25.8 MB after the file was restored.
TEST(EthtoolReplayFactsTest, a_netdev_over_the_statistics_bound_is_an_error_naming_it) {
  testing::TempDir dir("fw-ethtool-bound");
  fs::create_directories(dir.Path("eth8"));
  fs::create_directories(dir.Path("eth9"));
  std::ofstream(dir.Path("eth8/statistics")) << "NIC statistics:\n     rx_discards_phy: 3\n";
  std::ofstream(dir.Path("eth9/statistics")) << StatisticsText(sys::kMaxStatisticsPerNetdev + 1);
  sys::RealFileSystem real;
  sys::ReplayEthtool replay(dir.str(), real);
  Harness harness(testing::FixturePath("sysfs/empty/sys"), &replay);
  CollectRun run = harness.Collect();
  ASSERT_TRUE(run.status.ok()) << run.status.ToString();
  ASSERT_EQ(run.errors, 1u);
  EXPECT_THAT(run.error_list[0].message(),
              HasSubstr(dir.Path("eth9/statistics") + ": more than 32768 statistics"));
  EXPECT_THAT(run.text, Not(HasSubstr("netdev=\"eth9\"")));  // none, not a partial table
  EXPECT_THAT(run.text, HasSubstr("fabric_ethtool_driver_stats{netdev=\"eth8\"} 1"));

  // Exactly the bound is fine.
  std::ofstream(dir.Path("eth9/statistics"), std::ios::trunc)
      << StatisticsText(sys::kMaxStatisticsPerNetdev);
  run = harness.Collect();
  EXPECT_EQ(run.errors, 0u);
  EXPECT_THAT(run.text, HasSubstr("fabric_ethtool_driver_stats{netdev=\"eth9\"} 32768"));

  // More bytes than the bound allows (long names, few lines): an error too.
  std::string wide = "NIC statistics:\n";
  while (wide.size() <= (2u << 20)) wide += "     " + std::string(200, 'x') + ": 1\n";
  std::ofstream(dir.Path("eth9/statistics"), std::ios::trunc) << wide;
  run = harness.Collect();
  ASSERT_EQ(run.errors, 1u);
  EXPECT_THAT(run.error_list[0].message(), HasSubstr(": larger than 2097152 bytes"));
  EXPECT_THAT(run.text, Not(HasSubstr("netdev=\"eth9\"")));
}

TEST(EthtoolReplayFactsTest, a_table_that_shrinks_back_gives_its_memory_back) {
  testing::TempDir dir("fw-ethtool-shrink");
  fs::create_directories(dir.Path("eth9"));
  sys::RealFileSystem real;
  sys::ReplayEthtool replay(dir.str(), real);
  std::vector<sys::EthtoolStat> stats;
  std::ofstream(dir.Path("eth9/statistics")) << StatisticsText(20000);
  ASSERT_TRUE(replay.ReadStatistics("eth9", stats).ok());
  EXPECT_EQ(stats.size(), 20000u);
  std::ofstream(dir.Path("eth9/statistics"), std::ios::trunc) << StatisticsText(100);
  ASSERT_TRUE(replay.ReadStatistics("eth9", stats).ok());
  EXPECT_EQ(stats.size(), 100u);
  EXPECT_LE(stats.capacity(), 2 * 100u + 64);  // not the 20000 of before
  // The same table again keeps its storage: a steady state allocates nothing.
  const sys::EthtoolStat* storage = stats.data();
  ASSERT_TRUE(replay.ReadStatistics("eth9", stats).ok());
  EXPECT_EQ(stats.data(), storage);
}

TEST(EthtoolReplayFactsTest, a_fifo_in_place_of_a_statistics_file_is_an_error_not_a_hang) {
  testing::TempDir dir("fw-ethtool-fifo");
  fs::create_directories(dir.Path("eth8"));
  std::ofstream(dir.Path("eth8/statistics")) << "NIC statistics:\n     rx_discards_phy: 3\n";
  ASSERT_TRUE(testing::MakeFifo(dir.Path("eth9/statistics")));
  testing::BlockedOpenGuard guard({dir.Path("eth9/statistics")});
  sys::RealFileSystem real;
  sys::ReplayEthtool replay(dir.str(), real);
  Harness harness(testing::FixturePath("sysfs/empty/sys"), &replay);
  CollectRun run = harness.Collect();
  ASSERT_TRUE(run.status.ok()) << run.status.ToString();
  ASSERT_EQ(run.errors, 1u);  // the FIFO's netdev is listed, and its error named
  EXPECT_EQ(run.error_list[0].message(),
            "open " + dir.Path("eth9/statistics") + ": not a regular file (a FIFO)");
  EXPECT_THAT(run.text, HasSubstr("fabric_ethtool_driver_stats{netdev=\"eth8\"} 1"));
  EXPECT_FALSE(guard.fired()) << "an open blocked on the FIFO";
}

}  // namespace
}  // namespace fabricwatch::ethtool

namespace fabricwatch::ethtool {
namespace {

sys::LinkSettings Cx7Link() {
  sys::LinkSettings s;
  s.speed_mbps = 200000;
  s.lanes = 4;
  s.duplex = "full";
  s.autoneg = true;
  s.port = "Direct Attach Copper";
  s.supported_modes = {"100000baseCR4/Full", "400000baseCR4/Full"};
  s.advertised_modes = {"100000baseCR4/Full"};
  s.max_supported_speed_mbps = 400000;
  s.max_advertised_speed_mbps = 100000;
  return s;
}

TEST(EthtoolLinkSettingsTest, families_in_bytes_per_second_and_unknowns_omitted) {
  FakeSource source;
  source.link_settings["eno1"] = Cx7Link();
  sys::LinkSettings down;  // link down: nothing known but autoneg
  down.autoneg = false;
  source.link_settings["ib0"] = down;
  Harness harness(kRoceNode, &source, {{"device-include", "^(eno1|ib0)$"}});
  CollectRun run = harness.Collect();
  ASSERT_TRUE(run.status.ok());
  EXPECT_EQ(run.errors, 0u);
  EXPECT_THAT(
      run.text,
      HasSubstr("fabric_ethtool_link_speed_bytes_per_second{netdev=\"eno1\"} 25000000000\n"));
  EXPECT_THAT(run.text, HasSubstr("fabric_ethtool_link_lanes{netdev=\"eno1\"} 4\n"));
  EXPECT_THAT(run.text, HasSubstr("fabric_ethtool_link_supported_max_speed_bytes_per_second{"
                                  "netdev=\"eno1\"} 50000000000\n"));
  EXPECT_THAT(run.text, HasSubstr("fabric_ethtool_link_advertised_max_speed_bytes_per_second{"
                                  "netdev=\"eno1\"} 12500000000\n"));
  EXPECT_THAT(run.text, HasSubstr("fabric_ethtool_link_autoneg{netdev=\"eno1\"} 1\n"));
  EXPECT_THAT(run.text, HasSubstr("fabric_ethtool_link_info{netdev=\"eno1\",duplex=\"full\","
                                  "port=\"Direct Attach Copper\"} 1\n"));
  EXPECT_THAT(run.text, HasSubstr("fabric_ethtool_link_autoneg{netdev=\"ib0\"} 0\n"));
  EXPECT_THAT(run.text, Not(HasSubstr("speed_bytes_per_second{netdev=\"ib0\"}")));
  EXPECT_THAT(run.text, Not(HasSubstr("fabric_ethtool_link_lanes{netdev=\"ib0\"}")));
  EXPECT_THAT(run.text, Not(HasSubstr("fabric_ethtool_link_info{netdev=\"ib0\"")));
}

TEST(EthtoolLinkSettingsTest, read_once_per_interval_and_reexported_in_between) {
  FakeSource source;
  source.link_settings["eno1"] = Cx7Link();
  Harness harness(kRoceNode, &source,
                  {{"device-include", "^eno1$"}, {"link-settings-interval", "10s"}});
  for (int second = 0; second < 25; ++second) {
    harness.clock().offset = std::chrono::seconds(second);
    if (second == 12) source.link_settings["eno1"].speed_mbps = 100000;  // retrained
    CollectRun run = harness.Collect();
    const char* expected = second < 20 ? "} 25000000000\n" : "} 12500000000\n";
    EXPECT_THAT(run.text, HasSubstr(std::string("fabric_ethtool_link_speed_bytes_per_second{"
                                                "netdev=\"eno1\"") +
                                    expected))
        << second;
  }
  EXPECT_EQ(source.link_settings_calls, 3);  // at 0 s, 10 s and 20 s
}

TEST(EthtoolLinkSettingsTest, errors_count_and_are_retried_quiet_answers_are_not) {
  FakeSource source;
  source.link_settings_error["eno1"] =
      Status(StatusCode::kInvalidArgument, "malformed ethtool LINKMODES_GET reply: short");
  source.link_settings_error["ib0"] = Status(StatusCode::kNoData, "no link file");
  Harness harness(kRoceNode, &source, {{"device-include", "^(eno1|ib0)$"}});
  for (int i = 0; i < 3; ++i) {
    CollectRun run = harness.Collect();
    EXPECT_EQ(run.errors, 1u);  // eno1 each time; ib0's "no data" is quiet
    EXPECT_THAT(run.text, Not(HasSubstr("fabric_ethtool_link_")));
  }
  EXPECT_EQ(source.link_settings_calls, 3 + 1);  // eno1 retried, ib0 skipped for a minute
  EXPECT_THAT(harness.log(), HasSubstr("[debug] ib0: link settings not supported: no link file"));
}

TEST(EthtoolLinkSettingsTest, invalid_interval_names_the_flag) {
  FakeSource source;
  testing::CollectorTestContext inputs(kRoceNode, {{"link-settings-interval", "soon"}});
  CollectorContext context = inputs.Context();
  context.ethtool = &source;
  auto collector = NewEthtoolCollector(context);
  ASSERT_FALSE(collector);
  EXPECT_THAT(collector.error().message(), HasSubstr("--collector.ethtool.link-settings-interval"));
}

// The replay source: DIR/<netdev>/link parsed, malformed lines counted as errors with the good
// fields kept, a netdev without the file quiet, an oversized file an error naming it.
TEST(EthtoolLinkSettingsTest, replay_link_files) {
  const fs::path dir = fs::temp_directory_path() / ("fw-ethtool-l-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  for (const char* netdev : {"eth0", "eth1", "eth2", "eth3"}) {
    fs::create_directories(dir / netdev);
    std::ofstream(dir / netdev / "statistics") << "NIC statistics:\n     rx_discards_phy: 1\n";
  }
  std::ofstream(dir / "eth0/link") << "Settings for eth0:\n"
                                      "\tSupported link modes:   25000baseSR/Full\n"
                                      "\t                        100000baseSR4/Full\n"
                                      "\tAdvertised link modes:  25000baseSR/Full\n"
                                      "\tSpeed: 25000Mb/s\n\tDuplex: Full\n"
                                      "\tAuto-negotiation: off\n\tPort: FIBRE\n"
                                      "\tLink detected: yes\n";
  std::ofstream(dir / "eth1/link") << "Settings for eth1:\n\tSpeed: ZeroGb/s\n\tLanes: 2\n";
  std::ofstream(dir / "eth3/link") << std::string(sys::ReplayEthtool::kMaxLinkBytes + 1, '#');
  sys::RealFileSystem real;
  sys::ReplayEthtool replay(dir.string(), real);
  auto eth0 = replay.LinkSettingsOf("eth0");
  ASSERT_TRUE(eth0) << eth0.error().ToString();
  EXPECT_EQ(eth0->max_supported_speed_mbps, std::optional<uint32_t>(100000));
  EXPECT_TRUE(replay.TakeWarnings().empty());
  auto eth2 = replay.LinkSettingsOf("eth2");
  ASSERT_FALSE(eth2);
  EXPECT_EQ(eth2.error().code(), StatusCode::kNoData);
  auto eth3 = replay.LinkSettingsOf("eth3");
  ASSERT_FALSE(eth3);
  EXPECT_EQ(eth3.error().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(eth3.error().message(), HasSubstr("eth3/link: longer than 65536 bytes"));

  Harness harness(testing::FixturePath("sysfs/empty/sys"), &replay);
  CollectRun run = harness.Collect();
  fs::remove_all(dir);
  ASSERT_TRUE(run.status.ok());
  EXPECT_EQ(run.errors, 2u);  // eth1's bad speed line, eth3's size
  EXPECT_THAT(run.error_list[0].message(), HasSubstr("eth1/link:2: Speed: cannot parse"));
  EXPECT_THAT(
      run.text,
      HasSubstr("fabric_ethtool_link_speed_bytes_per_second{netdev=\"eth0\"} 3125000000\n"));
  EXPECT_THAT(run.text, HasSubstr("fabric_ethtool_link_info{netdev=\"eth0\",duplex=\"full\","
                                  "port=\"FIBRE\"} 1\n"));
  EXPECT_THAT(run.text, HasSubstr("fabric_ethtool_link_lanes{netdev=\"eth1\"} 2\n"));
  EXPECT_THAT(run.text, Not(HasSubstr("speed_bytes_per_second{netdev=\"eth1\"}")));
  EXPECT_THAT(run.text, Not(HasSubstr("{netdev=\"eth2\"} 3")));
}

// fabricwatch_collector_device_reads (collectors/core/device_reads.h): each request the
// collector makes of the source is one read of its kind, in the sample that made it, and the
// kinds add up to the source's own count of requests.
TEST(EthtoolDeviceReadsTest, every_request_of_a_sample_is_counted_by_kind) {
  FakeSource source;
  const std::string n = "enp65s0f0np0";
  source.stats[n] = {};
  source.pause[n] = {};
  source.fec[n] = {};
  source.link[n] = {};
  source.pfc[n] = {};
  source.storm_timeout_ms[n] = 8000;
  source.standard[n] = {};
  source.link_settings[n] = {};
  Harness harness(kRoceNode, &source, {{"device-include", "^enp65s0f0np0$"}});
  CollectRun run = harness.Collect();
  ASSERT_TRUE(run.status.ok()) << run.status.ToString();
  const std::string reads = "fabricwatch_collector_device_reads{collector=\"ethtool\",kind=";
  EXPECT_THAT(run.text, HasSubstr(reads + "\"ethtool_stats_request\"} 1\n"));
  // FEC, link state, standard statistics, pause, the PFC storm tunable.
  EXPECT_THAT(run.text, HasSubstr(reads + "\"ethtool_query\"} 5\n"));
  EXPECT_THAT(run.text, HasSubstr(reads + "\"dcb_request\"} 1\n"));
  EXPECT_THAT(run.text, HasSubstr(reads + "\"link_settings_query\"} 1\n"));
  EXPECT_EQ(source.calls, 1 + 5 + 1 + 1);

  // The next sample: the link settings are cached (link-settings-interval), so not asked; the
  // kind stays exported at 0 rather than vanishing.
  source.calls = 0;
  run = harness.Collect();
  EXPECT_THAT(run.text, HasSubstr(reads + "\"ethtool_stats_request\"} 1\n"));
  EXPECT_THAT(run.text, HasSubstr(reads + "\"ethtool_query\"} 5\n"));
  EXPECT_THAT(run.text, HasSubstr(reads + "\"dcb_request\"} 1\n"));
  EXPECT_THAT(run.text, HasSubstr(reads + "\"link_settings_query\"} 0\n"));
  EXPECT_EQ(source.calls, 7);
}

TEST(EthtoolDeviceReadsTest, a_request_skipped_as_unsupported_is_no_read) {
  FakeSource source;  // everything unsupported, as on veth: each asked once, then skipped
  Harness harness(kRoceNode, &source, {{"device-include", "^enp65s0f0np0$"}});
  CollectRun first = harness.Collect();
  const int asked = source.calls;
  EXPECT_EQ(asked, 8);
  source.calls = 0;
  CollectRun second = harness.Collect();
  EXPECT_EQ(source.calls, 0);
  const std::string reads = "fabricwatch_collector_device_reads{collector=\"ethtool\",kind=";
  EXPECT_THAT(first.text, HasSubstr(reads + "\"ethtool_query\"} 5\n"));
  EXPECT_THAT(second.text, HasSubstr(reads + "\"ethtool_query\"} 0\n"));
  EXPECT_THAT(second.text, HasSubstr(reads + "\"ethtool_stats_request\"} 0\n"));
}

}  // namespace
}  // namespace fabricwatch::ethtool
