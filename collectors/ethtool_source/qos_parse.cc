#include "collectors/ethtool_source/qos_parse.h"

#include <charconv>
#include <cmath>
#include <utility>

#include "base/value_parse.h"

namespace fabricwatch::sys {
namespace {

// `mlnx_qos -i` prints about 40 lines; a bound keeps a hostile file from costing much.
constexpr size_t kMaxLines = 4096;

enum class Section { kNone, kDscp2Prio, kDefaultPriority, kPfc, kTrafficClass };

bool StartsWith(std::string_view s, std::string_view prefix) { return s.starts_with(prefix); }

// Whitespace- or comma-separated tokens.
std::vector<std::string_view> Tokens(std::string_view s) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == ',')) ++i;
    size_t j = i;
    while (j < s.size() && s[j] != ' ' && s[j] != '\t' && s[j] != ',') ++j;
    if (j > i) out.push_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

std::optional<uint64_t> Number(std::string_view token, uint64_t max) {
  uint64_t value = 0;
  auto [end, ec] = std::from_chars(token.data(), token.data() + token.size(), value);
  if (ec != std::errc() || end != token.data() + token.size() || value > max) return std::nullopt;
  return value;
}

// After `key`, with an optional ':'; nullopt when `line` is not that key.
std::optional<std::string_view> AfterKey(std::string_view line, std::string_view key) {
  if (!StartsWith(line, key)) return std::nullopt;
  std::string_view rest = line.substr(key.size());
  if (!rest.empty() && rest.front() == ':') rest.remove_prefix(1);
  if (!rest.empty() && rest.front() != ' ' && rest.front() != '\t') return std::nullopt;
  return TrimSpace(rest);
}

class QosParser {
 public:
  QosParser(std::string_view what, ParsedQos& out) : what_(what), out_(out) {}

  // Returns whether the line was known.
  bool Line(std::string_view line, size_t number) {
    number_ = number;
    if (Header(line)) return true;
    switch (section_) {
      case Section::kDscp2Prio:
        return DscpRow(line);
      case Section::kDefaultPriority:
        return DefaultPriority(line);
      case Section::kPfc:
        return PfcRow(line);
      case Section::kTrafficClass:
        return TcPriority(line);
      case Section::kNone:
        break;
    }
    return false;
  }

 private:
  bool Header(std::string_view line) {
    QosSettings& s = out_.settings;
    if (auto v = AfterValue(line, "DCBX mode:")) {
      s.dcbx_mode = StartsWith(*v, "OS") ? "os" : StartsWith(*v, "Firmware") ? "firmware" : "";
      if (s.dcbx_mode.empty()) Problem("unknown DCBX mode " + QuoteForMessage(*v));
      return Enter(Section::kNone);
    }
    if (auto v = AfterValue(line, "Priority trust state:")) {
      if (*v == "pcp" || *v == "dscp" || *v == "none") {
        s.trust = std::string(*v);
      } else {
        Problem("unknown trust state " + QuoteForMessage(*v));
      }
      return Enter(Section::kNone);
    }
    if (line == "dscp2prio mapping:") return Enter(Section::kDscp2Prio);
    if (auto v = AfterValue(line, "default priority:")) {
      Enter(Section::kDefaultPriority);
      if (!v->empty()) DefaultPriority(*v);
      return true;
    }
    if (auto v = AfterValue(line, "Receive buffer size (bytes):")) return BufferSizes(*v);
    if (auto v = AfterValue(line, "Cable len:")) {
      if (auto n = Number(*v, 0xffff)) {
        s.cable_length_m = static_cast<uint32_t>(*n);
      } else {
        Problem("cable length " + QuoteForMessage(*v) + " is not a number");
      }
      return Enter(Section::kNone);
    }
    if (line == "PFC configuration:") return Enter(Section::kPfc);
    if (StartsWith(line, "tc:")) return TrafficClass(line);
    if (StartsWith(line, "****** WARNING") || StartsWith(line, "Priority trust state is not")) {
      return Enter(Section::kNone);
    }
    if (StartsWith(line, "Buffers commands are not supported")) {
      s.buffers_unsupported = true;
      return Enter(Section::kNone);
    }
    return false;
  }

