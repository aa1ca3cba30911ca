// Tests of KernelEthtool against the running kernel: veth pairs in private network namespaces
// (statistics equal to `ethtool -S`, quiet "not supported" answers, the ETHTOOL_FLAG_STATS retry,
// the module ioctl fallback, link state, missing netdevs), and the host's own netdevs when the
// environment names one.

#include "collectors/ethtool_source/ethtool_kernel.h"
#include "collectors/ethtool_source/ethtool_replay_parse.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/ethtool.h>
#include <net/if.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "collectors/ethtool_source/ethtool_ioctl.h"
#include "collectors/sys/unique_fd.h"
#include "tests/unit/collectors/ethtool_source/fake_ethtool_driver.h"

namespace fabricwatch::sys {
namespace {

// ================================================================ real kernel: veth in netns

// Runs a shell command; returns its exit status and combined output.
std::pair<int, std::string> Shell(const std::string& command) {
  std::string output;
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return {-1, std::strerror(errno)};
  char buffer[4096];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof(buffer), pipe)) > 0) output.append(buffer, n);
  int status = ::pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, output};
}

// `ethtool -S` output → (name, value) in order. Lines are "     <name>: <value>".
std::vector<std::pair<std::string, uint64_t>> ParseEthtoolS(const std::string& text) {
  std::vector<std::pair<std::string, uint64_t>> out;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    start = end + 1;
    size_t colon = line.rfind(": ");
    if (colon == std::string::npos) continue;  // "NIC statistics:"
    size_t first = line.find_first_not_of(" \t");
    out.emplace_back(line.substr(first, colon - first), std::stoull(line.substr(colon + 2)));
  }
  return out;
}

// Runs `body` on a thread that joined network namespace `ns` (setns is per thread), so every socket
// the body opens lives there; the test's own thread stays in the host namespace.
void InNetns(const std::string& ns, const std::function<void()>& body) {
  std::thread thread([&] {
    UniqueFd fd(::open(("/run/netns/" + ns).c_str(), O_RDONLY | O_CLOEXEC));
    ASSERT_TRUE(fd.valid()) << "open /run/netns/" << ns << ": " << std::strerror(errno);
    ASSERT_EQ(::setns(fd.get(), CLONE_NEWNET), 0) << "setns " << ns << ": " << std::strerror(errno);
    body();
  });
  thread.join();
}

bool KernelAtLeast(int major, int minor) {
  utsname name{};
  if (::uname(&name) != 0) return false;
  int have_major = 0, have_minor = 0;
  if (std::sscanf(name.release, "%d.%d", &have_major, &have_minor) != 2) return false;
  return have_major > major || (have_major == major && have_minor >= minor);
}

// Counts the ethtool commands that reach the real kernel.
class CountingIoctl final : public EthtoolIoctl {
 public:
  explicit CountingIoctl(std::unique_ptr<EthtoolIoctl> inner) : inner_(std::move(inner)) {}
  int Call(const std::string& netdev, void* cmd) override {
    uint32_t command;
    std::memcpy(&command, cmd, sizeof(command));
    ++counts[command];
    return inner_->Call(netdev, cmd);
  }
  int IfIndex(const std::string& netdev) override { return inner_->IfIndex(netdev); }
  std::map<uint32_t, int> counts;

 private:
  std::unique_ptr<EthtoolIoctl> inner_;
};

