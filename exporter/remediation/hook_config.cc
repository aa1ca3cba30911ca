#include "exporter/remediation/hook_config.h"

#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <set>

#include "collectors/core/duration.h"
#include "collectors/core/yaml_checks.h"

namespace fabricwatch::exporter {
namespace {

std::string Where(const YAML::Node& node, const std::string& source, const std::string& key) {
  const YAML::Mark mark = node.Mark();
  std::string where = source;
  if (!mark.is_null()) {
    where += ":" + std::to_string(mark.line + 1) + ":" + std::to_string(mark.column + 1);
  }
  return where + ": " + key;
}

tl::unexpected<Status> Invalid(const YAML::Node& node, const std::string& source,
                               const std::string& key, const std::string& what) {
  return Error(StatusCode::kInvalidArgument, Where(node, source, key) + ": " + what);
}

Result<std::string> Scalar(const YAML::Node& node, const std::string& source,
                           const std::string& key) {
  if (!node.IsScalar()) return Invalid(node, source, key, "must be a scalar");
  return node.Scalar();
}

Result<std::chrono::milliseconds> Duration(const YAML::Node& node, const std::string& source,
                                           const std::string& key, bool allow_zero) {
  auto text = Scalar(node, source, key);
  if (!text) return Error(text.error());
  auto duration = ParseDuration(*text);
  if (!duration) return Error(duration.error().WithContext(Where(node, source, key)));
  if (!allow_zero && duration->count() <= 0) {
    return Invalid(node, source, key, "must be greater than 0");
  }
  return *duration;
}

Result<long long> Integer(const YAML::Node& node, const std::string& source, const std::string& key,
                          long long min, long long max) {
  long long value = 0;
  if (!node.IsScalar() || !YAML::convert<long long>::decode(node, value) || value < min ||
      value > max) {
    return Invalid(
        node, source, key,
        "expected an integer between " + std::to_string(min) + " and " + std::to_string(max));
  }
  return value;
}

Result<std::vector<std::string>> StringList(const YAML::Node& node, const std::string& source,
                                            const std::string& key) {
  if (node.IsNull()) return std::vector<std::string>{};
  if (!node.IsSequence()) return Invalid(node, source, key, "must be a list");
  std::vector<std::string> out;
  for (size_t i = 0; i < node.size(); ++i) {
    auto item = Scalar(node[i], source, key + "[" + std::to_string(i) + "]");
    if (!item) return Error(item.error());
    out.push_back(*item);
  }
  return out;
}

bool ValidName(std::string_view name, bool allow_dash) {
  if (name.empty()) return false;
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || (allow_dash && c == '-');
    if (!ok) return false;
  }
  return true;
}

Result<HookSpec> ParseHook(const YAML::Node& node, const std::string& source,
                           const std::string& prefix) {
  if (!node.IsMap()) return Invalid(node, source, prefix, "must be a mapping");
  HookSpec hook;
  bool has_command = false;
  for (const auto& entry : node) {
    const std::string key = entry.first.as<std::string>();
    const YAML::Node& value = entry.second;
    const std::string path = prefix + "." + key;
    if (key == "name") {
      auto name = Scalar(value, source, path);
      if (!name) return Error(name.error());
      if (!ValidName(*name, true)) {
        return Invalid(value, source, path, "must be letters, digits, '_' or '-'");
      }
      hook.name = *name;
    } else if (key == "action") {
      auto action = Scalar(value, source, path);
      if (!action) return Error(action.error());
      if (*action == "drain") {
        hook.action = HookAction::kDrain;
      } else if (*action == "notify") {
        hook.action = HookAction::kNotify;
      } else {
        return Invalid(value, source, path, "expected drain or notify, got \"" + *action + "\"");
      }
    } else if (key == "command") {
      auto command = StringList(value, source, path);
      if (!command) return Error(command.error());
      if (command->empty()) return Invalid(value, source, path, "must be a non-empty list");
      // An argument vector, executed without a shell and without a PATH search: a relative
      // name would depend on the agent's working directory.
      if (command->front().empty() || command->front().front() != '/') {
        return Invalid(value, source, path,
                       "the executable must be an absolute path (a list of arguments, not a "
                       "shell command), got \"" +
                           command->front() + "\"");
      }
      hook.command = std::move(*command);
      has_command = true;
    } else if (key == "detectors") {
      auto detectors = StringList(value, source, path);
      if (!detectors) return Error(detectors.error());
      for (const std::string& d : *detectors) {
        if (!ValidName(d, false)) {
          return Invalid(value, source, path, "\"" + d + "\" is not a detector name");
        }
      }
      hook.detectors = std::move(*detectors);
    } else if (key == "severities") {
      auto severities = StringList(value, source, path);
      if (!severities) return Error(severities.error());
      for (const std::string& s : *severities) {
        if (s == "info") {
          hook.severities.push_back(detect::Severity::kInfo);
        } else if (s == "warning") {
          hook.severities.push_back(detect::Severity::kWarning);
        } else if (s == "critical") {
          hook.severities.push_back(detect::Severity::kCritical);
        } else {
          return Invalid(value, source, path,
                         "expected info, warning or critical, got \"" + s + "\"");
        }
      }
    } else if (key == "on") {
      auto on = StringList(value, source, path);
      if (!on) return Error(on.error());
      if (on->empty()) return Invalid(value, source, path, "must list raise, clear or both");
      hook.on_raise = hook.on_clear = false;
      for (const std::string& event : *on) {
        if (event == "raise") {
          hook.on_raise = true;
        } else if (event == "clear") {
          hook.on_clear = true;
        } else {
          return Invalid(value, source, path, "expected raise or clear, got \"" + event + "\"");
        }
      }
    } else if (key == "timeout") {
      auto timeout = Duration(value, source, path, false);
      if (!timeout) return Error(timeout.error());
      hook.timeout = *timeout;
    } else if (key == "env") {
      if (!value.IsMap()) return Invalid(value, source, path, "must be a mapping");
      for (const auto& var : value) {
        const std::string name = var.first.as<std::string>();
        if (!ValidName(name, false) || name.starts_with("FABRICWATCH_") ||
            (name[0] >= '0' && name[0] <= '9')) {
          return Invalid(var.first, source, path + "." + name,
                         "must be an environment variable name, not starting with FABRICWATCH_ "
                         "(those describe the event)");
        }
        auto text = Scalar(var.second, source, path + "." + name);
        if (!text) return Error(text.error());
        hook.env[name] = *text;
      }
    } else if (key == "pass_env") {
      auto names = StringList(value, source, path);
      if (!names) return Error(names.error());
      for (const std::string& name : *names) {
        if (!ValidName(name, false) || name.starts_with("FABRICWATCH_")) {
          return Invalid(value, source, path,
                         "\"" + name +
                             "\" must be an environment variable name, not starting "
                             "with FABRICWATCH_");
        }
      }
      hook.pass_env = std::move(*names);
    } else {
      return Invalid(entry.first, source, path,
                     "unknown key (known: name, action, command, detectors, severities, on, "
                     "timeout, env, pass_env)");
    }
  }
  if (hook.name.empty()) return Invalid(node, source, prefix + ".name", "is required");
  if (!has_command) return Invalid(node, source, prefix + ".command", "is required");
  return hook;
}

}  // namespace

