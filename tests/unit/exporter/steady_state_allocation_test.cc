// Zero heap allocations per steady-state sample (issue 11, docs/design.md §8): every collector that
// samples a node's counters (netdev, rdma, ethtool at 1 s) and its modules (optics, here reading
// every module on every run) is run the scheduler's way on a simulated node, and operator new
// is counted while it collects and publishes. Discovery (the first runs) is excluded; topology
// is excluded because each of its runs is a full PCI rediscovery by design.
//
// Allocations are counted by fabricbench's counter (tools/bench/allocation_counter.h): only the
// test's own thread, and only inside a measured collection, so gtest's allocations do not show.

#include <gtest/gtest.h>
#include <spdlog/sinks/null_sink.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <string>

#include "collectors/collector_set.h"
#include "collectors/core/collector_info.h"
#include "collectors/ethtool_source/ethtool_replay.h"
#include "collectors/jobs/jobs.h"
#include "collectors/kmsg/kmsg.h"
#include "collectors/sys/filesystem.h"
#include "collectors/sys/sysfs.h"
#include "exporter/pipeline/scheduler.h"
#include "exporter/pipeline/snapshot_store.h"
#include "tests/testing/sim_pipeline.h"
#include "tests/testing/temp_dir.h"
#include "tools/bench/allocation_counter.h"
#include "tools/fabricsim/simulator.h"

namespace fabricwatch::testing {
namespace {

constexpr int kWarmupRuns = 3;

// The modules a preset plugs (hgx-ib's IB ports have none readable through ethtool).
size_t ModuleCount(const std::string& preset) {
  auto spec = sim::PresetSpec(preset);
  size_t modules = 0;
  for (const auto& hca : spec->hcas) {
    if (hca.module != sim::ModuleType::kNone) modules += static_cast<size_t>(hca.ports);
  }
  return modules;
}
constexpr int kMeasuredRuns = 10;

class SteadyStateAllocationTest : public ::testing::TestWithParam<std::string> {};

TEST_P(SteadyStateAllocationTest, sampling_allocates_nothing_once_discovery_is_done) {
  TempDir dir("fw-alloc");
  auto node = sim::BuildPreset(GetParam());
  ASSERT_TRUE(node) << node.error().ToString();
  sim::Scenario quiet;
  quiet.source = "quiet";
  quiet.duration_s = 3600;
  auto simulator = sim::Simulator::Create(std::move(*node), std::move(quiet), dir.str(), {});
  ASSERT_TRUE(simulator) << simulator.error().ToString();
  ASSERT_TRUE((*simulator)->WriteInitial().ok());

  const sys::RealFileSystem filesystem;
  const sys::SysFs sysfs(dir.Path("sys"), filesystem);
  SimClock clock;
  const auto epoch = std::chrono::system_clock::time_point(std::chrono::seconds(1795000000));
  clock.Set(epoch);
  auto logger =
      std::make_shared<spdlog::logger>("alloc", std::make_shared<spdlog::sinks::null_sink_st>());
  exporter::SnapshotStore store;

  struct Measured {
    exporter::ScheduledCollector scheduled;
    exporter::CollectionBuffers buffers;
    std::unique_ptr<sys::EthtoolSource> ethtool;
  };
  Roots roots{.sysfs = dir.Path("sys"), .ethtool = dir.Path("ethtool")};
  roots.SetReplay(kmsg::kKernelLog, dir.Path("kmsg"));
  roots.SetReplay(jobs::kProcfs, dir.Path("proc"));
  const CollectorSources sources{.sysfs = sysfs,
                                 .clock = clock,
                                 .new_ethtool = [&]() -> std::unique_ptr<sys::EthtoolSource> {
                                   return std::make_unique<sys::ReplayEthtool>(dir.Path("ethtool"),
                                                                               filesystem);
                                 },
                                 .logger = [&](std::string_view) { return logger; },
                                 .roots = roots};
  auto built = BuildCollectors(sources, [](const CollectorInfo& info) {
    std::optional<CollectorSelection> selection;
    if (info.name == "topology") return selection;  // a full PCI rediscovery per run, by design
    // Attribution rediscovers ports (peer, every 10 s) and scans /proc (jobs, every 30 s) per
    // run by design: neither is a per-second sampling path.
    if (info.name == "peer" || info.name == "jobs") return selection;
    selection = CollectorSelection{DefaultOptions(info), std::chrono::seconds(1)};
    // Every module read and decoded on every run: the module path is what is measured.
    if (info.name == "optics") selection->options["module-interval"] = "1s";
    return selection;
  });
  ASSERT_TRUE(built) << built.error().ToString();
  std::vector<std::unique_ptr<Measured>> measured;
  for (BuiltCollector& b : *built) {
    auto m = std::make_unique<Measured>();
    m->ethtool = std::move(b.ethtool);
    m->scheduled = exporter::ScheduledCollector{.name = std::string(b.info->name),
                                                .interval = std::chrono::seconds(1),
                                                .collector = std::move(b.collector),
                                                .logger = logger};
    measured.push_back(std::move(m));
  }
  ASSERT_EQ(measured.size(), 5u);

  for (int run = 0; run < kWarmupRuns + kMeasuredRuns; ++run) {
    // One simulated second per run: counters move, module monitors drift, files are rewritten
    // in place as the kernel would (outside the counted region).
    ASSERT_TRUE((*simulator)->AdvanceTo(run + 1).has_value());
    clock.Set(epoch + std::chrono::seconds(run + 1));
    for (auto& m : measured) {
      bench::StartCountingAllocations();
      exporter::CollectionOutcome outcome = exporter::CollectOnce(m->scheduled, clock, &m->buffers);
      store.Publish(std::move(outcome.snapshot));
      const uint64_t allocations = bench::StopCountingAllocations();
      ASSERT_TRUE(outcome.run.status.ok())
          << m->scheduled.name << ": " << outcome.run.status.ToString();
      EXPECT_EQ(outcome.run.partial_errors, 0u) << m->scheduled.name;
      EXPECT_GT(outcome.run.series, 0u) << m->scheduled.name;
      if (m->scheduled.name == "optics") {
        // Proof that the module path ran: every module present was read in this very run.
        const double now = static_cast<double>(
            std::chrono::duration_cast<std::chrono::seconds>(clock.Now().time_since_epoch())
                .count());
        size_t modules_read = 0;
        for (const prometheus::MetricFamily& family : store.Latest("optics")->families) {
          if (family.name != "fabric_optics_last_read_timestamp_seconds") continue;
          for (const prometheus::ClientMetric& metric : family.metric) {
            EXPECT_EQ(metric.gauge.value, now);
            ++modules_read;
          }
        }
        EXPECT_EQ(modules_read, GetParam() == "hgx-ib" ? 0u : ModuleCount(GetParam()));
      }
      if (run >= kWarmupRuns) {
        EXPECT_EQ(allocations, 0u) << m->scheduled.name << " allocated in steady-state run " << run
                                   << " on " << GetParam();
      }
    }
  }
}

// hgx-ib: IB ports (optics from mlx5 hwmon only); hgx-roce: RoCE netdevs with about a thousand
// mlx5 ethtool statistics each and CMIS modules (QSFP-DD, OSFP); roce-small: an SFF-8636 QSFP28
// and an SFF-8472 SFP, so every module decoder is measured.
INSTANTIATE_TEST_SUITE_P(Presets, SteadyStateAllocationTest,
                         ::testing::Values("hgx-ib", "hgx-roce", "roce-small"),
                         [](const auto& info) {
                           std::string name = info.param;
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

}  // namespace
}  // namespace fabricwatch::testing
