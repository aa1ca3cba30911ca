#include "collectors/peer/lldp_keyvalue.h"

#include <array>
#include <charconv>
#include <optional>
#include <utility>

namespace fabricwatch::peer {
namespace {

Status Bad(size_t line, std::string_view why) {
  return Status(StatusCode::kInvalidArgument,
                "lldpctl keyvalue line " + std::to_string(line) + ": " + std::string(why));
}

// The sections display.c writes directly under an interface (display_interface, display_port,
// display_chassis, display_vlans, display_ppvids, display_pids, display_med, custom TLVs).
bool IsSection(std::string_view part) {
  static constexpr std::array<std::string_view, 12> kSections = {
      "via",  "rid",  "age",   "alias", "status",   "chassis",
      "port", "vlan", "ppvid", "pi",    "lldp-med", "unknown-tlvs"};
  for (std::string_view s : kSections) {
    if (part == s) return true;
  }
  return false;
}

bool IsIdSubtypeName(std::string_view name) {
  return name == "mac" || name == "ip" || name == "ifname" || name == "ifalias" ||
         name == "local" || name == "unhandled";
}

struct Pending {
  LldpNeighbor neighbor;
  bool has_chassis = false;
  bool has_port = false;
  int neighbors = 0;  // `via` lines seen: the second starts a neighbour that is not kept
  size_t first_line = 0;
  std::optional<LldpKeyValueSkipped> bad;  // the first bad line of the block
};

// One `key=value` line and its continuation lines, applied once the next key line shows that the
// value is whole.
struct OpenValue {
  Pending* block = nullptr;
  std::string path;
  std::string value;
  size_t line = 0;
  bool invalid_utf8 = false;
};

// Splits `key` (after "lldp.") into the netdev and the path below it.
bool SplitKey(std::string_view key, std::string_view& netdev, std::string_view& path) {
  size_t dot = key.find('.');
  while (dot != std::string_view::npos) {
    const std::string_view rest = key.substr(dot + 1);
    const std::string_view part = rest.substr(0, rest.find('.'));
    if (dot > 0 && IsSection(part)) {
      netdev = key.substr(0, dot);
      path = rest;
      return true;
    }
    dot = key.find('.', dot + 1);
  }
  return false;
}

// Applies one `path=value` of a neighbour; false with `why` on a bad value.
bool Apply(Pending& p, std::string_view path, std::string_view value, std::string& why,
           LldpKeyValueSkip& reason) {
  LldpNeighbor& n = p.neighbor;
  const size_t dot = path.find('.');
  const std::string_view section = path.substr(0, dot);
  const std::string_view field = dot == std::string_view::npos ? "" : path.substr(dot + 1);
  if (field == "ttl" && (section == "port" || section == "chassis")) {
    uint32_t ttl = 0;
    auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), ttl);
    if (value.empty() || ec != std::errc() || end != value.data() + value.size() || ttl > 65535) {
      why = "TTL is not a number of seconds (0-65535)";
      reason = LldpKeyValueSkip::kBadTtl;
      return false;
    }
    n.ttl_seconds = ttl;
  } else if (section == "chassis") {
    if (IsIdSubtypeName(field) && !p.has_chassis) {
      n.chassis_id_subtype = LldpChassisSubtypeOfName(field);
      n.chassis_id.assign(value);
      p.has_chassis = true;
    } else if (field == "name") {
      n.system_name.assign(value);
    } else if (field == "descr") {
      n.system_description.assign(value);
    } else if (field == "mgmt-ip" && !n.management_address) {
      n.management_address.emplace(value);
    }
  } else if (section == "port") {
    if (IsIdSubtypeName(field) && !p.has_port) {
      n.port_id_subtype = LldpPortSubtypeOfName(field);
      n.port_id.assign(value);
      p.has_port = true;
    } else if (field == "descr") {
      n.port_description.assign(value);
    }
  }
  return true;
}

}  // namespace

uint8_t LldpChassisSubtypeOfName(std::string_view name) {
  if (name == "ifalias") return 2;
  if (name == "mac") return kChassisIdMac;
  if (name == "ip") return kChassisIdNetworkAddress;
  if (name == "ifname") return 6;
  if (name == "local") return 7;
  return 0;
}

uint8_t LldpPortSubtypeOfName(std::string_view name) {
  if (name == "ifalias") return 1;
  if (name == "mac") return kPortIdMac;
  if (name == "ip") return kPortIdNetworkAddress;
  if (name == "ifname") return kPortIdInterfaceName;
  if (name == "local") return 7;
  return 0;
}

std::string_view LldpKeyValueSkipName(LldpKeyValueSkip reason) {
  switch (reason) {
    case LldpKeyValueSkip::kIncomplete:
      return "incomplete";
    case LldpKeyValueSkip::kMalformed:
      return "malformed";
    case LldpKeyValueSkip::kInvalidUtf8:
      return "invalid_utf8";
    case LldpKeyValueSkip::kTooLong:
      return "too_long";
    case LldpKeyValueSkip::kBadTtl:
      return "bad_ttl";
  }
  return "malformed";
}

