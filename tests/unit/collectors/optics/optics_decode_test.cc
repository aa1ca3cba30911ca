// Module EEPROM decoders: hand-built images written from the spec tables (docs/reference.md §5),
// the robustness cases, and the external corpus (../shared/fixtures/external/ethtool-m).

#include <gtest/gtest.h>

#include "tests/testing/module_images.h"

#include <bit>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "collectors/optics/cmis.h"
#include "collectors/optics/module_eeprom.h"
#include "collectors/optics/sff8472.h"
#include "collectors/optics/sff8636.h"
#include "tests/testing/test_paths.h"

namespace fabricwatch::optics {
namespace {

using Bytes = std::vector<uint8_t>;
using testing::Cmis8Lane;
using testing::CmisFlatDac;
using testing::Image;
using testing::Qsfp28Paged;
using testing::QsfpFlatDac;
using testing::SfpExternal;
using testing::SfpInternal;

// ---------------------------------------------------------------- image building helpers

void ExpectRel(std::optional<double> actual, double expected, const std::string& what) {
  ASSERT_TRUE(actual.has_value()) << what << " is absent";
  EXPECT_NEAR(*actual, expected, std::abs(expected) * 1e-4 + 1e-12) << what;
}

void ExpectThresholds(const std::optional<Thresholds>& t, double ha, double la, double hw,
                      double lw, const std::string& what) {
  ASSERT_TRUE(t.has_value()) << what << " thresholds absent";
  ExpectRel(t->high_alarm, ha, what + " high alarm");
  ExpectRel(t->low_alarm, la, what + " low alarm");
  ExpectRel(t->high_warning, hw, what + " high warning");
  ExpectRel(t->low_warning, lw, what + " low warning");
}

bool HasWarning(const ModuleReading& r, StatusCode code, std::string_view needle) {
  for (const Status& s : r.warnings) {
    if (s.code() == code && s.message().find(needle) != std::string::npos) return true;
  }
  return false;
}

std::string Warnings(const ModuleReading& r) {
  std::string text;
  for (const Status& s : r.warnings) text += "\n  " + s.ToString();
  return text;
}

ModuleReading Decode(std::span<const uint8_t> image) {
  auto decoded = DecodeModuleImage(image);
  EXPECT_TRUE(decoded) << decoded.error().ToString();
  return decoded ? *decoded : ModuleReading{};
}


struct SpecCase {
  const char* name;
  std::function<Image()> build;
  ModuleType type;
  const char* part_number;
  bool ddm;
  size_t lanes;
  std::optional<double> temperature;
  std::optional<double> vcc;
  std::optional<double> lane1_bias;
  std::optional<double> lane1_tx;
  std::optional<double> lane1_rx;
  bool thresholds;
};

TEST(OpticsDecodeTest, hand_built_images_decode_per_spec_tables) {
  const SpecCase cases[] = {
      {"sfp_internal", SfpInternal, ModuleType::kSff8472, "SR-10G", true, 1, 35.5, 3.3, 7e-3,
       550e-6, 432.1e-6, true},
      // external: T = (1.5·5120 − 256)/256 = 29 °C; V = (32500 + 500)·100 µV; I = (2·2000 +
      // 100)·2 µA; Ptx = (0.5·8000 + 10)·0.1 µW; Prx = (5 + 0.5·1000 + 1e-5·1000²)·0.1 µW.
      {"sfp_external", SfpExternal, ModuleType::kSff8472, "SR-10G", true, 1, 29.0, 3.3, 8.2e-3,
       401e-6, 51.5e-6, true},
      {"qsfp28_paged_640", Qsfp28Paged, ModuleType::kSff8636, "QSFP28-SR4", true, 4, 41.25, 3.29,
       6e-3, 600e-6, 800e-6, true},
      {"qsfp_flat_dac_256", QsfpFlatDac, ModuleType::kSff8636, "DAC-40G-1M", false, 0,
       std::nullopt, std::nullopt, std::nullopt, std::nullopt, std::nullopt, false},
      {"cmis_768_8_lanes", Cmis8Lane, ModuleType::kCmis, "QDD-400G-SR8", true, 8, 52.5, 3.31,
       8e-3, 700e-6, 600e-6, true},
      {"cmis_flat_dac_256", CmisFlatDac, ModuleType::kCmis, "QDD-DAC-1M", false, 0, std::nullopt,
       std::nullopt, std::nullopt, std::nullopt, std::nullopt, false},
  };
  for (const SpecCase& c : cases) {
    SCOPED_TRACE(c.name);
    Image img = c.build();
    ModuleReading r = Decode(img);
    EXPECT_TRUE(r.warnings.empty()) << Warnings(r);
    EXPECT_EQ(r.type, c.type);
    EXPECT_EQ(r.part_number, c.part_number);
    EXPECT_EQ(r.ddm_supported, c.ddm);
    ASSERT_EQ(r.lanes.size(), c.lanes);
    EXPECT_EQ(r.temperature_celsius.has_value(), c.temperature.has_value());
    if (c.temperature) ExpectRel(r.temperature_celsius, *c.temperature, "temperature");
    EXPECT_EQ(r.supply_voltage_volts.has_value(), c.vcc.has_value());
    if (c.vcc) ExpectRel(r.supply_voltage_volts, *c.vcc, "vcc");
    if (c.lane1_bias) ExpectRel(r.lanes[0].tx_bias_amperes, *c.lane1_bias, "lane 1 bias");
    if (c.lane1_tx) ExpectRel(r.lanes[0].tx_power_watts, *c.lane1_tx, "lane 1 tx");
    if (c.lane1_rx) ExpectRel(r.lanes[0].rx_power_watts, *c.lane1_rx, "lane 1 rx");
    EXPECT_EQ(r.thresholds.temperature_celsius.has_value(), c.thresholds);
    EXPECT_EQ(r.thresholds.tx_bias_amperes.has_value(), c.thresholds);
    EXPECT_EQ(r.thresholds.rx_power_watts.has_value(), c.thresholds);
  }
}

TEST(OpticsDecodeTest, sfp_internal_identity_thresholds_and_flags) {
  ModuleReading r = Decode(SfpInternal());
  EXPECT_EQ(r.identifier, 0x03);
  EXPECT_EQ(r.identifier_name, "SFP");
  EXPECT_EQ(r.vendor, "ACME OPTICS");
  EXPECT_EQ(r.serial, "SN0001");
  EXPECT_EQ(r.revision, "A1");
  EXPECT_EQ(r.date_code, "24010100");
  EXPECT_EQ(r.connector, 0x07);
  EXPECT_EQ(ConnectorName(*r.connector), "LC");
  ASSERT_TRUE(r.vendor_oui);
  EXPECT_EQ((*r.vendor_oui)[2], 0x22);
  EXPECT_EQ(r.media, "optical");
  ExpectRel(r.wavelength_nm, 850, "wavelength");
  EXPECT_FALSE(r.externally_calibrated);
  EXPECT_EQ(r.rx_power_measurement, RxPowerMeasurement::kAverage);
  EXPECT_EQ(r.spec_revision, 0x08);
  ExpectThresholds(r.thresholds.temperature_celsius, 80, -10, 75, -5, "temperature");
  ExpectThresholds(r.thresholds.supply_voltage_volts, 3.63, 2.97, 3.465, 3.135, "vcc");
  ExpectThresholds(r.thresholds.tx_bias_amperes, 12e-3, 2e-3, 10e-3, 3e-3, "bias");
  ExpectThresholds(r.thresholds.tx_power_watts, 1e-3, 0.1e-3, 0.8e-3, 0.15e-3, "tx power");
  ExpectThresholds(r.thresholds.rx_power_watts, 1.2e-3, 0.01e-3, 1e-3, 0.02e-3, "rx power");
  ASSERT_TRUE(r.temperature_flags && r.lanes[0].tx_bias_flags && r.lanes[0].rx_power_flags);
  EXPECT_EQ(*r.temperature_flags, (Flags{false, false, true, false}));
  EXPECT_EQ(*r.lanes[0].tx_bias_flags, (Flags{true, false, false, false}));
  EXPECT_EQ(*r.lanes[0].rx_power_flags, (Flags{false, true, false, false}));
  EXPECT_EQ(r.lanes[0].rx_los, true);
  EXPECT_EQ(r.lanes[0].tx_fault, false);
}

TEST(OpticsDecodeTest, sfp_external_calibration_applies_to_thresholds_and_rx_polynomial) {
  ModuleReading r = Decode(SfpExternal());
  EXPECT_TRUE(r.externally_calibrated);
  // Thresholds go through the same calibration: 80 °C raw → (1.5·80·256 − 256)/256 = 119 °C.
  ExpectThresholds(r.thresholds.temperature_celsius, 119, -16, 111.5, -8.5, "temperature");
  ExpectThresholds(r.thresholds.tx_bias_amperes, (2 * 6000 + 100) * 2e-6,
                   (2 * 1000 + 100) * 2e-6, (2 * 5000 + 100) * 2e-6, (2 * 1500 + 100) * 2e-6,
                   "bias");
  // The polynomial, not ethtool's linear form: raw 12000 → 5 + 6000 + 1e-5·1.44e8 = 7445.
  const auto rx = [](double raw) { return (5 + 0.5 * raw + 1e-5 * raw * raw) * 1e-7; };
  ExpectThresholds(r.thresholds.rx_power_watts, rx(12000), rx(100), rx(10000), rx(200), "rx");

  Sff8472Calibration cal;  // defaults: identity
  EXPECT_DOUBLE_EQ(cal.RxPowerWatts(4321), 432.1e-6);
  EXPECT_DOUBLE_EQ(cal.TemperatureCelsius(0xFF00), -1.0);  // signed A/D value
}

TEST(OpticsDecodeTest, sfp_external_calibration_negative_result_is_dropped_with_warning) {
  Image img = SfpExternal();
  img.S16(256 + 82, -30000);  // Tx power offset drives the result below zero
  ModuleReading r = Decode(img);
  ASSERT_EQ(r.lanes.size(), 1u);
  EXPECT_FALSE(r.lanes[0].tx_power_watts.has_value());
  EXPECT_TRUE(HasWarning(r, StatusCode::kInvalidArgument, "lane 1 tx power")) << Warnings(r);
  EXPECT_TRUE(r.lanes[0].rx_power_watts.has_value());
}

TEST(OpticsDecodeTest, qsfp28_paged_lanes_flags_thresholds) {
  ModuleReading r = Decode(Qsfp28Paged());
  EXPECT_EQ(r.identifier_name, "QSFP28");
  EXPECT_FALSE(r.flat_memory);
  EXPECT_EQ(r.connector, 0x0C);
  ExpectRel(r.wavelength_nm, 850, "wavelength");
  ASSERT_EQ(r.lanes.size(), 4u);
  for (int lane = 0; lane < 4; ++lane) {
    ExpectRel(r.lanes[lane].rx_power_watts, (8000 + 100 * lane) * 1e-7, "rx");
    ExpectRel(r.lanes[lane].tx_bias_amperes, (3000 + 250 * lane) * 2e-6, "bias");
    ExpectRel(r.lanes[lane].tx_power_watts, (6000 + 10 * lane) * 1e-7, "tx");
  }
  EXPECT_EQ(r.lanes[0].rx_los, true);
  EXPECT_EQ(r.lanes[1].tx_los, true);
  EXPECT_EQ(r.lanes[3].tx_fault, true);
  EXPECT_EQ(r.lanes[0].tx_fault, false);
  EXPECT_EQ(*r.temperature_flags, (Flags{false, false, true, false}));
  EXPECT_EQ(*r.supply_voltage_flags, (Flags{false, true, false, false}));
  EXPECT_EQ(*r.lanes[1].rx_power_flags, (Flags{true, false, false, false}));
  EXPECT_EQ(*r.lanes[3].rx_power_flags, (Flags{false, false, false, true}));
  EXPECT_EQ(*r.lanes[0].tx_bias_flags, (Flags{true, false, false, false}));
  EXPECT_EQ(*r.lanes[3].tx_power_flags, (Flags{false, true, false, false}));
  ExpectThresholds(r.thresholds.temperature_celsius, 75, -5, 70, 0, "temperature");
  ExpectThresholds(r.thresholds.supply_voltage_volts, 3.6, 3.0, 3.5, 3.1, "vcc");
  ExpectThresholds(r.thresholds.tx_bias_amperes, 15e-3, 2e-3, 14e-3, 3e-3, "bias");
}

TEST(OpticsDecodeTest, qsfp_flat_memory_or_short_image_has_no_thresholds_not_zero) {
  ModuleReading flat = Decode(QsfpFlatDac());
  EXPECT_TRUE(flat.flat_memory);
  EXPECT_EQ(flat.media, "passive_copper");
  EXPECT_FALSE(flat.wavelength_nm.has_value());
  EXPECT_FALSE(flat.thresholds.temperature_celsius.has_value());
  // A paged optical module whose image stops after page 00h: monitors yes, thresholds absent
  // with a reason.
  Bytes paged = Qsfp28Paged().bytes();
  paged.resize(256);
  ModuleReading r = Decode(paged);
  EXPECT_EQ(r.lanes.size(), 4u);
  EXPECT_FALSE(r.thresholds.temperature_celsius.has_value());
  EXPECT_FALSE(r.thresholds.rx_power_watts.has_value());
  EXPECT_TRUE(HasWarning(r, StatusCode::kInvalidArgument, "page 03h")) << Warnings(r);
  // The same module declaring Flat_mem: no page 03h expected, no warning.
  paged[2] = 0x04;
  ModuleReading flat_optical = Decode(paged);
  EXPECT_TRUE(flat_optical.warnings.empty()) << Warnings(flat_optical);
  EXPECT_FALSE(flat_optical.thresholds.temperature_celsius.has_value());
  ExpectRel(flat_optical.temperature_celsius, 41.25, "temperature");
}

TEST(OpticsDecodeTest, qsfp_tx_power_absent_when_not_measured) {
  Image img = Qsfp28Paged();
  img.U8(220, 0x38);  // byte 220 bit 2 clear
  ModuleReading r = Decode(img);
  ASSERT_EQ(r.lanes.size(), 4u);
  EXPECT_FALSE(r.lanes[0].tx_power_watts.has_value());
  EXPECT_FALSE(r.thresholds.tx_power_watts.has_value());
  EXPECT_TRUE(r.lanes[0].rx_power_watts.has_value());
}

TEST(OpticsDecodeTest, cmis_lanes_thresholds_bias_multiplier_and_state) {
  ModuleReading r = Decode(Cmis8Lane());
  EXPECT_EQ(r.identifier_name, "QSFP-DD");
  EXPECT_EQ(r.spec_revision, 0x50);
  EXPECT_EQ(r.module_state, "ready");
  EXPECT_EQ(r.media, "mmf");
  EXPECT_EQ(r.vendor, "ACME");
  EXPECT_EQ(r.serial, "CMISSN01");
  EXPECT_EQ(r.revision, "01");
  EXPECT_EQ(r.connector, 0x0D);
  ExpectRel(r.wavelength_nm, 850, "wavelength");
  EXPECT_EQ(r.tx_bias_multiplier, 2);
  ASSERT_EQ(r.lanes.size(), 8u);
  for (int lane = 0; lane < 8; ++lane) {
    ExpectRel(r.lanes[lane].tx_power_watts, (7000 + lane) * 1e-7, "tx");
    ExpectRel(r.lanes[lane].tx_bias_amperes, (2000 + 10 * lane) * 2e-6 * 2, "bias ×2");
    ExpectRel(r.lanes[lane].rx_power_watts, (6000 + 100 * lane) * 1e-7, "rx");
  }
  EXPECT_EQ(r.lanes[7].tx_fault, true);
  EXPECT_EQ(r.lanes[6].tx_los, true);
  EXPECT_EQ(r.lanes[0].rx_los, true);
  EXPECT_EQ(r.lanes[1].rx_los, false);
  EXPECT_EQ(*r.lanes[1].tx_power_flags, (Flags{true, false, false, false}));  // 139 bit 1
  EXPECT_EQ(*r.lanes[2].tx_bias_flags, (Flags{false, false, false, true}));   // 146 bit 2
  EXPECT_EQ(*r.lanes[0].rx_power_flags, (Flags{false, true, false, false}));  // 150 bit 0
  EXPECT_EQ(*r.temperature_flags, (Flags{true, false, true, false}));
  ExpectThresholds(r.thresholds.temperature_celsius, 75, 0, 70, 5, "temperature");
  ExpectThresholds(r.thresholds.tx_bias_amperes, 30e-3, 2e-3, 28e-3, 4e-3, "bias ×2");
  ExpectThresholds(r.thresholds.rx_power_watts, 3.1623e-3, 25.1e-6, 2.5119e-3, 39.8e-6, "rx");

  // ×4 and ×1 multipliers; reserved 11b drops bias with a warning.
  for (auto [bits, scale] : {std::pair{0, 1}, {2, 4}}) {
    Image img = Cmis8Lane();
    img.U8(256 - 128 + 160, static_cast<uint8_t>(0x07 | bits << 3));
    ModuleReading m = Decode(img);
    ExpectRel(m.lanes[0].tx_bias_amperes, 2000 * 2e-6 * scale, "bias scaled");
  }
  Image reserved = Cmis8Lane();
  reserved.U8(256 - 128 + 160, 0x07 | 3 << 3);
  ModuleReading m = Decode(reserved);
  EXPECT_FALSE(m.lanes[0].tx_bias_amperes.has_value());
  EXPECT_FALSE(m.thresholds.tx_bias_amperes.has_value());
  EXPECT_TRUE(HasWarning(m, StatusCode::kInvalidArgument, "multiplier")) << Warnings(m);
}

TEST(OpticsDecodeTest, cmis_lane_count_from_application_1_media_lanes) {
  Image img = Cmis8Lane();
  img.U8(88, 0x84);  // 8 host lanes, 4 media lanes (400G DR4)
  EXPECT_EQ(Decode(img).lanes.size(), 4u);
  img.U8(88, 0x80);  // media lane count 0: not stated → 8
  EXPECT_EQ(Decode(img).lanes.size(), 8u);
}

TEST(OpticsDecodeTest, cmis_flat_memory_module_monitors_unless_passive_copper) {
  ModuleReading dac = Decode(CmisFlatDac());
  EXPECT_TRUE(dac.flat_memory);
  EXPECT_EQ(dac.media, "passive_copper");
  EXPECT_EQ(dac.connector, 0x23);
  EXPECT_FALSE(dac.temperature_celsius.has_value());
  // An active flat-memory cable: lower-page temperature and Vcc are read, nothing else exists.
  Image aoc = CmisFlatDac();
  aoc.U8(85, 0x04).S16(14, 40 * 256).U16(16, 33000);
  ModuleReading r = Decode(aoc);
  EXPECT_TRUE(r.warnings.empty()) << Warnings(r);
  ExpectRel(r.temperature_celsius, 40, "temperature");
  ExpectRel(r.supply_voltage_volts, 3.3, "vcc");
  EXPECT_TRUE(r.lanes.empty());
  EXPECT_FALSE(r.thresholds.temperature_celsius.has_value());
}

// ---------------------------------------------------------------- robustness

TEST(OpticsDecodeTest, identifier_dispatch_table) {
  const std::pair<uint8_t, ModuleType> cases[] = {
      {0x03, ModuleType::kSff8472}, {0x0C, ModuleType::kSff8636}, {0x0D, ModuleType::kSff8636},
      {0x11, ModuleType::kSff8636}, {0x18, ModuleType::kCmis},    {0x19, ModuleType::kCmis},
      {0x1B, ModuleType::kCmis},    {0x1E, ModuleType::kCmis},    {0x1F, ModuleType::kCmis},
      {0x20, ModuleType::kCmis},    {0x00, ModuleType::kUnknown}, {0x01, ModuleType::kUnknown},
      {0x1A, ModuleType::kUnknown}, {0x21, ModuleType::kUnknown}, {0xFF, ModuleType::kUnknown},
  };
  for (auto [id, type] : cases) EXPECT_EQ(ModuleTypeFromIdentifier(id), type) << Hex8(id);
}

TEST(OpticsDecodeTest, empty_image_is_an_error) {
  auto r = DecodeModuleImage({});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code(), StatusCode::kInvalidArgument);
}

TEST(OpticsDecodeTest, truncated_images_name_what_is_missing_and_keep_identity) {
  // SFP without A2h although DDM is advertised: identity, no monitors, a reason.
  Bytes sfp = SfpInternal().bytes();
  sfp.resize(256);
  ModuleReading r = Decode(sfp);
  EXPECT_EQ(r.part_number, "SR-10G");
  EXPECT_TRUE(r.ddm_supported);
  EXPECT_TRUE(r.lanes.empty());
  EXPECT_FALSE(r.temperature_celsius.has_value());
  EXPECT_TRUE(HasWarning(r, StatusCode::kInvalidArgument, "no A2h")) << Warnings(r);
  // A0h cut inside the serial number.
  sfp.resize(72);
  r = Decode(sfp);
  EXPECT_EQ(r.part_number, "SR-10G");
  EXPECT_EQ(r.serial, "");
  EXPECT_TRUE(HasWarning(r, StatusCode::kInvalidArgument, "A0h is 72 bytes")) << Warnings(r);
  // A2h cut before the monitors.
  sfp = SfpInternal().bytes();
  sfp.resize(256 + 90);
  r = Decode(sfp);
  EXPECT_TRUE(HasWarning(r, StatusCode::kInvalidArgument, "A2h is 90 bytes")) << Warnings(r);

  // QSFP shorter than the lower page: the identifier only.
  Bytes qsfp = Qsfp28Paged().bytes();
  qsfp.resize(40);
  r = Decode(qsfp);
  EXPECT_EQ(r.type, ModuleType::kSff8636);
  EXPECT_TRUE(r.lanes.empty());
  EXPECT_TRUE(HasWarning(r, StatusCode::kInvalidArgument, "lower page is 40 bytes"));
  // Page 00h cut after the part number.
  qsfp = Qsfp28Paged().bytes();
  qsfp.resize(190);
  r = Decode(qsfp);
  EXPECT_EQ(r.part_number, "QSFP28-SR4");
  EXPECT_EQ(r.serial, "");
  EXPECT_TRUE(HasWarning(r, StatusCode::kInvalidArgument, "bytes 128-189 only"));

  // Paged CMIS with only the lower page and page 00h: identity, no monitors or lanes.
  Bytes cmis = Cmis8Lane().bytes();
  cmis.resize(256);
  r = Decode(cmis);
  EXPECT_EQ(r.part_number, "QDD-400G-SR8");
  EXPECT_TRUE(r.lanes.empty());
  EXPECT_TRUE(HasWarning(r, StatusCode::kInvalidArgument, "page 01h")) << Warnings(r);
  // Page 11h missing: thresholds yes, lanes no.
  cmis = Cmis8Lane().bytes();
  cmis.resize(640);
  r = Decode(cmis);
  EXPECT_TRUE(r.thresholds.temperature_celsius.has_value());
  EXPECT_TRUE(r.lanes.empty());
  EXPECT_TRUE(HasWarning(r, StatusCode::kInvalidArgument, "page 11h")) << Warnings(r);
  // Bytes past the layout.
  cmis = Cmis8Lane().bytes();
  cmis.resize(900);
  r = Decode(cmis);
  EXPECT_TRUE(HasWarning(r, StatusCode::kInvalidArgument, "ignored"));
}

TEST(OpticsDecodeTest, every_prefix_of_every_image_decodes_without_crashing) {
  for (const Image& img : {SfpInternal(), SfpExternal(), Qsfp28Paged(), QsfpFlatDac(),
                           Cmis8Lane(), CmisFlatDac()}) {
    const Bytes& full = img.bytes();
    for (size_t n = 1; n <= full.size(); ++n) {
      auto r = DecodeModuleImage(std::span<const uint8_t>(full.data(), n));
      ASSERT_TRUE(r) << n;
      EXPECT_EQ(r->identifier, full[0]);
    }
  }
}

// The optics collector decodes every read of a module into the reading it kept from the last
// one (ModuleReading::Clear keeps the storage). Whatever that reading held before, another
// module, a truncated image with warnings, more lanes, longer strings, the result must be the
// fresh decode's.
TEST(OpticsDecodeTest, decoding_into_a_reused_reading_equals_a_fresh_decode) {
  ModuleReading reused;
  const std::vector<Image> images = {SfpInternal(), Cmis8Lane(),   QsfpFlatDac(), SfpExternal(),
                                     Qsfp28Paged(), CmisFlatDac(), Cmis8Lane()};
  for (const Image& img : images) {
    const Bytes& full = img.bytes();
    for (size_t n : {full.size(), size_t{1}, full.size() / 2, size_t{200}, full.size()}) {
      n = std::min(n, full.size());
      const std::span<const uint8_t> prefix(full.data(), n);
      ASSERT_TRUE(DecodeModuleImage(prefix, reused).ok()) << n;
      const ModuleReading fresh = Decode(prefix);
      EXPECT_TRUE(reused == fresh)
          << "identifier " << int{full[0]} << ", " << n << " bytes: reused reading has"
          << Warnings(reused) << "\nfresh has" << Warnings(fresh);
    }
  }
  // An unknown identifier and an empty image leave nothing of the reading before.
  const uint8_t unknown[] = {0x7f, 1, 2, 3};
  ASSERT_TRUE(DecodeModuleImage(unknown, reused).ok());
  EXPECT_TRUE(reused == Decode(unknown));
  EXPECT_FALSE(DecodeModuleImage({}, reused).ok());
  EXPECT_TRUE(reused == ModuleReading{});
}

TEST(OpticsDecodeTest, all_ff_and_all_zero_garbage_gives_unknown_or_absent) {
  for (uint8_t fill : {uint8_t{0x00}, uint8_t{0xFF}}) {
    for (size_t size : {1, 128, 256, 512, 640, 768}) {
      SCOPED_TRACE(Hex8(fill) + " × " + std::to_string(size));
      Bytes bytes(size, fill);
      ModuleReading r = Decode(bytes);
      EXPECT_EQ(r.type, ModuleType::kUnknown);
      EXPECT_EQ(r.identifier_name, "unknown");
      EXPECT_TRUE(HasWarning(r, StatusCode::kUnimplemented, Hex8(fill)));
      EXPECT_TRUE(r.lanes.empty());
      EXPECT_FALSE(r.temperature_celsius.has_value());
      // The same garbage behind a known identifier: every decoder survives it, and what it
      // reports is either absent or plausible.
      for (uint8_t id : {uint8_t{0x03}, uint8_t{0x11}, uint8_t{0x18}}) {
        bytes[0] = id;
        ModuleReading g = Decode(bytes);
        EXPECT_EQ(g.type, ModuleTypeFromIdentifier(id));
        if (g.temperature_celsius) {
          EXPECT_GE(*g.temperature_celsius, -60);
          EXPECT_LE(*g.temperature_celsius, 150);
        }
        EXPECT_FALSE(g.supply_voltage_volts.has_value() && *g.supply_voltage_volts == 0);
        for (const LaneReading& lane : g.lanes) {
          if (lane.rx_power_watts) {
            EXPECT_LE(*lane.rx_power_watts, 1.0);
          }
        }
        bytes[0] = fill;
      }
    }
  }
}

// The bnxt_en "garbage DOM" (go-ethtool-metrics bnxt_en_00 / showmax bnxten_418 decoded.txt):
// the driver returned wrong A2h bytes (0x2020 = two ASCII spaces shows up as 0.8224 mW and
// 16.448 mA). No hex was published, so the A2h here is rebuilt from the raw words ethtool's text
// implies; identity bytes from the same text.
Image BnxtGarbageDom() {
  Image img(512);
  img.U8(0, 0x03).U8(1, 0x04).U8(2, 0x07).U8(3, 0x10).U8(6, 0x40).U8(11, 0x06).U8(12, 103);
  img.Ascii(20, 16, "FS").Ascii(40, 16, "SFP-10GSR-85").Ascii(56, 4, "").U16(60, 850);
  img.Ascii(68, 16, "S2109191251").Ascii(84, 8, "210915").U8(92, 0x68).U8(93, 0x80);
  const size_t a2 = 256;
  img.Thresholds4(a2 + 0, 773, 1807, 0, 64);          // 3.02, 7.06, 0.00, 0.25 °C
  img.Thresholds4(a2 + 8, 12, 6, 26368, 0);           // 0.0012, 0.0006, 2.6368, 0 V
  img.Thresholds4(a2 + 16, 7695, 0, 18003, 8224);     // 15.390, 0, 36.006, 16.448 mA
  img.Thresholds4(a2 + 24, 8224, 8224, 8224, 8224);   // 0.8224 mW ×4
  img.Thresholds4(a2 + 32, 8224, 8224, 0, 0);         // 0.8224, 0.8224, 0, 0 mW
  img.U16(a2 + 96, 0).U16(a2 + 98, 2287).U16(a2 + 100, 49584).U16(a2 + 102, 57000);
  img.U16(a2 + 104, 27310);
  img.U8(a2 + 112, 0x59);  // temp low, Vcc low, bias high, Tx power low alarms (as printed)
  return img;
}

std::map<std::string, std::string> DecodedTextFields(const std::string& text) {
  std::map<std::string, std::string> fields;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    size_t colon = line.find(" : ");
    if (colon == std::string::npos) continue;
    auto trim = [](std::string s) {
      size_t a = s.find_first_not_of(" \t"), b = s.find_last_not_of(" \t\r");
      return a == std::string::npos ? std::string() : s.substr(a, b - a + 1);
    };
    fields.emplace(trim(line.substr(0, colon)), trim(line.substr(colon + 3)));
  }
  return fields;
}

