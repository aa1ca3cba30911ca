#pragma once
// What the registry says of one detector (detectors/registry.h lists them): its name, options,
// evidence families, inputs, factory and declaration.

#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "base/metric_sink.h"
#include "base/status.h"
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

}  // namespace fabricwatch::detect
