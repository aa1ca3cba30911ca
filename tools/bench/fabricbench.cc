// fabricbench: the in-process half of the benchmark (tools/bench/run.sh drives the rest).
//
// It builds the agent's own collectors from the registry on a replay root, exactly as main()
// does, and samples them back to back the scheduler's way (CollectOnce with the collector's
// CollectionBuffers, each snapshot published into a SnapshotStore), on a clock that moves one
// default interval per sample (SteppedClock). Per collector and per
// steady-state sample it measures:
//   - thread CPU time (CLOCK_THREAD_CPUTIME_ID: user+sys of the sampling thread) and wall time;
//   - heap allocations (operator new calls of the sampling thread; allocation_counter.h);
//   - filesystem operations through a counting FileSystem decorator: counter files read (one
//     pread each), opens, directory listings, readlinks — the "floor" the syscall count of
//     strace is compared against;
//   - series emitted;
//   - device reads: what the sample asked of the NICs' drivers and firmware, by kind (PMA MADs,
//     hw_counters reads, ethtool requests, module EEPROM pages, ...), from the collector's own
//     fabricwatch_collector_device_reads (collectors/core/device_reads.h), and what reading the
//     hw_counters by RDMA netlink (one request per port) would make of the hw_counters reads.
// Then the scrape path: the render of all collectors' latest families into the text format,
// p50/p99 over repeated renders, and the exposition size.
// Discovery (the first samples, which open files and build label sets) is excluded by warm-up.
//
// Output: a Markdown table on stdout and, with --json, a JSON document for run.sh.

#include <spdlog/sinks/null_sink.h>
#include <spdlog/spdlog.h>
#include <sys/resource.h>
#include <time.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <new>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "collectors/collector_set.h"
#include "collectors/core/device_reads.h"
#include "collectors/core/collector_info.h"
#include "collectors/ethtool_source/ethtool_replay.h"
#include "collectors/sys/filesystem.h"
#include "collectors/sys/sysfs.h"
#include "exporter/file_limit.h"
#include "exporter/http/render.h"
#include "exporter/pipeline/scheduler.h"
#include "exporter/pipeline/snapshot_store.h"
#include "tools/bench/allocation_counter.h"

namespace fabricwatch::bench {
namespace {

struct FsCounts {
  uint64_t opens = 0, reads = 0, listdirs = 0, readlinks = 0;
};

// Counts what the collectors ask of the filesystem; forwards everything to the real one.
class CountingFileSystem final : public sys::FileSystem {
 public:
  explicit CountingFileSystem(const sys::FileSystem& inner) : inner_(inner) {}
  Result<sys::UniqueFd> Open(const std::string& path) const override {
    ++counts_.opens;
    return inner_.Open(path);
  }
  Result<size_t> ReadAt0(const sys::UniqueFd& fd, std::span<char> buf,
                         const std::string& path) const override {
    ++counts_.reads;
    return inner_.ReadAt0(fd, buf, path);
  }
  Result<std::vector<std::string>> ListDir(const std::string& path) const override {
    ++counts_.listdirs;
    return inner_.ListDir(path);
  }
  Status ListDirInto(const std::string& path, std::vector<std::string>& names) const override {
    ++counts_.listdirs;
    return inner_.ListDirInto(path, names);
  }
  Result<std::string> ReadLink(const std::string& path) const override {
    ++counts_.readlinks;
    return inner_.ReadLink(path);
  }
  FsCounts counts() const { return counts_; }

 private:
  const sys::FileSystem& inner_;
  mutable FsCounts counts_;
};

// Time as a collector sees it at its cadence: each sample one default interval after the one
// before, however fast the samples run back to back. A collector that spreads work over its runs
// does in each sample what it does at its cadence: optics reads its share of the modules
// (all of them once per module-interval), listings are re-chosen every 60 s.
class SteppedClock final : public Clock {
 public:
  std::chrono::system_clock::time_point Now() const override { return now_; }
  void Advance(std::chrono::milliseconds step) { now_ += step; }