std::string ExternalPath(std::string_view relative) {
  return testing::SourcePath("../shared/fixtures/external/" + std::string(relative));
}

TEST(OpticsDecodeTest, bnxt_garbage_dom_is_flagged_and_nonsense_omitted) {
  ModuleReading r = Decode(BnxtGarbageDom());
  EXPECT_EQ(r.vendor, "FS");
  EXPECT_EQ(r.part_number, "SFP-10GSR-85");
  EXPECT_EQ(r.serial, "S2109191251");
  // Values ethtool printed and that are not impossible on their own are kept as read.
  ExpectRel(r.lanes.at(0).tx_bias_amperes, 99.168e-3, "bias");
  ExpectRel(r.lanes[0].tx_power_watts, 5.7e-3, "tx power");
  ExpectRel(r.lanes[0].rx_power_watts, 2.731e-3, "rx power");
  // 0.2287 V cannot power a module; the threshold sets are not ordered.
  EXPECT_FALSE(r.supply_voltage_volts.has_value());
  EXPECT_TRUE(HasWarning(r, StatusCode::kInvalidArgument, "supply voltage 0.2287")) << Warnings(r);
  for (const char* what : {"temperature thresholds", "supply voltage thresholds",
                           "tx bias thresholds", "rx power thresholds"}) {
    EXPECT_TRUE(HasWarning(r, StatusCode::kInvalidArgument, what)) << what << Warnings(r);
  }
  EXPECT_FALSE(r.thresholds.temperature_celsius.has_value());
  EXPECT_FALSE(r.thresholds.supply_voltage_volts.has_value());
  EXPECT_FALSE(r.thresholds.tx_bias_amperes.has_value());
  EXPECT_FALSE(r.thresholds.rx_power_watts.has_value());
  EXPECT_EQ(*r.supply_voltage_flags, (Flags{false, true, false, false}));

  // The published decode of this module agrees with the identity and live values.
  for (const char* file : {"ethtool-m/go-ethtool-metrics_bnxt_en_00_sfp_10gsr85.decoded.txt",
                           "ethtool-m/showmax_bnxten_418_sfp_10gsr85.decoded.txt"}) {
    std::string path = ExternalPath(file);
    if (!std::filesystem::exists(path)) continue;
    auto fields = DecodedTextFields(testing::ReadTextFile(path));
    EXPECT_EQ(fields["Vendor name"], r.vendor) << file;
    EXPECT_EQ(fields["Vendor PN"], r.part_number) << file;
    EXPECT_EQ(fields["Vendor SN"], r.serial) << file;
    EXPECT_EQ(fields["Laser bias current"], "99.168 mA") << file;
    EXPECT_EQ(fields["Module voltage"], "0.2287 V") << file;
  }
}

