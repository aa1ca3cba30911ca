// fabricsim peer replays (issue 24, tools/fabricsim/leaf_switch.h): every InfiniBand port gets
// smp/<dev>/<port>/{nodeinfo,nodedesc} and every Ethernet port lldp/<netdev>, in the formats of
// the captures in tests/fixtures/smp and tests/fixtures/lldp, which the agent's own parsers
// (collectors/peer/smp_text.h, lldp_keyvalue.h) and the peer collector read back: HGX presets are
// cabled rail-optimised (port i to <leaf>-rail<i+1>, the node's slot on each), the others to one
// leaf on consecutive ports; --leaf and --slot move them.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <vector>

#include "collectors/peer/lldp_keyvalue.h"
#include "collectors/peer/smp_text.h"
#include "tests/testing/temp_dir.h"
#include "tests/testing/test_paths.h"
#include "tests/unit/sim/sim_testing.h"
#include "tools/fabricsim/leaf_switch.h"
#include "tools/fabricsim/simulator.h"

namespace fabricwatch::sim {
namespace {

namespace fs = std::filesystem;
using fabricwatch::testing::ReadTextFile;
using fabricwatch::testing::TempDir;
using simtest::CollectAll;
using simtest::MakeSim;
using simtest::Quiet;
using simtest::Samples;
using ::testing::HasSubstr;

// "Name:....value" lines of a libibmad dump, the names only, in order.
std::vector<std::string> FieldNames(const std::string& text) {
  std::vector<std::string> names;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(start, end - start);
    const size_t dots = line.find("..");
    if (!line.starts_with("#") && dots != std::string::npos) {
      // The padding too: the value starts at the same column as in the capture.
      names.push_back(line.substr(0, line.find_first_not_of('.', dots)));
    }
    start = end + 1;
  }
  return names;
}

std::vector<std::string> Keys(const std::string& text, const std::string& netdev) {
  std::vector<std::string> keys;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(start, end - start);
    const std::string prefix = "lldp." + netdev + ".";
    if (line.starts_with(prefix))
      keys.push_back(line.substr(prefix.size(), line.find('=') - prefix.size()));
    start = end + 1;
  }
  return keys;
}

std::unique_ptr<Simulator> MakeSimOn(const std::string& preset, const std::string& root,
                                     LeafOptions leaf) {
  auto node = BuildPreset(preset);
  EXPECT_TRUE(node);
  auto sim = Simulator::Create(std::move(*node), Quiet(), root, {.seed = 7, .leaf = leaf});
  EXPECT_TRUE(sim) << sim.error().ToString();
  EXPECT_TRUE((*sim)->WriteInitial().ok());
  return std::move(*sim);
}

TEST(SimPeerTest, infiniband_ports_face_one_rail_leaf_each_in_the_capture_format) {
  TempDir dir;
  auto sim = MakeSim("hgx-ib", Quiet(), dir.str());
  const std::string fixture =
      fabricwatch::testing::SourcePath("tests/fixtures/smp/ib-leaf/mlx5_0/1/");
  const std::string fixture_info = ReadTextFile(fixture + "nodeinfo");
  ASSERT_FALSE(fixture_info.empty());
  std::set<uint64_t> guids;
  int index = 0;
  for (const Port& p : sim->node().ports) {
    SCOPED_TRACE(p.rdma_device);
    const std::string base = sim->smp_root() + "/" + p.rdma_device + "/1/";
    const std::string info_text = ReadTextFile(base + "nodeinfo");
    const std::string desc_text = ReadTextFile(base + "nodedesc");
    EXPECT_EQ(FieldNames(info_text), FieldNames(fixture_info));
    auto info = peer::ParseSmpNodeInfo(info_text);
    ASSERT_TRUE(info) << info.error().ToString();
    auto desc = peer::ParseSmpNodeDesc(desc_text);
    ASSERT_TRUE(desc) << desc.error().ToString();
    const std::string leaf = "leaf01-rail" + std::to_string(++index);
    EXPECT_EQ(*desc, "MF0;" + leaf + ":MQM9790/U1");
    EXPECT_EQ(info->node_type, "Switch");
    EXPECT_EQ(info->local_port, 1u);  // slot 1 on every rail
    EXPECT_EQ(info->num_ports, 65u);
    EXPECT_EQ(info->node_guid, sim->Leaf(p).guid);
    EXPECT_EQ(peer::FormatGuid(info->node_guid).substr(0, 10), "0x1070fd03");  // NVIDIA OUI
    guids.insert(info->node_guid);
  }
  EXPECT_EQ(guids.size(), 8u);  // eight switches, eight identities
  // No Ethernet port, so no LLDP file, but the directory the flag names exists.
  EXPECT_TRUE(fs::is_directory(sim->lldp_root()));
  EXPECT_TRUE(fs::is_empty(sim->lldp_root()));
}

