#include "collectors/kmsg/kmsg.h"

#include <linux/capability.h>

#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "collectors/core/collector_options.h"
#include "base/value_parse.h"
#include "collectors/kmsg/kmsg_entity.h"
#include "collectors/kmsg/kmsg_metrics.h"
#include "collectors/kmsg/kmsg_parse.h"
#include "collectors/kmsg/kmsg_patterns.h"
#include "collectors/kmsg/kmsg_source.h"
#include "collectors/sys/kmsg_cursor.h"

namespace fabricwatch::kmsg {
namespace {

constexpr CollectorOptionSpec kOptions[] = {
    {"user-records",
     "Also match records written by user space (facility other than kernel). Off: a process "
     "writing a driver's words to /dev/kmsg cannot raise a finding or drain the node",
     "false"},
    {"max-records", "Records read per collection at most; the rest wait for the next one",
     "100000"},
};

constexpr MetricDesc kMetrics[] = {kEvents,  kEventLast,   kUnknownLines,
                                   kRecords, kLostRecords, kSkippedRecords};

constexpr std::string_view kSkipReasons[] = {
    "too_long",        "invalid_utf8", "malformed",      "orphan_continuation",
    "unmapped_device", "rotated",      "no_device_named"};

using TimePoint = std::chrono::system_clock::time_point;
// (device, netdev, event)
using EventKey = std::tuple<std::string, std::string, std::string_view>;

struct EventTotal {
  uint64_t count = 0;
  TimePoint last;
};

class KmsgCollector final : public Collector {
 public:
  KmsgCollector(const CollectorContext& context, bool user_records, size_t max_records)
      : clock_(context.clock),
        logger_(context.logger),
        path_(context.roots.PathOf(kKernelLog)),
        cursor_(context.kmsg_cursor),
        privilege_refused_(context.privilege_refused),
        user_records_(user_records),
        max_records_(max_records),
        resolver_(context.sysfs) {
    for (std::string_view reason : kSkipReasons) skipped_[reason] = 0;
  }

  Status Collect(MetricSink& sink) override {
    if (Status s = OpenSource(); !s.ok()) return s;
    KmsgReadStats stats;
    if (Status s = source_->Read(max_records_, raw_, stats); !s.ok()) {
      source_.reset();  // reopened next time (a replay file that was removed)
      return s;
    }
    Skip("orphan_continuation", stats.orphans, "a KEY=value line with no record before it");
    Skip("too_long", stats.too_long, "a record longer than 8 KB");
    Skip("rotated", stats.rotated, "the partial record where the replay file was cut");
    if (stats.restarted) {
      expected_.reset();  // a new file: its own sequence
      logger_->info("{} was truncated or replaced: reading it again from its start",
                    source_->path());
    }
    const TimePoint read_time = clock_.Now();
    for (const std::string& raw : raw_) Process(raw, read_time);
    Export(sink);
    return Status::Ok();
  }

  // Woken by the source (issue 40 item 3): a kernel log with no record costs no read. Without a
  // source that can be waited on: a missing replay file is looked for every interval (a writer
  // creates it), a kernel log that is absent or refused is retried at the slow fallback (a
  // capability or a sysctl does not change by itself).
  CollectorReadiness Readiness() override {
    if (source_ == nullptr) return {.event_driven = retry_slowly_};
    const int fd = source_->ReadyFd();
    if (fd < 0) return {};
    return {.fd = fd, .backlog = source_->backlog(), .event_driven = true};
  }

 private:
  Status OpenSource() {
    retry_slowly_ = path_.empty();
    if (path_.empty()) {
      if (!reported_unavailable_) {
        logger_->info(
            "no kernel log: --path.sysfs is a replay root and --path.kmsg is not set; kernel "
            "log events are not collected");
        reported_unavailable_ = true;
      }
      return Status(StatusCode::kNoData, "no kernel log source");
    }
    if (source_ == nullptr) {
      const std::optional<uint64_t> saved = cursor_ ? cursor_->Get() : std::nullopt;
      source_ = NewKmsgSource(path_, saved.has_value());
      if (saved && !expected_) expected_ = *saved + 1;
      boot_time_ = clock_.Now() - std::chrono::duration_cast<std::chrono::system_clock::duration>(
                                      std::chrono::steady_clock::now().time_since_epoch());
    }
    if (Status s = source_->Open(); !s.ok()) {
      retry_slowly_ = !source_->replay();
      if (!reported_unavailable_) {
        // Once: the state does not change by itself (a capability, a sysctl, a container).
        if (source_->replay()) {
          logger_->info("kernel log replay file not readable yet, kernel log events wait: {}",
                        s.ToString());
        } else if (s.code() == StatusCode::kPermissionDenied && privilege_refused_ &&
                   privilege_refused_("kernel_log", s)) {
          // The privilege log has said it in its one warning line (README "Privileges").
          logger_->info("kernel log not readable, kernel log events are not collected: {}",
                        s.ToString());
        } else {
          logger_->warn(
              "kernel log not readable, kernel log events are not collected (reading {} needs "
              "CAP_SYSLOG when kernel.dmesg_restrict=1, and printk.devkmsg not off): {}",
              path_, s.ToString());
        }
        reported_unavailable_ = true;
      }
      source_.reset();
      return Status(StatusCode::kNoData, s.ToString());
    }
    if (reported_unavailable_ && !reported_open_) {
      logger_->info("reading the kernel log from {}", path_);
    }
    reported_open_ = true;
    if (source_->ReadyFd() < 0 && !std::exchange(reported_unwatched_, true)) {
      logger_->info("new records of {} are looked for every interval, not waited for: {}", path_,
                    source_->ReadyStatus().ToString());
    }
    return Status::Ok();
  }