// Two private namespaces joined by a veth pair: fwt<pid>a in ns A (169.254.77.1/30), fwt<pid>b in
// ns B (169.254.77.2/30). Nothing is added to the host's namespace; deleting the namespaces removes
// the pair. GRO on A and TSO off on B route B→A traffic through veth's NAPI path, the one that
// moves veth's ethtool counters (K drivers/net/veth.c veth_xdp_rcv).
class VethNetnsTest : public testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root to create network namespaces";
    const std::string pid = std::to_string(::getpid());
    ns_a_ = "fwtk" + pid + "a";
    ns_b_ = "fwtk" + pid + "b";
    veth_a_ = "fwt" + pid + "a";
    veth_b_ = "fwt" + pid + "b";
    auto [rc, out] = Shell("ip netns add " + ns_a_);
    if (rc != 0) GTEST_SKIP() << "ip netns add failed (" << rc << "): " << out;
    created_a_ = true;
    ASSERT_EQ(Shell("ip netns add " + ns_b_).first, 0);
    created_b_ = true;
    for (const std::string& command :
         {"ip -n " + ns_a_ + " link add " + veth_a_ + " type veth peer name " + veth_b_ +
              " netns " + ns_b_,
          "ip -n " + ns_a_ + " addr add 169.254.77.1/30 dev " + veth_a_,
          "ip -n " + ns_b_ + " addr add 169.254.77.2/30 dev " + veth_b_,
          "ip -n " + ns_a_ + " link set " + veth_a_ + " up",
          "ip -n " + ns_b_ + " link set " + veth_b_ + " up"}) {
      auto [status, output] = Shell(command);
      if (status != 0 && command.find("link add") != std::string::npos) {
        GTEST_SKIP() << "cannot create a veth pair: " << output;
      }
      ASSERT_EQ(status, 0) << command << ": " << output;
    }
    has_ethtool_ = Shell("command -v ethtool").first == 0;
    if (has_ethtool_) {
      Shell("ip netns exec " + ns_a_ + " ethtool -K " + veth_a_ + " gro on");
      Shell("ip netns exec " + ns_b_ + " ethtool -K " + veth_b_ + " tso off");
    }
  }

  void TearDown() override {
    if (created_a_) Shell("ip netns del " + ns_a_);
    if (created_b_) Shell("ip netns del " + ns_b_);
  }

  // UDP datagrams from ns B to A's address until `stop`; returns the number sent.
  std::thread StartTraffic(std::atomic<bool>& stop, std::atomic<int>& sent) {
    return std::thread([this, &stop, &sent] {
      InNetns(ns_b_, [&] {
        UniqueFd fd(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
        ASSERT_TRUE(fd.valid());
        sockaddr_in to{};
        to.sin_family = AF_INET;
        to.sin_port = htons(9);  // discard; nobody listens, A answers port-unreachable
        ::inet_pton(AF_INET, "169.254.77.1", &to.sin_addr);
        const char payload[200] = {};
        while (!stop.load()) {
          if (::sendto(fd.get(), payload, sizeof(payload), 0, reinterpret_cast<sockaddr*>(&to),
                       sizeof(to)) > 0) {
            ++sent;
          }
          std::this_thread::sleep_for(std::chrono::microseconds(500));
        }
      });
    });
  }

  std::string ns_a_, ns_b_, veth_a_, veth_b_;
  bool created_a_ = false, created_b_ = false, has_ethtool_ = false;
};

TEST_F(VethNetnsTest, StatisticsEqualEthtoolDashS) {
  if (!has_ethtool_)
    GTEST_SKIP() << "the ethtool program is not installed (apt-get install ethtool)";
  std::atomic<bool> stop{false};
  std::atomic<int> sent{0};
  std::thread traffic = StartTraffic(stop, sent);
  struct StopTraffic {  // also when an assertion returns early
    ~StopTraffic() {
      stop = true;
      thread.join();
    }
    std::atomic<bool>& stop;
    std::thread& thread;
  } stop_traffic{stop, traffic};
  InNetns(ns_a_, [&] {
    auto counting = std::make_unique<CountingIoctl>(SocketEthtoolIoctl::Open().value());
    CountingIoctl* counts = counting.get();
    KernelEthtool source(std::move(counting));
    // Wait for the counters to move, so the bounds below are exercised on live values.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (sent.load() < 200 && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    const std::string ethtool_s = "ip netns exec " + ns_a_ + " ethtool -S " + veth_a_;
    int compared = 0, moved = 0;
    uint64_t xdp_packets = 0;
    for (int round = 0; round < 3; ++round) {
      auto [rc1, before_text] = Shell(ethtool_s);
      auto ours = source.Statistics(veth_a_);
      auto [rc2, after_text] = Shell(ethtool_s);
      ASSERT_EQ(rc1, 0) << before_text;
      ASSERT_EQ(rc2, 0) << after_text;
      ASSERT_TRUE(ours) << ours.error().ToString();
      auto before = ParseEthtoolS(before_text);
      auto after = ParseEthtoolS(after_text);
      ASSERT_EQ(before.size(), ours->size()) << before_text;
      ASSERT_EQ(after.size(), ours->size()) << after_text;
      for (size_t i = 0; i < ours->size(); ++i) {
        const EthtoolStat& stat = (*ours)[i];
        EXPECT_EQ(stat.name, before[i].first);
        EXPECT_EQ(stat.name, after[i].first);
        EXPECT_LE(before[i].second, stat.value) << stat.name;
        EXPECT_LE(stat.value, after[i].second) << stat.name;
        ++compared;
        if (before[i].second != after[i].second) ++moved;
      }
      for (const EthtoolStat& stat : *ours) {
        if (stat.name == "rx_queue_0_xdp_packets") xdp_packets = stat.value;
      }
    }
    std::printf(
        "[ veth     ] %s: %d values compared in 3 rounds, %d moved between the "
        "two "
        "ethtool -S reads; rx_queue_0_xdp_packets=%llu after %d datagrams\n",
        veth_a_.c_str(), compared, moved, static_cast<unsigned long long>(xdp_packets),
        sent.load());
    EXPECT_GT(compared, 0);
    // Three calls, one string table.
    EXPECT_EQ(counts->counts[ETHTOOL_GSTRINGS], 1);
    EXPECT_EQ(counts->counts[ETHTOOL_GSTATS], 3);
  });
}

