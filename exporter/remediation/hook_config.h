#pragma once
// The `hooks:` section of --config.file: what runs when an anomaly is raised or cleared.
//
//   hooks:
//     dry_run: true              # default: hooks run with FABRICWATCH_DRY_RUN=1 and only say
//                                # what they would do; set false to act
//     node_name: ""              # the scheduler's name of this node; empty: short hostname
//     cooldown: 30m              # minimum time between two drain requests of this node
//     max_drains_per_hour: 2     # drain requests in any sliding hour
//     clear_hold_down: 10m       # every drain-causing finding clear this long before a resume
//     timeout: 30s               # per hook run; SIGTERM to its process group, then SIGKILL
//     kill_grace: 5s
//     max_output_bytes: 16384    # of stdout+stderr kept for the log
//     fleet_budget_file: /run/fabricwatch/drain-budget-exhausted   # exists: no drain
//     suspect_peers_file: /run/fabricwatch/suspect-peers   # switch names, one a line: no drain
//                                # for findings on ports facing them
//     hold_drain_while_jobs: false   # true: a non-critical finding's drain waits while jobs
//                                    # hold the device open (Finding::jobs)
//     max_drain_hold: 0s         # how long such a drain waits at most; 0: until the jobs end
//     confirm_with_probe: false  # true (needs probe.enabled): a non-critical drain waits for a
//                                # probe of the finding's RDMA port (exporter/probe/): failed or
//                                # degraded drains, healthy or no answer does not
//     user: fabricwatch-hooks    # when the agent is root: hooks run as this user (name or uid)
//     group: fabricwatch-hooks   # and group (name or gid; default: the user's primary group)
//     run:
//       - name: slurm
//         action: drain          # drain (default): raise drains, clear resumes, under the
//                                # safety rules; notify: every matching transition, no limits
//         command: [/usr/lib/fabricwatch/hooks/slurm-drain]   # argv, never a shell string
//         detectors: [pfc_storm, link_flap]   # empty or absent: every detector
//         severities: [critical]              # empty or absent: every severity
//         on: [raise, clear]                  # default both
//         timeout: 20s                        # overrides hooks.timeout
//         env: {SLURM_CONF: /etc/slurm/slurm.conf}   # added to the hook's environment
//         pass_env: [KUBERNETES_SERVICE_HOST]        # copied from the agent's environment
//
// The default (no `hooks:` section) runs nothing. Unknown keys are errors, naming the key and
// its line.

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "base/yaml_reader.h"
#include "detectors/core/detector.h"
#include "exporter/remediation/process_launcher.h"

namespace fabricwatch::exporter {

enum class HookAction { kDrain, kNotify };

struct HookSpec {
  std::string name;  // the `hook` label; unique, [a-zA-Z0-9_-]
  HookAction action = HookAction::kDrain;
  std::vector<std::string> command;          // command[0] is an absolute path
  std::vector<std::string> detectors;        // empty: all
  std::vector<detect::Severity> severities;  // empty: all
  bool on_raise = true;
  bool on_clear = true;
  std::chrono::milliseconds timeout{0};  // 0: HookConfig::timeout
  std::map<std::string, std::string> env;
  std::vector<std::string> pass_env;
};

struct HookConfig {
  bool dry_run = true;
  std::string node_name;
  std::chrono::milliseconds cooldown{std::chrono::minutes(30)};
  int max_drains_per_hour = 2;
  std::chrono::milliseconds clear_hold_down{std::chrono::minutes(10)};
  std::chrono::milliseconds timeout{std::chrono::seconds(30)};
  std::chrono::milliseconds kill_grace{std::chrono::seconds(5)};
  size_t max_output_bytes = 16 * 1024;
  std::string fleet_budget_file = "/run/fabricwatch/drain-budget-exhausted";
  std::string suspect_peers_file = "/run/fabricwatch/suspect-peers";
  bool hold_drain_while_jobs = false;
  std::chrono::milliseconds max_drain_hold{0};  // 0: as long as the jobs run
  // Issue 37: a non-critical drain-eligible finding on an RDMA port drains only once a probe of
  // the port says failed or degraded (DrainPolicy::OnProbeResult). Needs probe.enabled
  // (config.cc Validate).
  bool confirm_with_probe = false;
  std::string user;   // empty: the agent's own user
  std::string group;  // empty: the user's primary group
  std::vector<HookSpec> hooks;
};

// Parses the value of the `hooks` key (null or absent: the defaults). Errors name the file, the
// line and the key: "fw.yml:12:7: hooks.run[0].command: must be a non-empty list".
Result<HookConfig> ParseHookConfig(const YamlValue& node);

// The credentials hooks run with: empty when hooks.user is not set or the agent is not root
// (then hooks run as the agent's own user). A user or group unknown to the system (NSS) is an
// error naming it. The supplementary groups are the user's (getgrouplist(3)).
Result<std::optional<Credentials>> ResolveHookCredentials(const HookConfig& config);

// --config.check: the hook's executable exists, is a regular file and may be executed by the
// credentials it runs with (the agent's own when empty). Checked from the file's mode, owner and
// group, as the kernel would for execve (path_resolution(7), without ACLs).
Status CheckHookExecutable(const HookSpec& hook, const std::optional<Credentials>& credentials);

}  // namespace fabricwatch::exporter
