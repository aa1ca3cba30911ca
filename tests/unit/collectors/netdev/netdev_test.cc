// Collector `netdev` against fixture trees: facts of the fixtures, an empty root, injected
// failures (through FakeFileSystem: CI runs as root, so permissions cannot fail for real),
// kept-open descriptors, and interfaces that come and go between collections. The golden
// expositions are data: tests/golden/collectors/netdev/ (golden_test.cc).

#include "collectors/netdev/netdev.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cerrno>
#include <filesystem>
#include <fstream>

#include "collectors/sys/link_events.h"
#include "collectors/sys/sysfs.h"
#include "tests/testing/collector_context.h"
#include "tests/testing/fake_filesystem.h"
#include "tests/testing/test_paths.h"

namespace fabricwatch::netdev {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;
using ::testing::Not;
using testing::FakeFileSystem;
using testing::FixturePath;

// Builds the collector over `root` with `fs` and runs collections.
class Harness {
 public:
  Harness(const std::string& root, const sys::FileSystem& fs, CollectorOptions options = {},
          sys::LinkEventLog* link_events = nullptr)
      : inputs_(root, fs, std::move(options)) {
    if (!inputs_.options().contains("device-exclude")) {
      inputs_.options()["device-exclude"] = "^lo$";
    }
    CollectorContext context = inputs_.Context();
    context.link_events = link_events;
    auto collector = NewNetdevCollector(context);
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

 private:
  testing::CollectorTestContext inputs_;
  std::unique_ptr<Collector> collector_;
};

// A writable copy of a fixture tree (symlinks kept), removed at the end of the test.
class TreeCopy {
 public:
  explicit TreeCopy(std::string_view scenario) {
    root_ = fs::temp_directory_path() /
            ("fabricwatch-netdev-" + std::to_string(::getpid()) + "-" +
             std::to_string(counter_++));
    fs::remove_all(root_);
    fs::copy(FixturePath("sysfs/" + std::string(scenario)), root_,
             fs::copy_options::recursive | fs::copy_options::copy_symlinks);
  }
  ~TreeCopy() { fs::remove_all(root_); }
  std::string sys() const { return (root_ / "sys").string(); }
  void Write(const std::string& relative, const std::string& value) const {
    std::ofstream(root_ / "sys" / relative, std::ios::trunc) << value << "\n";
  }

