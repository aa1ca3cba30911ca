#include "exporter/remediation/hook_config.h"

#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <set>

#include "base/duration.h"
#include "base/yaml_reader.h"

namespace fabricwatch::exporter {
namespace {

bool ValidName(std::string_view name, bool allow_dash) {
  if (name.empty()) return false;
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || (allow_dash && c == '-');
    if (!ok) return false;
  }
  return true;
}

// A list of names, each checked by `valid`; `what` says what a name must be.
Result<std::vector<std::string>> NameList(const YamlValue& value, bool (*valid)(std::string_view),
                                          const std::string& what) {
  auto names = value.StringList();
  if (!names) return Error(names.error());
  for (const std::string& name : *names) {
    if (!valid(name)) return Error(value.Fail("\"" + name + "\" " + what));
  }
  return names;
}

bool ValidDetectorName(std::string_view name) { return ValidName(name, false); }
bool ValidPassEnv(std::string_view name) {
  return ValidName(name, false) && !name.starts_with("FABRICWATCH_");
}

Result<std::map<std::string, std::string>> HookEnv(const YamlValue& value) {
  auto entries = value.Entries();
  if (!entries) return Error(entries.error());
  std::map<std::string, std::string> env;
  for (const YamlEntry& var : *entries) {
    const std::string& name = var.key;
    if (!ValidName(name, false) || name.starts_with("FABRICWATCH_") ||
        (name[0] >= '0' && name[0] <= '9')) {
      return Error(
          var.key_node.Fail("must be an environment variable name, not starting with FABRICWATCH_ "
                            "(those describe the event)"));
    }
    auto text = var.value.Scalar();
    if (!text) return Error(text.error());
    env[name] = *text;
  }
  return env;
}

// One of `names` (by position: the value it maps to), else "expected a, b or c, got \"x\"".
template <typename T>
Result<T> OneOf(const YamlValue& value, const std::string& text,
                std::initializer_list<std::pair<std::string_view, T>> names,
                const std::string& expected) {
  for (const auto& [name, result] : names) {
    if (text == name) return result;
  }
  return Error(value.Fail("expected " + expected + ", got \"" + text + "\""));
}

Status ApplyHookCommand(const YamlValue& value, HookSpec& hook) {
  auto command = value.StringList();
  if (!command) return command.error();
  if (command->empty()) return value.Fail("must be a non-empty list");
  // An argument vector, executed without a shell and without a PATH search: a relative name
  // would depend on the agent's working directory.
  if (command->front().empty() || command->front().front() != '/') {
    return value.Fail(
        "the executable must be an absolute path (a list of arguments, not a shell command), "
        "got \"" +
        command->front() + "\"");
  }
  hook.command = std::move(*command);
  return Status::Ok();
}

Status ApplyHookEvents(const YamlValue& value, HookSpec& hook) {
  auto on = value.StringList();
  if (!on) return on.error();
  if (on->empty()) return value.Fail("must list raise, clear or both");
  hook.on_raise = hook.on_clear = false;
  for (const std::string& event : *on) {
    auto raise = OneOf<bool>(value, event, {{"raise", true}, {"clear", false}}, "raise or clear");
    if (!raise) return raise.error();
    (*raise ? hook.on_raise : hook.on_clear) = true;
  }
  return Status::Ok();
}

Status ApplyHookField(const YamlEntry& entry, HookSpec& hook) {
  const YamlValue& value = entry.value;
  const std::string& key = entry.key;
  if (key == "name") {
    auto name = value.Scalar();
    if (!name) return name.error();
    if (!ValidName(*name, true)) return value.Fail("must be letters, digits, '_' or '-'");
    hook.name = *name;
  } else if (key == "action") {
    auto text = value.Scalar();
    if (!text) return text.error();
    auto action = OneOf<HookAction>(
        value, *text, {{"drain", HookAction::kDrain}, {"notify", HookAction::kNotify}},
        "drain or notify");
    if (!action) return action.error();
    hook.action = *action;
  } else if (key == "command") {
    return ApplyHookCommand(value, hook);
  } else if (key == "detectors") {
    auto detectors = NameList(value, ValidDetectorName, "is not a detector name");
    if (!detectors) return detectors.error();
    hook.detectors = std::move(*detectors);
  } else if (key == "severities") {
    auto severities = value.StringList();
    if (!severities) return severities.error();
    for (const std::string& text : *severities) {
      auto severity = OneOf<detect::Severity>(value, text,
                                              {{"info", detect::Severity::kInfo},
                                               {"warning", detect::Severity::kWarning},
                                               {"critical", detect::Severity::kCritical}},
                                              "info, warning or critical");
      if (!severity) return severity.error();
      hook.severities.push_back(*severity);
    }
  } else if (key == "on") {
    return ApplyHookEvents(value, hook);
  } else if (key == "timeout") {
    auto timeout = value.Duration();
    if (!timeout) return timeout.error();
    hook.timeout = *timeout;
  } else if (key == "env") {
    auto env = HookEnv(value);
    if (!env) return env.error();
    hook.env = std::move(*env);
  } else {  // pass_env: CheckKeys admits no other
    auto names = NameList(value, ValidPassEnv,
                          "must be an environment variable name, not starting with FABRICWATCH_");
    if (!names) return names.error();
    hook.pass_env = std::move(*names);
  }
  return Status::Ok();
}

Result<HookSpec> ParseHook(const YamlValue& node) {
  static constexpr std::string_view kKeys[] = {
      "name", "action", "command", "detectors", "severities", "on", "timeout", "env", "pass_env"};
  if (!node.IsMap()) return Error(node.Fail("must be a mapping"));
  auto entries = node.Entries();
  if (!entries) return Error(entries.error());
  if (Status s = node.CheckKeys(kKeys); !s.ok()) return Error(s);
  HookSpec hook;
  for (const YamlEntry& entry : *entries) {
    if (Status s = ApplyHookField(entry, hook); !s.ok()) return Error(s);
  }
  if (hook.name.empty()) return Error(node.Get("name").Fail("is required"));
  if (hook.command.empty()) return Error(node.Get("command").Fail("is required"));
  return hook;
}

Result<std::vector<HookSpec>> ParseHooks(const YamlValue& run) {
  auto items = run.Items();
  if (!items) return Error(run.Fail("must be a list of hooks"));
  std::vector<HookSpec> hooks;
  std::set<std::string> names;
  for (const YamlValue& item : *items) {
    auto hook = ParseHook(item);
    if (!hook) return Error(hook.error());
    if (!names.insert(hook->name).second) {
      return Error(
          StatusCode::kInvalidArgument,
          item.Where() + ": " + item.path() + ".name: duplicate hook name \"" + hook->name + "\"");
    }
    hooks.push_back(std::move(*hook));
  }
  return hooks;
}

// An absolute path, or empty: no file.
Result<std::string> OptionalPath(const YamlValue& value) {
  auto path = value.Scalar();
  if (!path) return Error(path.error());
  if (!path->empty() && path->front() != '/') {
    return Error(value.Fail("must be an absolute path (or empty: no file)"));
  }
  return path;
}

template <typename T, typename To>
Status Assign(Result<T> value, To& out) {
  if (!value) return value.error();
  out = static_cast<To>(std::move(*value));
  return Status::Ok();
}

Status ApplyHookSetting(const YamlEntry& entry, HookConfig& config) {
  const YamlValue& v = entry.value;
  const std::string& key = entry.key;
  if (key == "dry_run") return Assign(v.Bool(), config.dry_run);
  if (key == "node_name") return Assign(v.Scalar(), config.node_name);
  if (key == "cooldown") return Assign(v.Duration(YamlZero::kAllowed), config.cooldown);
  if (key == "max_drains_per_hour") return Assign(v.Integer(0, 1000), config.max_drains_per_hour);
  if (key == "clear_hold_down") {
    return Assign(v.Duration(YamlZero::kAllowed), config.clear_hold_down);
  }
  if (key == "timeout") return Assign(v.Duration(), config.timeout);
  if (key == "kill_grace") return Assign(v.Duration(), config.kill_grace);
  if (key == "max_output_bytes") return Assign(v.Size(0, 1 << 20), config.max_output_bytes);
  if (key == "fleet_budget_file") return Assign(OptionalPath(v), config.fleet_budget_file);
  if (key == "suspect_peers_file") return Assign(OptionalPath(v), config.suspect_peers_file);
  if (key == "hold_drain_while_jobs") return Assign(v.Bool(), config.hold_drain_while_jobs);
  if (key == "max_drain_hold") {
    return Assign(v.Duration(YamlZero::kAllowed), config.max_drain_hold);
  }
  if (key == "confirm_with_probe") return Assign(v.Bool(), config.confirm_with_probe);
  if (key == "user") return Assign(v.Scalar(), config.user);
  if (key == "group") return Assign(v.Scalar(), config.group);
  return Assign(ParseHooks(v), config.hooks);  // run: CheckKeys admits no other
}

}  // namespace

