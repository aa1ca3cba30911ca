#pragma once
// Which fabric function a kernel log record is about (docs/reference.md §9.2, docs/design.md
// §5.2).
//
// SubjectOf (kmsg_subject.h, pure) reads what the record names; EntityResolver (sysfs I/O) maps
// that to the RDMA device and netdev of this host. Names from the text are checked before they
// become paths (a hostile or corrupt line cannot walk the tree), and what sysfs answers is cached
// for a while, so a flood costs no sysfs reads per line.

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>

#include "collectors/kmsg/kmsg_subject.h"

namespace fabricwatch::sys {
class SysFs;
}

namespace fabricwatch::kmsg {

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

  // A fault line of `pci_driver` that names no function (issue 38: "mlx5_core: INFO: synd 0x8:
  // unrecoverable hardware error."), or names a function of this host that has neither an RDMA
  // device nor a netdev (its probe failed): the one function bound to that driver when the node
  // has exactly one with a device, else the node itself (an entity with both names empty; the
  // finding carries the line as evidence). Never nullopt: a fault is not dropped for want of a
  // name.
  KernelEntity ByDriver(std::string_view pci_driver, std::chrono::steady_clock::time_point now);

  // Whether `pci` is a PCI function of this host (bus/pci/devices/<pci> exists).
  bool HasPciFunction(const std::string& pci, std::chrono::steady_clock::time_point now);

 private:
  std::optional<KernelEntity> FromPci(const std::string& pci, const std::string& netdev) const;
  // The fabric functions below a PCIe port (its secondary bus's devices are subdirectories of the
  // port's own sysfs directory), `depth` levels of switches down: the one, the node when several,
  // nullopt when none (a GPU's port).
  std::optional<KernelEntity> BelowPort(const std::string& port, int depth) const;
  std::optional<KernelEntity> FromNetdev(const std::string& netdev) const;
  std::optional<KernelEntity> FromIbdev(const std::string& ibdev) const;
  std::optional<KernelEntity> FromIfindex(int ifindex) const;

  // The answer kept under `key` if younger than kCacheFor, else `compute()`'s, kept.
  template <typename Compute>
  std::optional<KernelEntity> Memo(std::string key, std::chrono::steady_clock::time_point now,
                                   Compute compute);

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