TEST_F(VethNetnsTest, UnsupportedRequestsAreQuietUnimplemented) {
  InNetns(ns_a_, [&] {
    auto created = KernelEthtool::Create();
    ASSERT_TRUE(created) << created.error().ToString();
    KernelEthtool& source = **created;
    // Twice: the second pass runs with the family resolved and the stats-flag decision cached.
    struct Pass {
      Result<PauseInfo> pause;
      Result<FecStats> fec;
      Result<PfcConfig> pfc;
      Result<uint32_t> tout;
      Result<LinkState> link;
    };
    std::vector<Pass> passes;
    testing::internal::CaptureStderr();
    testing::internal::CaptureStdout();
    for (int pass = 0; pass < 2; ++pass) {
      passes.push_back({source.Pause(veth_a_), source.Fec(veth_a_), source.Pfc(veth_a_),
                        source.PfcStormTimeoutMs(veth_a_), source.LinkStateOf(veth_a_)});
    }
    std::string err = testing::internal::GetCapturedStderr();
    std::string out = testing::internal::GetCapturedStdout();
    EXPECT_EQ(err, "") << "nothing may be printed for an unsupported request";
    EXPECT_EQ(out, "");
    auto unimplemented = [&](const auto& result, std::string_view what) {
      ASSERT_FALSE(result.has_value()) << what;
      EXPECT_EQ(result.error().code(), StatusCode::kUnimplemented) << result.error().ToString();
      EXPECT_NE(result.error().message().find(veth_a_), std::string::npos)
          << result.error().ToString();
    };
    for (const Pass& pass : passes) {
      unimplemented(pass.pause, "pause");
      unimplemented(pass.fec, "fec");
      unimplemented(pass.pfc, "pfc");
      unimplemented(pass.tout, "pfc storm timeout");
      // veth implements get_link: a success, with no ext_down_cnt (no get_link_ext_stats).
      ASSERT_TRUE(pass.link) << pass.link.error().ToString();
      EXPECT_TRUE(pass.link->link.has_value());
      EXPECT_FALSE(pass.link->ext_down_count.has_value());
    }
  });
}

// LINKINFO_GET's header policy has no ETHTOOL_FLAG_STATS (K net/ethtool/linkinfo.c uses
// ethnl_header_policy), as LINKSTATE_GET's had before 6.2: the kernel says EINVAL, the request is
// repeated once without the flag, and the flag is not tried again for that command.
TEST_F(VethNetnsTest, StatsFlagRejectedWithEinvalIsRetriedWithoutAndRemembered) {
  constexpr uint8_t kLinkinfoGet = 2;  // ETHTOOL_MSG_LINKINFO_GET (UAPI linux/ethtool_netlink.h)
  InNetns(ns_a_, [&] {
    auto created = KernelEthtool::Create();
    ASSERT_TRUE(created) << created.error().ToString();
    KernelEthtool& source = **created;
    ASSERT_TRUE(source.LinkStateOf(veth_a_));  // resolves the family
    const uint64_t start = source.netlink_requests();
    auto first = source.EthtoolGetForTesting(veth_a_, kLinkinfoGet);
    ASSERT_TRUE(first) << first.error().ToString();
    EXPECT_FALSE(*first);
    EXPECT_EQ(source.netlink_requests() - start, 2u) << "flagged request, then one without";
    auto second = source.EthtoolGetForTesting(veth_a_, kLinkinfoGet);
    ASSERT_TRUE(second) << second.error().ToString();
    EXPECT_FALSE(*second);
    EXPECT_EQ(source.netlink_requests() - start, 3u) << "the flag is not tried again";
    // Commands that accept the flag keep it (LINKSTATE_GET since 6.2, PAUSE_GET since 5.10).
    constexpr uint8_t kLinkstateGet = 6;
    auto linkstate = source.EthtoolGetForTesting(veth_a_, kLinkstateGet);
    ASSERT_TRUE(linkstate) << linkstate.error().ToString();
    if (KernelAtLeast(6, 2)) {
      EXPECT_TRUE(*linkstate);
    }
  });
}

