#include "collectors/sys/lldp_keyvalue.h"

#include <array>
#include <charconv>

namespace fabricwatch::sys {
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
bool Apply(Pending& p, std::string_view path, std::string_view value, std::string& why) {
  LldpNeighbor& n = p.neighbor;
  const size_t dot = path.find('.');
  const std::string_view section = path.substr(0, dot);
  const std::string_view field = dot == std::string_view::npos ? "" : path.substr(dot + 1);
  if (field == "ttl" && (section == "port" || section == "chassis")) {
    uint32_t ttl = 0;
    auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), ttl);
    if (value.empty() || ec != std::errc() || end != value.data() + value.size() || ttl > 65535) {
      why = "TTL is not a number of seconds (0-65535)";
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

Result<std::map<std::string, LldpNeighbor, std::less<>>> ParseLldpKeyValue(std::string_view text) {
  if (text.size() > kMaxLldpKeyValueBytes) {
    return Error(StatusCode::kInvalidArgument, "lldpctl keyvalue: longer than 1 MiB");
  }
  std::map<std::string, Pending, std::less<>> pending;
  size_t number = 0;
  while (!text.empty()) {
    const size_t newline = text.find('\n');
    std::string_view line = text.substr(0, newline);
    text = newline == std::string_view::npos ? std::string_view() : text.substr(newline + 1);
    ++number;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.empty()) continue;
    if (!IsValidLldpText(line)) return Error(Bad(number, "not valid UTF-8"));
    const size_t eq = line.find('=');
    if (eq == std::string_view::npos) return Error(Bad(number, "no '=' in the line"));
    const std::string_view key = line.substr(0, eq);
    const std::string_view value = line.substr(eq + 1);
    if (value.size() > kMaxLldpStringBytes) return Error(Bad(number, "value over 255 bytes"));
    std::string_view netdev, path;
    if (!key.starts_with("lldp.") || !SplitKey(key.substr(5), netdev, path)) {
      return Error(Bad(number, "key is not lldp.<netdev>.<field>"));
    }
    auto it = pending.find(netdev);
    if (it == pending.end()) {
      it = pending.emplace(std::string(netdev), Pending{}).first;
      it->second.first_line = number;
    }
    Pending& p = it->second;
    if (path == "via") ++p.neighbors;
    if (p.neighbors > 1) continue;
    std::string why;
    if (!Apply(p, path, value, why)) return Error(Bad(number, why));
  }
  std::map<std::string, LldpNeighbor, std::less<>> out;
  for (auto& [netdev, p] : pending) {
    if (!p.has_chassis || !p.has_port || p.neighbor.chassis_id.empty() ||
        p.neighbor.port_id.empty()) {
      return Error(Bad(p.first_line, "neighbour on " + netdev +
                                         " without a chassis id and a "
                                         "port id"));
    }
    out.emplace(netdev, std::move(p.neighbor));
  }
  return out;
}

}  // namespace fabricwatch::sys
