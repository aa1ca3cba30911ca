#include "collectors/netdev/netdev_parse.h"

#include <array>
#include <string>

#include "base/value_parse.h"

namespace fabricwatch::netdev {

Result<int> ParseOperState(std::string_view text) {
  // Order is the IF_OPER_* enum of include/uapi/linux/if.h.
  static constexpr std::array<std::string_view, 7> kNames = {
      "unknown", "notpresent", "down", "lowerlayerdown", "testing", "dormant", "up"};
  std::string_view value = TrimSpace(text);
  for (size_t i = 0; i < kNames.size(); ++i) {
    if (value == kNames[i]) return static_cast<int>(i);
  }
  return Error(StatusCode::kInvalidArgument,
               "operstate: unknown value \"" + std::string(value.substr(0, 32)) + "\"");
}

Result<std::optional<double>> ParseSpeedBytesPerSecond(std::string_view text,
                                                       std::string_view what) {
  auto mbits = ParseInt64(text, what);
  if (!mbits) return Error(mbits.error());
  // SPEED_UNKNOWN is -1; kernels before 4.x printed it as an unsigned 4294967295.
  if (*mbits < 0 || *mbits == 4294967295LL) return std::optional<double>();
  return std::optional<double>(static_cast<double>(*mbits) * 1e6 / 8.0);
}

Result<bool> ParseAdminUp(std::string_view text, std::string_view what) {
  auto flags = ParseUint64(text, what);
  if (!flags) return Error(flags.error());
  constexpr uint64_t kIffUp = 0x1;  // include/uapi/linux/if.h
  return (*flags & kIffUp) != 0;
}

}  // namespace fabricwatch::netdev