 private:
  std::chrono::system_clock::time_point now_ = std::chrono::system_clock::now();
};

uint64_t ThreadCpuNanos() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000ull + static_cast<uint64_t>(ts.tv_nsec);
}

uint64_t MonotonicNanos() {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count());
}

double Percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  size_t index = static_cast<size_t>(p * static_cast<double>(values.size() - 1) + 0.5);
  return values[std::min(index, values.size() - 1)];
}

double Mean(const std::vector<double>& values) {
  if (values.empty()) return 0;
  double sum = 0;
  for (double v : values) sum += v;
  return sum / static_cast<double>(values.size());
}

struct CollectorFigures {
  std::string name;
  uint64_t samples = 0;
  std::vector<double> cpu_us, wall_us, allocations;
  double reads = 0, opens = 0, listdirs = 0, readlinks = 0;  // per steady-state sample
  size_t series = 0;
  double interval_ms = 1000;  // the collector's default cadence
  uint64_t partial_errors = 0;
  std::string status;
  // Device reads per steady-state sample by kind (mean), and the ports with hw_counters (rdma:
  // the series of fabricwatch_rdma_hw_stats_source), each of which RDMA netlink reads in one
  // request.
  std::map<std::string, double> device_reads;
  size_t hw_counter_ports = 0;
};

// Adds this snapshot's fabricwatch_collector_device_reads to `f` (summed; divided by the sample
// count at the end) and takes its count of ports with hw_counters.
void AddDeviceReads(const exporter::Snapshot& snapshot, CollectorFigures& f) {
  for (const prometheus::MetricFamily& family : snapshot.families) {
    if (family.name == "fabricwatch_rdma_hw_stats_source")
      f.hw_counter_ports = family.metric.size();
    if (family.name != kDeviceReads.name) continue;
    for (const prometheus::ClientMetric& metric : family.metric) {
      for (const prometheus::ClientMetric::Label& label : metric.label) {
        if (label.name == "kind") f.device_reads[label.value] += metric.gauge.value;
      }
    }
  }
}

// Samples one collector `warmup` times (discovery, excluded), then `samples` times measured,
// exactly as the scheduler does (exporter/pipeline/scheduler.cc): CollectOnce with the
// collector's buffers carried from sample to sample, each snapshot published into a store that
// replaces the previous one, so recycling of the retired snapshots is measured too.
CollectorFigures Measure(BuiltCollector& b, int warmup, int samples, SteppedClock& clock,
                         const CountingFileSystem& fs, exporter::SnapshotStore& store,
                         const std::shared_ptr<spdlog::logger>& logger) {
  const CollectorInfo& info = *b.info;
  exporter::ScheduledCollector scheduled{.name = std::string(info.name),
                                         .interval = info.default_interval,
                                         .collector = std::move(b.collector),
                                         .logger = logger};
  exporter::CollectionBuffers buffers;
  CollectorFigures f;
  f.name = scheduled.name;
  f.interval_ms = static_cast<double>(info.default_interval.count());
  for (int i = 0; i < warmup; ++i) {
    clock.Advance(info.default_interval);
    store.Publish(exporter::CollectOnce(scheduled, clock, &buffers).snapshot);
  }
  FsCounts before = fs.counts();
  for (int i = 0; i < samples; ++i) {
    clock.Advance(info.default_interval);
    StartCountingAllocations();
    uint64_t cpu0 = ThreadCpuNanos();
    uint64_t wall0 = MonotonicNanos();
    exporter::CollectionOutcome outcome = exporter::CollectOnce(scheduled, clock, &buffers);
    const std::shared_ptr<exporter::Snapshot> snapshot = outcome.snapshot;
    store.Publish(std::move(outcome.snapshot));
    uint64_t wall1 = MonotonicNanos();
    uint64_t cpu1 = ThreadCpuNanos();
    const uint64_t allocations = StopCountingAllocations();
    AddDeviceReads(*snapshot, f);
    f.cpu_us.push_back(static_cast<double>(cpu1 - cpu0) / 1000.0);
    f.wall_us.push_back(static_cast<double>(wall1 - wall0) / 1000.0);
    f.allocations.push_back(static_cast<double>(allocations));
    f.series = outcome.run.series;
    f.partial_errors += outcome.run.partial_errors;
    const Status& status = outcome.run.status;
    f.status = status.ok() ? "ok" : status.ToString();
  }
  FsCounts after = fs.counts();
  double n = samples;
  f.samples = static_cast<uint64_t>(samples);
  f.reads = static_cast<double>(after.reads - before.reads) / n;
  f.opens = static_cast<double>(after.opens - before.opens) / n;
  f.listdirs = static_cast<double>(after.listdirs - before.listdirs) / n;
  f.readlinks = static_cast<double>(after.readlinks - before.readlinks) / n;
  for (auto& [kind, reads] : f.device_reads) reads /= n;
  return f;
}

