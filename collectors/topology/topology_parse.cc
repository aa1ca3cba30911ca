#include "collectors/topology/topology_parse.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdio>

#include "base/value_parse.h"

namespace fabricwatch::topology {
namespace {

std::string Shown(std::string_view text) {
  return "\"" + std::string(text.substr(0, 48)) + (text.size() > 48 ? "...\"" : "\"");
}

bool AllHex(std::string_view text) {
  return !text.empty() && std::all_of(text.begin(), text.end(), [](char c) {
    return std::isxdigit(static_cast<unsigned char>(c)) != 0;
  });
}

// dddd:bb:dd.f, also with the 5-digit domains of Intel VMD (10000:e0:06.0).
bool IsBdf(std::string_view text) {
  if (IsPciAddress(text)) return true;
  size_t colon = text.find(':');
  if (colon == std::string_view::npos || colon < 4) return false;
  return AllHex(text.substr(0, colon)) && IsPciAddress("0000" + std::string(text.substr(colon)));
}

// pciDDDD:BB — a host bridge (root bus) directory.
bool IsHostBridge(std::string_view text) {
  if (!text.starts_with("pci")) return false;
  std::string_view rest = text.substr(3);
  size_t colon = rest.find(':');
  return colon != std::string_view::npos && colon >= 4 && AllHex(rest.substr(0, colon)) &&
         rest.size() == colon + 3 && AllHex(rest.substr(colon + 1));
}

std::vector<std::string_view> Components(std::string_view path) {
  std::vector<std::string_view> parts;
  size_t pos = 0;
  while (pos <= path.size()) {
    size_t slash = path.find('/', pos);
    if (slash == std::string_view::npos) slash = path.size();
    if (slash > pos) parts.push_back(path.substr(pos, slash - pos));
    pos = slash + 1;
  }
  return parts;
}

}  // namespace

Result<std::optional<double>> ParseLinkSpeed(std::string_view text, std::string_view what) {
  std::string_view value = TrimSpace(text);
  if (value.starts_with("Unknown")) return std::optional<double>();
  const auto bad = [&] {
    return Error(StatusCode::kInvalidArgument,
                 std::string(what) + ": expected a speed such as \"16.0 GT/s PCIe\", got " +
                     Shown(value));
  };
  size_t space = value.find(' ');
  if (space == std::string_view::npos || space == 0) return bad();
  double gt = 0;
  auto [end, ec] = std::from_chars(value.data(), value.data() + space, gt);
  if (ec != std::errc() || end != value.data() + space || !std::isfinite(gt) || gt <= 0) {
    return bad();
  }
  std::string_view unit = TrimSpace(value.substr(space + 1));
  if (unit != "GT/s" && unit != "GT/s PCIe") return bad();
  // The kernel prints whole GT/s with one decimal (2.5, 5.0, ..., 64.0): round away the
  // binary representation error of the decimal string.
  return std::optional<double>(std::round(gt * 1000.0) * 1e6);
}

Result<uint32_t> ParsePciHex(std::string_view text, std::string_view what) {
  std::string_view value = TrimSpace(text);
  if (!value.starts_with("0x") && !value.starts_with("0X")) {
    return Error(StatusCode::kInvalidArgument,
                 std::string(what) + ": expected 0x-prefixed hex, got " + Shown(value));
  }
  auto parsed = ParseUint64(value, what);
  if (!parsed) return Error(parsed.error());
  if (*parsed > 0xffffffu) {
    return Error(StatusCode::kInvalidArgument,
                 std::string(what) + ": value out of range: " + Shown(value));
  }
  return static_cast<uint32_t>(*parsed);
}

Result<AerStats> ParseAerStats(std::string_view text, std::string_view what) {
  AerStats stats;
  uint64_t sum = 0;
  size_t pos = 0;
  int line_number = 0;
  while (pos < text.size()) {
    size_t eol = text.find('\n', pos);
    if (eol == std::string_view::npos) eol = text.size();
    std::string_view line = TrimSpace(text.substr(pos, eol - pos));
    pos = eol + 1;
    ++line_number;
    if (line.empty()) continue;
    size_t space = line.find_last_of(" \t");
    if (space == std::string_view::npos) {
      return Error(StatusCode::kInvalidArgument,
                   std::string(what) + ": line " + std::to_string(line_number) +
                       ": expected \"<name> <count>\", got " + Shown(line));
    }
    std::string_view name = TrimSpace(line.substr(0, space));
    auto count = ParseUint64(line.substr(space + 1), what);
    if (!count || name.empty()) {
      return Error(StatusCode::kInvalidArgument,
                   std::string(what) + ": line " + std::to_string(line_number) +
                       ": expected \"<name> <count>\", got " + Shown(line));
    }
    if (name.starts_with("TOTAL_ERR_")) {
      stats.total = *count;
      stats.has_total_line = true;
    } else {
      stats.counters.emplace_back(std::string(name), *count);
      sum += *count;
    }
  }
  if (!stats.has_total_line) {
    if (stats.counters.empty()) {
      return Error(StatusCode::kInvalidArgument, std::string(what) + ": empty AER statistics");
    }
    stats.total = sum;
  }
  return stats;
}

Result<PciPath> SplitPciPath(std::string_view path) {
  std::vector<std::string_view> parts = Components(path);
  size_t first_bdf = parts.size();
  while (first_bdf > 0 && IsBdf(parts[first_bdf - 1])) --first_bdf;
  if (first_bdf == parts.size() || first_bdf == 0 || !IsHostBridge(parts[first_bdf - 1])) {
    return Error(StatusCode::kInvalidArgument,
                 "not a PCI device path (pciDDDD:BB/<bdf>/...): " + Shown(path));
  }
  PciPath out;
  out.host_bridge = std::string(parts[first_bdf - 1]);
  for (size_t i = first_bdf; i < parts.size(); ++i) out.chain.emplace_back(parts[i]);
  return out;
}

std::optional<std::string> EnclosingPciFunction(std::string_view path) {
  std::vector<std::string_view> parts = Components(path);
  for (size_t i = parts.size(); i > 0; --i) {
    if (!IsBdf(parts[i - 1])) continue;
    std::string prefix;
    for (size_t j = 0; j < i; ++j) prefix += std::string(parts[j]) + "/";
    if (SplitPciPath(prefix)) return std::string(parts[i - 1]);
    return std::nullopt;
  }
  return std::nullopt;
}

Result<std::string> NormalizeLinkTarget(std::string_view link_dir, std::string_view target) {
  const bool absolute = target.starts_with('/');
  std::vector<std::string_view> parts;
  if (!absolute) parts = Components(link_dir);
  for (std::string_view part : Components(target)) {
    if (part == ".") continue;
    if (part == "..") {
      if (parts.empty()) {
        return Error(StatusCode::kInvalidArgument,
                     "link target leaves the sysfs root: " + std::string(link_dir) + " -> " +
                         Shown(target));
      }
      parts.pop_back();
      continue;
    }
    parts.push_back(part);
  }
  std::string out = absolute ? "/" : "";
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i > 0) out += '/';
    out += parts[i];
  }
  return out;
}

