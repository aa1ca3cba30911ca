// Roots and sources (collectors/core/roots.h, docs/design.md §5.1 "Roots and sources"): what a
// collector reads for a declared source, the flags the simulator prints, and that each collector
// is given the replays of its own sources only (collectors/collector_set.h OwnRoots).

#include "collectors/core/roots.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "collectors/collector_set.h"
#include "collectors/jobs/jobs.h"
#include "collectors/kmsg/kmsg.h"
#include "collectors/kmsg/kmsg_metrics.h"
#include "collectors/peer/peer.h"
#include "collectors/peer/peer_metrics.h"
#include "collectors/registry.h"

namespace fabricwatch {
namespace {

constexpr SourceSpec kLog{.name = "log",
                          .help = "a log",
                          .kind = SourceSpec::Kind::kFile,
                          .host_path = "/dev/log-of-host"};
constexpr SourceSpec kTable{.name = "table", .help = "a table"};

TEST(RootsTest, a_source_reads_its_replay_else_the_host_path_on_the_host_else_nothing) {
  Roots replay_root{.sysfs = "/replay/sys"};
  EXPECT_EQ(replay_root.PathOf(kLog), "");  // a replay root describes another node
  EXPECT_EQ(replay_root.PathOf(kTable), "");
  Roots host{.sysfs = "/sys", .host = true};
  EXPECT_EQ(host.PathOf(kLog), "/dev/log-of-host");
  EXPECT_EQ(host.PathOf(kTable), "");  // no host path declared
  host.SetReplay(kLog, "/replay/log");
  EXPECT_EQ(host.PathOf(kLog), "/replay/log");
  EXPECT_EQ(host.Replay(kLog), "/replay/log");
  EXPECT_EQ(host.Replay(kTable), "");
  host.SetReplay(kLog, "");  // an empty replay is no replay
  EXPECT_EQ(host.PathOf(kLog), "/dev/log-of-host");
}

TEST(RootsTest, host_is_measured_from_the_sysfs_root) {
  EXPECT_TRUE(IsHostSysfs("/sys"));
  EXPECT_TRUE(IsHostSysfs("/sys/"));
  EXPECT_FALSE(IsHostSysfs(std::filesystem::temp_directory_path().string()));
  EXPECT_FALSE(IsHostSysfs("/no/such/root"));
  EXPECT_FALSE(Roots{}.host);  // a hand-made Roots reads no host interface
}

TEST(RootsTest, flags_spell_every_root_given) {
  Roots roots{.sysfs = "/r/sys"};
  EXPECT_EQ(roots.Flags(), "--path.sysfs=/r/sys");
  roots.ethtool = "/r/ethtool";
  roots.SetReplay(kTable, "/r/table");
  roots.SetReplay(kLog, "/r/log");
  EXPECT_EQ(roots.Flags(),
            "--path.sysfs=/r/sys --path.ethtool=/r/ethtool --path.log=/r/log "
            "--path.table=/r/table");
}

TEST(RootsTest, each_collector_is_given_the_replays_of_its_own_sources_only) {
  Roots all{.sysfs = "/r/sys", .ethtool = "/r/ethtool", .host = false};
  all.SetReplay(kmsg::kKernelLog, "/r/kmsg");
  all.SetReplay(peer::kSmpReplay, "/r/smp");
  all.SetReplay(peer::kLldpReplay, "/r/lldp");
  all.SetReplay(jobs::kProcfs, "/r/proc");
  const Roots peer_roots = OwnRoots(*FindCollector(peer::kCollector), all);
  EXPECT_EQ(peer_roots.sysfs, "/r/sys");
  EXPECT_EQ(peer_roots.ethtool, "/r/ethtool");
  EXPECT_EQ(peer_roots.Replay(peer::kSmpReplay), "/r/smp");
  EXPECT_EQ(peer_roots.Replay(peer::kLldpReplay), "/r/lldp");
  EXPECT_EQ(peer_roots.Replay(kmsg::kKernelLog), "");
  EXPECT_EQ(peer_roots.Replay(jobs::kProcfs), "");
  const Roots kmsg_roots = OwnRoots(*FindCollector(kmsg::kCollector), all);
  EXPECT_EQ(kmsg_roots.replays.size(), 1u);
  EXPECT_EQ(kmsg_roots.PathOf(kmsg::kKernelLog), "/r/kmsg");
}

}  // namespace
}  // namespace fabricwatch
