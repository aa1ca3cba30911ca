// fabricsim, the fabric's shape (issue 20): the faults that sit still change exactly the files a
// real node shows for them (ports/<n>/{rate,state,phys_state,lid,sm_lid}, fw_ver, the netdev's
// speed and carrier, ethtool/<netdev>/link) and put them back at their end; the link file has
// the text `ethtool <netdev>` prints (goldens, and the shape of the real captures in
// ../shared/fixtures/external/ethtool-i); the HDR preset is healthy at HDR.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "tests/testing/temp_dir.h"
#include "tests/testing/test_paths.h"
#include "tests/unit/sim/sim_testing.h"
#include "tools/fabricsim/simulator.h"

namespace fabricwatch::sim {
namespace {

namespace fs = std::filesystem;
using fabricwatch::testing::TempDir;
using simtest::CollectAll;
using simtest::MakeSim;
using simtest::Quiet;
using simtest::Samples;
using ::testing::HasSubstr;
using ::testing::Not;

// A file's text, or "<absent>".
std::string Read(const std::string& path) {
  if (!fs::exists(path)) return "<absent>";
  return testing::ReadTextFile(path);
}

// Every file that shows a port's shape, keyed "<netdev> <file>", for every port of the node.
using Shape = std::map<std::string, std::string>;

Shape ShapeOf(const Simulator& sim) {
  Shape out;
  const std::string sys = sim.sysfs_root();
  for (const Port& p : sim.node().ports) {
    const std::string dev = sys + "/class/infiniband/" + p.rdma_device;
    for (const char* f : {"rate", "state", "phys_state", "lid", "sm_lid"}) {
      out[p.netdev + " " + f] = Read(dev + "/ports/1/" + f);
    }
    out[p.netdev + " fw_ver"] = Read(dev + "/fw_ver");
    for (const char* f : {"speed", "duplex", "carrier", "operstate", "ifindex"}) {
      out[p.netdev + " " + f] = Read(sys + "/class/net/" + p.netdev + "/" + f);
    }
    out[p.netdev + " link"] = Read(sim.ethtool_root() + "/" + p.netdev + "/link");
  }
  return out;
}

// The entries of `now` that differ from `before`, as "<netdev> <file>" -> new text.
Shape Changed(const Shape& before, const Shape& now) {
  Shape out;
  for (const auto& [key, text] : now) {
    if (before.at(key) != text) out[key] = text;
  }
  return out;
}

std::set<std::string> Keys(const Shape& s) {
  std::set<std::string> out;
  for (const auto& [k, v] : s) out.insert(k);
  return out;
}

std::set<std::string> KeysOf(const std::string& netdev, std::initializer_list<const char*> files) {
  std::set<std::string> out;
  for (const char* f : files) out.insert(netdev + " " + f);
  return out;
}

// The "\tKey: value" lines of an `ethtool <netdev>` text (continuation lines skipped).
std::map<std::string, std::string> LinkFields(const std::string& text) {
  std::map<std::string, std::string> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.starts_with("\t") || line.starts_with("\t ") || line.starts_with("\t\t")) continue;
    const size_t colon = line.find(": ");
    if (colon == std::string::npos) continue;
    out[line.substr(1, colon - 1)] = line.substr(colon + 2);
  }
  return out;
}

std::string LinkFile(const Simulator& sim, const std::string& netdev) {
  return Read(sim.ethtool_root() + "/" + netdev + "/link");
}

// ---------------------------------------------------------------- the link file

