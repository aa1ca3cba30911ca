#include "detectors/core/detector.h"

#include <fmt/format.h>

namespace fabricwatch::detect {

std::string_view SeverityName(Severity severity) {
  switch (severity) {
    case Severity::kInfo:
      return "info";
    case Severity::kWarning:
      return "warning";
    case Severity::kCritical:
      return "critical";
  }
  return "unknown";
}

bool ParseSeverity(std::string_view name, Severity* severity) {
  for (Severity s : {Severity::kInfo, Severity::kWarning, Severity::kCritical}) {
    if (SeverityName(s) == name) {
      *severity = s;
      return true;
    }
  }
  return false;
}

std::string FormatFixed(double value, int digits) { return fmt::format("{:.{}f}", value, digits); }

}  // namespace fabricwatch::detect