// ---------------------------------------------------------------- external corpus

// `ethtool -m … hex on` dumps ("0x0010:\t\t03 04 …", '#' comment lines, an "Offset Values"
// header) and the qib driver's dump (lines of bare hex pairs). Offsets must be contiguous.
std::optional<Bytes> ParseHexDump(const std::string& text) {
  Bytes bytes;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::string word;
    if (!(words >> word) || word[0] == '#') continue;
    if (word.rfind("0x", 0) == 0 && word.back() == ':') {
      if (std::stoul(word.substr(2, word.size() - 3), nullptr, 16) != bytes.size()) {
        return std::nullopt;
      }
      if (!(words >> word)) continue;
    }
    bool hex_line = true;
    Bytes row;
    do {
      if (word.size() != 2 || !std::isxdigit(static_cast<unsigned char>(word[0])) ||
          !std::isxdigit(static_cast<unsigned char>(word[1]))) {
        hex_line = false;
        break;
      }
      row.push_back(static_cast<uint8_t>(std::stoul(word, nullptr, 16)));
    } while (words >> word);
    if (hex_line) bytes.insert(bytes.end(), row.begin(), row.end());
  }
  return bytes;
}

std::string RawDir() { return ExternalPath("ethtool-m/raw-eeprom"); }

Bytes LoadRaw(const std::string& name) {
  std::string path = RawDir() + "/" + name;
  auto bytes = ParseHexDump(testing::ReadTextFile(path));
  EXPECT_TRUE(bytes && !bytes->empty()) << path;
  return bytes ? *bytes : Bytes{};
}

