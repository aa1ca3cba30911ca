#pragma once
// KmsgLog: the kernel-log records the simulator appends to its replay file (<root>/kmsg,
// --path.kmsg), in the structured form a reader of /dev/kmsg receives (docs/reference.md §9.1):
//
//     <level>,<seq>,<usec>,-;<message>\n
//      SUBSYSTEM=pci\n                   only for a line printed against a struct device
//      DEVICE=+pci:<bdf>\n               (dev_*, mlx5_core_*, netdev_*: §9.2)
//
// Facility 0 (kernel), so the prefix is the level; seq counts from 1 by 1 over the whole run;
// usec is the record's simulated time plus kKmsgBootUs (the node booted before t = 0, as the
// printk clock of a running host has). Records are queued while the simulator ticks and taken
// as one batch, sorted by time (stable, so lines printed together keep their order) and only
// then numbered, so a flood spread over a second and a fault's lines at its end stay in time
// order. The file is only ever appended to: the agent tails it.
//
// Thread-safety: none; one owner.

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace fabricwatch::sim {

// The printk clock at simulated t = 0: 100 s after boot.
inline constexpr uint64_t kKmsgBootUs = 100'000'000;

// Kernel log levels (include/linux/kern_levels.h) the simulated drivers print at.
enum KmsgLevel { kKmsgErr = 3, kKmsgWarning = 4, kKmsgInfo = 6 };

class KmsgLog {
 public:
  // Queues one record at `sim_us` (simulated µs since t = 0). `bdf` names the PCI function the
  // line was printed against (SUBSYSTEM=pci, DEVICE=+pci:<bdf>); empty for pr_err lines.
  void Add(uint64_t sim_us, int level, std::string message, std::string_view bdf = {});
  // The queued records as the text to append (empty when none), numbered from the next
  // sequence number; the queue is emptied. A record never goes back in time: one queued
  // earlier than the last one taken is written at that time.
  std::string TakeBatch();

  size_t pending() const { return pending_.size(); }
  size_t pending_bytes() const { return pending_bytes_; }
  uint64_t next_sequence() const { return next_seq_; }

  // The message as the kernel escapes it: bytes below 0x20, from 0x7f, and '\' as \xNN.
  static std::string Escape(std::string_view message);

 private:
  struct Record {
    uint64_t usec;
    int level;
    std::string message;
    std::string bdf;
  };
  std::vector<Record> pending_;
  size_t pending_bytes_ = 0;
  uint64_t next_seq_ = 1;
  uint64_t last_usec_ = 0;
};

// module_error's `error:` values and what mlx5 prints for each (docs/reference.md §9.5,
// events.c mlx5_port_module_event), with the mlx5e ethtool counter that also counts it
// (en_stats.c pme errors; null: none).
struct ModuleErrorKind {
  std::string_view name;  // the scenario parameter
  std::string_view text;  // after "Cable error, "
  const char* stat;
};
std::span<const ModuleErrorKind> ModuleErrorKinds();
const ModuleErrorKind* FindModuleError(std::string_view name);

// Text prefixes of the printers (docs/reference.md §9.2).
// dev_*/mlx5_core_info: "mlx5_core 0000:3b:00.0: ".
std::string DevPrefix(std::string_view driver, std::string_view bdf);
// mlx5_core_err/_warn/mlx5_log: "mlx5_core 0000:3b:00.0: poll_health:836:(pid 0): ". The
// function and line are a build's; these are the ones of the examples in §9.
std::string Mlx5TaggedPrefix(std::string_view bdf, std::string_view function, int line, int pid);
// netdev_info: "mlx5_core 0000:3b:00.0 enp59s0f0np0: ".
std::string NetdevPrefix(std::string_view driver, std::string_view bdf, std::string_view netdev);

}  // namespace fabricwatch::sim
