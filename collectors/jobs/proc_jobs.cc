#include "collectors/jobs/proc_jobs.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <optional>
#include <vector>

namespace fabricwatch::jobs {
namespace {

using Clock = std::chrono::steady_clock;

// /proc/<pid>/cgroup is one line per hierarchy: a v1 host with a dozen controllers and long
// Slurm or kubelet paths stays far below this. A fuller read is cut at its last newline (every
// v1 line names the same job, so the first lines are enough).
constexpr size_t kCgroupBufferBytes = 16 * 1024;

enum class Outcome { kRead, kVanished, kUnreadable };

// A process that exited between readdir and a later step answers ENOENT (its /proc directory
// is gone) or ESRCH (the task is being reaped: proc_fd_link(), proc_cgroup_show() find no
// task). Anything else (EACCES, EPERM without ptrace rights) leaves the entry unread.
Outcome Classify(const Status& status) {
  int err = status.sys_errno();
  return (err == ENOENT || err == ESRCH) ? Outcome::kVanished : Outcome::kUnreadable;
}

std::optional<int64_t> ParsePid(const std::string& name) {
  int64_t pid = 0;
  auto [end, ec] = std::from_chars(name.data(), name.data() + name.size(), pid);
  if (ec != std::errc() || end != name.data() + name.size() || pid <= 0) return std::nullopt;
  return pid;
}

// The state of one scan: caches, scratch buffers and the result being built.
class Scanner {
 public:
  Scanner(const sys::FileSystem& fs, const std::string& root, const sys::SysFs& sysfs,
          const ScanLimits& limits, const PidJobMap* listpids)
      : fs_(fs), root_(root), sysfs_(sysfs), limits_(limits), listpids_(listpids) {
    while (root_.size() > 1 && root_.back() == '/') root_.pop_back();
  }

  Clock::time_point Now() const { return limits_.clock ? limits_.clock() : Clock::now(); }

  Result<DeviceJobs> Run() {
    const Clock::time_point start = Now();
    auto names = fs_.ListDir(root_);
    if (!names) return Error(names.error().WithContext("job scan"));
    std::vector<int64_t> pids;
    pids.reserve(names->size());
    for (const std::string& name : *names) {
      auto pid = ParsePid(name);
      if (pid && *pid != limits_.exclude_pid) pids.push_back(*pid);
    }
    // Pid order: the order /proc lists them in, and the same order on a replay tree.
    std::sort(pids.begin(), pids.end());
    out_.stats.processes_seen = pids.size();
    for (int64_t pid : pids) {
      if (out_.stats.processes_read + out_.stats.skipped() >= limits_.max_processes ||
          Now() - start >= limits_.time_budget) {
        out_.stats.truncated = true;
        break;
      }
      switch (ScanProcess(pid)) {
        case Outcome::kRead:
          ++out_.stats.processes_read;
          break;
        case Outcome::kVanished:
          ++out_.stats.vanished;
          break;
        case Outcome::kUnreadable:
          ++out_.stats.unreadable;
          break;
      }
    }
    out_.stats.elapsed = std::chrono::duration_cast<std::chrono::nanoseconds>(Now() - start);
    return std::move(out_);
  }

 private:
  void AssignPidPath(int64_t pid, std::string_view leaf, std::string& path) const {
    path.assign(root_);
    if (path != "/") path += '/';
    path += std::to_string(pid);
    path += '/';
    path += leaf;
  }

  // The ibdev of uverbsN, read once per scan; nullopt when the class entry is missing.
  const std::optional<std::string>& IbdevOf(uint32_t index) {
    auto [it, inserted] = ibdevs_.try_emplace(index);
    if (inserted) {
      auto name =
          sysfs_.ReadString("class/infiniband_verbs/uverbs" + std::to_string(index) + "/ibdev");
      if (name && !name->empty()) it->second = std::move(*name);
    }
    return it->second;
  }

  Outcome ScanProcess(int64_t pid) {
    AssignPidPath(pid, "fd", fd_dir_);
    if (Status s = fs_.ListDirInto(fd_dir_, fd_names_); !s.ok()) return Classify(s);
    devices_.clear();
    uint64_t fds = 0;
    for (const std::string& fd : fd_names_) {
      if (fds == limits_.max_fds_per_process) {
        out_.stats.truncated = true;
        break;
      }
      ++fds;
      link_path_.assign(fd_dir_);
      link_path_ += '/';
      link_path_ += fd;
      auto target = fs_.ReadLink(link_path_);
      ++out_.stats.fds_read;
      if (!target) {
        // ENOENT here is usually one fd closed since the listing: the process lives on.
        if (Classify(target.error()) == Outcome::kVanished) continue;
        return Outcome::kUnreadable;
      }
      auto index = UverbsIndexOf(*target, limits_.uverbs_dir);
      if (!index) continue;
      const std::optional<std::string>& ibdev = IbdevOf(*index);
      if (!ibdev) {
        ++out_.stats.unknown_devices;
        continue;
      }
      if (std::find(devices_.begin(), devices_.end(), *ibdev) == devices_.end()) {
        devices_.push_back(*ibdev);
      }
    }
    if (devices_.empty()) return Outcome::kRead;
    auto job = JobOf(pid);
    if (!job) return job.error();
    ++out_.stats.uverbs_processes;
    if (!*job) ++out_.stats.unattributed;
    for (const std::string& device : devices_) {
      ++out_.processes[device];
      if (*job) out_.jobs[device].insert(**job);
    }
    return Outcome::kRead;
  }

  // The job of a process that holds a device: its cgroup first, then scontrol listpids.
  tl::expected<std::optional<Job>, Outcome> JobOf(int64_t pid) {
    AssignPidPath(pid, "cgroup", cgroup_path_);
    auto fd = fs_.Open(cgroup_path_);
    if (!fd) return tl::unexpected(Classify(fd.error()));
    cgroup_buffer_.resize(kCgroupBufferBytes);
    auto n = fs_.ReadAt0(*fd, std::span<char>(cgroup_buffer_.data(), cgroup_buffer_.size()),
                         cgroup_path_);
    if (!n) return tl::unexpected(Classify(n.error()));
    std::string_view text(cgroup_buffer_.data(), *n);
    if (*n == cgroup_buffer_.size()) text = text.substr(0, text.rfind('\n') + 1);
    if (auto job = ParseCgroupJob(text)) return job;
    if (listpids_) {
      if (auto it = listpids_->find(pid); it != listpids_->end()) {
        return Job{Scheduler::kSlurm, it->second};
      }
    }
    return std::optional<Job>();
  }

  const sys::FileSystem& fs_;
  std::string root_;
  const sys::SysFs& sysfs_;
  const ScanLimits& limits_;
  const PidJobMap* listpids_;
  std::map<uint32_t, std::optional<std::string>> ibdevs_;
  std::vector<std::string> fd_names_;
  std::vector<std::string> devices_;  // devices of the current process, few
  std::string fd_dir_, link_path_, cgroup_path_, cgroup_buffer_;
  DeviceJobs out_;
};

}  // namespace

Result<DeviceJobs> ScanDeviceJobs(const sys::FileSystem& fs, const std::string& procfs_root,
                                  const sys::SysFs& sysfs, const ScanLimits& limits,
                                  const PidJobMap* listpids) {
  return Scanner(fs, procfs_root, sysfs, limits, listpids).Run();
}

}  // namespace fabricwatch::jobs