#define SKIP_WITHOUT_CORPUS()                                                  \
  do {                                                                         \
    if (!std::filesystem::is_directory(RawDir())) {                            \
      GTEST_SKIP() << "external corpus not present at " << RawDir();           \
    }                                                                          \
  } while (0)

TEST(OpticsExternalCorpusTest, every_raw_image_decodes_with_type_matching_identifier) {
  SKIP_WITHOUT_CORPUS();
  int images = 0;
  for (const auto& entry : std::filesystem::directory_iterator(RawDir())) {
    if (entry.path().extension() != ".hex") continue;
    SCOPED_TRACE(entry.path().filename().string());
    Bytes bytes = LoadRaw(entry.path().filename().string());
    ASSERT_FALSE(bytes.empty());
    auto r = DecodeModuleImage(bytes);
    ASSERT_TRUE(r) << r.error().ToString();
    EXPECT_EQ(r->identifier, bytes[0]);
    EXPECT_EQ(r->type, ModuleTypeFromIdentifier(bytes[0]));
    for (const Status& w : r->warnings) {
      EXPECT_TRUE(w.code() == StatusCode::kInvalidArgument ||
                  w.code() == StatusCode::kUnimplemented)
          << w.ToString();
    }
    ++images;
  }
  EXPECT_GE(images, 60);
  RecordProperty("images", images);
}

