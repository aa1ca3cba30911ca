// Tests of KernelEthtool's ioctl path (ethtool_ioctl.h) through a fake driver behind the seam:
// driver statistics and their count changes, the PFC storm tunable, the module's linear image.

#include "collectors/ethtool_source/ethtool_ioctl.h"

#include <gtest/gtest.h>
#include <linux/ethtool.h>

#include <cerrno>
#include <cstdint>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "collectors/ethtool_source/ethtool_kernel.h"
#include "tests/unit/collectors/ethtool_source/fake_ethtool_driver.h"

namespace fabricwatch::sys {
namespace {

// The fake is owned by the source; tests keep a pointer.
struct Rig {
  explicit Rig(uint32_t count) {
    auto owned = std::make_unique<FakeDriver>(count);
    driver = owned.get();
    source = std::make_unique<KernelEthtool>(std::move(owned));
  }
  FakeDriver* driver;
  std::unique_ptr<KernelEthtool> source;
};

// Every name paired with its own value, in driver order, and the whole table present.
void ExpectConsistent(const std::vector<EthtoolStat>& stats, const FakeDriver& driver) {
  ASSERT_EQ(stats.size(), driver.names.size());
  for (size_t i = 0; i < stats.size(); ++i) {
    EXPECT_EQ(stats[i].name, driver.names[i]) << i;
    EXPECT_EQ(stats[i].value, driver.ValueOf(driver.names[i])) << stats[i].name;
  }
}

const std::vector<uint32_t> kFullSequence = {ETHTOOL_GSSET_INFO, ETHTOOL_GSTRINGS, ETHTOOL_GSTATS};

TEST(KernelEthtoolStatisticsTest, NormalDriverNamesAndValuesAligned) {
  Rig rig(40);
  // A 32-character name fills its field with no NUL (ETH_GSTRING_LEN).
  rig.driver->names[3] = std::string(28, 'x') + "_003";
  ASSERT_EQ(rig.driver->names[3].size(), size_t{ETH_GSTRING_LEN});
  auto stats = rig.source->Statistics("eth0");
  ASSERT_TRUE(stats) << stats.error().ToString();
  ExpectConsistent(*stats, *rig.driver);
  EXPECT_EQ(rig.driver->calls, kFullSequence);
}

TEST(KernelEthtoolStatisticsTest, SecondCallReusesTheStringTable) {
  Rig rig(25);
  ASSERT_TRUE(rig.source->Statistics("eth0"));
  rig.driver->calls.clear();
  rig.driver->epoch = 2;  // the counters moved
  auto stats = rig.source->Statistics("eth0");
  ASSERT_TRUE(stats) << stats.error().ToString();
  ExpectConsistent(*stats, *rig.driver);
  EXPECT_EQ(rig.driver->calls, (std::vector<uint32_t>{ETHTOOL_GSSET_INFO, ETHTOOL_GSTATS}));
}

TEST(KernelEthtoolStatisticsTest, TablesAreCachedPerNetdev) {
  Rig rig(5);
  ASSERT_TRUE(rig.source->Statistics("eth0"));
  ASSERT_TRUE(rig.source->Statistics("eth1"));
  EXPECT_EQ(rig.driver->Count(ETHTOOL_GSTRINGS), 2u);
  ASSERT_TRUE(rig.source->Statistics("eth0"));
  ASSERT_TRUE(rig.source->Statistics("eth1"));
  EXPECT_EQ(rig.driver->Count(ETHTOOL_GSTRINGS), 2u);
}

TEST(KernelEthtoolStatisticsTest, CountChangeBetweenCallsRefetchesStrings) {
  Rig rig(10);
  ASSERT_TRUE(rig.source->Statistics("eth0"));
  rig.driver->SetCount(18, "prio_");  // e.g. mlx5 after PFC was enabled
  rig.driver->calls.clear();
  auto stats = rig.source->Statistics("eth0");
  ASSERT_TRUE(stats) << stats.error().ToString();
  ExpectConsistent(*stats, *rig.driver);
  EXPECT_EQ(rig.driver->calls, kFullSequence);
}

TEST(KernelEthtoolStatisticsTest, NewIfindexRefetchesStringsEvenWithTheSameCount) {
  Rig rig(10);
  ASSERT_TRUE(rig.source->Statistics("eth0"));
  rig.driver->SetCount(10,
                       "other_");  // another device took the name, same count
  rig.driver->ifindex = 8;
  auto stats = rig.source->Statistics("eth0");
  ASSERT_TRUE(stats) << stats.error().ToString();
  ExpectConsistent(*stats, *rig.driver);
  EXPECT_EQ(rig.driver->Count(ETHTOOL_GSTRINGS), 2u);
}

// ---------------------------------------------------------------- count changes mid-sequence

struct ChangeCase {
  const char* what;
  uint32_t initial;
  uint32_t changed;
  uint32_t at;        // the command before which the driver changes (first time only)
  bool checks_count;  // kernel with the 2025 len/n_stats check
  bool warm;          // names already cached from an earlier call
};

// gtest would otherwise print the raw bytes, padding included.
void PrintTo(const ChangeCase& c, std::ostream* os) { *os << c.what; }

class CountChangeTest : public testing::TestWithParam<ChangeCase> {};

TEST_P(CountChangeTest, ResultIsConsistentAndRetriedOnce) {
  const ChangeCase& c = GetParam();
  Rig rig(c.initial);
  rig.driver->checks_count = c.checks_count;
  if (c.warm) {
    ASSERT_TRUE(rig.source->Statistics("eth0"));
  }
  rig.driver->calls.clear();
  bool changed = false;
  rig.driver->before = [&](uint32_t command) {
    if (command == c.at && !changed) {
      changed = true;
      rig.driver->SetCount(c.changed, "new_");
    }
  };
  auto stats = rig.source->Statistics("eth0");
  ASSERT_TRUE(changed);
  ASSERT_TRUE(stats) << stats.error().ToString();
  ExpectConsistent(*stats, *rig.driver);
  EXPECT_EQ(rig.driver->Count(ETHTOOL_GSSET_INFO), 2u) << "one restart, not more";
  EXPECT_EQ(rig.driver->Count(ETHTOOL_GSTATS), c.at == ETHTOOL_GSTATS ? 2u : 1u);
}

// Old-kernel cases stay within the headroom (count/2 + 64): that kernel writes the new count
// whatever the buffer, exactly the overrun the headroom is there to absorb.
INSTANTIATE_TEST_SUITE_P(
    Kernel, CountChangeTest,
    testing::Values(
        ChangeCase{"grows_before_gstats", 10, 14, ETHTOOL_GSTATS, false, false},
        ChangeCase{"shrinks_before_gstats", 14, 6, ETHTOOL_GSTATS, false, false},
        ChangeCase{"grows_before_gstrings", 10, 50, ETHTOOL_GSTRINGS, false, false},
        ChangeCase{"shrinks_before_gstrings", 50, 3, ETHTOOL_GSTRINGS, false, false},
        ChangeCase{"grows_with_cached_names", 10, 12, ETHTOOL_GSTATS, false, true},
        ChangeCase{"shrinks_with_cached_names", 12, 10, ETHTOOL_GSTATS, false, true},
        ChangeCase{"checked_grows_far_before_gstats", 10, 5000, ETHTOOL_GSTATS, true, false},
        ChangeCase{"checked_grows_far_before_gstrings", 10, 5000, ETHTOOL_GSTRINGS, true, false},
        ChangeCase{"checked_shrinks_before_gstats", 100, 1, ETHTOOL_GSTATS, true, true}),
    [](const testing::TestParamInfo<ChangeCase>& info) { return std::string(info.param.what); });

TEST(KernelEthtoolStatisticsTest, CountThatKeepsChangingIsAnErrorNotAMisalignedResult) {
  Rig rig(10);
  uint32_t next = 10;
  rig.driver->before = [&](uint32_t command) {
    if (command == ETHTOOL_GSTATS) rig.driver->SetCount(++next);
  };
  auto stats = rig.source->Statistics("eth0");
  ASSERT_FALSE(stats);
  EXPECT_EQ(stats.error().code(), StatusCode::kUnavailable);
  EXPECT_NE(stats.error().message().find("eth0"), std::string::npos);
  EXPECT_NE(stats.error().message().find("kept changing"), std::string::npos);
  EXPECT_EQ(rig.driver->Count(ETHTOOL_GSTATS), 2u);
  // Once the driver settles, the next call is fine.
  rig.driver->before = nullptr;
  auto again = rig.source->Statistics("eth0");
  ASSERT_TRUE(again) << again.error().ToString();
  ExpectConsistent(*again, *rig.driver);
}

// ---------------------------------------------------------------- errors and "not supported"

TEST(KernelEthtoolStatisticsTest, DriverWithoutStatisticsIsUnimplemented) {
  Rig rig(10);
  rig.driver->gstats_errno = EOPNOTSUPP;
  auto stats = rig.source->Statistics("veth0");
  ASSERT_FALSE(stats);
  EXPECT_EQ(stats.error().code(), StatusCode::kUnimplemented);
  EXPECT_EQ(stats.error().sys_errno(), EOPNOTSUPP);
  EXPECT_NE(stats.error().message().find("veth0"), std::string::npos);
  EXPECT_NE(stats.error().message().find("ETHTOOL_GSTATS"), std::string::npos);

  Rig no_set(10);
  no_set.driver->has_stats_set = false;  // no get_sset_count: the kernel clears the bit
  auto none = no_set.source->Statistics("veth0");
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().code(), StatusCode::kUnimplemented);
  EXPECT_EQ(no_set.driver->Count(ETHTOOL_GSTATS), 0u);
}

TEST(KernelEthtoolStatisticsTest, MissingNetdevIsNotFound) {
  Rig rig(10);
  rig.driver->ifindex_errno = ENODEV;
  auto stats = rig.source->Statistics("gone0");
  ASSERT_FALSE(stats);
  EXPECT_EQ(stats.error().code(), StatusCode::kNotFound);
  EXPECT_TRUE(rig.driver->calls.empty());

  Rig racing(10);  // removed between SIOCGIFINDEX and the ethtool ioctl
  racing.driver->sset_info_errno = ENODEV;
  auto raced = racing.source->Statistics("gone0");
  ASSERT_FALSE(raced);
  EXPECT_EQ(raced.error().code(), StatusCode::kNotFound);

  Rig bad(10);
  auto invalid = bad.source->Statistics("a-name-longer-than-ifnamsiz");
  ASSERT_FALSE(invalid);
  EXPECT_EQ(invalid.error().code(), StatusCode::kNotFound);
  EXPECT_TRUE(bad.driver->calls.empty());
}

TEST(KernelEthtoolStatisticsTest, FallsBackToDrvinfoCountWithoutSsetInfo) {
  Rig rig(12);
  rig.driver->sset_info_errno = EOPNOTSUPP;
  auto stats = rig.source->Statistics("eth0");
  ASSERT_TRUE(stats) << stats.error().ToString();
  ExpectConsistent(*stats, *rig.driver);
  EXPECT_EQ(rig.driver->Count(ETHTOOL_GDRVINFO), 1u);
}

TEST(KernelEthtoolStatisticsTest, ZeroStatisticsIsAnEmptyAnswer) {
  Rig rig(0);
  auto stats = rig.source->Statistics("eth0");
  ASSERT_TRUE(stats) << stats.error().ToString();
  EXPECT_TRUE(stats->empty());
  EXPECT_EQ(rig.driver->Count(ETHTOOL_GSTATS), 0u);
}

TEST(KernelEthtoolTunableTest, PfcStormTimeout) {
  Rig rig(0);
  rig.driver->tunable_value = 8000;
  auto timeout = rig.source->PfcStormTimeoutMs("eth0");
  ASSERT_TRUE(timeout) << timeout.error().ToString();
  EXPECT_EQ(*timeout, 8000u);
  EXPECT_EQ(rig.driver->last_tunable.id, static_cast<uint32_t>(ETHTOOL_PFC_PREVENTION_TOUT));
  EXPECT_EQ(rig.driver->last_tunable.type_id, static_cast<uint32_t>(ETHTOOL_TUNABLE_U16));
  EXPECT_EQ(rig.driver->last_tunable.len, 2u);

  rig.driver->tunable_value = 0;  // PFC_STORM_PREVENTION_DISABLE
  EXPECT_EQ(rig.source->PfcStormTimeoutMs("eth0").value_or(99), 0u);

  for (int err : {EOPNOTSUPP, EINVAL}) {
    rig.driver->tunable_errno = err;
    auto unsupported = rig.source->PfcStormTimeoutMs("eth0");
    ASSERT_FALSE(unsupported);
    EXPECT_EQ(unsupported.error().code(), StatusCode::kUnimplemented) << err;
  }
  rig.driver->tunable_errno = ENODEV;
  EXPECT_EQ(rig.source->PfcStormTimeoutMs("eth0").error().code(), StatusCode::kNotFound);
}

// ================================================================ module EEPROM, ioctl path

struct LinearCase {
  const char* name;
  uint32_t type;
  size_t len;
  uint8_t identifier;
};

// gtest would print the raw bytes, padding included (uninitialised under valgrind).
void PrintTo(const LinearCase& c, std::ostream* os) { *os << c.name; }

class ModuleEepromIoctlTest : public testing::TestWithParam<LinearCase> {};

// The legacy linear layouts are the flat image (docs/reference.md §3.1): returned whole, one read.
TEST_P(ModuleEepromIoctlTest, LinearImageIsReturnedWhole) {
  const LinearCase& c = GetParam();
  Rig rig(0);
  rig.source->UseIoctlForModulesForTesting();
  rig.driver->modinfo_errno = 0;
  rig.driver->module_type = c.type;
  rig.driver->module_image = Pattern(c.len, c.identifier);
  auto image = rig.source->ModuleEeprom("eth0");
  ASSERT_TRUE(image) << image.error().ToString();
  EXPECT_EQ(*image, rig.driver->module_image);
  EXPECT_EQ(rig.driver->calls, (std::vector<uint32_t>{ETHTOOL_GMODULEINFO, ETHTOOL_GMODULEEEPROM}));
  EXPECT_EQ(rig.driver->eeprom_requests,
            (std::vector<std::pair<uint32_t, uint32_t>>{{0, static_cast<uint32_t>(c.len)}}));
}

INSTANTIATE_TEST_SUITE_P(Layouts, ModuleEepromIoctlTest,
                         testing::Values(LinearCase{"Sff8079", ETH_MODULE_SFF_8079, 256, 0x03},
                                         LinearCase{"Sff8472", ETH_MODULE_SFF_8472, 512, 0x03},
                                         LinearCase{"Sff8636Flat", ETH_MODULE_SFF_8636, 256, 0x11},
                                         LinearCase{"Sff8636Paged", ETH_MODULE_SFF_8636, 640, 0x11},
                                         LinearCase{"Sff8436", ETH_MODULE_SFF_8436, 640, 0x0D}),
                         [](const testing::TestParamInfo<LinearCase>& info) {
                           return info.param.name;
                         });

struct IoctlErrorCase {
  const char* name;
  int modinfo_errno;
  int eeprom_errno;
  int ifindex_errno;
  StatusCode want;
};

// gtest would print the raw bytes, padding included (uninitialised under valgrind).
void PrintTo(const IoctlErrorCase& c, std::ostream* os) { *os << c.name; }

class ModuleEepromIoctlErrorTest : public testing::TestWithParam<IoctlErrorCase> {};

TEST_P(ModuleEepromIoctlErrorTest, ErrnoMapping) {
  const IoctlErrorCase& c = GetParam();
  Rig rig(0);
  rig.source->UseIoctlForModulesForTesting();
  rig.driver->modinfo_errno = c.modinfo_errno;
  rig.driver->module_eeprom_errno = c.eeprom_errno;
  rig.driver->ifindex_errno = c.ifindex_errno;
  rig.driver->module_type = ETH_MODULE_SFF_8472;
  rig.driver->module_image = Pattern(512, 0x03);
  auto image = rig.source->ModuleEeprom("eth3");
  ASSERT_FALSE(image);
  EXPECT_EQ(image.error().code(), c.want) << image.error().ToString();
  EXPECT_NE(image.error().message().find("eth3"), std::string::npos) << image.error().ToString();
  EXPECT_EQ(image.error().sys_errno(), c.modinfo_errno != 0 ? c.modinfo_errno : c.eeprom_errno);
}

INSTANTIATE_TEST_SUITE_P(
    Errors, ModuleEepromIoctlErrorTest,
    testing::Values(
        // No get_module_info: the driver cannot read modules.
        IoctlErrorCase{"Eopnotsupp", EOPNOTSUPP, 0, 0, StatusCode::kUnimplemented},
        IoctlErrorCase{"Eperm", EPERM, 0, 0, StatusCode::kPermissionDenied},
        // mlx5: the MCIA access for an empty cage fails.
        IoctlErrorCase{"EioIsNoModule", EIO, 0, 0, StatusCode::kNoData},
        IoctlErrorCase{"EioOnEepromReadIsNoModule", 0, EIO, 0, StatusCode::kNoData},
        // sfp.c: SFP_F_PRESENT clear, while the netdev exists.
        IoctlErrorCase{"EnodevIsNoModule", 0, ENODEV, 0, StatusCode::kNoData},
        // The netdev itself is gone.
        IoctlErrorCase{"EnodevWithoutNetdevIsNotFound", ENODEV, 0, ENODEV, StatusCode::kNotFound},
        IoctlErrorCase{"Ebusy", EBUSY, 0, 0, StatusCode::kUnavailable}),
    [](const testing::TestParamInfo<IoctlErrorCase>& info) { return info.param.name; });

TEST(ModuleEepromIoctlTest, ImplausibleModinfoIsRejectedBeforeReading) {
  for (auto [type, len, want] :
       {std::tuple{uint32_t{ETH_MODULE_SFF_8472}, size_t{0}, StatusCode::kInternal},
        std::tuple{uint32_t{ETH_MODULE_SFF_8472}, size_t{640}, StatusCode::kInternal},
        std::tuple{uint32_t{ETH_MODULE_SFF_8636}, size_t{1024}, StatusCode::kInternal},
        std::tuple{uint32_t{9}, size_t{256}, StatusCode::kUnimplemented}}) {
    Rig rig(0);
    rig.source->UseIoctlForModulesForTesting();
    rig.driver->modinfo_errno = 0;
    rig.driver->module_type = type;
    rig.driver->module_image = Pattern(len, 0x03);
    auto image = rig.source->ModuleEeprom("eth0");
    ASSERT_FALSE(image) << type << "/" << len;
    EXPECT_EQ(image.error().code(), want) << image.error().ToString();
    EXPECT_EQ(rig.driver->Count(ETHTOOL_GMODULEEEPROM), 0u);
  }
}

TEST(ModuleEepromIoctlTest, BadNetdevNameIsNotFoundWithoutACall) {
  Rig rig(0);
  EXPECT_EQ(rig.source->ModuleEeprom("").error().code(), StatusCode::kNotFound);
  EXPECT_EQ(rig.source->ModuleEeprom("a/b").error().code(), StatusCode::kNotFound);
  EXPECT_TRUE(rig.driver->calls.empty());
}

}  // namespace
}  // namespace fabricwatch::sys

