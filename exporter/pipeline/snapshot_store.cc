#include "exporter/pipeline/snapshot_store.h"

namespace fabricwatch::exporter {

void SnapshotStore::Publish(std::shared_ptr<const Snapshot> snapshot) {
  if (listener_) listener_(snapshot);  // outside the lock: the listener only queues
  std::lock_guard lock(mutex_);
  latest_[snapshot->collector] = std::move(snapshot);
}
std::shared_ptr<const Snapshot> SnapshotStore::Latest(std::string_view collector) const {
  std::lock_guard lock(mutex_);
  auto it = latest_.find(collector);
  return it == latest_.end() ? nullptr : it->second;
}

std::vector<std::shared_ptr<const Snapshot>> SnapshotStore::AllLatest() const {
  std::lock_guard lock(mutex_);
  std::vector<std::shared_ptr<const Snapshot>> out;
  out.reserve(latest_.size());
  for (const auto& [name, snapshot] : latest_) out.push_back(snapshot);
  return out;
}

}  // namespace fabricwatch::exporter
