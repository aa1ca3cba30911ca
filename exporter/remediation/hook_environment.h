#pragma once
// The environment a hook runs with: nothing of the agent's own but what the hook asks for.

#include <map>
#include <string>
#include <vector>

#include "exporter/remediation/drain_policy.h"
#include "exporter/remediation/hook_config.h"

namespace fabricwatch::exporter {

// The complete environment of one hook run (exposed for tests): a fixed PATH and locale, the
// hook's pass_env (from `agent_env`) and env, then the FABRICWATCH_* event description.
std::vector<std::string> BuildHookEnvironment(const HookConfig& config, const HookSpec& hook,
                                              const PlannedRun& run, const std::string& node_name,
                                              const std::map<std::string, std::string>& agent_env);

}  // namespace fabricwatch::exporter
