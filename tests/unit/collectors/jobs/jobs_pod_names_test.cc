// Collector `jobs`, the kubelet part (issue 24): PodNames asks the kubelet only for pods it cannot
// name yet, at most once a minute, forgets pods no longer seen, counts each request by outcome and
// logs a failure once; the collector's kubelet options are validated, and with a kubelet that
// cannot be reached a replay pod stays a UID with empty pod labels and a counted failure.

#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>

#include <chrono>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "collectors/jobs/jobs.h"
#include "collectors/jobs/pod_names.h"
#include "collectors/sys/filesystem.h"
#include "collectors/sys/sysfs.h"
#include "tests/testing/collector_context.h"
#include "tests/testing/log_lines.h"
#include "tests/testing/temp_dir.h"
#include "tests/testing/test_paths.h"

namespace fabricwatch::jobs {
namespace {

using namespace std::chrono_literals;
using jobs::KubeletOutcome;
using jobs::KubeletReply;
using Uids = std::set<std::string, std::less<>>;

constexpr char kPodA[] = "1b4e28ba-2fa1-11d2-883f-0016d3cca427";
constexpr char kPodB[] = "2c5f39cb-3fb2-42e3-994f-1127e4ddb538";

std::string PodList(const std::vector<std::pair<std::string, std::string>>& pods) {
  std::string items;
  for (const auto& [uid, name] : pods) {
    if (!items.empty()) items += ",";
    items += R"({"metadata":{"uid":")" + uid + R"(","name":")" + name + R"(","namespace":"ml"}})";
  }
  return R"({"kind":"PodList","apiVersion":"v1","metadata":{},"items":[)" + items + "]}";
}

KubeletReply Ok(std::string body) { return {KubeletOutcome::kSuccess, Status::Ok(), body}; }
KubeletReply Refused() {
  return {KubeletOutcome::kConnect,
          Status(StatusCode::kUnavailable, "GET https://127.0.0.1:10250/pods: refused"),
          {}};
}

class PodNamesTest : public ::testing::Test {
 protected:
  PodNamesTest()
      : logger_(std::make_shared<spdlog::logger>(
            "jobs", std::make_shared<spdlog::sinks::ostream_sink_st>(log_))),
        names_([this] { return Next(); }, logger_) {
    logger_->set_level(spdlog::level::info);
  }
  KubeletReply Next() {
    ++asked_;
    return reply_;
  }
  std::chrono::system_clock::time_point At(std::chrono::seconds s) {
    return std::chrono::system_clock::time_point(1795000000s + s);
  }
  std::string Name(const char* uid) {
    const jobs::PodName* pod = names_.Find(uid);
    return pod ? pod->pod_namespace + "/" + pod->name : "";
  }

