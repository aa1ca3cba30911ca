// `lldpctl -f keyvalue` parser (collectors/peer/lldp_keyvalue.h): lldpd 1.0.16's own output
// (captured on a veth pair in two network namespaces), a switch neighbour on a VLAN netdev whose
// name holds a '.', two neighbours on one port, the older chassis TTL, and bad input.

#include "collectors/peer/lldp_keyvalue.h"

#include <gtest/gtest.h>

#include <optional>
#include <vector>

#include "tests/testing/test_paths.h"

namespace fabricwatch::peer {
namespace {

// `lldpctl -u b.sock -f keyvalue fwl-b`, lldpd 1.0.16, the peer configured with
// `configure system hostname leaf07`, `configure lldp portidsubtype ifname`,
// `configure ports fwl-a lldp portdescription "uplink to node3"`, tx-interval 1.
constexpr std::string_view kLldpdOutput = R"(lldp.fwl-b.via=LLDP
lldp.fwl-b.rid=1
lldp.fwl-b.age=0 day, 00:00:03
lldp.fwl-b.chassis.mac=ee:f4:11:85:c3:66
lldp.fwl-b.chassis.name=leaf07
lldp.fwl-b.chassis.descr=leaf07 test switch
lldp.fwl-b.chassis.mgmt-ip=192.0.2.1
lldp.fwl-b.chassis.mgmt-iface=22
lldp.fwl-b.chassis.Bridge.enabled=off
lldp.fwl-b.chassis.Router.enabled=off
lldp.fwl-b.chassis.Wlan.enabled=off
lldp.fwl-b.chassis.Station.enabled=on
lldp.fwl-b.port.ifname=fwl-a
lldp.fwl-b.port.descr=uplink to node3
lldp.fwl-b.port.ttl=4
lldp.fwl-b.port.auto-negotiation.supported=no
lldp.fwl-b.port.auto-negotiation.enabled=no
lldp.fwl-b.port.auto-negotiation.current=10GbaseT - Four-pair Category 6A or better, full duplex mode only
)";

TEST(LldpKeyValueTest, LldpdOutput) {
  auto r = ParseLldpKeyValue(kLldpdOutput);
  ASSERT_TRUE(r) << r.error().ToString();
  ASSERT_EQ(r->size(), 1u);
  const LldpNeighbor& n = r->at("fwl-b");
  EXPECT_EQ(n.chassis_id_subtype, kChassisIdMac);
  EXPECT_EQ(n.chassis_id, "ee:f4:11:85:c3:66");
  EXPECT_EQ(n.system_name, "leaf07");
  EXPECT_EQ(n.system_description, "leaf07 test switch");
  EXPECT_EQ(n.management_address.value_or(""), "192.0.2.1");
  EXPECT_EQ(n.port_id_subtype, kPortIdInterfaceName);
  EXPECT_EQ(n.port_id, "fwl-a");
  EXPECT_EQ(n.port_description, "uplink to node3");
  EXPECT_EQ(n.ttl_seconds, 4u);
}

TEST(LldpKeyValueTest, SwitchNeighboursVlanNetdevsAndOlderTtl) {
  // A SONiC leaf seen on two netdevs, one a VLAN (eth2.100), one with a MAC port id and the TTL
  // under the chassis (lldpd before 1.0), one with two neighbours (the first is kept).
  constexpr std::string_view text =
      "lldp.eth2.100.via=LLDP\n"
      "lldp.eth2.100.rid=3\n"
      "lldp.eth2.100.chassis.mac=0c:42:a1:07:00:00\n"
      "lldp.eth2.100.chassis.name=leaf07\n"
      "lldp.eth2.100.chassis.descr=SONiC Software Version: SONiC.202305 - HwSku: SN4700\n"
      "lldp.eth2.100.port.ifname=Ethernet12\n"
      "lldp.eth2.100.port.descr=node3:mlx5_2 p1\n"
      "lldp.eth2.100.port.ttl=120\n"
      "lldp.eth2.100.vlan.vlan-id=100\n"
      "lldp.eth3.via=LLDP\n"
      "lldp.eth3.chassis.local=leaf08-chassis\n"
      "lldp.eth3.chassis.ttl=121\n"
      "lldp.eth3.port.mac=0c:42:a1:08:00:0d\n"
      "lldp.eth3.port.descr=swp13\n"
      "lldp.eth4.via=LLDP\n"
      "lldp.eth4.chassis.mac=00:00:00:00:00:01\n"
      "lldp.eth4.chassis.name=first\n"
      "lldp.eth4.port.ifname=p1\n"
      "lldp.eth4.via=LLDP\n"
      "lldp.eth4.chassis.mac=00:00:00:00:00:02\n"
      "lldp.eth4.chassis.name=second\n"
      "lldp.eth4.port.ifname=p2\r\n";
  auto r = ParseLldpKeyValue(text);
  ASSERT_TRUE(r) << r.error().ToString();
  ASSERT_EQ(r->size(), 3u);
  const LldpNeighbor& vlan = r->at("eth2.100");
  EXPECT_EQ(vlan.system_name, "leaf07");
  EXPECT_EQ(vlan.port_id, "Ethernet12");
  EXPECT_EQ(vlan.ttl_seconds, 120u);
  const LldpNeighbor& old = r->at("eth3");
  EXPECT_EQ(old.chassis_id_subtype, 7);
  EXPECT_EQ(old.port_id_subtype, kPortIdMac);
  EXPECT_EQ(old.ttl_seconds, 121u);
  EXPECT_EQ(LldpPeerName(old), "leaf08-chassis");
  EXPECT_EQ(LldpPeerPort(old), "swp13");
  EXPECT_EQ(r->at("eth4").system_name, "first");
  EXPECT_EQ(r->at("eth4").port_id, "p1");
  EXPECT_FALSE(r->at("eth4").management_address.has_value());
}

TEST(LldpKeyValueTest, EmptyOutputIsNoNeighbour) {
  auto r = ParseLldpKeyValue("");
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->empty());
  EXPECT_TRUE(ParseLldpKeyValue("\n\n")->empty());
}

