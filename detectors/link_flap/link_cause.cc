#include "detectors/link_flap/link_cause.h"

#include <algorithm>
#include <vector>

#include "collectors/kmsg/kmsg_patterns.h"

namespace fabricwatch::detect {
namespace {

using kmsg::EventClass;

// How telling a kernel event is as the cause of a down, and the words for it; rank 0: not a
// cause. A module pulled explains the down completely; a failing function nearly; a module
// error often; the driver's "Link down" only says that it happened.
std::pair<int, std::string> CauseOf(std::string_view event) {
  const kmsg::KernelEventPattern* pattern = kmsg::FindKernelEvent(event);
  if (pattern == nullptr) return {0, ""};
  if (event == "module_unplugged") return {4, "module unplugged"};
  if (event == "module_disabled") return {3, "module disabled"};
  switch (pattern->event_class) {
    case EventClass::kFatal:
      return {3, "driver reports the function failing (" + std::string(event) + ")"};
    case EventClass::kModule:
      return {2, "module error (" + std::string(event) + ")"};
    case EventClass::kDegraded:
      return {2, "driver reports the function degraded (" + std::string(event) + ")"};
    case EventClass::kCommandTimeout:
      return {1, "firmware command timeouts"};
    case EventClass::kLinkCause:
      return {event == "link_down" ? 1 : 0, "driver reported link down"};
    case EventClass::kNoisy:
    case EventClass::kCountOnly:
      return {0, ""};
  }
  return {0, ""};
}

}  // namespace

void LinkCauses::Keep(std::deque<Line>& lines, Line line) {
  lines.push_back(std::move(line));
  if (lines.size() > kMaxPerEntity) lines.pop_front();
}

void LinkCauses::Observe(std::span<const LogEvent> events) {
  for (const LogEvent& event : events) {
    auto [rank, cause] = CauseOf(event.event);
    if (rank == 0 && event.event != "link_up") continue;
    for (const LogLine& line : event.lines) {
      Line kept{line.time, rank, cause, line};
      if (!event.netdev.empty()) Keep(by_netdev_[event.netdev], kept);
      if (!event.device.empty()) Keep(by_device_[event.device], kept);
    }
  }
}

void LinkCauses::Attach(Finding& finding, const EntityLabels& entity, TimePoint now,
                        std::chrono::milliseconds window) const {
  const std::deque<Line>* lines = nullptr;
  for (const auto& [name, value] : entity) {
    const auto& index = name == "netdev" ? by_netdev_ : by_device_;
    if (name != "netdev" && name != "device") continue;
    if (auto it = index.find(value); it != index.end()) lines = &it->second;
    if (lines != nullptr) break;
  }
  if (lines == nullptr) return;
  const Line* best = nullptr;
  std::vector<LogLine> recent;
  for (const Line& line : *lines) {
    if (line.time < now - window || line.time > now) continue;
    recent.push_back(line.line);
    // The first line of the most telling kind: the fatal error, not the dump printed after it.
    if (line.rank > 0 && (best == nullptr || line.rank > best->rank)) best = &line;
  }
  if (recent.empty()) return;
  if (best != nullptr) finding.reason += "; cause: " + best->cause + " (kernel log)";
  if (recent.size() > kMaxLogLinesPerEvent) {
    recent.erase(recent.begin(), recent.end() - static_cast<std::ptrdiff_t>(kMaxLogLinesPerEvent));
  }
  finding.log = std::move(recent);
}

void LinkCauses::Prune(TimePoint before) {
  for (auto* index : {&by_netdev_, &by_device_}) {
    for (auto it = index->begin(); it != index->end();) {
      while (!it->second.empty() && it->second.front().time < before) it->second.pop_front();
      it = it->second.empty() ? index->erase(it) : std::next(it);
    }
  }
}

}  // namespace fabricwatch::detect