  std::ostringstream log_;
  std::shared_ptr<spdlog::logger> logger_;
  PodNames names_;
  KubeletReply reply_;
  int asked_ = 0;
};

TEST_F(PodNamesTest, asks_only_for_pods_it_cannot_name) {
  reply_ = Ok(PodList({{kPodA, "trainer-0"}, {kPodB, "trainer-1"}}));
  names_.Update({kPodA}, At(0s));
  EXPECT_EQ(asked_, 1);
  EXPECT_EQ(Name(kPodA), "ml/trainer-0");
  EXPECT_EQ(Name(kPodB), "");  // not seen by the scan: not kept
  for (int i = 1; i <= 10; ++i) names_.Update({kPodA}, At(std::chrono::seconds(30 * i)));
  EXPECT_EQ(asked_, 1);
  EXPECT_EQ(names_.Requests(KubeletOutcome::kSuccess), 1u);
  names_.Update({}, At(0s));
  EXPECT_EQ(asked_, 1);
}

TEST_F(PodNamesTest, a_new_pod_waits_for_the_minute_since_the_last_request) {
  reply_ = Ok(PodList({{kPodA, "trainer-0"}, {kPodB, "trainer-1"}}));
  names_.Update({kPodA}, At(0s));
  names_.Update({kPodA, kPodB}, At(30s));
  EXPECT_EQ(asked_, 1);
  EXPECT_EQ(Name(kPodB), "");
  names_.Update({kPodA, kPodB}, At(60s));
  EXPECT_EQ(asked_, 2);
  EXPECT_EQ(Name(kPodB), "ml/trainer-1");
}

TEST_F(PodNamesTest, forgets_pods_no_longer_seen) {
  reply_ = Ok(PodList({{kPodA, "trainer-0"}}));
  names_.Update({kPodA}, At(0s));
  names_.Update({}, At(30s));
  EXPECT_EQ(names_.Find(kPodA), nullptr);
  // Seen again (a UID is never reused, but the scan may have missed it once): asked again.
  names_.Update({kPodA}, At(90s));
  EXPECT_EQ(asked_, 2);
  EXPECT_EQ(Name(kPodA), "ml/trainer-0");
}

TEST_F(PodNamesTest, a_failing_kubelet_is_counted_each_time_and_logged_once) {
  reply_ = Refused();
  for (int i = 0; i < 5; ++i) names_.Update({kPodA}, At(std::chrono::seconds(60 * i)));
  EXPECT_EQ(asked_, 5);
  EXPECT_EQ(names_.Requests(KubeletOutcome::kConnect), 5u);
  EXPECT_EQ(Name(kPodA), "");
  EXPECT_EQ(testing::CountLogLines(log_.str(), {"exported by UID", "refused"}), 1) << log_.str();
  // Another failure is logged once too; an answer ends the failure, and says so.
  reply_ = {KubeletOutcome::kForbidden, Status(StatusCode::kPermissionDenied, "HTTP 403"), {}};
  names_.Update({kPodA}, At(300s));
  names_.Update({kPodA}, At(360s));
  EXPECT_EQ(testing::CountLogLines(log_.str(), {"HTTP 403"}), 1) << log_.str();
  reply_ = Ok(PodList({{kPodA, "trainer-0"}}));
  names_.Update({kPodA}, At(420s));
  EXPECT_EQ(Name(kPodA), "ml/trainer-0");
  EXPECT_EQ(testing::CountLogLines(log_.str(), {"answers again"}), 1) << log_.str();
  reply_ = Refused();
  names_.Update({kPodA, kPodB}, At(480s));
  EXPECT_EQ(testing::CountLogLines(log_.str(), {"exported by UID", "refused"}), 2) << log_.str();
  EXPECT_EQ(Name(kPodA), "ml/trainer-0");  // a failure forgets no name
}

TEST_F(PodNamesTest, a_body_that_is_no_pod_list_is_malformed) {
  reply_ = Ok("<html>hello</html>");
  names_.Update({kPodA}, At(0s));
  EXPECT_EQ(names_.Requests(KubeletOutcome::kMalformed), 1u);
  EXPECT_EQ(names_.Requests(KubeletOutcome::kSuccess), 0u);
  reply_ = Ok(R"({"kind":"PodList","items":[{"metadata":{"uid":"x"}},{"metadata":{"uid":")" +
              std::string(kPodA) + R"(","name":"trainer-0","namespace":"ml"}}]})");
  names_.Update({kPodA}, At(60s));
  EXPECT_EQ(Name(kPodA), "ml/trainer-0");
  EXPECT_EQ(names_.SkippedItems(), 1u);
}

// ---- the collector ---------------------------------------------------------------------------

class Harness {
 public:
  explicit Harness(CollectorOptions options)
      : inputs_(testing::FixturePath("sysfs/jobs-node/sys"), std::move(options)) {
    inputs_.UseLogger(std::make_shared<spdlog::logger>(
        "jobs", std::make_shared<spdlog::sinks::ostream_sink_st>(log_)));
  }

  Result<std::unique_ptr<Collector>> New() {
    CollectorContext context = inputs_.Context();
    context.roots.SetReplay(kProcfs, testing::FixturePath("procfs/slurm-jobs"));
    return NewJobsCollector(context);
  }
  // "name{labels}" -> value of every sample of one collection.
  std::map<std::string, double> Collect(Collector& collector) {
    MetricSink sink;
    EXPECT_TRUE(collector.Collect(sink).ok());
    std::map<std::string, double> out;
    for (const auto& family : sink.TakeFamilies()) {
      for (const auto& metric : family.metric) {
        std::string key = family.name + "{";
        for (const auto& l : metric.label) key += l.name + "=" + l.value + ",";
        out[key + "}"] = metric.counter.value + metric.gauge.value + metric.untyped.value;
      }
    }
    return out;
  }
  std::string log() const { return log_.str(); }

