#include "collectors/jobs/proc_jobs.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "collectors/jobs/proc_jobs_parse.h"
#include "collectors/sys/sysfs.h"
#include "tests/testing/fake_filesystem.h"
#include "tests/testing/temp_dir.h"

namespace fabricwatch::jobs {
namespace {

namespace fs = std::filesystem;
using ::fabricwatch::testing::FakeFileSystem;
using ::fabricwatch::testing::TempDir;

constexpr const char* kUid = "0f3e7a52-1c9b-4d2e-9a7f-5b6c8d9e0a1b";

// ---- ParseCgroupJob ------------------------------------------------------------------------

struct CgroupCase {
  const char* name;
  const char* text;
  std::optional<Job> want;
};

class CgroupJobTest : public ::testing::TestWithParam<CgroupCase> {};

TEST_P(CgroupJobTest, finds_the_job) {
  EXPECT_EQ(ParseCgroupJob(GetParam().text), GetParam().want) << GetParam().text;
}

Job Slurm(const char* id) { return Job{Scheduler::kSlurm, id}; }
Job Pod(const char* uid) { return Job{Scheduler::kKubernetes, uid}; }

INSTANTIATE_TEST_SUITE_P(
    Lines, CgroupJobTest,
    ::testing::Values(
        // Slurm cgroup/v2 (cgroup_v2.html): a task, the batch and extern steps.
        CgroupCase{"slurm_v2_task",
                   "0::/system.slice/slurmstepd.scope/job_1234/step_0/user/task_0\n",
                   Slurm("1234")},
        CgroupCase{"slurm_v2_batch",
                   "0::/system.slice/slurmstepd.scope/job_77/step_batch/user/task_0", Slurm("77")},
        CgroupCase{"slurm_v2_extern", "0::/system.slice/slurmstepd.scope/job_5/step_extern/slurm\n",
                   Slurm("5")},
        // A cgroup namespace cut off the prefix: the job directory is the last component.
        CgroupCase{"slurm_v2_ends_in_job", "0::/job_42\n", Slurm("42")},
        // Slurm cgroup/v1: one line per hierarchy, the job in several of them.
        CgroupCase{"slurm_v1",
                   "12:pids:/user.slice/user-1000.slice/session-3.scope\n"
                   "11:memory:/slurm/uid_1000/job_1240/step_0/task_1\n"
                   "10:freezer:/slurm/uid_1000/job_1240/step_0\n"
                   "4:cpuset:/slurm/uid_1000/job_1240/step_0\n"
                   "1:name=systemd:/system.slice/slurmd.service\n"
                   "0::/system.slice/slurmd.service\n",
                   Slurm("1240")},
        CgroupCase{"slurm_v1_multiple_slurmd",
                   "7:devices:/slurm_node07/uid_0/job_9/step_interactive\n", Slurm("9")},
        // kubelet, cgroupfs driver (v1 and v2): pod<uid>/<container id>.
        CgroupCase{"k8s_cgroupfs_burstable",
                   "0::/kubepods/burstable/pod0f3e7a52-1c9b-4d2e-9a7f-5b6c8d9e0a1b/"
                   "8a1c2e3f4b5d6a7c8e9f0a1b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6e7f8a9b0c1d\n",
                   Pod(kUid)},
        CgroupCase{"k8s_cgroupfs_guaranteed_v1",
                   "11:devices:/kubepods/pod0f3e7a52-1c9b-4d2e-9a7f-5b6c8d9e0a1b/abc\n"
                   "10:memory:/kubepods/pod0f3e7a52-1c9b-4d2e-9a7f-5b6c8d9e0a1b/abc\n",
                   Pod(kUid)},
        // kubelet, systemd driver: dashes of the UID escaped as underscores.
        CgroupCase{"k8s_systemd_burstable",
                   "0::/kubepods.slice/kubepods-burstable.slice/"
                   "kubepods-burstable-pod0f3e7a52_1c9b_4d2e_9a7f_5b6c8d9e0a1b.slice/"
                   "cri-containerd-8a1c2e3f4b5d6a7c8e9f0a1b2c3d.scope\n",
                   Pod(kUid)},
        CgroupCase{"k8s_systemd_guaranteed_crio",
                   "0::/kubepods.slice/kubepods-pod0f3e7a52_1c9b_4d2e_9a7f_5b6c8d9e0a1b.slice/"
                   "crio-8a1c2e3f.scope\n",
                   Pod(kUid)},
        CgroupCase{"k8s_kind_nested",
                   "0::/kubelet.slice/kubelet-kubepods.slice/kubelet-kubepods-besteffort.slice/"
                   "kubelet-kubepods-besteffort-pod0f3e7a52_1c9b_4d2e_9a7f_5b6c8d9e0a1b.slice/"
                   "cri-containerd-1.scope\n",
                   Pod(kUid)},
        // Read from the agent's own cgroup namespace (a container under cgroup v2): the shared
        // ancestors, kubepods among them, are "..".
        CgroupCase{"k8s_cgroupfs_from_a_cgroup_namespace",
                   "0::/../../../besteffort/pod0f3e7a52-1c9b-4d2e-9a7f-5b6c8d9e0a1b/8a1c2e3f\n",
                   Pod(kUid)},
        CgroupCase{"k8s_cgroupfs_same_qos_from_a_cgroup_namespace",
                   "0::/../../pod0f3e7a52-1c9b-4d2e-9a7f-5b6c8d9e0a1b/8a1c2e3f\n", Pod(kUid)},
        CgroupCase{"k8s_systemd_from_a_cgroup_namespace",
                   "0::/../../kubepods-burstable-pod0f3e7a52_1c9b_4d2e_9a7f_5b6c8d9e0a1b.slice/"
                   "cri-containerd-8a1c.scope\n",
                   Pod(kUid)},
        CgroupCase{"dotdot_then_a_user_unit",
                   "0::/../../user.slice/pod0f3e7a52-1c9b-4d2e-9a7f-5b6c8d9e0a1b/x\n",
                   std::nullopt},
        CgroupCase{"dotdot_inside_a_path",
                   "0::/system.slice/../pod0f3e7a52-1c9b-4d2e-9a7f-5b6c8d9e0a1b/x\n", std::nullopt},
        // A static pod's UID: 32 hex digits (kubelet config/common.go).
        CgroupCase{"k8s_static_pod",
                   "0::/kubepods/burstable/podd41d8cd98f00b204e9800998ecf8427e/c\n",
                   Pod("d41d8cd98f00b204e9800998ecf8427e")},
        // No job.
        CgroupCase{"systemd_user_slice",
                   "0::/user.slice/user-1000.slice/user@1000.service/app.slice/"
                   "app-gnome-firefox-4242.scope\n",
                   std::nullopt},
        CgroupCase{"system_service", "0::/system.slice/sshd.service\n", std::nullopt},
        CgroupCase{"root_in_namespace", "0::/\n", std::nullopt},
        CgroupCase{"pod_outside_kubepods",
                   "0::/user.slice/pod0f3e7a52-1c9b-4d2e-9a7f-5b6c8d9e0a1b/x\n", std::nullopt},
        CgroupCase{"bad_uid_shape", "0::/kubepods/burstable/pod0f3e7a52-1c9b-4d2e-9a7f/x\n",
                   std::nullopt},
        CgroupCase{"uppercase_uid", "0::/kubepods/podABCDEF00-1c9b-4d2e-9a7f-5b6c8d9e0a1b/x\n",
                   std::nullopt},
        CgroupCase{"job_without_digits", "0::/system.slice/job_abc/step_0\n", std::nullopt},
        CgroupCase{"job_prefix_only", "0::/system.slice/myjob_12/x\n", std::nullopt},
        CgroupCase{"garbage", "\x01\x02 not a cgroup line\n::\n12\nfoo:bar\n", std::nullopt},
        CgroupCase{"relative_path", "0::job_12/step_0\n", std::nullopt},
        CgroupCase{"empty", "", std::nullopt}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(SchedulerNameTest, names_the_label_values) {
  EXPECT_EQ(SchedulerName(Scheduler::kSlurm), "slurm");
  EXPECT_EQ(SchedulerName(Scheduler::kKubernetes), "kubernetes");
}

// ---- UverbsIndexOf -------------------------------------------------------------------------

TEST(UverbsIndexOfTest, accepts_only_a_uverbs_node) {
  EXPECT_EQ(UverbsIndexOf("/dev/infiniband/uverbs0"), 0u);
  EXPECT_EQ(UverbsIndexOf("/dev/infiniband/uverbs3"), 3u);
  EXPECT_EQ(UverbsIndexOf("/dev/infiniband/uverbs127"), 127u);
  for (const char* other :
       {"/dev/infiniband/uverbs3 (deleted)", "/dev/infiniband/uverbs", "/dev/infiniband/uverbs-1",
        "/dev/infiniband/uverbs03", "/dev/infiniband/uverbs3x", "/dev/infiniband/umad0",
        "/dev/infiniband/rdma_cm", "/dev/infiniband/uverbs99999999999", "socket:[12345]",
        "pipe:[99]", "anon_inode:[infinibandevent]", "/dev/null", "dev/infiniband/uverbs1",
        "/host/dev/infiniband/uverbs1", ""}) {
    EXPECT_EQ(UverbsIndexOf(other), std::nullopt) << other;
  }
}

// ---- ParseScontrolListpids -----------------------------------------------------------------

TEST(ScontrolListpidsTest, maps_pids_to_jobs) {
  size_t bad = 99;
  auto pids = ParseScontrolListpids(
      "PID      JOBID    STEPID   LOCALID GLOBALID\n"
      "31221    1234     batch    0       0\n"
      "31244    1234     0        0       0\n"
      "31245    1234     0        1       1\n"
      "40001    1240     extern   -       -\n"
      "garbage line\n"
      "\n",
      &bad);
  ASSERT_TRUE(pids) << pids.error().ToString();
  EXPECT_EQ(*pids, (PidJobMap{{31221, "1234"}, {31244, "1234"}, {31245, "1234"}, {40001, "1240"}}));
  EXPECT_EQ(bad, 1u);
}

TEST(ScontrolListpidsTest, blank_is_empty_and_no_header_is_an_error) {
  auto blank = ParseScontrolListpids("\n  \n");
  ASSERT_TRUE(blank);
  EXPECT_TRUE(blank->empty());
  auto header_only = ParseScontrolListpids("PID      JOBID    STEPID   LOCALID GLOBALID\n");
  ASSERT_TRUE(header_only);
  EXPECT_TRUE(header_only->empty());
  auto error = ParseScontrolListpids("slurm_load_node: Unable to contact slurm controller\n");
  ASSERT_FALSE(error);
  EXPECT_EQ(error.error().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(error.error().message().find("Unable to contact"), std::string::npos);
}

// ---- ScanDeviceJobs over a replay tree -----------------------------------------------------

// A --path.procfs replay tree and a sysfs root with class/infiniband_verbs.
class ReplayTree {
 public:
  ReplayTree() : sysfs_(dir_.Path("sys"), real_) { fs::create_directories(dir_.Path("proc")); }

  std::string proc() const { return dir_.Path("proc"); }
  std::string Proc(const std::string& rel) const { return dir_.Path("proc/" + rel); }
  const sys::SysFs& sysfs() const { return sysfs_; }
  const sys::RealFileSystem& real() const { return real_; }

  void Device(int n, const std::string& ibdev) {
    Write(dir_.Path("sys/class/infiniband_verbs/uverbs" + std::to_string(n) + "/ibdev"),
          ibdev + "\n");
  }
  void Process(int pid, const std::string& cgroup, const std::vector<std::string>& fd_targets) {
    const std::string base = Proc(std::to_string(pid));
    fs::create_directories(base + "/fd");
    Write(base + "/cgroup", cgroup);
    for (size_t i = 0; i < fd_targets.size(); ++i) {
      // Dangling on purpose: only readlink reads it, as on a replay of another host.
      fs::create_symlink(fd_targets[i], base + "/fd/" + std::to_string(i));
    }
  }
  static void Write(const std::string& path, const std::string& content) {
    fs::create_directories(fs::path(path).parent_path());
    std::ofstream(path, std::ios::binary) << content;
  }

 private:
  TempDir dir_{"fw-procjobs"};
  sys::RealFileSystem real_;
  sys::SysFs sysfs_;
};

const std::string kSlurmV2 = "0::/system.slice/slurmstepd.scope/job_1234/step_0/user/task_0\n";
const std::string kSlurmV1 =
    "11:memory:/slurm/uid_1000/job_1240/step_0/task_0\n4:cpuset:/slurm/uid_1000/job_1240/step_0\n";
const std::string kPodCgroup =
    "0::/kubepods.slice/kubepods-burstable.slice/"
    "kubepods-burstable-pod0f3e7a52_1c9b_4d2e_9a7f_5b6c8d9e0a1b.slice/cri-containerd-ab.scope\n";
const std::string kUserSlice = "0::/user.slice/user-1000.slice/session-4.scope\n";

class ScanTest : public ::testing::Test {
 protected:
  void SetUp() override {
    tree_.Device(0, "mlx5_0");
    tree_.Device(1, "mlx5_1");
    tree_.Process(100, kSlurmV2, {"/dev/pts/0", "pipe:[1]", "/dev/infiniband/uverbs0"});
    tree_.Process(101, kSlurmV1,
                  {"/dev/infiniband/uverbs1", "/dev/infiniband/uverbs0", "socket:[7]",
                   "/dev/infiniband/uverbs1"});
    tree_.Process(102, kPodCgroup, {"anon_inode:[infinibandevent]", "/dev/infiniband/uverbs1"});
    tree_.Process(103, kUserSlice, {"/dev/infiniband/uverbs0"});              // no job
    tree_.Process(104, kSlurmV2, {"socket:[8]", "/dev/infiniband/rdma_cm"});  // no uverbs fd
    tree_.Process(105, kSlurmV2, {"/dev/infiniband/uverbs0"});                // vanishes
    tree_.Process(106, kSlurmV2, {"/dev/infiniband/uverbs0"});                // EACCES
    tree_.Process(107, kSlurmV2, {"/dev/infiniband/uverbs1"});                // exits late
    tree_.Process(108, kSlurmV2, {"/dev/infiniband/uverbs0 (deleted)"});      // node gone
    ReplayTree::Write(tree_.Proc("meminfo"), "MemTotal: 1 kB\n");
    fs::create_symlink("108", tree_.Proc("self"));
    fake_.Inject(FakeFileSystem::Op::kListDir, tree_.Proc("105/fd"), ENOENT);
    fake_.Inject(FakeFileSystem::Op::kListDir, tree_.Proc("106/fd"), EACCES);
    fake_.Inject(FakeFileSystem::Op::kOpen, tree_.Proc("107/cgroup"), ESRCH);
  }

  ReplayTree tree_;
  FakeFileSystem fake_;
};

TEST_F(ScanTest, attributes_devices_to_jobs_and_skips_what_cannot_be_read) {
  auto result = ScanDeviceJobs(fake_, tree_.proc(), tree_.sysfs());
  ASSERT_TRUE(result) << result.error().ToString();
  const Job pod = Pod(kUid);
  EXPECT_EQ(result->jobs,
            (std::map<std::string, std::set<Job>>{{"mlx5_0", {Slurm("1234"), Slurm("1240")}},
                                                  {"mlx5_1", {Slurm("1240"), pod}}}));
  EXPECT_EQ(result->processes, (std::map<std::string, uint64_t>{{"mlx5_0", 3}, {"mlx5_1", 2}}));
  const ScanStats& s = result->stats;
  EXPECT_EQ(s.processes_seen, 9u);
  EXPECT_EQ(s.processes_read, 6u);
  EXPECT_EQ(s.vanished, 2u);  // 105 (fd/ gone), 107 (cgroup gone)
  EXPECT_EQ(s.unreadable, 1u);
  EXPECT_EQ(s.skipped(), 3u);
  EXPECT_EQ(s.fds_read, 3u + 4u + 2u + 1u + 2u + 1u + 1u);
  EXPECT_EQ(s.uverbs_processes, 4u);
  EXPECT_EQ(s.unattributed, 1u);
  EXPECT_EQ(s.unknown_devices, 0u);
  EXPECT_FALSE(s.truncated);
}

TEST_F(ScanTest, scontrol_listpids_attributes_processes_without_a_job_cgroup) {
  const PidJobMap listpids{{103, "2001"}, {100, "9999"}};  // a cgroup job wins over listpids
  auto result = ScanDeviceJobs(fake_, tree_.proc(), tree_.sysfs(), {}, &listpids);
  ASSERT_TRUE(result);
  EXPECT_EQ(result->jobs["mlx5_0"], (std::set<Job>{Slurm("1234"), Slurm("1240"), Slurm("2001")}));
  EXPECT_EQ(result->stats.unattributed, 0u);
}

// The agent on the host's /proc leaves itself out: its verbs event listener holds the devices.
TEST_F(ScanTest, the_excluded_process_is_neither_a_holder_nor_unattributed) {
  ScanLimits limits;
  limits.exclude_pid = 103;  // holds mlx5_0 in no job cgroup
  auto result = ScanDeviceJobs(fake_, tree_.proc(), tree_.sysfs(), limits);
  ASSERT_TRUE(result) << result.error().ToString();
  EXPECT_EQ(result->processes, (std::map<std::string, uint64_t>{{"mlx5_0", 2}, {"mlx5_1", 2}}));
  EXPECT_EQ(result->stats.processes_seen, 8u);
  EXPECT_EQ(result->stats.uverbs_processes, 3u);
  EXPECT_EQ(result->stats.unattributed, 0u);
}

TEST_F(ScanTest, a_uverbs_node_without_a_class_entry_is_counted) {
  tree_.Process(120, kSlurmV2, {"/dev/infiniband/uverbs7"});
  auto result = ScanDeviceJobs(fake_, tree_.proc(), tree_.sysfs());
  ASSERT_TRUE(result);
  EXPECT_EQ(result->stats.unknown_devices, 1u);
  EXPECT_EQ(result->jobs.size(), 2u);
}

TEST_F(ScanTest, an_unreadable_fd_link_skips_the_process_and_a_closed_one_is_ignored) {
  fake_.Inject(FakeFileSystem::Op::kReadLink, tree_.Proc("100/fd/0"), EACCES);
  fake_.Inject(FakeFileSystem::Op::kReadLink, tree_.Proc("102/fd/0"), ENOENT);  // fd closed
  auto result = ScanDeviceJobs(fake_, tree_.proc(), tree_.sysfs());
  ASSERT_TRUE(result);
  EXPECT_EQ(result->stats.unreadable, 2u);
  EXPECT_EQ(result->jobs["mlx5_0"], (std::set<Job>{Slurm("1240")}));
  EXPECT_TRUE(result->jobs["mlx5_1"].contains(Pod(kUid)));
}

TEST_F(ScanTest, max_processes_stops_the_scan) {
  ScanLimits limits;
  limits.max_processes = 3;
  auto result = ScanDeviceJobs(fake_, tree_.proc(), tree_.sysfs(), limits);
  ASSERT_TRUE(result);
  EXPECT_TRUE(result->stats.truncated);
  EXPECT_EQ(result->stats.processes_read + result->stats.skipped(), 3u);
  // Pids in order: 100, 101, 102 were read; what they hold is still returned.
  EXPECT_EQ(result->jobs["mlx5_1"], (std::set<Job>{Slurm("1240"), Pod(kUid)}));
}

TEST_F(ScanTest, max_fds_per_process_stops_reading_that_process) {
  ScanLimits limits;
  limits.max_fds_per_process = 1;
  auto result = ScanDeviceJobs(fake_, tree_.proc(), tree_.sysfs(), limits);
  ASSERT_TRUE(result);
  EXPECT_TRUE(result->stats.truncated);
  EXPECT_EQ(result->stats.processes_read, 6u);  // every process still visited
  EXPECT_EQ(result->stats.fds_read, 7u);        // one per process whose fd/ was listed
}

TEST_F(ScanTest, the_time_budget_stops_the_scan) {
  // Each reading of the clock advances it 10 ms: start, then one check per process.
  auto now = std::chrono::steady_clock::time_point{};
  ScanLimits limits;
  limits.time_budget = std::chrono::milliseconds(25);
  limits.clock = [&now] { return now += std::chrono::milliseconds(10); };
  auto result = ScanDeviceJobs(fake_, tree_.proc(), tree_.sysfs(), limits);
  ASSERT_TRUE(result);
  EXPECT_TRUE(result->stats.truncated);
  EXPECT_EQ(result->stats.processes_read, 2u);  // checks at +10 and +20 ms pass, +30 stops
  EXPECT_EQ(result->stats.elapsed, std::chrono::milliseconds(40));
  EXPECT_EQ(result->jobs["mlx5_0"], (std::set<Job>{Slurm("1234"), Slurm("1240")}));
}

TEST(ScanRootTest, a_missing_root_is_an_error_and_an_empty_one_finds_nothing) {
  sys::RealFileSystem real;
  sys::SysFs sysfs("/nonexistent-sys", real);
  auto missing = ScanDeviceJobs(real, "/nonexistent-fabricwatch-proc", sysfs);
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code(), StatusCode::kNotFound);
  EXPECT_NE(missing.error().message().find("/nonexistent-fabricwatch-proc"), std::string::npos);
  TempDir empty("fw-procjobs-empty");
  auto none = ScanDeviceJobs(real, empty.str(), sysfs);
  ASSERT_TRUE(none);
  EXPECT_TRUE(none->jobs.empty());
  EXPECT_EQ(none->stats.processes_seen, 0u);
}

// ---- Measurements (printed, never asserted on time) ----------------------------------------

void Report(const char* what, const ScanStats& s) {
  const double ms = std::chrono::duration<double, std::milli>(s.elapsed).count();
  const double us_per_process = s.processes_read
                                    ? std::chrono::duration<double, std::micro>(s.elapsed).count() /
                                          static_cast<double>(s.processes_read)
                                    : 0.0;
  std::printf(
      "[ scan     ] %s: %.2f ms, %llu processes seen, %llu read, %llu skipped, %llu fds, "
      "%.2f us/process, truncated=%d\n",
      what, ms, static_cast<unsigned long long>(s.processes_seen),
      static_cast<unsigned long long>(s.processes_read),
      static_cast<unsigned long long>(s.skipped()), static_cast<unsigned long long>(s.fds_read),
      us_per_process, s.truncated ? 1 : 0);
  ::testing::Test::RecordProperty(std::string(what) + "_elapsed_us",
                                  std::to_string(s.elapsed.count() / 1000));
  ::testing::Test::RecordProperty(
      std::string(what) + "_ns_per_process",
      std::to_string(s.processes_read ? s.elapsed.count() / s.processes_read : 0));
}

TEST(ScanMeasurement, ten_thousand_processes) {
  constexpr int kProcesses = 10000;
  constexpr int kFds = 10;
  ReplayTree tree;
  tree.Device(0, "mlx5_0");
  tree.Device(1, "mlx5_1");
  std::map<std::string, std::set<Job>> want;
  for (int i = 0; i < kProcesses; ++i) {
    const int pid = 1000 + i;
    std::vector<std::string> fds = {"/dev/null", "/dev/pts/1", "/dev/pts/1"};
    while (fds.size() < kFds - 1) fds.push_back("socket:[" + std::to_string(pid) + "]");
    std::string cgroup = kUserSlice;
    if (i % 100 == 0) {  // 1 %: a rank of one of 5 jobs on one of 2 devices
      const std::string job = std::to_string(5000 + (i / 100) % 5);
      const int device = (i / 100) % 2;
      fds.push_back("/dev/infiniband/uverbs" + std::to_string(device));
      cgroup = "0::/system.slice/slurmstepd.scope/job_" + job + "/step_0/user/task_0\n";
      want[device == 0 ? "mlx5_0" : "mlx5_1"].insert(Slurm(job.c_str()));
    } else {
      fds.push_back("pipe:[" + std::to_string(pid) + "]");
    }
    tree.Process(pid, cgroup, fds);
  }
  ScanLimits unbounded;
  unbounded.time_budget = std::chrono::seconds(120);
  // Twice: the first walk warms the dentry cache, as the 30 s cadence keeps it warm.
  for (const char* what : {"replay_10000_cold", "replay_10000_warm"}) {
    auto result = ScanDeviceJobs(tree.real(), tree.proc(), tree.sysfs(), unbounded);
    ASSERT_TRUE(result) << result.error().ToString();
    EXPECT_FALSE(result->stats.truncated);
    EXPECT_EQ(result->stats.processes_read, static_cast<uint64_t>(kProcesses));
    EXPECT_EQ(result->stats.fds_read, static_cast<uint64_t>(kProcesses * kFds));
    EXPECT_EQ(result->stats.uverbs_processes, static_cast<uint64_t>(kProcesses / 100));
    EXPECT_EQ(result->jobs, want);
    Report(what, result->stats);
  }
  // With the default limits (200 ms): says whether the default budget covers 10,000 processes.
  auto bounded = ScanDeviceJobs(tree.real(), tree.proc(), tree.sysfs());
  ASSERT_TRUE(bounded);
  Report("replay_10000_default_limits", bounded->stats);
}

TEST(ScanMeasurement, this_machines_proc) {
  sys::RealFileSystem real;
  sys::SysFs sysfs("/sys", real);
  ScanLimits unbounded;
  unbounded.time_budget = std::chrono::seconds(60);
  for (const char* what : {"proc_first", "proc_second"}) {
    auto result = ScanDeviceJobs(real, "/proc", sysfs, unbounded);
    ASSERT_TRUE(result) << result.error().ToString();
    EXPECT_GT(result->stats.processes_read, 0u);
    Report(what, result->stats);
  }
}

}  // namespace
}  // namespace fabricwatch::jobs
