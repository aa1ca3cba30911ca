#pragma once
// The explicit detector registry: one line per detector in registry.cc, no static-initialiser
// magic (like collectors/registry.h). It drives the --detector.<name> flags, the YAML keys
// `detectors.<name>`, --help, --help-metrics and the README tables.
//
// Adding a detector: a folder detectors/<name>/ whose header declares
//   Result<std::unique_ptr<Detector>> Make<Name>Detector(const DetectorOptions& options);
//   std::span<const DetectorOptionSpec> <Name>DetectorOptions();  // keys, help, defaults
//   std::span<const MetricDesc> <Name>DetectorMetrics();          // its evidence metrics
//   std::span<const MetricInput> <Name>DetectorInputs();          // what it reads (inputs.h)
//   Status Validate<Name>DetectorOptions(const DetectorOptions&); // the factory's checks only
// and a contract header detectors/<name>/<name>_metrics.h with its evidence families and its
// DetectorDeclaration (declaration.h) as <name>::kDeclaration;
// one line in kDetectors (registry.cc) and one in detectors/CMakeLists.txt (CONTRIBUTING.md).

#include <functional>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "detectors/core/detector_info.h"

namespace fabricwatch::detect {

std::span<const DetectorInfo> DetectorRegistry();

// The options of one detector to build; nullopt leaves it out.
using DetectorSelector = std::function<std::optional<DetectorOptions>(const DetectorInfo&)>;
// The registry's defaults: the detectors enabled by default, with their default options.
std::optional<DetectorOptions> DefaultDetectorSelection(const DetectorInfo& info);
// Builds, in registry order, every detector `select` chooses; the first factory error fails.
Result<std::vector<std::unique_ptr<Detector>>> BuildDetectors(const DetectorSelector& select);
const DetectorInfo* FindDetector(std::string_view name);
// The options of `info` checked as its factory would, without building it.
Status ValidateDetectorOptions(const DetectorInfo& info, const DetectorOptions& options);

}  // namespace fabricwatch::detect
