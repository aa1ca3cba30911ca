#include "tools/fabricsim/kmsg_log.h"

#include <algorithm>
#include <cstdio>
#include <utility>

namespace fabricwatch::sim {

void KmsgLog::Add(uint64_t sim_us, int level, std::string message, std::string_view bdf) {
  pending_bytes_ += message.size() + bdf.size() + 64;
  pending_.push_back({kKmsgBootUs + sim_us, level, std::move(message), std::string(bdf)});
}

std::string KmsgLog::TakeBatch() {
  std::stable_sort(pending_.begin(), pending_.end(),
                   [](const Record& a, const Record& b) { return a.usec < b.usec; });
  std::string out;
  out.reserve(pending_bytes_);
  for (const Record& r : pending_) {
    last_usec_ = std::max(last_usec_, r.usec);
    // Facility 0 (kernel): the syslog prefix is the level itself (§9.1).
    out += std::to_string(r.level & 7);
    out += ',';
    out += std::to_string(next_seq_++);
    out += ',';
    out += std::to_string(last_usec_);
    out += ",-;";
    out += Escape(r.message);
    out += '\n';
    if (!r.bdf.empty()) {
      // set_dev_info (drivers/base/core.c): the bus of a PCI function, then +<bus>:<name>.
      out += " SUBSYSTEM=pci\n DEVICE=+pci:";
      out += r.bdf;
      out += '\n';
    }
  }
  pending_.clear();
  pending_bytes_ = 0;
  return out;
}

std::string KmsgLog::Escape(std::string_view message) {
  std::string out;
  out.reserve(message.size());
  for (const char c : message) {
    const auto b = static_cast<unsigned char>(c);
    if (b < 0x20 || b >= 0x7f || c == '\\') {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\x%02x", b);
      out += buf;
    } else {
      out += c;
    }
  }
  return out;
}

namespace {

// "unsupported" is the part-number enforcement error: a cable not on the card's list.
constexpr ModuleErrorKind kModuleErrors[] = {
    {"high_temperature", "High Temperature", "module_high_temp"},
    {"bad_cable", "Bad or shorted cable/module", "module_bad_shorted"},
    {"power_budget", "Power budget exceeded", nullptr},
    {"bus_stuck", "Bus stuck (I2C or data shorted)", "module_bus_stuck"},
    {"no_eeprom", "No EEPROM/retry timeout", nullptr},
    {"unsupported", "Enforce part number list", nullptr},
};

}  // namespace

std::span<const ModuleErrorKind> ModuleErrorKinds() { return kModuleErrors; }

const ModuleErrorKind* FindModuleError(std::string_view name) {
  for (const ModuleErrorKind& k : kModuleErrors) {
    if (k.name == name) return &k;
  }
  return nullptr;
}

std::string DevPrefix(std::string_view driver, std::string_view bdf) {
  return std::string(driver) + " " + std::string(bdf) + ": ";
}

std::string Mlx5TaggedPrefix(std::string_view bdf, std::string_view function, int line, int pid) {
  return DevPrefix("mlx5_core", bdf) + std::string(function) + ":" + std::to_string(line) +
         ":(pid " + std::to_string(pid) + "): ";
}

std::string NetdevPrefix(std::string_view driver, std::string_view bdf, std::string_view netdev) {
  return std::string(driver) + " " + std::string(bdf) + " " + std::string(netdev) + ": ";
}

}  // namespace fabricwatch::sim
