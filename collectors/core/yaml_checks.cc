#include "collectors/core/yaml_checks.h"

namespace fabricwatch {

std::string YamlWhere(const YAML::Node& node, const std::string& source) {
  return YamlValue::Of(node, source, "").Where();
}

Result<bool> StrictBool(const YAML::Node& node, const std::string& source, const std::string& key) {
  return YamlValue::Of(node, source, key).Bool(YamlBools::kCanonical);
}

}  // namespace fabricwatch
