// Collector `peer`, InfiniBand part (issue 24): the neighbour of each ACTIVE IB port from the
// smpquery replay text (--path.smp), asked when a port is first seen ACTIVE and when it comes
// back, absent while the port is down; a corrupt or hostile reply is an error for that port only.
// The text format is libibmad's mad_dump_nodeinfo, as smpquery prints it (generated here by
// libibmad itself for the fixture: see kNodeInfo).

#include "collectors/peer/peer.h"

#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "collectors/peer/smp_text.h"
#include "collectors/sys/filesystem.h"
#include "collectors/sys/sysfs.h"
#include "tests/testing/collector_context.h"
#include "tests/testing/test_paths.h"

namespace fabricwatch::peer {
namespace {

namespace fs = std::filesystem;

// `smpquery -D nodeinfo 0,1` of a leaf switch port, as libibmad 44.0 formats it (mad_dump_nodeinfo
// over a NodeInfo with these values; produced on this machine through libibmad).
constexpr char kNodeInfo[] =
    "# Node info: DR path slid 65535; dlid 65535; 0,1\n"
    "BaseVers:........................1\n"
    "ClassVers:.......................1\n"
    "NodeType:........................Switch\n"
    "NumPorts:........................65\n"
    "SystemGuid:......................0x1070fd0300aa0001\n"
    "Guid:............................0x1070fd0300aa0001\n"
    "PortGuid:........................0x1070fd0300aa0001\n"
    "PartCap:.........................8\n"
    "DevId:...........................0xd2f2\n"
    "Revision:........................0x000000a0\n"
    "LocalPort:.......................12\n"
    "VendorId:........................0x0002c9\n";
constexpr char kNodeDesc[] = "Node Description:........MF0;leaf07:MQM9790/U1\n";

class Tree {
 public:
  Tree()
      : root_(fs::temp_directory_path() /
              ("peer_test_" + std::to_string(::getpid()) + "_" + std::to_string(counter_++))) {
    Port("mlx5_0", "1", "InfiniBand", "4: ACTIVE");
    Port("mlx5_1", "1", "InfiniBand", "4: ACTIVE");
    Port("mlx5_2", "1", "Ethernet", "4: ACTIVE");
    Write("sys/class/infiniband/mlx5_2/ports/1/gid_attrs/ndevs/0", "enp2s0np0\n");
    Write("smp/mlx5_0/1/nodeinfo", kNodeInfo);
    Write("smp/mlx5_0/1/nodedesc", kNodeDesc);
  }
  ~Tree() { fs::remove_all(root_); }
  void Write(const std::string& rel, const std::string& text) {
    fs::create_directories((root_ / rel).parent_path());
    std::ofstream(root_ / rel) << text;
  }
  void Port(const std::string& dev, const std::string& port, const std::string& layer,
            const std::string& state) {
    const std::string dir = "sys/class/infiniband/" + dev + "/ports/" + port + "/";
    Write(dir + "link_layer", layer + "\n");
    Write(dir + "state", state + "\n");
  }
  std::string Path(const std::string& rel) const { return (root_ / rel).string(); }

 private:
  static inline int counter_ = 0;
  fs::path root_;
};

class Harness {
 public:
  explicit Harness(const Tree& tree, CollectorOptions options = {},
                   std::shared_ptr<spdlog::logger> logger = nullptr)
      : inputs_(tree.Path("sys"), std::move(options)) {
    if (logger != nullptr) inputs_.UseLogger(std::move(logger));
    CollectorContext context = inputs_.Context();
    context.roots.SetReplay(kSmpReplay, tree.Path("smp"));
    context.roots.SetReplay(kLldpReplay, tree.Path("lldp"));
    auto collector = NewPeerCollector(context);
    EXPECT_TRUE(collector) << collector.error().ToString();
    if (collector) collector_ = std::move(*collector);
  }
  // The peer series as "device/port -> labels", and the collection's error count.
  std::map<std::string, std::map<std::string, std::string>> Collect(size_t* errors = nullptr) {
    MetricSink sink;
    EXPECT_TRUE(collector_->Collect(sink).ok());
    if (errors != nullptr) *errors = sink.error_count();
    std::map<std::string, std::map<std::string, std::string>> out;
    bad_records_.clear();
    for (const auto& family : sink.TakeFamilies()) {
      for (const auto& metric : family.metric) {
        std::map<std::string, std::string> labels;
        for (const auto& l : metric.label) labels[l.name] = l.value;
        if (family.name == "fabric_port_peer_bad_records") {
          bad_records_[labels["source"] + "/" + labels["reason"]] = metric.gauge.value;
        } else {
          out[labels["device"] + "/" + labels["port"]] = labels;
        }
      }
    }
    return out;
  }
  // fabric_port_peer_bad_records of the last collection, as "source/reason -> value".
  const std::map<std::string, double>& bad_records() const { return bad_records_; }

