#pragma once
// OptionReader: typed, validated access to one detector's DetectorOptions for its factory.
//
// Each Get* consumes a key (absent keys keep the default the caller passed in); Finish() fails
// on the first bad value or on any key no Get* asked for, naming the detector and the key, so a
// typo in the YAML or a --detector.<name>.<key> flag is an error instead of a silent default.

#include <chrono>
#include <set>
#include <string>
#include <string_view>

#include "collectors/core/status.h"
#include "detectors/core/detector.h"

namespace fabricwatch::detect {

class OptionReader {
 public:
  OptionReader(std::string_view detector, const DetectorOptions& options)
      : detector_(detector), options_(options) {}

  // A Prometheus-style duration (collectors/core/duration.h), > 0 unless allow_zero.
  void GetDuration(std::string_view key, std::chrono::milliseconds& value, bool allow_zero = false);
  // A finite number in [min, max].
  void GetDouble(std::string_view key, double& value, double min, double max);
  void GetBool(std::string_view key, bool& value);

  Status Finish() const;

 private:
  const std::string* Take(std::string_view key);
  void Fail(std::string_view key, std::string_view what);

  std::string detector_;
  const DetectorOptions& options_;
  std::set<std::string, std::less<>> used_;
  Status first_error_;
};

}  // namespace fabricwatch::detect
