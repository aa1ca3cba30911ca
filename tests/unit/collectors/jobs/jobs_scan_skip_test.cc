// Collector `jobs` scans /proc only when a process can hold an RDMA device file (issue 40 item 3):
// with no uverbsN in its uverbs-dir and none in class/infiniband_verbs, no process is read, no
// holder is reported and fabric_jobs_scan_skipped says why; a uverbsN in either makes it scan
// again. The procfs is the slurm-jobs fixture (five processes, three holding uverbs0/uverbs1).

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <string>

#include "collectors/jobs/jobs.h"
#include "collectors/sys/filesystem.h"
#include "collectors/sys/sysfs.h"
#include "tests/testing/collector_context.h"
#include "tests/testing/temp_dir.h"
#include "tests/testing/test_paths.h"

namespace fabricwatch::jobs {
namespace {

// "name{label=value,}" -> value of every sample of one collection.
std::map<std::string, double> Collect(Collector& collector) {
  MetricSink sink;
  EXPECT_TRUE(collector.Collect(sink).ok());
  std::map<std::string, double> out;
  for (const auto& family : sink.TakeFamilies()) {
    for (const auto& metric : family.metric) {
      std::string key = family.name + "{";
      for (const auto& l : metric.label) key += l.name + "=" + l.value + ",";
      out[key + "}"] = metric.counter.value + metric.gauge.value + metric.untyped.value;
    }
  }
  return out;
}

class SkipTest : public ::testing::Test {
 protected:
  SkipTest() {
    dir_.Write("sys/class/net/lo/ifindex", "1\n");
    std::filesystem::create_directories(dir_.Path("dev/infiniband"));
    inputs_.options()["uverbs-dir"] = dir_.Path("dev/infiniband");
    inputs_.options()["slurm-listpids"] = "off";
    inputs_.options()["kubelet"] = "off";
    auto collector = MakeCollector(testing::FixturePath("procfs/slurm-jobs"));
    EXPECT_TRUE(collector) << collector.error().ToString();
    if (collector) collector_ = std::move(*collector);
  }

  // The jobs collector on `procfs` with the options as they are now.
  Result<std::unique_ptr<Collector>> MakeCollector(const std::string& procfs) {
    CollectorContext context = inputs_.Context();
    context.roots.SetReplay(kProcfs, procfs);
    return NewJobsCollector(context);
  }

  testing::TempDir dir_{"jobs-skip"};
  testing::CollectorTestContext inputs_{dir_.Path("sys")};
  std::unique_ptr<Collector> collector_;
};

TEST_F(SkipTest, no_verbs_device_no_scan) {
  ASSERT_NE(collector_, nullptr);
  const auto samples = Collect(*collector_);
  EXPECT_EQ(samples.at("fabric_jobs_scan_skipped{reason=no_verbs_device,}"), 1);
  EXPECT_EQ(samples.at("fabric_jobs_scan_processes{outcome=read,}"), 0);
  EXPECT_EQ(samples.at("fabric_jobs_scan_processes{outcome=skipped,}"), 0);
  EXPECT_EQ(samples.at("fabric_jobs_scan_duration_seconds{}"), 0);
  for (const auto& [key, value] : samples) {
    EXPECT_FALSE(key.starts_with("fabric_device_processes")) << key;
    EXPECT_FALSE(key.starts_with("fabric_device_job_info")) << key;
  }
}

TEST_F(SkipTest, a_uverbs_node_in_uverbs_dir_makes_it_scan) {
  ASSERT_NE(collector_, nullptr);
  dir_.Write("dev/infiniband/uverbs0", "");
  const auto samples = Collect(*collector_);
  EXPECT_FALSE(samples.contains("fabric_jobs_scan_skipped{reason=no_verbs_device,}"));
  EXPECT_EQ(samples.at("fabric_jobs_scan_processes{outcome=read,}"), 5);
}

TEST_F(SkipTest, a_uverbs_class_device_makes_it_scan_and_find_the_holders) {
  ASSERT_NE(collector_, nullptr);
  // The agent's container may not mount /dev/infiniband; sysfs still lists the device.
  dir_.Write("sys/class/infiniband_verbs/uverbs0/ibdev", "mlx5_0\n");
  dir_.Write("sys/class/infiniband_verbs/uverbs1/ibdev", "mlx5_1\n");
  ASSERT_TRUE(Collect(*collector_).contains("fabric_jobs_scan_processes{outcome=read,}"));
  // The fixture's fds name /dev/infiniband/uverbsN: matched with the default uverbs-dir.
  inputs_.options()["uverbs-dir"] = "/dev/infiniband";
  auto collector = MakeCollector(testing::FixturePath("procfs/slurm-jobs"));
  ASSERT_TRUE(collector);
  const auto samples = Collect(**collector);
  EXPECT_FALSE(samples.contains("fabric_jobs_scan_skipped{reason=no_verbs_device,}"));
  EXPECT_EQ(samples.at("fabric_jobs_scan_processes{outcome=read,}"), 5);
  EXPECT_EQ(samples.at("fabric_device_processes{device=mlx5_0,}"), 3);
  // Then the device goes: no scan, no holder.
  std::filesystem::remove_all(dir_.Path("sys/class/infiniband_verbs"));
  if (std::filesystem::exists("/dev/infiniband")) GTEST_SKIP() << "this host has /dev/infiniband";
  const auto after = Collect(**collector);
  EXPECT_EQ(after.at("fabric_jobs_scan_skipped{reason=no_verbs_device,}"), 1);
  EXPECT_FALSE(after.contains("fabric_device_processes{device=mlx5_0,}"));
}

// The agent leaves itself out: <procfs>/self names the reader in that procfs (its verbs event
// listener holds every device, which is not a job using it). A copy of the fixture whose self
// links to 1300, one of mlx5_0's three holders.
TEST_F(SkipTest, the_process_that_procfs_self_names_is_not_a_holder) {
  dir_.Write("sys/class/infiniband_verbs/uverbs0/ibdev", "mlx5_0\n");
  dir_.Write("sys/class/infiniband_verbs/uverbs1/ibdev", "mlx5_1\n");
  const std::string procfs = dir_.Path("proc");
  std::filesystem::copy(
      testing::FixturePath("procfs/slurm-jobs"), procfs,
      std::filesystem::copy_options::recursive | std::filesystem::copy_options::copy_symlinks);
  std::filesystem::create_symlink("1300", procfs + "/self");
  inputs_.options()["uverbs-dir"] = "/dev/infiniband";
  auto collector = MakeCollector(procfs);
  ASSERT_TRUE(collector) << collector.error().ToString();
  const auto samples = Collect(**collector);
  EXPECT_EQ(samples.at("fabric_jobs_scan_processes{outcome=read,}"), 4);
  EXPECT_EQ(samples.at("fabric_device_processes{device=mlx5_0,}"), 2);
}

}  // namespace
}  // namespace fabricwatch::jobs
