#include "tools/fabricsim/scenario_yaml.h"

#include <string>

#include "base/duration.h"
#include "base/value_parse.h"

namespace fabricwatch::sim::scenario_yaml {

Result<double> Seconds(const YamlValue& value) {
  if (!value.IsScalar()) return Error(value.Fail("expected a duration (30s, 1m) or seconds"));
  auto text = value.Scalar();
  if (!text) return Error(text.error());
  if (text->starts_with('-')) return Error(value.Fail("negative duration \"" + *text + "\""));
  if (auto seconds = ParseUint64(*text, value.path())) return static_cast<double>(*seconds);
  auto duration = ParseDuration(*text);
  if (!duration) return Error(value.Fail(duration.error().message()));
  return static_cast<double>(duration->count()) / 1000.0;
}

}  // namespace fabricwatch::sim::scenario_yaml
