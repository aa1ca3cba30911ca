#pragma once
// What the scenario loader (scenario.cc) and its `expect:` block (scenario_expect.cc) share
// beyond the YAML reader (base/yaml_reader.h), which names the file, line, column and
// key path of every error.

#include <vector>

#include "base/status.h"
#include "base/yaml_reader.h"
#include "tools/fabricsim/scenario.h"

namespace fabricwatch::sim::scenario_yaml {

// A Prometheus-style duration (base/duration.h) or a bare number of seconds
// (`at: 0`), which YamlValue::Duration does not take.
Result<double> Seconds(const YamlValue& value);

// The `expect:` block (scenario.h), checked against the scenario's events.
Result<ScenarioExpectation> ParseExpectation(const YamlValue& node,
                                             const std::vector<ScenarioEvent>& events);

}  // namespace fabricwatch::sim::scenario_yaml