std::string_view LevelName(Level level) {
  switch (level) {
    case Level::kX: return "X";
    case Level::kPix: return "PIX";
    case Level::kPxb: return "PXB";
    case Level::kPhb: return "PHB";
    case Level::kNode: return "NODE";
    case Level::kSys: return "SYS";
  }
  return "SYS";
}

int LevelDistance(Level level) {
  switch (level) {
    case Level::kX: return 0;
    case Level::kPix: return 10;
    case Level::kPxb: return 20;
    case Level::kPhb: return 30;
    case Level::kNode: return 40;
    case Level::kSys: return 50;
  }
  return 50;
}

Level Classify(const Endpoint& a, const Endpoint& b) {
  if (a.path.host_bridge == b.path.host_bridge && a.path.chain == b.path.chain) return Level::kX;
  if (a.path.host_bridge != b.path.host_bridge) {
    if (a.numa_node.has_value() != b.numa_node.has_value()) return Level::kSys;
    return a.numa_node == b.numa_node ? Level::kNode : Level::kSys;
  }
  const auto& ca = a.path.chain;
  const auto& cb = b.path.chain;
  // The deepest common bridge: never count an endpoint itself as a common component (two
  // endpoints differ in their last element; one being the other's ancestor is a bridge, not
  // an endpoint, and is treated like any bridge).
  size_t common = 0;
  while (common < ca.size() && common < cb.size() && ca[common] == cb[common]) ++common;
  if (common == 0) return Level::kPhb;
  const auto below = [&](const std::vector<std::string>& chain) -> size_t {
    return chain.size() > common ? chain.size() - common - 1 : 0;
  };
  return below(ca) <= 1 && below(cb) <= 1 ? Level::kPix : Level::kPxb;
}

DeviceKind ClassifyDevice(uint32_t vendor, uint32_t class_code) {
  const uint32_t base = class_code >> 16;
  if ((vendor == 0x10de || vendor == 0x1002) && (base == 0x03 || base == 0x12)) {
    return DeviceKind::kGpu;
  }
  if (base == 0x02) return DeviceKind::kNic;
  if ((class_code >> 8) == 0x0604) return DeviceKind::kBridge;
  return DeviceKind::kOther;
}

std::string HexId(uint32_t value, int digits) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "0x%0*x", digits, value);
  return buf;
}

}  // namespace fabricwatch::topology
