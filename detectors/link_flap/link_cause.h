#pragma once
// The driver's word on why a link went down (issue 23): kernel log lines that link_flap attaches
// to its findings as the cause ("cause: module unplugged"), never findings of their own. They
// come from the kmsg collector's log events (base/log_events.h): a module unplugged,
// the function failing (firmware fatal, health, fatal AER), a module error, or only the
// driver's own "Link down" line. The most telling cause within the window names the finding;
// the newest lines go to Finding::log.

#include <chrono>
#include <deque>
#include <map>
#include <span>
#include <string>

#include "base/log_events.h"
#include "detectors/core/detector.h"

namespace fabricwatch::detect {

class LinkCauses {
 public:
  // Keeps the cause lines of `events` by netdev and by RDMA device.
  void Observe(std::span<const LogEvent> events);
  // Appends the cause seen within `window` before `now` to the finding of `entity` (netdev, or
  // IB device and port): "; cause: module unplugged (kernel log)", and its lines.
  void Attach(Finding& finding, const EntityLabels& entity, TimePoint now,
              std::chrono::milliseconds window) const;
  void Prune(TimePoint before);

 private:
  struct Line {
    TimePoint time;
    int rank;  // how telling: higher names the finding
    std::string cause;
    LogLine line;
  };
  void Keep(std::deque<Line>& lines, Line line);
  static constexpr size_t kMaxPerEntity = 32;
  std::map<std::string, std::deque<Line>, std::less<>> by_netdev_;
  std::map<std::string, std::deque<Line>, std::less<>> by_device_;
};

}  // namespace fabricwatch::detect
