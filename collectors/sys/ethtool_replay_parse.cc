#include "collectors/sys/ethtool_replay_parse.h"

#include <charconv>
#include <string>
#include <system_error>

#include "collectors/core/value_parse.h"

namespace fabricwatch::sys {
namespace {

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

// Lines that may be statistics: those with a colon that are not a header or a comment (a
// malformed line with a colon counts too). Allocates nothing.
size_t CountStatisticLines(std::string_view text) {
  size_t count = 0;
  while (!text.empty()) {
    const size_t eol = text.find('\n');
    const std::string_view line = TrimSpace(text.substr(0, eol));
    text.remove_prefix(eol == std::string_view::npos ? text.size() : eol + 1);
    if (line.empty() || line.front() == '#' || IsHeader(line)) continue;
    count += line.find(':') != std::string_view::npos ? 1 : 0;
  }
  return count;
}

}  // namespace

Result<ParsedEthtoolStats> ParseEthtoolStatsText(std::string_view text, std::string_view what) {
  ParsedEthtoolStats parsed;
  if (Status status = ParseEthtoolStatsTextInto(text, what, parsed); !status.ok()) {
    return Error(status);
  }
  return parsed;
}

Status ParseEthtoolStatsTextInto(std::string_view text, std::string_view what,
                                 ParsedEthtoolStats& parsed) {
  parsed.problems.clear();
  parsed.malformed_lines = 0;
  // The bound of collectors/sys/ethtool.h, checked before anything is stored: a table over it
  // would allocate its names only to drop them.
  if (CountStatisticLines(text) > kMaxStatisticsPerNetdev) {
    parsed.stats.clear();
    parsed.stats.shrink_to_fit();
    return Status(StatusCode::kInvalidArgument,
                  std::string(what) + ": more than " + std::to_string(kMaxStatisticsPerNetdev) +
                      " statistics, the most fabricwatch reads per netdev; its driver "
                      "statistics are not exported");
  }
  size_t count = 0;  // statistics parsed so far; parsed.stats[count..] are left from last time
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

    const std::string_view line = TrimSpace(raw);
    if (line.empty() || line.front() == '#' || IsHeader(line)) continue;

    // The value follows the last colon: bnxt_en ring names contain "[N]: " themselves.
    const size_t colon = line.rfind(':');
    if (colon == std::string_view::npos) {
      problem(line_number, "not a statistic (no \"name: value\"): " + QuoteForMessage(line));
      continue;
    }
    const std::string_view name = TrimSpace(line.substr(0, colon));
    const std::string_view value_text = TrimSpace(line.substr(colon + 1));
    if (name.empty()) {
      problem(line_number, "statistic without a name: " + QuoteForMessage(line));
      continue;
    }
    if (value_text.empty()) {
      problem(line_number, "statistic " + QuoteForMessage(name) + " has no value");
      continue;
    }
    uint64_t value = 0;
    bool out_of_range = false;
    if (!ParseDecimal(value_text, value, out_of_range)) {
      problem(line_number, "statistic " + QuoteForMessage(name) +
                               (out_of_range ? ": value out of range: "
                                             : ": value is not an unsigned decimal integer: ") +
                               QuoteForMessage(value_text));
      continue;
    }
    if (count == parsed.stats.size()) parsed.stats.emplace_back();
    parsed.stats[count].name.assign(name);
    parsed.stats[count].value = value;
    ++count;
  }
  parsed.stats.resize(count);
  // A table that shrank a lot (a file restored after a huge one) gives its memory back; one of
  // the same size keeps it, so re-parsing allocates nothing.
  if (parsed.stats.capacity() > 2 * count + 64) parsed.stats.shrink_to_fit();

  if (parsed.stats.empty() && parsed.malformed_lines > 0) {
    return Status(StatusCode::kInvalidArgument,
                  std::string(what) + ": not ethtool -S output: no statistic in " +
                      std::to_string(parsed.malformed_lines) +
                      " malformed line(s), first: " + parsed.problems.front().message());
  }
  return Status::Ok();
}

}  // namespace fabricwatch::sys