// bigcode_index.json names vendor/pn/sn for each bigcode image; the regular entries must decode
// to exactly those. (A tiny scan, not a JSON parser: the file is one flat list of objects.)
TEST(OpticsExternalCorpusTest, bigcode_identities_match_index) {
  SKIP_WITHOUT_CORPUS();
  std::string json = testing::ReadTextFile(RawDir() + "/bigcode-sffdb_index.json");
  auto field = [](const std::string& object, const std::string& key) {
    std::string needle = "\"" + key + "\": \"";
    size_t at = object.find(needle);
    if (at == std::string::npos) return std::string();
    at += needle.size();
    return object.substr(at, object.find('"', at) - at);
  };
  int checked = 0;
  size_t pos = 0;
  while ((pos = json.find('{', pos)) != std::string::npos) {
    size_t end = json.find('}', pos);
    std::string object = json.substr(pos, end - pos);
    pos = end;
    if (object.find("\"note\"") != std::string::npos) continue;  // irregular entries
    std::string file = field(object, "file");
    Bytes bytes = LoadRaw(file);
    ModuleReading r = Decode(bytes);
    if (r.type == ModuleType::kUnknown) continue;  // identifier 0x00: nothing to compare
    SCOPED_TRACE(file);
    EXPECT_EQ(r.vendor, field(object, "vendor"));
    EXPECT_EQ(r.part_number, field(object, "pn"));
    EXPECT_EQ(r.serial, field(object, "sn"));
    ++checked;
  }
  EXPECT_GE(checked, 45);
}

