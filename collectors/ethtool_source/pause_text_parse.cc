#include "collectors/ethtool_source/pause_text_parse.h"

#include <charconv>
#include <optional>
#include <string>

#include "base/value_parse.h"

namespace fabricwatch::sys {
namespace {

// `ethtool -a` prints under 10 lines; the bound keeps a hostile file cheap.
constexpr size_t kMaxLines = 1024;

std::optional<uint64_t> Decimal(std::string_view token) {
  uint64_t value = 0;
  auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), value);
  if (token.empty() || ec != std::errc() || end != token.data() + token.size()) return std::nullopt;
  return value;
}

// Calls `line(text, number)` for each line without its CR/LF, numbered from 1.
template <typename F>
void ForEachLine(std::string_view text, F&& line) {
  size_t number = 0;
  while (!text.empty() && number < kMaxLines) {
    const size_t end = text.find('\n');
    std::string_view one = text.substr(0, end);
    if (!one.empty() && one.back() == '\r') one.remove_suffix(1);
    line(one, ++number);
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
}

// "key: value" → key and trimmed value; nullopt without a colon.
std::optional<std::pair<std::string_view, std::string_view>> KeyValue(std::string_view line) {
  const size_t colon = line.find(':');
  if (colon == std::string_view::npos) return std::nullopt;
  return std::make_pair(TrimSpace(line.substr(0, colon)), TrimSpace(line.substr(colon + 1)));
}

Status Problem(std::string_view what, size_t number, std::string_view detail) {
  return Status(StatusCode::kInvalidArgument,
                std::string(what) + ":" + std::to_string(number) + ": " + std::string(detail));
}

}  // namespace

Result<ParsedPauseText> ParseEthtoolPauseText(std::string_view text, std::string_view what) {
  ParsedPauseText out;
  size_t known = 0;
  const auto problem = [&](size_t number, std::string_view detail) {
    if (out.problems.size() < ParsedPauseText::kMaxProblems) {
      out.problems.push_back(Problem(what, number, detail));
    }
  };
  ForEachLine(text, [&](std::string_view raw, size_t number) {
    const std::string_view line = TrimSpace(raw);
    if (line.empty() || line.front() == '#') return;
    if (line.starts_with("Pause parameters for ") || line == "Statistics:") {
      ++known;
      return;
    }
    auto kv = KeyValue(line);
    if (!kv) {
      ++out.unknown_lines;
      return;
    }
    const auto [key, value] = *kv;
    std::optional<bool>* flag = key == "Autonegotiate" ? &out.info.autoneg
                                : key == "RX"          ? &out.info.rx_enabled
                                : key == "TX"          ? &out.info.tx_enabled
                                                       : nullptr;
    if (flag != nullptr) {
      ++known;
      if (value == "on" || value == "off") {
        *flag = value == "on";
      } else {
        problem(number, "pause setting is neither on nor off");
      }
      return;
    }
    std::optional<uint64_t>* counter = key == "tx_pause_frames"   ? &out.info.tx_frames
                                       : key == "rx_pause_frames" ? &out.info.rx_frames
                                                                  : nullptr;
    if (counter != nullptr) {
      ++known;
      if (auto n = Decimal(value)) {
        *counter = *n;
      } else {
        problem(number, "pause counter is not an unsigned decimal");
      }
      return;
    }
    // "RX negotiated"/"TX negotiated": the result of autonegotiation, not the setting.
    if (key == "RX negotiated" || key == "TX negotiated") {
      ++known;
      return;
    }
    ++out.unknown_lines;
  });
  if (known == 0 && (out.unknown_lines > 0 || !out.problems.empty())) {
    return Error(StatusCode::kInvalidArgument,
                 std::string(what) + ": not `ethtool -a` output (no known line)");
  }
  return out;
}

Result<uint32_t> ParseEthtoolTunableText(std::string_view text, std::string_view name,
                                         std::string_view what) {
  std::optional<Result<uint32_t>> found;
  ForEachLine(text, [&](std::string_view raw, size_t number) {
    if (found) return;
    auto kv = KeyValue(TrimSpace(raw));
    if (!kv || kv->first != name) return;
    auto value = Decimal(kv->second);
    if (!value || *value > UINT32_MAX) {
      found = Error(Problem(what, number, std::string(name) + " is not an unsigned decimal"));
    } else {
      found = static_cast<uint32_t>(*value);
    }
  });
  if (!found) {
    return Error(StatusCode::kNoData, std::string(what) + ": no " + std::string(name) + " line");
  }
  return *found;
}

}  // namespace fabricwatch::sys
