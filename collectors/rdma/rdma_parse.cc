#include "collectors/rdma/rdma_parse.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <utility>

#include "base/value_parse.h"

namespace fabricwatch::rdma {
Result<NumberedName> ParseNumberedName(std::string_view text, std::string_view what) {
  std::string_view value = TrimSpace(text);
  size_t colon = value.find(':');
  if (colon == std::string_view::npos) {
    return Error(StatusCode::kInvalidArgument,
                 std::string(what) + ": expected \"<number>: <name>\", got " + QuoteForMessage(value, 48));
  }
  auto id = ParseInt64(value.substr(0, colon), what);
  if (!id || *id < 0 || *id > 255) {
    return Error(StatusCode::kInvalidArgument,
                 std::string(what) + ": expected \"<number>: <name>\", got " + QuoteForMessage(value, 48));
  }
  return NumberedName{static_cast<int>(*id), std::string(TrimSpace(value.substr(colon + 1)))};
}

Result<PortRate> ParseRate(std::string_view text, std::string_view what) {
  std::string_view value = TrimSpace(text);
  const auto bad = [&] {
    return Error(StatusCode::kInvalidArgument,
                 std::string(what) + ": expected a rate such as \"400 Gb/sec (4X NDR)\", got " +
                     QuoteForMessage(value, 48));
  };
  size_t space = value.find(' ');
  if (space == std::string_view::npos) return bad();
  double gbits = 0;
  auto [end, ec] = std::from_chars(value.data(), value.data() + space, gbits);
  // from_chars accepts "nan" and "inf"; a rate is a finite, non-negative number.
  if (ec != std::errc() || end != value.data() + space || !std::isfinite(gbits) || gbits < 0) {
    return bad();
  }
  std::string_view rest = value.substr(space + 1);
  // The unit is Gb/sec; "GB/sec" appears only in the "0 GB/sec" of down ports.
  if (!rest.starts_with("Gb/sec") && !rest.starts_with("GB/sec")) return bad();
  rest = TrimSpace(rest.substr(6));
  PortRate rate;
  rate.bytes_per_second = gbits * 1e9 / 8.0;
  if (rest.empty()) return rate;
  if (rest.front() != '(' || rest.back() != ')') return bad();
  rest = TrimSpace(rest.substr(1, rest.size() - 2));
  size_t x = rest.find('X');
  if (x == std::string_view::npos || x == 0) return bad();
  int lanes = 0;
  auto [lend, lec] = std::from_chars(rest.data(), rest.data() + x, lanes);
  if (lec != std::errc() || lend != rest.data() + x || lanes <= 0 || lanes > 32) return bad();
  rate.lanes = lanes;
  std::string_view speed = TrimSpace(rest.substr(x + 1));
  // core/sysfs.c prints no suffix for SDR (and for unknown speeds, which it treats as SDR).
  rate.speed = speed.empty() ? "SDR" : std::string(speed);
  for (char c : rate.speed) {
    if (!std::isalnum(static_cast<unsigned char>(c))) return bad();
  }
  if (gbits > 0) {
    std::optional<double> lane = IbLaneGbps(rate.speed);
    rate.lane_gbps = lane ? *lane : gbits / lanes;
  }
  return rate;
}

Result<std::optional<uint64_t>> ParseCounterValue(std::string_view text, std::string_view what) {
  std::string_view value = TrimSpace(text);
  if (value.starts_with("N/A")) return std::optional<uint64_t>();
  auto number = ParseUint64(value, what);
  if (!number) return Error(number.error());
  return std::optional<uint64_t>(*number);
}

Result<uint32_t> ParseLid(std::string_view text, std::string_view what) {
  auto value = ParseUint64(text, what);
  if (!value) return Error(value.error());
  if (*value > 0xffff) {
    return Error(StatusCode::kInvalidArgument,
                 std::string(what) + ": LID " + std::to_string(*value) + " exceeds 16 bits");
  }
  return static_cast<uint32_t>(*value);
}

Result<int> IbMtuBytes(int ibv_mtu) {
  if (ibv_mtu < 1 || ibv_mtu > 5) {
    return Error(StatusCode::kInvalidArgument, "enum ibv_mtu " + std::to_string(ibv_mtu) +
                                                   ": expected 1 (256 bytes) to 5 (4096 bytes)");
  }
  return 256 << (ibv_mtu - 1);
}

Result<int> ParseIbMtu(std::string_view text, std::string_view what) {
  std::string_view value = TrimSpace(text);
  const auto bad = [&] {
    return Error(StatusCode::kInvalidArgument,
                 std::string(what) + ": expected an IB MTU such as \"4096\" or \"4096 (5)\", got " +
                     QuoteForMessage(value, 48));
  };
  std::string_view bytes_text = value;
  std::optional<int64_t> enum_value;
  if (size_t open = value.find('('); open != std::string_view::npos) {
    if (value.back() != ')') return bad();
    auto parsed = ParseInt64(TrimSpace(value.substr(open + 1, value.size() - open - 2)), what);
    if (!parsed) return bad();
    enum_value = *parsed;
    bytes_text = TrimSpace(value.substr(0, open));
  }
  auto bytes = ParseInt64(bytes_text, what);
  if (!bytes) return bad();
  for (int e = 1; e <= 5; ++e) {
    if (*IbMtuBytes(e) != *bytes) continue;
    if (enum_value && *enum_value != e) return bad();
    return static_cast<int>(*bytes);
  }
  return bad();
}

}  // namespace fabricwatch::rdma
