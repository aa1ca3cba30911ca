#pragma once
// Where a node's data comes from (docs/design.md §5.1 "Roots and sources"): the sysfs root, the
// ethtool replay directory, and one replay path per source a collector declares for itself.
//
// A collector that reads something besides sysfs and ethtool (a kernel log, a neighbour table,
// /proc) declares it in its own folder as a SourceSpec and lists it in its registry line
// (CollectorInfo::sources). From that declaration the agent makes the flag --path.<name>, checks
// the path, and hands the collector its Roots; no shared struct, flag table or test harness
// names the source. The privileged features a collector uses are declared the same way
// (PrivilegeNeed in collector_info.h, CollectorInfo::privileges).

#include <map>
#include <string>
#include <string_view>

namespace fabricwatch {

// One source a collector reads, replayable with --path.<name>.
struct SourceSpec {
  enum class Kind {
    kDirectory,  // the replay is a directory, which must exist
    kFile,       // the replay is a file, which may not exist yet (its writer starts later)
  };
  std::string_view name;  // the flag --path.<name>; unique across the registry
  std::string_view help;  // the flag's help text
  Kind kind = Kind::kDirectory;
  // Read when no replay is given and the sysfs root is this host's own /sys ("" none): the
  // kernel's own interface (/dev/kmsg, /proc). A replay root describes another node, so it
  // never falls back to this host's.
  std::string_view host_path = {};
};

struct Roots {
  std::string sysfs = "/sys";  // --path.sysfs
  std::string ethtool;         // --path.ethtool; "" reads the kernel
  // The sysfs root is this host's own /sys (IsHostSysfs), so kernel interfaces (umad, lldpd,
  // netlink, /dev/kmsg, /proc) describe the same node. Measured, not assumed: false until the
  // builder of the roots sets it (exporter ResolvedRoots), so a hand-made Roots reads no host
  // interface.
  bool host = false;
  // --path.<source> by source name, as given.
  std::map<std::string, std::string, std::less<>> replays;

  void SetReplay(const SourceSpec& source, std::string path) {
    replays[std::string(source.name)] = std::move(path);
  }
  // The replay path of `source`; "" when none was given.
  std::string Replay(const SourceSpec& source) const;
  // What to read for `source`: its replay, else its host path on the host's own /sys, else "".
  std::string PathOf(const SourceSpec& source) const;
  // The agent's flags for these roots: --path.sysfs, --path.ethtool when set, and each replay
  // as --path.<source>, space-separated (the simulator prints them).
  std::string Flags() const;
};

// True when `path` is this host's /sys (the same directory, however it is spelled).
bool IsHostSysfs(const std::string& path);

}  // namespace fabricwatch