TEST(SimLinkFileTest, matches_the_goldens_up_and_down) {
  TempDir dir;
  auto roce = MakeSim("hgx-roce", R"(
duration: 5m
events:
  - {at: 10s, fault: link_down, device: mlx5_1, duration: 60s}
)",
                      dir.Path("roce"));
  ASSERT_TRUE(roce->AdvanceTo(20));
  const Node& n = roce->node();
  testing::ExpectGolden(LinkFile(*roce, n.ports[0].netdev), "fabricsim/link_cx7_400g_roce.txt");
  testing::ExpectGolden(LinkFile(*roce, n.ports[1].netdev),
                        "fabricsim/link_cx7_400g_roce_down.txt");
  auto ib = MakeSim("hgx-ib", R"(
duration: 5m
events:
  - {at: 10s, fault: link_down, device: mlx5_1, duration: 60s}
)",
                    dir.Path("ib"));
  ASSERT_TRUE(ib->AdvanceTo(20));
  testing::ExpectGolden(LinkFile(*ib, ib->node().ports[0].netdev), "fabricsim/link_ipoib_ndr.txt");
  testing::ExpectGolden(LinkFile(*ib, ib->node().ports[1].netdev),
                        "fabricsim/link_ipoib_ndr_down.txt");
}

TEST(SimLinkFileTest, each_card_lists_the_modes_of_its_cage_and_serdes) {
  TempDir dir;
  auto small = MakeSim("roce-small", Quiet(), dir.str());
  const Node& n = small->node();
  // ConnectX-6 Dx, QSFP28 100G: up to 50G lanes, no 200G or 400G.
  const std::string dx = LinkFile(*small, n.ports[0].netdev);
  EXPECT_THAT(dx, HasSubstr("\tSupported link modes:   1000baseKX/Full\n"
                            "\t                        10000baseKR/Full\n"));
  EXPECT_THAT(dx, HasSubstr("100000baseCR4/Full\n"));
  EXPECT_THAT(dx, HasSubstr("100000baseCR2/Full\n"));
  EXPECT_THAT(dx, Not(HasSubstr("200000base")));
  EXPECT_EQ(LinkFields(dx)["Speed"], "100000Mb/s");
  EXPECT_EQ(LinkFields(dx)["Lanes"], "4");
  // ConnectX-6 Lx, SFP28 25G: one lane, NRZ.
  const std::string lx = LinkFile(*small, n.ports[2].netdev);
  EXPECT_THAT(lx, HasSubstr("25000baseSR/Full\n"));
  EXPECT_THAT(lx, Not(HasSubstr("40000base")));
  EXPECT_THAT(lx, Not(HasSubstr("50000base")));
  EXPECT_THAT(lx, HasSubstr("\tSupported FEC modes: None\t RS\t BASER\n"));
  EXPECT_EQ(LinkFields(lx)["Speed"], "25000Mb/s");
  EXPECT_EQ(LinkFields(lx)["Lanes"], "1");
  // Every listed mode is a real kernel name: <speed>base<media>/Full.
  const std::regex mode(
      "^\t(Supported link modes:   |Advertised link modes:  |\\s{24})"
      "[0-9]+base[A-Z0-9_]+/Full$");
  std::istringstream in(dx);
  for (std::string line; std::getline(in, line);) {
    if (line.find("base") == std::string::npos) continue;
    EXPECT_TRUE(std::regex_match(line, mode)) << line;
  }
}

// The keys and the continuation indent of our text are those of real `ethtool IFACE` captures.
TEST(SimLinkFileTest, has_the_shape_of_real_ethtool_captures) {
  const fs::path dir = testing::SourcePath("../shared/fixtures/external/ethtool-i");
  if (!fs::exists(dir)) GTEST_SKIP() << "external corpus not present at " << dir;
  std::set<std::string> real_keys;
  std::set<std::string> continuation_indents;
  for (const auto& entry : fs::directory_iterator(dir)) {
    std::istringstream in(testing::ReadTextFile(entry.path().string()));
    bool settings = false;
    for (std::string line; std::getline(in, line);) {
      if (line.starts_with("Settings for ")) settings = true;
      if (!settings || line.empty() || line.starts_with("#")) continue;
      for (const auto& [key, value] : LinkFields(line + "\n")) real_keys.insert(key);
      if (line.starts_with("\t ")) {
        continuation_indents.insert(line.substr(0, line.find_first_not_of("\t ")));
      }
    }
  }
  ASSERT_FALSE(real_keys.empty());
  EXPECT_TRUE(continuation_indents.contains("\t" + std::string(24, ' ')));
  TempDir tmp;
  auto sim = MakeSim("roce-small", Quiet(), tmp.Path("roce"));
  auto ib = MakeSim("hgx-ib", Quiet(), tmp.Path("ib"));
  for (const std::string& text :
       {LinkFile(*sim, sim->node().ports[0].netdev), LinkFile(*ib, ib->node().ports[0].netdev)}) {
    EXPECT_TRUE(text.starts_with("Settings for "));
    for (const auto& [key, value] : LinkFields(text)) {
      // Lanes is newer than the captures (ethtool 5.13, kernel 5.10).
      EXPECT_TRUE(key == "Lanes" || real_keys.contains(key)) << key;
    }
  }
}

