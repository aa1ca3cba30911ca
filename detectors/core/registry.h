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
//   Status Validate<Name>DetectorOptions(const DetectorOptions&); // the factory's checks only
// and a contract header detectors/<name>/<name>_metrics.h with its evidence families and its
// DetectorDeclaration (declaration.h) as <name>::kDeclaration;
// one line in kDetectors (registry.cc) and one in detectors/CMakeLists.txt (CONTRIBUTING.md).

#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "collectors/core/metric_sink.h"
#include "collectors/core/status.h"
#include "detectors/core/declaration.h"
#include "detectors/core/detector.h"
#include "detectors/core/inputs.h"
#include "detectors/core/options.h"

namespace fabricwatch::detect {

using DetectorFactory = Result<std::unique_ptr<Detector>> (*)(const DetectorOptions& options);
// The factory's checks of the options, without building the detector: what --config.check, a
// reload and the command line need before the agent builds its detectors once.
using DetectorOptionsCheck = Status (*)(const DetectorOptions& options);

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
  // What the generic code (escalation, cross rules, the status page, `fabricwatch check`) needs
  // to know of it: from its contract header, detectors/<name>/<name>_metrics.h.
  DetectorDeclaration declaration{};
  // Validate<Name>DetectorOptions: the factory's option errors (the same messages), no detector.
  DetectorOptionsCheck validate = nullptr;
};

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