TEST(OpticsExternalCorpusTest, expected_md_qsfp28_fs_ir4) {
  SKIP_WITHOUT_CORPUS();
  ModuleReading r =
      Decode(LoadRaw("wobcom-go-ethtool_QSFP28-SFF8636_getEEPROM_FS-QSFP28-IR4-100G.hex"));
  EXPECT_EQ(r.identifier, 0x11);
  EXPECT_EQ(r.type, ModuleType::kSff8636);
  EXPECT_EQ(r.vendor, "FS");
  EXPECT_EQ(r.part_number, "QSFP28-IR4-100G");
  EXPECT_EQ(r.serial, "C1812155461");
  EXPECT_EQ(ConnectorName(r.connector.value_or(0)), "LC");
  EXPECT_TRUE(r.warnings.empty()) << Warnings(r);
  ExpectRel(r.temperature_celsius, 28.58984375, "temperature");
  ExpectRel(r.supply_voltage_volts, 3.3209, "vcc");
  const double rx_mw[] = {1.7258, 1.2744, 1.1138, 1.1990};
  const double bias_ma[] = {34.432, 33.408, 36.736, 35.456};
  const double tx_mw[] = {1.1468, 1.1665, 1.2332, 1.2189};
  ASSERT_EQ(r.lanes.size(), 4u);
  for (int i = 0; i < 4; ++i) {
    ExpectRel(r.lanes[i].rx_power_watts, rx_mw[i] * 1e-3, "rx lane " + std::to_string(i + 1));
    ExpectRel(r.lanes[i].tx_bias_amperes, bias_ma[i] * 1e-3, "bias " + std::to_string(i + 1));
    ExpectRel(r.lanes[i].tx_power_watts, tx_mw[i] * 1e-3, "tx lane " + std::to_string(i + 1));
  }
  ExpectThresholds(r.thresholds.temperature_celsius, 80, -10, 75, -5, "temperature");
  ExpectThresholds(r.thresholds.supply_voltage_volts, 3.7, 2.904, 3.5952, 3.0024, "vcc");
  ExpectThresholds(r.thresholds.rx_power_watts, 2.8184e-3, 0.0355e-3, 2.2387e-3, 0.0562e-3,
                   "rx power");
  ExpectThresholds(r.thresholds.tx_bias_amperes, 75e-3, 10e-3, 70e-3, 15e-3, "bias");
  ExpectThresholds(r.thresholds.tx_power_watts, 2.8183e-3, 0.1412e-3, 2.2387e-3, 0.1778e-3,
                   "tx power");
}

