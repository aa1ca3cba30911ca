#include "detectors/core/detector.h"

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

}  // namespace fabricwatch::detect