Result<HookConfig> ParseHookConfig(const YAML::Node& node, const std::string& source) {
  HookConfig config;
  if (!node || node.IsNull()) return config;
  if (!node.IsMap()) return Invalid(node, source, "hooks", "must be a mapping");
  if (Status s = CheckNoDuplicateKeys(node, source); !s.ok()) return Error(s.WithContext("hooks"));
  try {
    for (const auto& entry : node) {
      const std::string key = entry.first.as<std::string>();
      const YAML::Node& value = entry.second;
      const std::string path = "hooks." + key;
      if (key == "dry_run") {
        auto v = StrictBool(value, source, path);
        if (!v) return Error(v.error());
        config.dry_run = *v;
      } else if (key == "node_name") {
        auto v = Scalar(value, source, path);
        if (!v) return Error(v.error());
        config.node_name = *v;
      } else if (key == "cooldown") {
        auto v = Duration(value, source, path, true);
        if (!v) return Error(v.error());
        config.cooldown = *v;
      } else if (key == "max_drains_per_hour") {
        auto v = Integer(value, source, path, 0, 1000);
        if (!v) return Error(v.error());
        config.max_drains_per_hour = static_cast<int>(*v);
      } else if (key == "clear_hold_down") {
        auto v = Duration(value, source, path, true);
        if (!v) return Error(v.error());
        config.clear_hold_down = *v;
      } else if (key == "timeout") {
        auto v = Duration(value, source, path, false);
        if (!v) return Error(v.error());
        config.timeout = *v;
      } else if (key == "kill_grace") {
        auto v = Duration(value, source, path, false);
        if (!v) return Error(v.error());
        config.kill_grace = *v;
      } else if (key == "max_output_bytes") {
        auto v = Integer(value, source, path, 0, 1 << 20);
        if (!v) return Error(v.error());
        config.max_output_bytes = static_cast<size_t>(*v);
      } else if (key == "fleet_budget_file") {
        auto v = Scalar(value, source, path);
        if (!v) return Error(v.error());
        if (!v->empty() && v->front() != '/') {
          return Invalid(value, source, path, "must be an absolute path (or empty: no file)");
        }
        config.fleet_budget_file = *v;
      } else if (key == "suspect_peers_file") {
        auto v = Scalar(value, source, path);
        if (!v) return Error(v.error());
        if (!v->empty() && v->front() != '/') {
          return Invalid(value, source, path, "must be an absolute path (or empty: no file)");
        }
        config.suspect_peers_file = *v;
      } else if (key == "hold_drain_while_jobs") {
        auto v = StrictBool(value, source, path);
        if (!v) return Error(v.error());
        config.hold_drain_while_jobs = *v;
      } else if (key == "max_drain_hold") {
        auto v = Duration(value, source, path, true);
        if (!v) return Error(v.error());
        config.max_drain_hold = *v;
      } else if (key == "confirm_with_probe") {
        auto v = StrictBool(value, source, path);
        if (!v) return Error(v.error());
        config.confirm_with_probe = *v;
      } else if (key == "user" || key == "group") {
        auto v = Scalar(value, source, path);
        if (!v) return Error(v.error());
        (key == "user" ? config.user : config.group) = *v;
      } else if (key == "run") {
        if (value.IsNull()) continue;
        if (!value.IsSequence()) return Invalid(value, source, path, "must be a list of hooks");
        std::set<std::string> names;
        for (size_t i = 0; i < value.size(); ++i) {
          const std::string prefix = "hooks.run[" + std::to_string(i) + "]";
          auto hook = ParseHook(value[i], source, prefix);
          if (!hook) return Error(hook.error());
          if (!names.insert(hook->name).second) {
            return Invalid(value[i], source, prefix + ".name",
                           "duplicate hook name \"" + hook->name + "\"");
          }
          config.hooks.push_back(std::move(*hook));
        }
      } else {
        return Invalid(entry.first, source, path,
                       "unknown key (known: dry_run, node_name, cooldown, max_drains_per_hour, "
                       "clear_hold_down, timeout, kill_grace, max_output_bytes, "
                       "fleet_budget_file, suspect_peers_file, hold_drain_while_jobs, "
                       "max_drain_hold, confirm_with_probe, user, group, run)");
      }
    }
  } catch (const YAML::Exception& e) {
    return Error(StatusCode::kInvalidArgument, source + ": hooks: " + e.what());
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