Result<HookConfig> ParseHookConfig(const YamlValue& node) {
  static constexpr std::string_view kKeys[] = {"dry_run",
                                               "node_name",
                                               "cooldown",
                                               "max_drains_per_hour",
                                               "clear_hold_down",
                                               "timeout",
                                               "kill_grace",
                                               "max_output_bytes",
                                               "fleet_budget_file",
                                               "suspect_peers_file",
                                               "hold_drain_while_jobs",
                                               "max_drain_hold",
                                               "confirm_with_probe",
                                               "user",
                                               "group",
                                               "run"};
  HookConfig config;
  auto entries = node.Entries();
  if (!entries) return Error(entries.error());
  if (Status s = node.CheckKeys(kKeys); !s.ok()) return Error(s);
  for (const YamlEntry& entry : *entries) {
    if (Status s = ApplyHookSetting(entry, config); !s.ok()) return Error(s);
  }
  return config;
}

namespace {

// A name or a decimal id.
std::optional<unsigned long> NumericId(const std::string& text) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos) return {};
  return std::stoul(text);
}

}  // namespace

Result<std::optional<Credentials>> ResolveHookCredentials(const HookConfig& config) {
  if (config.user.empty() || ::geteuid() != 0) return std::optional<Credentials>();
  std::vector<char> buf(16384);
  struct passwd pw {};
  struct passwd* found = nullptr;
  const auto uid = NumericId(config.user);
  const int rc = uid ? ::getpwuid_r(static_cast<uid_t>(*uid), &pw, buf.data(), buf.size(), &found)
                     : ::getpwnam_r(config.user.c_str(), &pw, buf.data(), buf.size(), &found);
  if (found == nullptr) {
    return Error(rc != 0 ? FromErrno(rc, "hooks.user \"" + config.user + "\"")
                         : Status(StatusCode::kInvalidArgument,
                                  "hooks.user \"" + config.user + "\": no such user"));
  }
  Credentials credentials{.uid = pw.pw_uid, .gid = pw.pw_gid, .groups = {}};
  if (!config.group.empty()) {
    std::vector<char> gbuf(16384);
    struct group gr {};
    struct group* gfound = nullptr;
    const auto gid = NumericId(config.group);
    const int grc =
        gid ? ::getgrgid_r(static_cast<gid_t>(*gid), &gr, gbuf.data(), gbuf.size(), &gfound)
            : ::getgrnam_r(config.group.c_str(), &gr, gbuf.data(), gbuf.size(), &gfound);
    if (gfound == nullptr) {
      return Error(grc != 0 ? FromErrno(grc, "hooks.group \"" + config.group + "\"")
                            : Status(StatusCode::kInvalidArgument,
                                     "hooks.group \"" + config.group + "\": no such group"));
    }
    credentials.gid = gr.gr_gid;
  }
  int count = 64;
  credentials.groups.resize(static_cast<size_t>(count));
  if (::getgrouplist(pw.pw_name, credentials.gid, credentials.groups.data(), &count) < 0) {
    credentials.groups.resize(static_cast<size_t>(count));
    ::getgrouplist(pw.pw_name, credentials.gid, credentials.groups.data(), &count);
  }
  credentials.groups.resize(static_cast<size_t>(std::max(count, 0)));
  return std::optional<Credentials>(std::move(credentials));
}

