#include "collectors/sys/ethtool_kernel.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/dcbnl.h>
#include <linux/ethtool.h>
#include <linux/genetlink.h>
#include <linux/rtnetlink.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netlink/attr.h>
#include <netlink/genl/genl.h>
#include <netlink/msg.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

namespace fabricwatch::sys {
namespace {

// ================================================================ fake driver behind the seam

// Plays a driver and the kernel's ethtool ioctl code (K net/ethtool/ioctl.c). Stat "stat_<k>" has
// value 1000 * epoch + k, so a name paired with another stat's value is visible. `checks_count`
// false is the historical kernel, which writes the driver's *current* count whatever len/n_stats
// the caller passed; true is the 2025 behaviour (0 entries on mismatch).
class FakeDriver final : public EthtoolIoctl {
 public:
  explicit FakeDriver(uint32_t count) { SetCount(count); }

  void SetCount(uint32_t count, const std::string& prefix = "stat_") {
    names.clear();
    for (uint32_t k = 0; k < count; ++k) names.push_back(prefix + std::to_string(k));
  }

  int Call(const std::string& netdev, void* cmd) override {
    uint32_t command;
    std::memcpy(&command, cmd, sizeof(command));
    calls.push_back(command);
    if (before) before(command);
    netdevs.insert(netdev);
    auto* bytes = static_cast<char*>(cmd);
    const uint32_t n = static_cast<uint32_t>(names.size());
    switch (command) {
      case ETHTOOL_GSSET_INFO: {
        if (sset_info_errno != 0) return -sset_info_errno;
        ethtool_sset_info info;
        std::memcpy(&info, bytes, sizeof(info));
        EXPECT_EQ(info.sset_mask, 1ull << ETH_SS_STATS);
        if (!has_stats_set) {
          info.sset_mask = 0;
          std::memcpy(bytes, &info, sizeof(info));
          return 0;
        }
        std::memcpy(bytes, &info, sizeof(info));
        std::memcpy(bytes + sizeof(info), &n, sizeof(n));
        return 0;
      }
      case ETHTOOL_GDRVINFO: {
        ethtool_drvinfo info{};
        info.cmd = ETHTOOL_GDRVINFO;
        std::snprintf(info.driver, sizeof(info.driver), "fake");
        info.n_stats = n;
        std::memcpy(bytes, &info, sizeof(info));
        return 0;
      }
      case ETHTOOL_GSTRINGS: {
        ethtool_gstrings header;
        std::memcpy(&header, bytes, sizeof(header));
        EXPECT_EQ(header.string_set, static_cast<uint32_t>(ETH_SS_STATS));
        const bool mismatch = header.len != 0 && header.len != n;
        header.len = checks_count && mismatch ? 0 : n;
        std::memcpy(bytes, &header, sizeof(header));
        for (uint32_t i = 0; i < header.len; ++i) {
          char field[ETH_GSTRING_LEN] = {};
          std::memcpy(field, names[i].data(), std::min<size_t>(names[i].size(), ETH_GSTRING_LEN));
          std::memcpy(bytes + sizeof(header) + size_t{i} * ETH_GSTRING_LEN, field, sizeof(field));
        }
        return 0;
      }
      case ETHTOOL_GSTATS: {
        if (gstats_errno != 0) return -gstats_errno;
        ethtool_stats header;
        std::memcpy(&header, bytes, sizeof(header));
        const bool mismatch = header.n_stats != 0 && header.n_stats != n;
        header.n_stats = checks_count && mismatch ? 0 : n;
        std::memcpy(bytes, &header, sizeof(header));
        for (uint32_t i = 0; i < header.n_stats; ++i) {
          const uint64_t value = ValueOf(names[i]);
          std::memcpy(bytes + sizeof(header) + size_t{i} * 8, &value, sizeof(value));
        }
        return 0;
      }
      case ETHTOOL_GTUNABLE: {
        ethtool_tunable tunable;
        std::memcpy(&tunable, bytes, sizeof(tunable));
        last_tunable = {tunable.id, tunable.type_id, tunable.len};
        if (tunable_errno != 0) return -tunable_errno;
        std::memcpy(bytes + sizeof(tunable), &tunable_value, sizeof(tunable_value));
        return 0;
      }
      case ETHTOOL_GMODULEINFO: {
        if (modinfo_errno != 0) return -modinfo_errno;
        ethtool_modinfo info{};
        info.cmd = command;
        info.type = module_type;
        info.eeprom_len = static_cast<uint32_t>(module_image.size());
        std::memcpy(bytes, &info, sizeof(info));
        return 0;
      }
      case ETHTOOL_GMODULEEEPROM: {
        // K net/ethtool/ioctl.c ethtool_get_any_eeprom: the range must lie inside eeprom_len.
        if (module_eeprom_errno != 0) return -module_eeprom_errno;
        ethtool_eeprom eeprom;
        std::memcpy(&eeprom, bytes, sizeof(eeprom));
        eeprom_requests.emplace_back(eeprom.offset, eeprom.len);
        if (size_t{eeprom.offset} + eeprom.len > module_image.size()) return -EINVAL;
        std::memcpy(bytes + sizeof(eeprom), module_image.data() + eeprom.offset, eeprom.len);
        return 0;
      }
    }
    return -EOPNOTSUPP;
  }

  int IfIndex(const std::string&) override { return ifindex_errno != 0 ? -ifindex_errno : ifindex; }

  uint64_t ValueOf(const std::string& name) const {
    return 1000 * epoch + std::stoull(name.substr(name.rfind('_') + 1));
  }
  size_t Count(uint32_t command) const { return std::count(calls.begin(), calls.end(), command); }

  std::vector<std::string> names;
  uint64_t epoch = 1;
  bool checks_count = false;
  bool has_stats_set = true;
  int ifindex = 7;
  int ifindex_errno = 0;
  int sset_info_errno = 0;
  int gstats_errno = 0;
  int tunable_errno = 0;
  uint16_t tunable_value = 0;
  struct {
    uint32_t id, type_id, len;
  } last_tunable{};
  // Module EEPROM: GMODULEINFO answers module_type and module_image.size().
  uint32_t module_type = 0;
  std::vector<uint8_t> module_image;
  int modinfo_errno = EOPNOTSUPP;  // a driver without module ops (veth)
  int module_eeprom_errno = 0;
  std::vector<std::pair<uint32_t, uint32_t>> eeprom_requests;  // GMODULEEEPROM (offset, len)
  std::function<void(uint32_t)> before;  // runs before each call: the driver changing under us
  std::vector<uint32_t> calls;
  std::set<std::string> netdevs;
};

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

std::vector<uint8_t> Pattern(size_t size, uint8_t identifier) {
  std::vector<uint8_t> image(size);
  for (size_t i = 0; i < size; ++i) image[i] = static_cast<uint8_t>(i * 7 + 3);
  if (size > 0) image[0] = identifier;
  return image;
}

struct LinearCase {
  const char* name;
  uint32_t type;
  size_t len;
  uint8_t identifier;
};

// gtest would print the raw bytes, padding included (uninitialised under valgrind).
void PrintTo(const LinearCase& c, std::ostream* os) { *os << c.name; }

class ModuleEepromIoctlTest : public testing::TestWithParam<LinearCase> {};

// The legacy linear layouts are the flat image (reference.md §3.1): returned whole, one read.
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

// ================================================================ module EEPROM, page selection

ModulePageRead Lower() { return ModulePageRead{0x50, 0, 0, 0, 128, 0}; }
ModulePageRead Upper(uint8_t page, uint16_t at, uint8_t i2c = 0x50) {
  return ModulePageRead{i2c, page, 0, 128, 128, at};
}

// `known` bytes with the given (address, value) pairs set and zeros elsewhere.
std::vector<uint8_t> Known(size_t size, std::initializer_list<std::pair<size_t, uint8_t>> set) {
  std::vector<uint8_t> bytes(size);
  for (auto [address, value] : set) bytes.at(address) = value;
  return bytes;
}

struct PlanCase {
  const char* name;
  std::vector<uint8_t> known;
  std::vector<ModulePageRead> want;
};

// gtest would print the raw bytes, padding included (uninitialised under valgrind).
void PrintTo(const PlanCase& c, std::ostream* os) { *os << c.name; }

class ModulePagesToReadTest : public testing::TestWithParam<PlanCase> {};

TEST_P(ModulePagesToReadTest, Plan) {
  const PlanCase& c = GetParam();
  const std::vector<ModulePageRead> plan = ModulePagesToRead(c.known);
  ASSERT_EQ(plan.size(), c.want.size());
  for (size_t i = 0; i < plan.size(); ++i) {
    EXPECT_EQ(plan[i], c.want[i]) << "entry " << i << ": i2c " << int{plan[i].i2c_address}
                                  << " page " << int{plan[i].page} << " offset "
                                  << int{plan[i].offset} << " at " << plan[i].image_offset;
  }
  // The kernel's rules (K net/ethtool/eeprom.c eeprom_parse_request) and the image's bounds.
  size_t end = 0;
  for (const ModulePageRead& read : plan) {
    EXPECT_GE(read.length, 1);
    EXPECT_LE(read.length, 128);
    EXPECT_TRUE(read.offset == 0 || read.offset == 128);
    EXPECT_LE(read.offset % 128 + read.length, 128) << "crosses the half-page boundary";
    if (read.page != 0) {
      EXPECT_EQ(read.offset, 128) << "page > 0 read from the lower half";
    }
    EXPECT_GE(read.image_offset, end) << "out of image order";
    end = read.image_offset + read.length;
  }
  EXPECT_LE(end, 768u);
}

INSTANTIATE_TEST_SUITE_P(
    Modules, ModulePagesToReadTest,
    testing::Values(
        PlanCase{"NothingKnownReadsTheLowerPage", {}, {Lower()}},
        PlanCase{
            "Sff8472WithoutDdm", Known(128, {{0, 0x03}, {92, 0x20}}), {Lower(), Upper(0, 128)}},
        PlanCase{
            "Sff8472WithDdm",
            Known(128, {{0, 0x03}, {92, 0x40}}),
            {Lower(), Upper(0, 128), ModulePageRead{0x51, 0, 0, 0, 128, 256}, Upper(0, 384, 0x51)}},
        PlanCase{"Sff8472DdmByteNotRead", Known(80, {{0, 0x03}}), {Lower(), Upper(0, 128)}},
        PlanCase{"Sff8636Flat", Known(128, {{0, 0x11}, {2, 0x04}}), {Lower(), Upper(0, 128)}},
        PlanCase{"Sff8636PagedPage00Unknown",
                 Known(128, {{0, 0x11}}),
                 {Lower(), Upper(0, 128), Upper(3, 512)}},
        PlanCase{"Sff8636PagedNoOptionalPages",
                 Known(256, {{0, 0x0D}, {195, 0x3f}}),
                 {Lower(), Upper(0, 128), Upper(3, 512)}},
        PlanCase{"Sff8636PagedPage01Only",
                 Known(256, {{0, 0x0C}, {195, 0x40}}),
                 {Lower(), Upper(0, 128), Upper(1, 256), Upper(3, 512)}},
        PlanCase{"Sff8636PagedPage02Only",
                 Known(256, {{0, 0x11}, {195, 0x80}}),
                 {Lower(), Upper(0, 128), Upper(2, 384), Upper(3, 512)}},
        PlanCase{"Sff8636PagedAllPages",
                 Known(256, {{0, 0x11}, {195, 0xc0}}),
                 {Lower(), Upper(0, 128), Upper(1, 256), Upper(2, 384), Upper(3, 512)}},
        PlanCase{"Sff8636FlatIgnoresOptions",
                 Known(256, {{0, 0x11}, {2, 0x04}, {195, 0xc0}}),
                 {Lower(), Upper(0, 128)}},
        PlanCase{"CmisFlat", Known(128, {{0, 0x18}, {2, 0x80}}), {Lower(), Upper(0, 128)}},
        PlanCase{"CmisPaged",
                 Known(128, {{0, 0x18}}),
                 {Lower(), Upper(0, 128), Upper(0x01, 256), Upper(0x02, 384), Upper(0x10, 512),
                  Upper(0x11, 640)}},
        PlanCase{"OsfpPaged",
                 Known(128, {{0, 0x19}, {2, 0x7f}}),
                 {Lower(), Upper(0, 128), Upper(0x01, 256), Upper(0x02, 384), Upper(0x10, 512),
                  Upper(0x11, 640)}},
        PlanCase{"UnknownIdentifier", Known(128, {{0, 0x00}}), {Lower(), Upper(0, 128)}},
        PlanCase{
            "AllOnesIdentifier", Known(128, {{0, 0xff}, {2, 0x00}}), {Lower(), Upper(0, 128)}}),
    [](const testing::TestParamInfo<PlanCase>& info) { return info.param.name; });

TEST(ModulePagesToReadTest, IdentifierGroupsMatchTheDecoder) {
  // SFF-8024 Table 4-1, as optics::ModuleTypeFromIdentifier groups them.
  for (int id = 0; id < 256; ++id) {
    const auto plan = ModulePagesToRead(Known(128, {{0, static_cast<uint8_t>(id)}}));
    size_t want = 2;
    if (id == 0x0C || id == 0x0D || id == 0x11) want = 3;  // + page 03h
    if (id == 0x18 || id == 0x19 || id == 0x1B || id == 0x1E || id == 0x1F || id == 0x20) want = 6;
    EXPECT_EQ(plan.size(), want) << "identifier " << id;
  }
}

// ================================================================ module EEPROM, image assembly

// A module behind the by-page op: 256 bytes per (i2c, page, bank), the lower half meaningful
// only for page 0. Byte values encode where they came from.
struct FakeModule {
  using Key = std::tuple<uint8_t, uint8_t, uint8_t>;  // i2c, page, bank
  std::map<Key, std::array<uint8_t, 256>> memory;
  std::map<Key, int> errnos;    // a page that fails
  size_t chunk = 128;           // bytes per answer: a driver that reads less than asked
  std::map<Key, size_t> limit;  // bytes a page answers before it reads 0 (a dying module)
  std::vector<ModulePageRead> reads;

