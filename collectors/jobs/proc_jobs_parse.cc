#include "collectors/jobs/proc_jobs_parse.h"

#include <algorithm>
#include <charconv>
#include <vector>

namespace fabricwatch::jobs {
namespace {

bool IsDigits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

bool IsLowerHex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); }

// A pod UID in the form the API server gives it: a UUID (8-4-4-4-12 lowercase hex), or the 32
// hex digits kubelet makes for a static pod. `sep` is the group separator: '-' in cgroupfs
// names, '_' in systemd slice names. Returns the UID with dashes, or nullopt.
std::optional<std::string> CanonicalPodUid(std::string_view text, char sep) {
  if (text.size() == 32) {
    if (!std::all_of(text.begin(), text.end(), IsLowerHex)) return std::nullopt;
    return std::string(text);
  }
  if (text.size() != 36) return std::nullopt;
  std::string uid(text);
  for (size_t i = 0; i < uid.size(); ++i) {
    if (i == 8 || i == 13 || i == 18 || i == 23) {
      if (uid[i] != sep) return std::nullopt;
      uid[i] = '-';
    } else if (!IsLowerHex(uid[i])) {
      return std::nullopt;
    }
  }
  return uid;
}

// Calls f(component) for each non-empty '/'-separated component until f returns true.
template <typename F>
bool AnyComponent(std::string_view path, F f) {
  while (!path.empty()) {
    size_t slash = path.find('/');
    std::string_view component = path.substr(0, slash);
    if (!component.empty() && f(component)) return true;
    if (slash == std::string_view::npos) break;
    path.remove_prefix(slash + 1);
  }
  return false;
}

// Splits on runs of spaces and tabs.
std::vector<std::string_view> Fields(std::string_view line) {
  std::vector<std::string_view> fields;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t') ++i;
    if (i > start) fields.push_back(line.substr(start, i - start));
  }
  return fields;
}

template <typename F>
void ForEachLine(std::string_view text, F f) {
  while (!text.empty()) {
    size_t nl = text.find('\n');
    std::string_view line = text.substr(0, nl);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    f(line);
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
}

}  // namespace

std::string_view SchedulerName(Scheduler scheduler) {
  switch (scheduler) {
    case Scheduler::kSlurm:
      return "slurm";
    case Scheduler::kKubernetes:
      return "kubernetes";
  }
  return "unknown";
}

std::optional<std::string> SlurmJobOfCgroupPath(std::string_view path) {
  std::optional<std::string> job;
  AnyComponent(path, [&](std::string_view c) {
    constexpr std::string_view kPrefix = "job_";
    if (!c.starts_with(kPrefix) || !IsDigits(c.substr(kPrefix.size()))) return false;
    job.emplace(c.substr(kPrefix.size()));
    return true;
  });
  return job;
}

std::optional<std::string> PodUidOfCgroupPath(std::string_view path) {
  bool under_kubepods = false;
  bool leading_dotdot = true;    // still in the path's leading run of ".." components
  bool kubepods_hidden = false;  // that run hid kubepods, and only QoS classes came after it
  std::optional<std::string> uid;
  AnyComponent(path, [&](std::string_view c) {
    leading_dotdot = leading_dotdot && c == "..";
    if (leading_dotdot) {
      kubepods_hidden = true;
      return false;
    }
    // "kubepods", "kubepods.slice", "kubelet-kubepods.slice", "kubepods-burstable.slice", …
    if (c.find("kubepods") != std::string_view::npos) under_kubepods = true;
    if (!under_kubepods) {
      // Seen from a cgroup namespace, the shared ancestors are ".." (header): after them only
      // a cgroupfs QoS class (kubelet qos_container_manager_linux.go) may come before the pod.
      if (!kubepods_hidden) return false;
      if (c == "burstable" || c == "besteffort") return false;
      kubepods_hidden = false;
      if (!c.starts_with("pod")) return false;
    }
    if (c.starts_with("pod")) {  // cgroupfs driver: pod<uid>
      uid = CanonicalPodUid(c.substr(3), '-');
      if (uid) return true;
    }
    // systemd driver: <parent>-pod<uid_with_underscores>.slice; the UID holds no dash, so the
    // last "-pod" is the one.
    constexpr std::string_view kSlice = ".slice";
    size_t pod = c.rfind("-pod");
    if (c.ends_with(kSlice) && pod != std::string_view::npos) {
      std::string_view escaped = c.substr(pod + 4, c.size() - kSlice.size() - pod - 4);
      uid = CanonicalPodUid(escaped, '_');
      if (uid) return true;
    }
    return false;
  });
  return uid;
}

