#include "exporter/snapshot_store.h"

namespace fabricwatch::exporter {

std::string SnapshotStore::SeriesKey(std::string_view family,
                                     const std::vector<prometheus::ClientMetric::Label>& labels) {
  std::string key(family);
  for (const auto& label : labels) {
    key += '\xff';  // cannot occur in a metric name or in sanitised UTF-8 label values
    key += label.name;
    key += '=';
    key += label.value;
  }
  return key;
}

void SnapshotStore::Watch(std::string family) {
  std::lock_guard lock(mutex_);
  watched_.insert(std::move(family));
}

void SnapshotStore::Publish(std::shared_ptr<const Snapshot> snapshot) {
  if (listener_) listener_(snapshot);  // outside the lock: the listener only queues
  std::lock_guard lock(mutex_);
  if (!watched_.empty()) {
    std::set<std::string> present;
    for (const prometheus::MetricFamily& family : snapshot->families) {
      if (!watched_.contains(family.name)) continue;
      for (const prometheus::ClientMetric& metric : family.metric) {
        std::string key = SeriesKey(family.name, metric.label);
        Ring& ring = history_[key];
        if (ring.points.empty()) ring.points.resize(depth_);
        const double value = family.type == prometheus::MetricType::Counter   ? metric.counter.value
                             : family.type == prometheus::MetricType::Untyped ? metric.untyped.value
                                                                              : metric.gauge.value;
        ring.points[ring.next] = {snapshot->time, value};
        ring.next = (ring.next + 1) % depth_;
        ring.full |= ring.next == 0;
        present.insert(std::move(key));
      }
    }
    std::set<std::string>& previous = series_of_collector_[snapshot->collector];
    for (const std::string& key : previous) {
      if (!present.contains(key)) history_.erase(key);
    }
    previous = std::move(present);
  }
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

std::vector<HistoryPoint> SnapshotStore::History(
    std::string_view family, const std::vector<std::pair<std::string, std::string>>& labels) const {
  std::vector<prometheus::ClientMetric::Label> l;
  for (const auto& [name, value] : labels) l.push_back({name, value});
  const std::string key = SeriesKey(family, l);
  std::lock_guard lock(mutex_);
  auto it = history_.find(key);
  if (it == history_.end()) return {};
  const Ring& ring = it->second;
  std::vector<HistoryPoint> out;
  if (ring.full) {
    out.insert(out.end(), ring.points.begin() + static_cast<std::ptrdiff_t>(ring.next),
               ring.points.end());
  }
  out.insert(out.end(), ring.points.begin(),
             ring.points.begin() + static_cast<std::ptrdiff_t>(ring.next));
  return out;
}

size_t SnapshotStore::tracked_series() const {
  std::lock_guard lock(mutex_);
  return history_.size();
}

}  // namespace fabricwatch::exporter