  void Add(uint8_t i2c, uint8_t page, uint8_t bank = 0) {
    std::array<uint8_t, 256> bytes;
    for (size_t a = 0; a < bytes.size(); ++a) {
      bytes[a] = static_cast<uint8_t>(a + 37 * page + 91 * (i2c - 0x50) + 13 * bank + 1);
    }
    memory[{i2c, page, bank}] = bytes;
  }
  uint8_t& At(uint8_t i2c, uint8_t page, size_t address) {
    return memory.at({i2c, page, 0})[address];
  }
  // Expected image bytes of one half page.
  std::vector<uint8_t> Half(uint8_t i2c, uint8_t page, size_t offset) {
    const auto& bytes = memory.at({i2c, page, 0});
    return std::vector<uint8_t>(bytes.begin() + offset, bytes.begin() + offset + 128);
  }

  ModuleReader Reader() {
    return [this](const ModulePageRead& part) -> Result<std::vector<uint8_t>> {
      reads.push_back(part);
      const Key key{part.i2c_address, part.page, part.bank};
      if (auto e = errnos.find(key); e != errnos.end()) {
        return Error(FromErrno(e->second, "read"));
      }
      auto it = memory.find(key);
      if (it == memory.end()) return Error(FromErrno(EINVAL, "read"));  // kernel fallback range
      size_t n = std::min<size_t>(part.length, chunk);
      if (auto l = limit.find(key); l != limit.end()) {
        const size_t served = part.offset % 128;
        n = served >= l->second ? 0 : std::min(n, l->second - served);
      }
      return std::vector<uint8_t>(it->second.begin() + part.offset,
                                  it->second.begin() + part.offset + n);
    };
  }
};

std::vector<uint8_t> Concat(std::initializer_list<std::vector<uint8_t>> parts) {
  std::vector<uint8_t> out;
  for (const auto& part : parts) out.insert(out.end(), part.begin(), part.end());
  return out;
}

FakeModule Sfp(bool ddm) {
  FakeModule m;
  m.Add(0x50, 0);
  m.Add(0x51, 0);
  m.At(0x50, 0, 0) = 0x03;
  m.At(0x50, 0, 92) = ddm ? 0x68 : 0x00;
  return m;
}

TEST(ReadModuleImageTest, Sff8472WithDdmIsA0ThenA2) {
  for (size_t chunk : {size_t{128}, size_t{32}, size_t{1}}) {
    FakeModule m = Sfp(true);
    m.chunk = chunk;
    auto image = ReadModuleImage(m.Reader());
    ASSERT_TRUE(image) << image.error().ToString();
    EXPECT_EQ(*image, Concat({m.Half(0x50, 0, 0), m.Half(0x50, 0, 128), m.Half(0x51, 0, 0),
                              m.Half(0x51, 0, 128)}));
    EXPECT_EQ(m.reads.size(), 4 * (128 / chunk)) << "chunk " << chunk;
    for (const ModulePageRead& read : m.reads) {
      EXPECT_LE(read.offset % 128 + read.length, 128);
    }
  }
}

TEST(ReadModuleImageTest, Sff8472WithoutDdmIsA0Only) {
  FakeModule m = Sfp(false);
  auto image = ReadModuleImage(m.Reader());
  ASSERT_TRUE(image) << image.error().ToString();
  EXPECT_EQ(*image, Concat({m.Half(0x50, 0, 0), m.Half(0x50, 0, 128)}));
  EXPECT_EQ(m.reads.size(), 2u);
}

FakeModule Qsfp(uint8_t status, uint8_t options) {
  FakeModule m;
  for (uint8_t page : {0, 1, 2, 3}) m.Add(0x50, page);
  m.At(0x50, 0, 0) = 0x11;
  m.At(0x50, 0, 2) = status;
  m.At(0x50, 0, 195) = options;
  return m;
}

TEST(ReadModuleImageTest, Sff8636PagedWithoutOptionalPagesKeepsPage03At512) {
  FakeModule m = Qsfp(0x00, 0x00);
  auto image = ReadModuleImage(m.Reader());
  ASSERT_TRUE(image) << image.error().ToString();
  ASSERT_EQ(image->size(), 640u);
  EXPECT_EQ(*image, Concat({m.Half(0x50, 0, 0), m.Half(0x50, 0, 128), std::vector<uint8_t>(256, 0),
                            m.Half(0x50, 3, 128)}));
  EXPECT_EQ(m.reads.size(), 3u);
}

TEST(ReadModuleImageTest, Sff8636PagedWithAllPages) {
  FakeModule m = Qsfp(0x00, 0xc0);
  auto image = ReadModuleImage(m.Reader());
  ASSERT_TRUE(image) << image.error().ToString();
  EXPECT_EQ(*image, Concat({m.Half(0x50, 0, 0), m.Half(0x50, 0, 128), m.Half(0x50, 1, 128),
                            m.Half(0x50, 2, 128), m.Half(0x50, 3, 128)}));
}

TEST(ReadModuleImageTest, Sff8636FlatIsTwoHalves) {
  FakeModule m = Qsfp(0x04, 0xc0);
  auto image = ReadModuleImage(m.Reader());
  ASSERT_TRUE(image) << image.error().ToString();
  EXPECT_EQ(image->size(), 256u);
}

TEST(ReadModuleImageTest, CmisPagedIsBank0Pages) {
  FakeModule m;
  for (uint8_t page : {0x00, 0x01, 0x02, 0x10, 0x11}) m.Add(0x50, page);
  m.Add(0x50, 0x11, 1);  // bank 1 exists, and is not read
  m.At(0x50, 0, 0) = 0x18;
  m.At(0x50, 0, 2) = 0x00;
  auto image = ReadModuleImage(m.Reader());
  ASSERT_TRUE(image) << image.error().ToString();
  EXPECT_EQ(*image,
            Concat({m.Half(0x50, 0, 0), m.Half(0x50, 0, 128), m.Half(0x50, 1, 128),
                    m.Half(0x50, 2, 128), m.Half(0x50, 0x10, 128), m.Half(0x50, 0x11, 128)}));
  for (const ModulePageRead& read : m.reads) EXPECT_EQ(read.bank, 0);
}

TEST(ReadModuleImageTest, LaterPageRefusedEndsTheImage) {
  // The kernel's fallback for a driver whose legacy eeprom_len is 256 refuses page 03h (EINVAL);
  // a by-page driver without a page answers EOPNOTSUPP (sfp.c: "Only page 0 supported").
  for (int err : {EINVAL, EOPNOTSUPP}) {
    FakeModule m = Qsfp(0x00, 0x00);
    m.errnos[{0x50, 3, 0}] = err;
    auto image = ReadModuleImage(m.Reader());
    ASSERT_TRUE(image) << image.error().ToString();
    EXPECT_EQ(*image, Concat({m.Half(0x50, 0, 0), m.Half(0x50, 0, 128)})) << err;
  }
}

TEST(ReadModuleImageTest, LaterPageFailureIsAnError) {
  FakeModule m = Sfp(true);
  m.errnos[{0x51, 0, 0}] = EIO;
  auto image = ReadModuleImage(m.Reader());
  ASSERT_FALSE(image);
  EXPECT_EQ(image.error().sys_errno(), EIO);
}

TEST(ReadModuleImageTest, LowerPageFailureIsReturnedAsIs) {
  for (int err : {EOPNOTSUPP, EINVAL, EPERM}) {
    FakeModule m = Sfp(true);
    m.errnos[{0x50, 0, 0}] = err;
    auto image = ReadModuleImage(m.Reader());
    ASSERT_FALSE(image);
    EXPECT_EQ(image.error(), FromErrno(err, "read"));
    EXPECT_EQ(m.reads.size(), 1u);
  }
}

TEST(ReadModuleImageTest, ShortAndEmptyAnswers) {
  {
    FakeModule m = Sfp(true);
    m.limit[{0x50, 0, 0}] = 0;  // the lower page reads nothing: no module answered
    auto image = ReadModuleImage(m.Reader());
    ASSERT_FALSE(image);
    EXPECT_EQ(image.error().code(), StatusCode::kNoData) << image.error().ToString();
  }
  {
    FakeModule m = Qsfp(0x00, 0x00);
    m.limit[{0x50, 3, 0}] = 0;  // page 03h reads nothing: it is absent, no zero gap is added
    auto image = ReadModuleImage(m.Reader());
    ASSERT_TRUE(image) << image.error().ToString();
    EXPECT_EQ(image->size(), 256u);
  }
  {
    FakeModule m = Sfp(true);
    m.chunk = 50;
    m.limit[{0x51, 0, 0}] = 100;  // A2h lower half stops after 100 bytes: the image ends there
    auto image = ReadModuleImage(m.Reader());
    ASSERT_TRUE(image) << image.error().ToString();
    ASSERT_EQ(image->size(), 356u);
    const auto a2 = m.Half(0x51, 0, 0);
    EXPECT_TRUE(std::equal(a2.begin(), a2.begin() + 100, image->begin() + 256));
  }
}

TEST(ReadModuleImageTest, OverlongAnswerIsMalformed) {
  auto image = ReadModuleImage([](const ModulePageRead& part) {
    return Result<std::vector<uint8_t>>(std::vector<uint8_t>(part.length + 1u, 0x03));
  });
  ASSERT_FALSE(image);
  EXPECT_EQ(image.error().code(), StatusCode::kInvalidArgument);
}

// ================================================================ module EEPROM, error mapping

Status WithExtack(int err, const std::string& extack) {
  Status s = FromErrno(err, "netdev eth0: ethtool netlink MODULE_EEPROM_GET");
  if (extack.empty()) return s;
  return Status(s.code(), s.message() + " (kernel: " + extack + ")", err);
}

TEST(ModuleEepromErrorStatusTest, NoModuleIsNoDataOnlyWhereTheDriverSaysSo) {
  struct Case {
    int err;
    std::string extack;
    bool first_read;
    bool netdev_exists;
    StatusCode want;
  };
  const std::vector<Case> cases = {
      {ENODEV, "", true, true, StatusCode::kNoData},   // sfp.c: no module present
      {ENODEV, "", false, true, StatusCode::kNoData},  // unplugged while being read
      {ENODEV, "no device matches name", true, false, StatusCode::kNotFound},
      {EIO, "", true, true, StatusCode::kNoData},     // mlx5 MCIA on an empty cage
      {EIO, "", false, true, StatusCode::kInternal},  // a module that fails mid-read
      {ENXIO, "", true, true, StatusCode::kNoData},   // I2C address not ACKed
      {EREMOTEIO, "", true, true, StatusCode::kNoData},
      {EINVAL, "bnxt_en: Transceiver module not inserted", true, true, StatusCode::kNoData},
      {EINVAL, "reading cross half page boundary is illegal", true, true,
       StatusCode::kInvalidArgument},
      {EOPNOTSUPP, "", true, true, StatusCode::kUnimplemented},  // no module ops at all
      {EPERM, "", true, true, StatusCode::kPermissionDenied},    // no CAP_NET_ADMIN
      {EBUSY, "Module firmware flashing is in progress", true, true, StatusCode::kUnavailable},
  };
  for (const Case& c : cases) {
    const Status in = WithExtack(c.err, c.extack);
    const Status out = ModuleEepromErrorStatus(in, c.first_read, c.netdev_exists);
    EXPECT_EQ(out.code(), c.want) << in.ToString() << " first=" << c.first_read;
    EXPECT_EQ(out.sys_errno(), c.err);
    EXPECT_EQ(out.message().rfind(in.message(), 0), 0u) << "the cause must stay in the message";
  }
}

// ================================================================ netlink reply parsers

using Msg = std::unique_ptr<nl_msg, decltype(&nlmsg_free)>;

// A reply as the kernel builds it: genl header, request-header nest, then the payload.
Msg GenlReply(uint8_t cmd) {
  Msg msg(nlmsg_alloc(), &nlmsg_free);
  genlmsg_put(msg.get(), 1234, 5, 0x1d, 0, 0, cmd, 1);
  nlattr* header = nla_nest_start(msg.get(), 1);
  nla_put_u32(msg.get(), 1, 3);          // ETHTOOL_A_HEADER_DEV_INDEX
  nla_put_string(msg.get(), 2, "eth0");  // ETHTOOL_A_HEADER_DEV_NAME
  nla_nest_end(msg.get(), header);
  return msg;
}

void PutPad(nl_msg* msg, int type) { nla_put(msg, type, 0, nullptr); }
// The kernel keeps empty nests; libnl's nla_nest_end() drops them, so put one by hand.
void PutEmptyNest(nl_msg* msg, int type) { nla_put(msg, type | NLA_F_NESTED, 0, nullptr); }

void PutU64Array(nl_msg* msg, int type, const std::vector<uint64_t>& values) {
  nla_put(msg, type, static_cast<int>(values.size() * 8), values.data());
}

constexpr uint8_t kPauseReply = 22, kFecReply = 30, kLinkstateReply = 6;

TEST(EthtoolParseTest, PauseStats) {
  Msg msg = GenlReply(kPauseReply);
  nla_put_u8(msg.get(), 2, 0);  // AUTONEG
  nla_put_u8(msg.get(), 3, 1);  // RX
  nla_put_u8(msg.get(), 4, 1);  // TX
  nlattr* stats = nla_nest_start(msg.get(), 5);
  PutPad(msg.get(), 1);
  nla_put_u64(msg.get(), 2, 0x1'0000'0001ull);
  PutPad(msg.get(), 1);
  nla_put_u64(msg.get(), 3, 77);
  nla_nest_end(msg.get(), stats);
  auto pause = ParsePauseReply(nlmsg_hdr(msg.get()));
  ASSERT_TRUE(pause) << pause.error().ToString();
  EXPECT_EQ(pause->tx_frames, std::optional<uint64_t>(0x1'0000'0001ull));
  EXPECT_EQ(pause->rx_frames, std::optional<uint64_t>(77));
}

TEST(EthtoolParseTest, PauseStatsPartialEmptyAndAbsent) {
  Msg partial = GenlReply(kPauseReply);
  nlattr* stats = nla_nest_start(partial.get(), 5);
  nla_put_u64(partial.get(), 3, 9);
  nla_nest_end(partial.get(), stats);
  auto one = ParsePauseReply(nlmsg_hdr(partial.get()));
  ASSERT_TRUE(one);
  EXPECT_FALSE(one->tx_frames);
  EXPECT_EQ(one->rx_frames, std::optional<uint64_t>(9));

  Msg empty = GenlReply(kPauseReply);  // get_pauseparam without get_pause_stats
  PutEmptyNest(empty.get(), 5);
  auto none = ParsePauseReply(nlmsg_hdr(empty.get()));
  ASSERT_TRUE(none);
  EXPECT_FALSE(none->tx_frames);
  EXPECT_FALSE(none->rx_frames);

  Msg absent = GenlReply(kPauseReply);  // kernel without pause stats
  nla_put_u8(absent.get(), 3, 1);
  auto unsupported = ParsePauseReply(nlmsg_hdr(absent.get()));
  ASSERT_FALSE(unsupported);
  EXPECT_EQ(unsupported.error().code(), StatusCode::kUnimplemented);

  Msg wrong = GenlReply(kFecReply);
  EXPECT_EQ(ParsePauseReply(nlmsg_hdr(wrong.get())).error().code(), StatusCode::kInvalidArgument);

  Msg short_counter = GenlReply(kPauseReply);
  stats = nla_nest_start(short_counter.get(), 5);
  nla_put_u32(short_counter.get(), 2, 1);
  nla_nest_end(short_counter.get(), stats);
  EXPECT_EQ(ParsePauseReply(nlmsg_hdr(short_counter.get())).error().code(),
            StatusCode::kInvalidArgument);
}

TEST(EthtoolParseTest, FecWithLanes) {
  Msg msg = GenlReply(kFecReply);
  nla_put_u8(msg.get(), 3, 0);    // AUTO
  nla_put_u32(msg.get(), 4, 50);  // ACTIVE = ETHTOOL_LINK_MODE_FEC_RS_BIT
  nlattr* stats = nla_nest_start(msg.get(), 5);
  PutPad(msg.get(), 1);
  PutU64Array(msg.get(), 2, {100, 10, 20, 30, 40});
  PutU64Array(msg.get(), 3, {3, 0, 1, 2, 0});
  PutU64Array(msg.get(), 4, {1ull << 40});  // total only: the driver has no per-lane split
  nla_nest_end(msg.get(), stats);
  auto fec = ParseFecReply(nlmsg_hdr(msg.get()));
  ASSERT_TRUE(fec) << fec.error().ToString();
  EXPECT_EQ(fec->active_mode, "rs");
  EXPECT_EQ(fec->corrected_blocks, (std::vector<uint64_t>{100, 10, 20, 30, 40}));
  EXPECT_EQ(fec->uncorrectable_blocks, (std::vector<uint64_t>{3, 0, 1, 2, 0}));
  EXPECT_EQ(fec->corrected_bits, (std::vector<uint64_t>{1ull << 40}));
}

TEST(EthtoolParseTest, FecModesEmptyArraysAndMalformed) {
  EXPECT_EQ(FecModeName(49), "none");
  EXPECT_EQ(FecModeName(50), "rs");
  EXPECT_EQ(FecModeName(51), "baser");
  EXPECT_EQ(FecModeName(74), "llrs");
  EXPECT_EQ(FecModeName(0), "");

  Msg empty = GenlReply(kFecReply);  // no ACTIVE, stats with 0-length arrays (no get_fec_stats)
  nlattr* stats = nla_nest_start(empty.get(), 5);
  PutU64Array(empty.get(), 2, {});
  PutU64Array(empty.get(), 3, {});
  PutU64Array(empty.get(), 4, {});
  nla_nest_end(empty.get(), stats);
  auto fec = ParseFecReply(nlmsg_hdr(empty.get()));
  ASSERT_TRUE(fec) << fec.error().ToString();
  EXPECT_EQ(fec->active_mode, "");
  EXPECT_TRUE(fec->corrected_blocks.empty());
  EXPECT_TRUE(fec->uncorrectable_blocks.empty());
  EXPECT_TRUE(fec->corrected_bits.empty());

  Msg unknown = GenlReply(kFecReply);  // a mode bit newer than this build; no stats nest
  nla_put_u32(unknown.get(), 4, 99);
  auto mode_only = ParseFecReply(nlmsg_hdr(unknown.get()));
  ASSERT_TRUE(mode_only);
  EXPECT_EQ(mode_only->active_mode, "");

  Msg odd = GenlReply(kFecReply);
  stats = nla_nest_start(odd.get(), 5);
  const uint8_t twelve[12] = {};
  nla_put(odd.get(), 2, sizeof(twelve), twelve);
  nla_nest_end(odd.get(), stats);
  EXPECT_EQ(ParseFecReply(nlmsg_hdr(odd.get())).error().code(), StatusCode::kInvalidArgument);
}

TEST(EthtoolParseTest, LinkStateWithAndWithoutExtDownCount) {
  Msg with = GenlReply(kLinkstateReply);
  nla_put_u8(with.get(), 2, 1);    // LINK
  nla_put_u32(with.get(), 7, 42);  // EXT_DOWN_CNT (6.2+)
  auto up = ParseLinkStateReply(nlmsg_hdr(with.get()));
  ASSERT_TRUE(up) << up.error().ToString();
  EXPECT_EQ(up->link, std::optional<bool>(true));
  EXPECT_EQ(up->ext_down_count, std::optional<uint32_t>(42));
  EXPECT_FALSE(up->ext_state);

  Msg without = GenlReply(kLinkstateReply);
  nla_put_u8(without.get(), 2, 0);
  nla_put_u8(without.get(), 5, 4);  // EXT_STATE = NO_CABLE
  nla_put_u8(without.get(), 6, 1);  // EXT_SUBSTATE
  auto down = ParseLinkStateReply(nlmsg_hdr(without.get()));
  ASSERT_TRUE(down) << down.error().ToString();
  EXPECT_EQ(down->link, std::optional<bool>(false));
  EXPECT_FALSE(down->ext_down_count);
  EXPECT_EQ(down->ext_state, std::optional<uint8_t>(4));

  Msg unknown = GenlReply(kLinkstateReply);  // the driver cannot tell
  auto none = ParseLinkStateReply(nlmsg_hdr(unknown.get()));
  ASSERT_TRUE(none);
  EXPECT_FALSE(none->link);
}

// ---------------------------------------------------------------- STATS_GET (standard counters)

constexpr uint8_t kStatsReply = 33;  // ETHTOOL_MSG_STATS_GET_REPLY
// Reply attributes (UAPI linux/ethtool_netlink.h enum ETHTOOL_A_STATS_*, _GRP_*).
constexpr int kStatsGrp = 4, kGrpPad = 1, kGrpId = 2, kGrpSsId = 3, kGrpStat = 4, kGrpHistRx = 5,
              kGrpHistTx = 6, kHistBktLow = 7, kHistBktHi = 8, kHistVal = 9;

// A STATS_GET reply as K net/ethtool/stats.c stats_fill_reply() builds it: the request header
// echo (attribute 2 here), ETHTOOL_A_STATS_SRC (6.3+), then one ETHTOOL_A_STATS_GRP per group.
Msg StatsReply() {
  Msg msg(nlmsg_alloc(), &nlmsg_free);
  genlmsg_put(msg.get(), 1234, 5, 0x1d, 0, 0, kStatsReply, 1);
  nlattr* header = nla_nest_start(msg.get(), 2);
  nla_put_u32(msg.get(), 1, 3);
  nla_put_string(msg.get(), 2, "eth0");
  nla_nest_end(msg.get(), header);
  nla_put_u32(msg.get(), 5, 0);  // ETHTOOL_A_STATS_SRC = aggregate
  return msg;
}

// One group: GRP_ID, GRP_SS_ID (ETH_SS_STATS_ETH_PHY + id), then each counter in its own
// GRP_STAT nest holding one u64 whose type is the index, a zero-length GRP_PAD before each (as
// kernels without efficient unaligned access emit). `before_counters` adds attributes first.
void PutGroup(nl_msg* msg, uint32_t id, const std::vector<std::pair<int, uint64_t>>& counters,
              const std::function<void(nl_msg*)>& before_counters = nullptr) {
  nlattr* grp = nla_nest_start(msg, kStatsGrp);
  nla_put_u32(msg, kGrpId, id);
  nla_put_u32(msg, kGrpSsId, 17 + id);
  if (before_counters) before_counters(msg);
  for (auto [index, value] : counters) {
    PutPad(msg, kGrpPad);
    nlattr* stat = nla_nest_start(msg, kGrpStat);
    nla_put_u64(msg, index, value);
    nla_nest_end(msg, stat);
  }
  nla_nest_end(msg, grp);
}

// RMON histogram buckets, as stats_put_rmon_hist() emits them before the rmon counters.
void PutHistogram(nl_msg* msg, int type, uint32_t low, uint32_t high, uint64_t value) {
  nlattr* hist = nla_nest_start(msg, type);
  nla_put_u32(msg, kHistBktLow, low);
  nla_put_u32(msg, kHistBktHi, high);
  PutPad(msg, kGrpPad);
  nla_put_u64(msg, kHistVal, value);
  nla_nest_end(msg, hist);
}

std::vector<std::tuple<std::string, std::string, uint64_t>> Flatten(
    const std::vector<StandardStat>& stats) {
  std::vector<std::tuple<std::string, std::string, uint64_t>> out;
  for (const StandardStat& stat : stats) {
    out.emplace_back(std::string(stat.group), std::string(stat.name), stat.value);
  }
  return out;
}

TEST(EthtoolStandardStatsParseTest, AllFourGroupsWithPadsAndHistograms) {
  Msg msg = StatsReply();
  PutGroup(msg.get(), 0, {{0, 5}});
  PutGroup(msg.get(), 1,
           {{0, 1000}, {3, 2000}, {4, 7}, {6, 0xFFFF'FFFF'FFFFull}, {12, 1ull << 40}, {21, 9}});
  PutGroup(msg.get(), 2, {{0, 11}, {1, 12}, {2, 13}});
  PutGroup(msg.get(), 3, {{0, 21}, {1, 22}, {2, 23}, {3, 24}}, [](nl_msg* m) {
    PutHistogram(m, kGrpHistRx, 0, 64, 100);
    PutHistogram(m, kGrpHistRx, 65, 127, 200);
    PutHistogram(m, kGrpHistTx, 1519, 0, 300);
  });
  uint64_t skipped = 0;
  auto stats = ParseStandardStatsReply(nlmsg_hdr(msg.get()), &skipped);
  ASSERT_TRUE(stats) << stats.error().ToString();
  using T = std::tuple<std::string, std::string, uint64_t>;
  EXPECT_EQ(Flatten(*stats), (std::vector<T>{
                                 T{"eth-phy", "SymbolErrorDuringCarrier", 5},
                                 T{"eth-mac", "FramesTransmittedOK", 1000},
                                 T{"eth-mac", "FramesReceivedOK", 2000},
                                 T{"eth-mac", "FrameCheckSequenceErrors", 7},
                                 T{"eth-mac", "OctetsTransmittedOK", 0xFFFF'FFFF'FFFFull},
                                 T{"eth-mac", "OctetsReceivedOK", 1ull << 40},
                                 T{"eth-mac", "FrameTooLongErrors", 9},
                                 T{"eth-ctrl", "MACControlFramesTransmitted", 11},
                                 T{"eth-ctrl", "MACControlFramesReceived", 12},
                                 T{"eth-ctrl", "UnsupportedOpcodesReceived", 13},
                                 T{"rmon", "etherStatsUndersizePkts", 21},
                                 T{"rmon", "etherStatsOversizePkts", 22},
                                 T{"rmon", "etherStatsFragments", 23},
                                 T{"rmon", "etherStatsJabbers", 24},
                             }));
  EXPECT_EQ(skipped, 0u);
  // The views point at static storage: they outlive the message.
  const std::string_view first = (*stats)[0].name;
  msg.reset();
  EXPECT_EQ(first, "SymbolErrorDuringCarrier");
}

TEST(EthtoolStandardStatsParseTest, NameTablesMatchTheKernelStringSets) {
  // K net/ethtool/stats.c stats_eth_mac_names, indexed by enum ETHTOOL_A_STATS_ETH_MAC_*.
  const std::vector<std::string> mac = {"FramesTransmittedOK",
                                        "SingleCollisionFrames",
                                        "MultipleCollisionFrames",
                                        "FramesReceivedOK",
                                        "FrameCheckSequenceErrors",
                                        "AlignmentErrors",
                                        "OctetsTransmittedOK",
                                        "FramesWithDeferredXmissions",
                                        "LateCollisions",
                                        "FramesAbortedDueToXSColls",
                                        "FramesLostDueToIntMACXmitError",
                                        "CarrierSenseErrors",
                                        "OctetsReceivedOK",
                                        "FramesLostDueToIntMACRcvError",
                                        "MulticastFramesXmittedOK",
                                        "BroadcastFramesXmittedOK",
                                        "FramesWithExcessiveDeferral",
                                        "MulticastFramesReceivedOK",
                                        "BroadcastFramesReceivedOK",
                                        "InRangeLengthErrors",
                                        "OutOfRangeLengthField",
                                        "FrameTooLongErrors"};
  for (uint32_t i = 0; i < mac.size(); ++i) EXPECT_EQ(StandardStatName(1, i), mac[i]) << i;
  EXPECT_EQ(StandardStatName(1, 22), "");
  EXPECT_EQ(StandardStatName(0, 0), "SymbolErrorDuringCarrier");
  EXPECT_EQ(StandardStatName(0, 1), "");
  EXPECT_EQ(StandardStatName(2, 2), "UnsupportedOpcodesReceived");
  EXPECT_EQ(StandardStatName(2, 3), "");
  EXPECT_EQ(StandardStatName(3, 3), "etherStatsJabbers");
  EXPECT_EQ(StandardStatName(3, 4), "");
  EXPECT_EQ(StandardStatName(4, 0), "");  // "phydev" (6.16+) is not requested
  EXPECT_EQ(StandardStatsGroupName(0), "eth-phy");
  EXPECT_EQ(StandardStatsGroupName(3), "rmon");
  EXPECT_EQ(StandardStatsGroupName(4), "");
}

TEST(EthtoolStandardStatsParseTest, UnknownIndicesAndGroupsAreSkippedAndCounted) {
  Msg msg = StatsReply();
  PutGroup(msg.get(), 1, {{0, 1}, {22, 2}, {63, 3}, {21, 4}});  // 22, 63: a newer kernel's
  PutGroup(msg.get(), 4, {{0, 10}, {1, 11}});                   // "phydev" or later: no table
  PutGroup(msg.get(), 2, {});                                   // requested, driver fills none
  uint64_t skipped = 100;                                       // accumulates
  auto stats = ParseStandardStatsReply(nlmsg_hdr(msg.get()), &skipped);
  ASSERT_TRUE(stats) << stats.error().ToString();
  using T = std::tuple<std::string, std::string, uint64_t>;
  EXPECT_EQ(Flatten(*stats), (std::vector<T>{T{"eth-mac", "FramesTransmittedOK", 1},
                                             T{"eth-mac", "FrameTooLongErrors", 4}}));
  EXPECT_EQ(skipped, 104u);
  EXPECT_TRUE(ParseStandardStatsReply(nlmsg_hdr(msg.get())));  // the counter is optional

  Msg only_unknown = StatsReply();
  PutGroup(only_unknown.get(), 7, {{0, 1}});
  skipped = 0;
  auto none = ParseStandardStatsReply(nlmsg_hdr(only_unknown.get()), &skipped);
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().code(), StatusCode::kUnimplemented);
  EXPECT_NE(none.error().message().find("1 unknown"), std::string::npos) << none.error().ToString();
  EXPECT_EQ(skipped, 1u);
}

TEST(EthtoolStandardStatsParseTest, EmptyRepliesAreUnimplemented) {
  Msg no_groups = StatsReply();  // kernel < 5.13 never gets here; a reply without groups
  auto none = ParseStandardStatsReply(nlmsg_hdr(no_groups.get()));
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().code(), StatusCode::kUnimplemented);
  EXPECT_NE(none.error().message().find("no statistics groups"), std::string::npos);

