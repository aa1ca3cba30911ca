#include "collectors/ethtool_source/ethtool_replay_parse.h"

#include <charconv>
#include <cstdint>
#include <optional>
#include <string>
#include <system_error>

#include "base/value_parse.h"
#include "collectors/ethtool_source/link_modes.h"

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
  // The bound of collectors/ethtool_source/ethtool.h, checked before anything is stored: a table
  // over it would allocate its names only to drop them.
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

namespace fabricwatch::sys {
namespace {

// What an indented line without a key continues.
enum class ListKind {
  kNone,        // nothing: such a line is malformed
  kSupported,   // "Supported link modes"
  kAdvertised,  // "Advertised link modes"
  kPartner,     // "Link partner advertised link modes": checked, not kept
  kWords,       // FEC modes, the message level's flag names, ports: not read
};

ListKind ListOfKey(std::string_view key) {
  if (key == "Supported link modes") return ListKind::kSupported;
  if (key == "Advertised link modes") return ListKind::kAdvertised;
  if (key == "Link partner advertised link modes") return ListKind::kPartner;
  if (key == "Supported FEC modes" || key == "Advertised FEC modes" ||
      key == "Link partner advertised FEC modes" || key == "Current message level" ||
      key == "Supported ports") {
    return ListKind::kWords;
  }
  return ListKind::kNone;
}

bool ParseDecimalU32(std::string_view digits, uint32_t& value) {
  uint64_t wide = 0;
  bool out_of_range = false;
  if (!ParseDecimal(digits, wide, out_of_range) || wide > UINT32_MAX) return false;
  value = static_cast<uint32_t>(wide);
  return true;
}

bool Printable(std::string_view text) {
  for (char c : text) {
    if (c < 0x20 || c > 0x7e) return false;
  }
  return true;
}

class LinkTextParser {
 public:
  LinkTextParser(std::string_view what, ParsedEthtoolLink& out) : what_(what), out_(out) {}

  void Line(size_t number, std::string_view raw);
  bool known() const { return known_; }

 private:
  void Problem(std::string reason) {
    ++out_.malformed_lines;
    if (out_.problems.size() < ParsedEthtoolLink::kMaxProblems) {
      out_.problems.emplace_back(
          StatusCode::kInvalidArgument,
          std::string(what_) + ":" + std::to_string(line_) + ": " + std::move(reason));
    }
  }
  // The whitespace-separated link-mode names of `text` into the list of `list_`.
  void Modes(std::string_view text);
  // "key: value" of a key that is not a list; false when the value does not parse.
  bool Value(std::string_view key, std::string_view value);

