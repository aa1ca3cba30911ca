#include "collectors/kmsg/kmsg_entity.h"

#include <vector>

#include "collectors/sys/sysfs.h"

namespace fabricwatch::kmsg {

template <typename Compute>
std::optional<KernelEntity> EntityResolver::Memo(std::string key,
                                                 std::chrono::steady_clock::time_point now,
                                                 Compute compute) {
  if (auto it = cache_.find(key); it != cache_.end() && now - it->second.at < kCacheFor) {
    return it->second.entity;
  }
  std::optional<KernelEntity> entity = compute();
  if (cache_.size() >= kMaxCached) cache_.clear();
  cache_[std::move(key)] = Cached{entity, now};
  return entity;
}

std::optional<KernelEntity> EntityResolver::Resolve(const RecordSubject& subject,
                                                    std::chrono::steady_clock::time_point now) {
  if (subject.empty()) return std::nullopt;
  std::string key = subject.pci + '|' + subject.netdev + '|' + subject.ibdev + '|' +
                    std::to_string(subject.ifindex);
  return Memo(std::move(key), now, [&]() -> std::optional<KernelEntity> {
    if (!subject.pci.empty()) {
      // A port's own line (AER recovery, DPC containment, link reset: drivers/pci/pcie/err.c,
      // dpc.c) is about the NIC below it. Three levels: root port, switch up- and downstream.
      auto entity = FromPci(subject.pci, subject.netdev);
      return entity ? entity : BelowPort(subject.pci, 3);
    }
    if (!subject.ibdev.empty()) return FromIbdev(subject.ibdev);
    if (!subject.netdev.empty()) return FromNetdev(subject.netdev);
    return FromIfindex(subject.ifindex);
  });
}

KernelEntity EntityResolver::ByDriver(std::string_view pci_driver,
                                      std::chrono::steady_clock::time_point now) {
  auto entity = Memo("driver|" + std::string(pci_driver), now, [&]() {
    // bus/pci/drivers/<driver>/ holds a link per bound function, named by its address
    // (Documentation/ABI/testing/sysfs-bus-pci), beside bind, unbind, new_id and module.
    std::vector<KernelEntity> candidates;
    if (auto names = sysfs_.ListDir("bus/pci/drivers/" + std::string(pci_driver)); names) {
      for (const std::string& name : *names) {
        if (!IsPciAddress(name)) continue;
        if (auto found = FromPci(name, ""); found) candidates.push_back(*std::move(found));
      }
    }
    return std::optional<KernelEntity>(candidates.size() == 1 ? candidates.front()
                                                              : KernelEntity{});
  });
  return entity.value_or(KernelEntity{});
}

bool EntityResolver::HasPciFunction(const std::string& pci,
                                    std::chrono::steady_clock::time_point now) {
  // Cached like the rest: a flood about a function whose probe failed reads sysfs once.
  return IsPciAddress(pci) && Memo("function|" + pci, now, [&]() -> std::optional<KernelEntity> {
                                if (!sysfs_.ReadString("bus/pci/devices/" + pci + "/vendor"))
                                  return std::nullopt;
                                return KernelEntity{};
                              }).has_value();
}

std::optional<KernelEntity> EntityResolver::BelowPort(const std::string& port, int depth) const {
  if (depth == 0) return std::nullopt;
  auto names = sysfs_.ListDir("bus/pci/devices/" + port);
  if (!names) return std::nullopt;
  std::vector<KernelEntity> below;
  size_t nodes = 0;
  for (const std::string& name : *names) {
    if (!IsPciAddress(name)) continue;
    std::optional<KernelEntity> entity = FromPci(name, "");
    if (!entity) {
      // A switch port: its own children, one level down (the link under bus/pci/devices is how
      // every function is reached, wherever it sits in the tree).
      entity = BelowPort(name, depth - 1);
      if (entity && entity->device.empty() && entity->netdev.empty()) ++nodes;
    }
    if (entity) below.push_back(*std::move(entity));
  }
  if (below.empty()) return std::nullopt;
  if (below.size() == 1 && nodes == 0) return below.front();
  return KernelEntity{};
}

std::optional<KernelEntity> EntityResolver::FromPci(const std::string& pci,
                                                    const std::string& netdev) const {
  const std::string dir = "bus/pci/devices/" + pci;
  KernelEntity entity;
  // The name after the address may be the RDMA device rather than a netdev: ibdev_* printers
  // write "<driver> <bdf> <ibdev>: " (efa: "efa 0000:a0:1a.0 rdmap160s26: Failed to process").
  bool names_ibdev = false;
  if (auto ib = sysfs_.ListDir(dir + "/infiniband"); ib && !ib->empty()) {
    entity.device = ib->front();
    for (const std::string& name : *ib) {
      if (!netdev.empty() && name == netdev) {
        entity.device = name;
        names_ibdev = true;
      }
    }
  }
  if (auto nets = sysfs_.ListDir(dir + "/net"); nets) {
    for (const std::string& name : *nets) {
      if (name == netdev) entity.netdev = name;
    }
    // With one port per function (mlx5), a line about the function is about its one netdev.
    if (entity.netdev.empty() && (netdev.empty() || names_ibdev) && nets->size() == 1) {
      entity.netdev = nets->front();
    }
  }
  if (entity.device.empty() && entity.netdev.empty()) return std::nullopt;
  return entity;
}

std::optional<KernelEntity> EntityResolver::FromNetdev(const std::string& netdev) const {
  if (!sysfs_.ReadString("class/net/" + netdev + "/ifindex")) return std::nullopt;
  // A netdev with a PCI parent belongs to that function's RDMA device; a virtual one (veth,
  // bond) has none and is named alone.
  if (auto pci = sysfs_.ReadLinkBasename("class/net/" + netdev + "/device");
      pci && IsPciAddress(*pci)) {
    if (auto entity = FromPci(*pci, netdev); entity && entity->netdev == netdev) return entity;
  }
  return KernelEntity{.device = "", .netdev = netdev};
}

std::optional<KernelEntity> EntityResolver::FromIbdev(const std::string& ibdev) const {
  if (!sysfs_.ReadString("class/infiniband/" + ibdev + "/node_type")) return std::nullopt;
  KernelEntity entity{.device = ibdev, .netdev = ""};
  if (auto pci = sysfs_.ReadLinkBasename("class/infiniband/" + ibdev + "/device");
      pci && IsPciAddress(*pci)) {
    if (auto from_pci = FromPci(*pci, ""); from_pci && from_pci->device == ibdev) {
      entity.netdev = from_pci->netdev;
    }
  }
  return entity;
}

std::optional<KernelEntity> EntityResolver::FromIfindex(int ifindex) const {
  auto names = sysfs_.ListDir("class/net");
  if (!names) return std::nullopt;
  for (const std::string& name : *names) {
    auto value = sysfs_.ReadUint64("class/net/" + name + "/ifindex");
    if (value && *value == static_cast<uint64_t>(ifindex)) return FromNetdev(name);
  }
  return std::nullopt;
}

}  // namespace fabricwatch::kmsg