  Msg empty_groups = StatsReply();  // what veth and virtio_net get: every group, no counter
  for (uint32_t id = 0; id < 4; ++id) PutGroup(empty_groups.get(), id, {});
  auto empty = ParseStandardStatsReply(nlmsg_hdr(empty_groups.get()));
  ASSERT_FALSE(empty);
  EXPECT_EQ(empty.error().code(), StatusCode::kUnimplemented);
  EXPECT_NE(empty.error().message().find("fills none"), std::string::npos);

  Msg bare(nlmsg_alloc(), &nlmsg_free);  // no attributes at all
  genlmsg_put(bare.get(), 1234, 5, 0x1d, 0, 0, kStatsReply, 1);
  EXPECT_EQ(ParseStandardStatsReply(nlmsg_hdr(bare.get())).error().code(),
            StatusCode::kUnimplemented);
}

TEST(EthtoolStandardStatsParseTest, MalformedRepliesAreErrorsNotCrashes) {
  auto code = [](const Msg& msg) {
    auto parsed = ParseStandardStatsReply(nlmsg_hdr(msg.get()));
    return parsed ? StatusCode::kOk : parsed.error().code();
  };
  Msg wrong = GenlReply(kFecReply);
  EXPECT_EQ(code(wrong), StatusCode::kInvalidArgument);

  // A u64 counter cut to 4 bytes.
  Msg short_counter = StatsReply();
  nlattr* grp = nla_nest_start(short_counter.get(), kStatsGrp);
  nla_put_u32(short_counter.get(), kGrpId, 1);
  nlattr* stat = nla_nest_start(short_counter.get(), kGrpStat);
  nla_put_u32(short_counter.get(), 4, 7);
  nla_nest_end(short_counter.get(), stat);
  nla_nest_end(short_counter.get(), grp);
  auto parsed = ParseStandardStatsReply(nlmsg_hdr(short_counter.get()));
  ASSERT_FALSE(parsed);
  EXPECT_EQ(parsed.error().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(parsed.error().message().find("counter 4 of group 1 has 4 bytes"), std::string::npos)
      << parsed.error().ToString();

  // Also in a group this build does not know: the reply is malformed either way.
  Msg short_unknown = StatsReply();
  grp = nla_nest_start(short_unknown.get(), kStatsGrp);
  nla_put_u32(short_unknown.get(), kGrpId, 9);
  stat = nla_nest_start(short_unknown.get(), kGrpStat);
  nla_put_u8(short_unknown.get(), 0, 1);
  nla_nest_end(short_unknown.get(), stat);
  nla_nest_end(short_unknown.get(), grp);
  EXPECT_EQ(code(short_unknown), StatusCode::kInvalidArgument);

  Msg no_id = StatsReply();
  PutGroup(no_id.get(), 1, {{0, 1}});
  grp = nla_nest_start(no_id.get(), kStatsGrp);
  stat = nla_nest_start(no_id.get(), kGrpStat);
  nla_put_u64(no_id.get(), 0, 1);
  nla_nest_end(no_id.get(), stat);
  nla_nest_end(no_id.get(), grp);
  EXPECT_EQ(code(no_id), StatusCode::kInvalidArgument);

  Msg short_id = StatsReply();
  grp = nla_nest_start(short_id.get(), kStatsGrp);
  nla_put_u16(short_id.get(), kGrpId, 1);
  nla_nest_end(short_id.get(), grp);
  EXPECT_EQ(code(short_id), StatusCode::kInvalidArgument);

  // The message cut at every length: malformed, or, where the cut falls between two whole
  // top-level attributes, a shorter answer (no group yet: kUnimplemented; after the first group:
  // its counters). Never a read past nlmsg_len: each copy is exactly that long, so valgrind would
  // flag one.
  Msg full = StatsReply();
  PutGroup(full.get(), 1, {{0, 1}, {3, 2}});
  PutGroup(full.get(), 3, {{0, 3}}, [](nl_msg* m) { PutHistogram(m, kGrpHistRx, 0, 64, 4); });
  const nlmsghdr* hdr = nlmsg_hdr(full.get());
  auto whole = ParseStandardStatsReply(hdr);
  ASSERT_TRUE(whole) << whole.error().ToString();
  ASSERT_EQ(whole->size(), 3u);
  std::map<StatusCode, int> outcomes;
  int shorter = 0;
  for (uint32_t cut = NLMSG_HDRLEN; cut < hdr->nlmsg_len; ++cut) {
    auto copy = std::make_unique<char[]>(cut);
    std::memcpy(copy.get(), hdr, cut);
    auto* truncated = reinterpret_cast<nlmsghdr*>(copy.get());
    truncated->nlmsg_len = cut;
    auto result = ParseStandardStatsReply(truncated);
    if (result) {
      ++shorter;
      EXPECT_EQ(Flatten(*result),
                Flatten(std::vector<StandardStat>(whole->begin(), whole->begin() + 2)))
          << cut;
    } else {
      ++outcomes[result.error().code()];
      EXPECT_TRUE(result.error().code() == StatusCode::kInvalidArgument ||
                  result.error().code() == StatusCode::kUnimplemented)
          << cut << ": " << result.error().ToString();
    }
  }
  EXPECT_EQ(shorter, 1) << "only the cut right after the eth-mac group";
  EXPECT_GT(outcomes[StatusCode::kInvalidArgument], 50);
}

TEST(EthtoolStandardStatsRequestTest, HeaderNestAndCompactGroupsBitset) {
  NlMessage msg = BuildStandardStatsRequest(0x1d, "eth0");
  ASSERT_TRUE(msg);
  const nlmsghdr* hdr = nlmsg_hdr(msg.get());
  EXPECT_EQ(hdr->nlmsg_type, 0x1d);
  EXPECT_EQ(hdr->nlmsg_flags & (NLM_F_REQUEST | NLM_F_DUMP), NLM_F_REQUEST);
  const auto* genl = static_cast<const genlmsghdr*>(nlmsg_data(hdr));
  EXPECT_EQ(genl->cmd, 32);  // ETHTOOL_MSG_STATS_GET
  EXPECT_EQ(genl->version, 1);

  // Top level, in order: header nest (2), groups bitset nest (3); nothing else.
  std::vector<int> types;
  const nlattr* header = nullptr;
  const nlattr* groups = nullptr;
  const nlattr* attr;
  int rem;
  nla_for_each_attr(attr, genlmsg_attrdata(genl, 0), genlmsg_attrlen(genl, 0), rem) {
    types.push_back(attr->nla_type);
    if (nla_type(attr) == 2) header = attr;
    if (nla_type(attr) == 3) groups = attr;
  }
  EXPECT_EQ(rem, 0);
  // NLA_F_NESTED on both: the kernel's strict nested parsing rejects a nest without it.
  EXPECT_EQ(types, (std::vector<int>{2 | NLA_F_NESTED, 3 | NLA_F_NESTED}));
  ASSERT_NE(header, nullptr);
  ASSERT_NE(groups, nullptr);

  std::array<nlattr*, 4> h{};
  ASSERT_EQ(nla_parse_nested(h.data(), 3, const_cast<nlattr*>(header), nullptr), 0);
  ASSERT_NE(h[2], nullptr);
  EXPECT_STREQ(static_cast<const char*>(nla_data(h[2])), "eth0");  // DEV_NAME
  EXPECT_EQ(h[1], nullptr);                                        // no DEV_INDEX
  EXPECT_EQ(h[3], nullptr);  // no FLAGS: ETHTOOL_FLAG_STATS is EINVAL for STATS_GET

  std::array<nlattr*, 6> b{};  // enum ETHTOOL_A_BITSET_*
  ASSERT_EQ(nla_parse_nested(b.data(), 5, const_cast<nlattr*>(groups), nullptr), 0);
  ASSERT_NE(b[1], nullptr);  // NOMASK flag
  EXPECT_EQ(nla_len(b[1]), 0);
  ASSERT_NE(b[2], nullptr);  // SIZE
  EXPECT_EQ(nla_get_u32(b[2]), 4u);
  EXPECT_EQ(b[3], nullptr);  // no BITS list: compact form
  ASSERT_NE(b[4], nullptr);  // VALUE: one u32 word
  ASSERT_EQ(nla_len(b[4]), 4);
  uint32_t value;
  std::memcpy(&value, nla_data(b[4]), sizeof(value));
  EXPECT_EQ(value, 0xfu);
  EXPECT_EQ(b[5], nullptr);  // no MASK with NOMASK
}

TEST(ModuleEepromParseTest, DataIsReturnedAsSent) {
  constexpr uint8_t kModuleEepromReply = 32;  // ETHTOOL_MSG_MODULE_EEPROM_GET_REPLY
  std::vector<uint8_t> bytes(128);
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>(255 - i);
  {
    Msg msg = GenlReply(kModuleEepromReply);
    nla_put(msg.get(), 7, static_cast<int>(bytes.size()), bytes.data());  // _DATA
    auto data = ParseModuleEepromReply(nlmsg_hdr(msg.get()), 128);
    ASSERT_TRUE(data) << data.error().ToString();
    EXPECT_EQ(*data, bytes);
  }
  {  // a driver that read less than asked (odd length: the attribute is padded)
    Msg msg = GenlReply(kModuleEepromReply);
    nla_put(msg.get(), 7, 33, bytes.data());
    auto data = ParseModuleEepromReply(nlmsg_hdr(msg.get()), 128);
    ASSERT_TRUE(data) << data.error().ToString();
    EXPECT_EQ(*data, std::vector<uint8_t>(bytes.begin(), bytes.begin() + 33));
  }
  {  // nothing read
    Msg msg = GenlReply(kModuleEepromReply);
    nla_put(msg.get(), 7, 0, nullptr);
    auto data = ParseModuleEepromReply(nlmsg_hdr(msg.get()), 128);
    ASSERT_TRUE(data) << data.error().ToString();
    EXPECT_TRUE(data->empty());
  }
}

TEST(ModuleEepromParseTest, MalformedRepliesAreErrors) {
  std::vector<uint8_t> bytes(129, 0x11);
  Msg no_data = GenlReply(32);
  Msg too_long = GenlReply(32);
  nla_put(too_long.get(), 7, 65, bytes.data());
  Msg wrong_cmd = GenlReply(30);
  nla_put(wrong_cmd.get(), 7, 8, bytes.data());
  Msg short_msg(nlmsg_alloc_simple(0x1d, 0), &nlmsg_free);
  for (auto [name, msg] :
       {std::pair{"no data", no_data.get()}, std::pair{"too long", too_long.get()},
        std::pair{"wrong command", wrong_cmd.get()},
        std::pair{"no genl header", short_msg.get()}}) {
    auto data = ParseModuleEepromReply(nlmsg_hdr(msg), 64);
    ASSERT_FALSE(data) << name;
    EXPECT_EQ(data.error().code(), StatusCode::kInvalidArgument) << name;
  }
}

TEST(ModuleEepromRequestTest, HeaderNestAndAllAddressAttributes) {
  NlMessage msg =
      BuildModuleEepromRequest(0x1d, "eth0", ModulePageRead{0x50, 0x11, 0, 128, 96, 640});
  ASSERT_TRUE(msg);
  const nlmsghdr* hdr = nlmsg_hdr(msg.get());
  EXPECT_EQ(hdr->nlmsg_type, 0x1d);
  EXPECT_EQ(hdr->nlmsg_flags & (NLM_F_REQUEST | NLM_F_DUMP), NLM_F_REQUEST);
  const auto* genl = static_cast<const genlmsghdr*>(nlmsg_data(hdr));
  EXPECT_EQ(genl->cmd, 31);  // ETHTOOL_MSG_MODULE_EEPROM_GET
  EXPECT_EQ(genl->version, 1);
  std::vector<int> types;
  const nlattr* attr;
  int rem;
  nla_for_each_attr(attr, genlmsg_attrdata(genl, 0), genlmsg_attrlen(genl, 0), rem) {
    types.push_back(attr->nla_type);
  }
  EXPECT_EQ(rem, 0);
  EXPECT_EQ(types, (std::vector<int>{1 | NLA_F_NESTED, 2, 3, 4, 5, 6}));
  std::array<nlattr*, 8> tb{};
  ASSERT_EQ(genlmsg_parse(const_cast<nlmsghdr*>(hdr), 0, tb.data(), 7, nullptr), 0);
  std::array<nlattr*, 4> h{};
  ASSERT_EQ(nla_parse_nested(h.data(), 3, tb[1], nullptr), 0);
  ASSERT_NE(h[2], nullptr);
  EXPECT_STREQ(static_cast<const char*>(nla_data(h[2])), "eth0");
  EXPECT_EQ(h[3], nullptr);  // no flags
  EXPECT_EQ(nla_len(tb[2]), 4);
  EXPECT_EQ(nla_get_u32(tb[2]), 128u);  // OFFSET
  EXPECT_EQ(nla_get_u32(tb[3]), 96u);   // LENGTH
  EXPECT_EQ(nla_len(tb[4]), 1);
  EXPECT_EQ(nla_get_u8(tb[4]), 0x11);  // PAGE
  EXPECT_EQ(nla_get_u8(tb[5]), 0);     // BANK
  EXPECT_EQ(nla_get_u8(tb[6]), 0x50);  // I2C_ADDRESS
  EXPECT_EQ(tb[7], nullptr);
}

Msg DcbReply(uint8_t cmd) {
  Msg msg(nlmsg_alloc_simple(RTM_GETDCB, 0), &nlmsg_free);
  dcbmsg header{};
  header.dcb_family = AF_UNSPEC;
  header.cmd = cmd;
  nlmsg_append(msg.get(), &header, sizeof(header), NLMSG_ALIGNTO);
  nla_put_string(msg.get(), DCB_ATTR_IFNAME, "eth0");
  return msg;
}

TEST(DcbParseTest, IeeePfc) {
  Msg msg = DcbReply(DCB_CMD_IEEE_GET);
  nlattr* ieee = nla_nest_start(msg.get(), DCB_ATTR_IEEE);
  ieee_ets ets{};
  nla_put(msg.get(), DCB_ATTR_IEEE_ETS, sizeof(ets), &ets);
  ieee_pfc pfc{};
  pfc.pfc_cap = 8;
  pfc.pfc_en = 0x08;  // priority 3
  for (int i = 0; i < 8; ++i) {
    pfc.requests[i] = 100 + i;
    pfc.indications[i] = 200 + i;
  }
  nla_put(msg.get(), DCB_ATTR_IEEE_PFC, sizeof(pfc), &pfc);
  nla_nest_end(msg.get(), ieee);
  auto config = ParseDcbIeeeReply(nlmsg_hdr(msg.get()));
  ASSERT_TRUE(config) << config.error().ToString();
  EXPECT_EQ(config->pfc_cap, 8);
  EXPECT_EQ(config->enabled_mask, 0x08);
  ASSERT_TRUE(config->requests);
  ASSERT_TRUE(config->indications);
  EXPECT_EQ(*config->requests, (std::vector<uint64_t>{100, 101, 102, 103, 104, 105, 106, 107}));
  EXPECT_EQ(*config->indications, (std::vector<uint64_t>{200, 201, 202, 203, 204, 205, 206, 207}));
}

TEST(DcbParseTest, ShortMissingAndWrong) {
  Msg short_pfc = DcbReply(DCB_CMD_IEEE_GET);  // only pfc_cap..delay: no counters
  nlattr* ieee = nla_nest_start(short_pfc.get(), DCB_ATTR_IEEE);
  const uint8_t head[8] = {4, 0x81, 0, 0, 0, 0, 0, 0};
  nla_put(short_pfc.get(), DCB_ATTR_IEEE_PFC, sizeof(head), head);
  nla_nest_end(short_pfc.get(), ieee);
  auto config = ParseDcbIeeeReply(nlmsg_hdr(short_pfc.get()));
  ASSERT_TRUE(config) << config.error().ToString();
  EXPECT_EQ(config->pfc_cap, 4);
  EXPECT_EQ(config->enabled_mask, 0x81);
  EXPECT_FALSE(config->requests);
  EXPECT_FALSE(config->indications);

  Msg no_pfc = DcbReply(DCB_CMD_IEEE_GET);  // CEE-only driver: IEEE nest without PFC
  PutEmptyNest(no_pfc.get(), DCB_ATTR_IEEE);
  EXPECT_EQ(ParseDcbIeeeReply(nlmsg_hdr(no_pfc.get())).error().code(), StatusCode::kUnimplemented);

  Msg no_ieee = DcbReply(DCB_CMD_IEEE_GET);
  EXPECT_EQ(ParseDcbIeeeReply(nlmsg_hdr(no_ieee.get())).error().code(), StatusCode::kUnimplemented);

  Msg wrong = DcbReply(DCB_CMD_GDCBX);
  EXPECT_EQ(ParseDcbIeeeReply(nlmsg_hdr(wrong.get())).error().code(), StatusCode::kInvalidArgument);
}

// NLMSG_ERROR as net/netlink/af_netlink.c netlink_ack() builds it.
Msg ErrorMessage(int error, bool capped, const char* extack) {
  uint16_t flags = 0;
  if (capped) flags |= NLM_F_CAPPED;
  if (extack != nullptr) flags |= NLM_F_ACK_TLVS;
  Msg msg(nlmsg_alloc_simple(NLMSG_ERROR, flags), &nlmsg_free);
  const uint8_t request_payload[6] = {1, 2, 3, 4, 5, 6};  // echoed unless capped
  nlmsgerr err{};
  err.error = error;
  err.msg.nlmsg_len = NLMSG_LENGTH(sizeof(request_payload));
  err.msg.nlmsg_type = 0x1d;
  nlmsg_append(msg.get(), &err, sizeof(err), NLMSG_ALIGNTO);
  if (!capped)
    nlmsg_append(msg.get(), const_cast<uint8_t*>(request_payload), sizeof(request_payload),
                 NLMSG_ALIGNTO);
  if (extack != nullptr) {
    nla_put_string(msg.get(), NLMSGERR_ATTR_MSG, extack);
    nla_put_u32(msg.get(), NLMSGERR_ATTR_OFFS, 20);
  }
  return msg;
}

TEST(NetlinkParseTest, ErrorWithExtack) {
  for (bool capped : {true, false}) {
    Msg msg = ErrorMessage(-EINVAL, capped, "ETHTOOL_A_HEADER_FLAGS: reserved bit set");
    auto error = ParseNetlinkError(nlmsg_hdr(msg.get()));
    ASSERT_TRUE(error) << capped;
    EXPECT_EQ(error->error, -EINVAL);
    EXPECT_EQ(error->extack, "ETHTOOL_A_HEADER_FLAGS: reserved bit set") << capped;
  }
  Msg plain = ErrorMessage(-EOPNOTSUPP, true, nullptr);
  auto error = ParseNetlinkError(nlmsg_hdr(plain.get()));
  ASSERT_TRUE(error);
  EXPECT_EQ(error->error, -EOPNOTSUPP);
  EXPECT_EQ(error->extack, "");

  Msg ack = ErrorMessage(0, true, nullptr);
  EXPECT_EQ(ParseNetlinkError(nlmsg_hdr(ack.get()))->error, 0);

  Msg not_error = DcbReply(DCB_CMD_IEEE_GET);
  EXPECT_FALSE(ParseNetlinkError(nlmsg_hdr(not_error.get())));
}

TEST(NetlinkParseTest, GenlFamilyId) {
  Msg msg(nlmsg_alloc(), &nlmsg_free);
  genlmsg_put(msg.get(), 0, 1, GENL_ID_CTRL, 0, 0, CTRL_CMD_NEWFAMILY, 2);
  nla_put_string(msg.get(), CTRL_ATTR_FAMILY_NAME, "ethtool");
  nla_put_u16(msg.get(), CTRL_ATTR_FAMILY_ID, 0x1d);
  auto id = ParseGenlFamilyId(nlmsg_hdr(msg.get()));
  ASSERT_TRUE(id) << id.error().ToString();
  EXPECT_EQ(*id, 0x1d);

  Msg missing(nlmsg_alloc(), &nlmsg_free);
  genlmsg_put(missing.get(), 0, 1, GENL_ID_CTRL, 0, 0, CTRL_CMD_NEWFAMILY, 2);
  EXPECT_FALSE(ParseGenlFamilyId(nlmsg_hdr(missing.get())));
}

// ================================================================ real kernel: veth in netns

// Runs a shell command; returns its exit status and combined output.
std::pair<int, std::string> Shell(const std::string& command) {
  std::string output;
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return {-1, std::strerror(errno)};
  char buffer[4096];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof(buffer), pipe)) > 0) output.append(buffer, n);
  int status = ::pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, output};
}