Status CheckHookExecutable(const HookSpec& hook, const std::optional<Credentials>& credentials) {
  const std::string& path = hook.command.front();
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return FromErrno(errno, "hook " + hook.name + ": " + path);
  if (!S_ISREG(st.st_mode)) {
    return Status(StatusCode::kInvalidArgument,
                  "hook " + hook.name + ": " + path + " is not a regular file");
  }
  if (!credentials) {
    // The agent's own user: the kernel's answer (AT_EACCESS: the effective ids, as execve uses).
    if (::faccessat(AT_FDCWD, path.c_str(), X_OK, AT_EACCESS) != 0) {
      return FromErrno(errno, "hook " + hook.name + ": " + path + " is not executable");
    }
    return Status::Ok();
  }
  mode_t bit = S_IXOTH;
  if (st.st_uid == credentials->uid) {
    bit = S_IXUSR;
  } else if (st.st_gid == credentials->gid ||
             std::find(credentials->groups.begin(), credentials->groups.end(), st.st_gid) !=
                 credentials->groups.end()) {
    bit = S_IXGRP;
  }
  const bool root = credentials->uid == 0 && (st.st_mode & (S_IXUSR | S_IXGRP | S_IXOTH)) != 0;
  if (!root && (st.st_mode & bit) == 0) {
    return Status(StatusCode::kPermissionDenied,
                  "hook " + hook.name + ": " + path + " is not executable by uid " +
                      std::to_string(credentials->uid) + " gid " +
                      std::to_string(credentials->gid) + " (hooks.user, hooks.group)",
                  EACCES);
  }
  return Status::Ok();
}

}  // namespace fabricwatch::exporter
