#pragma once
// FakeDriver: a driver behind the EthtoolIoctl seam, for the tests of KernelEthtool's ioctl path
// (ethtool_ioctl_test.cc) and of its fallback from netlink to the ioctl (ethtool_kernel_test.cc).

#include <gtest/gtest.h>
#include <linux/ethtool.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "collectors/ethtool_source/ethtool_ioctl.h"

namespace fabricwatch::sys {

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
      case ETHTOOL_GLINKSETTINGS: {
        // K net/ethtool/ioctl.c ethtool_get_link_ksettings: a request whose nwords is not the
        // kernel's gets the handshake answer (-nwords, every other field but cmd 0).
        if (link_errno != 0) return -link_errno;
        ethtool_link_settings settings;
        std::memcpy(&settings, bytes, sizeof(settings));
        const auto nwords = static_cast<int8_t>(link_words);
        if (settings.link_mode_masks_nwords != nwords) {
          ethtool_link_settings handshake{};
          handshake.cmd = command;
          handshake.link_mode_masks_nwords = static_cast<int8_t>(-nwords);
          std::memcpy(bytes, &handshake, sizeof(handshake));
          return 0;
        }
        ethtool_link_settings answer{};
        answer.cmd = command;
        answer.speed = link.speed;
        answer.duplex = link.duplex;
        answer.port = link.port;
        answer.autoneg = link.autoneg;
        answer.link_mode_masks_nwords = nwords;
        std::memcpy(bytes, &answer, sizeof(answer));
        for (size_t i = 0; i < 3 * link_words; ++i) {
          const uint32_t word = i < link_masks.size() ? link_masks[i] : 0;
          std::memcpy(bytes + sizeof(answer) + i * 4, &word, sizeof(word));
        }
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
  // Link settings: GLINKSETTINGS answers `link`'s fields with masks of link_words u32 each
  // (supported, advertising, lp_advertising, from link_masks).
  int link_errno = 0;
  size_t link_words = 4;  // __ETHTOOL_LINK_MODE_MASK_NU32 for 125 bits
  struct {
    uint32_t speed = 0;
    uint8_t duplex = 0, port = 0, autoneg = 0;
  } link;
  std::vector<uint32_t> link_masks;
  std::function<void(uint32_t)> before;  // runs before each call: the driver changing under us
  std::vector<uint32_t> calls;
  std::set<std::string> netdevs;
};

// A module image of `size` bytes whose byte 0 is `identifier` and the rest a pattern.
inline std::vector<uint8_t> Pattern(size_t size, uint8_t identifier) {
  std::vector<uint8_t> image(size);
  for (size_t i = 0; i < size; ++i) image[i] = static_cast<uint8_t>(i * 7 + 3);
  if (size > 0) image[0] = identifier;
  return image;
}

}  // namespace fabricwatch::sys
