#pragma once
// The strict majority of a list of values (more than half agree), config_drift's "siblings"
// expectation (drift_checks.h).

#include <cstddef>
#include <map>
#include <optional>
#include <vector>

namespace fabricwatch::detect::drift {

template <typename T>
struct Majority {
  std::optional<T> value;  // empty when no value has more than half
  size_t count = 0;        // how many have it
  size_t total = 0;        // how many values there were
};

template <typename T>
Majority<T> StrictMajority(const std::vector<T>& values) {
  Majority<T> out;
  out.total = values.size();
  std::map<T, size_t> counts;
  for (const T& v : values) ++counts[v];
  for (const auto& [v, n] : counts) {
    if (2 * n > values.size()) out.value = v, out.count = n;
  }
  return out;
}

}  // namespace fabricwatch::detect::drift
