// Real lldpd (Debian's lldpd 1.0) in two network namespaces on a veth pair, with a 1 s transmit
// interval (issue 24, "Real parts in tests"):
// - lldpd in both: QueryLldpdNeighbors (collectors/peer/lldpd_client.h) on the second one's
//   control socket names the first one's system and port;
// - lldpd sending only (tx-only) in the first: the passive LldpListener in the second namespace
//   sees its frames.
// Skipped when not root, without `ip netns`, or without the lldpd program. Without lldpd at a
// socket, the client says so (runs everywhere).

#include <gtest/gtest.h>
#include <signal.h>
#include <spdlog/sinks/null_sink.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <thread>

#include "collectors/peer/lldp_listener.h"
#include "collectors/peer/lldpd_client.h"
#include "tests/unit/collectors/peer/lldp_netns.h"

namespace fabricwatch::peer {
namespace {

using std::chrono::milliseconds;
using testing::VethNetns;

TEST(LldpdClientTest, NoLldpdAtTheSocketIsUnavailable) {
  LldpdQueryOptions options;
  options.socket_path = "/nonexistent/fabricwatch-lldpd.socket";
  auto r = QueryLldpdNeighbors(options);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code(), StatusCode::kUnavailable);
  EXPECT_NE(r.error().message().find("no lldpd at /nonexistent/fabricwatch-lldpd.socket"),
            std::string::npos)
      << r.error().message();
}

// One lldpd in a namespace, its socket, configuration and log in `dir`; SIGTERM on destruction.
class Lldpd {
 public:
  Lldpd(const std::string& dir, const std::string& name, const std::string& ns,
        const std::string& dev, const std::string& config, const std::string& flags)
      : socket_(dir + "/" + name + ".sock"), log_(dir + "/" + name + ".log") {
    const std::string conf = dir + "/" + name + ".conf";
    std::ofstream(conf) << config;
    const std::string pidfile = dir + "/" + name + ".pid";
    // `ip netns exec` execs lldpd, so $! is lldpd's own pid. -O: only our configuration.
    VethNetns::Sh("ip netns exec " + ns + " lldpd -d " + flags + " -u " + socket_ + " -I " + dev +
                  " -O " + conf + " >" + log_ + " 2>&1 & echo $! >" + pidfile);
    std::ifstream(pidfile) >> pid_;
  }
  ~Lldpd() {
    if (pid_ > 0) kill(pid_, SIGTERM);
    for (int i = 0; i < 50 && pid_ > 0 && kill(pid_, 0) == 0; ++i) {
      std::this_thread::sleep_for(milliseconds(20));
    }
  }
  const std::string& socket() const { return socket_; }
  std::string Log() const {
    std::ifstream in(log_);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }

 private:
  std::string socket_, log_;
  pid_t pid_ = 0;
};

class LldpdNetnsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root for network namespaces and lldpd";
    if (!VethNetns::Sh("command -v lldpd >/dev/null && command -v lldpcli >/dev/null")) {
      GTEST_SKIP() << "lldpd is not installed (apt-get install lldpd)";
    }
    if (!testing::HaveIpNetns()) GTEST_SKIP() << "no `ip netns` here";
    net_ = std::make_unique<VethNetns>("fwld");
    if (!net_->ok()) GTEST_SKIP() << "cannot create network namespaces with a veth pair";
    char tmpl[] = "/tmp/fabricwatch-lldpd-XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
    // lldpd runs lldpcli on its configuration as _lldpd, which must reach the socket.
    ASSERT_EQ(chmod(tmpl, 0755), 0);
  }
  void TearDown() override {
    sender_.reset();
    receiver_.reset();
    net_.reset();
    if (!dir_.empty()) VethNetns::Sh("rm -rf " + dir_);
  }
  // The far end: a switch named leaf07 whose port id is its ifname, with a port description.
  void StartSender(bool tx_only) {
    std::string config =
        "configure system hostname leaf07\n"
        "configure system description \"leaf07 test switch\"\n"
        "configure lldp portidsubtype ifname\n"
        "configure ports " +
        net_->dev_a +
        " lldp portdescription \"uplink to node3\"\n"
        "configure lldp tx-interval 1\n";
    if (tx_only) config += "configure lldp status tx-only\n";
    sender_ = std::make_unique<Lldpd>(dir_, "sender", net_->ns_a, net_->dev_a, config, "");
  }

  std::unique_ptr<VethNetns> net_;
  std::string dir_;
  std::unique_ptr<Lldpd> sender_, receiver_;
};

