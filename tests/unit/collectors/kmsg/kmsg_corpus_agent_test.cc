// The real-capture corpus run through the agent's own path (issue 38 item 4, "runs every capture
// through the agent and checks the expected events, entities and findings"): each
// tests/fixtures/real/kmsg/<name>.kmsg is read by the `kmsg` collector as a replay file, over a
// sysfs tree shaped like the host the capture came from, and the log events it hands on are
// judged by `driver_fault`, as in the agent. kmsg_conformance_test checks each record's pattern and
// subject; this one checks what comes out at the end:
//   - the host: a PCI function a fabric driver's line names is a fabric NIC's (RDMA device and
//     netdev); one whose lines name a netdev is another NIC's (netdev only); the rest are GPUs,
//     sound cards, SATA controllers and bridges (neither), bound to no driver;
//   - every fault line about a fabric function, netdev or RDMA device is one event on that
//     entity, a line of a fabric driver that names nothing is the node's, at least 95 % of them
//     (issue 38's target; the misses are printed); the lines about a device with neither are
//     skipped, and nothing else is skipped or lost;
//   - every finding is about an entity with a warning-or-worse fault line (0 false findings), and
//     every entity with a fatal-class line has a critical finding.

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "collectors/kmsg/kmsg.h"
#include "collectors/kmsg/kmsg_parse.h"
#include "collectors/kmsg/kmsg_patterns.h"
#include "collectors/kmsg/kmsg_subject.h"
#include "collectors/sys/filesystem.h"
#include "collectors/sys/sysfs.h"
#include "detectors/driver_fault/driver_fault.h"
#include "tests/testing/collector_context.h"
#include "tests/testing/temp_dir.h"
#include "tests/testing/test_paths.h"

namespace fabricwatch::kmsg {
namespace {

namespace fs = std::filesystem;

const std::set<std::string> kContextEvents = {"health_dump", "pcie_aer_detail"};

using Entity = std::pair<std::string, std::string>;  // RDMA device, netdev

// What a host holds for a PCI function a capture names: a fabric NIC's function (its line is a
// fabric driver's, or its row is one: an RDMA device and a netdev), another NIC's (a netdev
// only), or a device with neither (a GPU, a sound card, a SATA controller, a bridge).
enum class FunctionKind { kFabric, kNic, kBare };

// The sysfs tree of one capture: each PCI function, netdev and RDMA device its lines name.
class CaptureTree {
 public:
  explicit CaptureTree(const std::string& name) : dir_("kmsg-corpus-" + name) {}

  std::string sys() const { return dir_.Path("sys"); }

  void AddFunction(const std::string& pci, FunctionKind kind, const std::string& netdev) {
    const std::string n = std::to_string(functions_.size());
    Entity entity;
    const std::string dev = "devices/pci0000:00/" + pci;
    Write(dev + "/vendor", kind == FunctionKind::kFabric ? "0x15b3\n" : "0x10de\n");
    Link("bus/pci/devices/" + pci, "../../../" + dev);
    if (kind == FunctionKind::kFabric) {
      entity.first = "rdma" + n;
      Write(dev + "/infiniband/" + entity.first + "/node_type", "1: CA\n");
      Link(dev + "/infiniband/" + entity.first + "/device", "../../../" + pci);
      Link("class/infiniband/" + entity.first, "../../" + dev + "/infiniband/" + entity.first);
    }
    if (kind != FunctionKind::kBare) {
      entity.second = netdev.empty() ? "net" + n : netdev;
      Write(dev + "/net/" + entity.second + "/ifindex", std::to_string(100 + functions_.size()));
      Link(dev + "/net/" + entity.second + "/device", "../../../" + pci);
      Link("class/net/" + entity.second, "../../" + dev + "/net/" + entity.second);
    }
    functions_[pci] = {kind, entity};
  }
  // The function's entity, or nullopt for a bare one (no RDMA device, no netdev).
  std::optional<Entity> FunctionEntity(const std::string& pci) const {
    const auto it = functions_.find(pci);
    if (it == functions_.end() || it->second.first == FunctionKind::kBare) return std::nullopt;
    return it->second.second;
  }
  Entity AddNetdev(const std::string& netdev) {  // a netdev without a PCI parent
    Write("class/net/" + netdev + "/ifindex", "99\n");
    return {"", netdev};
  }
  Entity AddIbdev(const std::string& ibdev) {
    Write("class/infiniband/" + ibdev + "/node_type", "1: CA\n");
    return {ibdev, ""};
  }

