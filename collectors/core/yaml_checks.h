#pragma once
// The raw yaml-cpp helpers the scenario loader (tools/fabricsim/scenario.cc, scenario_expect.cc)
// still uses. Everything else reads YAML through YamlDocument and YamlValue
// (collectors/core/yaml_reader.h), whose checks these are; new code uses the reader, and this
// header goes once the scenario loader has moved to it.

#include <yaml-cpp/yaml.h>

#include <string>

#include "collectors/core/status.h"
#include "collectors/core/yaml_reader.h"

namespace fabricwatch {

// "source:line:column" of a node, or `source` when the node has no mark.
std::string YamlWhere(const YAML::Node& node, const std::string& source);

// The value of a boolean key (YamlValue::Bool with YamlBools::kCanonical). `key` is the dotted
// path for the error message.
Result<bool> StrictBool(const YAML::Node& node, const std::string& source, const std::string& key);

}  // namespace fabricwatch