// `ethtool -S` output → (name, value) in order. Lines are "     <name>: <value>".
std::vector<std::pair<std::string, uint64_t>> ParseEthtoolS(const std::string& text) {
  std::vector<std::pair<std::string, uint64_t>> out;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    std::string line = text.substr(start, end - start);
    start = end + 1;
    size_t colon = line.rfind(": ");
    if (colon == std::string::npos) continue;  // "NIC statistics:"
    size_t first = line.find_first_not_of(" \t");
    out.emplace_back(line.substr(first, colon - first), std::stoull(line.substr(colon + 2)));
  }
  return out;
}

// Runs `body` on a thread that joined network namespace `ns` (setns is per thread), so every socket
// the body opens lives there; the test's own thread stays in the host namespace.
void InNetns(const std::string& ns, const std::function<void()>& body) {
  std::thread thread([&] {
    UniqueFd fd(::open(("/run/netns/" + ns).c_str(), O_RDONLY | O_CLOEXEC));
    ASSERT_TRUE(fd.valid()) << "open /run/netns/" << ns << ": " << std::strerror(errno);
    ASSERT_EQ(::setns(fd.get(), CLONE_NEWNET), 0) << "setns " << ns << ": " << std::strerror(errno);
    body();
  });
  thread.join();
}

bool KernelAtLeast(int major, int minor) {
  utsname name{};
  if (::uname(&name) != 0) return false;
  int have_major = 0, have_minor = 0;
  if (std::sscanf(name.release, "%d.%d", &have_major, &have_minor) != 2) return false;
  return have_major > major || (have_major == major && have_minor >= minor);
}