 private:
  static inline int counter_ = 0;
  fs::path root_;
};

TEST(NetdevCollectorTest, roce_node_facts) {
  sys::RealFileSystem real;
  Harness harness(FixturePath("sysfs/roce-node/sys"), real);
  const std::string text = harness.Collect().text;
  // RDMA device from the PCI function's net/ directory (IB) and from the GID table (RoCE).
  EXPECT_THAT(text, HasSubstr("netdev=\"enp65s0f0np0\",driver=\"mlx5_core\",pci_address="
                              "\"0000:41:00.0\",rdma_device=\"mlx5_0\""));
  EXPECT_THAT(text, HasSubstr("netdev=\"ib0\",driver=\"mlx5_core\",pci_address=\"0000:81:00.0\","
                              "rdma_device=\"mlx5_2\""));
  // 200000 Mbit/s -> 25 GB/s; a down port's "-1" speed is omitted, not 0.
  EXPECT_THAT(text, HasSubstr("fabric_netdev_speed_bytes_per_second{netdev=\"enp65s0f0np0\"} "
                              "25000000000"));
  EXPECT_THAT(text, Not(HasSubstr("fabric_netdev_speed_bytes_per_second{netdev=\"enp65s0f1np1\"")));
  // lo is excluded by default; bonding_masters is a file, not an interface.
  EXPECT_THAT(text, Not(HasSubstr("netdev=\"lo\"")));
  EXPECT_THAT(text, Not(HasSubstr("bonding_masters")));
  // Counters stay exact at 64-bit magnitudes the text format can carry.
  EXPECT_THAT(text, HasSubstr("fabric_netdev_receive_bytes_total{netdev=\"enp65s0f0np0\"} "
                              "918273645546"));
}

TEST(NetdevCollectorTest, empty_root_is_no_data) {
  sys::RealFileSystem real;
  Harness harness(FixturePath("sysfs/empty/sys"), real);
  Harness::Run run = harness.Collect();
  EXPECT_EQ(run.status.code(), StatusCode::kNoData);
  EXPECT_EQ(run.errors, 0u);
  EXPECT_EQ(run.text, "");
}

TEST(NetdevCollectorTest, everything_filtered_out_is_no_data) {
  sys::RealFileSystem real;
  Harness harness(FixturePath("sysfs/roce-node/sys"), real, {{"device-include", "^nothing$"}});
  Harness::Run run = harness.Collect();
  EXPECT_EQ(run.status.code(), StatusCode::kNoData);
  EXPECT_EQ(run.text, "");
}

TEST(NetdevCollectorTest, include_and_exclude_filters) {
  sys::RealFileSystem real;
  Harness harness(FixturePath("sysfs/roce-node/sys"), real,
                  {{"device-include", "^(enp.*|ib0)$"}, {"device-exclude", "^enp65s0f1np1$"}});
  const std::string text = harness.Collect().text;
  EXPECT_THAT(text, HasSubstr("netdev=\"enp65s0f0np0\""));
  EXPECT_THAT(text, HasSubstr("netdev=\"ib0\""));
  EXPECT_THAT(text, Not(HasSubstr("netdev=\"enp65s0f1np1\"")));
  EXPECT_THAT(text, Not(HasSubstr("netdev=\"eno1\"")));
}

TEST(NetdevCollectorTest, invalid_filter_is_a_config_error) {
  testing::CollectorTestContext inputs(FixturePath("sysfs/roce-node/sys"),
                                       {{"device-include", "([unclosed"}});
  auto collector = NewNetdevCollector(inputs.Context());
  ASSERT_FALSE(collector);
  EXPECT_EQ(collector.error().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(collector.error().message(), HasSubstr("--collector.netdev.device-include"));
}

TEST(NetdevCollectorTest, malformed_values_are_omitted_counted_and_the_rest_emitted) {
  sys::RealFileSystem real;
  Harness harness(FixturePath("sysfs/malformed/sys"), real);
  Harness::Run run = harness.Collect();
  ASSERT_TRUE(run.status.ok()) << run.status.ToString();
  // bad0: operstate, flags, carrier (7), speed, carrier_changes, carrier_up_count (empty),
  // carrier_down_count (overflow), mtu; broken0: unreadable ifindex.
  EXPECT_EQ(run.errors, 9u);
  EXPECT_THAT(run.text, HasSubstr("fabric_netdev_mtu_bytes{netdev=\"good0\"} 1500"));
  EXPECT_THAT(run.text, Not(HasSubstr("fabric_netdev_mtu_bytes{netdev=\"bad0\"}")));
  // bad0's good values survive its bad ones.
  EXPECT_THAT(run.text, HasSubstr("fabric_netdev_receive_bytes_total{netdev=\"bad0\"} 100"));
  EXPECT_THAT(run.text, Not(HasSubstr("broken0")));
}

TEST(NetdevCollectorTest, injected_failures_hit_only_their_interface) {
  const std::string root = FixturePath("sysfs/roce-node/sys");
  FakeFileSystem fake;
  // Permission denied on one counter of one port.
  fake.Inject(FakeFileSystem::Op::kOpen, root + "/class/net/enp65s0f0np0/statistics/rx_bytes",
              EACCES);
  // The kernel's answer for carrier/speed of a down interface: omitted, not an error.
  fake.Inject(FakeFileSystem::Op::kRead, root + "/class/net/enp65s0f1np1/carrier", EINVAL);
  // A device that vanished between the directory listing and the read.
  fake.Inject(FakeFileSystem::Op::kRead, root + "/class/net/ib0/ifindex", ENODEV);
  Harness harness(root, fake);
  Harness::Run run = harness.Collect();
  ASSERT_TRUE(run.status.ok()) << run.status.ToString();
  EXPECT_EQ(run.errors, 2u);
  ASSERT_EQ(run.error_list.size(), 2u);
  EXPECT_EQ(run.error_list[0].code(), StatusCode::kPermissionDenied);
  EXPECT_THAT(run.error_list[0].message(), HasSubstr("enp65s0f0np0/statistics/rx_bytes"));
  EXPECT_EQ(run.error_list[1].code(), StatusCode::kNotFound);
  EXPECT_THAT(run.error_list[1].message(), HasSubstr("ib0"));

  EXPECT_THAT(run.text, Not(HasSubstr("fabric_netdev_receive_bytes_total{netdev=\"enp65s0f0np0\"")));
  EXPECT_THAT(run.text, HasSubstr("fabric_netdev_transmit_bytes_total{netdev=\"enp65s0f0np0\"}"));
  EXPECT_THAT(run.text, Not(HasSubstr("fabric_netdev_carrier{netdev=\"enp65s0f1np1\"")));
  EXPECT_THAT(run.text, HasSubstr("fabric_netdev_carrier_changes_total{netdev=\"enp65s0f1np1\"} 7"));
  EXPECT_THAT(run.text, Not(HasSubstr("netdev=\"ib0\"")));
  EXPECT_THAT(run.text, HasSubstr("fabric_netdev_carrier{netdev=\"eno1\"} 1"));

  // The fault clears: the next collection is whole again.
  fake.Clear();
  Harness::Run healed = harness.Collect();
  EXPECT_EQ(healed.errors, 0u);
  EXPECT_THAT(healed.text, HasSubstr("netdev=\"ib0\""));
  EXPECT_THAT(healed.text, HasSubstr("fabric_netdev_receive_bytes_total{netdev=\"enp65s0f0np0\"}"));
}

TEST(NetdevCollectorTest, unreadable_class_net_is_an_error_not_no_data) {
  const std::string root = FixturePath("sysfs/roce-node/sys");
  FakeFileSystem fake;
  fake.Inject(FakeFileSystem::Op::kListDir, root + "/class/net", EACCES);
  Harness harness(root, fake);
  Harness::Run run = harness.Collect();
  EXPECT_EQ(run.status.code(), StatusCode::kPermissionDenied);
  EXPECT_THAT(run.status.message(), HasSubstr("class/net"));
}

TEST(NetdevCollectorTest, counter_files_are_kept_open_and_reread) {
  TreeCopy tree("roce-node");
  FakeFileSystem fake;  // passes through to the real copy, counting opens
  Harness harness(tree.sys(), fake);
  ASSERT_TRUE(harness.Collect().status.ok());
  const int opens_after_first = fake.open_calls();
  const int reads_after_first = fake.read_calls();
  tree.Write("class/net/enp65s0f0np0/carrier_changes", "6");
  Harness::Run second = harness.Collect();
  // No file was opened again: every value came from pread on a kept descriptor...
  EXPECT_EQ(fake.open_calls(), opens_after_first);
  EXPECT_GT(fake.read_calls(), reads_after_first);
  // ...and an in-place rewrite (the replay-root contract) is seen.
  EXPECT_THAT(second.text,
              HasSubstr("fabric_netdev_carrier_changes_total{netdev=\"enp65s0f0np0\"} 6"));
}

TEST(NetdevCollectorTest, interfaces_come_and_go) {
  TreeCopy tree("roce-node");
  sys::RealFileSystem real;
  Harness harness(tree.sys(), real);
  ASSERT_THAT(harness.Collect().text, HasSubstr("netdev=\"eno1\""));

  fs::remove(tree.sys() + "/class/net/eno1");
  Harness::Run removed = harness.Collect();
  EXPECT_EQ(removed.errors, 0u);
  EXPECT_THAT(removed.text, Not(HasSubstr("netdev=\"eno1\"")));

  // The name comes back as a new interface (new ifindex, new values).
  fs::create_directory_symlink("../../devices/pci0000:00/0000:00:1f.6/net/eno1",
                               tree.sys() + "/class/net/eno1");
  tree.Write("class/net/eno1/ifindex", "42");
  tree.Write("class/net/eno1/mtu", "9000");
  Harness::Run back = harness.Collect();
  EXPECT_EQ(back.errors, 0u);
  EXPECT_THAT(back.text, HasSubstr("fabric_netdev_mtu_bytes{netdev=\"eno1\"} 9000"));

  // Same name, different ifindex while we hold its descriptors (a rename race).
  tree.Write("class/net/eno1/ifindex", "43");
  tree.Write("class/net/eno1/mtu", "1500");
  Harness::Run renamed = harness.Collect();
  EXPECT_EQ(renamed.errors, 0u);
  EXPECT_THAT(renamed.text, HasSubstr("fabric_netdev_mtu_bytes{netdev=\"eno1\"} 1500"));
}

TEST(NetdevCollectorTest, link_events_are_exported_per_interface) {
  sys::LinkEventLog log;
  log.SetListening(true);
  const auto t = std::chrono::system_clock::time_point(std::chrono::seconds(1795000100));
  for (bool up : {false, true, false}) {
    log.Record({.time = t, .ifindex = 5, .netdev = "enp65s0f1np1", .carrier_up = up,
                .operstate = up ? "up" : "down", .inferred = false});
  }
  sys::RealFileSystem real;
  Harness harness(FixturePath("sysfs/roce-node/sys"), real, {}, &log);
  Harness::Run run = harness.Collect();
  ASSERT_TRUE(run.status.ok());
  EXPECT_THAT(run.text, HasSubstr("fabric_netdev_link_events_total{netdev=\"enp65s0f1np1\","
                                  "transition=\"down\"} 2"));
  // Every interface gets pre-initialised zero counters, so alerts never meet an absent series.
  EXPECT_THAT(run.text,
              HasSubstr("fabric_netdev_link_events_total{netdev=\"eno1\",transition=\"up\"} 0"));
  EXPECT_THAT(run.text, HasSubstr("fabricwatch_link_listener_up 1"));
}

// fabricwatch_collector_device_reads (collectors/core/device_reads.h) on roce-node: 5 interfaces
// (docker0, eno1, enp65s0f0np0, enp65s0f1np1, ib0; lo excluded, bonding_masters is a file).
// Each reads its 8 statistics/ files (dev_get_stats each) and speed and duplex (the driver's
// get_link_ksettings each); operstate, carrier, flags and mtu reach no driver and are not counted.
TEST(NetdevDeviceReadsTest, statistics_files_and_link_settings_per_sample) {
  sys::RealFileSystem real;
  Harness harness(FixturePath("sysfs/roce-node/sys"), real);
  for (int sample = 0; sample < 2; ++sample) {  // per sample, not accumulated
    const std::string text = harness.Collect().text;
    EXPECT_THAT(text, HasSubstr("fabricwatch_collector_device_reads{collector=\"netdev\","
                                "kind=\"netdev_statistics_file\"} 40\n"));
    EXPECT_THAT(text, HasSubstr("fabricwatch_collector_device_reads{collector=\"netdev\","
                                "kind=\"link_settings_query\"} 10\n"));
    EXPECT_THAT(text, Not(HasSubstr("kind=\"pma_counter_file\"")));
  }
}

}  // namespace
}  // namespace fabricwatch::netdev
