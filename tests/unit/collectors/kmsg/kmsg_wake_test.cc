// Collector `kmsg` costs nothing while no record arrives (issue 40 item 3): its source tells when
// records may be there (kmsg_source.h ReadyFd: /dev/kmsg's poll(), an inotify watch of a replay
// file) and the scheduler collects then, else only at its slow fallback. Checked here: the replay
// watch through writes, truncation, rotation by rename and by move-and-create, the backlog a
// bounded read leaves, /dev/kmsg's POLLIN, and the whole path: a record appended to a replay file
// is collected within milliseconds by a collector whose interval never fires.

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>
#include <vector>

#include "collectors/kmsg/kmsg.h"
#include "collectors/kmsg/kmsg_metrics.h"
#include "collectors/kmsg/kmsg_source.h"
#include "collectors/sys/filesystem.h"
#include "collectors/sys/sysfs.h"
#include "collectors/sys/unique_fd.h"
#include "detectors/core/snapshot_lookup.h"
#include "exporter/pipeline/scheduler.h"
#include "exporter/pipeline/self_metrics.h"
#include "exporter/pipeline/snapshot_store.h"
#include "tests/testing/collector_context.h"
#include "tests/testing/temp_dir.h"

namespace fabricwatch::kmsg {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;
using Steady = std::chrono::steady_clock;

std::string Record(uint64_t seq, const std::string& message) {
  return "4," + std::to_string(seq) + ",5000000,-;" + message + "\n";
}

void Append(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::app) << text;
}

// Whether poll() reports `fd` readable within `timeout` (0: now).
bool Readable(int fd, milliseconds timeout = milliseconds(0)) {
  pollfd p{.fd = fd, .events = POLLIN, .revents = 0};
  return ::poll(&p, 1, static_cast<int>(timeout.count())) == 1;
}

size_t ReadAll(KmsgSource& source, size_t max = 1000) {
  std::vector<std::string> records;
  KmsgReadStats stats;
  EXPECT_TRUE(source.Read(max, records, stats).ok());
  return records.size();
}

TEST(KmsgReplayWatch, wakes_on_a_write_and_is_quiet_once_read) {
  testing::TempDir dir("kmsg-wake");
  const std::string path = dir.Path("kmsg");
  Append(path, Record(1, "first"));
  auto source = NewReplayKmsgSource(path);
  ASSERT_TRUE(source->Open().ok());
  ASSERT_GE(source->ReadyFd(), 0) << source->ReadyStatus().ToString();
  EXPECT_EQ(ReadAll(*source), 1u);
  EXPECT_FALSE(source->backlog());
  EXPECT_FALSE(Readable(source->ReadyFd())) << "nothing new: nothing to wake for";

  Append(path, Record(2, "second"));
  EXPECT_TRUE(Readable(source->ReadyFd()));
  EXPECT_EQ(ReadAll(*source), 1u);
  EXPECT_FALSE(Readable(source->ReadyFd()));

  // Truncated and written again (copytruncate): IN_MODIFY; read from the start again.
  std::ofstream(path, std::ios::trunc) << Record(1, "after truncation");
  EXPECT_TRUE(Readable(source->ReadyFd()));
  EXPECT_EQ(ReadAll(*source), 1u);
  EXPECT_FALSE(Readable(source->ReadyFd()));
}

TEST(KmsgReplayWatch, follows_the_file_through_rotation) {
  testing::TempDir dir("kmsg-wake");
  const std::string path = dir.Path("kmsg");
  Append(path, Record(1, "old file"));
  auto source = NewReplayKmsgSource(path);
  ASSERT_TRUE(source->Open().ok());
  EXPECT_EQ(ReadAll(*source), 1u);
  ASSERT_FALSE(Readable(source->ReadyFd()));

  // A new file renamed over the path.
  Append(path + ".new", Record(1, "new file"));
  fs::rename(path + ".new", path);
  EXPECT_TRUE(Readable(source->ReadyFd()));
  EXPECT_EQ(ReadAll(*source), 1u);
  EXPECT_FALSE(Readable(source->ReadyFd()));
  // The watch follows the new file: its writes wake.
  Append(path, Record(2, "new file, second"));
  EXPECT_TRUE(Readable(source->ReadyFd()));
  EXPECT_EQ(ReadAll(*source), 1u);

  // Moved away, then a file created at the path (logrotate's default): both wake.
  fs::rename(path, path + ".1");
  EXPECT_TRUE(Readable(source->ReadyFd()));
  EXPECT_EQ(ReadAll(*source), 0u);
  ASSERT_FALSE(Readable(source->ReadyFd()));
  Append(path, Record(1, "third file"));
  EXPECT_TRUE(Readable(source->ReadyFd()));
}

