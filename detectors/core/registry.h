#pragma once
// The explicit detector registry: one line per detector in registry.cc, no static-initialiser
// magic (like collectors/core/registry.h). It drives the --detector.<name> flags, the YAML keys
// `detectors.<name>`, --help, --help-metrics and the README tables.
//
// Adding a detector: a folder detectors/<name>/ whose header declares
//   Result<std::unique_ptr<Detector>> Make<Name>Detector(const DetectorOptions& options);
//   std::span<const DetectorOptionSpec> <Name>DetectorOptions();  // keys, help, defaults
//   std::span<const MetricDesc> <Name>DetectorMetrics();          // its evidence metrics
//   std::span<const MetricInput> <Name>DetectorInputs();          // what it reads (inputs.h)
// one line in kDetectors (registry.cc) and one in detectors/CMakeLists.txt (CONTRIBUTING.md).

#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "collectors/core/metric_sink.h"
#include "collectors/core/status.h"
#include "detectors/core/detector.h"
#include "detectors/core/inputs.h"
#include "detectors/core/options.h"

namespace fabricwatch::detect {

using DetectorFactory = Result<std::unique_ptr<Detector>> (*)(const DetectorOptions& options);

struct DetectorInfo {
  std::string_view name;
  std::string_view description;
  bool enabled_by_default;
  std::span<const DetectorOptionSpec> options;
  std::span<const MetricDesc> metrics;
  // The collector families it reads, checked against the collectors' tables (registry_test).
  std::span<const MetricInput> inputs;
  // Validates the options (InvalidArgument naming the option) and builds the detector.
  DetectorFactory factory;
};

std::span<const DetectorInfo> DetectorRegistry();

// The options of one detector to build; nullopt leaves it out.
using DetectorSelector = std::function<std::optional<DetectorOptions>(const DetectorInfo&)>;
// The registry's defaults: the detectors enabled by default, with their default options.
std::optional<DetectorOptions> DefaultDetectorSelection(const DetectorInfo& info);
// Builds, in registry order, every detector `select` chooses; the first factory error fails.
Result<std::vector<std::unique_ptr<Detector>>> BuildDetectors(const DetectorSelector& select);
const DetectorInfo* FindDetector(std::string_view name);

}  // namespace fabricwatch::detect
