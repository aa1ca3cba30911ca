#pragma once
// The steps of the libibverbs prober (NewVerbsProber, probe.h): opening and connecting the two
// QPs (verbs_probe_setup.cc) and the measurement phases (verbs_probe.cc). Internal to
// exporter/probe/; declared here so that each step stays one function of one file.

#include <optional>
#include <string>

#include "exporter/probe/probe.h"
#include "exporter/probe/verbs_probe_resources.h"

namespace fabricwatch::probe {

// Why a step stopped the probe: the outcome it stands for and the one line that says why.
struct ProbeFailure {
  ProbeOutcome outcome = ProbeOutcome::kSetupError;
  std::string message;
};
using StepResult = std::optional<ProbeFailure>;  // nullopt: the step succeeded

// "rxe0/1"
std::string PortLabel(const PortRef& ref);

// Finds `ref.device` in ibv_get_device_list, opens it and queries the port: kUnsupported when
// there is no such device or port or no verbs access, kPortDown when the port is not ACTIVE
// (nor ACTIVE_DEFER), kSetupError when a verbs call fails.
StepResult OpenSide(const PortRef& ref, ProbeSide& side);

// The port's address (its LID, or on RoCE a RoCE v2 GID, IPv4-mapped when there is one).
StepResult ResolveAddress(ProbeSide& side);

// PD, a page-aligned buffer of `buffer_bytes` registered for remote writes, a CQ and an RC QP
// of `max_send_wr` send slots. A registration refused with ENOMEM or EPERM is kUnsupported: the
// memory-lock limit (RLIMIT_MEMLOCK) is below what the probe pins.
StepResult CreateResources(ProbeSide& side, size_t buffer_bytes, uint32_t max_send_wr);

// Moves both QPs INIT → RTR → RTS, each addressed to the other, at the smaller of the two ports'
// active MTUs. Short transport timeouts, so a dead path fails in well under a second.
StepResult ConnectPair(ProbeSide& a, ProbeSide& b);

// Moves a QP to ERR, so that its outstanding work requests complete flushed.
void ResetToError(ProbeSide& side);

}  // namespace fabricwatch::probe
