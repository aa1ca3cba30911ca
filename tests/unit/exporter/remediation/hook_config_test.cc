#include "exporter/remediation/hook_config.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace fabricwatch::exporter {
namespace {

using std::chrono::milliseconds;
using std::chrono::minutes;
using std::chrono::seconds;

Result<HookConfig> Parse(const std::string& yaml) {
  auto document = YamlDocument::Parse(yaml, "fw.yml");
  if (!document) return Error(document.error());
  return ParseHookConfig(document->root().Get("hooks"));
}

std::string ErrorOf(const std::string& yaml) {
  auto config = Parse(yaml);
  EXPECT_FALSE(config.has_value()) << yaml;
  return config ? std::string() : config.error().message();
}

TEST(HookConfigTest, AbsentSectionRunsNothingInDryRun) {
  auto config = Parse("collectors: {}\n");
  ASSERT_TRUE(config.has_value()) << config.error().ToString();
  EXPECT_TRUE(config->dry_run);
  EXPECT_TRUE(config->hooks.empty());
  EXPECT_EQ(config->cooldown, minutes(30));
  EXPECT_EQ(config->max_drains_per_hour, 2);
  EXPECT_EQ(config->clear_hold_down, minutes(10));
  EXPECT_EQ(config->timeout, seconds(30));
  EXPECT_EQ(config->fleet_budget_file, "/run/fabricwatch/drain-budget-exhausted");
  EXPECT_EQ(config->suspect_peers_file, "/run/fabricwatch/suspect-peers");
  EXPECT_FALSE(config->hold_drain_while_jobs);
  EXPECT_EQ(config->max_drain_hold, milliseconds(0));
  EXPECT_FALSE(config->confirm_with_probe);  // issue 37: off by default
}

TEST(HookConfigTest, FullSection) {
  auto config = Parse(R"(
hooks:
  dry_run: false
  node_name: gpu-a17
  cooldown: 15m
  max_drains_per_hour: 4
  clear_hold_down: 5m
  timeout: 20s
  kill_grace: 2s
  max_output_bytes: 4096
  fleet_budget_file: ""
  suspect_peers_file: /var/run/fw-suspects
  hold_drain_while_jobs: true
  max_drain_hold: 12h
  confirm_with_probe: true
  run:
    - name: slurm
      command: [/usr/lib/fabricwatch/hooks/slurm-drain, --verbose]
      detectors: [pfc_storm, link_flap]
      severities: [critical]
      on: [raise, clear]
      timeout: 10s
      env: {SLURM_CONF: /etc/slurm/slurm.conf}
    - name: page-webhook
      action: notify
      command: [/usr/lib/fabricwatch/hooks/webhook]
      on: [raise]
      pass_env: [KUBERNETES_SERVICE_HOST]
)");
  ASSERT_TRUE(config.has_value()) << config.error().ToString();
  EXPECT_FALSE(config->dry_run);
  EXPECT_EQ(config->node_name, "gpu-a17");
  EXPECT_EQ(config->cooldown, minutes(15));
  EXPECT_EQ(config->max_drains_per_hour, 4);
  EXPECT_EQ(config->clear_hold_down, minutes(5));
  EXPECT_EQ(config->timeout, seconds(20));
  EXPECT_EQ(config->kill_grace, seconds(2));
  EXPECT_EQ(config->max_output_bytes, 4096u);
  EXPECT_EQ(config->fleet_budget_file, "");
  EXPECT_EQ(config->suspect_peers_file, "/var/run/fw-suspects");
  EXPECT_TRUE(config->hold_drain_while_jobs);
  EXPECT_EQ(config->max_drain_hold, std::chrono::hours(12));
  EXPECT_TRUE(config->confirm_with_probe);
  ASSERT_EQ(config->hooks.size(), 2u);
  const HookSpec& slurm = config->hooks[0];
  EXPECT_EQ(slurm.name, "slurm");
  EXPECT_EQ(slurm.action, HookAction::kDrain);
  EXPECT_EQ(slurm.command,
            (std::vector<std::string>{"/usr/lib/fabricwatch/hooks/slurm-drain", "--verbose"}));
  EXPECT_EQ(slurm.detectors, (std::vector<std::string>{"pfc_storm", "link_flap"}));
  EXPECT_EQ(slurm.severities, std::vector<detect::Severity>{detect::Severity::kCritical});
  EXPECT_TRUE(slurm.on_raise);
  EXPECT_TRUE(slurm.on_clear);
  EXPECT_EQ(slurm.timeout, seconds(10));
  EXPECT_EQ(slurm.env.at("SLURM_CONF"), "/etc/slurm/slurm.conf");
  const HookSpec& webhook = config->hooks[1];
  EXPECT_EQ(webhook.action, HookAction::kNotify);
  EXPECT_TRUE(webhook.detectors.empty());
  EXPECT_TRUE(webhook.on_raise);
  EXPECT_FALSE(webhook.on_clear);
  EXPECT_EQ(webhook.timeout, milliseconds(0));
  EXPECT_EQ(webhook.pass_env, std::vector<std::string>{"KUBERNETES_SERVICE_HOST"});
}

TEST(HookConfigTest, ErrorsNameTheKeyAndLine) {
  // A shell string instead of an argument vector.
  EXPECT_EQ(ErrorOf("hooks:\n  run:\n    - name: s\n      command: \"scontrol update x\"\n"),
            "fw.yml:4:16: hooks.run[0].command: must be a list");
  EXPECT_EQ(ErrorOf("hooks:\n  run:\n    - name: s\n      command: [scontrol, update]\n"),
            "fw.yml:4:16: hooks.run[0].command: the executable must be an absolute path (a list "
            "of arguments, not a shell command), got \"scontrol\"");
  EXPECT_EQ(ErrorOf("hooks:\n  dryrun: false\n"),
            "fw.yml:2:3: hooks.dryrun: unknown key (known: dry_run, node_name, cooldown, "
            "max_drains_per_hour, clear_hold_down, timeout, kill_grace, max_output_bytes, "
            "fleet_budget_file, suspect_peers_file, hold_drain_while_jobs, max_drain_hold, "
            "confirm_with_probe, user, group, run)");
  EXPECT_EQ(ErrorOf("hooks:\n  confirm_with_probe: on\n"),
            "fw.yml:2:23: hooks.confirm_with_probe: expected true or false (unquoted), got "
            "\"on\"");
  EXPECT_EQ(ErrorOf("hooks:\n  dry_run: maybe\n"),
            "fw.yml:2:12: hooks.dry_run: expected true or false (unquoted), got \"maybe\"");
  EXPECT_NE(ErrorOf("hooks:\n  cooldown: 30 minutes\n").find("fw.yml:2:13: hooks.cooldown"),
            std::string::npos);
  EXPECT_EQ(ErrorOf("hooks:\n  max_drains_per_hour: -1\n"),
            "fw.yml:2:24: hooks.max_drains_per_hour: expected an integer between 0 and 1000, got "
            "\"-1\"");
  EXPECT_EQ(ErrorOf("hooks:\n  run:\n    - name: s\n      command: [/x]\n      severities: "
                    "[fatal]\n"),
            "fw.yml:5:19: hooks.run[0].severities: expected info, warning or critical, got "
            "\"fatal\"");
  EXPECT_EQ(ErrorOf("hooks:\n  run:\n    - name: s\n      command: [/x]\n      on: [resume]\n"),
            "fw.yml:5:11: hooks.run[0].on: expected raise or clear, got \"resume\"");
  EXPECT_EQ(ErrorOf("hooks:\n  run:\n    - command: [/x]\n"),
            "fw.yml:3:7: hooks.run[0].name: is required");
  EXPECT_EQ(ErrorOf("hooks:\n  run:\n    - name: s\n"),
            "fw.yml:3:7: hooks.run[0].command: is required");
  EXPECT_EQ(ErrorOf("hooks:\n  run:\n    - {name: s, command: [/x]}\n    - {name: s, command: "
                    "[/y]}\n"),
            "fw.yml:4:7: hooks.run[1].name: duplicate hook name \"s\"");
  EXPECT_EQ(ErrorOf("hooks:\n  run:\n    - {name: s, command: [/x], env: {FABRICWATCH_DRY_RUN: "
                    "\"0\"}}\n"),
            "fw.yml:3:38: hooks.run[0].env.FABRICWATCH_DRY_RUN: must be an environment variable "
            "name, not starting with FABRICWATCH_ (those describe the event)");
  EXPECT_EQ(ErrorOf("hooks:\n  run:\n    - {name: s, command: [/x], action: evict}\n"),
            "fw.yml:3:40: hooks.run[0].action: expected drain or notify, got \"evict\"");
  EXPECT_EQ(ErrorOf("hooks:\n  fleet_budget_file: budget\n"),
            "fw.yml:2:22: hooks.fleet_budget_file: must be an absolute path (or empty: no file)");
  EXPECT_EQ(ErrorOf("hooks:\n  suspect_peers_file: suspects\n"),
            "fw.yml:2:23: hooks.suspect_peers_file: must be an absolute path (or empty: no "
            "file)");
  EXPECT_EQ(ErrorOf("hooks:\n  hold_drain_while_jobs: yes\n"),
            "fw.yml:2:26: hooks.hold_drain_while_jobs: expected true or false (unquoted), got "
            "\"yes\"");
  EXPECT_EQ(ErrorOf("hooks: [1]\n"), "fw.yml:1:8: hooks: must be a mapping");
}

TEST(HookConfigTest, UserAndGroupResolve) {
  auto config = Parse("hooks:\n  user: nobody\n  group: \"65534\"\n");
  ASSERT_TRUE(config.has_value()) << config.error().ToString();
  EXPECT_EQ(config->user, "nobody");
  EXPECT_EQ(config->group, "65534");
  auto credentials = ResolveHookCredentials(*config);
  ASSERT_TRUE(credentials.has_value()) << credentials.error().ToString();
  if (::geteuid() != 0) {
    EXPECT_FALSE(credentials->has_value()) << "not root: hooks run as the agent's own user";
  } else {
    ASSERT_TRUE(credentials->has_value());
    EXPECT_EQ((*credentials)->uid, 65534u);
    EXPECT_EQ((*credentials)->gid, 65534u);
  }
  HookConfig unknown;
  unknown.user = "no-such-user-fabricwatch";
  auto bad = ResolveHookCredentials(unknown);
  if (::geteuid() == 0) {
    ASSERT_FALSE(bad.has_value());
    EXPECT_EQ(bad.error().message(), "hooks.user \"no-such-user-fabricwatch\": no such user");
  }
}

// --config.check: a missing hook, a directory, a file without x, and (as root) a file only root
// may execute checked for the user the hooks run as.
TEST(HookConfigTest, CheckHookExecutable) {
  std::string dir = (std::filesystem::temp_directory_path() / "fw-hookcheck-XXXXXX").string();
  ASSERT_NE(::mkdtemp(dir.data()), nullptr);
  ::chmod(dir.c_str(), 0755);
  auto hook = [](const std::string& path) {
    HookSpec h;
    h.name = "h";
    h.command = {path};
    return h;
  };
  const std::string script = dir + "/hook";
  std::ofstream(script) << "#!/bin/sh\n";
  ::chmod(script.c_str(), 0755);
  EXPECT_TRUE(CheckHookExecutable(hook(script), std::nullopt).ok());
  Status missing = CheckHookExecutable(hook(dir + "/missing"), std::nullopt);
  EXPECT_EQ(missing.sys_errno(), ENOENT) << missing.ToString();
  EXPECT_NE(missing.message().find("hook h: " + dir + "/missing"), std::string::npos);
  EXPECT_NE(CheckHookExecutable(hook(dir), std::nullopt).message().find("not a regular file"),
            std::string::npos);
  ::chmod(script.c_str(), 0644);
  EXPECT_FALSE(CheckHookExecutable(hook(script), std::nullopt).ok());
  const Credentials nobody{.uid = 65534, .gid = 65534, .groups = {65534}};
  EXPECT_FALSE(CheckHookExecutable(hook(script), nobody).ok());
  ::chmod(script.c_str(), 0700);  // owned by the test's user
  Status owner_only = CheckHookExecutable(hook(script), nobody);
  EXPECT_EQ(owner_only.code(), StatusCode::kPermissionDenied);
  EXPECT_NE(owner_only.message().find("not executable by uid 65534 gid 65534"), std::string::npos)
      << owner_only.message();
  ::chmod(script.c_str(), 0751);
  EXPECT_TRUE(CheckHookExecutable(hook(script), nobody).ok());
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace fabricwatch::exporter
