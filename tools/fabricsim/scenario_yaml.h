#pragma once
// The value readers of the scenario loader (scenario.cc) and of its `expect:` block
// (scenario_expect.cc). Every error is InvalidArgument naming the file, line and column of the
// node (yaml-cpp marks) and the key.

#include <yaml-cpp/yaml.h>

#include <string>
#include <string_view>
#include <vector>

#include "collectors/core/status.h"
#include "tools/fabricsim/scenario.h"

namespace fabricwatch::sim::scenario_yaml {

// "file:line:column" of a node, or the file when the node has no mark.
std::string Where(std::string_view source, const YAML::Node& node);
Status Bad(std::string_view source, const YAML::Node& node, const std::string& what);

// A Prometheus-style duration (collectors/core/duration.h) or a bare number of seconds.
Result<double> Seconds(std::string_view source, const YAML::Node& node, const char* key);
Result<double> Number(std::string_view source, const YAML::Node& node, const std::string& key);
Result<int> Integer(std::string_view source, const YAML::Node& node, const std::string& key, int lo,
                    int hi);

// The `expect:` block of `source` (scenario.h), checked against the scenario's events.
Result<ScenarioExpectation> ParseExpectation(std::string_view source, const YAML::Node& node,
                                             const std::vector<ScenarioEvent>& events);

}  // namespace fabricwatch::sim::scenario_yaml
