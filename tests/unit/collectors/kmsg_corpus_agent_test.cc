// The real-capture corpus run through the agent's own path (issue 38 item 4, "runs every capture
// through the agent and checks the expected events, entities and findings"): each
// tests/fixtures/real/kmsg/<name>.kmsg is read by the `kmsg` collector as a replay file, over a
// sysfs tree holding the functions its <name>.expect names, and the log events it hands on are
// judged by `driver_fault`, as in the agent. kmsg_conformance_test checks each record's pattern and
// subject; this one checks what comes out at the end:
//   - every fault line is one event on the entity its subject maps to (a PCI function's RDMA
//     device and netdev, a netdev, an RDMA device, or the node for a line that names none), at
//     least 95 % of them (issue 38's target; the misses are printed), and no record is skipped
//     or lost;
//   - every finding is about an entity that had a fault line (0 false findings), and every
//     entity with a fatal-class line has a critical finding.
// The tree gives each named function one RDMA device and one netdev, bound to no driver, so a line
// that names no function is the node's (kmsg_entity.h ByDriver with no single candidate).

#include <gtest/gtest.h>
#include <spdlog/sinks/null_sink.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "collectors/kmsg/kmsg.h"
#include "collectors/kmsg/kmsg_subject.h"
#include "collectors/sys/filesystem.h"
#include "collectors/sys/kmsg_parse.h"
#include "collectors/sys/kmsg_patterns.h"
#include "collectors/sys/sysfs.h"
#include "detectors/driver_fault/driver_fault.h"
#include "tests/testing/temp_dir.h"
#include "tests/testing/test_paths.h"

namespace fabricwatch::kmsg {
namespace {

namespace fs = std::filesystem;

const std::set<std::string> kContextEvents = {"health_dump", "pcie_aer_detail"};

class FixedClock final : public Clock {
 public:
  std::chrono::system_clock::time_point Now() const override { return now; }
  std::chrono::system_clock::time_point now{std::chrono::seconds(1795000000)};
};

using Entity = std::pair<std::string, std::string>;  // RDMA device, netdev

// The sysfs tree of one capture: each PCI function, netdev and RDMA device its .expect names.
class CaptureTree {
 public:
  explicit CaptureTree(const std::string& name) : dir_("kmsg-corpus-" + name) {}

  std::string sys() const { return dir_.Path("sys"); }

  // The entity a subject of the .expect maps to, creating what the tree needs for it; a PCI
  // function's netdev is the one its line names (`<driver> <bdf> <netdev>: `), if any.
  Entity Add(const std::string& subject, const std::string& named_netdev) {
    if (auto it = entities_.find(subject); it != entities_.end()) return it->second;
    Entity entity;
    const std::string value = subject.substr(subject.find_first_of("=:") + 1);
    if (subject.starts_with("pci=")) {
      const std::string n = std::to_string(entities_.size());
      entity = {"rdma" + n, named_netdev.empty() ? "net" + n : named_netdev};
      const std::string dev = "devices/pci0000:00/" + value;
      Write(dev + "/vendor", "0x15b3\n");
      Link("bus/pci/devices/" + value, "../../../" + dev);
      Write(dev + "/infiniband/" + entity.first + "/node_type", "1: CA\n");
      Link(dev + "/infiniband/" + entity.first + "/device", "../../../" + value);
      Link("class/infiniband/" + entity.first, "../../" + dev + "/infiniband/" + entity.first);
      Write(dev + "/net/" + entity.second + "/ifindex", std::to_string(100 + entities_.size()));
      Link(dev + "/net/" + entity.second + "/device", "../../../" + value);
      Link("class/net/" + entity.second, "../../" + dev + "/net/" + entity.second);
    } else if (subject.starts_with("netdev=")) {
      entity = {"", value};  // a netdev without a PCI parent is named alone
      Write("class/net/" + value + "/ifindex", std::to_string(100 + entities_.size()));
    } else if (subject.starts_with("ibdev=")) {
      entity = {value, ""};
      Write("class/infiniband/" + value + "/node_type", "1: CA\n");
    }  // node:<driver>: the node, {"", ""}
    entities_[subject] = entity;
    return entity;
  }