TEST(SimLinkFileTest, is_rewritten_in_place_when_the_speed_changes) {
  TempDir dir;
  auto sim = MakeSim("hgx-roce", R"(
duration: 5m
events:
  - {at: 10s, fault: eth_speed_downgrade, device: mlx5_0, duration: 60s}
)",
                     dir.str());
  const std::string path = sim->ethtool_root() + "/" + sim->node().ports[0].netdev + "/link";
  struct stat before {};
  ASSERT_EQ(::stat(path.c_str(), &before), 0);
  ASSERT_TRUE(sim->AdvanceTo(10));
  struct stat after {};
  ASSERT_EQ(::stat(path.c_str(), &after), 0);
  EXPECT_EQ(before.st_ino, after.st_ino);
  EXPECT_EQ(LinkFields(Read(path))["Speed"], "200000Mb/s");
}

// ---------------------------------------------------------------- the faults

struct ShapeRun {
  std::unique_ptr<Simulator> sim;
  Shape healthy;
};

// A 5 min scenario of the given events ("{at: 10s, fault: ..}" each) on `preset`.
ShapeRun StartRun(const TempDir& dir, const std::string& preset,
                  std::initializer_list<std::string> events) {
  std::string yaml = "duration: 5m\nevents:\n";
  for (const std::string& e : events) yaml += "  - " + e + "\n";
  ShapeRun r;
  r.sim = MakeSim(preset, yaml, dir.str());
  r.healthy = ShapeOf(*r.sim);
  return r;
}

// What differs from the healthy shape at simulated second `t`.
Shape ChangedAt(ShapeRun& r, double t) {
  EXPECT_TRUE(r.sim->AdvanceTo(t));
  return Changed(r.healthy, ShapeOf(*r.sim));
}

TEST(SimShapeFaultTest, ib_speed_downgrade_slows_the_lanes_and_recovers) {
  TempDir dir;
  auto r = StartRun(dir, "hgx-ib",
                    {"{at: 10s, fault: ib_speed_downgrade, device: mlx5_2, duration: 60s}"});
  const std::string nd = r.sim->node().ports[2].netdev;
  const Shape c = ChangedAt(r, 30);
  EXPECT_EQ(Keys(c), KeysOf(nd, {"rate", "speed", "link"}));
  EXPECT_EQ(c.at(nd + " rate"), "200 Gb/sec (4X HDR)\n");
  EXPECT_EQ(c.at(nd + " speed"), "200000\n");
  const auto fields = LinkFields(c.at(nd + " link"));
  EXPECT_EQ(fields.at("Speed"), "200000Mb/s");
  EXPECT_FALSE(fields.contains("Lanes"));  // IPoIB reports no lanes
  // Traffic runs at the new rate: half the words of a healthy sibling, within the noise.
  const uint64_t slow0 = *r.sim->PmaValue("mlx5_2", kPortRcvData);
  const uint64_t fast0 = *r.sim->PmaValue("mlx5_3", kPortRcvData);
  ASSERT_TRUE(r.sim->AdvanceTo(40));
  const double slow = *r.sim->PmaValue("mlx5_2", kPortRcvData) - slow0;
  const double fast = *r.sim->PmaValue("mlx5_3", kPortRcvData) - fast0;
  EXPECT_LT(slow, 0.75 * fast);
  EXPECT_TRUE(ChangedAt(r, 70).empty());
  EXPECT_EQ(*r.sim->PmaValue("mlx5_2", kLinkDowned), 1u);  // no link event
}

