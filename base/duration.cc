#include "base/duration.h"

#include <cctype>
#include <charconv>

namespace fabricwatch {

Result<std::chrono::milliseconds> ParseDuration(std::string_view text) {
  const std::string quoted = "\"" + std::string(text) + "\"";
  if (text.empty()) return Error(StatusCode::kInvalidArgument, "empty duration");
  struct Unit {
    std::string_view suffix;
    double ms;
  };
  // Longest suffixes first so "ms" is not read as "m" followed by garbage.
  static constexpr Unit kUnits[] = {{"ms", 1.0}, {"us", 0.001}, {"h", 3600000.0},
                                    {"m", 60000.0}, {"s", 1000.0}, {"d", 86400000.0}};
  double total_ms = 0;
  std::string_view rest = text;
  while (!rest.empty()) {
    size_t digits = 0;
    while (digits < rest.size() &&
           (std::isdigit(static_cast<unsigned char>(rest[digits])) || rest[digits] == '.')) {
      ++digits;
    }
    if (digits == 0) {
      return Error(StatusCode::kInvalidArgument,
                   "invalid duration " + quoted + ": expected a number, e.g. 1s, 100ms, 5m");
    }
    double value = 0;
    auto [end, ec] = std::from_chars(rest.data(), rest.data() + digits, value);
    if (ec != std::errc() || end != rest.data() + digits) {
      return Error(StatusCode::kInvalidArgument, "invalid duration " + quoted);
    }
    rest.remove_prefix(digits);
    const Unit* unit = nullptr;
    for (const Unit& u : kUnits) {
      if (rest.starts_with(u.suffix)) {
        unit = &u;
        break;
      }
    }
    if (unit == nullptr) {
      return Error(StatusCode::kInvalidArgument,
                   "invalid duration " + quoted + ": missing unit (us, ms, s, m, h, d)");
    }
    rest.remove_prefix(unit->suffix.size());
    total_ms += value * unit->ms;
  }
  if (total_ms > 365.0 * 86400000.0) {
    return Error(StatusCode::kInvalidArgument, "duration " + quoted + " is too long");
  }
  return std::chrono::milliseconds(static_cast<int64_t>(total_ms + 0.5));
}

std::string FormatDuration(std::chrono::milliseconds duration) {
  int64_t ms = duration.count();
  if (ms == 0) return "0s";
  if (ms % 3600000 == 0) return std::to_string(ms / 3600000) + "h";
  if (ms % 60000 == 0) return std::to_string(ms / 60000) + "m";
  if (ms % 1000 == 0) return std::to_string(ms / 1000) + "s";
  return std::to_string(ms) + "ms";
}

}  // namespace fabricwatch
