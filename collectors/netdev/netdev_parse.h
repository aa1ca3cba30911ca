#pragma once
// Pure parsers for /sys/class/net/<netdev>/* attribute values (kernel
// Documentation/ABI/testing/sysfs-class-net, net/core/net-sysfs.c).

#include <cstdint>
#include <optional>
#include <string_view>

#include "base/status.h"

namespace fabricwatch::netdev {

// `operstate`: RFC 2863 name -> IF_OPER_* code (0 unknown, 1 notpresent, 2 down,
// 3 lowerlayerdown, 4 testing, 5 dormant, 6 up).
Result<int> ParseOperState(std::string_view text);

// `speed` is in Mbit/s; drivers report -1 (or 0xffffffff on old kernels) when unknown, e.g.
// while the link is down. Returns bytes per second, or nullopt for "unknown".
Result<std::optional<double>> ParseSpeedBytesPerSecond(std::string_view text,
                                                        std::string_view what);

// `flags` is hex ("0x1003"); IFF_UP (0x1) is the administrative state.
Result<bool> ParseAdminUp(std::string_view text, std::string_view what);

}  // namespace fabricwatch::netdev
