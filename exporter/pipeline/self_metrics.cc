#include "exporter/pipeline/self_metrics.h"

#include <dirent.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <sstream>

#include "collectors/core/device_reads.h"
#include "base/metric_sink.h"
#include "exporter/version.h"

namespace fabricwatch::exporter {
namespace {

constexpr MetricDesc kBuildInfo{
    "fabricwatch_build_info",
    "fabricwatch build: version, git revision and compiler. Constant 1.",
    MetricKind::kInfo,
    {"version", "revision", "compiler"}};
constexpr MetricDesc kSuccess{
    "fabricwatch_collector_success",
    "1 if the collector's last collection succeeded (possibly with partial errors), 0 if it "
    "failed, found no data, has not run yet, or is stale (its current collection has run for "
    "more than 3 intervals).",
    MetricKind::kGauge,
    {"collector"}};
constexpr MetricDesc kStale{
    "fabricwatch_collector_stale",
    "1 while the collector's current collection has run for more than 3 of its intervals (stuck "
    "in a read or a hung device): success is 0 and the data served is as old as "
    "last_sample_timestamp says. 0 otherwise.",
    MetricKind::kGauge,
    {"collector"}};
constexpr MetricDesc kDuration{"fabricwatch_collector_duration_seconds",
                               "Wall time of the collector's last collection.",
                               MetricKind::kGauge,
                               {"collector"}};
constexpr MetricDesc kErrors{
    "fabricwatch_collector_errors_total",
    "Errors of the collector: failed collections plus partial errors (an unreadable device, "
    "file or value that was skipped while the rest was exported).",
    MetricKind::kCounter,
    {"collector"}};
constexpr MetricDesc kLastSample{
    "fabricwatch_collector_last_sample_timestamp_seconds",
    "Unix time at which the collector's latest snapshot was taken; 0 before the first one. "
    "Scrapes serve this snapshot, so time() minus this is the age of the data.",
    MetricKind::kGauge,
    {"collector"}};
constexpr MetricDesc kInterval{
    "fabricwatch_collector_interval_seconds",
    "Sampling interval of the collector: the configured one, or for a collector its source wakes "
    "(kmsg on /dev/kmsg or a watched --path.kmsg file) the fallback interval (60 s) at which it "
    "collects when nothing arrives.",
    MetricKind::kGauge,
    {"collector"}};
constexpr MetricDesc kSeries{"fabricwatch_collector_series",
                             "Number of series in the collector's latest snapshot.",
                             MetricKind::kGauge,
                             {"collector"}};
constexpr MetricDesc kCpu{"process_cpu_seconds_total",
                          "Total user and system CPU time spent in seconds.",
                          MetricKind::kCounter,
                          {}};
constexpr MetricDesc kRss{
    "process_resident_memory_bytes", "Resident memory size in bytes.", MetricKind::kGauge, {}};
constexpr MetricDesc kVirtual{
    "process_virtual_memory_bytes", "Virtual memory size in bytes.", MetricKind::kGauge, {}};
constexpr MetricDesc kOpenFds{
    "process_open_fds", "Number of open file descriptors.", MetricKind::kGauge, {}};
constexpr MetricDesc kMaxFds{
    "process_max_fds", "Maximum number of open file descriptors.", MetricKind::kGauge, {}};
constexpr MetricDesc kStartTime{"process_start_time_seconds",
                                "Start time of the process since unix epoch in seconds.",
                                MetricKind::kGauge,
                                {}};

// kDeviceReads (collectors/core/device_reads.h) is written by the collectors that read devices,
// into their own snapshots: they count the reads where they make them.
constexpr MetricDesc kAllSelfMetrics[] = {
    kBuildInfo,   kSuccess, kStale, kDuration, kErrors,  kLastSample, kInterval, kSeries,
    kDeviceReads, kCpu,     kRss,   kVirtual,  kOpenFds, kMaxFds,     kStartTime};

double ToSeconds(std::chrono::system_clock::time_point t) {
  return std::chrono::duration<double>(t.time_since_epoch()).count();
}

}  // namespace

std::span<const MetricDesc> SelfMetricDescs() { return kAllSelfMetrics; }

SelfMetrics::SelfMetrics(
    const std::vector<std::pair<std::string, std::chrono::milliseconds>>& collectors) {
  for (const auto& [name, interval] : collectors) collectors_[name].health.interval = interval;
}

void SelfMetrics::RecordStart(const std::string& collector,
                              std::chrono::steady_clock::time_point start) {
  std::lock_guard lock(mutex_);
  collectors_[collector].running_since = start;
}

void SelfMetrics::RecordRun(const std::string& collector, const CollectorRun& run) {
  std::lock_guard lock(mutex_);
  State& state = collectors_[collector];
  state.running_since.reset();
  CollectorHealth& health = state.health;
  health.has_run = true;
  health.success = run.status.ok();
  health.stale = false;
  health.last_status = run.status;
  health.duration_seconds = run.duration_seconds;
  health.errors_total += run.partial_errors;
  if (!run.status.ok() && !run.status.no_data()) ++health.errors_total;
  health.last_sample_timestamp = ToSeconds(run.time);
  health.series = run.series;
}

void SelfMetrics::SetInterval(const std::string& collector, std::chrono::milliseconds interval) {
  std::lock_guard lock(mutex_);
  collectors_[collector].health.interval = interval;
}

std::map<std::string, CollectorHealth> SelfMetrics::Collectors() const {
  const auto now = std::chrono::steady_clock::now();
  std::map<std::string, CollectorHealth> out;
  std::lock_guard lock(mutex_);
  for (const auto& [name, state] : collectors_) {
    CollectorHealth& health = out.emplace(name, state.health).first->second;
    if (!state.running_since || health.interval.count() <= 0) continue;
    const auto running = now - *state.running_since;
    if (running <= kStaleIntervals * health.interval) continue;
    // Stuck: the collector thread cannot say so itself, so it is told here, from its start.
    const double seconds = std::chrono::duration<double>(running).count();
    char text[160];
    snprintf(text, sizeof(text),
             "collection running for %.1fs, more than %d intervals of %.3gs: stuck (a blocked "
             "read or a hung device?); the data served is stale",
             seconds, kStaleIntervals, std::chrono::duration<double>(health.interval).count());
    health.stale = true;
    health.success = false;
    health.last_status = Status(StatusCode::kDeadlineExceeded, text);
  }
  return out;
}

std::vector<prometheus::MetricFamily> SelfMetrics::Collect() const {
  MetricSink sink;
  sink.AddInfo(kBuildInfo,
               {{"version", kVersion}, {"revision", kRevision}, {"compiler", "g++ " __VERSION__}});
  for (const auto& [name, h] : Collectors()) {
    const LabelPair label{"collector", name};
    sink.Add(kSuccess, {label}, h.success ? 1 : 0);
    sink.Add(kStale, {label}, h.stale ? 1 : 0);
    sink.Add(kDuration, {label}, h.duration_seconds);
    sink.Add(kErrors, {label}, static_cast<double>(h.errors_total));
    sink.Add(kLastSample, {label}, h.last_sample_timestamp);
    sink.Add(kInterval, {label}, std::chrono::duration<double>(h.interval).count());
    sink.Add(kSeries, {label}, static_cast<double>(h.series));
  }
  if (auto stats = ReadProcessStats()) {
    sink.Add(kCpu, {}, stats->cpu_seconds);
    sink.Add(kRss, {}, stats->resident_bytes);
    sink.Add(kVirtual, {}, stats->virtual_bytes);
    sink.Add(kOpenFds, {}, stats->open_fds);
    sink.Add(kMaxFds, {}, stats->max_fds);
    sink.Add(kStartTime, {}, stats->start_time_seconds);
  }
  return sink.TakeFamilies();
}

Result<ProcessStats> ReadProcessStats() {
  // proc(5): /proc/self/stat fields after the parenthesised comm; comm may contain spaces and
  // parentheses, so parse from the last ')'.
  std::ifstream stat_file("/proc/self/stat");
  std::string stat((std::istreambuf_iterator<char>(stat_file)), std::istreambuf_iterator<char>());
  size_t close = stat.rfind(')');
  if (close == std::string::npos) {
    return Error(StatusCode::kInternal, "/proc/self/stat: unexpected format");
  }
  std::istringstream fields(stat.substr(close + 2));
  std::vector<std::string> f;
  for (std::string field; fields >> field;) f.push_back(field);
  // f[0] is field 3 (state): field N is f[N - 3].
  if (f.size() < 22) return Error(StatusCode::kInternal, "/proc/self/stat: too few fields");
  const double ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
  const double page = static_cast<double>(sysconf(_SC_PAGESIZE));
  ProcessStats out;
  out.cpu_seconds = (std::stod(f[14 - 3]) + std::stod(f[15 - 3])) / ticks;
  out.virtual_bytes = std::stod(f[23 - 3]);
  out.resident_bytes = std::stod(f[24 - 3]) * page;
  const double start_ticks = std::stod(f[22 - 3]);

  std::ifstream proc_stat("/proc/stat");
  for (std::string line; std::getline(proc_stat, line);) {
    if (line.rfind("btime ", 0) == 0) {
      out.start_time_seconds = std::stod(line.substr(6)) + start_ticks / ticks;
      break;
    }
  }
  if (DIR* dir = opendir("/proc/self/fd")) {
    size_t n = 0;
    while (const dirent* entry = readdir(dir)) n += entry->d_name[0] != '.' ? 1 : 0;
    closedir(dir);
    out.open_fds = static_cast<double>(n > 0 ? n - 1 : 0);  // minus the one opendir holds
  }
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) == 0) out.max_fds = static_cast<double>(limit.rlim_cur);
  return out;
}

}  // namespace fabricwatch::exporter