// Rotated while a record was still unread in the old file (logrotate's create: moved away, a new
// file at the path, written at once): the read finishes the old file and asks to be called again,
// and that read moves to the new file and its watch.
TEST(KmsgReplayWatch, a_rotation_with_records_left_in_the_old_file_is_read_promptly) {
  testing::TempDir dir("kmsg-wake");
  const std::string path = dir.Path("kmsg");
  Append(path, Record(1, "old file"));
  auto source = NewReplayKmsgSource(path);
  ASSERT_TRUE(source->Open().ok());
  EXPECT_EQ(ReadAll(*source), 1u);
  Append(path, Record(2, "old file, unread"));
  fs::rename(path, path + ".1");
  Append(path, Record(1, "new file"));
  EXPECT_EQ(ReadAll(*source), 1u);  // the old file to its end
  EXPECT_TRUE(source->backlog()) << "the new file would wait for the fallback collection";
  EXPECT_EQ(ReadAll(*source), 1u);  // the new file
  EXPECT_FALSE(source->backlog());
  Append(path, Record(2, "new file, second"));
  EXPECT_TRUE(Readable(source->ReadyFd())) << "the watch did not move to the new file";
}

TEST(KmsgReplayWatch, a_bounded_read_leaves_a_backlog) {
  testing::TempDir dir("kmsg-wake");
  const std::string path = dir.Path("kmsg");
  for (uint64_t seq = 1; seq <= 5; ++seq) Append(path, Record(seq, "flood"));
  auto source = NewReplayKmsgSource(path);
  ASSERT_TRUE(source->Open().ok());
  EXPECT_EQ(ReadAll(*source, 2), 2u);
  EXPECT_TRUE(source->backlog());
  EXPECT_EQ(ReadAll(*source, 2), 2u);
  EXPECT_TRUE(source->backlog());
  EXPECT_EQ(ReadAll(*source, 2), 1u);
  EXPECT_FALSE(source->backlog());
}

TEST(KmsgDeviceSource, dev_kmsg_is_readable_when_a_record_arrives) {
  auto source = NewDeviceKmsgSource("/dev/kmsg", false);
  if (Status s = source->Open(); !s.ok()) GTEST_SKIP() << s.ToString();
  sys::UniqueFd writer(::open("/dev/kmsg", O_WRONLY | O_CLOEXEC));
  if (!writer.valid()) GTEST_SKIP() << "cannot write /dev/kmsg";
  ASSERT_GE(source->ReadyFd(), 0);
  ReadAll(*source);  // what came since the open
  const std::string line = "<6>fabricwatch kmsg_wake_test: poll\n";
  ASSERT_EQ(::write(writer.get(), line.data(), line.size()), static_cast<ssize_t>(line.size()));
  EXPECT_TRUE(Readable(source->ReadyFd(), milliseconds(1000)));
  EXPECT_GE(ReadAll(*source), 1u);
}

// The agent's path: Scheduler + the kmsg collector over a replay file.
TEST(KmsgWake, a_record_appended_to_the_replay_file_is_collected_within_milliseconds) {
  testing::TempDir dir("kmsg-wake");
  dir.Write("sys/class/net/lo/ifindex", "1\n");
  const std::string path = dir.Path("kmsg");
  Append(path, "");
  SystemClock clock;
  testing::CollectorTestContext inputs(dir.Path("sys"));
  inputs.UseClock(clock);
  CollectorContext context = inputs.Context();
  context.roots.SetReplay(kKernelLog, path);
  auto collector = NewKmsgCollector(context);
  ASSERT_TRUE(collector) << collector.error().ToString();

  std::mutex mutex;
  std::vector<std::pair<Steady::time_point, double>> published;  // (when, records read so far)
  exporter::SnapshotStore store;
  store.SetPublishListener([&](const std::shared_ptr<const exporter::Snapshot>& s) {
    const double records = detect::FindValue<kRecords>(s->families, {}).value_or(-1);
    std::lock_guard lock(mutex);
    published.emplace_back(Steady::now(), records);
  });
  const auto count = [&] {
    std::lock_guard lock(mutex);
    return published.size();
  };
  const milliseconds interval(300);
  std::vector<exporter::ScheduledCollector> collectors;
  collectors.push_back({"kmsg", interval, std::move(*collector), context.logger});
  exporter::SelfMetrics self({{"kmsg", interval}});
  exporter::Scheduler scheduler(std::move(collectors), store, self, clock);
  scheduler.Start();
  for (int i = 0; i < 1000 && count() == 0; ++i) std::this_thread::sleep_for(milliseconds(1));
  ASSERT_EQ(count(), 1u);
  // Three of its intervals with no record: no collection (the fallback is a minute).
  std::this_thread::sleep_for(3 * interval);
  EXPECT_EQ(count(), 1u);
  EXPECT_EQ(self.Collectors().at("kmsg").interval, exporter::kEventDrivenFallback);

  const auto appended = Steady::now();
  Append(path, Record(1, "mlx5_core 0000:3b:00.0: a line"));
  for (int i = 0; i < 1000 && count() < 2; ++i) std::this_thread::sleep_for(milliseconds(1));
  EXPECT_TRUE(scheduler.Stop(milliseconds(1000)));
  std::lock_guard lock(mutex);
  ASSERT_EQ(published.size(), 2u);
  EXPECT_EQ(published[1].second, 1) << "the second collection read the record";
  EXPECT_LT(published[1].first - appended, milliseconds(100))
      << "woken by the write, not at the next interval";
}

}  // namespace
}  // namespace fabricwatch::kmsg