TEST_F(LldpdNetnsTest, TheClientNamesThePeersSystemAndPortThroughLldpd) {
  StartSender(/*tx_only=*/false);
  receiver_ = std::make_unique<Lldpd>(dir_, "receiver", net_->ns_b, net_->dev_b,
                                      "configure lldp tx-interval 1\n", "-r");
  LldpdQueryOptions options;
  options.socket_path = receiver_->socket();
  Result<LldpdNeighbors> got = Error(StatusCode::kUnavailable, "not asked yet");
  for (int i = 0; i < 100; ++i) {
    got = QueryLldpdNeighbors(options);
    if (got && got->by_netdev.count(net_->dev_b) != 0 &&
        got->by_netdev.at(net_->dev_b).system_name == "leaf07") {
      break;
    }
    std::this_thread::sleep_for(milliseconds(100));
  }
  ASSERT_TRUE(got) << got.error().ToString() << "\nsender:\n"
                   << sender_->Log() << "\nreceiver:\n"
                   << receiver_->Log();
  ASSERT_EQ(got->by_netdev.count(net_->dev_b), 1u) << receiver_->Log();
  const LldpNeighbor& n = got->by_netdev.at(net_->dev_b);
  EXPECT_EQ(n.system_name, "leaf07");
  EXPECT_EQ(n.system_description, "leaf07 test switch");
  EXPECT_EQ(n.port_id, net_->dev_a);
  EXPECT_EQ(n.port_id_subtype, kPortIdInterfaceName);
  EXPECT_EQ(n.port_description, "uplink to node3");
  EXPECT_EQ(n.chassis_id_subtype, kChassisIdMac);
  EXPECT_EQ(n.chassis_id.size(), 17u) << n.chassis_id;
  EXPECT_GT(n.ttl_seconds, 0u);
  EXPECT_EQ(got->rejected, 0u);
}

TEST_F(LldpdNetnsTest, TheListenerHearsLldpdSendingOnly) {
  StartSender(/*tx_only=*/true);
  LldpNeighborTable table;
  std::unique_ptr<LldpListener> listener;
  Status error;
  auto logger = std::make_shared<spdlog::logger>("lldp_test",
                                                 std::make_shared<spdlog::sinks::null_sink_mt>());
  ASSERT_TRUE(VethNetns::RunIn(net_->ns_b, [&] {
    auto l = LldpListener::Start(table, {net_->dev_b}, logger);
    if (l)
      listener = std::move(*l);
    else
      error = l.error();
  }));
  ASSERT_TRUE(listener) << error.ToString();
  std::optional<LldpNeighbor> n;
  for (int i = 0; i < 100; ++i) {
    n = table.NeighborOf(net_->dev_b, LldpNeighborTable::Clock::now());
    if (n && n->system_name == "leaf07" && n->port_id == net_->dev_a) break;
    std::this_thread::sleep_for(milliseconds(100));
  }
  ASSERT_TRUE(n.has_value()) << "frames received " << table.counts().received << ", rejected "
                             << table.counts().rejected_total() << "\n"
                             << sender_->Log();
  EXPECT_EQ(n->system_name, "leaf07");
  EXPECT_EQ(n->port_id, net_->dev_a);
  EXPECT_EQ(n->port_description, "uplink to node3");
  EXPECT_GT(n->ttl_seconds, 0u);
  EXPECT_EQ(table.counts().rejected_total(), 0u);
}

}  // namespace
}  // namespace fabricwatch::peer