TEST(SimShapeFaultTest, ib_width_downgrade_drops_lanes_and_can_look_like_the_field) {
  TempDir dir;
  auto r =
      StartRun(dir, "hgx-ib",
               {"{at: 10s, fault: ib_width_downgrade, device: mlx5_5, duration: 60s}",
                "{at: 10s, fault: ib_width_downgrade, device: mlx5_6, width: 1, speed: DDR, "
                "phys_state: 0, duration: 60s}",
                "{at: 10s, fault: ib_width_downgrade, device: mlx5_7, width: 2, duration: 60s}"});
  const Node& n = r.sim->node();
  const std::string a = n.ports[5].netdev, b = n.ports[6].netdev, w2 = n.ports[7].netdev;
  const Shape c = ChangedAt(r, 11);
  std::set<std::string> expected = KeysOf(a, {"rate", "speed", "link"});
  expected.merge(KeysOf(b, {"rate", "phys_state", "speed", "link"}));
  expected.merge(KeysOf(w2, {"rate", "speed", "link"}));
  EXPECT_EQ(Keys(c), expected);
  EXPECT_EQ(c.at(a + " rate"), "100 Gb/sec (1X NDR)\n");
  EXPECT_EQ(c.at(a + " speed"), "100000\n");
  EXPECT_EQ(c.at(w2 + " rate"), "200 Gb/sec (2X NDR)\n");
  // The field's degraded link: 1X DDR, phys_state the kernel cannot name, still ACTIVE.
  EXPECT_EQ(c.at(b + " rate"), "5 Gb/sec (1X DDR)\n");
  EXPECT_EQ(c.at(b + " phys_state"), "0: <unknown>\n");
  EXPECT_EQ(r.healthy.at(b + " state"), "4: ACTIVE\n");
  EXPECT_EQ(c.at(b + " speed"), "5000\n");
  EXPECT_EQ(LinkFields(c.at(b + " link")).at("Speed"), "5000Mb/s");
  EXPECT_TRUE(ChangedAt(r, 70).empty());
}

TEST(SimShapeFaultTest, eth_speed_downgrade_runs_200g_on_four_lanes_and_recovers) {
  TempDir dir;
  auto r = StartRun(dir, "hgx-roce",
                    {"{at: 10s, fault: eth_speed_downgrade, device: mlx5_3, duration: 60s}"});
  const std::string nd = r.sim->node().ports[3].netdev;
  const Shape c = ChangedAt(r, 30);
  EXPECT_EQ(Keys(c), KeysOf(nd, {"rate", "speed", "link"}));
  // 200GBASE-CR4: 4 lanes of 50G PAM4, which the RoCE rate prints as 4X HDR.
  EXPECT_EQ(c.at(nd + " rate"), "200 Gb/sec (4X HDR)\n");
  EXPECT_EQ(c.at(nd + " speed"), "200000\n");
  auto fields = LinkFields(c.at(nd + " link"));
  EXPECT_EQ(fields.at("Speed"), "200000Mb/s");
  EXPECT_EQ(fields.at("Lanes"), "4");
  EXPECT_EQ(fields.at("Link detected"), "yes");
  // The supported and advertised modes do not change: the port could still do 400G.
  EXPECT_THAT(c.at(nd + " link"), HasSubstr("400000baseSR4/Full"));
  EXPECT_TRUE(ChangedAt(r, 70).empty());
  // 100G on the same lanes: CAUI-4, 4X EDR.
  TempDir dir2;
  auto r2 = StartRun(
      dir2, "hgx-roce",
      {"{at: 10s, fault: eth_speed_downgrade, device: mlx5_3, speed_gbps: 100, duration: 60s}"});
  ASSERT_TRUE(r2.sim->AdvanceTo(11));
  EXPECT_EQ(ShapeOf(*r2.sim).at(nd + " rate"), "100 Gb/sec (4X EDR)\n");
}