namespace {

class KeyValueReader {
 public:
  void Line(size_t number, std::string_view line) {
    if (!line.starts_with("lldp.")) {
      Continuation(number, line);
      return;
    }
    Close();
    const size_t eq = line.find('=');
    const std::string_view key = line.substr(0, eq);
    std::string_view netdev, path;
    if (!SplitKey(key.substr(5), netdev, path)) {
      Stray(number, LldpKeyValueSkip::kMalformed, "key is not lldp.<netdev>.<section>");
      return;
    }
    Pending& block = Block(netdev, number);
    if (eq == std::string_view::npos) {
      MarkBad(block, number, LldpKeyValueSkip::kMalformed, "no '=' in the line (cut short?)");
      return;
    }
    if (path == "via") ++block.neighbors;
    open_ = OpenValue{.block = &block,
                      .path = std::string(path),
                      .value = std::string(line.substr(eq + 1)),
                      .line = number,
                      .invalid_utf8 = !IsValidLldpText(line)};
  }

  LldpKeyValueText Finish() {
    Close();
    LldpKeyValueText out;
    out.skipped = std::move(stray_);
    for (auto& [netdev, p] : blocks_) {
      if (!p.bad && (!p.has_chassis || !p.has_port || p.neighbor.chassis_id.empty() ||
                     p.neighbor.port_id.empty())) {
        MarkBad(p, p.first_line, LldpKeyValueSkip::kIncomplete,
                "neighbour on " + netdev + " without a chassis id and a port id");
      }
      if (p.bad) {
        p.bad->netdev = netdev;
        out.skipped.push_back(std::move(*p.bad));
      } else {
        out.neighbors.emplace(netdev, std::move(p.neighbor));
      }
    }
    return out;
  }

 private:
  // A line without a key: the rest of the value above (lldpd before 0.9.2), else a stray line.
  void Continuation(size_t number, std::string_view line) {
    if (open_.block == nullptr) {
      Stray(number,
            IsValidLldpText(line) ? LldpKeyValueSkip::kMalformed : LldpKeyValueSkip::kInvalidUtf8,
            "not a lldp.<netdev>.<field>=value line, nor the continuation of one");
      return;
    }
    // Bounded before joining: a long run of continuation lines costs at most the bound.
    if (open_.value.size() <= kMaxLldpStringBytes) {
      open_.value.push_back(' ');
      open_.value.append(line.substr(0, kMaxLldpStringBytes + 1));
    }
    open_.invalid_utf8 = open_.invalid_utf8 || !IsValidLldpText(line);
  }

  void Close() {
    if (open_.block == nullptr) return;
    Pending& p = *open_.block;
    if (open_.invalid_utf8) {
      MarkBad(p, open_.line, LldpKeyValueSkip::kInvalidUtf8, "not valid UTF-8");
    } else if (open_.value.size() > kMaxLldpStringBytes) {
      MarkBad(p, open_.line, LldpKeyValueSkip::kTooLong, "value over 255 bytes");
    } else if (p.neighbors <= 1) {
      std::string why;
      LldpKeyValueSkip reason = LldpKeyValueSkip::kMalformed;
      if (!Apply(p, open_.path, open_.value, why, reason)) MarkBad(p, open_.line, reason, why);
    }
    open_ = OpenValue{};
  }

  Pending& Block(std::string_view netdev, size_t number) {
    auto it = blocks_.find(netdev);
    if (it == blocks_.end()) {
      it = blocks_.emplace(std::string(netdev), Pending{}).first;
      it->second.first_line = number;
    }
    return it->second;
  }

  static void MarkBad(Pending& p, size_t number, LldpKeyValueSkip reason, std::string_view why) {
    if (p.bad) return;  // the first bad line names the block
    p.bad = LldpKeyValueSkipped{.netdev = "", .reason = reason, .status = Bad(number, why)};
  }

  void Stray(size_t number, LldpKeyValueSkip reason, std::string_view why) {
    open_ = OpenValue{};  // what follows a bad key belongs to no value
    stray_.push_back({.netdev = "", .reason = reason, .status = Bad(number, why)});
  }

  std::map<std::string, Pending, std::less<>> blocks_;
  std::vector<LldpKeyValueSkipped> stray_;
  OpenValue open_;
};

}  // namespace

Result<LldpKeyValueText> ReadLldpKeyValue(std::string_view text) {
  if (text.size() > kMaxLldpKeyValueBytes) {
    return Error(StatusCode::kInvalidArgument, "lldpctl keyvalue: longer than 1 MiB");
  }
  KeyValueReader reader;
  size_t number = 0;
  while (!text.empty()) {
    const size_t newline = text.find('\n');
    std::string_view line = text.substr(0, newline);
    text = newline == std::string_view::npos ? std::string_view() : text.substr(newline + 1);
    ++number;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (!line.empty()) reader.Line(number, line);
  }
  return reader.Finish();
}

Result<std::map<std::string, LldpNeighbor, std::less<>>> ParseLldpKeyValue(std::string_view text) {
  auto read = ReadLldpKeyValue(text);
  if (!read) return Error(read.error());
  return std::move(read->neighbors);
}

}  // namespace fabricwatch::peer