TEST(SimPeerTest, hdr_ports_face_quantum_switches) {
  TempDir dir;
  auto sim = MakeSim("hgx-ib-hdr", Quiet(), dir.str());
  auto info = peer::ParseSmpNodeInfo(ReadTextFile(sim->smp_root() + "/mlx5_0/1/nodeinfo"));
  ASSERT_TRUE(info);
  EXPECT_EQ(info->num_ports, 41u);
  EXPECT_EQ(info->device_id, 0xcf08u);
  EXPECT_EQ(*peer::ParseSmpNodeDesc(ReadTextFile(sim->smp_root() + "/mlx5_0/1/nodedesc")),
            "MF0;leaf01-rail1:MQM8700/U1");
}

TEST(SimPeerTest, roce_ports_have_lldp_neighbours_in_the_capture_format) {
  TempDir dir;
  auto sim = MakeSimOn("hgx-roce", dir.str(), {.leaf = "su2-leaf", .slot = 5});
  const std::string fixture =
      ReadTextFile(fabricwatch::testing::SourcePath("tests/fixtures/lldp/roce-leaf/enp65s0f1np1"));
  ASSERT_FALSE(fixture.empty());
  std::set<std::string> chassis;
  int index = 0;
  for (const Port& p : sim->node().ports) {
    SCOPED_TRACE(p.netdev);
    const std::string text = ReadTextFile(sim->lldp_root() + "/" + p.netdev);
    EXPECT_EQ(Keys(text, p.netdev), Keys(fixture, "enp65s0f1np1"));
    auto parsed = peer::ParseLldpKeyValue(text);
    ASSERT_TRUE(parsed) << parsed.error().ToString();
    ASSERT_EQ(parsed->size(), 1u);
    const peer::LldpNeighbor& n = parsed->at(p.netdev);
    EXPECT_EQ(n.system_name, "su2-leaf-rail" + std::to_string(++index));
    EXPECT_EQ(peer::LldpPeerName(n), n.system_name);
    // Slot 5 on an SN5600 (8 SerDes lanes a port): SONiC's Ethernet32.
    EXPECT_EQ(peer::LldpPeerPort(n), "Ethernet32");
    EXPECT_EQ(n.port_description, sim->node().spec.hostname + ":" + p.netdev);
    EXPECT_EQ(n.chassis_id, sim->Leaf(p).mac);
    EXPECT_EQ(n.ttl_seconds, 120u);
    chassis.insert(n.chassis_id);
  }
  EXPECT_EQ(chassis.size(), 8u);
  EXPECT_TRUE(fs::is_empty(sim->smp_root()));
}

TEST(SimPeerTest, a_non_hgx_node_faces_one_leaf_on_consecutive_ports) {
  TempDir dir;
  auto sim = MakeSimOn("roce-small", dir.str(), {.leaf = "tor7", .slot = 2});
  std::vector<std::string> ports;
  std::set<std::string> chassis;
  for (const Port& p : sim->node().ports) {
    auto parsed = peer::ParseLldpKeyValue(ReadTextFile(sim->lldp_root() + "/" + p.netdev));
    ASSERT_TRUE(parsed) << parsed.error().ToString();
    EXPECT_EQ(parsed->at(p.netdev).system_name, "tor7");
    chassis.insert(parsed->at(p.netdev).chassis_id);
    ports.emplace_back(peer::LldpPeerPort(parsed->at(p.netdev)));
  }
  // Three ports, slot 2: downlinks 4, 5, 6 of an SN4600C (4 lanes a port).
  EXPECT_EQ(ports, (std::vector<std::string>{"Ethernet12", "Ethernet16", "Ethernet20"}));
  EXPECT_EQ(chassis.size(), 1u);
}