// Counts the ethtool commands that reach the real kernel.
class CountingIoctl final : public EthtoolIoctl {
 public:
  explicit CountingIoctl(std::unique_ptr<EthtoolIoctl> inner) : inner_(std::move(inner)) {}
  int Call(const std::string& netdev, void* cmd) override {
    uint32_t command;
    std::memcpy(&command, cmd, sizeof(command));
    ++counts[command];
    return inner_->Call(netdev, cmd);
  }
  int IfIndex(const std::string& netdev) override { return inner_->IfIndex(netdev); }
  std::map<uint32_t, int> counts;

 private:
  std::unique_ptr<EthtoolIoctl> inner_;
};

// Two private namespaces joined by a veth pair: fwt<pid>a in ns A (169.254.77.1/30), fwt<pid>b in
// ns B (169.254.77.2/30). Nothing is added to the host's namespace; deleting the namespaces removes
// the pair. GRO on A and TSO off on B route B→A traffic through veth's NAPI path, the one that
// moves veth's ethtool counters (K drivers/net/veth.c veth_xdp_rcv).
class VethNetnsTest : public testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "needs root to create network namespaces";
    const std::string pid = std::to_string(::getpid());
    ns_a_ = "fwtk" + pid + "a";
    ns_b_ = "fwtk" + pid + "b";
    veth_a_ = "fwt" + pid + "a";
    veth_b_ = "fwt" + pid + "b";
    auto [rc, out] = Shell("ip netns add " + ns_a_);
    if (rc != 0) GTEST_SKIP() << "ip netns add failed (" << rc << "): " << out;
    created_a_ = true;
    ASSERT_EQ(Shell("ip netns add " + ns_b_).first, 0);
    created_b_ = true;
    for (const std::string& command :
         {"ip -n " + ns_a_ + " link add " + veth_a_ + " type veth peer name " + veth_b_ +
              " netns " + ns_b_,
          "ip -n " + ns_a_ + " addr add 169.254.77.1/30 dev " + veth_a_,
          "ip -n " + ns_b_ + " addr add 169.254.77.2/30 dev " + veth_b_,
          "ip -n " + ns_a_ + " link set " + veth_a_ + " up",
          "ip -n " + ns_b_ + " link set " + veth_b_ + " up"}) {
      auto [status, output] = Shell(command);
      if (status != 0 && command.find("link add") != std::string::npos) {
        GTEST_SKIP() << "cannot create a veth pair: " << output;
      }
      ASSERT_EQ(status, 0) << command << ": " << output;
    }
    has_ethtool_ = Shell("command -v ethtool").first == 0;
    if (has_ethtool_) {
      Shell("ip netns exec " + ns_a_ + " ethtool -K " + veth_a_ + " gro on");
      Shell("ip netns exec " + ns_b_ + " ethtool -K " + veth_b_ + " tso off");
    }
  }

  void TearDown() override {
    if (created_a_) Shell("ip netns del " + ns_a_);
    if (created_b_) Shell("ip netns del " + ns_b_);
  }

  // UDP datagrams from ns B to A's address until `stop`; returns the number sent.
  std::thread StartTraffic(std::atomic<bool>& stop, std::atomic<int>& sent) {
    return std::thread([this, &stop, &sent] {
      InNetns(ns_b_, [&] {
        UniqueFd fd(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
        ASSERT_TRUE(fd.valid());
        sockaddr_in to{};
        to.sin_family = AF_INET;
        to.sin_port = htons(9);  // discard; nobody listens, A answers port-unreachable
        ::inet_pton(AF_INET, "169.254.77.1", &to.sin_addr);
        const char payload[200] = {};
        while (!stop.load()) {
          if (::sendto(fd.get(), payload, sizeof(payload), 0, reinterpret_cast<sockaddr*>(&to),
                       sizeof(to)) > 0) {
            ++sent;
          }
          std::this_thread::sleep_for(std::chrono::microseconds(500));
        }
      });
    });
  }

  std::string ns_a_, ns_b_, veth_a_, veth_b_;
  bool created_a_ = false, created_b_ = false, has_ethtool_ = false;
};