 private:
  std::ostringstream log_;  // before inputs_, whose logger writes to it
  testing::CollectorTestContext inputs_;
};

TEST(JobsKubeletOptions, bad_values_are_errors_naming_the_flag) {
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"kubelet", "http://127.0.0.1:10255"},
      {"kubelet", "on"},
      {"kubelet", "https://h:1/?q"},
      {"kubelet-timeout", "0s"},
      {"kubelet-timeout", "5m"},
      {"kubelet-timeout", "soon"},
      {"kubelet-insecure-skip-verify", "yes"},
      {"kubelet-token-file", ""}};
  for (const auto& [key, value] : bad) {
    Harness h(CollectorOptions{{key, value}});
    auto collector = h.New();
    ASSERT_FALSE(collector) << key << "=" << value;
    EXPECT_NE(collector.error().message().find("--collector.jobs." + key), std::string::npos)
        << collector.error().message();
  }
  Harness good({{"kubelet", "https://gpu-a17:10250/"},
                {"kubelet-insecure-skip-verify", "true"},
                {"kubelet-timeout", "500ms"}});
  EXPECT_TRUE(good.New());
}

TEST(JobsKubelet, auto_on_a_replay_procfs_asks_nobody_and_keeps_the_uid) {
  Harness h({});
  auto collector = h.New();
  ASSERT_TRUE(collector) << collector.error().ToString();
  auto samples = h.Collect(**collector);
  EXPECT_EQ(samples.count("fabric_device_job_info{device=mlx5_0,scheduler=kubernetes,job_id=" +
                          std::string(kPodA) + ",pod_namespace=,pod_name=,}"),
            1u);
  for (const auto& [key, value] : samples) {
    EXPECT_EQ(key.find("kubelet"), std::string::npos) << key;
  }
  EXPECT_EQ(testing::CountLogLines(h.log(), {"exported by UID", "=auto"}), 1) << h.log();
}

TEST(JobsKubelet, an_unreachable_kubelet_leaves_the_uid_and_counts_the_failure) {
  testing::TempDir dir;
  std::ofstream(dir.Path("token")) << "eyJhbGciOiJSUzI1NiJ9.e30.sig\n";
  // Port 1 on loopback: nothing listens there (and it is privileged, so no test server does).
  Harness h({{"kubelet", "https://127.0.0.1:1"},
             {"kubelet-token-file", dir.Path("token")},
             {"kubelet-timeout", "500ms"}});
  auto collector = h.New();
  ASSERT_TRUE(collector) << collector.error().ToString();
  auto samples = h.Collect(**collector);
  EXPECT_EQ(samples.count("fabric_device_job_info{device=mlx5_0,scheduler=kubernetes,job_id=" +
                          std::string(kPodA) + ",pod_namespace=,pod_name=,}"),
            1u);
  EXPECT_EQ(samples.at("fabric_jobs_kubelet_requests_total{outcome=connect,}"), 1);
  EXPECT_EQ(samples.at("fabric_jobs_kubelet_requests_total{outcome=success,}"), 0);
  EXPECT_EQ(samples.at("fabric_jobs_kubelet_pods_skipped{}"), 0);
  // Slurm rows carry empty pod labels.
  EXPECT_EQ(samples.count("fabric_device_job_info{device=mlx5_0,scheduler=slurm,job_id=1234,"
                          "pod_namespace=,pod_name=,}"),
            1u);
  // The fixed clock stands still: no second request within the minute.
  samples = h.Collect(**collector);
  EXPECT_EQ(samples.at("fabric_jobs_kubelet_requests_total{outcome=connect,}"), 1);
  EXPECT_EQ(testing::CountLogLines(h.log(), {"exported by UID"}), 1) << h.log();
}

}  // namespace
}  // namespace fabricwatch::jobs