  void Process(const std::string& raw, TimePoint read_time) {
    auto record = kmsg::ParseKmsgRecord(raw);
    if (!record) {
      ++records_;
      const std::string& why = record.error().message();
      Skip(why.find("longer than") != std::string::npos ? "too_long"
           : why.find("UTF-8") != std::string::npos     ? "invalid_utf8"
                                                        : "malformed",
           1, why);
      return;
    }
    if (!InSequence(record->sequence)) return;  // read before a restart: not read again
    ++records_;
    // A userspace writer cannot set facility 0 (devkmsg_write): kernel records only, unless
    // configured otherwise.
    if (record->facility != 0 && !user_records_) return;
    const std::string message = kmsg::UnescapeKmsg(record->message);
    const kmsg::KernelEventPattern* pattern = kmsg::MatchKernelEvent(message, record->priority);
    if (pattern == nullptr) {
      // LOGLEVEL_WARNING is 4; a fabric driver's unknown line at warning or worse is counted.
      if (record->priority <= 4) {
        if (auto driver = kmsg::FabricDriverOf(message)) ++unknown_[*driver];
      }
      return;
    }
    const auto entity = EntityOf(*record, message, *pattern);
    if (!entity) return;
    const TimePoint time =
        source_->replay()
            ? read_time
            : boot_time_ + std::chrono::duration_cast<std::chrono::system_clock::duration>(
                               std::chrono::microseconds(record->timestamp_us));
    EventKey key{entity->device, entity->netdev, pattern->event};
    EventTotal& total = totals_[key];
    ++total.count;
    total.last = std::max(total.last, time);
    LogEvent& event = batch_[key];
    if (event.count == 0) {
      event.event.assign(pattern->event);
      event.device = entity->device;
      event.netdev = entity->netdev;
    }
    ++event.count;
    event.last_time = std::max(event.last_time, time);
    if (event.lines.size() == kMaxLogLinesPerEvent) event.lines.erase(event.lines.begin());
    event.lines.push_back(LogLine{time, BoundLabelValue(message)});
  }

  // The fabric function a matching record is about (kmsg_entity.h), or nullopt when it is about
  // something else of this host (a GPU's AER, a bridge, a netdev that is gone): that record is
  // skipped and counted, and the first of each reason is logged (issue 38: no silent drop).
  std::optional<KernelEntity> EntityOf(const kmsg::KmsgRecord& record, const std::string& message,
                                       const kmsg::KernelEventPattern& pattern) {
    const auto now = std::chrono::steady_clock::now();
    const RecordSubject subject = SubjectOf(record, message, pattern);
    std::optional<std::string_view> driver = kmsg::PciDriverOfPattern(pattern);
    if (!driver) driver = kmsg::FabricPciDriverOf(message);
    if (subject.empty() && !subject.bad_name) {
      // A fabric driver's line that names no function: its one function, or the node.
      if (driver) return resolver_.ByDriver(*driver, now);
      Skip("no_device_named", 1, message);
      return std::nullopt;
    }
    if (auto entity = subject.empty() ? std::nullopt : resolver_.Resolve(subject, now)) {
      return entity;
    }
    // A function of this host with no RDMA device or netdev, named by its fabric driver: the
    // probe failed or the device is being torn down. The fault is the node's (its line names the
    // function), never a bound sibling's: that one is healthy.
    if (driver && resolver_.HasPciFunction(subject.pci, now)) return KernelEntity{};
    Skip("unmapped_device", 1, message);
    return std::nullopt;
  }

  // Counts `count` skipped records of `reason`; the first of each reason is logged with what it
  // was, the rest are counted only (fabric_kernel_log_skipped_records_total).
  void Skip(std::string_view reason, uint64_t count, std::string_view what) {
    if (count == 0) return;
    uint64_t& skipped = skipped_[reason];
    if (skipped == 0) {
      logger_->info(
          "kernel log record skipped ({}), counted in fabric_kernel_log_skipped_records_total; "
          "later ones of this reason are counted only: {}",
          reason, BoundLabelValue(std::string(what)));
    }
    skipped += count;
  }