  static std::optional<std::string_view> AfterValue(std::string_view line, std::string_view key) {
    if (!StartsWith(line, key)) return std::nullopt;
    return TrimSpace(line.substr(key.size()));
  }

  bool Enter(Section section) {
    section_ = section;
    return true;
  }

  // `prio:3 dscp:31,30,29,28,27,26,25,24,` or a column-table row `26 3` (DSCP, priority).
  bool DscpRow(std::string_view line) {
    std::vector<std::string_view> tokens = Tokens(line);
    if (tokens.size() == 2 && Number(tokens[0], 63) && Number(tokens[1], 7)) {
      out_.settings.dscp_priority[*Number(tokens[0], 63)] =
          static_cast<uint8_t>(*Number(tokens[1], 7));
      return true;
    }
    if (tokens.size() < 2 || !StartsWith(tokens[0], "prio:") || !StartsWith(tokens[1], "dscp:")) {
      return false;
    }
    auto prio = Number(tokens[0].substr(5), 7);
    if (!prio) {
      Problem("priority " + QuoteForMessage(tokens[0]) + " is not 0-7");
      return true;
    }
    tokens[1].remove_prefix(5);
    for (size_t i = 1; i < tokens.size(); ++i) {
      if (tokens[i].empty()) continue;
      if (auto dscp = Number(tokens[i], 63)) {
        out_.settings.dscp_priority[*dscp] = static_cast<uint8_t>(*prio);
      } else {
        Problem("DSCP " + QuoteForMessage(tokens[i]) + " is not 0-63");
      }
    }
    return true;
  }

  bool DefaultPriority(std::string_view line) {
    std::string_view value = line;
    if (auto after = AfterKey(line, "priority")) value = *after;
    if (auto prio = Number(TrimSpace(value), 7)) {
      out_.settings.default_priority = static_cast<uint8_t>(*prio);
      return true;
    }
    return false;
  }

  bool BufferSizes(std::string_view values) {
    std::array<uint64_t, 8> sizes{};
    size_t count = 0;
    for (std::string_view token : Tokens(values)) {
      if (StartsWith(token, "total_size=")) {
        if (auto total = Number(token.substr(11), UINT64_MAX))
          out_.settings.buffer_total_bytes = total;
        continue;
      }
      auto size = Number(token, UINT64_MAX);
      if (!size || count == sizes.size()) {
        Problem("receive buffer sizes: " + QuoteForMessage(values) + " is not 8 numbers");
        return Enter(Section::kNone);
      }
      sizes[count++] = *size;
    }
    if (count == sizes.size()) {
      out_.settings.buffer_size_bytes = sizes;
    } else {
      Problem("receive buffer sizes: " + std::to_string(count) + " values, not 8");
    }
    return Enter(Section::kNone);
  }

  // `priority 0 1 2 3 4 5 6 7`, `enabled 0 0 0 1 0 0 0 0`, `buffer 0 0 0 1 0 0 0 0` (colons
  // optional).
  bool PfcRow(std::string_view line) {
    for (std::string_view key : {"priority", "enabled", "buffer"}) {
      auto rest = AfterKey(line, key);
      if (!rest) continue;
      std::vector<std::string_view> tokens = Tokens(*rest);
      std::array<uint8_t, 8> values{};
      bool ok = tokens.size() == 8;
      for (size_t i = 0; ok && i < 8; ++i) {
        auto v = Number(tokens[i], key == "enabled" ? 1 : 7);
        ok = v.has_value();
        if (ok) values[i] = static_cast<uint8_t>(*v);
      }
      if (!ok) {
        Problem("PFC " + std::string(key) + " row " + QuoteForMessage(*rest) + " is not 8 values");
        return true;
      }
      if (key == "enabled") {
        uint8_t mask = 0;
        for (size_t i = 0; i < 8; ++i) mask |= static_cast<uint8_t>(values[i] << i);
        out_.settings.pfc_enabled = mask;
      } else if (key == "buffer") {
        out_.settings.priority_buffer = values;
      }
      return true;
    }
    return false;
  }

