#include "detectors/core/options.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "base/duration.h"
#include "base/value_parse.h"

namespace fabricwatch::detect {

Result<OptionReader> OptionReader::Make(std::string_view detector, const DetectorOptions& options,
                                        std::span<const DetectorOptionSpec> specs) {
  for (const auto& [key, value] : options) {
    bool known = false;
    for (const DetectorOptionSpec& spec : specs) known |= spec.key == key;
    if (!known) {
      std::string names;
      for (const DetectorOptionSpec& spec : specs) {
        names += (names.empty() ? "" : ", ") + std::string(spec.key);
      }
      return Error(StatusCode::kInvalidArgument,
                   "detector " + std::string(detector) + ": unknown option \"" + key +
                       "\" (known: " + (names.empty() ? "none" : names) + ")");
    }
  }
  return OptionReader(detector, options, specs);
}

std::string_view OptionReader::Raw(std::string_view key) {
  if (auto it = options_.find(key); it != options_.end()) return it->second;
  for (const DetectorOptionSpec& spec : specs_) {
    if (spec.key == key) return spec.default_value;
  }
  // A programming error in the detector (reads a key it did not declare): report it loudly.
  if (status_.ok()) {
    status_ = Status(StatusCode::kInternal, "detector " + detector_ + ": option \"" +
                                                std::string(key) + "\" is not declared");
  }
  return {};
}

void OptionReader::Fail(std::string_view key, std::string_view value, std::string_view expected) {
  if (!status_.ok()) return;
  status_ = Status(StatusCode::kInvalidArgument,
                   "detector " + detector_ + ": option " + std::string(key) + "=" +
                       QuoteForMessage(value) + ": expected " + std::string(expected));
}

std::chrono::milliseconds OptionReader::Duration(std::string_view key, bool allow_zero) {
  const std::string_view raw = Raw(key);
  auto parsed = ParseDuration(raw);
  if (!parsed || (!allow_zero && parsed->count() <= 0)) {
    Fail(key, raw, allow_zero ? "a duration such as 10s or 15m" : "a positive duration such as 10s");
    return std::chrono::milliseconds(1);
  }
  return *parsed;
}

double OptionReader::Number(std::string_view key, double min, double max) {
  const std::string raw(TrimSpace(Raw(key)));
  char* end = nullptr;
  errno = 0;
  const double value = raw.empty() ? NAN : std::strtod(raw.c_str(), &end);
  if (raw.empty() || errno != 0 || end != raw.c_str() + raw.size() || !std::isfinite(value) ||
      value < min || value > max) {
    Fail(key, raw, "a number in [" + std::to_string(min) + ", " + std::to_string(max) + "]");
    return min;
  }
  return value;
}

uint64_t OptionReader::Count(std::string_view key, uint64_t min, uint64_t max) {
  const std::string_view raw = Raw(key);
  auto value = ParseUint64(TrimSpace(raw), key);
  if (!value || *value < min || *value > max) {
    Fail(key, raw, "an integer in [" + std::to_string(min) + ", " + std::to_string(max) + "]");
    return min;
  }
  return *value;
}

bool OptionReader::Bool(std::string_view key) {
  const std::string_view raw = TrimSpace(Raw(key));
  if (raw == "true") return true;
  if (raw == "false") return false;
  Fail(key, raw, "true or false");
  return false;
}

}  // namespace fabricwatch::detect
