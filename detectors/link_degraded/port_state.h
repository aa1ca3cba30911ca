#pragma once
// InfiniBand port states as the kernel numbers and names them (docs/reference.md §1.2; kernel
// drivers/infiniband/core/sysfs.c state_show and phys_state_show): shared by the shape, its
// manifest and the findings' reasons.

#include <optional>
#include <string_view>

namespace fabricwatch::detect::shape {

// IB logical port states (docs/reference.md §1.2).
inline constexpr int kStateDown = 1;
inline constexpr int kStateInit = 2;
inline constexpr int kStateArmed = 3;
inline constexpr int kStateActive = 4;
inline constexpr int kStateActiveDefer = 5;
inline constexpr int kPhysLinkUp = 5;

// IB state and phys_state names as the kernel prints them ("ACTIVE", "LinkUp"); "" if unknown.
std::string_view StateName(int state);
std::string_view PhysStateName(int phys_state);
// The inverse of StateName ("ACTIVE" -> 4); nullopt for an unknown name.
std::optional<int> StateByName(std::string_view name);

}  // namespace fabricwatch::detect::shape
