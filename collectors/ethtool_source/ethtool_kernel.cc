#include "collectors/ethtool_source/ethtool_kernel.h"

#include <cerrno>
#include <cstdio>
#include <utility>

#include "collectors/ethtool_source/dcb.h"
#include "collectors/ethtool_source/ethtool_ioctl.h"
#include "collectors/ethtool_source/ethtool_module_pages.h"
#include "collectors/ethtool_source/ethtool_netlink.h"
#include "collectors/ethtool_source/ethtool_netlink_parse.h"
#include "collectors/ethtool_source/ethtool_netlink_uapi.h"

namespace fabricwatch::sys {

KernelEthtool::KernelEthtool(std::unique_ptr<EthtoolIoctl> ioctl)
    : ioctl_(std::move(ioctl)),
      statistics_(std::make_unique<EthtoolIoctlStatistics>(*ioctl_)),
      netlink_(std::make_unique<EthtoolNetlink>()) {}

KernelEthtool::~KernelEthtool() = default;

Result<std::unique_ptr<KernelEthtool>> KernelEthtool::Create() {
  auto ioctl = SocketEthtoolIoctl::Open();
  if (!ioctl) return Error(ioctl.error());
  auto source = std::make_unique<KernelEthtool>(std::move(*ioctl));
  // Opened now so that they belong to the caller's network namespace; a failure is retried on first
  // use and reported there.
  (void)source->netlink_->EnsureGenlSocket();
  (void)source->netlink_->EnsureRouteSocket();
  return source;
}

Status KernelEthtool::ReadStatistics(const std::string& netdev, std::vector<EthtoolStat>& stats) {
  if (!ValidNetdevName(netdev)) return BadNetdevName(netdev);
  return statistics_->Read(netdev, stats);
}

Result<PauseInfo> KernelEthtool::Pause(const std::string& netdev) {
  if (!ValidNetdevName(netdev)) return Error(BadNetdevName(netdev));
  auto reply = netlink_->EthtoolGet(netdev, kMsgPauseGet, "PAUSE_GET");
  if (!reply) {
    if (netlink_->family_missing()) return ReadPauseParamIoctl(*ioctl_, netdev);
    return Error(reply.error());
  }
  auto parsed = ParsePauseReply(*reply);
  if (!parsed) return Error(parsed.error().WithContext("netdev " + netdev));
  return parsed;
}

Result<FecStats> KernelEthtool::Fec(const std::string& netdev) {
  if (!ValidNetdevName(netdev)) return Error(BadNetdevName(netdev));
  auto reply = netlink_->EthtoolGet(netdev, kMsgFecGet, "FEC_GET");
  if (!reply) return Error(reply.error());
  auto parsed = ParseFecReply(*reply);
  if (!parsed) return Error(parsed.error().WithContext("netdev " + netdev));
  return parsed;
}

Result<LinkState> KernelEthtool::LinkStateOf(const std::string& netdev) {
  if (!ValidNetdevName(netdev)) return Error(BadNetdevName(netdev));
  auto reply = netlink_->EthtoolGet(netdev, kMsgLinkstateGet, "LINKSTATE_GET");
  if (!reply) return Error(reply.error());
  auto parsed = ParseLinkStateReply(*reply);
  if (!parsed) return Error(parsed.error().WithContext("netdev " + netdev));
  return parsed;
}

Result<LinkSettings> KernelEthtool::LinkSettingsOf(const std::string& netdev) {
  if (!ValidNetdevName(netdev)) return Error(BadNetdevName(netdev));
  auto modes =
      netlink_->EthtoolGetWithFlags(netdev, kMsgLinkmodesGet, "LINKMODES_GET", kFlagCompactBitsets);
  if (!modes) {
    if (netlink_->family_missing()) return ReadLinkSettingsIoctl(*ioctl_, netdev);
    return Error(modes.error());
  }
  // Parsed before the next request reuses the receive buffer.
  auto settings = ParseLinkModesReply(*modes);
  if (!settings) return Error(settings.error().WithContext("netdev " + netdev));
  auto info = netlink_->EthtoolGetWithFlags(netdev, kMsgLinkinfoGet, "LINKINFO_GET", 0);
  if (!info) {
    if (info.error().code() == StatusCode::kUnimplemented) return settings;  // port unknown
    return Error(info.error());
  }
  if (Status s = ParseLinkInfoReply(*info, *settings); !s.ok()) {
    return Error(s.WithContext("netdev " + netdev));
  }
  return settings;
}

Result<PfcConfig> KernelEthtool::Pfc(const std::string& netdev) {
  if (!ValidNetdevName(netdev)) return Error(BadNetdevName(netdev));
  const std::string context = "netdev " + netdev + ": rtnetlink RTM_GETDCB DCB_CMD_IEEE_GET";
  if (Status s = netlink_->EnsureRouteSocket(); !s.ok()) return Error(s.WithContext(context));
  NlMessage msg = BuildDcbIeeeRequest(netdev);
  if (!msg) return Error(StatusCode::kInternal, context + ": cannot build the request");
  auto reply = netlink_->RouteTransact(msg.get(), context);
  if (!reply) return Error(reply.error());
  auto parsed = ParseDcbIeeeReply(*reply);
  if (!parsed) return Error(parsed.error().WithContext("netdev " + netdev));
  return parsed;
}

Result<std::vector<StandardStat>> KernelEthtool::StandardStats(const std::string& netdev) {
  if (!ValidNetdevName(netdev)) return Error(BadNetdevName(netdev));
  auto reply = netlink_->StandardStatsGet(netdev);
  if (!reply) return Error(reply.error());
  auto parsed = ParseStandardStatsReply(*reply, &standard_stats_skipped_);
  if (!parsed) return Error(parsed.error().WithContext("netdev " + netdev));
  return parsed;
}

uint64_t KernelEthtool::netlink_requests() const { return netlink_->requests(); }

Result<bool> KernelEthtool::EthtoolGetForTesting(const std::string& netdev, uint8_t cmd) {
  if (!ValidNetdevName(netdev)) return Error(BadNetdevName(netdev));
  bool sent_stats = false;
  auto reply = netlink_->EthtoolGet(netdev, cmd, "command " + std::to_string(cmd), &sent_stats);
  if (!reply) return Error(reply.error());
  return sent_stats;
}

Result<uint32_t> KernelEthtool::PfcStormTimeoutMs(const std::string& netdev) {
  if (!ValidNetdevName(netdev)) return Error(BadNetdevName(netdev));
  return ReadPfcStormTimeoutMs(*ioctl_, netdev);
}

Result<std::vector<uint8_t>> KernelEthtool::ModuleEepromNetlink(const std::string& netdev) {
  auto image = ReadModuleImage([&](const ModulePageRead& read) -> Result<std::vector<uint8_t>> {
    char where[96];
    std::snprintf(where, sizeof(where), " i2c 0x%02x page 0x%02x bank %u offset %u length %u",
                  read.i2c_address, read.page, read.bank, read.offset, read.length);
    const std::string context = "netdev " + netdev + ": ethtool netlink MODULE_EEPROM_GET" + where;
    auto reply = netlink_->ModuleEepromGet(netdev, read, context);
    if (!reply) {
      return Error(ModuleEepromFailure(*ioctl_, reply.error(), netdev, read.image_offset == 0));
    }
    auto data = ParseModuleEepromReply(*reply, read.length);
    if (!data) return Error(data.error().WithContext(context));
    return data;
  });
  if (!image && image.error().sys_errno() == 0 && image.error().no_data()) {
    return Error(image.error().WithContext("netdev " + netdev));  // the empty lower page
  }
  return image;
}

Status KernelEthtool::ReadModuleEeprom(const std::string& netdev, std::vector<uint8_t>& image) {
  auto read = ModuleEepromEitherPath(netdev);
  if (!read) {
    image.clear();
    return read.error();
  }
  image = std::move(*read);
  return Status::Ok();
}

Result<std::vector<uint8_t>> KernelEthtool::ModuleEepromEitherPath(const std::string& netdev) {
  if (!ValidNetdevName(netdev)) return Error(BadNetdevName(netdev));
  if (module_eeprom_via_ioctl_) return ReadModuleEepromIoctl(*ioctl_, netdev);
  auto image = ModuleEepromNetlink(netdev);
  if (image || image.error().code() != StatusCode::kUnimplemented) return image;
  // No family, or EOPNOTSUPP: the kernel's own fallback to the legacy ops already ran for a kernel
  // with the command, so the ioctl can only add something on a kernel without it (5.6-5.12).
  auto legacy = ReadModuleEepromIoctl(*ioctl_, netdev);
  if (legacy) {
    if (image.error().sys_errno() == EOPNOTSUPP) module_eeprom_via_ioctl_ = true;
    return legacy;
  }
  if (legacy.error().code() != StatusCode::kUnimplemented) return legacy;
  return Error(Status(StatusCode::kUnimplemented,
                      legacy.error().message() + " (and " + image.error().message() + ")",
                      legacy.error().sys_errno()));
}

void KernelEthtool::UseIoctlForModulesForTesting() { module_eeprom_via_ioctl_ = true; }

}  // namespace fabricwatch::sys