  // `tc: 3 ratelimit: unlimited, tsa: ets, bw: 40%` (ratelimit `12.5 Gbps` when limited).
  bool TrafficClass(std::string_view line) {
    tc_.reset();
    section_ = Section::kNone;
    std::string_view rest = TrimSpace(line.substr(3));
    const size_t end = rest.find_first_of(" \t");
    auto tc = Number(rest.substr(0, end), 7);
    if (!tc) {
      Problem("traffic class " + QuoteForMessage(rest.substr(0, end)) + " is not 0-7");
      return true;
    }
    QosTrafficClass c;
    if (size_t at = rest.find("ratelimit:"); at != std::string_view::npos) {
      std::string_view limit = TrimSpace(rest.substr(at + 10));
      limit = limit.substr(0, limit.find(','));
      if (limit != "unlimited") {
        double gbps = 0;
        auto [p, ec] = std::from_chars(limit.data(), limit.data() + limit.size(), gbps);
        if (ec == std::errc() && std::isfinite(gbps) && gbps >= 0) c.ratelimit_gbps = gbps;
      }
    }
    if (size_t at = rest.find("tsa:"); at != std::string_view::npos) {
      std::string_view tsa = TrimSpace(rest.substr(at + 4));
      c.tsa = std::string(tsa.substr(0, tsa.find_first_of(", \t")));
    }
    if (size_t at = rest.find("bw:"); at != std::string_view::npos) {
      std::string_view bw = TrimSpace(rest.substr(at + 3));
      if (auto n = Number(bw.substr(0, bw.find('%')), 100))
        c.bandwidth_percent = static_cast<int>(*n);
    }
    out_.settings.traffic_classes[*tc] = std::move(c);
    tc_ = static_cast<uint8_t>(*tc);
    section_ = Section::kTrafficClass;
    return true;
  }

  // `priority: 3` under a `tc:` line.
  bool TcPriority(std::string_view line) {
    auto rest = AfterKey(line, "priority");
    if (!rest || !tc_) return false;
    if (auto prio = Number(*rest, 7)) {
      out_.settings.priority_tc[*prio] = *tc_;
    } else {
      Problem("priority " + QuoteForMessage(*rest) + " under tc " + std::to_string(*tc_) +
              " is not 0-7");
    }
    return true;
  }

  void Problem(const std::string& message) {
    if (out_.problems.size() >= ParsedQos::kMaxProblems) return;
    out_.problems.emplace_back(StatusCode::kInvalidArgument,
                               std::string(what_) + ":" + std::to_string(number_) + ": " + message);
  }

  std::string_view what_;
  ParsedQos& out_;
  Section section_ = Section::kNone;
  std::optional<uint8_t> tc_;
  size_t number_ = 0;
};

}  // namespace

Result<ParsedQos> ParseMlnxQosText(std::string_view text, std::string_view what) {
  ParsedQos out;
  QosParser parser(what, out);
  size_t known = 0, number = 0;
  while (!text.empty()) {
    if (++number > kMaxLines) {
      return Error(StatusCode::kInvalidArgument, std::string(what) + ": more than " +
                                                     std::to_string(kMaxLines) +
                                                     " lines; not mlnx_qos output");
    }
    const size_t eol = text.find('\n');
    std::string_view line = TrimSpace(text.substr(0, eol));
    text = eol == std::string_view::npos ? std::string_view() : text.substr(eol + 1);
    if (line.empty()) continue;
    if (parser.Line(line, number)) {
      ++known;
    } else {
      ++out.unknown_lines;
    }
  }
  if (known == 0) {
    return Error(StatusCode::kInvalidArgument,
                 std::string(what) +
                     ": no line of `mlnx_qos -i` output (expected \"Priority "
                     "trust state:\", \"PFC configuration:\", ...)");
  }
  return out;
}

}  // namespace fabricwatch::sys