// The reads that reach a NIC's driver or firmware (collectors/core/device_reads.h), per sample
// and per second at the collector's default cadence.
void PrintDeviceReads(const std::vector<CollectorFigures>& figures) {
  std::printf("\ndevice reads (driver or firmware; collectors/core/device_reads.h):\n\n");
  std::printf("| collector | kind | reads/sample | reads/s at the default cadence |\n");
  std::printf("|---|---|---|---|\n");
  for (const CollectorFigures& f : figures) {
    for (std::string_view kind : kDeviceReadNames) {  // in the enum's order
      auto it = f.device_reads.find(std::string(kind));
      if (it == f.device_reads.end()) continue;
      std::printf("| %s | %s | %.1f | %.1f |\n", f.name.c_str(), it->first.c_str(), it->second,
                  it->second * 1000.0 / f.interval_ms);
    }
  }
  for (const CollectorFigures& f : figures) {
    auto files = f.device_reads.find("hw_counter_file");
    if (files == f.device_reads.end() || f.hw_counter_ports == 0) continue;
    // Issue 34: one RDMA_NLDEV_CMD_STAT_GET per port instead of one read per file (on the host's
    // own /sys; a replay root is always read from its files).
    std::printf(
        "\nhw_counters by RDMA netlink: %zu requests/sample (one per port) instead of "
        "%.1f file reads (%.1fx fewer)\n",
        f.hw_counter_ports, files->second, files->second / static_cast<double>(f.hw_counter_ports));
  }
}

// Sums over the collectors: per sample, and per second at the default cadences (counters 1 s,
// optics 5 s, topology 60 s: what one second of the agent's sampling costs).
struct Totals {
  double cpu = 0, reads = 0, allocations = 0;
  double cpu_per_second = 0, reads_per_second = 0, allocations_per_second = 0;
};