std::optional<Job> ParseCgroupJob(std::string_view text) {
  std::optional<Job> job;
  ForEachLine(text, [&](std::string_view line) {
    if (job) return;
    // hierarchy-ID:controller-list:cgroup-path; the path itself may hold colons.
    size_t first = line.find(':');
    if (first == std::string_view::npos) return;
    size_t second = line.find(':', first + 1);
    if (second == std::string_view::npos || !IsDigits(line.substr(0, first))) return;
    std::string_view path = line.substr(second + 1);
    if (!path.starts_with('/')) return;
    if (auto slurm = SlurmJobOfCgroupPath(path)) {
      job = Job{Scheduler::kSlurm, std::move(*slurm)};
    } else if (auto pod = PodUidOfCgroupPath(path)) {
      job = Job{Scheduler::kKubernetes, std::move(*pod)};
    }
  });
  return job;
}

std::optional<uint32_t> UverbsIndexOf(std::string_view link_target, std::string_view uverbs_dir) {
  // <dir>/uverbsN; the directory is /dev/infiniband on a host, another one in a replay test.
  if (!link_target.starts_with(uverbs_dir)) return std::nullopt;
  link_target.remove_prefix(uverbs_dir.size());
  constexpr std::string_view kPrefix = "/uverbs";
  if (!link_target.starts_with(kPrefix)) return std::nullopt;
  std::string_view digits = link_target.substr(kPrefix.size());
  // The kernel names nodes uverbs0, uverbs1, … (ib_uverbs_add_one(), dev_set_name
  // "uverbs%d"): no sign, no leading zero, no suffix.
  if (!IsDigits(digits) || digits.size() > 9 || (digits.size() > 1 && digits[0] == '0')) {
    return std::nullopt;
  }
  uint32_t index = 0;
  std::from_chars(digits.data(), digits.data() + digits.size(), index);
  return index;
}

Result<std::map<int64_t, std::string>> ParseScontrolListpids(std::string_view text,
                                                             size_t* bad_rows) {
  std::map<int64_t, std::string> pids;
  bool header_seen = false;
  std::optional<Status> error;
  size_t bad = 0;
  ForEachLine(text, [&](std::string_view line) {
    if (error) return;
    std::vector<std::string_view> fields = Fields(line);
    if (fields.empty()) return;
    if (!header_seen) {
      if (fields.size() < 2 || fields[0] != "PID" || fields[1] != "JOBID") {
        error = Status(StatusCode::kInvalidArgument,
                       "scontrol listpids: expected the header \"PID JOBID STEPID LOCALID "
                       "GLOBALID\", got \"" +
                           std::string(line.substr(0, 80)) + "\"");
      }
      header_seen = true;
      return;
    }
    int64_t pid = 0;
    if (fields.size() < 2 || !IsDigits(fields[0]) || !IsDigits(fields[1]) ||
        std::from_chars(fields[0].data(), fields[0].data() + fields[0].size(), pid).ec !=
            std::errc() ||
        pid <= 0) {
      ++bad;
      return;
    }
    pids[pid] = std::string(fields[1]);
  });
  if (bad_rows) *bad_rows = bad;
  if (error) return Error(std::move(*error));
  return pids;
}

}  // namespace fabricwatch::jobs
