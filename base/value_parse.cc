#include "base/value_parse.h"

#include <cctype>
#include <charconv>
#include <limits>
#include <type_traits>
#include <string>

namespace fabricwatch {
namespace {

bool IsSpace(char c) {
  return c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

template <typename T>
Result<T> ParseInteger(std::string_view text, std::string_view what, const char* kind) {
  std::string_view value = TrimSpace(text);
  if (value.empty()) {
    return Error(StatusCode::kInvalidArgument, std::string(what) + ": empty value");
  }
  int base = 10;
  std::string_view digits = value;
  bool negative = false;
  if constexpr (std::is_signed_v<T>) {
    if (digits.front() == '-') {
      negative = true;
      digits.remove_prefix(1);
    }
  }
  if (digits.size() > 2 && digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X')) {
    base = 16;
    digits.remove_prefix(2);
  }
  using U = std::make_unsigned_t<T>;
  U magnitude = 0;
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), magnitude, base);
  if (ec == std::errc::result_out_of_range) {
    return Error(StatusCode::kInvalidArgument,
                 std::string(what) + ": value out of range: " + QuoteForMessage(value));
  }
  if (ec != std::errc() || end != digits.data() + digits.size() || digits.empty()) {
    return Error(StatusCode::kInvalidArgument,
                 std::string(what) + ": not " + kind + ": " + QuoteForMessage(value));
  }
  if constexpr (std::is_signed_v<T>) {
    constexpr U kMaxPositive = static_cast<U>(std::numeric_limits<T>::max());
    if (negative) {
      if (magnitude > kMaxPositive + 1) {
        return Error(StatusCode::kInvalidArgument,
                     std::string(what) + ": value out of range: " + QuoteForMessage(value));
      }
      return static_cast<T>(-static_cast<T>(magnitude - 1) - 1);
    }
    if (magnitude > kMaxPositive) {
      return Error(StatusCode::kInvalidArgument,
                   std::string(what) + ": value out of range: " + QuoteForMessage(value));
    }
    return static_cast<T>(magnitude);
  } else {
    return magnitude;
  }
}

}  // namespace

std::string_view TrimSpace(std::string_view text) {
  while (!text.empty() && IsSpace(text.front())) text.remove_prefix(1);
  while (!text.empty() && IsSpace(text.back())) text.remove_suffix(1);
  return text;
}

std::string QuoteForMessage(std::string_view text, size_t max) {
  std::string out = "\"";
  for (char c : text.substr(0, max)) {
    const auto u = static_cast<unsigned char>(c);
    if (u >= 0x20 && u < 0x7f && c != '"' && c != '\\') {
      out += c;
    } else {
      static constexpr char kHex[] = "0123456789abcdef";
      out += "\\x";
      out += kHex[u >> 4];
      out += kHex[u & 0xf];
    }
  }
  if (text.size() > max) out += "...";
  out += '"';
  return out;
}

bool IsPciAddress(std::string_view text) {
  // dddd:bb:dd.f — 4 hex, ':', 2 hex, ':', 2 hex, '.', function 0-7.
  if (text.size() != 12) return false;
  auto hex = [&](size_t from, size_t n) {
    for (size_t i = from; i < from + n; ++i) {
      if (!std::isxdigit(static_cast<unsigned char>(text[i]))) return false;
    }
    return true;
  };
  return hex(0, 4) && text[4] == ':' && hex(5, 2) && text[7] == ':' && hex(8, 2) &&
         text[10] == '.' && text[11] >= '0' && text[11] <= '7';
}

Result<uint64_t> ParseUint64(std::string_view text, std::string_view what) {
  return ParseInteger<uint64_t>(text, what, "an unsigned integer");
}

Result<int64_t> ParseInt64(std::string_view text, std::string_view what) {
  return ParseInteger<int64_t>(text, what, "an integer");
}

}  // namespace fabricwatch