TEST(SimShapeFaultTest, port_stuck_init_has_link_but_no_sm_and_no_traffic) {
  TempDir dir;
  auto r =
      StartRun(dir, "hgx-ib", {"{at: 10s, fault: port_stuck_init, device: mlx5_1, duration: 60s}"});
  const std::string nd = r.sim->node().ports[1].netdev;
  const uint64_t downs = *r.sim->PmaValue("mlx5_1", kLinkDowned);
  const Shape c = ChangedAt(r, 20);
  EXPECT_EQ(Keys(c), KeysOf(nd, {"state", "lid", "sm_lid", "carrier", "operstate", "link"}));
  EXPECT_EQ(c.at(nd + " state"), "2: INIT\n");
  EXPECT_EQ(r.healthy.at(nd + " phys_state"), "5: LinkUp\n");
  EXPECT_EQ(c.at(nd + " lid"), "0x0\n");
  EXPECT_EQ(c.at(nd + " sm_lid"), "0x0\n");
  EXPECT_EQ(c.at(nd + " carrier"), "0\n");
  auto fields = LinkFields(c.at(nd + " link"));
  EXPECT_EQ(fields.at("Speed"), "400000Mb/s");  // the physical link is up
  EXPECT_EQ(fields.at("Link detected"), "no");
  const uint64_t words = *r.sim->PmaValue("mlx5_1", kPortRcvData);
  ASSERT_TRUE(r.sim->AdvanceTo(30));
  EXPECT_EQ(*r.sim->PmaValue("mlx5_1", kPortRcvData), words);
  EXPECT_EQ(*r.sim->PmaValue("mlx5_1", kLinkDowned), downs);  // not a link down
  EXPECT_TRUE(ChangedAt(r, 70).empty());
  EXPECT_GT(*r.sim->PmaValue("mlx5_1", kPortRcvData), words);
}

TEST(SimShapeFaultTest, hca_missing_takes_every_function_of_the_card_and_reseats_it) {
  TempDir dir;
  // roce-small: card 0 is a dual-port ConnectX-6 Dx (mlx5_0, mlx5_1), card 1 mlx5_2.
  auto r =
      StartRun(dir, "roce-small", {"{at: 10s, fault: hca_missing, device: mlx5_1, duration: 60s}"});
  const Node& n = r.sim->node();
  const std::string sys = r.sim->sysfs_root();
  const uint64_t rx_before = *r.sim->NetdevStat(n.ports[0].netdev, kRxBytes);
  ASSERT_TRUE(r.sim->AdvanceTo(20));
  for (int i : {0, 1}) {
    const Port& p = n.ports[i];
    SCOPED_TRACE(p.netdev);
    EXPECT_FALSE(fs::exists(sys + "/class/net/" + p.netdev));
    EXPECT_FALSE(fs::exists(sys + "/class/infiniband/" + p.rdma_device));
    EXPECT_FALSE(fs::exists(sys + "/bus/pci/devices/" + n.functions[p.pci].bdf));
    EXPECT_FALSE(fs::exists(sys + "/devices/" + n.functions[p.pci].path));
    EXPECT_FALSE(fs::exists(r.sim->ethtool_root() + "/" + p.netdev));
    EXPECT_FALSE(r.sim->Present(p.netdev));
  }
  EXPECT_TRUE(r.sim->Present(n.ports[2].netdev));
  const Shape c = Changed(r.healthy, ShapeOf(*r.sim));
  for (const auto& [key, text] : c) {
    EXPECT_EQ(text, "<absent>") << key;
    EXPECT_FALSE(key.starts_with(n.ports[2].netdev)) << key;
  }
  Samples s = CollectAll(*r.sim);
  EXPECT_EQ(s.errors, 0u) << s.error_text;
  const Shape back = ChangedAt(r, 75);
  // Reseated: the same shape, a new ifindex, counters from 0.
  EXPECT_EQ(Keys(back), (std::set<std::string>{n.ports[0].netdev + " ifindex",
                                               n.ports[1].netdev + " ifindex"}));
  EXPECT_LT(*r.sim->NetdevStat(n.ports[0].netdev, kRxBytes), rx_before);
  s = CollectAll(*r.sim);
  EXPECT_EQ(s.errors, 0u) << s.error_text;
}

