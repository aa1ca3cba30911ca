#include "tools/fabricsim/scenario_yaml.h"

#include <sstream>

#include "collectors/core/duration.h"
#include "collectors/core/value_parse.h"

namespace fabricwatch::sim::scenario_yaml {

std::string Where(std::string_view source, const YAML::Node& node) {
  const YAML::Mark mark = node.Mark();
  if (mark.is_null()) return std::string(source);
  return std::string(source) + ":" + std::to_string(mark.line + 1) + ":" +
         std::to_string(mark.column + 1);
}

Status Bad(std::string_view source, const YAML::Node& node, const std::string& what) {
  return Status(StatusCode::kInvalidArgument, Where(source, node) + ": " + what);
}

Result<double> Seconds(std::string_view source, const YAML::Node& node, const char* key) {
  if (!node.IsScalar()) return Error(Bad(source, node, std::string(key) + ": expected a duration"));
  const std::string text = node.Scalar();
  if (!text.empty() && text[0] == '-') {
    return Error(Bad(source, node, std::string(key) + ": negative duration \"" + text + "\""));
  }
  // A bare number is seconds.
  if (auto n = ParseUint64(text, key)) return static_cast<double>(*n);
  auto d = ParseDuration(text);
  if (!d) return Error(Bad(source, node, std::string(key) + ": " + d.error().message()));
  return static_cast<double>(d->count()) / 1000.0;
}

Result<double> Number(std::string_view source, const YAML::Node& node, const std::string& key) {
  if (!node.IsScalar()) return Error(Bad(source, node, key + ": expected a number"));
  std::istringstream in(node.Scalar());
  double v = 0;
  in >> v;
  if (in.fail() || !in.eof()) {
    return Error(Bad(source, node, key + ": expected a number, got \"" + node.Scalar() + "\""));
  }
  return v;
}

Result<int> Integer(std::string_view source, const YAML::Node& node, const std::string& key, int lo,
                    int hi) {
  auto v = Number(source, node, key);
  if (!v) return Error(v.error());
  if (*v != static_cast<int>(*v) || *v < lo || *v > hi) {
    return Error(Bad(source, node,
                     key + ": expected an integer in " + std::to_string(lo) + ".." +
                         std::to_string(hi) + ", got \"" + node.Scalar() + "\""));
  }
  return static_cast<int>(*v);
}

}  // namespace fabricwatch::sim::scenario_yaml