Totals PrintReport(const std::vector<CollectorFigures>& figures, size_t exposition_bytes,
                   const std::vector<double>& render_us, int renders) {
  std::printf(
      "| collector | series | CPU µs/sample (mean, p99) | wall µs (p50) | "
      "allocations/sample (p50, mean, max) | "
      "file reads | opens | listdirs | readlinks | status |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|\n");
  Totals t;
  for (const CollectorFigures& f : figures) {
    std::printf(
        "| %s | %zu | %.1f, %.1f | %.1f | %.0f, %.1f, %.0f | %.1f | %.1f | %.1f | %.1f | %s |\n",
        f.name.c_str(), f.series, Mean(f.cpu_us), Percentile(f.cpu_us, 0.99),
        Percentile(f.wall_us, 0.5), Percentile(f.allocations, 0.5), Mean(f.allocations),
        Percentile(f.allocations, 1.0), f.reads, f.opens, f.listdirs, f.readlinks,
        f.status.c_str());
    t.cpu += Mean(f.cpu_us);
    t.reads += f.reads;
    t.allocations += Mean(f.allocations);
    const double per_second = 1000.0 / f.interval_ms;
    t.cpu_per_second += Mean(f.cpu_us) * per_second;
    t.reads_per_second += f.reads * per_second;
    t.allocations_per_second += Mean(f.allocations) * per_second;
  }
  std::printf("\nat default cadences: %.1f µs CPU, %.1f file reads, %.0f allocations per second\n",
              t.cpu_per_second, t.reads_per_second, t.allocations_per_second);
  std::printf("\nrender: %zu bytes, p50 %.1f µs, p99 %.1f µs over %d renders\n", exposition_bytes,
              Percentile(render_us, 0.5), Percentile(render_us, 0.99), renders);
  PrintDeviceReads(figures);
  return t;
}

nlohmann::json ReportJson(const std::vector<CollectorFigures>& figures, const Totals& t,
                          const std::string& sysfs_path, const std::string& ethtool_path,
                          size_t exposition_bytes, const std::vector<double>& render_us,
                          int renders) {
  nlohmann::json out;
  out["sysfs"] = sysfs_path;
  out["ethtool"] = ethtool_path;
  std::map<std::string, double> reads_per_second;  // device reads, by kind, all collectors
  double reads_per_sample = 0;
  for (const CollectorFigures& f : figures) {
    out["collectors"][f.name] = {
        {"series", f.series},
        {"interval_ms", f.interval_ms},
        {"samples", f.samples},
        {"cpu_us_mean", Mean(f.cpu_us)},
        {"cpu_us_p99", Percentile(f.cpu_us, 0.99)},
        {"wall_us_p50", Percentile(f.wall_us, 0.5)},
        {"allocations_per_sample", Mean(f.allocations)},
        // The median is the steady state; the mean includes the periodic rediscoveries
        // (rdma, ethtool and optics list and choose again every 60 s of SteppedClock time).
        {"allocations_p50", Percentile(f.allocations, 0.5)},
        {"allocations_max", Percentile(f.allocations, 1.0)},
        {"file_reads_per_sample", f.reads},
        {"opens_per_sample", f.opens},
        {"listdirs_per_sample", f.listdirs},
        {"readlinks_per_sample", f.readlinks},
        {"partial_errors", f.partial_errors},
        {"status", f.status},
        {"device_reads_per_sample", f.device_reads},
    };
    for (const auto& [kind, reads] : f.device_reads) {
      reads_per_second[kind] += reads * 1000.0 / f.interval_ms;
      reads_per_sample += reads;
    }
    auto files = f.device_reads.find("hw_counter_file");
    if (files != f.device_reads.end() && f.hw_counter_ports > 0) {
      out["rdma_hw_counters_netlink"] = {{"ports", f.hw_counter_ports},
                                         {"file_reads_per_sample", files->second},
                                         {"netlink_requests_per_sample", f.hw_counter_ports}};
    }
  }
  out["per_second"] = {{"cpu_us", t.cpu_per_second},
                       {"file_reads", t.reads_per_second},
                       {"allocations", t.allocations_per_second}};
  out["device_reads_per_second"] = reads_per_second;
  out["total"]["device_reads_per_sample"] = reads_per_sample;
  out["total"]["cpu_us_per_sample"] = t.cpu;
  out["total"]["file_reads_per_sample"] = t.reads;
  out["total"]["allocations_per_sample"] = t.allocations;
  out["render"] = {{"bytes", exposition_bytes},
                   {"p50_us", Percentile(render_us, 0.5)},
                   {"p99_us", Percentile(render_us, 0.99)},
                   {"renders", renders}};
  return out;
}