TEST(SimShapeFaultTest, fw_mismatch_changes_the_cards_firmware_and_reverts) {
  TempDir dir;
  auto r =
      StartRun(dir, "roce-small", {"{at: 10s, fault: fw_mismatch, device: mlx5_0, duration: 60s}"});
  const Node& n = r.sim->node();
  const Shape c = ChangedAt(r, 11);
  EXPECT_EQ(Keys(c),
            (std::set<std::string>{n.ports[0].netdev + " fw_ver", n.ports[1].netdev + " fw_ver"}));
  EXPECT_EQ(r.healthy.at(n.ports[0].netdev + " fw_ver"), "22.36.1010\n");
  EXPECT_EQ(c.at(n.ports[1].netdev + " fw_ver"), "22.35.1010\n");
  EXPECT_TRUE(ChangedAt(r, 70).empty());
  TempDir dir2;
  auto ib = StartRun(
      dir2, "hgx-ib",
      {"{at: 10s, fault: fw_mismatch, device: mlx5_3, fw_ver: 28.40.1000, duration: 60s}"});
  const Shape c2 = ChangedAt(ib, 11);
  const std::string nd = ib.sim->node().ports[3].netdev;
  EXPECT_EQ(Keys(c2), KeysOf(nd, {"fw_ver"}));
  EXPECT_EQ(c2.at(nd + " fw_ver"), "28.40.1000\n");
}

TEST(SimShapeFaultTest, link_retrain_goes_down_then_through_a_lower_rate) {
  TempDir dir;
  auto ib = StartRun(dir, "hgx-ib", {"{at: 10s, fault: link_retrain, device: mlx5_7}"});
  const std::string nd = ib.sim->node().ports[7].netdev;
  auto in = ib.sim->AdvanceTo(10);
  ASSERT_TRUE(in);
  ASSERT_EQ(in->size(), 1u);
  Shape s = ShapeOf(*ib.sim);
  EXPECT_EQ(s.at(nd + " state"), "1: DOWN\n");
  EXPECT_EQ(s.at(nd + " phys_state"), "2: Polling\n");
  EXPECT_EQ(s.at(nd + " rate"), "10 Gb/sec (4X SDR)\n");  // an IB port without a link
  EXPECT_EQ(s.at(nd + " speed"), "-1\n");
  EXPECT_EQ(LinkFields(s.at(nd + " link")).at("Speed"), "Unknown!");
  for (int t : {11, 13}) {
    ASSERT_TRUE(ib.sim->AdvanceTo(t));
    s = ShapeOf(*ib.sim);
    EXPECT_EQ(s.at(nd + " state"), "4: ACTIVE\n") << t;
    EXPECT_EQ(s.at(nd + " rate"), "100 Gb/sec (1X NDR)\n") << t;
  }
  in = ib.sim->AdvanceTo(14);
  ASSERT_TRUE(in);
  ASSERT_EQ(in->size(), 1u);
  EXPECT_EQ((*in)[0].event, "end");
  EXPECT_EQ(Changed(ib.healthy, ShapeOf(*ib.sim)), Shape{});
  // RoCE: down at 4X QDR (what mlx5 prints without a link), then 200G on 4 lanes.
  TempDir dir2;
  auto roce = StartRun(dir2, "hgx-roce",
                       {"{at: 10s, fault: link_retrain, device: mlx5_0, down: 2, degraded: 2s}"});
  const std::string rd = roce.sim->node().ports[0].netdev;
  ASSERT_TRUE(roce.sim->AdvanceTo(11));
  s = ShapeOf(*roce.sim);
  EXPECT_EQ(s.at(rd + " rate"), "40 Gb/sec (4X QDR)\n");
  auto fields = LinkFields(s.at(rd + " link"));
  EXPECT_EQ(fields.at("Speed"), "Unknown!");
  EXPECT_EQ(fields.at("Duplex"), "Unknown! (255)");
  EXPECT_FALSE(fields.contains("Lanes"));
  EXPECT_EQ(fields.at("Link detected"), "no");
  ASSERT_TRUE(roce.sim->AdvanceTo(12));
  fields = LinkFields(ShapeOf(*roce.sim).at(rd + " link"));
  EXPECT_EQ(fields.at("Speed"), "200000Mb/s");
  EXPECT_EQ(fields.at("Lanes"), "4");
  EXPECT_TRUE(ChangedAt(roce, 14).empty());
}

