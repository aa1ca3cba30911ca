#pragma once
// Detector options: the documented keys of one detector with their defaults, and a reader that
// validates a DetectorOptions map against them.
//
// Keys are kebab-case like the collectors' options (`hard-window`), the same string in YAML
// (`detectors.<name>.<key>`) and on the command line (`--detector.<name>.<key>`). A key a
// detector does not declare is an error naming it and the known keys, so a typo never silently
// leaves a default in force. Defaults live in the spec table, which is also the documentation
// (--help, README) — docs/detection.md §8 is the source of each default.

#include <chrono>
#include <span>
#include <string>
#include <string_view>

#include "base/status.h"
#include "detectors/core/detector.h"

namespace fabricwatch::detect {

struct DetectorOptionSpec {
  std::string_view key;
  std::string_view help;           // one line; ends with the source of the default
  std::string_view default_value;  // as it would be written in YAML
};

// Reads typed options; the first error is kept (status()) and later reads return defaults, so a
// factory reads everything and checks once.
class OptionReader {
 public:
  // Fails (InvalidArgument) when `options` has a key not in `specs`.
  static Result<OptionReader> Make(std::string_view detector, const DetectorOptions& options,
                                   std::span<const DetectorOptionSpec> specs);

  // "10s", "15m", "100ms" (base/duration.h); must be > 0 unless allow_zero.
  std::chrono::milliseconds Duration(std::string_view key, bool allow_zero = false);
  double Number(std::string_view key, double min, double max);
  uint64_t Count(std::string_view key, uint64_t min, uint64_t max);
  bool Bool(std::string_view key);

  const Status& status() const { return status_; }

 private:
  OptionReader(std::string_view detector, const DetectorOptions& options,
               std::span<const DetectorOptionSpec> specs)
      : detector_(detector), options_(options), specs_(specs) {}
  // The configured value, else the spec's default; records an error for an undeclared key.
  std::string_view Raw(std::string_view key);
  void Fail(std::string_view key, std::string_view value, std::string_view expected);

  std::string detector_;
  const DetectorOptions& options_;
  std::span<const DetectorOptionSpec> specs_;
  Status status_;
};

// Ok, or the error of a parse: a detector's Validate<Name>DetectorOptions is the parse its factory
// runs, without building the detector.
template <typename T>
Status StatusOf(const Result<T>& parsed) {
  return parsed ? Status::Ok() : parsed.error();
}

}  // namespace fabricwatch::detect