// veth has no module ops: MODULE_EEPROM_GET answers EOPNOTSUPP (the kernel's fallback finds no
// get_module_info either, K net/ethtool/eeprom.c), and so does the ioctl. Quiet kUnimplemented.
TEST_F(VethNetnsTest, ModuleEepromIsQuietUnimplemented) {
  InNetns(ns_a_, [&] {
    auto created = KernelEthtool::Create();
    ASSERT_TRUE(created) << created.error().ToString();
    KernelEthtool& source = **created;
    std::vector<Result<std::vector<uint8_t>>> results;
    testing::internal::CaptureStderr();
    testing::internal::CaptureStdout();
    for (int pass = 0; pass < 2; ++pass) results.push_back(source.ModuleEeprom(veth_a_));
    const uint64_t requests = source.netlink_requests();
    auto missing = source.ModuleEeprom(veth_b_);  // in the other namespace
    std::string err = testing::internal::GetCapturedStderr();
    std::string out = testing::internal::GetCapturedStdout();
    EXPECT_EQ(err, "") << "nothing may be printed for an unsupported request";
    EXPECT_EQ(out, "");
    for (const auto& result : results) {
      ASSERT_FALSE(result.has_value());
      EXPECT_EQ(result.error().code(), StatusCode::kUnimplemented) << result.error().ToString();
      EXPECT_EQ(result.error().sys_errno(), EOPNOTSUPP);
      EXPECT_NE(result.error().message().find(veth_a_), std::string::npos);
    }
    // EOPNOTSUPP from both paths never switches modules to the ioctl: netlink is asked each time.
    EXPECT_GE(requests, 3u);  // family + one MODULE_EEPROM_GET per call
    ASSERT_FALSE(missing.has_value());
    EXPECT_EQ(missing.error().code(), StatusCode::kNotFound) << missing.error().ToString();
    std::printf("[ veth     ] %s: ModuleEeprom -> %s\n", veth_a_.c_str(),
                results[0].error().ToString().c_str());
  });
}

// Netlink EOPNOTSUPP while the ioctl reads a module (a kernel without MODULE_EEPROM_GET): the
// ioctl's image is returned, and netlink is not asked for modules again.
TEST_F(VethNetnsTest, ModuleEepromFallsBackToTheIoctl) {
  InNetns(ns_a_, [&] {
    auto owned = std::make_unique<FakeDriver>(0);
    FakeDriver* driver = owned.get();
    driver->modinfo_errno = 0;
    driver->module_type = ETH_MODULE_SFF_8472;
    driver->module_image = Pattern(512, 0x03);
    KernelEthtool source(std::move(owned));
    auto first = source.ModuleEeprom(veth_a_);
    ASSERT_TRUE(first) << first.error().ToString();
    EXPECT_EQ(*first, driver->module_image);
    const uint64_t requests = source.netlink_requests();
    EXPECT_GE(requests, 1u);
    auto second = source.ModuleEeprom(veth_a_);
    ASSERT_TRUE(second) << second.error().ToString();
    EXPECT_EQ(source.netlink_requests(), requests);
    EXPECT_EQ(driver->Count(ETHTOOL_GMODULEINFO), 2u);
  });
}