TEST(SimShapeFaultTest, scenario_errors_name_the_port_and_the_parameter) {
  auto error = [](const std::string& preset, const std::string& event) {
    auto scenario = ParseScenario("duration: 5m\nevents:\n  - " + event + "\n", "bad.yaml");
    if (!scenario) return scenario.error().message();
    TempDir dir;
    auto sim = Simulator::Create(*BuildPreset(preset), std::move(*scenario), dir.str());
    return sim ? std::string("ok") : sim.error().message();
  };
  EXPECT_THAT(error("hgx-roce", "{at: 5s, fault: ib_speed_downgrade, device: mlx5_0}"),
              HasSubstr("bad.yaml:3: ib_speed_downgrade needs an InfiniBand port"));
  EXPECT_THAT(error("hgx-roce", "{at: 5s, fault: port_stuck_init, device: mlx5_0}"),
              HasSubstr("needs an InfiniBand port"));
  EXPECT_THAT(error("hgx-ib", "{at: 5s, fault: eth_speed_downgrade, device: mlx5_0}"),
              HasSubstr("needs an Ethernet (RoCE) port"));
  EXPECT_THAT(error("hgx-ib", "{at: 5s, fault: ib_speed_downgrade, device: mlx5_0, speed: QQR}"),
              HasSubstr("unknown lane speed \"QQR\""));
  EXPECT_THAT(error("hgx-ib", "{at: 5s, fault: ib_speed_downgrade, device: mlx5_0, speed: XDR}"),
              HasSubstr("not slower than"));
  EXPECT_THAT(error("hgx-ib", "{at: 5s, fault: ib_width_downgrade, device: mlx5_0, width: 4}"),
              HasSubstr("width: expected an integer between 1 and 2, got \"4\""));
  EXPECT_THAT(
      error("hgx-roce", "{at: 5s, fault: eth_speed_downgrade, device: mlx5_0, speed_gbps: 300}"),
      HasSubstr("speed_gbps 300"));
  EXPECT_THAT(
      error("hgx-roce", "{at: 5s, fault: eth_speed_downgrade, device: mlx5_0, speed_gbps: 400}"),
      HasSubstr("no Ethernet mode below 400G"));
  EXPECT_THAT(error("hgx-ib", "{at: 5s, fault: fw_mismatch, device: mlx5_0, fw_ver: new}"),
              HasSubstr("fw_ver: expected major.minor.subminor"));
  EXPECT_EQ(error("hgx-ib", "{at: 5s, fault: link_retrain, device: mlx5_0, speed: HDR, width: 2}"),
            "ok");
}

// ---------------------------------------------------------------- the HDR preset

TEST(SimShapePresetTest, hgx_ib_hdr_is_connectx7_at_hdr_on_every_port) {
  TempDir dir;
  auto sim = MakeSim("hgx-ib-hdr", Quiet(), dir.str());
  const Shape s = ShapeOf(*sim);
  ASSERT_EQ(sim->node().ports.size(), 8u);
  for (const Port& p : sim->node().ports) {
    SCOPED_TRACE(p.netdev);
    EXPECT_EQ(p.part, "MT4129");  // ConnectX-7
    EXPECT_EQ(s.at(p.netdev + " rate"), "200 Gb/sec (4X HDR)\n");
    EXPECT_EQ(s.at(p.netdev + " state"), "4: ACTIVE\n");
    EXPECT_EQ(s.at(p.netdev + " fw_ver"), "28.39.1002\n");
    EXPECT_EQ(s.at(p.netdev + " speed"), "200000\n");
  }
  const Samples samples = CollectAll(*sim);
  EXPECT_EQ(samples.errors, 0u) << samples.error_text;
}

}  // namespace
}  // namespace fabricwatch::sim