int Main(int argc, char** argv) {
  CLI::App app{"fabricbench: per-sample cost of fabricwatch's collectors on a replay root"};
  std::string sysfs_path, ethtool_path, json_path;
  std::vector<std::string> only;
  int warmup = 3, samples = 100, renders = 200;
  app.add_option("--path.sysfs", sysfs_path, "replay sysfs root")->required();
  app.add_option("--path.ethtool", ethtool_path, "replay ethtool directory");
  app.add_option("--collectors", only, "collectors to run (default: all enabled by default)")
      ->delimiter(',');
  app.add_option("--warmup", warmup, "samples per collector excluded as discovery")
      ->check(CLI::Range(1, 1000));
  app.add_option("--samples", samples, "steady-state samples per collector")
      ->check(CLI::Range(1, 1000000));
  app.add_option("--renders", renders, "renders of the whole exposition")
      ->check(CLI::Range(0, 1000000));
  app.add_option("--json", json_path, "write the figures as JSON to this file");
  CLI11_PARSE(app, argc, argv);

  auto logger =
      std::make_shared<spdlog::logger>("bench", std::make_shared<spdlog::sinks::null_sink_st>());
  // As the agent does: every counter file stays open, more than 1024 of them on a big node.
  exporter::RaiseFileLimit(*logger);
  SteppedClock clock;
  const sys::RealFileSystem real_fs;
  const CountingFileSystem fs(real_fs);
  const sys::SysFs sysfs(sysfs_path, fs);
  // Built as the agent builds them (collectors/collector_set.h): registry defaults, and a
  // replay ethtool source of its own for each collector that reads one.
  const CollectorSources sources{.sysfs = sysfs,
                                 .clock = clock,
                                 .new_ethtool = [&]() -> std::unique_ptr<sys::EthtoolSource> {
                                   if (ethtool_path.empty()) return nullptr;
                                   return std::make_unique<sys::ReplayEthtool>(ethtool_path, fs);
                                 },
                                 .logger = [&](std::string_view) { return logger; }};
  auto built = BuildCollectors(sources, [&](const CollectorInfo& info) {
    if (only.empty()) return DefaultSelection(info);
    std::optional<CollectorSelection> none;
    if (std::find(only.begin(), only.end(), info.name) == only.end()) return none;
    return std::optional<CollectorSelection>({DefaultOptions(info), info.default_interval});
  });
  if (!built) {
    std::fprintf(stderr, "fabricbench: %s\n", built.error().ToString().c_str());
    return 1;
  }

  std::vector<CollectorFigures> figures;
  std::vector<prometheus::MetricFamily> exposition;
  exporter::SnapshotStore store;
  for (BuiltCollector& b : *built) {
    CollectorFigures f = Measure(b, warmup, samples, clock, fs, store, logger);
    const auto last = store.Latest(f.name);
    exposition.insert(exposition.end(), last->families.begin(), last->families.end());
    figures.push_back(std::move(f));
  }

  std::vector<double> render_us;
  size_t exposition_bytes = 0;
  for (int i = 0; i < renders; ++i) {
    uint64_t wall0 = MonotonicNanos();
    std::string text = exporter::RenderText(exposition);
    render_us.push_back(static_cast<double>(MonotonicNanos() - wall0) / 1000.0);
    exposition_bytes = text.size();
  }

  const Totals totals = PrintReport(figures, exposition_bytes, render_us, renders);
  if (!json_path.empty()) {
    const nlohmann::json out =
        ReportJson(figures, totals, sysfs_path, ethtool_path, exposition_bytes, render_us, renders);
    std::ofstream file(json_path);
    file << out.dump(2) << "\n";
    if (!file) {
      std::fprintf(stderr, "fabricbench: cannot write %s\n", json_path.c_str());
      return 1;
    }
  }
  return 0;
}

}  // namespace
}  // namespace fabricwatch::bench

int main(int argc, char** argv) { return fabricwatch::bench::Main(argc, argv); }