TEST_F(VethNetnsTest, LinkStateFollowsCarrier) {
  InNetns(ns_a_, [&] {
    auto source = KernelEthtool::Create();
    ASSERT_TRUE(source) << source.error().ToString();
    auto wait_for = [&](bool want) {
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
      std::optional<bool> link;
      do {
        auto state = (*source)->LinkStateOf(veth_a_);
        EXPECT_TRUE(state) << state.error().ToString();
        if (state) link = state->link;
        if (link == want) return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      } while (std::chrono::steady_clock::now() < deadline);
      return false;
    };
    EXPECT_TRUE(wait_for(true));
    ASSERT_EQ(Shell("ip -n " + ns_b_ + " link set " + veth_b_ + " down").first, 0);
    EXPECT_TRUE(wait_for(false));
  });
}

TEST_F(VethNetnsTest, MissingNetdevIsNotFound) {
  InNetns(ns_a_, [&] {
    auto created = KernelEthtool::Create();
    ASSERT_TRUE(created) << created.error().ToString();
    KernelEthtool& source = **created;
    const std::string missing = "fwtmissing0";
    EXPECT_EQ(source.Statistics(missing).error().code(), StatusCode::kNotFound);
    EXPECT_EQ(source.Pause(missing).error().code(), StatusCode::kNotFound);
    EXPECT_EQ(source.Fec(missing).error().code(), StatusCode::kNotFound);
    EXPECT_EQ(source.LinkStateOf(missing).error().code(), StatusCode::kNotFound);
    EXPECT_EQ(source.Pfc(missing).error().code(), StatusCode::kNotFound);
    EXPECT_EQ(source.PfcStormTimeoutMs(missing).error().code(), StatusCode::kNotFound);
    // The host's netdev names do not leak in: the sockets live in ns A.
    EXPECT_TRUE(source.Statistics(veth_a_));
    EXPECT_EQ(source.Statistics(veth_b_).error().code(), StatusCode::kNotFound);
  });
}

// ================================================================ real kernel: STATS_GET

// `ethtool -S <dev> --all-groups` (ethtool netlink/stats.c parse_grp) prints one line per counter,
// "<group>-<name>: <value>", with names from the kernel's string sets; RMON histogram lines start
// with "rx-"/"tx-", and newer groups ("phydev") have other prefixes: both are left out here.
std::map<std::string, uint64_t> ParseEthtoolStandardStats(const std::string& text) {
  std::map<std::string, uint64_t> out;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(start, end - start);
    start = end + 1;
    const size_t colon = line.rfind(": ");
    if (colon == std::string::npos) continue;  // "Standard stats for eth0:"
    const std::string key = line.substr(0, colon);
    for (const char* group : {"eth-phy-", "eth-mac-", "eth-ctrl-", "rmon-"}) {
      if (key.rfind(group, 0) == 0) out[key] = std::stoull(line.substr(colon + 2));
    }
  }
  return out;
}

std::string Key(const StandardStat& stat) {
  return std::string(stat.group) + "-" + std::string(stat.name);
}

TEST_F(VethNetnsTest, StandardStatsOnVethAreQuietUnimplemented) {
  InNetns(ns_a_, [&] {
    auto created = KernelEthtool::Create();
    ASSERT_TRUE(created) << created.error().ToString();
    KernelEthtool& source = **created;
    testing::internal::CaptureStderr();
    testing::internal::CaptureStdout();
    // Twice: the second request runs with the family resolved.
    auto first = source.StandardStats(veth_a_);
    auto second = source.StandardStats(veth_a_);
    std::string err = testing::internal::GetCapturedStderr();
    std::string out = testing::internal::GetCapturedStdout();
    EXPECT_EQ(err, "");
    EXPECT_EQ(out, "");
    for (const auto* result : {&first, &second}) {
      // veth has no get_eth_*_stats / get_rmon_stats: the kernel answers every requested group
      // empty, which is "not supported" here, never an error. (A driver that fills counters would
      // make this an OK result.)
      if (result->has_value()) {
        ADD_FAILURE() << "veth reported " << (*result)->size() << " standard counters";
        continue;
      }
      EXPECT_EQ(result->error().code(), StatusCode::kUnimplemented) << result->error().ToString();
      EXPECT_NE(result->error().message().find(veth_a_), std::string::npos)
          << result->error().ToString();
      EXPECT_NE(result->error().message().find("STATS_GET"), std::string::npos)
          << result->error().ToString();
    }
    std::printf("[ veth     ] %s: StandardStats -> %s\n", veth_a_.c_str(),
                first ? "OK" : first.error().ToString().c_str());
    EXPECT_EQ(source.standard_stats_skipped(), 0u);

    // A missing netdev is kNotFound (ENODEV from the request header), with the request named.
    auto missing = source.StandardStats("fwtmissing0");
    ASSERT_FALSE(missing);
    EXPECT_EQ(missing.error().code(), StatusCode::kNotFound) << missing.error().ToString();
    EXPECT_NE(missing.error().message().find("fwtmissing0: ethtool netlink STATS_GET"),
              std::string::npos)
        << missing.error().ToString();
    EXPECT_EQ(source.StandardStats("a-name-longer-than-ifnamsiz").error().code(),
              StatusCode::kNotFound);
    // The host's netdevs are not visible from ns A.
    EXPECT_EQ(source.StandardStats(veth_b_).error().code(), StatusCode::kNotFound);
  });
}

