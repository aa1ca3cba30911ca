#pragma once
// CollectorOptionReader: a collector factory's view of its options, the collectors' twin of the
// detectors' OptionReader (detectors/core/options.h). A value is the configured one, else the
// default of the collector's spec table (CollectorInfo::options), so each default is written
// once, in the table that --help and the README also show. Errors name the flag.

#include <chrono>
#include <span>
#include <string>
#include <string_view>

#include "collectors/core/collector.h"
#include "collectors/core/device_filter.h"
#include "collectors/core/collector_info.h"
#include "base/status.h"

namespace fabricwatch {

class CollectorOptionReader {
 public:
  // `collector` names the flags in errors (--collector.<collector>.<key>).
  CollectorOptionReader(std::string_view collector, const CollectorOptions& options,
                        std::span<const CollectorOptionSpec> specs)
      : collector_(collector), options_(options), specs_(specs) {}

  // The configured value of `key` (even if empty), else its default in the spec table, else "".
  std::string Value(std::string_view key) const;
  // The default of `key` in the spec table, or "".
  std::string Default(std::string_view key) const;
  // True when `key` was configured (not just defaulted).
  bool IsSet(std::string_view key) const;
  // The device filter of the device-include / device-exclude options.
  Result<DeviceFilter> Devices() const;
  // A duration option ("60s"; empty means the default); InvalidArgument naming the flag when it
  // does not parse.
  Result<std::chrono::milliseconds> Duration(std::string_view key) const;
  // "--collector.<collector>.<key>", for error messages.
  std::string Flag(std::string_view key) const;

 private:
  std::string collector_;
  const CollectorOptions& options_;
  std::span<const CollectorOptionSpec> specs_;
};

}  // namespace fabricwatch