 private:
  void Write(const std::string& rel, const std::string& text) { dir_.Write("sys/" + rel, text); }
  void Link(const std::string& rel, const std::string& target) { dir_.Link("sys/" + rel, target); }
  testing::TempDir dir_;
  std::map<std::string, std::pair<FunctionKind, Entity>> functions_;
};

struct ExpectedLine {
  std::string event;
  std::string subject;
};

// One record as the collector reads it: its row (at its priority), what its text names, and
// whether a fabric driver printed it or owns its row.
struct ParsedRecord {
  const kmsg::KernelEventPattern* row = nullptr;
  RecordSubject subject;
  bool fabric = false;
  bool names_driver = false;  // a fabric driver to attribute an unnamed line by
};

ParsedRecord Parse(const std::string& record_text) {
  ParsedRecord parsed;
  auto record = kmsg::ParseKmsgRecord(record_text);
  if (!record) return parsed;
  const std::string message = kmsg::UnescapeKmsg(record->message);
  parsed.row = kmsg::MatchKernelEvent(message, record->priority);
  if (parsed.row == nullptr) return parsed;
  parsed.subject = SubjectOf(*record, message, *parsed.row);
  parsed.names_driver = kmsg::FabricDriverOf(message).has_value() ||
                        kmsg::PciDriverOfPattern(*parsed.row).has_value();
  parsed.fabric = parsed.names_driver;
  return parsed;
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
  int not_fabric = 0;  // fault lines about a GPU, a bridge, a SATA controller: skipped
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
  std::vector<ParsedRecord> parsed;
  for (const std::string& record : records) parsed.push_back(Parse(record));
  // The host: each PCI function the lines name, of the kind its lines say, with its netdev.
  std::map<std::string, std::pair<FunctionKind, std::string>> functions;
  for (const ParsedRecord& record : parsed) {
    if (record.subject.pci.empty()) continue;
    auto& [kind, netdev] =
        functions.try_emplace(record.subject.pci, FunctionKind::kBare, "").first->second;
    if (record.fabric) kind = FunctionKind::kFabric;
    if (!record.subject.netdev.empty()) {
      if (kind == FunctionKind::kBare) kind = FunctionKind::kNic;
      if (netdev.empty()) netdev = record.subject.netdev;
    }
  }
  for (const auto& [pci, function] : functions)
    tree.AddFunction(pci, function.first, function.second);

  // What the capture must raise: (entity, event) -> lines, from the .expect; the records the
  // collector must skip (a line about a bare function, or a generic one naming nothing).
  std::map<std::pair<Entity, std::string>, uint64_t> want;
  std::set<Entity> faulty;
  std::set<Entity> fatal;
  double want_skipped = 0;
  for (size_t i = 0; i < expected.size(); ++i) {
    const ParsedRecord& record = parsed[i];
    std::optional<Entity> entity;
    bool skipped = false;
    if (!record.subject.pci.empty()) {
      entity = tree.FunctionEntity(record.subject.pci);
      skipped = !entity;
    } else if (!record.subject.ibdev.empty()) {
      entity = tree.AddIbdev(record.subject.ibdev);
    } else if (!record.subject.netdev.empty()) {
      entity = tree.AddNetdev(record.subject.netdev);
    } else if (record.row != nullptr) {
      skipped = record.subject.bad_name || !record.names_driver;
      if (!skipped) entity = Entity{};  // the node: no single function of that driver here
    }
    if (record.row != nullptr && skipped) ++want_skipped;
    const ExpectedLine& line = expected[i];
    if (line.event == "-" || kContextEvents.contains(line.event) || line.subject == "-") continue;
    ++totals.fault_lines;
    if (!entity) {
      ++totals.not_fabric;
      continue;
    }
    ++want[{*entity, line.event}];
    const kmsg::KernelEventPattern* row = kmsg::FindKernelEvent(line.event);
    if (row != nullptr && row->severity != kmsg::EventSeverity::kInfo) faulty.insert(*entity);
    if (row != nullptr && row->event_class == kmsg::EventClass::kFatal) fatal.insert(*entity);
  }

  testing::CollectorTestContext inputs(tree.sys());
  CollectorContext context = inputs.Context();
  context.roots.SetReplay(kKernelLog, kmsg.string());
  const auto now = inputs.clock().Now();
  auto collector = NewKmsgCollector(context);
  ASSERT_TRUE(collector) << collector.error().ToString();
  MetricSink sink;
  ASSERT_TRUE((*collector)->Collect(sink).ok());
  const std::vector<prometheus::MetricFamily> families = sink.TakeFamilies();
  const std::vector<LogEvent> events = sink.TakeLogEvents();
  EXPECT_EQ(SkippedOrLost(families), want_skipped)
      << "records skipped or lost: only the lines about a device that is no fabric function";

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
  (*detector)->Observe(detect::SnapshotView{"kmsg", now, kNone, events});
  std::set<Entity> critical;
  for (const detect::Finding& finding : (*detector)->Evaluate(now)) {
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
      "kmsg corpus through the agent: %d captures, %d fault lines: %d about a device that is no "
      "fabric function (skipped, as they must be), %d/%d others as events on the right entity; "
      "%d findings (%d critical), none on an entity without a warning-or-worse line\n",
      totals.captures, totals.fault_lines, totals.not_fabric, totals.events_right,
      totals.fault_lines - totals.not_fabric, totals.findings, totals.critical);
  EXPECT_GE(totals.events_right, 0.95 * (totals.fault_lines - totals.not_fabric))
      << "issue 38's target: 95 %";
}

}  // namespace
}  // namespace fabricwatch::kmsg