// The host's own NIC (FABRICWATCH_TEST_NETDEV, default eth0) against the ethtool program: the same
// counters, each between the values ethtool printed just before and just after. A driver without
// standard statistics (virtio_net) must be kUnimplemented, with ethtool printing no counter.
TEST(EthtoolStandardStatsHostTest, MatchesEthtoolCli) {
  const char* env = std::getenv("FABRICWATCH_TEST_NETDEV");
  const std::string netdev = env != nullptr && *env != '\0' ? env : "eth0";
  if (::if_nametoindex(netdev.c_str()) == 0) GTEST_SKIP() << "no netdev " << netdev;
  if (Shell("command -v ethtool").first != 0) GTEST_SKIP() << "the ethtool program is missing";
  const std::string command = "ethtool -S " + netdev + " --all-groups";
  auto [rc_probe, probe] = Shell(command);
  if (rc_probe != 0) GTEST_SKIP() << command << " failed (ethtool < 5.13?): " << probe;

  auto created = KernelEthtool::Create();
  ASSERT_TRUE(created) << created.error().ToString();
  KernelEthtool& source = **created;
  int compared = 0;
  std::string outcome;
  for (int round = 0; round < 3; ++round) {
    auto [rc1, before_text] = Shell(command);
    const uint64_t skipped_before = source.standard_stats_skipped();
    auto ours = source.StandardStats(netdev);
    const uint64_t skipped = source.standard_stats_skipped() - skipped_before;
    auto [rc2, after_text] = Shell(command);
    ASSERT_EQ(rc1, 0) << before_text;
    ASSERT_EQ(rc2, 0) << after_text;
    const auto before = ParseEthtoolStandardStats(before_text);
    const auto after = ParseEthtoolStandardStats(after_text);
    if (!ours) {
      outcome = ours.error().ToString();
      EXPECT_EQ(ours.error().code(), StatusCode::kUnimplemented) << outcome;
      EXPECT_TRUE(before.empty() && after.empty())
          << "ethtool prints counters that StandardStats did not return:\n"
          << before_text;
      continue;
    }
    outcome = std::to_string(ours->size()) + " counters";
    std::map<std::string, uint64_t> mine;
    for (const StandardStat& stat : *ours) {
      EXPECT_TRUE(mine.emplace(Key(stat), stat.value).second) << "duplicate " << Key(stat);
    }
    // Every counter ethtool prints for the four groups is ours (unless this build does not know
    // its index), and ours are all printed by ethtool.
    EXPECT_EQ(mine.size() + skipped, before.size()) << before_text;
    for (const auto& [key, value] : mine) {
      auto b = before.find(key);
      auto a = after.find(key);
      ASSERT_TRUE(b != before.end() && a != after.end()) << key << " not printed by ethtool";
      EXPECT_LE(b->second, value) << key;
      EXPECT_LE(value, a->second) << key;
      ++compared;
    }
  }
  std::printf("[ host     ] %s: StandardStats -> %s; %d values compared with ethtool\n",
              netdev.c_str(), outcome.c_str(), compared);
}

