#include "detectors/core/option_reader.h"

#include <charconv>
#include <cmath>

#include "collectors/core/duration.h"
#include "collectors/core/value_parse.h"

namespace fabricwatch::detect {

const std::string* OptionReader::Take(std::string_view key) {
  used_.emplace(key);
  auto it = options_.find(key);
  return it == options_.end() ? nullptr : &it->second;
}

void OptionReader::Fail(std::string_view key, std::string_view what) {
  if (!first_error_.ok()) return;
  first_error_ =
      Status(StatusCode::kInvalidArgument,
             "detector " + detector_ + ": option " + std::string(key) + ": " + std::string(what));
}

void OptionReader::GetDuration(std::string_view key, std::chrono::milliseconds& value,
                               bool allow_zero) {
  const std::string* text = Take(key);
  if (text == nullptr) return;
  Result<std::chrono::milliseconds> parsed = ParseDuration(TrimSpace(*text));
  if (!parsed) {
    Fail(key, parsed.error().message());
    return;
  }
  if (!allow_zero && parsed->count() <= 0) {
    Fail(key, "must be a positive duration, got " + QuoteForMessage(*text));
    return;
  }
  value = *parsed;
}

void OptionReader::GetDouble(std::string_view key, double& value, double min, double max) {
  const std::string* text = Take(key);
  if (text == nullptr) return;
  const std::string_view trimmed = TrimSpace(*text);
  double parsed = 0;
  auto [end, ec] = std::from_chars(trimmed.data(), trimmed.data() + trimmed.size(), parsed);
  if (ec != std::errc() || end != trimmed.data() + trimmed.size() || !std::isfinite(parsed)) {
    Fail(key, "expected a number, got " + QuoteForMessage(*text));
    return;
  }
  if (parsed < min || parsed > max) {
    Fail(key, "value " + QuoteForMessage(*text) + " out of range [" + std::to_string(min) + ", " +
                  std::to_string(max) + "]");
    return;
  }
  value = parsed;
}

void OptionReader::GetBool(std::string_view key, bool& value) {
  const std::string* text = Take(key);
  if (text == nullptr) return;
  const std::string_view trimmed = TrimSpace(*text);
  if (trimmed == "true") {
    value = true;
  } else if (trimmed == "false") {
    value = false;
  } else {
    Fail(key, "expected true or false, got " + QuoteForMessage(*text));
  }
}

Status OptionReader::Finish() const {
  if (!first_error_.ok()) return first_error_;
  for (const auto& [key, value] : options_) {
    if (!used_.contains(key)) {
      return Status(StatusCode::kInvalidArgument,
                    "detector " + detector_ + ": unknown option " + key);
    }
  }
  return Status::Ok();
}

}  // namespace fabricwatch::detect
