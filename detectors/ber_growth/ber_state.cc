// The state-file form of ber_growth's windows (issue 22 item 6): the 10 s buckets of each port's
// history, so a restart in the middle of a slow BER growth keeps its detection time.

#include <cmath>

#include "detectors/ber_growth/ber_window.h"

namespace fabricwatch::detect::ber {

nlohmann::json History::ToJson() const {
  nlohmann::json out = nlohmann::json::array();
  for (const Bucket& b : buckets_) {
    const double start = std::chrono::duration<double>(b.start.time_since_epoch()).count();
    const Sum& s = b.sum;
    out.push_back({start, s.seconds, s.bits, s.errors, s.error_samples, s.pre_bits, s.corrected});
  }
  return out;
}

bool History::FromJson(const nlohmann::json& json, StateLoadCheck& check) {
  if (!json.is_array()) return false;
  std::deque<Bucket> loaded;
  for (const nlohmann::json& b : json) {
    if (!b.is_array() || b.size() != 7) return false;
    auto start = check.Past(b[0]);
    if (!start) continue;  // counted by the check
    // A bucket holds at most a few samples of one port: 1e18 bits is 10 s at 100 Pb/s.
    std::optional<double> v[6];
    bool ok = true;
    for (size_t i = 0; i < 6; ++i) ok = (v[i] = check.Number(b[i + 1], 0, 1e18)).has_value() && ok;
    if (!ok) continue;
    if (!loaded.empty() && *start < loaded.back().start) continue;  // out of order: not ours
    loaded.push_back({*start, {*v[0], *v[1], *v[2], *v[3], *v[4], *v[5]}});
  }
  buckets_ = std::move(loaded);
  return true;
}

}  // namespace fabricwatch::detect::ber