TEST_F(VethNetnsTest, StatisticsEqualEthtoolDashS) {
  if (!has_ethtool_)
    GTEST_SKIP() << "the ethtool program is not installed (apt-get install ethtool)";
  std::atomic<bool> stop{false};
  std::atomic<int> sent{0};
  std::thread traffic = StartTraffic(stop, sent);
  struct StopTraffic {  // also when an assertion returns early
    ~StopTraffic() {
      stop = true;
      thread.join();
    }
    std::atomic<bool>& stop;
    std::thread& thread;
  } stop_traffic{stop, traffic};
  InNetns(ns_a_, [&] {
    auto counting = std::make_unique<CountingIoctl>(SocketEthtoolIoctl::Open().value());
    CountingIoctl* counts = counting.get();
    KernelEthtool source(std::move(counting));
    // Wait for the counters to move, so the bounds below are exercised on live values.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (sent.load() < 200 && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    const std::string ethtool_s = "ip netns exec " + ns_a_ + " ethtool -S " + veth_a_;
    int compared = 0, moved = 0;
    uint64_t xdp_packets = 0;
    for (int round = 0; round < 3; ++round) {
      auto [rc1, before_text] = Shell(ethtool_s);
      auto ours = source.Statistics(veth_a_);
      auto [rc2, after_text] = Shell(ethtool_s);
      ASSERT_EQ(rc1, 0) << before_text;
      ASSERT_EQ(rc2, 0) << after_text;
      ASSERT_TRUE(ours) << ours.error().ToString();
      auto before = ParseEthtoolS(before_text);
      auto after = ParseEthtoolS(after_text);
      ASSERT_EQ(before.size(), ours->size()) << before_text;
      ASSERT_EQ(after.size(), ours->size()) << after_text;
      for (size_t i = 0; i < ours->size(); ++i) {
        const EthtoolStat& stat = (*ours)[i];
        EXPECT_EQ(stat.name, before[i].first);
        EXPECT_EQ(stat.name, after[i].first);
        EXPECT_LE(before[i].second, stat.value) << stat.name;
        EXPECT_LE(stat.value, after[i].second) << stat.name;
        ++compared;
        if (before[i].second != after[i].second) ++moved;
      }
      for (const EthtoolStat& stat : *ours) {
        if (stat.name == "rx_queue_0_xdp_packets") xdp_packets = stat.value;
      }
    }
    std::printf(
        "[ veth     ] %s: %d values compared in 3 rounds, %d moved between the "
        "two "
        "ethtool -S reads; rx_queue_0_xdp_packets=%llu after %d datagrams\n",
        veth_a_.c_str(), compared, moved, static_cast<unsigned long long>(xdp_packets),
        sent.load());
    EXPECT_GT(compared, 0);
    // Three calls, one string table.
    EXPECT_EQ(counts->counts[ETHTOOL_GSTRINGS], 1);
    EXPECT_EQ(counts->counts[ETHTOOL_GSTATS], 3);
  });
}

