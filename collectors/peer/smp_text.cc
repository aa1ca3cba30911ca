#include "collectors/peer/smp_text.h"

#include <charconv>
#include <cstdio>

#include "base/utf8.h"

namespace fabricwatch::peer {
namespace {

Status Bad(std::string_view what, std::string_view why) {
  return Status(StatusCode::kInvalidArgument, std::string(what) + ": " + std::string(why));
}

// "Name:.......value" -> (Name, value); the dots pad the name to a column (libibmad dump.c).
bool SplitField(std::string_view line, std::string_view& name, std::string_view& value) {
  const size_t colon = line.find(':');
  if (colon == std::string_view::npos || colon == 0) return false;
  name = line.substr(0, colon);
  value = line.substr(colon + 1);
  while (!value.empty() && value.front() == '.') value.remove_prefix(1);
  while (!value.empty() && (value.back() == '\r' || value.back() == ' ')) value.remove_suffix(1);
  return true;
}

template <typename T>
bool Number(std::string_view text, T& out) {
  int base = 10;
  if (text.starts_with("0x") || text.starts_with("0X")) {
    text.remove_prefix(2);
    base = 16;
  }
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out, base);
  return !text.empty() && ec == std::errc() && end == text.data() + text.size();
}

bool ValidText(std::string_view text) {
  // Switch firmware writes printable ASCII ("MF0;leaf07:MQM9790/U1"); UTF-8 is accepted when it is
  // well-formed, control characters never.
  for (char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) return false;
  }
  return IsValidUtf8(text);
}

}  // namespace

Result<SmpNodeInfo> ParseSmpNodeInfo(std::string_view text) {
  SmpNodeInfo info;
  bool guid = false, type = false, local = false;
  while (!text.empty()) {
    const size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    if (line.empty() || line.front() == '#') continue;
    std::string_view name, value;
    if (!SplitField(line, name, value)) continue;  // a line of another shape: not a field
    if (name == "Guid") {
      if (!Number(value, info.node_guid)) return Error(Bad("nodeinfo Guid", value));
      guid = true;
    } else if (name == "SystemGuid") {
      if (!Number(value, info.system_guid)) return Error(Bad("nodeinfo SystemGuid", value));
    } else if (name == "NodeType") {
      if (value.empty() || value.size() > 32) return Error(Bad("nodeinfo NodeType", value));
      info.node_type.assign(value);
      type = true;
    } else if (name == "NumPorts") {
      if (!Number(value, info.num_ports) || info.num_ports > 255) {
        return Error(Bad("nodeinfo NumPorts", value));
      }
    } else if (name == "LocalPort") {
      if (!Number(value, info.local_port) || info.local_port > 255) {
        return Error(Bad("nodeinfo LocalPort", value));
      }
      local = true;
    } else if (name == "VendorId") {
      if (!Number(value, info.vendor_id)) return Error(Bad("nodeinfo VendorId", value));
    } else if (name == "DevId") {
      if (!Number(value, info.device_id)) return Error(Bad("nodeinfo DevId", value));
    }
  }
  if (!guid || !type || !local) {
    return Error(Bad("nodeinfo", "missing Guid, NodeType or LocalPort"));
  }
  return info;
}

Result<std::string> ParseSmpNodeDesc(std::string_view text) {
  while (!text.empty()) {
    const size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    constexpr std::string_view kKey = "Node Description:";
    if (!line.starts_with(kKey)) continue;
    line.remove_prefix(kKey.size());
    while (!line.empty() && line.front() == '.') line.remove_prefix(1);
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.remove_suffix(1);
    if (line.size() > kMaxNodeDescriptionBytes) return Error(Bad("nodedesc", "over 64 bytes"));
    if (!ValidText(line)) return Error(Bad("nodedesc", "not printable UTF-8"));
    return std::string(line);
  }
  return Error(Bad("nodedesc", "no Node Description line"));
}

std::string FormatGuid(uint64_t guid) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%016llx", static_cast<unsigned long long>(guid));
  return buf;
}

}  // namespace fabricwatch::peer