TEST(OpticsExternalCorpusTest, expected_md_sfp_oem_10gb_lr) {
  SKIP_WITHOUT_CORPUS();
  ModuleReading r =
      Decode(LoadRaw("wobcom-go-ethtool_SFP-SFF8472_getEEPROM1_OEM-SFP-10GB-LR.hex"));
  EXPECT_EQ(r.type, ModuleType::kSff8472);
  EXPECT_TRUE(r.ddm_supported);
  EXPECT_FALSE(r.externally_calibrated);
  ExpectRel(r.temperature_celsius, 34.5390625, "temperature");
  ExpectRel(r.supply_voltage_volts, 3.2893, "vcc");
  ASSERT_EQ(r.lanes.size(), 1u);
  ExpectRel(r.lanes[0].tx_bias_amperes, 35.994e-3, "bias");
  ExpectRel(r.lanes[0].tx_power_watts, 0.5171e-3, "tx power");
  ExpectRel(r.lanes[0].rx_power_watts, 0.0, "rx power");
  ExpectThresholds(r.thresholds.temperature_celsius, 90, -10, 85, -5, "temperature");
  ExpectThresholds(r.thresholds.tx_bias_amperes, 100e-3, 2e-3, 80e-3, 4e-3, "bias");
  ExpectThresholds(r.thresholds.rx_power_watts, 2.0e-3, 0.0158e-3, 1.0e-3, 0.0316e-3, "rx");
}

TEST(OpticsExternalCorpusTest, expected_md_sfp_flexoptix) {
  SKIP_WITHOUT_CORPUS();
  ModuleReading r =
      Decode(LoadRaw("wobcom-go-ethtool_SFP-SFF8472_getEEPROM_FLEXOPTIX-P.B1696.10.DA.hex"));
  EXPECT_EQ(r.vendor, "FLEXOPTIX");
  EXPECT_EQ(r.part_number, "P.B1696.10.DA");
  EXPECT_EQ(r.serial, "F79B5KH");
  ExpectRel(r.wavelength_nm, 1330, "wavelength");
  ExpectRel(r.temperature_celsius, 25.54296875, "temperature");
  ExpectRel(r.supply_voltage_volts, 3.2545, "vcc");
  ASSERT_EQ(r.lanes.size(), 1u);
  ExpectRel(r.lanes[0].tx_bias_amperes, 27.872e-3, "bias");
  ExpectRel(r.lanes[0].tx_power_watts, 0.6361e-3, "tx power");
  ExpectRel(r.lanes[0].rx_power_watts, 0.5518e-3, "rx power");
  ASSERT_TRUE(r.thresholds.tx_power_watts);
  ExpectRel(r.thresholds.tx_power_watts->high_alarm, 1.7783e-3, "tx power high alarm");
}

