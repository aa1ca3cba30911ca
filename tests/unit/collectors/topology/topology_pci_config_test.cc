// The PCI config-space parser (collectors/topology/pci_config.h) on hand-built images
// (tests/testing/pci_config_images.h): every decoded field, the 64/256/4096-byte views the
// kernel gives by privilege, and broken inputs (all ones, loops, bad pointers).

#include "collectors/topology/pci_config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "tests/testing/pci_config_images.h"

namespace fabricwatch::topology {
namespace {

using testing::AcsRegs;
using ::testing::HasSubstr;
using testing::PciConfigImage;
using testing::TypicalPciConfig;

constexpr char kWhat[] = "/sys/bus/pci/devices/0000:3b:00.0/config";

// ---------------------------------------------------------------- decoded fields

struct FieldCase {
  const char* name;
  uint8_t port_type, mps_supported, mps, mrrs;
  std::optional<AcsRegs> acs;
  uint32_t want_mps_supported, want_mps, want_mrrs;
  std::string_view want_port;
};

class PciConfigFieldTest : public ::testing::TestWithParam<FieldCase> {};

TEST_P(PciConfigFieldTest, decodes_every_field) {
  const FieldCase& c = GetParam();
  const auto bytes = TypicalPciConfig(c.port_type, c.mps_supported, c.mps, c.mrrs, c.acs).Bytes();
  auto config = ParsePciConfig(bytes, kWhat);
  ASSERT_TRUE(config) << config.error().ToString();
  EXPECT_FALSE(config->problem) << config->problem->ToString();
  EXPECT_EQ(config->size, 4096u);
  EXPECT_EQ(config->pcie_offset, 0x60);
  ASSERT_TRUE(config->port_type);
  EXPECT_EQ(PortTypeName(*config->port_type), c.want_port);
  EXPECT_EQ(config->max_payload_supported, c.want_mps_supported);
  EXPECT_EQ(config->max_payload, c.want_mps);
  EXPECT_EQ(config->max_read_request, c.want_mrrs);
  if (c.acs) {
    EXPECT_EQ(config->acs_offset, 0x148);
    EXPECT_EQ(config->acs_capability, c.acs->capability);
    EXPECT_EQ(config->acs_control, c.acs->control);
  } else {
    EXPECT_FALSE(config->acs_offset);
    EXPECT_FALSE(config->acs_control);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Fields, PciConfigFieldTest,
    ::testing::Values(
        // ConnectX-7 as lspci shows it: DevCap MaxPayload 512, DevCtl MaxPayload 256,
        // MaxReadReq 4096.
        FieldCase{"endpoint", 0, 2, 1, 5, std::nullopt, 512, 256, 4096, "endpoint"},
        FieldCase{"all_minimum", 0, 0, 0, 0, std::nullopt, 128, 128, 128, "endpoint"},
        FieldCase{"all_maximum", 9, 5, 5, 5, std::nullopt, 4096, 4096, 4096, "rc_endpoint"},
        FieldCase{"root_port", 4, 1, 1, 2, std::nullopt, 256, 256, 512, "root_port"},
        FieldCase{"upstream_port", 5, 3, 2, 0, std::nullopt, 1024, 512, 128, "upstream_port"},
        // A PEX downstream port with ACS SV|RR|CR|UF enabled (the kernel's PCI_ACS_ISOLATED).
        FieldCase{"downstream_acs_on", 6, 2, 1, 2, AcsRegs{0x005f, 0x001d}, 512, 256, 512,
                  "downstream_port"},
        FieldCase{"downstream_acs_off", 6, 2, 1, 2, AcsRegs{0x007f, 0x0000}, 512, 256, 512,
                  "downstream_port"},
        FieldCase{"each_acs_bit", 6, 2, 1, 2, AcsRegs{0x0040, 0x0022}, 512, 256, 512,
                  "downstream_port"}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(PciConfigTest, acs_bits_follow_pci_regs_h) {
  const uint16_t want[] = {0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40};  // PCI_ACS_SV..DT
  ASSERT_EQ(std::size(kAcsBits), std::size(want));
  for (size_t i = 0; i < std::size(want); ++i) EXPECT_EQ(kAcsBits[i].mask, want[i]);
  EXPECT_EQ(kAcsBits[2].name, "request_redirect");
  EXPECT_EQ(kAcsBits[3].name, "completion_redirect");
}

// ---------------------------------------------------------------- privilege views

TEST(PciConfigTest, unprivileged_64_bytes_report_nothing_past_the_header) {
  const auto bytes = TypicalPciConfig(0, 2, 1, 5, AcsRegs{0x7f, 0x1d}).Bytes(64);
  auto config = ParsePciConfig(bytes, kWhat);
  ASSERT_TRUE(config) << config.error().ToString();
  EXPECT_FALSE(config->problem);
  EXPECT_EQ(config->size, 64u);
  EXPECT_FALSE(config->pcie_offset);
  EXPECT_FALSE(config->max_payload);
  EXPECT_FALSE(config->max_payload_supported);
  EXPECT_FALSE(config->max_read_request);
  EXPECT_FALSE(config->acs_control);
}

TEST(PciConfigTest, cardbus_128_bytes_cut_inside_the_pcie_capability) {
  // The PCIe capability at 0x78: flags and DevCap inside 128 bytes, DevCtl (0x80) past it.
  PciConfigImage image;
  image.Pcie(0x78, 0, 0, 3, 2, 2);
  auto config = ParsePciConfig(image.Bytes(128), kWhat);
  ASSERT_TRUE(config);
  EXPECT_FALSE(config->problem);
  EXPECT_EQ(config->max_payload_supported, 1024u);
  EXPECT_FALSE(config->max_payload);
  EXPECT_FALSE(config->max_read_request);
}

TEST(PciConfigTest, conventional_256_bytes_have_no_extended_space) {
  const auto bytes = TypicalPciConfig(6, 2, 1, 2, AcsRegs{0x7f, 0x1d}).Bytes(256);
  auto config = ParsePciConfig(bytes, kWhat);
  ASSERT_TRUE(config);
  EXPECT_FALSE(config->problem);
  EXPECT_EQ(config->max_payload, 256u);
  EXPECT_FALSE(config->acs_offset);
  EXPECT_FALSE(config->acs_control);
}

TEST(PciConfigTest, no_capability_list) {
  PciConfigImage image;    // PCI_STATUS_CAP_LIST clear: a conventional PCI function
  image.Put8(0x34, 0x40);  // a stale pointer is ignored without the status bit
  auto config = ParsePciConfig(image.Bytes(), kWhat);
  ASSERT_TRUE(config);
  EXPECT_FALSE(config->problem);
  EXPECT_FALSE(config->pcie_offset);
  EXPECT_FALSE(config->acs_offset);  // extended header 0: an empty list
}

TEST(PciConfigTest, unaligned_pointers_are_masked_like_the_kernel) {
  PciConfigImage image;
  image.Cap(0x40, 0x01, 0x53);  // next 0x53 -> 0x50
  image.Put8(0x34, 0x42);       // first 0x42 -> 0x40
  image.Pcie(0x50, 0, 0, 1, 1, 1);
  auto config = ParsePciConfig(image.Bytes(), kWhat);
  ASSERT_TRUE(config);
  EXPECT_FALSE(config->problem);
  EXPECT_EQ(config->pcie_offset, 0x50);
  EXPECT_EQ(config->max_read_request, 256u);
}

TEST(PciConfigTest, extended_list_walks_to_acs) {
  PciConfigImage image;
  image.Pcie(0x40, 0, 0, 2, 1, 5);
  image.ExtCap(0x100, 0x0001, 0x150).ExtCap(0x150, 0x000e, 0x2a3);  // next 0x2a3 -> 0x2a0
  image.Acs(0x2a0, 0, 0x005f, 0x0004);
  auto config = ParsePciConfig(image.Bytes(), kWhat);
  ASSERT_TRUE(config);
  EXPECT_FALSE(config->problem);
  EXPECT_EQ(config->acs_offset, 0x2a0);
  EXPECT_EQ(config->acs_control, 0x0004);
}

// ---------------------------------------------------------------- broken inputs

TEST(PciConfigTest, all_ones_is_a_gone_device) {
  for (size_t size : {64u, 256u, 4096u}) {
    const std::vector<uint8_t> bytes(size, 0xff);
    auto config = ParsePciConfig(bytes, kWhat);
    ASSERT_FALSE(config) << size;
    EXPECT_THAT(config.error().ToString(), HasSubstr(kWhat));
    EXPECT_THAT(config.error().ToString(), HasSubstr("gone"));
  }
}

TEST(PciConfigTest, shorter_than_the_header_or_longer_than_4096_is_an_error) {
  for (size_t size : {0u, 1u, 63u, 4097u}) {
    std::vector<uint8_t> bytes(size, 0);
    if (size > 0) bytes[0] = 0x86;
    auto config = ParsePciConfig(bytes, kWhat);
    ASSERT_FALSE(config) << size;
    EXPECT_THAT(config.error().ToString(), HasSubstr(kWhat));
  }
}

struct BrokenCase {
  const char* name;
  PciConfigImage image;
  const char* problem;
  bool keeps_pcie;  // the PCIe fields decoded before the break are kept
};

PciConfigImage CapabilityLoop() {
  PciConfigImage image;
  return image.Cap(0x40, 0x01, 0x50).Cap(0x50, 0x05, 0x40);
}
PciConfigImage PointerIntoHeader() {
  PciConfigImage image;
  return image.Cap(0x40, 0x01, 0x20);
}
PciConfigImage PcieRunsPastEnd() {
  PciConfigImage image;
  return image.Cap(0x40, 0x01, 0xfc).Put8(0xfc, 0x10);  // DevCap at 0x100 in a 256 space
}
PciConfigImage ExtendedLoop() {
  PciConfigImage image = TypicalPciConfig(6, 2, 1, 2);
  return image.ExtCap(0x100, 0x0001, 0x140).ExtCap(0x140, 0x0002, 0x100);
}
PciConfigImage ExtendedIntoHeader() {
  PciConfigImage image = TypicalPciConfig(6, 2, 1, 2);
  return image.ExtCap(0x100, 0x0001, 0x0c0);
}
PciConfigImage AcsRunsPastEnd() {
  PciConfigImage image = TypicalPciConfig(6, 2, 1, 2);
  return image.ExtCap(0x100, 0x0001, 0xffc).ExtCap(0xffc, 0x000d, 0);
}
PciConfigImage ReservedMps() {
  PciConfigImage image;
  return image.Pcie(0x40, 0, 0, 6, 1, 7);
}

class PciConfigBrokenTest : public ::testing::TestWithParam<BrokenCase> {};

TEST_P(PciConfigBrokenTest, stops_the_walk_names_the_device_and_keeps_what_was_decoded) {
  const BrokenCase& c = GetParam();
  const size_t size = std::string_view(c.name) == "pcie_runs_past_256" ? 256 : 4096;
  auto config = ParsePciConfig(c.image.Bytes(size), kWhat);
  ASSERT_TRUE(config) << config.error().ToString();
  ASSERT_TRUE(config->problem);
  EXPECT_THAT(config->problem->ToString(), HasSubstr(kWhat));
  EXPECT_THAT(config->problem->ToString(), HasSubstr(c.problem));
  if (c.keeps_pcie) {
    EXPECT_EQ(config->pcie_offset, 0x60);
    EXPECT_EQ(config->max_payload, 256u);
    EXPECT_EQ(config->max_read_request, 512u);
  }
  EXPECT_FALSE(config->acs_control);
}

INSTANTIATE_TEST_SUITE_P(
    Broken, PciConfigBrokenTest,
    ::testing::Values(
        BrokenCase{"capability_loop", CapabilityLoop(), "loops back to 0x040", false},
        BrokenCase{"pointer_into_header", PointerIntoHeader(), "points into the 64-byte header",
                   false},
        BrokenCase{"pcie_runs_past_256", PcieRunsPastEnd(), "runs past the end of the 256-byte",
                   false},
        BrokenCase{"extended_loop", ExtendedLoop(), "loops back to 0x100", true},
        BrokenCase{"extended_into_header", ExtendedIntoHeader(), "points below 0x100", true},
        BrokenCase{"acs_runs_past_4096", AcsRunsPastEnd(), "runs past the end of the 4096-byte",
                   true},
        BrokenCase{"reserved_size_encoding", ReservedMps(), "reserved encoding 6", false}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(PciConfigTest, reserved_encoding_leaves_only_that_field_absent) {
  PciConfigImage image;
  image.Pcie(0x40, 0, 0, 6, 1, 7);
  auto config = ParsePciConfig(image.Bytes(), kWhat);
  ASSERT_TRUE(config);
  EXPECT_FALSE(config->max_payload_supported);
  EXPECT_EQ(config->max_payload, 256u);
  EXPECT_FALSE(config->max_read_request);
}

}  // namespace
}  // namespace fabricwatch::topology
