// Collector `optics`: replay directories holding module images built from the spec tables
// (tests/testing/module_images.h), an empty cage, the spreading of reads over runs, read
// failures, and the mlx5 hwmon sensors. The golden of the replay modules is data:
// tests/golden/collectors/optics/ (golden_test.cc).

#include "collectors/optics/optics.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "collectors/optics/module_eeprom.h"
#include "collectors/ethtool_source/ethtool_module_pages.h"
#include "collectors/ethtool_source/ethtool_replay.h"
#include "collectors/sys/sysfs.h"
#include "tests/testing/collector_context.h"
#include "tests/testing/fifo.h"
#include "tests/testing/log_lines.h"
#include "tests/testing/module_images.h"
#include "tests/testing/test_paths.h"

namespace fabricwatch::optics {
namespace {

namespace fs = std::filesystem;
using fabricwatch::testing::CountLogLines;
using ::testing::HasSubstr;
using ::testing::Not;

// A replay directory with one module image per netdev (and one empty cage).
class ReplayDir {
 public:
  ReplayDir() {
    root_ = fs::temp_directory_path() / ("fw-optics-" + std::to_string(::getpid()) + "-" +
                                         std::to_string(counter_++));
    fs::remove_all(root_);
    Add("enp1s0f0", testing::SfpInternal());
    Add("enp2s0f0np0", testing::Qsfp28Paged());
    Add("enp3s0f0np0", testing::Cmis8Lane());
    Add("enp4s0f0np0", testing::QsfpFlatDac());
    Add("enp6s0f0", testing::SfpExternal());
    Add("enp7s0f0np0", testing::CmisFlatDac());
    fs::create_directories(root_ / "enp5s0f0np0");  // a cage without a module
    std::ofstream(root_ / "enp5s0f0np0/statistics") << "NIC statistics:\n     rx_packets: 1\n";
  }
  ~ReplayDir() { fs::remove_all(root_); }
  void Add(const std::string& netdev, const testing::Image& image) {
    fs::create_directories(root_ / netdev);
    std::ofstream(root_ / netdev / "statistics") << "NIC statistics:\n     rx_packets: 1\n";
    std::ofstream out(root_ / netdev / "module-eeprom", std::ios::binary);
    out.write(reinterpret_cast<const char*>(image.bytes().data()),
              static_cast<std::streamsize>(image.bytes().size()));
  }
  void Remove(const std::string& netdev) { fs::remove_all(root_ / netdev); }
  std::string path() const { return root_.string(); }

 private:
  static inline int counter_ = 0;
  fs::path root_;
};

struct CollectRun {
  Status status;
  size_t errors;
  std::string text;
  std::string error_text;  // the first errors, for failure messages
};

class Harness {
 public:
  Harness(const std::string& sysfs_root, sys::EthtoolSource* source, CollectorOptions options = {},
          std::chrono::milliseconds interval = std::chrono::seconds(5),
          std::shared_ptr<spdlog::logger> logger = nullptr)
      : inputs_(sysfs_root, std::move(options)) {
    if (logger != nullptr) inputs_.UseLogger(std::move(logger));
    CollectorContext context = inputs_.Context();
    context.interval = interval;
    context.ethtool = source;
    auto collector = NewOpticsCollector(context);
    EXPECT_TRUE(collector) << collector.error().ToString();
    if (collector) collector_ = std::move(*collector);
  }
  CollectRun Collect() {
    MetricSink sink;
    Status status = collector_->Collect(sink);
    std::string errors;
    for (const Status& e : sink.errors()) errors += e.ToString() + "\n";
    return {status, sink.error_count(), testing::Exposition(sink.TakeFamilies()), errors};
  }
  // Tests step time on by hand (offset).
  testing::TestClock& clock() { return inputs_.clock(); }