 private:
  testing::CollectorTestContext inputs_;
  std::unique_ptr<Collector> collector_;
  std::map<std::string, double> bad_records_;
};

// A logger whose lines a test reads ("W text" for a warning, "I text" for info).
struct LogCapture {
  std::ostringstream lines;
  std::shared_ptr<spdlog::logger> logger = [this] {
    auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(lines);
    sink->set_pattern("%L %v");
    auto l = std::make_shared<spdlog::logger>("peer", sink);
    l->set_level(spdlog::level::info);
    return l;
  }();
  size_t Count(std::string_view text) const {
    const std::string all = lines.str();
    size_t n = 0;
    for (size_t at = all.find(text); at != std::string::npos; at = all.find(text, at + 1)) ++n;
    return n;
  }
};

TEST(PeerCollector, ib_port_names_its_neighbour) {
  Tree tree;
  Harness h(tree);
  size_t errors = 0;
  auto peers = h.Collect(&errors);
  ASSERT_EQ(peers.size(), 1u);  // mlx5_1 has no reply on file, mlx5_2 is Ethernet
  const auto& p = peers["mlx5_0/1"];
  EXPECT_EQ(p.at("peer_name"), "MF0;leaf07:MQM9790/U1");
  EXPECT_EQ(p.at("peer_port"), "12");
  EXPECT_EQ(p.at("peer_id"), "0x1070fd0300aa0001");
  EXPECT_EQ(p.at("source"), "smp");
  EXPECT_EQ(errors, 0u);  // a port with no reply is absent, once logged, not an error
}

TEST(PeerCollector, down_port_has_no_neighbour_and_is_asked_again_when_back) {
  Tree tree;
  Harness h(tree);
  EXPECT_EQ(h.Collect().size(), 1u);
  tree.Port("mlx5_0", "1", "InfiniBand", "1: DOWN");
  EXPECT_TRUE(h.Collect().empty());
  // Re-cabled to another switch port while down: the new neighbour is asked on the way up.
  tree.Write("smp/mlx5_0/1/nodedesc", "Node Description:........MF0;leaf08:MQM9790/U1\n");
  tree.Port("mlx5_0", "1", "InfiniBand", "4: ACTIVE");
  auto peers = h.Collect();
  ASSERT_EQ(peers.size(), 1u);
  EXPECT_EQ(peers["mlx5_0/1"].at("peer_name"), "MF0;leaf08:MQM9790/U1");
}

TEST(PeerCollector, corrupt_or_hostile_replies_are_errors_of_that_port) {
  Tree tree;
  tree.Write("smp/mlx5_1/1/nodeinfo", "NodeType:....Switch\nGuid:....0xzz\nLocalPort:...1\n");
  tree.Write("smp/mlx5_1/1/nodedesc", kNodeDesc);
  Harness h(tree);
  size_t errors = 0;
  auto peers = h.Collect(&errors);
  EXPECT_EQ(peers.size(), 1u);
  EXPECT_EQ(errors, 1u);
  EXPECT_EQ(h.bad_records().at("smp/malformed"), 1.0);
  // A hostile description is not exported; the neighbour still is, by its GUID.
  Tree hostile;
  hostile.Write("smp/mlx5_0/1/nodedesc", "Node Description:........leaf\x1b[31m07\n");
  Harness g(hostile);
  auto by_guid = g.Collect(&errors);
  ASSERT_EQ(by_guid.size(), 1u);
  EXPECT_EQ(by_guid["mlx5_0/1"].at("peer_name"), "0x1070fd0300aa0001");
  EXPECT_EQ(errors, 1u);
  EXPECT_EQ(g.bad_records().at("smp/no_description"), 1.0);
}

TEST(PeerCollector, nodeinfo_without_nodedesc_is_the_peer_by_guid_said_once) {
  Tree tree;
  fs::remove(tree.Path("smp/mlx5_0/1/nodedesc"));
  LogCapture log;
  Harness h(tree, {{"smp-refresh", "0s"}}, log.logger);
  size_t errors = 0;
  for (int i = 0; i < 3; ++i) {
    auto peers = h.Collect(&errors);
    ASSERT_EQ(peers.size(), 1u);
    EXPECT_EQ(peers["mlx5_0/1"].at("peer_name"), "0x1070fd0300aa0001");
    EXPECT_EQ(peers["mlx5_0/1"].at("peer_id"), "0x1070fd0300aa0001");
    EXPECT_EQ(peers["mlx5_0/1"].at("peer_port"), "12");
    EXPECT_EQ(errors, 1u);  // counted every time it is asked (smp-refresh 0s: every collection)
    EXPECT_EQ(h.bad_records().at("smp/no_description"), 1.0);
    EXPECT_EQ(h.bad_records().at("smp/malformed"), 0.0);
  }
  EXPECT_EQ(log.Count("W "), 1u) << log.lines.str();
  EXPECT_EQ(log.Count("InfiniBand peer 0x1070fd0300aa0001 exported without its NodeDescription"),
            1u);
  tree.Write("smp/mlx5_0/1/nodedesc", kNodeDesc);
  EXPECT_EQ(h.Collect(&errors)["mlx5_0/1"].at("peer_name"), "MF0;leaf07:MQM9790/U1");
  EXPECT_EQ(errors, 0u);
  EXPECT_EQ(h.bad_records().at("smp/no_description"), 0.0);
  EXPECT_EQ(log.Count("I smp/mlx5_0/1/no_description: recovered"), 1u) << log.lines.str();
}

// `lldpctl -f keyvalue enp2s0np0` on a node whose RoCE port faces leaf07 (lldpd 1.0.16 format).
constexpr char kLldpKeyValue[] =
    "lldp.enp2s0np0.via=LLDP\n"
    "lldp.enp2s0np0.rid=1\n"
    "lldp.enp2s0np0.age=0 day, 00:00:03\n"
    "lldp.enp2s0np0.chassis.mac=ee:f4:11:85:c3:66\n"
    "lldp.enp2s0np0.chassis.name=leaf07\n"
    "lldp.enp2s0np0.chassis.descr=SONiC leaf07\n"
    "lldp.enp2s0np0.port.ifname=Ethernet12\n"
    "lldp.enp2s0np0.port.descr=node3:enp2s0np0\n"
    "lldp.enp2s0np0.port.ttl=120\n";

TEST(PeerCollector, roce_port_names_its_lldp_neighbour_from_the_replay) {
  Tree tree;
  tree.Write("lldp/enp2s0np0", kLldpKeyValue);
  Harness h(tree);
  size_t errors = 0;
  auto peers = h.Collect(&errors);
  ASSERT_EQ(peers.size(), 2u);
  const auto& p = peers["mlx5_2/1"];
  EXPECT_EQ(p.at("netdev"), "enp2s0np0");
  EXPECT_EQ(p.at("peer_name"), "leaf07");
  EXPECT_EQ(p.at("peer_port"), "Ethernet12");
  EXPECT_EQ(p.at("peer_id"), "ee:f4:11:85:c3:66");
  EXPECT_EQ(p.at("source"), "lldpd");
  EXPECT_EQ(errors, 0u);
  EXPECT_EQ(h.bad_records().at("lldpd/incomplete"), 0.0);
  // A corrupt file is an error of that port; lldp off reads nothing.
  tree.Write("lldp/enp2s0np0", "lldp.enp2s0np0.chassis.name\n");
  EXPECT_EQ(h.Collect(&errors).size(), 1u);
  EXPECT_EQ(errors, 1u);
  EXPECT_EQ(h.bad_records().at("lldpd/malformed"), 1.0);
  tree.Write("lldp/enp2s0np0", kLldpKeyValue);
  Harness off(tree, {{"lldp", "off"}});
  EXPECT_EQ(off.Collect().size(), 1u);
}

TEST(PeerCollector, a_bad_lldp_block_costs_only_itself_and_is_logged_once_per_state) {
  Tree tree;
  // The full `lldpctl -f keyvalue` of a node: this port's neighbour, a Junos one on the port id
  // ifIndex, and a block of another netdev cut short by a full disk.
  const std::string junos =
      "lldp.enp2s0np0.via=LLDP\n"
      "lldp.enp2s0np0.chassis.mac=40:a6:77:7a:72:00\n"
      "lldp.enp2s0np0.chassis.name=sw-filer-f06.dc42\n"
      "lldp.enp2s0np0.port.local=512\n"
      "lldp.enp2s0np0.port.descr=xe-0/0/1\n";
  tree.Write("lldp/enp2s0np0", junos + "lldp.eth9.via=LLDP\nlldp.eth9.chassis.mac=aa:bb\n");
  LogCapture log;
  Harness h(tree, {}, log.logger);
  size_t errors = 0;
  for (int i = 0; i < 3; ++i) {
    auto peers = h.Collect(&errors);
    ASSERT_EQ(peers.size(), 2u);
    EXPECT_EQ(peers["mlx5_2/1"].at("peer_name"), "sw-filer-f06.dc42");
    EXPECT_EQ(peers["mlx5_2/1"].at("peer_port"), "xe-0/0/1");
    EXPECT_EQ(errors, 1u);
    EXPECT_EQ(h.bad_records().at("lldpd/incomplete"), 1.0);
  }
  EXPECT_EQ(log.Count("W "), 1u) << log.lines.str();
  EXPECT_EQ(log.Count("neighbour on eth9 without a chassis id and a port id"), 1u);
  // Another fault of the same file is a new state: said again; the old one recovers.
  tree.Write("lldp/enp2s0np0", junos + "lldp.eth9.port.ttl=soon\n");
  h.Collect(&errors);
  EXPECT_EQ(h.bad_records().at("lldpd/bad_ttl"), 1.0);
  EXPECT_EQ(h.bad_records().at("lldpd/incomplete"), 0.0);
  EXPECT_EQ(log.Count("W "), 2u) << log.lines.str();
  EXPECT_EQ(log.Count("I lldp/eth9/incomplete: recovered"), 1u) << log.lines.str();
  tree.Write("lldp/enp2s0np0", junos);
  h.Collect(&errors);
  EXPECT_EQ(errors, 0u);
  EXPECT_EQ(log.Count("I lldp/eth9/bad_ttl: recovered"), 1u) << log.lines.str();
}

TEST(SmpText, parses_nodeinfo_and_nodedesc) {
  auto info = peer::ParseSmpNodeInfo(kNodeInfo);
  ASSERT_TRUE(info) << info.error().ToString();
  EXPECT_EQ(info->node_type, "Switch");
  EXPECT_EQ(info->node_guid, 0x1070fd0300aa0001ULL);
  EXPECT_EQ(info->local_port, 12u);
  EXPECT_EQ(info->num_ports, 65u);
  EXPECT_EQ(info->vendor_id, 0x2c9u);
  EXPECT_EQ(peer::FormatGuid(info->node_guid), "0x1070fd0300aa0001");
  EXPECT_EQ(*peer::ParseSmpNodeDesc(kNodeDesc), "MF0;leaf07:MQM9790/U1");
  // CRLF and trailing spaces are tolerated; missing fields, bad numbers and long or control
  // text are errors.
  EXPECT_TRUE(peer::ParseSmpNodeDesc("Node Description:........gpu-node-017 HCA-1 \r\n"));
  EXPECT_FALSE(peer::ParseSmpNodeInfo("NodeType:....Switch\n"));
  EXPECT_FALSE(peer::ParseSmpNodeInfo("NodeType:..Switch\nGuid:..0x1\nLocalPort:..300\n"));
  EXPECT_FALSE(peer::ParseSmpNodeDesc("Node Description:" + std::string(65, 'a') + "\n"));
  EXPECT_FALSE(peer::ParseSmpNodeDesc("Node Description:....a\tb\n"));
  EXPECT_FALSE(peer::ParseSmpNodeDesc("Node Description:....\xff\xfe\n"));
  EXPECT_FALSE(peer::ParseSmpNodeDesc("nothing here\n"));
}

// Conformance over the real smpquery captures of tests/fixtures/real/smp (sources and facts in
// tests/fixtures/real/SOURCES.md, section "smp"): LID-routed NodeInfo of a dual-port ConnectX-3
// from both ports, and the failed query of the unplugged one.
std::string RealSmp(const std::string& file) {
  return testing::ReadTextFile(testing::FixturePath("real/smp/" + file));
}

TEST(SmpRealCapture, nodeinfo_of_each_port_and_the_failed_query) {
  for (const auto& [file, local_port] :
       {std::pair<std::string, unsigned>{"ompi-users-2012-03-mlx4-lid4.nodeinfo", 1},
        {"ompi-users-2012-03-mlx4-lid5.nodeinfo", 2}}) {
    SCOPED_TRACE(file);
    auto info = peer::ParseSmpNodeInfo(RealSmp(file));
    ASSERT_TRUE(info) << info.error().ToString();
    EXPECT_EQ(info->node_type, "Channel Adapter");
    EXPECT_EQ(peer::FormatGuid(info->node_guid), "0x0002c90300336fe0");
    EXPECT_EQ(peer::FormatGuid(info->system_guid), "0x0002c90300336fe3");
    EXPECT_EQ(info->num_ports, 2u);
    EXPECT_EQ(info->local_port, local_port);
    EXPECT_EQ(info->vendor_id, 0x2c9u);
    EXPECT_EQ(info->device_id, 0x1003u);
  }
  auto failed = peer::ParseSmpNodeInfo(RealSmp("ompi-users-2012-03-mlx4-lid4-unplugged.nodeinfo"));
  ASSERT_FALSE(failed);
  EXPECT_NE(failed.error().message().find("missing Guid"), std::string::npos);
}

TEST(SmpRealCapture, a_nodeinfo_posted_without_its_nodedesc_is_the_peer_by_guid) {
  // The post has the NodeInfo only: the collector shows the neighbour by its GUID, counted.
  Tree tree;
  tree.Write("smp/mlx5_0/1/nodeinfo", RealSmp("ompi-users-2012-03-mlx4-lid5.nodeinfo"));
  fs::remove(tree.Path("smp/mlx5_0/1/nodedesc"));
  tree.Write("smp/mlx5_1/1/nodeinfo", RealSmp("ompi-users-2012-03-mlx4-lid4-unplugged.nodeinfo"));
  tree.Write("smp/mlx5_1/1/nodedesc", kNodeDesc);
  Harness h(tree);
  size_t errors = 0;
  auto peers = h.Collect(&errors);
  ASSERT_EQ(peers.size(), 1u);
  EXPECT_EQ(peers["mlx5_0/1"].at("peer_name"), "0x0002c90300336fe0");
  EXPECT_EQ(peers["mlx5_0/1"].at("peer_id"), "0x0002c90300336fe0");
  EXPECT_EQ(peers["mlx5_0/1"].at("peer_port"), "2");
  EXPECT_EQ(errors, 2u);
  EXPECT_EQ(h.bad_records().at("smp/no_description"), 1.0);
  EXPECT_EQ(h.bad_records().at("smp/malformed"), 1.0);
}

}  // namespace
}  // namespace fabricwatch::peer