  std::string_view what_;
  ParsedEthtoolLink& out_;
  size_t line_ = 0;
  ListKind list_ = ListKind::kNone;
  bool known_ = false;
};

void LinkTextParser::Modes(std::string_view text) {
  LinkSettings& s = out_.settings;
  std::vector<std::string>* names = nullptr;
  std::optional<uint32_t>* max = nullptr;
  if (list_ == ListKind::kSupported) {
    names = &s.supported_modes;
    max = &s.max_supported_speed_mbps;
  } else if (list_ == ListKind::kAdvertised) {
    names = &s.advertised_modes;
    max = &s.max_advertised_speed_mbps;
  }
  std::string bad;
  while (true) {
    text = TrimSpace(text);
    if (text.empty()) break;
    const size_t end = text.find_first_of(" \t");
    const std::string_view token = text.substr(0, end);
    text.remove_prefix(end == std::string_view::npos ? text.size() : end);
    const bool known = LinkModeBitByName(token).has_value() || ParseLinkModeName(token) ||
                       (token.starts_with("BIT") && token.size() > 3 &&
                        token.find_first_not_of("0123456789", 3) == std::string_view::npos);
    if (!known) {
      if (bad.empty()) bad = QuoteForMessage(token);
      continue;
    }
    if (names == nullptr) continue;
    if (names->size() >= ParsedEthtoolLink::kMaxLinkModes) {
      if (bad.empty()) bad = "more than " + std::to_string(ParsedEthtoolLink::kMaxLinkModes);
      break;
    }
    names->emplace_back(token);
    const std::optional<uint32_t> speed = LinkModeSpeedOfName(token);
    if (speed && (!*max || *speed > **max)) *max = speed;
  }
  if (!bad.empty()) Problem("not a link mode: " + bad);
}

bool LinkTextParser::Value(std::string_view key, std::string_view value) {
  LinkSettings& s = out_.settings;
  if (key == "Speed") {
    if (value.starts_with("Unknown!")) {
      s.speed_mbps.reset();
      return true;
    }
    uint32_t mbps = 0;
    if (!value.ends_with("Mb/s") || !ParseDecimalU32(value.substr(0, value.size() - 4), mbps)) {
      return false;
    }
    s.speed_mbps = KnownLinkSpeed(mbps);
  } else if (key == "Lanes") {
    uint32_t lanes = 0;
    if (!ParseDecimalU32(value, lanes) || lanes == 0) return false;
    s.lanes = lanes;
  } else if (key == "Duplex") {
    if (value == "Full") {
      s.duplex = "full";
    } else if (value == "Half") {
      s.duplex = "half";
    } else if (value.starts_with("Unknown!")) {
      s.duplex.clear();
    } else {
      return false;
    }
  } else if (key == "Auto-negotiation") {
    if (value != "on" && value != "off") return false;
    s.autoneg = value == "on";
  } else if (key == "Link detected") {
    const std::string_view word = value.substr(0, value.find_first_of(" \t"));
    if (word != "yes" && word != "no") return false;
    s.link_detected = word == "yes";
  } else if (key == "Port") {
    if (value.empty() || value.size() > 64 || !Printable(value)) return false;
    s.port = value.starts_with("Unknown!") ? std::string() : std::string(value);
  } else {
    return true;  // a key this parser does not use
  }
  known_ = true;
  return true;
}

void LinkTextParser::Line(size_t number, std::string_view raw) {
  line_ = number;
  const std::string_view line = TrimSpace(raw);
  if (line.empty() || line.front() == '#') {
    list_ = ListKind::kNone;
    return;
  }
  const size_t colon = line.find(':');
  if (colon == std::string_view::npos) {
    const bool indented = raw.front() == ' ' || raw.front() == '\t';
    if (indented && list_ != ListKind::kNone) {
      if (list_ != ListKind::kWords) Modes(line);
      return;
    }
    list_ = ListKind::kNone;
    Problem("not a \"key: value\" line: " + QuoteForMessage(line));
    return;
  }
  const std::string_view key = TrimSpace(line.substr(0, colon));
  const std::string_view value = TrimSpace(line.substr(colon + 1));
  list_ = ListKind::kNone;
  if (key.starts_with("Settings for ") && value.empty()) {
    known_ = true;
    return;
  }
  if (const ListKind list = ListOfKey(key); list != ListKind::kNone) {
    if (value == "Not reported" || value.empty()) return;  // nothing follows
    list_ = list;
    if (list != ListKind::kWords) {
      known_ = known_ || list != ListKind::kPartner;
      Modes(value);
    }
    return;
  }
  if (!Value(key, value)) {
    Problem(std::string(key) + ": cannot parse " + QuoteForMessage(value));
  }
}

}  // namespace

Result<ParsedEthtoolLink> ParseEthtoolLinkText(std::string_view text, std::string_view what) {
  ParsedEthtoolLink parsed;
  LinkTextParser parser(what, parsed);
  size_t line_number = 0;
  while (!text.empty()) {
    const size_t eol = text.find('\n');
    std::string_view raw = text.substr(0, eol);
    text.remove_prefix(eol == std::string_view::npos ? text.size() : eol + 1);
    if (raw.ends_with('\r')) raw.remove_suffix(1);
    parser.Line(++line_number, raw);
  }
  if (!parser.known() && parsed.malformed_lines > 0) {
    return Error(StatusCode::kInvalidArgument,
                 std::string(what) + ": not ethtool output: no link setting in " +
                     std::to_string(parsed.malformed_lines) +
                     " malformed line(s), first: " + parsed.problems.front().message());
  }
  return parsed;
}

}  // namespace fabricwatch::sys