TEST(LldpKeyValueTest, SubtypeNames) {
  EXPECT_EQ(LldpChassisSubtypeOfName("mac"), 4);
  EXPECT_EQ(LldpChassisSubtypeOfName("ip"), 5);
  EXPECT_EQ(LldpChassisSubtypeOfName("ifname"), 6);
  EXPECT_EQ(LldpChassisSubtypeOfName("unhandled"), 0);
  EXPECT_EQ(LldpPortSubtypeOfName("ifname"), 5);
  EXPECT_EQ(LldpPortSubtypeOfName("ifalias"), 1);
  EXPECT_EQ(LldpPortSubtypeOfName("local"), 7);
}

TEST(LldpKeyValueTest, BadBlocksAreSkippedWithAReasonAndTheLine) {
  // Each case: a bad block of netdev `e`, then a good neighbour on `g` that must survive it.
  const std::string good = "lldp.g.chassis.mac=aa\nlldp.g.port.ifname=p\n";
  const std::string ok_port = "lldp.e.port.ifname=p\n";
  struct Case {
    std::string text;
    std::string netdev;
    std::string_view reason;
    std::string why;
  };
  const Case cases[] = {
      {"no key at all\n", "", "malformed", "line 1: not a lldp."},
      {"lldp.e.nosuchsection=1\n", "", "malformed", "line 1: key is not lldp."},
      {"lldp.e.chassis.mac=aa\nlldp.e.port.ifna\n", "e", "malformed", "line 2: no '='"},
      {"lldp.e.chassis.name=leaf\xc3\x28\n" + ok_port, "e", "invalid_utf8", "line 1: not valid"},
      {"lldp.e.chassis.descr=" + std::string(256, 'x') + "\n" + ok_port, "e", "too_long",
       "over 255"},
      {"lldp.e.chassis.descr=" + std::string(200, 'x') + "\n" + std::string(60, 'y') + "\n" +
           ok_port,
       "e", "too_long", "line 1: value over 255"},
      {"lldp.e.chassis.mac=aa\nlldp.e.port.ifname=p\nlldp.e.port.ttl=12x\n", "e", "bad_ttl",
       "line 3: TTL"},
      {"lldp.e.chassis.mac=aa\nlldp.e.port.ttl=70000\n" + ok_port, "e", "bad_ttl", "TTL"},
      {"lldp.e.via=LLDP\nlldp.e.chassis.name=leaf\n" + ok_port, "e", "incomplete",
       "line 1: neighbour on e"},
      {"lldp.e.chassis.mac=\n" + ok_port, "e", "incomplete", "without a chassis id"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.text.substr(0, 80));
    auto r = ReadLldpKeyValue(c.text + good);
    ASSERT_TRUE(r) << r.error().ToString();
    ASSERT_EQ(r->neighbors.size(), 1u);
    EXPECT_EQ(r->neighbors.at("g").port_id, "p");
    ASSERT_EQ(r->skipped.size(), 1u);
    EXPECT_EQ(r->skipped[0].netdev, c.netdev);
    EXPECT_EQ(LldpKeyValueSkipName(r->skipped[0].reason), c.reason);
    EXPECT_EQ(r->skipped[0].status.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(r->skipped[0].status.message().find(c.why), std::string::npos)
        << r->skipped[0].status.message();
  }
  auto huge = ReadLldpKeyValue(std::string(kMaxLldpKeyValueBytes + 1, '\n'));
  ASSERT_FALSE(huge);
  EXPECT_NE(huge.error().message().find("1 MiB"), std::string::npos);
}

TEST(LldpKeyValueTest, ContinuationLinesJoinTheValueAboveWithASpace) {
  // lldpd before 0.9.2 printed a multi-line value as is: a Cisco system description over four
  // lines (the real capture is tests/fixtures/real/lldp/cisco-c2960x-multiline-descr).
  constexpr std::string_view text =
      "lldp.eno1.via=LLDP\n"
      "lldp.eno1.chassis.mac=38:20:56:67:90:80\n"
      "lldp.eno1.chassis.descr=Cisco IOS Software, C2960X Software\n"
      "Technical Support: http://www.cisco.com/techsupport\n"
      "\n"
      "Compiled Mon 16-Feb-15 08:16 by prod_rel_team\r\n"
      "lldp.eno1.port.ifname=Gi1/0/29\n";
  auto r = ReadLldpKeyValue(text);
  ASSERT_TRUE(r) << r.error().ToString();
  EXPECT_TRUE(r->skipped.empty());
  EXPECT_EQ(r->neighbors.at("eno1").system_description,
            "Cisco IOS Software, C2960X Software Technical Support: "
            "http://www.cisco.com/techsupport Compiled Mon 16-Feb-15 08:16 by prod_rel_team");
  EXPECT_EQ(r->neighbors.at("eno1").port_id, "Gi1/0/29");
}

TEST(LldpKeyValueTest, PeerPortByPortIdSubtype) {
  auto peer_port = [](std::string_view port_lines) {
    auto r = ParseLldpKeyValue("lldp.e.chassis.mac=aa\n" + std::string(port_lines));
    EXPECT_TRUE(r && r->size() == 1u);
    return r && r->size() == 1u ? std::string(LldpPeerPort(r->at("e"))) : std::string();
  };
  // Junos: the ifIndex as a locally assigned id, the name in the description.
  EXPECT_EQ(peer_port("lldp.e.port.local=512\nlldp.e.port.descr=xe-0/0/1\n"), "xe-0/0/1");
  EXPECT_EQ(peer_port("lldp.e.port.local=512\n"), "512");  // nothing better said
  // Cisco ACI: a locally assigned name is the name.
  EXPECT_EQ(peer_port("lldp.e.port.local=Eth1/39\nlldp.e.port.descr=topology/pod-1/x\n"),
            "Eth1/39");
  // An interface name or alias wins over any description.
  EXPECT_EQ(peer_port("lldp.e.port.ifname=swp46\nlldp.e.port.descr=BXVWNR2:lom2\n"), "swp46");
  EXPECT_EQ(peer_port("lldp.e.port.ifalias=uplink\nlldp.e.port.descr=Ethernet1\n"), "uplink");
  // A MAC or an unhandled subtype: the description says which port.
  EXPECT_EQ(peer_port("lldp.e.port.mac=fe:54:00:30:f8:19\nlldp.e.port.descr=vnet0\n"), "vnet0");
  EXPECT_EQ(peer_port("lldp.e.port.unhandled=x\nlldp.e.port.descr=1/1/3\n"), "1/1/3");
}

// Conformance over the real captures of tests/fixtures/real/lldp (sources and facts in
// tests/fixtures/real/SOURCES.md, section "lldp"): every neighbour as the user sees it
// (fabric_port_peer_info's peer_name, peer_port, peer_id) and every skipped block with its reason.
struct ExpectedNeighbour {
  std::string netdev, chassis_id, peer_name, peer_port;
  uint32_t ttl_seconds = 0;
  std::optional<std::string> system_description = std::nullopt;
};
struct ExpectedSkip {
  std::string netdev;
  std::string_view reason;
};
struct RealCapture {
  std::string file;
  std::vector<ExpectedNeighbour> neighbours;
  std::vector<ExpectedSkip> skipped;
};

TEST(LldpKeyValueRealCaptureTest, EveryCaptureGivesItsNeighbours) {
  const RealCapture captures[] = {
      {"cisco-c2960x-multiline-descr.kv",
       {{"eno1", "38:20:56:67:90:80", "s35-b12.dc3", "Gi1/0/29", 0,
         "Cisco IOS Software, C2960X Software (C2960X-UNIVERSALK9-M), Version 15.0(2a)EX5, "
         "RELEASE SOFTWARE (fc3) Technical Support: http://www.cisco.com/techsupport Copyright "
         "(c) 1986-2015 by Cisco Systems, Inc. Compiled Mon 16-Feb-15 08:16 by prod_rel_team"}},
       {}},
      {"juniper-qfx5100-ifindex-port.kv",
       {{"eth0", "40:a6:77:7a:72:00", "sw-filer-f06.dc42", "xe-0/0/1"},
        {"eth1", "40:a6:77:7c:fb:20", "sw-filer-f05.dc42", "xe-0/0/1"}},
       {}},
      // eno2d1's system name line was posted under eno1: eno2d1 is named by its chassis MAC.
      {"cumulus-s4100-chassis-ttl.kv",
       {{"eno1", "e4:f0:04:b6:47:32", "toto-chassis.dc42", "swp46", 120},
        {"eno2d1", "e4:f0:04:b6:4e:32", "e4:f0:04:b6:4e:32", "swp46", 120}},
       {}},
      {"dedibox-ifname-no-descr.kv",
       {{"enp1s0f0", "00:07:cb:0b:6c:d7", "s120-f3-2.itx4", "RJ-9", 120}},
       {}},
      {"vlan-only-fragments.kv", {}, {{"eth0", "incomplete"}, {"eth1", "incomplete"}}},
  };
  for (const RealCapture& capture : captures) {
    SCOPED_TRACE(capture.file);
    const std::string text = fabricwatch::testing::ReadTextFile(
        fabricwatch::testing::FixturePath("real/lldp/" + capture.file));
    ASSERT_FALSE(text.empty());
    auto r = ReadLldpKeyValue(text);
    ASSERT_TRUE(r) << r.error().ToString();
    ASSERT_EQ(r->neighbors.size(), capture.neighbours.size());
    for (const ExpectedNeighbour& want : capture.neighbours) {
      SCOPED_TRACE(want.netdev);
      ASSERT_TRUE(r->neighbors.contains(want.netdev));
      const LldpNeighbor& n = r->neighbors.at(want.netdev);
      EXPECT_EQ(n.chassis_id, want.chassis_id);
      EXPECT_EQ(LldpPeerName(n), want.peer_name);
      EXPECT_EQ(LldpPeerPort(n), want.peer_port);
      EXPECT_EQ(n.ttl_seconds, want.ttl_seconds);
      if (want.system_description) EXPECT_EQ(n.system_description, *want.system_description);
    }
    ASSERT_EQ(r->skipped.size(), capture.skipped.size());
    for (size_t i = 0; i < capture.skipped.size(); ++i) {
      EXPECT_EQ(r->skipped[i].netdev, capture.skipped[i].netdev);
      EXPECT_EQ(LldpKeyValueSkipName(r->skipped[i].reason), capture.skipped[i].reason);
    }
  }
}

TEST(LldpKeyValueRealCaptureTest, TheCapturesTogetherKeepEveryGoodNeighbour) {
  // All captures in one file (as `lldpctl -f keyvalue` of a node with many ports would be, the
  // netdevs renamed apart): the two incomplete fragments cost nothing else.
  std::string all;
  int index = 0;
  for (const char* file : {"vlan-only-fragments.kv", "cisco-c2960x-multiline-descr.kv",
                           "juniper-qfx5100-ifindex-port.kv", "cumulus-s4100-chassis-ttl.kv",
                           "dedibox-ifname-no-descr.kv"}) {
    std::string text = fabricwatch::testing::ReadTextFile(
        fabricwatch::testing::FixturePath(std::string("real/lldp/") + file));
    const std::string prefix = "lldp.c" + std::to_string(index++) + "-";
    for (size_t at = text.find("lldp."); at != std::string::npos; at = text.find("lldp.", at + 1)) {
      if (at == 0 || text[at - 1] == '\n') text.replace(at, 5, prefix);
    }
    all += text;
  }
  auto r = ReadLldpKeyValue(all);
  ASSERT_TRUE(r) << r.error().ToString();
  EXPECT_EQ(r->neighbors.size(), 6u);
  EXPECT_EQ(r->skipped.size(), 2u);
}

}  // namespace
}  // namespace fabricwatch::peer