TEST(OpticsExternalCorpusTest, expected_md_sfp_brocade_no_ddm) {
  SKIP_WITHOUT_CORPUS();
  ModuleReading r =
      Decode(LoadRaw("wobcom-go-ethtool_SFP-SFF8472_getEEPROM2_BROCADE-57-1000042-02.hex"));
  EXPECT_EQ(r.vendor, "BROCADE");
  EXPECT_EQ(r.part_number, "57-1000042-02");
  EXPECT_FALSE(r.ddm_supported);
  EXPECT_TRUE(r.lanes.empty());
  EXPECT_FALSE(r.temperature_celsius.has_value());
  EXPECT_TRUE(r.warnings.empty()) << Warnings(r);
}

// The qib driver's own QSFP+ dump (hwloc fixture): decoded text and hex in one file.
TEST(OpticsExternalCorpusTest, hwloc_qib_qsfp_identity_matches_its_decoded_text) {
  std::string path =
      ExternalPath("ethtool-m/hwloc-qib0_QSFP+_WLGore-QSN5800-4_qib-driver-decode+hex.txt");
  if (!std::filesystem::exists(path)) GTEST_SKIP() << path;
  std::string text = testing::ReadTextFile(path);
  auto bytes = ParseHexDump(text);
  ASSERT_TRUE(bytes);
  EXPECT_EQ(bytes->size(), 224u);  // lower page + page 00h bytes 128-223
  std::map<std::string, std::string> qib;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    size_t colon = line.find(':');
    if (line.empty() || line[0] == '#' || colon == std::string::npos) continue;
    std::string value = line.substr(colon + 1);
    value.erase(value.find_last_not_of(' ') + 1);
    qib[line.substr(0, colon)] = value;
  }
  ModuleReading r = Decode(*bytes);
  EXPECT_EQ(r.type, ModuleType::kSff8636);
  EXPECT_EQ(r.vendor, qib["Vendor"]);
  EXPECT_EQ(r.part_number, qib["Part#"]);
  EXPECT_EQ(r.serial, qib["Serial"]);
  EXPECT_EQ(r.revision, qib["Rev"]);
  EXPECT_EQ(r.date_code.substr(0, 6), qib["Date"]);
  ASSERT_TRUE(r.vendor_oui);
  EXPECT_EQ(qib["OUI"], "002177");
  EXPECT_EQ((*r.vendor_oui)[1], 0x21);
  EXPECT_EQ((*r.vendor_oui)[2], 0x77);
  EXPECT_EQ(r.media, "passive_copper");  // "TECH:4M Cu Eq": byte 147 0xB0 passive equalized
  EXPECT_FALSE(r.ddm_supported);
}

// ice EEPROM-read bug: the unpatched driver returned the lower page only (the upper page read
// failed). Identifier and status decode; identity and DOM are absent with a reason, not zeros.
TEST(OpticsExternalCorpusTest, ice_eeprom_read_bug_decodes_what_the_bytes_allow) {
  std::string path = ExternalPath(
      "ethtool-m/netdev-2023-poros_ice-QSFP28-DAC_partial-decode+hex_EEPROM-read-bug.txt");
  if (!std::filesystem::exists(path)) GTEST_SKIP() << path;
  std::string text = testing::ReadTextFile(path);
  const std::string marker = "$ ethtool -m enp65s0f0np0\nOffset";
  size_t start = text.find(marker);
  ASSERT_NE(start, std::string::npos);
  size_t end = text.find("###", start);
  auto bytes = ParseHexDump(text.substr(start + marker.size() - 6, end - start));
  ASSERT_TRUE(bytes);
  ASSERT_EQ(bytes->size(), 128u);
  ModuleReading r = Decode(*bytes);
  // Patched driver's decode: "Identifier : 0x11 (QSFP28)".
  auto fields = DecodedTextFields(text);
  EXPECT_EQ(fields["Identifier"], Hex8(r.identifier) + " (" + r.identifier_name + ")");
  EXPECT_EQ(r.type, ModuleType::kSff8636);
  EXPECT_EQ(r.spec_revision, 0x06);
  EXPECT_TRUE(r.flat_memory);
  EXPECT_EQ(r.vendor, "");
  EXPECT_FALSE(r.connector.has_value());
  EXPECT_FALSE(r.ddm_supported);
  EXPECT_FALSE(r.temperature_celsius.has_value());
  EXPECT_TRUE(r.lanes.empty());
  EXPECT_TRUE(HasWarning(r, StatusCode::kInvalidArgument, "page 00h")) << Warnings(r);
}

TEST(OpticsExternalCorpusTest, cmis_qsfp_dd_images_from_bigcode) {
  SKIP_WITHOUT_CORPUS();
  // Amphenol 400G-CR8: flat memory passive copper, 8 lanes advertised, no monitors.
  ModuleReading dac = Decode(LoadRaw("bigcode-sffdb_53_QSFP-DD_Amphenol_NDYYYF-0001.hex"));
  EXPECT_EQ(dac.type, ModuleType::kCmis);
  EXPECT_TRUE(dac.flat_memory);
  EXPECT_EQ(dac.media, "passive_copper");
  EXPECT_FALSE(dac.ddm_supported);
  EXPECT_TRUE(dac.warnings.empty()) << Warnings(dac);
  // Innolight 400G-DR4: paged, but the database kept only 256 bytes: identity and a reason.
  ModuleReading dr4 = Decode(LoadRaw("bigcode-sffdb_54_QSFP-DD_INNOLIGHT_T-DP4CNH-N00.hex"));
  EXPECT_EQ(dr4.part_number, "T-DP4CNH-N00");
  EXPECT_EQ(dr4.media, "smf");
  EXPECT_FALSE(dr4.flat_memory);
  EXPECT_TRUE(dr4.lanes.empty());
  EXPECT_TRUE(HasWarning(dr4, StatusCode::kInvalidArgument, "page 01h")) << Warnings(dr4);
}

}  // namespace
}  // namespace fabricwatch::optics