 private:
  void Write(const std::string& rel, const std::string& text) { dir_.Write("sys/" + rel, text); }
  void Link(const std::string& rel, const std::string& target) { dir_.Link("sys/" + rel, target); }
  testing::TempDir dir_;
  std::map<std::string, Entity> entities_;
};

struct ExpectedLine {
  std::string event;
  std::string subject;
};

// What a record's text names, as the collector reads it (kmsg_subject.h); empty if no row matches.
RecordSubject NamedBy(const std::string& record_text) {
  auto record = sys::ParseKmsgRecord(record_text);
  if (!record) return {};
  const std::string message = sys::UnescapeKmsg(record->message);
  const sys::KernelEventPattern* row = sys::MatchKernelEvent(message);
  return row == nullptr ? RecordSubject{} : SubjectOf(*record, message, *row);
}

std::vector<std::string> ReadLines(const fs::path& path) {
  std::vector<std::string> lines;
  std::istringstream in(testing::ReadTextFile(path.string()));
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::vector<ExpectedLine> ReadExpect(const fs::path& path) {
  std::vector<ExpectedLine> lines;
  std::istringstream in(testing::ReadTextFile(path.string()));
  for (std::string line; std::getline(in, line);) {
    const size_t tab = line.find('\t');
    lines.push_back({line.substr(0, tab), tab == std::string::npos ? "" : line.substr(tab + 1)});
  }
  return lines;
}

double SkippedOrLost(const std::vector<prometheus::MetricFamily>& families) {
  double total = 0;
  for (const auto& family : families) {
    if (family.name != "fabric_kernel_log_skipped_records_total" &&
        family.name != "fabric_kernel_log_lost_records_total") {
      continue;
    }
    for (const auto& metric : family.metric) total += metric.counter.value;
  }
  return total;
}

struct CorpusTotals {
  int captures = 0;
  int fault_lines = 0;
  int events_right = 0;
  int findings = 0;
  int critical = 0;
};

void RunCapture(const fs::path& kmsg, CorpusTotals& totals) {
  const std::string name = kmsg.stem().string();
  SCOPED_TRACE(name);
  fs::path expect_path = kmsg;
  const std::vector<ExpectedLine> expected = ReadExpect(expect_path.replace_extension(".expect"));
  const std::vector<std::string> records = ReadLines(kmsg);
  ASSERT_EQ(records.size(), expected.size());
  CaptureTree tree(name);
  // What the capture must raise: (entity, event) -> lines; entities with a fatal-class line.
  std::map<std::pair<Entity, std::string>, uint64_t> want;
  std::set<Entity> faulty;
  std::set<Entity> fatal;
  // A line that names a PCI function is about that function (the .expect may name its netdev,
  // which the conformance test checks); the function's netdev is named by any of its lines.
  std::vector<std::string> subjects;
  std::map<std::string, std::string> netdev_of;
  for (size_t i = 0; i < expected.size(); ++i) {
    const RecordSubject named = NamedBy(records[i]);
    subjects.push_back(named.pci.empty() ? expected[i].subject : "pci=" + named.pci);
    if (!named.pci.empty() && !named.netdev.empty())
      netdev_of.try_emplace(subjects[i], named.netdev);
  }
  for (size_t i = 0; i < expected.size(); ++i) {
    const ExpectedLine& line = expected[i];
    if (line.event == "-" || kContextEvents.contains(line.event) || line.subject == "-") continue;
    const Entity entity = tree.Add(subjects[i], netdev_of[subjects[i]]);
    ++want[{entity, line.event}];
    ++totals.fault_lines;
    faulty.insert(entity);
    const sys::KernelEventPattern* row = sys::FindKernelEvent(line.event);
    if (row != nullptr && row->event_class == sys::EventClass::kFatal) fatal.insert(entity);
  }

  FixedClock clock;
  sys::RealFileSystem filesystem;
  sys::SysFs sysfs(tree.sys(), filesystem);
  const CollectorOptions options;
  CollectorContext context{.sysfs = sysfs,
                           .clock = clock,
                           .logger = std::make_shared<spdlog::logger>(
                               "kmsg", std::make_shared<spdlog::sinks::null_sink_mt>()),
                           .options = options,
                           .kmsg_path = kmsg.string()};
  auto collector = NewKmsgCollector(context);
  ASSERT_TRUE(collector) << collector.error().ToString();
  MetricSink sink;
  ASSERT_TRUE((*collector)->Collect(sink).ok());
  const std::vector<prometheus::MetricFamily> families = sink.TakeFamilies();
  const std::vector<LogEvent> events = sink.TakeLogEvents();
  EXPECT_EQ(SkippedOrLost(families), 0) << "no record of a real capture is skipped or lost";

  // Events: every expected (entity, event) with its line count; context events may come on top.
  std::map<std::pair<Entity, std::string>, uint64_t> got;
  for (const LogEvent& event : events)
    got[{{event.device, event.netdev}, event.event}] += event.count;
  // A line whose wording the table lacks is a miss here as in kmsg_conformance_test (which holds
  // the corpus to 95 %); it is printed, and its entity is not held to a critical finding.
  std::set<Entity> missed;
  for (const auto& [key, lines] : want) {
    const auto it = got.find(key);
    const uint64_t seen = it == got.end() ? 0 : it->second;
    if (seen == lines) {
      totals.events_right += static_cast<int>(lines);
    } else {
      missed.insert(key.first);
      std::printf("  %s: %s on {%s, %s}: %llu of %llu lines\n", name.c_str(), key.second.c_str(),
                  key.first.first.c_str(), key.first.second.c_str(),
                  static_cast<unsigned long long>(seen), static_cast<unsigned long long>(lines));
    }
  }

  // Findings, as driver_fault raises them from these events.
  auto detector = detect::MakeDriverFaultDetector({});
  ASSERT_TRUE(detector) << detector.error().ToString();
  static const std::vector<prometheus::MetricFamily> kNone;
  (*detector)->Observe(detect::SnapshotView{"kmsg", clock.now, kNone, events});
  std::set<Entity> critical;
  for (const detect::Finding& finding : (*detector)->Evaluate(clock.now)) {
    Entity entity;
    for (const auto& [label, value] : finding.entity) {
      (label == "device" ? entity.first : entity.second) = value;
    }
    EXPECT_TRUE(faulty.contains(entity))
        << "false finding on {" << entity.first << ", " << entity.second << "}: " << finding.reason;
    ++totals.findings;
    if (finding.severity == detect::Severity::kCritical) {
      critical.insert(entity);
      ++totals.critical;
    }
  }
  for (const Entity& entity : fatal) {
    if (missed.contains(entity)) continue;
    EXPECT_TRUE(critical.contains(entity))
        << "no critical finding on {" << entity.first << ", " << entity.second << "}";
  }
  ++totals.captures;
}

TEST(KmsgCorpusAgentTest, EveryCaptureGivesItsEventsEntitiesAndNoFalseFinding) {
  std::vector<fs::path> captures;
  for (const auto& entry : fs::directory_iterator(testing::FixturePath("real/kmsg"))) {
    if (entry.path().extension() == ".kmsg") captures.push_back(entry.path());
  }
  std::sort(captures.begin(), captures.end());
  ASSERT_GE(captures.size(), 15u);
  CorpusTotals totals;
  for (const fs::path& capture : captures) RunCapture(capture, totals);
  std::printf(
      "kmsg corpus through the agent: %d captures, %d/%d fault lines as events on the right "
      "entity, %d findings (%d critical), 0 skipped\n",
      totals.captures, totals.events_right, totals.fault_lines, totals.findings, totals.critical);
  EXPECT_GE(totals.events_right, 0.95 * totals.fault_lines) << "issue 38's target: 95 %";
}

}  // namespace
}  // namespace fabricwatch::kmsg