  // Sequence bookkeeping: records already read before a restart are skipped; a jump forward is
  // records lost (overwritten in the ring, EPIPE).
  bool InSequence(uint64_t sequence) {
    if (expected_ && sequence < *expected_) return false;
    if (expected_ && sequence > *expected_) lost_ += sequence - *expected_;
    expected_ = sequence + 1;
    if (cursor_ != nullptr) cursor_->Set(sequence);
    return true;
  }

  void Export(MetricSink& sink) {
    for (const auto& [key, total] : totals_) {
      const auto& [device, netdev, event] = key;
      sink.Add(kEvents, {{"device", device}, {"netdev", netdev}, {"event", event}},
               static_cast<double>(total.count));
      sink.Add(kEventLast, {{"device", device}, {"netdev", netdev}, {"event", event}},
               std::chrono::duration<double>(total.last.time_since_epoch()).count());
    }
    for (const auto& [driver, count] : unknown_) {
      sink.Add(kUnknownLines, {{"driver", driver}}, static_cast<double>(count));
    }
    sink.Add(kRecords, {}, static_cast<double>(records_));
    sink.Add(kLostRecords, {}, static_cast<double>(lost_));
    for (const auto& [reason, count] : skipped_) {
      sink.Add(kSkippedRecords, {{"reason", reason}}, static_cast<double>(count));
    }
    for (auto& [key, event] : batch_) sink.AddLogEvent(std::move(event));
    batch_.clear();
  }

  const Clock& clock_;
  std::shared_ptr<spdlog::logger> logger_;
  std::string path_;
  sys::KmsgCursor* cursor_;
  std::function<bool(std::string_view, const Status&)> privilege_refused_;
  bool user_records_;
  size_t max_records_;
  EntityResolver resolver_;
  std::unique_ptr<KmsgSource> source_;
  bool reported_unavailable_ = false;
  bool reported_open_ = false;
  bool reported_unwatched_ = false;
  bool retry_slowly_ = false;  // no kernel log, or it refused us: the fallback cadence
  TimePoint boot_time_;
  std::optional<uint64_t> expected_;
  std::vector<std::string> raw_;
  std::map<EventKey, EventTotal> totals_;
  std::map<EventKey, LogEvent> batch_;
  std::map<std::string_view, uint64_t> unknown_;
  std::map<std::string_view, uint64_t> skipped_;
  uint64_t records_ = 0;
  uint64_t lost_ = 0;
};

}  // namespace

std::span<const CollectorOptionSpec> KmsgOptions() { return kOptions; }

std::span<const SourceSpec> KmsgSources() {
  static constexpr SourceSpec kSources[] = {kKernelLog};
  return kSources;
}

std::span<const PrivilegeNeed> KmsgPrivileges() {
  // kernel/printk/printk.c check_syslog_permissions(): with kernel.dmesg_restrict=1 (the Debian
  // default) opening /dev/kmsg for reading needs CAP_SYSLOG (docs/reference.md §9.1); a replay
  // file needs nothing, and an unreadable sysctl counts as restricted.
  static constexpr PrivilegeNeed kNeeds[] = {
      {.capability = "CAP_SYSLOG",
       .number = CAP_SYSLOG,
       .feature = "kernel_log",
       .collector = kCollector,
       .loses = "kernel log events of fabric drivers from /dev/kmsg (fabric_kernel_*, the "
                "driver_fault detector and the causes link_flap names)",
       .in_use = [](const Roots& roots) {
         if (roots.PathOf(kKernelLog) != "/dev/kmsg") return false;
         std::ifstream restrict_file("/proc/sys/kernel/dmesg_restrict");
         int restricted = 1;
         restrict_file >> restricted;
         return restricted != 0;
       }}};
  return kNeeds;
}
std::span<const MetricDesc> KmsgMetrics() { return kMetrics; }

Result<std::unique_ptr<Collector>> NewKmsgCollector(const CollectorContext& context) {
  const CollectorOptionReader options("kmsg", context.options, kOptions);
  const std::string user = options.Value("user-records");
  if (user != "true" && user != "false") {
    return Error(Status(StatusCode::kInvalidArgument,
                        options.Flag("user-records") + ": want true or false, got '" + user + "'"));
  }
  const std::string max = options.Value("max-records");
  auto max_records = ParseUint64(max, options.Flag("max-records"));
  if (!max_records) return Error(max_records.error());
  if (*max_records == 0 || *max_records > 10'000'000) {
    return Error(Status(StatusCode::kInvalidArgument,
                        options.Flag("max-records") + ": want 1 to 10000000, got '" + max + "'"));
  }
  return std::unique_ptr<Collector>(
      new KmsgCollector(context, user == "true", static_cast<size_t>(*max_records)));
}

}  // namespace fabricwatch::kmsg