namespace fabricwatch::sys {
namespace {

TEST(LinkSettingsIoctlTest, HandshakeThenSettingsAndMasks) {
  FakeDriver driver(0);
  driver.link.speed = 100000;
  driver.link.duplex = DUPLEX_FULL;
  driver.link.port = PORT_DA;
  driver.link.autoneg = AUTONEG_ENABLE;
  // supported: 25000baseCR (31), 100000baseCR4 (38), Autoneg (6), FIBRE (10); advertising:
  // 100000baseCR4 only; lp_advertising ignored.
  driver.link_masks = {(1u << 31) | (1u << 6) | (1u << 10),
                       1u << (38 - 32),
                       0,
                       0,
                       1u << 6,
                       1u << (38 - 32),
                       0,
                       0,
                       0xffffffffu,
                       0xffffffffu,
                       0,
                       0};
  auto settings = ReadLinkSettingsIoctl(driver, "eth0");
  ASSERT_TRUE(settings) << settings.error().ToString();
  EXPECT_EQ(driver.Count(ETHTOOL_GLINKSETTINGS), 2u);
  EXPECT_EQ(settings->speed_mbps, std::optional<uint32_t>(100000));
  EXPECT_FALSE(settings->lanes);
  EXPECT_EQ(settings->duplex, "full");
  EXPECT_EQ(settings->port, "Direct Attach Copper");
  EXPECT_EQ(settings->autoneg, std::optional<bool>(true));
  EXPECT_EQ(settings->supported_modes,
            (std::vector<std::string>{"25000baseCR/Full", "100000baseCR4/Full"}));
  EXPECT_EQ(settings->advertised_modes, (std::vector<std::string>{"100000baseCR4/Full"}));
  EXPECT_EQ(settings->max_supported_speed_mbps, std::optional<uint32_t>(100000));
  EXPECT_EQ(settings->max_advertised_speed_mbps, std::optional<uint32_t>(100000));
  EXPECT_FALSE(settings->link_detected);
}

TEST(LinkSettingsIoctlTest, UnknownSpeedAndErrors) {
  FakeDriver driver(0);
  driver.link.speed = 0xffffffffu;  // SPEED_UNKNOWN: link down
  driver.link.duplex = DUPLEX_UNKNOWN;
  driver.link.port = 0x42;
  auto down = ReadLinkSettingsIoctl(driver, "eth0");
  ASSERT_TRUE(down);
  EXPECT_FALSE(down->speed_mbps);
  EXPECT_EQ(down->duplex, "");
  EXPECT_EQ(down->port, "");
  EXPECT_TRUE(down->supported_modes.empty());
  EXPECT_FALSE(down->max_supported_speed_mbps);

  driver.link_errno = EOPNOTSUPP;
  auto unsupported = ReadLinkSettingsIoctl(driver, "eth0");
  ASSERT_FALSE(unsupported);
  EXPECT_EQ(unsupported.error().code(), StatusCode::kUnimplemented);
  EXPECT_NE(unsupported.error().message().find("ETHTOOL_GLINKSETTINGS"), std::string::npos);
}

}  // namespace
}  // namespace fabricwatch::sys
