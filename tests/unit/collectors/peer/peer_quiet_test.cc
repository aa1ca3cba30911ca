// Collector `peer` asks nothing between refreshes (issue 40 item 3): a sample within smp-refresh
// sends no SMP (its replay files can go and the neighbour stays), and a node with no Ethernet port
// never connects to lldpd (a listening socket counts the connections).

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <map>
#include <string>
#include <thread>

#include "collectors/peer/peer.h"
#include "collectors/sys/filesystem.h"
#include "collectors/sys/sysfs.h"
#include "collectors/sys/unique_fd.h"
#include "tests/testing/collector_context.h"
#include "tests/testing/temp_dir.h"

namespace fabricwatch::peer {
namespace {

namespace fs = std::filesystem;

constexpr char kNodeInfo[] =
    "# Node info: DR path slid 65535; dlid 65535; 0,1\n"
    "NodeType:........................Switch\n"
    "NumPorts:........................65\n"
    "Guid:............................0x1070fd0300aa0001\n"
    "LocalPort:.......................12\n";
constexpr char kNodeDesc[] = "Node Description:........MF0;leaf07:MQM9790/U1\n";

void Port(const testing::TempDir& dir, const std::string& device, const std::string& layer) {
  const std::string base = "sys/class/infiniband/" + device + "/ports/1/";
  dir.Write(base + "link_layer", layer + "\n");
  dir.Write(base + "state", "4: ACTIVE\n");
}

struct Peer {
  Peer(const testing::TempDir& dir, CollectorOptions options, bool host)
      : inputs(dir.Path("sys"), std::move(options)) {
    CollectorContext context = inputs.Context();
    if (!host) context.roots.SetReplay(kSmpReplay, dir.Path("smp"));
    context.roots.host = host;
    auto made = NewPeerCollector(context);
    EXPECT_TRUE(made) << made.error().ToString();
    if (made) collector = std::move(*made);
  }
  // device/port -> peer_name of one collection, and its error count.
  std::map<std::string, std::string> Collect(size_t* errors = nullptr) {
    MetricSink sink;
    EXPECT_TRUE(collector->Collect(sink).ok());
    if (errors != nullptr) *errors = sink.error_count();
    std::map<std::string, std::string> out;
    for (const auto& family : sink.TakeFamilies()) {
      if (family.name != "fabric_port_peer_info") continue;
      for (const auto& metric : family.metric) {
        std::map<std::string, std::string> labels;
        for (const auto& l : metric.label) labels[l.name] = l.value;
        out[labels["device"] + "/" + labels["port"]] = labels["peer_name"];
      }
    }
    return out;
  }
  testing::CollectorTestContext inputs;
  std::unique_ptr<Collector> collector;
};

TEST(PeerQuiet, a_sample_between_refreshes_sends_no_smp) {
  for (const bool refresh_each_sample : {false, true}) {
    testing::TempDir dir("peer-quiet");
    Port(dir, "mlx5_0", "InfiniBand");
    dir.Write("smp/mlx5_0/1/nodeinfo", kNodeInfo);
    dir.Write("smp/mlx5_0/1/nodedesc", kNodeDesc);
    Peer peer(dir, {{"smp-refresh", refresh_each_sample ? "1ms" : "10m"}}, /*host=*/false);
    ASSERT_EQ(peer.Collect()["mlx5_0/1"], "MF0;leaf07:MQM9790/U1");
    // The replies are gone: a query now would find no neighbour.
    fs::remove_all(dir.Path("smp"));
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    for (int i = 0; i < 3; ++i) {
      size_t errors = 0;
      const auto peers = peer.Collect(&errors);
      EXPECT_EQ(errors, 0u);
      if (refresh_each_sample) {
        EXPECT_TRUE(peers.empty()) << "the control: asked again, no reply";
      } else {
        EXPECT_EQ(peers.at("mlx5_0/1"), "MF0;leaf07:MQM9790/U1") << "sample " << i;
      }
    }
  }
}

// A unix socket standing in for lldpd's control socket: counts the connections and closes them.
class CountingSocket {
 public:
  explicit CountingSocket(const std::string& path)
      : fd_(::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0)) {
    sockaddr_un address{};
    address.sun_family = AF_UNIX;
    path.copy(address.sun_path, sizeof(address.sun_path) - 1);
    EXPECT_EQ(::bind(fd_.get(), reinterpret_cast<sockaddr*>(&address), sizeof(address)), 0);
    EXPECT_EQ(::listen(fd_.get(), 16), 0);
    thread_ = std::jthread([this](std::stop_token stop) {
      while (!stop.stop_requested()) {
        sys::UniqueFd client(::accept4(fd_.get(), nullptr, nullptr, SOCK_CLOEXEC));
        if (client.valid()) {
          ++connections;
        } else {
          std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
      }
    });
  }
  std::atomic<int> connections{0};

 private:
  sys::UniqueFd fd_;
  std::jthread thread_;
};

TEST(PeerQuiet, an_infiniband_node_never_asks_lldpd) {
  testing::TempDir dir("peer-quiet");
  const std::string socket = dir.Path("lldpd.socket");
  CountingSocket lldpd(socket);
  Port(dir, "mlx5_0", "InfiniBand");
  Port(dir, "mlx5_1", "InfiniBand");
  Peer peer(dir, {{"smp", "false"}, {"lldp", "lldpd"}, {"lldpd-socket", socket}}, /*host=*/true);
  for (int i = 0; i < 3; ++i) peer.Collect();
  EXPECT_EQ(lldpd.connections.load(), 0);

  // The control: with a RoCE port, each sample asks lldpd.
  Port(dir, "mlx5_2", "Ethernet");
  dir.Write("sys/class/infiniband/mlx5_2/ports/1/gid_attrs/ndevs/0", "enp2s0np0\n");
  peer.Collect();
  for (int i = 0; i < 1000 && lldpd.connections.load() == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  if (lldpd.connections.load() == 0) GTEST_SKIP() << "liblldpctl not loadable here";
  EXPECT_GE(lldpd.connections.load(), 1);
}

}  // namespace
}  // namespace fabricwatch::peer
