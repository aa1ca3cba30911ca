// Pure parsers and the nvidia-smi topo -m classification of the `topology` collector.

#include "collectors/topology/topology_parse.h"

#include <gtest/gtest.h>

namespace fabricwatch::topology {
namespace {

TEST(ParseLinkSpeedTest, kernel_formats) {
  struct Case {
    const char* text;
    std::optional<double> want;
  };
  const Case cases[] = {
      {"2.5 GT/s PCIe\n", 2.5e9},   {"5.0 GT/s PCIe", 5e9},   {"8.0 GT/s PCIe", 8e9},
      {"16.0 GT/s PCIe", 16e9},     {"32.0 GT/s PCIe", 32e9}, {"64.0 GT/s PCIe", 64e9},
      {"8 GT/s\n", 8e9},            {"2.5 GT/s", 2.5e9},      {"Unknown\n", std::nullopt},
      {"Unknown speed", std::nullopt},
  };
  for (const Case& c : cases) {
    auto got = ParseLinkSpeed(c.text, "f");
    ASSERT_TRUE(got) << c.text << ": " << got.error().ToString();
    EXPECT_EQ(*got, c.want) << c.text;
  }
}

TEST(ParseLinkSpeedTest, rejects_garbage) {
  for (const char* text : {"", "fast", "16.0", "16.0 Gb/s", "-8 GT/s", "nan GT/s", "0 GT/s",
                           "16.0GT/s", "16.0 GT/s PCIe extra"}) {
    auto got = ParseLinkSpeed(text, "current_link_speed");
    ASSERT_FALSE(got) << text;
    EXPECT_EQ(got.error().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(got.error().ToString().find("current_link_speed"), std::string::npos);
  }
}

TEST(ParsePciHexTest, ids_and_classes) {
  EXPECT_EQ(*ParsePciHex("0x10de\n", "vendor"), 0x10deu);
  EXPECT_EQ(*ParsePciHex("0x030200", "class"), 0x030200u);
  EXPECT_EQ(*ParsePciHex("0x020700", "class"), 0x020700u);
  EXPECT_FALSE(ParsePciHex("10de", "vendor"));
  EXPECT_FALSE(ParsePciHex("0xzz", "vendor"));
  EXPECT_FALSE(ParsePciHex("0x1000000", "class"));
  EXPECT_FALSE(ParsePciHex("", "class"));
}

TEST(ParseAerStatsTest, kernel_format) {
  const char* text =
      "RxErr 0\nBadTLP 2\nBadDLLP 1\nRollover 0\nTimeout 0\nNonFatalErr 0\nCorrIntErr 0\n"
      "HeaderOF 0\nTOTAL_ERR_COR 3\n";
  auto stats = ParseAerStats(text, "aer_dev_correctable");
  ASSERT_TRUE(stats) << stats.error().ToString();
  EXPECT_EQ(stats->total, 3u);
  EXPECT_TRUE(stats->has_total_line);
  ASSERT_EQ(stats->counters.size(), 8u);
  EXPECT_EQ(stats->counters[1], (std::pair<std::string, uint64_t>{"BadTLP", 2}));
}

TEST(ParseAerStatsTest, total_is_authoritative_and_sum_is_the_fallback) {
  // The kernel's TOTAL_ERR_* counts every error reported, also those of bits without a line.
  EXPECT_EQ(ParseAerStats("DLP 1\nTOTAL_ERR_FATAL 5\n", "f")->total, 5u);
  auto no_total = ParseAerStats("DLP 1\nSDES 2\n", "f");
  ASSERT_TRUE(no_total);
  EXPECT_FALSE(no_total->has_total_line);
  EXPECT_EQ(no_total->total, 3u);
}

TEST(ParseAerStatsTest, rejects_garbage) {
  EXPECT_FALSE(ParseAerStats("", "f"));
  EXPECT_FALSE(ParseAerStats("RxErr\n", "f"));
  EXPECT_FALSE(ParseAerStats("RxErr x\nTOTAL_ERR_COR 1\n", "f"));
  EXPECT_FALSE(ParseAerStats("TOTAL_ERR_COR -1\n", "f"));
}

TEST(SplitPciPathTest, host_bridge_and_chain) {
  auto p = SplitPciPath(
      "devices/pci0000:3a/0000:3a:00.0/0000:3b:00.0/0000:3c:08.0/0000:3e:00.0");
  ASSERT_TRUE(p) << p.error().ToString();
  EXPECT_EQ(p->host_bridge, "pci0000:3a");
  EXPECT_EQ(p->chain, (std::vector<std::string>{"0000:3a:00.0", "0000:3b:00.0", "0000:3c:08.0",
                                                 "0000:3e:00.0"}));
  auto abs = SplitPciPath("/sys/devices/pci0000:00/0000:00:1f.6/");
  ASSERT_TRUE(abs);
  EXPECT_EQ(abs->host_bridge, "pci0000:00");
  EXPECT_EQ(abs->chain, (std::vector<std::string>{"0000:00:1f.6"}));
  // Intel VMD: the VMD domain is its own root bus below an endpoint of pci0000:00.
  auto vmd = SplitPciPath("devices/pci0000:00/0000:00:0e.0/pci10000:e0/10000:e0:06.0/10000:e1:00.0");
  ASSERT_TRUE(vmd) << vmd.error().ToString();
  EXPECT_EQ(vmd->host_bridge, "pci10000:e0");
  EXPECT_EQ(vmd->chain.size(), 2u);
  // Hyper-V: the host bridge hangs below VMBus.
  auto hv = SplitPciPath(
      "devices/LNXSYSTM:00/LNXSYBUS:00/ACPI0004:00/VMBUS:00/47505500-0001-0000-3130-444531454238/"
      "pci0001:00/0001:00:00.0");
  ASSERT_TRUE(hv);
  EXPECT_EQ(hv->host_bridge, "pci0001:00");
}

TEST(SplitPciPathTest, rejects_non_pci_paths) {
  EXPECT_FALSE(SplitPciPath("devices/virtual/net/lo"));
  EXPECT_FALSE(SplitPciPath("devices/pci0000:00"));
  EXPECT_FALSE(SplitPciPath("0000:00:1f.6"));
  EXPECT_FALSE(SplitPciPath("devices/platform/0000:00:1f.6"));
  EXPECT_FALSE(SplitPciPath(""));
}

TEST(EnclosingPciFunctionTest, nearest_function_above_a_class_device) {
  EXPECT_EQ(EnclosingPciFunction("devices/pci0000:00/0000:00:03.0/virtio0/net/eth0"),
            "0000:00:03.0");
  EXPECT_EQ(EnclosingPciFunction("devices/pci0000:40/0000:40:01.1/0000:41:00.0/net/enp65s0f0"),
            "0000:41:00.0");
  EXPECT_EQ(EnclosingPciFunction("devices/virtual/net/lo"), std::nullopt);
  EXPECT_EQ(EnclosingPciFunction("devices/platform/0000:00:03.0/net/x"), std::nullopt);
}

TEST(NormalizeLinkTargetTest, folds_dot_dot_lexically) {
  EXPECT_EQ(*NormalizeLinkTarget("bus/pci/devices", "../../../devices/pci0000:00/0000:00:1f.6"),
            "devices/pci0000:00/0000:00:1f.6");
  EXPECT_EQ(*NormalizeLinkTarget("a/b", "./c/../d"), "a/b/d");
  EXPECT_EQ(*NormalizeLinkTarget("bus/pci/devices", "/sys/devices/pci0000:00/x"),
            "/sys/devices/pci0000:00/x");
  EXPECT_FALSE(NormalizeLinkTarget("bus/pci/devices", "../../../../etc"));
}

TEST(ClassifyDeviceTest, vendor_and_class) {
  EXPECT_EQ(ClassifyDevice(0x10de, 0x030200), DeviceKind::kGpu);   // H100 3D controller
  EXPECT_EQ(ClassifyDevice(0x10de, 0x030000), DeviceKind::kGpu);   // VGA-class NVIDIA board
  EXPECT_EQ(ClassifyDevice(0x1002, 0x038000), DeviceKind::kGpu);   // AMD Instinct
  EXPECT_EQ(ClassifyDevice(0x1002, 0x120000), DeviceKind::kGpu);   // processing accelerator
  EXPECT_EQ(ClassifyDevice(0x1a03, 0x030000), DeviceKind::kOther);  // ASPEED BMC VGA
  EXPECT_EQ(ClassifyDevice(0x8086, 0x030000), DeviceKind::kOther);  // integrated graphics
  EXPECT_EQ(ClassifyDevice(0x10de, 0x068000), DeviceKind::kOther);  // NVSwitch
  EXPECT_EQ(ClassifyDevice(0x10de, 0x040300), DeviceKind::kOther);  // GPU HDMI audio
  EXPECT_EQ(ClassifyDevice(0x15b3, 0x020700), DeviceKind::kNic);   // ConnectX, IB mode
  EXPECT_EQ(ClassifyDevice(0x15b3, 0x020000), DeviceKind::kNic);   // ConnectX, Ethernet
  EXPECT_EQ(ClassifyDevice(0x15b3, 0x028000), DeviceKind::kNic);   // ConnectX-3 (other)
  EXPECT_EQ(ClassifyDevice(0x1000, 0x060400), DeviceKind::kBridge);
  EXPECT_EQ(ClassifyDevice(0x8086, 0x060401), DeviceKind::kBridge);  // subtractive decode
  EXPECT_EQ(ClassifyDevice(0x8086, 0x060000), DeviceKind::kOther);   // host bridge function
}

TEST(LevelTest, names_and_nvml_distances) {
  EXPECT_EQ(LevelName(Level::kPix), "PIX");
  EXPECT_EQ(LevelName(Level::kNode), "NODE");
  EXPECT_EQ(LevelDistance(Level::kX), 0);
  EXPECT_EQ(LevelDistance(Level::kPix), 10);
  EXPECT_EQ(LevelDistance(Level::kPxb), 20);
  EXPECT_EQ(LevelDistance(Level::kPhb), 30);
  EXPECT_EQ(LevelDistance(Level::kNode), 40);
  EXPECT_EQ(LevelDistance(Level::kSys), 50);
}

Endpoint At(std::string_view path, std::optional<int> node) {
  auto split = SplitPciPath(path);
  EXPECT_TRUE(split) << path;
  return Endpoint{split ? *split : PciPath{}, node};
}

TEST(ClassifyTest, nvidia_smi_levels) {
  // Root port 3a:00.0 -> switch USP 3b:00.0 -> DSPs 3c:00.0 / 3c:08.0 / 3c:10.0.
  const std::string sw = "devices/pci0000:3a/0000:3a:00.0/0000:3b:00.0/";
  struct Case {
    const char* name;
    Endpoint a, b;
    Level want;
  };
  const Case cases[] = {
      {"same function", At(sw + "0000:3c:00.0/0000:3d:00.0", 0),
       At(sw + "0000:3c:00.0/0000:3d:00.0", 0), Level::kX},
      {"two functions of one card", At(sw + "0000:3c:00.0/0000:3d:00.0", 0),
       At(sw + "0000:3c:00.0/0000:3d:00.1", 0), Level::kPix},
      {"two DSPs of one switch", At(sw + "0000:3c:00.0/0000:3d:00.0", 0),
       At(sw + "0000:3c:08.0/0000:3e:00.0", 0), Level::kPix},
      {"two functions on one root port", At("devices/pci0000:3a/0000:3a:00.0/0000:3b:00.0", 0),
       At("devices/pci0000:3a/0000:3a:00.0/0000:3b:00.1", 0), Level::kPix},
      {"across two switch levels", At(sw + "0000:3c:00.0/0000:3d:00.0/0000:3e:00.0/0000:3f:00.0", 0),
       At(sw + "0000:3c:08.0/0000:40:00.0", 0), Level::kPxb},
      {"sibling second-level switches",
       At(sw + "0000:3c:00.0/0000:3d:00.0/0000:3e:00.0/0000:3f:00.0", 0),
       At(sw + "0000:3c:08.0/0000:41:00.0/0000:42:00.0/0000:43:00.0", 0), Level::kPxb},
      {"different root ports", At("devices/pci0000:3a/0000:3a:00.0/0000:3b:00.0", 0),
       At("devices/pci0000:3a/0000:3a:02.0/0000:3c:00.0", 0), Level::kPhb},
      {"root-complex integrated endpoint", At("devices/pci0000:00/0000:00:1f.6", 0),
       At("devices/pci0000:00/0000:00:01.0/0000:01:00.0", 0), Level::kPhb},
      {"host bridges of one node", At("devices/pci0000:3a/0000:3a:00.0/0000:3b:00.0", 0),
       At("devices/pci0000:5d/0000:5d:00.0/0000:5e:00.0", 0), Level::kNode},
      {"host bridges, no NUMA info", At("devices/pci0000:3a/0000:3a:00.0/0000:3b:00.0", {}),
       At("devices/pci0000:5d/0000:5d:00.0/0000:5e:00.0", {}), Level::kNode},
      {"across sockets", At("devices/pci0000:3a/0000:3a:00.0/0000:3b:00.0", 0),
       At("devices/pci0000:d7/0000:d7:00.0/0000:d8:00.0", 1), Level::kSys},
      {"one node unknown", At("devices/pci0000:3a/0000:3a:00.0/0000:3b:00.0", 0),
       At("devices/pci0000:d7/0000:d7:00.0/0000:d8:00.0", {}), Level::kSys},
      // Within one host bridge the NUMA node does not matter (it is the same root complex).
      {"same host bridge ignores numa", At("devices/pci0000:3a/0000:3a:00.0/0000:3b:00.0", 0),
       At("devices/pci0000:3a/0000:3a:02.0/0000:3c:00.0", {}), Level::kPhb},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(LevelName(Classify(c.a, c.b)), LevelName(c.want)) << c.name;
    EXPECT_EQ(LevelName(Classify(c.b, c.a)), LevelName(c.want)) << c.name << " (swapped)";
  }
}

TEST(HexIdTest, pads) {
  EXPECT_EQ(HexId(0x10de, 4), "0x10de");
  EXPECT_EQ(HexId(0x30200, 6), "0x030200");
}

}  // namespace
}  // namespace fabricwatch::topology
