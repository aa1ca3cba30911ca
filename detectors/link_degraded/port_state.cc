#include "detectors/link_degraded/port_state.h"

namespace fabricwatch::detect::shape {

std::string_view StateName(int state) {
  static constexpr std::string_view kNames[] = {"NOP",   "DOWN",   "INIT",
                                                "ARMED", "ACTIVE", "ACTIVE_DEFER"};
  return state >= 0 && state <= 5 ? kNames[state] : "";
}

std::string_view PhysStateName(int phys_state) {
  static constexpr std::string_view kNames[] = {"",
                                                "Sleep",
                                                "Polling",
                                                "Disabled",
                                                "PortConfigurationTraining",
                                                "LinkUp",
                                                "LinkErrorRecovery",
                                                "Phy Test"};
  return phys_state >= 1 && phys_state <= 7 ? kNames[phys_state] : "";
}

std::optional<int> StateByName(std::string_view name) {
  for (int state = 0; state <= 5; ++state) {
    if (StateName(state) == name) return state;
  }
  return std::nullopt;
}

}  // namespace fabricwatch::detect::shape
