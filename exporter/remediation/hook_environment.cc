#include "exporter/remediation/hook_environment.h"

#include <fmt/format.h>

#include <cctype>
#include <ctime>

#include "detectors/core/anomaly_tracker.h"

namespace fabricwatch::exporter {
namespace {

using std::chrono::milliseconds;

std::string FormatTime(detect::TimePoint t) {
  const auto ms = std::chrono::duration_cast<milliseconds>(t.time_since_epoch()).count();
  const std::time_t secs = static_cast<std::time_t>(ms / 1000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  return fmt::format("{}.{:03d}Z", buf, static_cast<int>(ms % 1000));
}

std::string EnvName(std::string_view label) {
  std::string out = "FABRICWATCH_LABEL_";
  for (char c : label) {
    out += std::isalnum(static_cast<unsigned char>(c))
               ? static_cast<char>(std::toupper(static_cast<unsigned char>(c)))
               : '_';
  }
  return out;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Environment

std::vector<std::string> BuildHookEnvironment(const HookConfig& config, const HookSpec& hook,
                                              const PlannedRun& run, const std::string& node_name,
                                              const std::map<std::string, std::string>& agent_env) {
  // A map so that later layers replace earlier ones; FABRICWATCH_* cannot be set by env or
  // pass_env (the config parser refuses those names).
  std::map<std::string, std::string> env = {
      {"PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"},
      {"LC_ALL", "C.UTF-8"},
  };
  for (const std::string& name : hook.pass_env) {
    if (auto it = agent_env.find(name); it != agent_env.end()) env[name] = it->second;
  }
  for (const auto& [name, value] : hook.env) env[name] = value;

  const detect::AnomalyTransition& t = run.transition;
  const detect::Finding& f = t.finding;
  nlohmann::json evidence = nlohmann::json::object();
  std::string evidence_text;
  for (const detect::Evidence& e : f.evidence) {
    evidence[e.name] = e.value;
    if (!evidence_text.empty()) evidence_text += ' ';
    evidence_text += fmt::format("{}={:.6g}", e.name, e.value);
  }
  env["FABRICWATCH_HOOK"] = hook.name;
  env["FABRICWATCH_ACTION"] = std::string(HookPurposeName(run.purpose));
  env["FABRICWATCH_EVENT"] = t.raised ? "raise" : "clear";
  env["FABRICWATCH_DETECTOR"] = t.detector;
  env["FABRICWATCH_SEVERITY"] = std::string(detect::SeverityName(f.severity));
  env["FABRICWATCH_ENTITY"] = detect::EntityText(f.entity);
  for (const auto& [name, value] : f.entity) env[EnvName(name)] = value;
  env["FABRICWATCH_REASON"] = f.reason;
  // Attribution (docs/design.md §5.10): the far end of the port and the jobs on the device;
  // empty when unknown.
  env["FABRICWATCH_PEER"] = f.peer;
  std::string jobs;
  for (const std::string& job : f.jobs) jobs += (jobs.empty() ? "" : ",") + job;
  env["FABRICWATCH_JOBS"] = jobs;
  env["FABRICWATCH_VALUE"] = fmt::format("{}", f.value);
  env["FABRICWATCH_EVIDENCE"] =
      evidence.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  env["FABRICWATCH_EVIDENCE_TEXT"] = evidence_text;
  env["FABRICWATCH_NODE"] = node_name;
  env["FABRICWATCH_DRY_RUN"] = config.dry_run ? "1" : "0";
  env["FABRICWATCH_DRAIN_ELIGIBLE"] = f.drain_eligible ? "1" : "0";
  env["FABRICWATCH_STARTED"] = FormatTime(t.started);
  env["FABRICWATCH_TIME"] = FormatTime(t.time);
  env["FABRICWATCH_FLEET_BUDGET_FILE"] = config.fleet_budget_file;
  // hooks.confirm_with_probe: the probe that confirmed the drain; absent when none ran, so a
  // hook tells "not probed" from any probe result.
  if (run.probe) {
    const probe::ProbeReport& p = *run.probe;
    const probe::ProbeMeasurement& m = p.measurement;
    env["FABRICWATCH_PROBE_VERDICT"] = std::string(probe::ProbeVerdictName(p.verdict));
    env["FABRICWATCH_PROBE_PORT"] = probe::PortText(p.port);
    env["FABRICWATCH_PROBE_PATH"] = m.path;
    env["FABRICWATCH_PROBE_ERROR"] = p.measured() ? m.error : p.detail;
    if (p.measured() && m.outcome == probe::ProbeOutcome::kOk) {
      env["FABRICWATCH_PROBE_BANDWIDTH_GBPS"] =
          fmt::format("{:.3f}", m.bandwidth_bytes_per_second * 8 / 1e9);
      env["FABRICWATCH_PROBE_LATENCY_US"] = fmt::format(
          "{:.3f}", std::chrono::duration<double, std::micro>(m.latency_median).count());
    }
  }

  std::vector<std::string> out;
  out.reserve(env.size());
  for (const auto& [name, value] : env) out.push_back(name + "=" + value);
  return out;
}

}  // namespace fabricwatch::exporter
