#pragma once
// ScanDeviceJobs: which Slurm jobs and Kubernetes pods hold each RDMA device open (issue 24
// item 2, docs/design.md §5.10). The `jobs` collector calls it every 30 s and when a finding is
// raised, never per sample.
//
// Sources, all through the FileSystem seam (a replay tree or FakeFileSystem in tests):
// - `<procfs>/` numeric entries: one per process (thread group); threads share the fd table, so
//   /proc/<tid> entries, which readdir does not list, need no visit (proc_pid_readdir()).
// - `<procfs>/<pid>/fd/`: one symlink per open fd; readlink gives the path the process opened
//   (proc_fd_link()). A verbs context is an open `/dev/infiniband/uverbsN` (ib_uverbs_open() in
//   drivers/infiniband/core/uverbs_main.c). Listing another user's fd/ needs
//   PTRACE_MODE_READ (CAP_SYS_PTRACE or the same uid): EACCES otherwise, counted as unreadable.
//   Caveat: a container that bind-mounts the node elsewhere shows that other path; such fds
//   are not seen.
// - `<sysfs>/class/infiniband_verbs/uverbsN/ibdev`: the RDMA device name behind node N
//   (ibdev_show() in uverbs_main.c). Read once per N per scan.
// - `<procfs>/<pid>/cgroup`: read only for processes that hold a uverbs fd (ParseCgroupJob()).
//
// Cost: one getdents of <procfs>, one getdents of fd/ and one readlink per fd for each process,
// so bounded by ScanLimits. A process that exits mid-scan (ENOENT/ESRCH at any step) or an entry
// that cannot be read (EACCES/EPERM) is skipped and counted; only an unlistable <procfs> root is
// an error. When a limit is hit the scan stops (or, for max_fds_per_process, stops reading that
// process) and sets `truncated`; what was found is returned.
//
// Replay (--path.procfs=DIR): DIR/<pid>/cgroup is a file with /proc/<pid>/cgroup's text,
// DIR/<pid>/fd/<n> a symlink whose target is the string `/dev/infiniband/uverbsN` (it may dangle:
// only readlink reads it); non-numeric entries of DIR are ignored.
//
// Thread-safety: a pure function of its inputs; concurrent calls share nothing.

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <string>

#include "base/status.h"
#include "collectors/jobs/proc_jobs_parse.h"
#include "collectors/sys/filesystem.h"
#include "collectors/sys/sysfs.h"

namespace fabricwatch::jobs {

struct ScanLimits {
  // Processes visited (read or skipped); the scan stops before the next one.
  uint64_t max_processes = 20000;
  // fds read per process; the rest of that process is not read.
  uint64_t max_fds_per_process = 4096;
  // Wall time of the whole scan, checked before each process.
  std::chrono::nanoseconds time_budget = std::chrono::milliseconds(200);
  // The clock of the budget and of ScanStats::elapsed; empty means steady_clock::now.
  std::function<std::chrono::steady_clock::time_point()> clock;
  // Where the uverbs device nodes are: /dev/infiniband, or a replay directory in tests.
  std::string uverbs_dir = "/dev/infiniband";
  // A process the scan leaves out (0: none): the agent itself when the scan reads this host's
  // /proc. Its verbs event listener (sys/verbs_events.h) holds every RDMA device open, which is
  // not a job using it, and counted it would run `scontrol listpids` at every scan on a Slurm
  // node without job cgroups.
  int64_t exclude_pid = 0;
};

struct ScanStats {
  uint64_t processes_seen = 0;    // numeric entries of <procfs>
  uint64_t processes_read = 0;    // processes whose fd/ was listed
  uint64_t vanished = 0;          // exited mid-scan (ENOENT/ESRCH): skipped
  uint64_t unreadable = 0;        // EACCES/EPERM or another error: skipped
  uint64_t fds_read = 0;          // readlinks done
  uint64_t uverbs_processes = 0;  // processes holding at least one uverbs fd
  uint64_t unattributed = 0;      // of those, processes in no job (cgroup nor listpids)
  uint64_t unknown_devices = 0;   // uverbsN with no readable class/infiniband_verbs entry
  bool truncated = false;         // a limit of ScanLimits was hit
  std::chrono::nanoseconds elapsed{0};

  uint64_t skipped() const { return vanished + unreadable; }
};

struct DeviceJobs {
  // RDMA device (ibdev) → jobs holding it open. A device held only by unattributed processes
  // is in `processes` but not here.
  std::map<std::string, std::set<Job>> jobs;
  // RDMA device → number of processes holding it open (attributed or not).
  std::map<std::string, uint64_t> processes;
  ScanStats stats;
};

// pid → Slurm job id, from ParseScontrolListpids(): used for processes whose cgroup names no
// job (Slurm without proctrack/cgroup).
using PidJobMap = std::map<int64_t, std::string>;

// Scans `procfs_root` (e.g. "/proc" or a replay DIR). `listpids`, when given, attributes the
// processes that have no job cgroup. Errors only when the root itself cannot be listed.
Result<DeviceJobs> ScanDeviceJobs(const sys::FileSystem& fs, const std::string& procfs_root,
                                  const sys::SysFs& sysfs, const ScanLimits& limits = {},
                                  const PidJobMap* listpids = nullptr);

}  // namespace fabricwatch::jobs
