#pragma once
// What a detector declares about itself for the generic code (issue 36): escalation, the
// cross-detector rules, the status page and `fabricwatch check` read these fields from the
// registry (detector_info.h DetectorInfo::declaration) instead of holding lists of detector names.
// Each detector fills one DetectorDeclaration in its contract header
// (detectors/<name>/<name>_metrics.h), beside its evidence families, and registry.cc passes it
// on; a new detector is its folder plus its registry line (CONTRIBUTING.md "Adding a detector").
//
// Thread-safety: constants only.

#include <cstdint>
#include <span>
#include <string_view>

#include "detectors/core/detector.h"

namespace fabricwatch::detect {

// A fact a finding establishes about the port it is on, for the cross-detector rules
// (cross_rules.h): the detector that raises the finding declares which facts it establishes, the
// detector whose findings the fact explains declares a SuppressionRule naming the fact.
enum class PortFact : uint8_t {
  kLinkUnstable,  // the link flaps or is down (any warning or critical finding of the owner)
  kLinkDown,      // the link is down or hard-flapping now
};

// One fact a detector's warning and critical findings establish; `holds` picks the findings that
// do (nullptr: every warning or critical one).
struct PortFactSource {
  PortFact fact;
  bool (*holds)(const Finding&) = nullptr;
};

// One cross-detector rule (cross_rules.h): the declaring detector's findings on a port are
// suppressed while another detector's finding establishes `explained_by` on that port.
struct SuppressionRule {
  std::string_view name;  // the `rule` label of fabricwatch_findings_suppressed_total
  PortFact explained_by;
  // What the explaining detector's finding says, after its name: "<owner> <says>: <its reason>".
  std::string_view says;
  // One line, for docs and the debug log.
  std::string_view why;
  // The findings of the declaring detector the rule applies to (nullptr: all of them).
  bool (*applies)(const Finding&) = nullptr;
  // Also suppressed, with no explaining finding, while the port's fabric_rdma_port_state is not
  // ACTIVE (4) or ACTIVE_DEFER (5).
  bool when_port_not_active = false;
};

// The status page's port column a detector's finding marks (exporter/pages/status_model.h).
enum class PortColumn : uint8_t { kNone, kState, kRate, kBer, kPfcPause, kTemperature, kRxPower };

struct DetectorDeclaration {
  // Its own critical findings are drain-eligible, and so is the critical that escalation makes
  // of its repeated warnings (escalation.h; README "Detectors").
  bool criticals_drain = false;
  // The cross-detector rules: the facts its findings establish, and the rules that suppress its
  // own findings.
  std::span<const PortFactSource> establishes = {};
  std::span<const SuppressionRule> suppressed_when = {};
  // The status page: the port column its finding marks, and the note on the mark ("" says the
  // detector's name).
  PortColumn marks = PortColumn::kNone;
  std::string_view mark_note = {};
  // `fabricwatch check` (docs/check.md, exporter/check/check_look.h): whether one look can make
  // its findings, the options that hold a condition before it raises (the second feed passes
  // them), and whether it is fed by the kernel log (its saved history is then not restored: the
  // check rereads the whole log).
  bool one_look = false;
  std::span<const std::string_view> one_look_holds = {};
  bool reads_kernel_log = false;
  // The option that --shape.file sets ("" for none; exporter/config/flags.cc).
  std::string_view shape_file_option = {};
};

}  // namespace fabricwatch::detect
