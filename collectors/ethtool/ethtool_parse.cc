#include "collectors/ethtool/ethtool_parse.h"

#include <charconv>
#include <string>
#include <system_error>

namespace fabricwatch::ethtool {
namespace {

bool IsBlank(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

std::string_view TrimBlanks(std::string_view text) {
  while (!text.empty() && IsBlank(text.front())) text.remove_prefix(1);
  while (!text.empty() && IsBlank(text.back())) text.remove_suffix(1);
  return text;
}

// Bounded and printable, so a binary file cannot flood the log.
std::string Quote(std::string_view text) {
  static constexpr size_t kMax = 48;
  std::string out = "\"";
  for (char c : text.substr(0, kMax)) {
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
  if (text.size() > kMax) out += "...";
  out += '"';
  return out;
}

// ethtool prints values with %llu: plain decimal digits, nothing else.
bool ParseDecimal(std::string_view digits, uint64_t& value, bool& out_of_range) {
  out_of_range = false;
  if (digits.empty()) return false;
  for (char c : digits) {
    if (c < '0' || c > '9') return false;
  }
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value, 10);
  if (ec == std::errc::result_out_of_range) {
    out_of_range = true;
    return false;
  }
  return ec == std::errc() && end == digits.data() + digits.size();
}

bool IsHeader(std::string_view line) {
  if (line == "NIC statistics:") return true;
  // `ethtool -S <dev> --all-groups` (ethtool 5.13+) introduces the standard groups this way.
  return line.starts_with("Standard stats for ") && line.ends_with(":");
}

}  // namespace

Result<ParsedEthtoolStats> ParseEthtoolStatsText(std::string_view text, std::string_view what) {
  ParsedEthtoolStats parsed;
  auto problem = [&](size_t line_number, std::string reason) {
    ++parsed.malformed_lines;
    if (parsed.problems.size() < ParsedEthtoolStats::kMaxProblems) {
      parsed.problems.emplace_back(
          StatusCode::kInvalidArgument,
          std::string(what) + ":" + std::to_string(line_number) + ": " + std::move(reason));
    }
  };

  size_t line_number = 0;
  while (!text.empty()) {
    const size_t eol = text.find('\n');
    const std::string_view raw = text.substr(0, eol);
    text.remove_prefix(eol == std::string_view::npos ? text.size() : eol + 1);
    ++line_number;

    const std::string_view line = TrimBlanks(raw);
    if (line.empty() || line.front() == '#' || IsHeader(line)) continue;

    // The value follows the last colon: bnxt_en ring names contain "[N]: " themselves.
    const size_t colon = line.rfind(':');
    if (colon == std::string_view::npos) {
      problem(line_number, "not a statistic (no \"name: value\"): " + Quote(line));
      continue;
    }
    const std::string_view name = TrimBlanks(line.substr(0, colon));
    const std::string_view value_text = TrimBlanks(line.substr(colon + 1));
    if (name.empty()) {
      problem(line_number, "statistic without a name: " + Quote(line));
      continue;
    }
    if (value_text.empty()) {
      problem(line_number, "statistic " + Quote(name) + " has no value");
      continue;
    }
    uint64_t value = 0;
    bool out_of_range = false;
    if (!ParseDecimal(value_text, value, out_of_range)) {
      problem(line_number, "statistic " + Quote(name) +
                               (out_of_range ? ": value out of range: "
                                             : ": value is not an unsigned decimal integer: ") +
                               Quote(value_text));
      continue;
    }
    parsed.stats.push_back(sys::EthtoolStat{std::string(name), value});
  }

  if (parsed.stats.empty() && parsed.malformed_lines > 0) {
    return Error(StatusCode::kInvalidArgument,
                 std::string(what) + ": not ethtool -S output: no statistic in " +
                     std::to_string(parsed.malformed_lines) +
                     " malformed line(s), first: " + parsed.problems.front().message());
  }
  return parsed;
}

}  // namespace fabricwatch::ethtool
