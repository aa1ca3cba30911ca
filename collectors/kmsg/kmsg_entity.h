#pragma once
// Which fabric function a kernel log record is about (docs/reference.md §9.2, docs/design.md
// §5.2).
//
// RecordSubject (pure) reads what the record names: the `DEVICE=` continuation
// (`+pci:<bdf>`, `n<ifindex>`), the text prefix of the dev_* printers (`mlx5_core 0000:3b:00.0: `),
// of netdev_* (`mlx5_core 0000:3b:00.0 enp59s0f0np0: `), of mlx5_ib's pr_err (`mlx5_0/1: `), and
// the source function of an AER "received from <bdf>" line, which the Root Port prints.
// EntityResolver (sysfs I/O) maps that to the RDMA device and netdev of this host. Names from the
// text are checked before they become paths (a hostile or corrupt line cannot walk the tree),
// and what sysfs answers is cached for a while, so a flood costs no sysfs reads per line.

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>

#include "collectors/sys/kmsg_parse.h"
#include "collectors/sys/kmsg_patterns.h"

namespace fabricwatch::sys {
class SysFs;
}

namespace fabricwatch::kmsg {

struct RecordSubject {
  std::string pci;     // PCI function address (0000:3b:00.0), or ""
  std::string netdev;  // netdev the text names, or ""
  std::string ibdev;   // RDMA device the text names, or ""
  int ifindex = 0;     // DEVICE=n<ifindex>, or 0
  bool empty() const { return pci.empty() && netdev.empty() && ibdev.empty() && ifindex == 0; }
};

// `message` is the record's unescaped text; `pattern` the row it matched (an AER source line
// names the erring function in its text, not in its prefix).
RecordSubject SubjectOf(const sys::KmsgRecord& record, std::string_view message,
                        const sys::KernelEventPattern& pattern);

// dddd:bb:dd.f, lower- or upper-case hex.
bool IsPciAddress(std::string_view text);

struct KernelEntity {
  std::string device;  // RDMA device, or ""
  std::string netdev;  // netdev, or ""
  bool operator<(const KernelEntity& other) const {
    return std::tie(device, netdev) < std::tie(other.device, other.netdev);
  }
};

class EntityResolver {
 public:
  explicit EntityResolver(const sys::SysFs& sysfs) : sysfs_(sysfs) {}

  // The entity, or nullopt when the subject is no fabric function of this host (a bridge, a GPU,
  // a netdev or device that is gone).
  std::optional<KernelEntity> Resolve(const RecordSubject& subject,
                                      std::chrono::steady_clock::time_point now);

 private:
  std::optional<KernelEntity> FromPci(const std::string& pci, const std::string& netdev) const;
  std::optional<KernelEntity> FromNetdev(const std::string& netdev) const;
  std::optional<KernelEntity> FromIbdev(const std::string& ibdev) const;
  std::optional<KernelEntity> FromIfindex(int ifindex) const;

  struct Cached {
    std::optional<KernelEntity> entity;
    std::chrono::steady_clock::time_point at;
  };
  // Devices come and go (hot-unplug, driver reload): answers are kept this long.
  static constexpr std::chrono::seconds kCacheFor{30};
  static constexpr size_t kMaxCached = 1024;
  const sys::SysFs& sysfs_;
  std::map<std::string, Cached, std::less<>> cache_;
};

}  // namespace fabricwatch::kmsg
