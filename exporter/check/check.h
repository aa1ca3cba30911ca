#pragma once
// `fabricwatch check` (issue 37, docs/check.md): a one-shot health verdict of this node for
// Slurm's HealthCheckProgram or prolog and for Kubernetes readiness or node-problem-detector.
//
//   fabricwatch check [every agent flag] [--check.output=text|json] [--check.agent-url=URL|""]
//                     [--check.agent-timeout=DURATION] [--check.probe]
//
// One look (exporter/check/check_look.h), the running agent's active findings when it answers
// (check_agent_api.h), optionally the active probe of the ACTIVE RDMA ports (exporter/probe/
// probe.h); then the verdict (check_verdict.h): exit 0 healthy, 1 warning, 2 unhealthy. A
// command line or configuration that cannot be used exits 3, which NHC-style callers treat as
// a failed check (it is none of the three verdicts).
// Safe to run while the agent runs: it binds no port, takes no lock of the agent's and writes no
// file; only --check.probe takes the node-wide probe lock (probe.h), and may create its file.

namespace fabricwatch::exporter::check {

// argv[0] is "check"; the rest are the agent's flags and the --check.* ones.
int CheckMain(int argc, char** argv);

}  // namespace fabricwatch::exporter::check