TEST(SimPeerTest, the_same_leaf_name_has_the_same_identity) {
  auto node = BuildPreset("roce-small");
  ASSERT_TRUE(node);
  const LeafPort a = LeafOf(*node, node->ports[0], {.leaf = "leaf09"});
  const LeafPort b = LeafOf(*node, node->ports[0], {.leaf = "leaf09"});
  const LeafPort c = LeafOf(*node, node->ports[0], {.leaf = "leaf10"});
  EXPECT_EQ(a.mac, b.mac);
  EXPECT_EQ(a.guid, b.guid);
  EXPECT_NE(a.mac, c.mac);
  EXPECT_NE(a.guid, c.guid);
  // Locally administered unicast.
  EXPECT_EQ(std::stoi(a.mac.substr(0, 2), nullptr, 16) & 0x03, 0x02);
}

TEST(SimPeerTest, bad_leaf_options_are_refused_with_the_reason) {
  auto node = BuildPreset("stress-64");
  ASSERT_TRUE(node);
  // 64 ports on one 64-port leaf: slot 1 fits, slot 2 does not.
  EXPECT_TRUE(CheckLeafOptions(*node, {.leaf = "leaf01", .slot = 1}).ok());
  const Status full = CheckLeafOptions(*node, {.leaf = "leaf01", .slot = 2});
  EXPECT_FALSE(full.ok());
  EXPECT_THAT(full.message(), HasSubstr("switch port 65"));
  EXPECT_FALSE(CheckLeafOptions(*node, {.leaf = "leaf01", .slot = 0}).ok());
  EXPECT_FALSE(CheckLeafOptions(*node, {.leaf = "", .slot = 1}).ok());
  EXPECT_FALSE(CheckLeafOptions(*node, {.leaf = "leaf 01", .slot = 1}).ok());
  EXPECT_FALSE(CheckLeafOptions(*node, {.leaf = std::string(41, 'a'), .slot = 1}).ok());
  auto ib = BuildPreset("hgx-ib-hdr");
  ASSERT_TRUE(ib);
  EXPECT_TRUE(CheckLeafOptions(*ib, {.leaf = "x", .slot = 40}).ok());
  EXPECT_FALSE(CheckLeafOptions(*ib, {.leaf = "x", .slot = 41}).ok());
  auto refused =
      Simulator::Create(*ib, Quiet(), "/nonexistent", {.leaf = {.leaf = "x", .slot = 41}});
  ASSERT_FALSE(refused);
  EXPECT_THAT(refused.error().message(), HasSubstr("MQM8700"));
}

// The peer collector on the replay root, as the agent runs with the flags fabricsim prints.
TEST(SimPeerTest, the_peer_collector_names_every_ports_leaf) {
  for (const std::string preset : {"hgx-ib", "hgx-roce", "roce-small"}) {
    SCOPED_TRACE(preset);
    TempDir dir;
    auto sim = MakeSim(preset, Quiet(), dir.str());
    const Samples s = CollectAll(*sim);
    EXPECT_EQ(s.errors, 0u) << s.error_text;
    EXPECT_EQ(s.Count("fabric_port_peer_info"), sim->node().ports.size());
    for (const Port& p : sim->node().ports) {
      SCOPED_TRACE(p.rdma_device);
      const LeafPort leaf = sim->Leaf(p);
      const bool ib = p.link_layer == LinkLayer::kInfiniBand;
      EXPECT_TRUE(s.Get("fabric_port_peer_info",
                        {{"device", p.rdma_device},
                         {"port", "1"},
                         {"netdev", p.netdev},
                         {"peer_name", ib ? "MF0;" + leaf.name + ":MQM9790/U1" : leaf.name},
                         {"peer_port", ib ? std::to_string(leaf.port) : leaf.port_name},
                         {"peer_id", ib ? peer::FormatGuid(leaf.guid) : leaf.mac},
                         {"source", ib ? "smp" : "lldpd"}}));
    }
  }
}

}  // namespace
}  // namespace fabricwatch::sim
