// LLDP neighbour table and passive listener (collectors/peer/lldp_listener.h): expiry by TTL with
// an injected clock, shutdown LLDPDUs, the per-netdev bound, counters by reason; the listener
// without CAP_NET_RAW; and on a real kernel (root), a frame sent with an AF_PACKET socket from
// one end of a veth pair in one network namespace reaches the listener on the other end in
// another namespace.

#include "collectors/peer/lldp_listener.h"

#include <gtest/gtest.h>
#include <linux/capability.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <spdlog/sinks/null_sink.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>

#include "collectors/sys/unique_fd.h"
#include "tests/unit/collectors/peer/lldp_netns.h"
#include "tests/unit/collectors/peer/lldp_test_frames.h"

namespace fabricwatch::peer {
namespace {

using Clock = LldpNeighborTable::Clock;
using std::chrono::seconds;
using testing::LldpFrameBuilder;

std::shared_ptr<spdlog::logger> NullLogger() {
  return std::make_shared<spdlog::logger>("lldp_test",
                                          std::make_shared<spdlog::sinks::null_sink_mt>());
}

TEST(LldpNeighborTableTest, ANeighbourLivesForItsTtl) {
  LldpNeighborTable table;
  const Clock::time_point t0{seconds(1000)};
  ASSERT_TRUE(table.ReceiveFrame("eth0", testing::LeafSwitchFrame(120), t0));
  auto at = table.Neighbors(t0 + seconds(119));
  ASSERT_EQ(at.size(), 1u);
  EXPECT_EQ(at.at("eth0").system_name, "leaf07");
  // Refreshed at t0+60: lives until t0+180.
  ASSERT_TRUE(table.ReceiveFrame("eth0", testing::LeafSwitchFrame(120), t0 + seconds(60)));
  EXPECT_TRUE(table.NeighborOf("eth0", t0 + seconds(179)).has_value());
  EXPECT_FALSE(table.NeighborOf("eth0", t0 + seconds(180)).has_value());
  const LldpFrameCounts c = table.counts();
  EXPECT_EQ(c.received, 2u);
  EXPECT_EQ(c.parsed, 2u);
  EXPECT_EQ(c.expired, 1u);
  EXPECT_EQ(c.rejected_total(), 0u);
}

TEST(LldpNeighborTableTest, AShutdownRemovesTheNeighbourAtOnce) {
  LldpNeighborTable table;
  const Clock::time_point t0{seconds(5)};
  table.ReceiveFrame("eth0", testing::LeafSwitchFrame(120), t0);
  table.ReceiveFrame("eth1", testing::LeafSwitchFrame(120), t0);
  table.ReceiveFrame("eth0", testing::LeafSwitchFrame(0), t0 + seconds(1));
  auto now = table.Neighbors(t0 + seconds(2));
  EXPECT_EQ(now.count("eth0"), 0u);
  EXPECT_EQ(now.count("eth1"), 1u);
  EXPECT_EQ(table.counts().shutdowns, 1u);
  EXPECT_EQ(table.counts().expired, 0u);
}

TEST(LldpNeighborTableTest, TheLastHeardOfSeveralNeighboursIsShownAndTheirNumberBounded) {
  LldpNeighborTable table;
  const Clock::time_point t0{seconds(0)};
  for (int i = 0; i < 6; ++i) {
    LldpFrameBuilder b;
    b.ChassisMac({2, 0, 0, 0, 0, static_cast<uint8_t>(i)})
        .PortName("p")
        .Ttl(100)
        .Text(5, "sw" + std::to_string(i))
        .End();
    table.ReceiveFrame("eth0", b.Frame(), t0 + seconds(i));
  }
  EXPECT_EQ(table.NeighborOf("eth0", t0 + seconds(10))->system_name, "sw5");
  // sw0 and sw1 were dropped (bound 4); when sw2..sw5 expire nothing is left. sw5 refreshed
  // with a short TTL expires first: then sw4 shows.
  LldpFrameBuilder b;
  b.ChassisMac({2, 0, 0, 0, 0, 5}).PortName("p").Ttl(1).Text(5, "sw5").End();
  table.ReceiveFrame("eth0", b.Frame(), t0 + seconds(20));
  EXPECT_EQ(table.NeighborOf("eth0", t0 + seconds(21))->system_name, "sw4");
  EXPECT_EQ(table.counts().expired, 1u);
  EXPECT_FALSE(table.NeighborOf("eth0", t0 + seconds(104)).has_value());
  EXPECT_EQ(table.counts().expired, 1u + kMaxLldpNeighborsPerNetdev - 1);
}

TEST(LldpNeighborTableTest, RejectedFramesAreCountedByReason) {
  LldpNeighborTable table;
  const Clock::time_point t0{};
  std::vector<uint8_t> truncated = testing::LeafSwitchFrame();
  truncated.resize(25);
  LldpFrameBuilder bad_name;
  bad_name.ChassisMac({2, 0, 0, 0, 0, 1}).PortName("p").Ttl(9).Text(5, "\xff\xfe").End();
  EXPECT_FALSE(table.ReceiveFrame("eth0", truncated, t0));
  EXPECT_FALSE(table.ReceiveFrame("eth0", bad_name.Frame(), t0));
  EXPECT_FALSE(table.ReceiveFrame("eth0", bad_name.Frame(), t0));
  const LldpFrameCounts c = table.counts();
  EXPECT_EQ(c.received, 3u);
  EXPECT_EQ(c.parsed, 0u);
  EXPECT_EQ(c.rejected[static_cast<size_t>(LldpReject::kInvalidUtf8)], 2u);
  EXPECT_EQ(c.rejected_total(), 3u);
  EXPECT_TRUE(table.Neighbors(t0).empty());
}

TEST(LldpListenerTest, NoNetdevIsNotFound) {
  LldpNeighborTable table;
  auto listener = LldpListener::Start(table, {"fw-no-such-netdev0"}, NullLogger());
  ASSERT_FALSE(listener);
  // Without CAP_NET_RAW the socket is refused first; as root the netdev is missing.
  EXPECT_TRUE(listener.error().code() == StatusCode::kNotFound ||
              listener.error().code() == StatusCode::kPermissionDenied)
      << listener.error().ToString();
}

// Drops CAP_NET_RAW from this thread's effective set (capabilities are per thread).
bool DropNetRaw() {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2] = {};
  if (syscall(SYS_capget, &header, data) != 0) return false;
  data[CAP_NET_RAW / 32].effective &= ~(1u << (CAP_NET_RAW % 32));
  return syscall(SYS_capset, &header, data) == 0;
}

TEST(LldpListenerTest, WithoutCapNetRawStartIsPermissionDenied) {
  // In a child process, so the test process keeps its capabilities; "lo" exists everywhere.
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    if (!DropNetRaw()) _exit(3);
    LldpNeighborTable table;
    auto listener = LldpListener::Start(table, {"lo"}, NullLogger());
    if (listener) _exit(1);
    const bool named = listener.error().message().find("CAP_NET_RAW") != std::string::npos;
    _exit(listener.error().code() == StatusCode::kPermissionDenied && named ? 0 : 2);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "1: started, 2: another error, 3: capset failed";
}

TEST(LldpListenerTest, AFrameOnARealVethReachesTheTable) {
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to create network namespaces and veths";
  if (!testing::HaveIpNetns()) GTEST_SKIP() << "no `ip netns` here";
  testing::VethNetns net("fwll");
  if (!net.ok()) GTEST_SKIP() << "cannot create network namespaces with a veth pair";

  LldpNeighborTable table;
  std::unique_ptr<LldpListener> listener;
  Status started;
  ASSERT_TRUE(testing::VethNetns::RunIn(net.ns_b, [&] {
    auto l = LldpListener::Start(table, {net.dev_b}, NullLogger());
    if (l)
      listener = std::move(*l);
    else
      started = l.error();
  }));
  ASSERT_TRUE(listener) << started.ToString();
  EXPECT_TRUE(table.listening());
  EXPECT_EQ(listener->netdevs(), std::vector<std::string>{net.dev_b});

  // Send from the other namespace: the leaf switch frame, then a hostile one.
  std::vector<uint8_t> bad = testing::LeafSwitchFrame();
  bad.resize(30);
  std::string sent_error;
  ASSERT_TRUE(testing::VethNetns::RunIn(net.ns_a, [&] {
    sys::UniqueFd fd(::socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, 0));
    sockaddr_ll to{};
    to.sll_family = AF_PACKET;
    to.sll_ifindex = static_cast<int>(if_nametoindex(net.dev_a.c_str()));
    to.sll_halen = 6;
    for (const std::vector<uint8_t>& frame : {testing::LeafSwitchFrame(), bad}) {
      if (::sendto(fd.get(), frame.data(), frame.size(), 0, reinterpret_cast<sockaddr*>(&to),
                   sizeof(to)) != static_cast<ssize_t>(frame.size())) {
        sent_error = std::strerror(errno);
      }
    }
  }));
  ASSERT_TRUE(sent_error.empty()) << sent_error;
  uint64_t seen = 0;
  for (int i = 0; i < 20 && seen < 2; ++i)
    seen = table.WaitForFrames(seen, std::chrono::milliseconds(100));
  ASSERT_EQ(seen, 2u);
  auto neighbor = table.NeighborOf(net.dev_b, Clock::now());
  ASSERT_TRUE(neighbor.has_value())
      << "parsed " << table.counts().parsed << ", rejected " << table.counts().rejected_total()
      << ", shutdowns " << table.counts().shutdowns;
  EXPECT_EQ(neighbor->system_name, "leaf07");
  EXPECT_EQ(neighbor->port_id, "Ethernet12");
  EXPECT_EQ(table.counts().rejected_total(), 1u);

  // Destroyed, it stops within its poll timeout.
  const auto before = std::chrono::steady_clock::now();
  listener.reset();
  EXPECT_LT(std::chrono::steady_clock::now() - before, std::chrono::milliseconds(500));
  EXPECT_FALSE(table.listening());
}

}  // namespace
}  // namespace fabricwatch::peer