// The host's own NIC (FABRICWATCH_TEST_NETDEV, default eth0). virtio_net has no module ops: the
// answer must be kUnimplemented. On other drivers what came back is printed, with `ethtool -m`.
TEST(ModuleEepromHostTest, HostNetdev) {
  const char* env = std::getenv("FABRICWATCH_TEST_NETDEV");
  const std::string netdev = env != nullptr && *env != '\0' ? env : "eth0";
  if (::if_nametoindex(netdev.c_str()) == 0) GTEST_SKIP() << "no netdev " << netdev;
  auto [rc, driver] =
      Shell("basename \"$(readlink -f /sys/class/net/" + netdev + "/device/driver)\"");
  while (!driver.empty() && driver.back() == '\n') driver.pop_back();
  if (rc != 0) driver.clear();
  auto created = KernelEthtool::Create();
  ASSERT_TRUE(created) << created.error().ToString();
  auto image = (*created)->ModuleEeprom(netdev);
  std::string cli = "(ethtool not installed)";
  if (Shell("command -v ethtool").first == 0) {
    auto [cli_rc, cli_out] = Shell("ethtool -m " + netdev);
    cli = "rc " + std::to_string(cli_rc) + ": " + cli_out.substr(0, cli_out.find('\n'));
  }
  std::printf(
      "[ host     ] %s (driver %s): ModuleEeprom -> %s; ethtool -m %s\n", netdev.c_str(),
      driver.c_str(),
      image ? (std::to_string(image->size()) + " bytes").c_str() : image.error().ToString().c_str(),
      cli.c_str());
  if (driver == "virtio_net") {
    ASSERT_FALSE(image);
    EXPECT_EQ(image.error().code(), StatusCode::kUnimplemented) << image.error().ToString();
  } else if (image) {
    EXPECT_FALSE(image->empty());
    EXPECT_LE(image->size(), 768u);
  }
}

}  // namespace
}  // namespace fabricwatch::sys

namespace fabricwatch::sys {
namespace {

// A real veth through ethtool netlink LINKMODES_GET + LINKINFO_GET (K drivers/net/veth.c
// veth_get_link_ksettings: 10000 Mb/s, full duplex, twisted pair, autoneg off, no link modes), and
// the same settings from the text of `ethtool <veth>` when the tool is installed: the kernel path
// and the replay parser agree.
TEST_F(VethNetnsTest, LinkSettingsThroughNetlinkMatchEthtoolText) {
  InNetns(ns_a_, [&] {
    auto created = KernelEthtool::Create();
    ASSERT_TRUE(created) << created.error().ToString();
    KernelEthtool& source = **created;
    const uint64_t before = source.netlink_requests();
    auto settings = source.LinkSettingsOf(veth_a_);
    ASSERT_TRUE(settings) << settings.error().ToString();
    EXPECT_EQ(source.netlink_requests() - before, 2u + (before == 0 ? 1u : 0u));  // + family id
    EXPECT_EQ(settings->speed_mbps, std::optional<uint32_t>(10000));
    EXPECT_EQ(settings->duplex, "full");
    EXPECT_EQ(settings->autoneg, std::optional<bool>(false));
    EXPECT_EQ(settings->port, "Twisted Pair");
    EXPECT_TRUE(settings->supported_modes.empty());
    EXPECT_FALSE(settings->max_supported_speed_mbps);
    EXPECT_FALSE(settings->link_detected);

    auto missing = source.LinkSettingsOf("fwtnone0");
    ASSERT_FALSE(missing);
    EXPECT_EQ(missing.error().code(), StatusCode::kNotFound) << missing.error().ToString();

    if (!has_ethtool_) return;
    auto [rc, text] = Shell("ip netns exec " + ns_a_ + " ethtool " + veth_a_);
    ASSERT_EQ(rc, 0) << text;
    auto parsed = ParseEthtoolLinkText(text, "ethtool " + veth_a_);
    ASSERT_TRUE(parsed) << parsed.error().ToString();
    EXPECT_EQ(parsed->malformed_lines, 0u)
        << text << (parsed->problems.empty() ? "" : parsed->problems[0].message());
    EXPECT_EQ(parsed->settings.speed_mbps, settings->speed_mbps) << text;
    EXPECT_EQ(parsed->settings.duplex, settings->duplex);
    EXPECT_EQ(parsed->settings.autoneg, settings->autoneg);
    EXPECT_EQ(parsed->settings.port, settings->port);
    EXPECT_EQ(parsed->settings.supported_modes, settings->supported_modes);
    EXPECT_EQ(parsed->settings.link_detected, std::optional<bool>(true));
  });
}

}  // namespace
}  // namespace fabricwatch::sys
