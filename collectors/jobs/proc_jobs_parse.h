#pragma once
// Pure parsers of the job scan (issue 24 item 2, docs/design.md §5.10): which Slurm job or
// Kubernetes pod a process belongs to, and which uverbs node an fd link names.
//
// Sources and their formats:
// - /proc/<pid>/cgroup (proc_cgroup_show() in kernel/cgroup/cgroup.c): one line per hierarchy,
//   `hierarchy-ID:controller-list:cgroup-path`; cgroup v2 has the single line `0::/path`, v1 one
//   line per mounted hierarchy (`4:memory:/path`, `1:name=systemd:/path`). The path is relative
//   to the reader's cgroup namespace root, so inside a container it may be `/` and say nothing.
// - Slurm (slurm.schedmd.com/cgroups.html, cgroup_v2.html): cgroup/v1 puts a task in
//   `/slurm/uid_<uid>/job_<id>/step_<step>/task_<n>` (`/slurm_<nodename>/…` with several slurmd
//   per host); cgroup/v2 in `/system.slice/slurmstepd.scope/job_<id>/step_<step>/user/task_<n>`
//   (steps `batch`, `extern`, `interactive` or a number). Either way one component is
//   `job_<digits>`, and that is all that is matched: a cgroup namespace may cut the prefix off.
// - Kubernetes (kubelet pkg/kubelet/cm/pod_container_manager_linux.go, GetPodContainerName, and
//   cgroup_manager_linux.go, systemd name escaping): cgroupfs driver
//   `/kubepods[/burstable|/besteffort]/pod<uid>/<container-id>`; systemd driver
//   `/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod<uid>.slice/
//   cri-containerd-<id>.scope` with the UID's dashes written as underscores (a dash is the
//   systemd slice separator); kind nests it as `/kubelet.slice/kubelet-kubepods.slice/…`. A
//   UID is a UUID (8-4-4-4-12 hex), or 32 hex digits for a static pod (kubelet
//   pkg/kubelet/config/common.go: an MD5 of the manifest). A `kubepods` component must come
//   first, so a user's unit called `pod…` is not a pod. One exception: an agent in a container
//   under cgroup v2 reads from its own cgroup namespace, where another pod's path is relative to
//   the agent's cgroup and starts with a `..` for each level above it (cgroup_path_ns(),
//   kernfs_path_from_node() in fs/kernfs/dir.c). With the cgroupfs driver the `kubepods`
//   component is then among the hidden ones, `/../../besteffort/pod<uid>/<id>`, so after a
//   leading `..` run a `pod<uid>` counts when only a QoS class comes before it. The systemd
//   driver's names carry `kubepods` in every level and need no exception.
// - `scontrol listpids` (scontrol(1)): a header `PID JOBID STEPID LOCALID GLOBALID`, then one
//   row per process of the jobs on this node, e.g. `12345 1234 batch 0 0`, with `-` for unknown
//   local and global ids.
//
// Thread-safety: pure functions.

#include <compare>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"

namespace fabricwatch::jobs {

enum class Scheduler { kSlurm, kKubernetes };

// "slurm" or "kubernetes": the `scheduler` label of fabric_device_job_info.
std::string_view SchedulerName(Scheduler scheduler);

struct Job {
  Scheduler scheduler = Scheduler::kSlurm;
  std::string id;  // Slurm job id (digits), or the pod UID in its canonical (dashed) form

  friend auto operator<=>(const Job&, const Job&) = default;
  friend bool operator==(const Job&, const Job&) = default;
};

// The job of the process whose /proc/<pid>/cgroup is `text`; nullopt when no line names one
// (a user's session, a system service, garbage). The first line that names a job wins; a
// Slurm job beats a pod on the same line (a Slurm cluster run inside pods).
std::optional<Job> ParseCgroupJob(std::string_view text);

// The Slurm job of one cgroup path (`/slurm/uid_0/job_42/step_0`), or nullopt.
std::optional<std::string> SlurmJobOfCgroupPath(std::string_view path);
// The pod UID (dashed) of one cgroup path, or nullopt.
std::optional<std::string> PodUidOfCgroupPath(std::string_view path);

// N of a readlink of /proc/<pid>/fd/<n> that is exactly `/dev/infiniband/uverbsN`; anything else
// (another file, `… (deleted)` after the node went away with its device, `uverbs` with no or a
// malformed number) is nullopt.
std::optional<uint32_t> UverbsIndexOf(std::string_view link_target,
                                      std::string_view uverbs_dir = "/dev/infiniband");

// pid → Slurm job id from the text of `scontrol listpids`. Blank text (no job on the node) is an
// empty map; text whose first non-blank line is not the header is InvalidArgument; a row whose
// PID or JOBID is not a number is skipped and counted in `*bad_rows` when given.
Result<std::map<int64_t, std::string>> ParseScontrolListpids(std::string_view text,
                                                             size_t* bad_rows = nullptr);

}  // namespace fabricwatch::jobs
