// The rdma collector's hw-counter source (rdma_hw_netlink.h, issue 34): the netlink-or-sysfs
// decision, the per-sample lookup in a reply, the fallback log (once per port), and the collector
// on a replay root, which reads the files whatever the option says, with the same exposition.

#include "collectors/rdma/rdma_hw_netlink.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>

#include <cerrno>
#include <sstream>
#include <string>
#include <vector>

#include "collectors/rdma/rdma.h"
#include "collectors/sys/sysfs.h"
#include "tests/testing/collector_context.h"
#include "tests/testing/log_lines.h"
#include "tests/testing/test_paths.h"

namespace fabricwatch::rdma {
namespace {

using fabricwatch::testing::CountLogLines;
using ::testing::HasSubstr;

const std::vector<std::string> kNames = {"duplicate_request", "np_cnp_sent", "out_of_buffer"};

TEST(RdmaHwSourceTest, option_values) {
  EXPECT_EQ(*ParseHwCounterSource("auto", "--f"), HwCounterSource::kAuto);
  EXPECT_EQ(*ParseHwCounterSource("netlink", "--f"), HwCounterSource::kNetlink);
  EXPECT_EQ(*ParseHwCounterSource("sysfs", "--f"), HwCounterSource::kSysfs);
  auto bad = ParseHwCounterSource("ioctl", "--collector.rdma.hw-counters-source");
  ASSERT_FALSE(bad);
  EXPECT_THAT(bad.error().message(), HasSubstr("--collector.rdma.hw-counters-source"));
}

TEST(RdmaHwSourceTest, netlink_only_live_answered_and_known) {
  const std::vector<sys::RdmaHwCounter> reply = {{"np_cnp_sent", 1}, {"out_of_buffer", 2}};
  const Status ok = Status::Ok();
  // The kernel answered with names the directory lists (a subset: an optional counter disabled).
  EXPECT_TRUE(DecideHwCounterSource(HwCounterSource::kAuto, true, ok, kNames, reply).netlink);
  EXPECT_TRUE(DecideHwCounterSource(HwCounterSource::kNetlink, true, ok, kNames, reply).netlink);
  // Forced sysfs, and replay roots whatever the mode.
  auto d = DecideHwCounterSource(HwCounterSource::kSysfs, true, ok, kNames, reply);
  EXPECT_FALSE(d.netlink);
  EXPECT_THAT(d.reason, HasSubstr("hw-counters-source=sysfs"));
  d = DecideHwCounterSource(HwCounterSource::kNetlink, false, ok, kNames, reply);
  EXPECT_FALSE(d.netlink);
  EXPECT_THAT(d.reason, HasSubstr("replay root"));
  // A kernel error: EOPNOTSUPP, EINVAL (no hw stats on the port), no NETLINK_RDMA.
  for (const Status& error :
       {FromErrno(EOPNOTSUPP, "RDMA netlink STAT_GET"), FromErrno(EINVAL, "RDMA netlink STAT_GET"),
        Status(StatusCode::kUnavailable, "RDMA netlink (NETLINK_RDMA) connect: protocol")}) {
    d = DecideHwCounterSource(HwCounterSource::kAuto, true, error, kNames, {});
    EXPECT_FALSE(d.netlink) << error.ToString();
    EXPECT_THAT(d.reason, HasSubstr(error.message()));
  }
  // A name the directory does not list.
  const std::vector<sys::RdmaHwCounter> unknown = {{"np_cnp_sent", 1}, {"new_counter", 2}};
  d = DecideHwCounterSource(HwCounterSource::kAuto, true, ok, kNames, unknown);
  EXPECT_FALSE(d.netlink);
  EXPECT_THAT(d.reason, HasSubstr("\"new_counter\""));
}

TEST(RdmaHwSourceTest, value_lookup_uses_the_hint_then_searches) {
  HwNetlinkPort port;
  port.netlink = true;
  port.reply = {{"a", 1}, {"b", 2}, {"c", 3}};
  int slot = -1;
  uint64_t value = 0;
  EXPECT_FALSE(HwCounterNetlink::Value(port, "b", slot, value));  // not sampled: read the file
  port.sampled = true;
  ASSERT_TRUE(HwCounterNetlink::Value(port, "b", slot, value));
  EXPECT_EQ(value, 2u);
  EXPECT_EQ(slot, 1);
  port.reply = {{"b", 20}, {"c", 30}};  // "a" disabled: positions moved
  ASSERT_TRUE(HwCounterNetlink::Value(port, "b", slot, value));
  EXPECT_EQ(value, 20u);
  EXPECT_EQ(slot, 0);
  EXPECT_FALSE(HwCounterNetlink::Value(port, "a", slot, value));  // left out: read the file
}

// With the host's /sys claimed, a device the kernel does not have (or no NETLINK_RDMA on this
// machine) falls back to the files with one log line, not one per discovery or per sample.
TEST(RdmaHwSourceTest, fallback_is_logged_once_naming_the_directory) {
  std::ostringstream log;
  auto logger = std::make_shared<spdlog::logger>(
      "rdma", std::make_shared<spdlog::sinks::ostream_sink_st>(log));
  HwCounterNetlink source(HwCounterSource::kAuto, /*live_sysfs=*/true, logger);
  const std::string dir = "/sys/class/infiniband/fwtest_absent0/ports/1/hw_counters";
  for (int discovery = 0; discovery < 3; ++discovery) {
    source.BeginDiscovery();
    HwNetlinkPort port = source.DiscoverPort("fwtest_absent0", "1", kNames, dir);
    EXPECT_FALSE(port.netlink);
    source.Sample("fwtest_absent0", port);
    EXPECT_FALSE(port.sampled);
  }
  EXPECT_EQ(CountLogLines(log.str(), {"fwtest_absent0", dir, "instead"}), 1) << log.str();
  // A port without hw_counters has nothing to choose and says nothing.
  HwNetlinkPort none = source.DiscoverPort("fwtest_absent0", "2", {}, dir + "2");
  MetricSink sink;
  HwCounterNetlink::Emit("fwtest_absent0", "2", none, sink);
  EXPECT_EQ(CountLogLines(log.str(), {dir + "2"}), 0);
}

CollectorOptions SourceOption(const char* value) {
  return CollectorOptions{{"hw-counters-source", value}};
}

std::string CollectFixture(const CollectorOptions& options) {
  testing::CollectorTestContext inputs(testing::FixturePath("sysfs/rdma-mlx5/sys"), options);
  auto collector = NewRdmaCollector(inputs.Context());
  EXPECT_TRUE(collector) << collector.error().ToString();
  if (!collector) return "";
  MetricSink sink;
  EXPECT_TRUE((*collector)->Collect(sink).ok());
  return testing::Exposition(sink.TakeFamilies());
}

TEST(RdmaHwSourceTest, replay_root_reads_the_files_whatever_the_option) {
  const std::string by_default = CollectFixture({});
  EXPECT_THAT(by_default, HasSubstr("fabricwatch_rdma_hw_stats_source{device=\"mlx5_0\","
                                    "port=\"1\",source=\"sysfs\"} 1"));
  EXPECT_EQ(by_default.find("source=\"netlink\"} 1"), std::string::npos);
  EXPECT_EQ(CollectFixture(SourceOption("netlink")), by_default);
  EXPECT_EQ(CollectFixture(SourceOption("sysfs")), by_default);
  EXPECT_EQ(CollectFixture(SourceOption("auto")), by_default);
}

TEST(RdmaHwSourceTest, invalid_option_names_the_flag) {
  testing::CollectorTestContext inputs(testing::FixturePath("sysfs/rdma-mlx5/sys"),
                                       SourceOption("both"));
  auto collector = NewRdmaCollector(inputs.Context());
  ASSERT_FALSE(collector);
  EXPECT_THAT(collector.error().message(), HasSubstr("--collector.rdma.hw-counters-source"));
}

TEST(RdmaHwSourceTest, a_stale_index_is_looked_up_in_a_new_dump) {
  // Issue 34 review: rxe0 deleted and re-added; index 3 now answers for rxe1. The port asks the
  // new index at the next sample, or falls back to its files when the dump does not list it.
  const std::vector<std::pair<std::string, uint32_t>> indexes = {{"rxe1", 3}, {"rxe0", 4}};
  uint32_t index = 3;
  ASSERT_TRUE(FindDeviceIndex(indexes, Status::Ok(), "rxe0", 3, index).ok());
  EXPECT_EQ(index, 4u);
  index = 3;
  Status s = FindDeviceIndex(indexes, Status::Ok(), "mlx5_0", 3, index);
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_THAT(s.message(), HasSubstr("does not list mlx5_0 (ibdev index 3 is another device's)"));
  EXPECT_EQ(index, 3u);
  const Status failed = FromErrno(EBUSY, "RDMA netlink GET dump");
  s = FindDeviceIndex(indexes, failed, "rxe0", 3, index);
  EXPECT_EQ(s.sys_errno(), EBUSY);
  EXPECT_EQ(index, 3u);
}

}  // namespace
}  // namespace fabricwatch::rdma