TEST_F(VethNetnsTest, UnsupportedRequestsAreQuietUnimplemented) {
  InNetns(ns_a_, [&] {
    auto created = KernelEthtool::Create();
    ASSERT_TRUE(created) << created.error().ToString();
    KernelEthtool& source = **created;
    // Twice: the second pass runs with the family resolved and the stats-flag decision cached.
    struct Pass {
      Result<PauseStats> pause;
      Result<FecStats> fec;
      Result<PfcConfig> pfc;
      Result<uint32_t> tout;
      Result<LinkState> link;
    };
    std::vector<Pass> passes;
    testing::internal::CaptureStderr();
    testing::internal::CaptureStdout();
    for (int pass = 0; pass < 2; ++pass) {
      passes.push_back({source.Pause(veth_a_), source.Fec(veth_a_), source.Pfc(veth_a_),
                        source.PfcStormTimeoutMs(veth_a_), source.LinkStateOf(veth_a_)});
    }
    std::string err = testing::internal::GetCapturedStderr();
    std::string out = testing::internal::GetCapturedStdout();
    EXPECT_EQ(err, "") << "nothing may be printed for an unsupported request";
    EXPECT_EQ(out, "");
    auto unimplemented = [&](const auto& result, std::string_view what) {
      ASSERT_FALSE(result.has_value()) << what;
      EXPECT_EQ(result.error().code(), StatusCode::kUnimplemented) << result.error().ToString();
      EXPECT_NE(result.error().message().find(veth_a_), std::string::npos)
          << result.error().ToString();
    };
    for (const Pass& pass : passes) {
      unimplemented(pass.pause, "pause");
      unimplemented(pass.fec, "fec");
      unimplemented(pass.pfc, "pfc");
      unimplemented(pass.tout, "pfc storm timeout");
      // veth implements get_link: a success, with no ext_down_cnt (no get_link_ext_stats).
      ASSERT_TRUE(pass.link) << pass.link.error().ToString();
      EXPECT_TRUE(pass.link->link.has_value());
      EXPECT_FALSE(pass.link->ext_down_count.has_value());
    }
  });
}

// LINKINFO_GET's header policy has no ETHTOOL_FLAG_STATS (K net/ethtool/linkinfo.c uses
// ethnl_header_policy), as LINKSTATE_GET's had before 6.2: the kernel says EINVAL, the request is
// repeated once without the flag, and the flag is not tried again for that command.
TEST_F(VethNetnsTest, StatsFlagRejectedWithEinvalIsRetriedWithoutAndRemembered) {
  constexpr uint8_t kLinkinfoGet = 2;  // ETHTOOL_MSG_LINKINFO_GET (UAPI linux/ethtool_netlink.h)
  InNetns(ns_a_, [&] {
    auto created = KernelEthtool::Create();
    ASSERT_TRUE(created) << created.error().ToString();
    KernelEthtool& source = **created;
    ASSERT_TRUE(source.LinkStateOf(veth_a_));  // resolves the family
    const uint64_t start = source.netlink_requests();
    auto first = source.EthtoolGetForTesting(veth_a_, kLinkinfoGet);
    ASSERT_TRUE(first) << first.error().ToString();
    EXPECT_FALSE(*first);
    EXPECT_EQ(source.netlink_requests() - start, 2u) << "flagged request, then one without";
    auto second = source.EthtoolGetForTesting(veth_a_, kLinkinfoGet);
    ASSERT_TRUE(second) << second.error().ToString();
    EXPECT_FALSE(*second);
    EXPECT_EQ(source.netlink_requests() - start, 3u) << "the flag is not tried again";
    // Commands that accept the flag keep it (LINKSTATE_GET since 6.2, PAUSE_GET since 5.10).
    constexpr uint8_t kLinkstateGet = 6;
    auto linkstate = source.EthtoolGetForTesting(veth_a_, kLinkstateGet);
    ASSERT_TRUE(linkstate) << linkstate.error().ToString();
    if (KernelAtLeast(6, 2)) {
      EXPECT_TRUE(*linkstate);
    }
  });
}

// veth has no module ops: MODULE_EEPROM_GET answers EOPNOTSUPP (the kernel's fallback finds no
// get_module_info either, K net/ethtool/eeprom.c), and so does the ioctl. Quiet kUnimplemented.
TEST_F(VethNetnsTest, ModuleEepromIsQuietUnimplemented) {
  InNetns(ns_a_, [&] {
    auto created = KernelEthtool::Create();
    ASSERT_TRUE(created) << created.error().ToString();
    KernelEthtool& source = **created;
    std::vector<Result<std::vector<uint8_t>>> results;
    testing::internal::CaptureStderr();
    testing::internal::CaptureStdout();
    for (int pass = 0; pass < 2; ++pass) results.push_back(source.ModuleEeprom(veth_a_));
    const uint64_t requests = source.netlink_requests();
    auto missing = source.ModuleEeprom(veth_b_);  // in the other namespace
    std::string err = testing::internal::GetCapturedStderr();
    std::string out = testing::internal::GetCapturedStdout();
    EXPECT_EQ(err, "") << "nothing may be printed for an unsupported request";
    EXPECT_EQ(out, "");
    for (const auto& result : results) {
      ASSERT_FALSE(result.has_value());
      EXPECT_EQ(result.error().code(), StatusCode::kUnimplemented) << result.error().ToString();
      EXPECT_EQ(result.error().sys_errno(), EOPNOTSUPP);
      EXPECT_NE(result.error().message().find(veth_a_), std::string::npos);
    }
    // EOPNOTSUPP from both paths never switches modules to the ioctl: netlink is asked each time.
    EXPECT_GE(requests, 3u);  // family + one MODULE_EEPROM_GET per call
    ASSERT_FALSE(missing.has_value());
    EXPECT_EQ(missing.error().code(), StatusCode::kNotFound) << missing.error().ToString();
    std::printf("[ veth     ] %s: ModuleEeprom -> %s\n", veth_a_.c_str(),
                results[0].error().ToString().c_str());
  });
}