 private:
  testing::CollectorTestContext inputs_;
  std::unique_ptr<Collector> collector_;
};

const std::string kEmptySysfs = testing::FixturePath("sysfs/empty/sys");

TEST(OpticsCollectorTest, replay_modules_facts) {
  ReplayDir dir;
  sys::RealFileSystem real;
  sys::ReplayEthtool replay(dir.path(), real);
  // A collector interval equal to the module interval reads every module in one run.
  Harness harness(kEmptySysfs, &replay, {}, std::chrono::seconds(30));
  CollectRun run = harness.Collect();
  ASSERT_TRUE(run.status.ok()) << run.status.ToString();
  EXPECT_EQ(run.errors, 0u) << run.error_text;
  const std::string& t = run.text;
  EXPECT_THAT(t, HasSubstr("fabric_optics_module_present{netdev=\"enp5s0f0np0\"} 0"));
  EXPECT_THAT(t, HasSubstr("fabric_optics_module_temperature_celsius{netdev=\"enp1s0f0\"} 35.5"));
  EXPECT_THAT(t, HasSubstr("fabric_optics_lane_rx_power_watts{netdev=\"enp3s0f0np0\",lane=\"8\"}"));
  EXPECT_THAT(t, HasSubstr("serial=\"Q28SN\""));
  // The externally calibrated SFP: A/D values through the A2h slopes and offsets (§9.3).
  EXPECT_THAT(t, HasSubstr("fabric_optics_module_temperature_celsius{netdev=\"enp6s0f0\"} 29"));
  // The passive DAC has no diagnostics: identity only, no readings, no thresholds.
  EXPECT_THAT(t, HasSubstr("fabric_optics_module_present{netdev=\"enp4s0f0np0\"} 1"));
  EXPECT_THAT(t, Not(HasSubstr("fabric_optics_module_temperature_celsius{netdev=\"enp4s0f0np0\"")));
}

TEST(OpticsCollectorTest, reads_are_spread_over_runs_and_values_kept_between_reads) {
  ReplayDir dir;
  sys::RealFileSystem real;
  sys::ReplayEthtool replay(dir.path(), real);
  // 7 netdevs, 30 s module interval, 5 s runs: at most 2 modules read per run.
  Harness harness(kEmptySysfs, &replay, {}, std::chrono::seconds(5));
  size_t present = 0;
  for (int run = 0; run < 5; ++run) {
    const std::string t = harness.Collect().text;
    size_t now_present = 0;
    for (size_t at = 0; (at = t.find("fabric_optics_module_present{", at)) != std::string::npos;
         ++at) {
      ++now_present;
    }
    EXPECT_EQ(now_present, std::min<size_t>(present + 2, 7)) << "run " << run;
    present = now_present;
    harness.clock().offset += std::chrono::seconds(5);
  }
  // After the module interval every module is due again, still one per run; all stay exported.
  harness.clock().offset += std::chrono::seconds(30);
  EXPECT_THAT(harness.Collect().text,
              HasSubstr("fabric_optics_module_present{netdev=\"enp1s0f0\"} 1"));
}

TEST(OpticsCollectorTest, a_module_swap_replaces_the_info_series) {
  ReplayDir dir;
  sys::RealFileSystem real;
  sys::ReplayEthtool replay(dir.path(), real);
  Harness harness(kEmptySysfs, &replay, {}, std::chrono::seconds(30));
  // The info line of one netdev (enp6s0f0 holds another module with the same serial).
  auto info_of = [](const std::string& text, const std::string& netdev) {
    const std::string prefix = "fabric_optics_info{netdev=\"" + netdev + "\"";
    std::string lines;
    for (size_t at = text.find(prefix); at != std::string::npos; at = text.find(prefix, at + 1)) {
      lines += text.substr(at, text.find('\n', at) - at) + "\n";
    }
    return lines;
  };
  ASSERT_THAT(info_of(harness.Collect().text, "enp1s0f0"), HasSubstr("serial=\"SN0001\""));
  testing::Image swapped = testing::SfpInternal();
  swapped.Ascii(68, 16, "SN0002");  // SFF-8472 Table 4-1: vendor serial number, bytes 68-83
  dir.Add("enp1s0f0", swapped);
  harness.clock().offset += std::chrono::seconds(30);
  const std::string info = info_of(harness.Collect().text, "enp1s0f0");
  EXPECT_THAT(info, HasSubstr("serial=\"SN0002\""));
  EXPECT_THAT(info, Not(HasSubstr("serial=\"SN0001\"")));  // the old series is gone
}

TEST(OpticsCollectorTest, netdevs_that_come_and_go_are_followed_at_the_next_run) {
  ReplayDir dir;
  sys::RealFileSystem real;
  sys::ReplayEthtool replay(dir.path(), real);
  Harness harness(kEmptySysfs, &replay, {}, std::chrono::seconds(30));
  ASSERT_THAT(harness.Collect().text,
              HasSubstr("fabric_optics_module_present{netdev=\"enp2s0f0np0\"} 1"));
  // Within the same second: the netdevs are chosen again because the listing changed, not
  // because time passed.
  dir.Remove("enp2s0f0np0");
  dir.Add("enp8s0f0np0", testing::Qsfp28Paged());
  const std::string t = harness.Collect().text;
  EXPECT_THAT(t, Not(HasSubstr("netdev=\"enp2s0f0np0\"")));
  EXPECT_THAT(t, HasSubstr("fabric_optics_module_present{netdev=\"enp8s0f0np0\"} 1"));
}

TEST(OpticsCollectorTest, a_corrupt_image_is_counted_and_the_others_emitted) {
  ReplayDir dir;
  fs::create_directories(dir.path() + "/enp9s0");
  std::ofstream(dir.path() + "/enp9s0/statistics") << "NIC statistics:\n";
  std::ofstream(dir.path() + "/enp9s0/module-eeprom", std::ios::binary) << "";  // empty image
  sys::RealFileSystem real;
  sys::ReplayEthtool replay(dir.path(), real);
  Harness harness(kEmptySysfs, &replay, {}, std::chrono::seconds(30));
  CollectRun run = harness.Collect();
  ASSERT_TRUE(run.status.ok());
  EXPECT_EQ(run.errors, 1u) << run.error_text;
  EXPECT_THAT(run.text, HasSubstr("fabric_optics_module_present{netdev=\"enp1s0f0\"} 1"));
  EXPECT_THAT(run.text, Not(HasSubstr("netdev=\"enp9s0\"")));
}

TEST(OpticsCollectorTest, a_bad_eeprom_is_one_warning_while_it_stays_bad_and_one_recovery) {
  // Issue 19: the module is read every 30 s by a collector that runs every 5 s; the runs that
  // did not read it logged a false "recovered", and the next read warned again.
  ReplayDir dir;
  fs::create_directories(dir.path() + "/enp9s0");
  std::ofstream(dir.path() + "/enp9s0/statistics") << "NIC statistics:\n";
  std::ofstream(dir.path() + "/enp9s0/module-eeprom", std::ios::binary) << "";  // empty image
  sys::RealFileSystem real;
  sys::ReplayEthtool replay(dir.path(), real);
  std::ostringstream log;
  auto logger = std::make_shared<spdlog::logger>(
      "optics", std::make_shared<spdlog::sinks::ostream_sink_mt>(log));
  Harness harness(kEmptySysfs, &replay, {}, std::chrono::seconds(5), logger);
  size_t errors = 0;
  for (int run = 0; run < 36; ++run) {  // 3 minutes: six reads of the bad module
    errors += harness.Collect().errors;
    harness.clock().offset += std::chrono::seconds(5);
  }
  logger->flush();
  EXPECT_EQ(CountLogLines(log.str(), {"enp9s0 module EEPROM", "image is empty"}), 1) << log.str();
  EXPECT_EQ(CountLogLines(log.str(), {"recovered"}), 0) << log.str();
  EXPECT_GE(errors, 5u);  // every read (one per 30 s) still counts

  // A good module is plugged: one recovery, at its next read.
  dir.Add("enp9s0", testing::SfpInternal());
  for (int run = 0; run < 12; ++run) {
    harness.Collect();
    harness.clock().offset += std::chrono::seconds(5);
  }
  logger->flush();
  EXPECT_EQ(CountLogLines(log.str(), {"enp9s0/decode: recovered"}), 1) << log.str();
  EXPECT_EQ(CountLogLines(log.str(), {"image is empty"}), 2) << log.str();  // warn + recovery
}

TEST(OpticsCollectorTest, a_fifo_in_place_of_a_module_image_is_an_error_not_a_hang) {
  ReplayDir dir;
  const std::string fifo = dir.path() + "/enp1s0f0/module-eeprom";
  ASSERT_TRUE(testing::MakeFifo(fifo));
  testing::BlockedOpenGuard guard({fifo});
  sys::RealFileSystem real;
  sys::ReplayEthtool replay(dir.path(), real);
  Harness harness(kEmptySysfs, &replay, {}, std::chrono::seconds(30));
  CollectRun run = harness.Collect();
  ASSERT_TRUE(run.status.ok()) << run.status.ToString();
  EXPECT_EQ(run.errors, 1u) << run.error_text;
  EXPECT_THAT(run.error_text, HasSubstr(fifo + ": not a regular file (a FIFO)"));
  EXPECT_THAT(run.text, HasSubstr("fabric_optics_module_present{netdev=\"enp2s0f0np0\"} 1"));
  EXPECT_FALSE(guard.fired()) << "an open blocked on the FIFO";
}

TEST(OpticsCollectorTest, mlx5_hwmon_sensors_are_mapped_to_the_rdma_device) {
  const fs::path root = fs::temp_directory_path() / ("fw-hwmon-" + std::to_string(::getpid()));
  fs::remove_all(root);
  const fs::path pci = root / "devices/pci0000:80/0000:80:01.0/0000:81:00.0";
  fs::create_directories(pci / "hwmon/hwmon3");
  fs::create_directories(pci / "infiniband/mlx5_2");
  fs::create_directories(root / "class/hwmon");
  fs::create_directories(root / "class/infiniband");
  fs::create_symlink("../../devices/pci0000:80/0000:80:01.0/0000:81:00.0/hwmon/hwmon3",
                     root / "class/hwmon/hwmon3");
  fs::create_symlink("../../../0000:81:00.0", pci / "hwmon/hwmon3/device");
  fs::create_symlink("../../devices/pci0000:80/0000:80:01.0/0000:81:00.0/infiniband/mlx5_2",
                     root / "class/infiniband/mlx5_2");
  fs::create_symlink("../../../0000:81:00.0", pci / "infiniband/mlx5_2/device");
  const fs::path h = pci / "hwmon/hwmon3";
  std::ofstream(h / "name") << "mlx5\n";
  std::ofstream(h / "temp1_label") << "asic\n";
  std::ofstream(h / "temp1_input") << "61000\n";
  std::ofstream(h / "temp1_crit") << "105000\n";
  std::ofstream(h / "temp1_highest") << "72000\n";
  std::ofstream(h / "temp2_label") << "Module0\n";
  std::ofstream(h / "temp2_input") << "48500\n";
  std::ofstream(h / "temp2_crit") << "75000\n";
  // A hwmon of another driver is ignored.
  fs::create_directories(root / "class/hwmon/hwmon0");
  std::ofstream(root / "class/hwmon/hwmon0/name") << "coretemp\n";
  std::ofstream(root / "class/hwmon/hwmon0/temp1_label") << "Package id 0\n";
  std::ofstream(root / "class/hwmon/hwmon0/temp1_input") << "50000\n";

  Harness harness(root.string(), nullptr);
  CollectRun run = harness.Collect();
  fs::remove_all(root);
  ASSERT_TRUE(run.status.ok()) << run.status.ToString();
  EXPECT_EQ(run.errors, 0u);
  EXPECT_THAT(run.text, HasSubstr("fabric_optics_hwmon_temperature_celsius{pci_address=\"0000:81:"
                                  "00.0\",rdma_device=\"mlx5_2\",sensor=\"module0\"} 48.5"));
  EXPECT_THAT(run.text, HasSubstr("fabric_optics_hwmon_critical_celsius{pci_address=\"0000:81:00."
                                  "0\",rdma_device=\"mlx5_2\",sensor=\"asic\"} 105"));
  EXPECT_THAT(run.text, HasSubstr("fabric_optics_hwmon_highest_celsius{pci_address=\"0000:81:00.0"
                                  "\",rdma_device=\"mlx5_2\",sensor=\"asic\"} 72"));
  EXPECT_THAT(run.text, Not(HasSubstr("coretemp")));
  EXPECT_THAT(run.text, Not(HasSubstr("Package")));
}

TEST(OpticsCollectorTest, nothing_to_read_is_no_data) {
  Harness harness(kEmptySysfs, nullptr);
  EXPECT_EQ(harness.Collect().status.code(), StatusCode::kNoData);
}

TEST(OpticsCollectorTest, invalid_options_name_the_flag) {
  testing::CollectorTestContext inputs(kEmptySysfs, {{"module-interval", "soon"}});
  auto collector = NewOpticsCollector(inputs.Context());
  ASSERT_FALSE(collector);
  EXPECT_THAT(collector.error().message(), HasSubstr("--collector.optics.module-interval"));
}

// The module_eeprom_page count (collectors/core/device_reads.h) is the kernel path's plan,
// ModulePagesToRead, for every memory map the tests know: SFF-8472 with DDM (A0h and A2h, 4 half
// pages), SFF-8636 paged without the optional pages 01h/02h (lower, 00h, 03h: 3), flat SFF-8636
// and CMIS (2), paged CMIS (6).
TEST(OpticsDeviceReadsTest, half_pages_read_match_the_kernel_read_plan) {
  const std::pair<testing::Image, size_t> cases[] = {
      {testing::SfpInternal(), 4}, {testing::SfpExternal(), 4}, {testing::Qsfp28Paged(), 3},
      {testing::QsfpFlatDac(), 2}, {testing::Cmis8Lane(), 6},   {testing::CmisFlatDac(), 2}};
  for (const auto& [image, pages] : cases) {
    const std::vector<uint8_t>& bytes = image.bytes();
    EXPECT_EQ(ModuleHalfPagesRead(bytes), pages) << "identifier " << int{bytes[0]};
    EXPECT_EQ(ModuleHalfPagesRead(bytes), sys::ModulePagesToRead(bytes).size())
        << "identifier " << int{bytes[0]};
  }
  EXPECT_EQ(ModuleHalfPagesRead({}), 0u);
}

TEST(OpticsDeviceReadsTest, module_pages_per_sample) {
  ReplayDir dir;
  sys::RealFileSystem real;
  sys::ReplayEthtool replay(dir.path(), real);
  Harness harness(kEmptySysfs, &replay, {}, std::chrono::seconds(30));
  const std::string reads = "fabricwatch_collector_device_reads{collector=\"optics\",kind=";
  // All 7 cages in one run: 4 + 3 + 6 + 2 + 4 + 2 half pages, and the lower page asked of the
  // empty cage.
  EXPECT_THAT(harness.Collect().text, HasSubstr(reads + "\"module_eeprom_page\"} 22\n"));
  // Nothing is due until the module interval has passed: no read, the kind stays at 0.
  harness.clock().offset += std::chrono::seconds(1);
  EXPECT_THAT(harness.Collect().text, HasSubstr(reads + "\"module_eeprom_page\"} 0\n"));
  harness.clock().offset += std::chrono::seconds(30);
  EXPECT_THAT(harness.Collect().text, HasSubstr(reads + "\"module_eeprom_page\"} 22\n"));
}

}  // namespace
}  // namespace fabricwatch::optics