// Netlink EOPNOTSUPP while the ioctl reads a module (a kernel without MODULE_EEPROM_GET): the
// ioctl's image is returned, and netlink is not asked for modules again.
TEST_F(VethNetnsTest, ModuleEepromFallsBackToTheIoctl) {
  InNetns(ns_a_, [&] {
    auto owned = std::make_unique<FakeDriver>(0);
    FakeDriver* driver = owned.get();
    driver->modinfo_errno = 0;
    driver->module_type = ETH_MODULE_SFF_8472;
    driver->module_image = Pattern(512, 0x03);
    KernelEthtool source(std::move(owned));
    auto first = source.ModuleEeprom(veth_a_);
    ASSERT_TRUE(first) << first.error().ToString();
    EXPECT_EQ(*first, driver->module_image);
    const uint64_t requests = source.netlink_requests();
    EXPECT_GE(requests, 1u);
    auto second = source.ModuleEeprom(veth_a_);
    ASSERT_TRUE(second) << second.error().ToString();
    EXPECT_EQ(source.netlink_requests(), requests);
    EXPECT_EQ(driver->Count(ETHTOOL_GMODULEINFO), 2u);
  });
}

TEST_F(VethNetnsTest, LinkStateFollowsCarrier) {
  InNetns(ns_a_, [&] {
    auto source = KernelEthtool::Create();
    ASSERT_TRUE(source) << source.error().ToString();
    auto wait_for = [&](bool want) {
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
      std::optional<bool> link;
      do {
        auto state = (*source)->LinkStateOf(veth_a_);
        EXPECT_TRUE(state) << state.error().ToString();
        if (state) link = state->link;
        if (link == want) return true;
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
      } while (std::chrono::steady_clock::now() < deadline);
      return false;
    };
    EXPECT_TRUE(wait_for(true));
    ASSERT_EQ(Shell("ip -n " + ns_b_ + " link set " + veth_b_ + " down").first, 0);
    EXPECT_TRUE(wait_for(false));
  });
}

TEST_F(VethNetnsTest, MissingNetdevIsNotFound) {
  InNetns(ns_a_, [&] {
    auto created = KernelEthtool::Create();
    ASSERT_TRUE(created) << created.error().ToString();
    KernelEthtool& source = **created;
    const std::string missing = "fwtmissing0";
    EXPECT_EQ(source.Statistics(missing).error().code(), StatusCode::kNotFound);
    EXPECT_EQ(source.Pause(missing).error().code(), StatusCode::kNotFound);
    EXPECT_EQ(source.Fec(missing).error().code(), StatusCode::kNotFound);
    EXPECT_EQ(source.LinkStateOf(missing).error().code(), StatusCode::kNotFound);
    EXPECT_EQ(source.Pfc(missing).error().code(), StatusCode::kNotFound);
    EXPECT_EQ(source.PfcStormTimeoutMs(missing).error().code(), StatusCode::kNotFound);
    // The host's netdev names do not leak in: the sockets live in ns A.
    EXPECT_TRUE(source.Statistics(veth_a_));
    EXPECT_EQ(source.Statistics(veth_b_).error().code(), StatusCode::kNotFound);
  });
}

// ================================================================ real kernel: STATS_GET

// `ethtool -S <dev> --all-groups` (ethtool netlink/stats.c parse_grp) prints one line per counter,
// "<group>-<name>: <value>", with names from the kernel's string sets; RMON histogram lines start
// with "rx-"/"tx-", and newer groups ("phydev") have other prefixes: both are left out here.
std::map<std::string, uint64_t> ParseEthtoolStandardStats(const std::string& text) {
  std::map<std::string, uint64_t> out;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(start, end - start);
    start = end + 1;
    const size_t colon = line.rfind(": ");
    if (colon == std::string::npos) continue;  // "Standard stats for eth0:"
    const std::string key = line.substr(0, colon);
    for (const char* group : {"eth-phy-", "eth-mac-", "eth-ctrl-", "rmon-"}) {
      if (key.rfind(group, 0) == 0) out[key] = std::stoull(line.substr(colon + 2));
    }
  }
  return out;
}

std::string Key(const StandardStat& stat) {
  return std::string(stat.group) + "-" + std::string(stat.name);
}

TEST_F(VethNetnsTest, StandardStatsOnVethAreQuietUnimplemented) {
  InNetns(ns_a_, [&] {
    auto created = KernelEthtool::Create();
    ASSERT_TRUE(created) << created.error().ToString();
    KernelEthtool& source = **created;
    testing::internal::CaptureStderr();
    testing::internal::CaptureStdout();
    // Twice: the second request runs with the family resolved.
    auto first = source.StandardStats(veth_a_);
    auto second = source.StandardStats(veth_a_);
    std::string err = testing::internal::GetCapturedStderr();
    std::string out = testing::internal::GetCapturedStdout();
    EXPECT_EQ(err, "");
    EXPECT_EQ(out, "");
    for (const auto* result : {&first, &second}) {
      // veth has no get_eth_*_stats / get_rmon_stats: the kernel answers every requested group
      // empty, which is "not supported" here, never an error. (A driver that fills counters would
      // make this an OK result.)
      if (result->has_value()) {
        ADD_FAILURE() << "veth reported " << (*result)->size() << " standard counters";
        continue;
      }
      EXPECT_EQ(result->error().code(), StatusCode::kUnimplemented) << result->error().ToString();
      EXPECT_NE(result->error().message().find(veth_a_), std::string::npos)
          << result->error().ToString();
      EXPECT_NE(result->error().message().find("STATS_GET"), std::string::npos)
          << result->error().ToString();
    }
    std::printf("[ veth     ] %s: StandardStats -> %s\n", veth_a_.c_str(),
                first ? "OK" : first.error().ToString().c_str());
    EXPECT_EQ(source.standard_stats_skipped(), 0u);

    // A missing netdev is kNotFound (ENODEV from the request header), with the request named.
    auto missing = source.StandardStats("fwtmissing0");
    ASSERT_FALSE(missing);
    EXPECT_EQ(missing.error().code(), StatusCode::kNotFound) << missing.error().ToString();
    EXPECT_NE(missing.error().message().find("fwtmissing0: ethtool netlink STATS_GET"),
              std::string::npos)
        << missing.error().ToString();
    EXPECT_EQ(source.StandardStats("a-name-longer-than-ifnamsiz").error().code(),
              StatusCode::kNotFound);
    // The host's netdevs are not visible from ns A.
    EXPECT_EQ(source.StandardStats(veth_b_).error().code(), StatusCode::kNotFound);
  });
}

// The host's own NIC (FABRICWATCH_TEST_NETDEV, default eth0) against the ethtool program: the same
// counters, each between the values ethtool printed just before and just after. A driver without
// standard statistics (virtio_net) must be kUnimplemented, with ethtool printing no counter.
TEST(EthtoolStandardStatsHostTest, MatchesEthtoolCli) {
  const char* env = std::getenv("FABRICWATCH_TEST_NETDEV");
  const std::string netdev = env != nullptr && *env != '\0' ? env : "eth0";
  if (::if_nametoindex(netdev.c_str()) == 0) GTEST_SKIP() << "no netdev " << netdev;
  if (Shell("command -v ethtool").first != 0) GTEST_SKIP() << "the ethtool program is missing";
  const std::string command = "ethtool -S " + netdev + " --all-groups";
  auto [rc_probe, probe] = Shell(command);
  if (rc_probe != 0) GTEST_SKIP() << command << " failed (ethtool < 5.13?): " << probe;

  auto created = KernelEthtool::Create();
  ASSERT_TRUE(created) << created.error().ToString();
  KernelEthtool& source = **created;
  int compared = 0;
  std::string outcome;
  for (int round = 0; round < 3; ++round) {
    auto [rc1, before_text] = Shell(command);
    const uint64_t skipped_before = source.standard_stats_skipped();
    auto ours = source.StandardStats(netdev);
    const uint64_t skipped = source.standard_stats_skipped() - skipped_before;
    auto [rc2, after_text] = Shell(command);
    ASSERT_EQ(rc1, 0) << before_text;
    ASSERT_EQ(rc2, 0) << after_text;
    const auto before = ParseEthtoolStandardStats(before_text);
    const auto after = ParseEthtoolStandardStats(after_text);
    if (!ours) {
      outcome = ours.error().ToString();
      EXPECT_EQ(ours.error().code(), StatusCode::kUnimplemented) << outcome;
      EXPECT_TRUE(before.empty() && after.empty())
          << "ethtool prints counters that StandardStats did not return:\n"
          << before_text;
      continue;
    }
    outcome = std::to_string(ours->size()) + " counters";
    std::map<std::string, uint64_t> mine;
    for (const StandardStat& stat : *ours) {
      EXPECT_TRUE(mine.emplace(Key(stat), stat.value).second) << "duplicate " << Key(stat);
    }
    // Every counter ethtool prints for the four groups is ours (unless this build does not know
    // its index), and ours are all printed by ethtool.
    EXPECT_EQ(mine.size() + skipped, before.size()) << before_text;
    for (const auto& [key, value] : mine) {
      auto b = before.find(key);
      auto a = after.find(key);
      ASSERT_TRUE(b != before.end() && a != after.end()) << key << " not printed by ethtool";
      EXPECT_LE(b->second, value) << key;
      EXPECT_LE(value, a->second) << key;
      ++compared;
    }
  }
  std::printf("[ host     ] %s: StandardStats -> %s; %d values compared with ethtool\n",
              netdev.c_str(), outcome.c_str(), compared);
}

// The host's own NIC (FABRICWATCH_TEST_NETDEV, default eth0). virtio_net has no module ops: the
// answer must be kUnimplemented. On other drivers what came back is printed, with `ethtool -m`.
TEST(ModuleEepromHostTest, HostNetdev) {
  const char* env = std::getenv("FABRICWATCH_TEST_NETDEV");
  const std::string netdev = env != nullptr && *env != '\0' ? env : "eth0";
  if (::if_nametoindex(netdev.c_str()) == 0) GTEST_SKIP() << "no netdev " << netdev;
  auto [rc, driver] =
      Shell("basename \"$(readlink -f /sys/class/net/" + netdev + "/device/driver)\"");
  while (!driver.empty() && driver.back() == '\n') driver.pop_back();
  if (rc != 0) driver.clear();
  auto created = KernelEthtool::Create();
  ASSERT_TRUE(created) << created.error().ToString();
  auto image = (*created)->ModuleEeprom(netdev);
  std::string cli = "(ethtool not installed)";
  if (Shell("command -v ethtool").first == 0) {
    auto [cli_rc, cli_out] = Shell("ethtool -m " + netdev);
    cli = "rc " + std::to_string(cli_rc) + ": " + cli_out.substr(0, cli_out.find('\n'));
  }
  std::printf(
      "[ host     ] %s (driver %s): ModuleEeprom -> %s; ethtool -m %s\n", netdev.c_str(),
      driver.c_str(),
      image ? (std::to_string(image->size()) + " bytes").c_str() : image.error().ToString().c_str(),
      cli.c_str());
  if (driver == "virtio_net") {
    ASSERT_FALSE(image);
    EXPECT_EQ(image.error().code(), StatusCode::kUnimplemented) << image.error().ToString();
  } else if (image) {
    EXPECT_FALSE(image->empty());
    EXPECT_LE(image->size(), 768u);
  }
}

}  // namespace
}  // namespace fabricwatch::sys
