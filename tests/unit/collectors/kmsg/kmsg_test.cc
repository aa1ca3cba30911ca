// Collector `kmsg` over a replay file and a small sysfs tree built per test: records counted by
// the RDMA device and netdev they map to, the log events handed to detectors, and every kind of
// bad input counted and skipped (issue 23 "Bad input"): over-long records and messages, invalid
// UTF-8, continuation lines without a record, a file truncated or replaced while read, a BDF of
// no fabric function, user-space records, sequence gaps, and a restart resuming from the cursor.

#include "collectors/kmsg/kmsg.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>

#include "collectors/kmsg/kmsg_entity.h"
#include "collectors/sys/filesystem.h"
#include "collectors/sys/kmsg_cursor.h"
#include "collectors/sys/sysfs.h"
#include "tests/testing/collector_context.h"
#include "tests/testing/temp_dir.h"

namespace fabricwatch::kmsg {
namespace {

namespace fs = std::filesystem;

// A sysfs tree shaped like the kernel's: two mlx5 functions (one with two netdevs), a GPU with
// neither, and a veth without a PCI parent; or, for `kOneFunction`, the first mlx5 function
// alone. mlx5 functions are bound to mlx5_core (bus/pci/drivers/mlx5_core/<bdf>).
class Tree {
 public:
  static constexpr bool kOneFunction = true;
  explicit Tree(bool one_function = false) : dir_("kmsg-test") {
    Function("0000:3b:00.0", "mlx5_0", {"enp59s0f0np0"});
    if (!one_function) Function("0000:5e:00.0", "mlx5_1", {"eth1", "eth2"});
    Function("0000:1c:00.0", "", {});
    // The root port above them (its sysfs directory holds theirs).
    Write("devices/pci0000:00/0000:00:01.0/vendor", "0x8086\n");
    Link("bus/pci/devices/0000:00:01.0", "../../../devices/pci0000:00/0000:00:01.0");
    Write("class/net/vethfw0/ifindex", "42\n");
    Write("class/net/lo/ifindex", "1\n");
  }
  std::string sys() const { return dir_.Path("sys"); }
  std::string file(const std::string& name) const { return dir_.Path(name); }

 private:
  void Write(const std::string& rel, const std::string& text) { dir_.Write("sys/" + rel, text); }
  void Link(const std::string& rel, const std::string& target) { dir_.Link("sys/" + rel, target); }
  void Function(const std::string& bdf, const std::string& ibdev,
                const std::vector<std::string>& netdevs) {
    const std::string dev = "devices/pci0000:00/0000:00:01.0/" + bdf;
    Write(dev + "/vendor", "0x15b3\n");
    Link("bus/pci/devices/" + bdf, "../../../" + dev);
    if (!ibdev.empty()) Link("bus/pci/drivers/mlx5_core/" + bdf, "../../../../" + dev);
    if (!ibdev.empty()) {
      Write(dev + "/infiniband/" + ibdev + "/node_type", "1: CA\n");
      Link(dev + "/infiniband/" + ibdev + "/device", "../../../" + bdf);
      Link("class/infiniband/" + ibdev, "../../" + dev + "/infiniband/" + ibdev);
    }
    int ifindex = 10;
    for (const std::string& netdev : netdevs) {
      Write(dev + "/net/" + netdev + "/ifindex", std::to_string(ifindex++) + "\n");
      Link(dev + "/net/" + netdev + "/device", "../../../" + bdf);
      Link("class/net/" + netdev, "../../" + dev + "/net/" + netdev);
    }
  }
  testing::TempDir dir_;
};

std::string Record(int level, uint64_t seq, const std::string& message,
                   const std::string& bdf = "") {
  std::string r =
      std::to_string(level) + "," + std::to_string(seq) + ",5000000," + "-;" + message + "\n";
  if (!bdf.empty()) r += " SUBSYSTEM=pci\n DEVICE=+pci:" + bdf + "\n";
  return r;
}

class Harness {
 public:
  explicit Harness(const Tree& tree, CollectorOptions options = {},
                   sys::KmsgCursor* cursor = nullptr)
      : path_(tree.file("kmsg")), inputs_(tree.sys(), std::move(options)) {
    std::ofstream(path_, std::ios::app);  // exists, empty
    CollectorContext context = inputs_.Context();
    context.roots.SetReplay(kKernelLog, path_);
    context.kmsg_cursor = cursor;
    auto collector = NewKmsgCollector(context);
    EXPECT_TRUE(collector) << collector.error().ToString();
    if (collector) collector_ = std::move(*collector);
  }
  void Append(const std::string& text) { std::ofstream(path_, std::ios::app) << text; }
  void Replace(const std::string& text) {
    const std::string tmp = path_ + ".new";
    std::ofstream(tmp) << text;
    fs::rename(tmp, path_);
  }
  struct Run {
    Status status;
    std::vector<prometheus::MetricFamily> families;
    std::vector<LogEvent> events;
  };
  Run Collect() {
    inputs_.clock().offset += std::chrono::seconds(1);
    MetricSink sink;
    Run run;
    run.status = collector_->Collect(sink);
    run.families = sink.TakeFamilies();
    run.events = sink.TakeLogEvents();
    return run;
  }
  // The sample of `name` whose labels include `labels`; -1 when none.
  static double Value(const Run& run, std::string_view name,
                      const std::map<std::string, std::string>& labels = {}) {
    for (const auto& family : run.families) {
      if (family.name != name) continue;
      for (const auto& metric : family.metric) {
        size_t matched = 0;
        for (const auto& label : metric.label) {
          auto it = labels.find(label.name);
          if (it != labels.end() && it->second == label.value) ++matched;
        }
        if (matched == labels.size()) {
          return family.type == prometheus::MetricType::Counter ? metric.counter.value
                                                                : metric.gauge.value;
        }
      }
    }
    return -1;
  }
  static bool Has(const Run& run, std::string_view name) {
    for (const auto& family : run.families) {
      if (family.name == name) return true;
    }
    return false;
  }

 private:
  std::string path_;
  testing::CollectorTestContext inputs_;
  std::unique_ptr<Collector> collector_;
};

TEST(KmsgCollector, CountsMatchingRecordsByDeviceAndNetdev) {
  Tree tree;
  Harness h(tree);
  h.Append(Record(3, 1, "mlx5_core 0000:3b:00.0: poll_health:836:(pid 0): Fatal error 1 detected",
                  "0000:3b:00.0"));
  h.Append(Record(6, 2, "mlx5_core 0000:3b:00.0 enp59s0f0np0: Link down", "0000:3b:00.0"));
  // A function with two netdevs: a line about the function names the device alone.
  h.Append(Record(3, 3,
                  "mlx5_core 0000:5e:00.0: Port module event[error]: module 1, Cable error, "
                  "High Temperature",
                  "0000:5e:00.0"));
  h.Append(Record(6, 4, "mlx5_core 0000:5e:00.0 eth2: Link up", "0000:5e:00.0"));
  // mlx5_ib's pr_err names the RDMA device; the text has the escaped form of a tab.
  h.Append(Record(3, 5, "mlx5_1/1: QP 137 error: unrecognized status (0x41 0x0 0x0)\\x09"));
  auto run = h.Collect();
  ASSERT_TRUE(run.status.ok()) << run.status.ToString();
  EXPECT_EQ(h.Value(run, "fabric_kernel_events_total",
                    {{"device", "mlx5_0"}, {"netdev", "enp59s0f0np0"}, {"event", "fw_fatal"}}),
            1);
  EXPECT_EQ(h.Value(run, "fabric_kernel_events_total",
                    {{"device", "mlx5_0"}, {"netdev", "enp59s0f0np0"}, {"event", "link_down"}}),
            1);
  EXPECT_EQ(h.Value(run, "fabric_kernel_events_total",
                    {{"device", "mlx5_1"}, {"netdev", ""}, {"event", "module_high_temperature"}}),
            1);
  EXPECT_EQ(h.Value(run, "fabric_kernel_events_total",
                    {{"device", "mlx5_1"}, {"netdev", "eth2"}, {"event", "link_up"}}),
            1);
  EXPECT_EQ(h.Value(run, "fabric_kernel_events_total",
                    {{"device", "mlx5_1"}, {"netdev", ""}, {"event", "qp_fatal"}}),
            1);
  EXPECT_EQ(h.Value(run, "fabric_kernel_log_records_total"), 5);
  EXPECT_EQ(h.Value(run, "fabric_kernel_log_lost_records_total"), 0);
  EXPECT_EQ(h.Value(run, "fabric_kernel_event_last_timestamp_seconds",
                    {{"device", "mlx5_0"}, {"netdev", "enp59s0f0np0"}, {"event", "fw_fatal"}}),
            1795000001);  // a replay record's time is its read time
  ASSERT_EQ(run.events.size(), 5u);
  for (const LogEvent& e : run.events) {
    EXPECT_EQ(e.count, 1u);
    ASSERT_EQ(e.lines.size(), 1u);
    if (e.event == "qp_fatal") EXPECT_EQ(e.lines[0].text.back(), '\t');  // unescaped
  }
  // Counters are cumulative; log events are per collection.
  auto again = h.Collect();
  EXPECT_TRUE(again.events.empty());
  EXPECT_EQ(h.Value(again, "fabric_kernel_events_total",
                    {{"device", "mlx5_0"}, {"netdev", "enp59s0f0np0"}, {"event", "fw_fatal"}}),
            1);
}

TEST(KmsgCollector, FloodIsOneLogEventWithBoundedLines) {
  Tree tree;
  Harness h(tree);
  std::string text;
  for (int i = 1; i <= 10000; ++i) {
    text += Record(3, i,
                   "mlx5_core 0000:3b:00.0: mlx5_cmd_out_err:838:(pid 1441871): ACCESS_REG(0x805) "
                   "op_mod(0x1) failed, status bad operation(0x2), syndrome (0x9a6171), err(-22)",
                   "0000:3b:00.0");
  }
  h.Append(text);
  auto run = h.Collect();
  ASSERT_EQ(run.events.size(), 1u);
  EXPECT_EQ(run.events[0].count, 10000u);
  EXPECT_EQ(run.events[0].lines.size(), kMaxLogLinesPerEvent);
  EXPECT_EQ(
      h.Value(run, "fabric_kernel_events_total",
              {{"device", "mlx5_0"}, {"netdev", "enp59s0f0np0"}, {"event", "access_reg_failed"}}),
      10000);
}

TEST(KmsgCollector, BadInputIsCountedAndSkipped) {
  Tree tree;
  Harness h(tree);
  h.Append(" DEVICE=+pci:0000:3b:00.0\n");                                      // orphan
  h.Append(Record(3, 1, std::string(1100, 'x')));                               // message > 1 KB
  h.Append(Record(3, 2, "mlx5_core 0000:3b:00.0: Fatal error \xff detected"));  // invalid UTF-8
  h.Append("garbage without a prefix\n");                                       // malformed
  // A BDF that maps to no fabric function (a GPU) and one that is not on this host.
  h.Append(Record(3, 3, "nvidia 0000:1c:00.0: AER: PCIe Bus Error: severity=Correctable",
                  "0000:1c:00.0"));
  h.Append(Record(3, 4, "mlx5_core 0000:ff:00.0: poll_health:836:(pid 0): Fatal error 1 detected"));
  // A hostile name in the text never becomes a path.
  h.Append(Record(3, 5, "mlx5_core ../../../etc: Port module event: module 0, Cable unplugged"));
  // An unknown line of a fabric driver at warning, and one at info (not counted).
  h.Append(Record(4, 6, "mlx5_core 0000:3b:00.0: something the table does not know"));
  h.Append(Record(6, 7, "mlx5_core 0000:3b:00.0: firmware version: 28.39.1002"));
  auto run = h.Collect();
  ASSERT_TRUE(run.status.ok());
  EXPECT_EQ(
      h.Value(run, "fabric_kernel_log_skipped_records_total", {{"reason", "orphan_continuation"}}),
      1);
  EXPECT_EQ(h.Value(run, "fabric_kernel_log_skipped_records_total", {{"reason", "too_long"}}), 1);
  EXPECT_EQ(h.Value(run, "fabric_kernel_log_skipped_records_total", {{"reason", "invalid_utf8"}}),
            1);
  EXPECT_EQ(h.Value(run, "fabric_kernel_log_skipped_records_total", {{"reason", "malformed"}}), 1);
  EXPECT_EQ(
      h.Value(run, "fabric_kernel_log_skipped_records_total", {{"reason", "unmapped_device"}}), 3);
  EXPECT_EQ(h.Value(run, "fabric_kernel_log_unknown_lines_total", {{"driver", "mlx5_core"}}), 1);
  EXPECT_TRUE(run.events.empty());
  EXPECT_FALSE(Harness::Has(run, "fabric_kernel_events_total"));
}

TEST(KmsgCollector, UserSpaceRecordsOnlyWhenAllowed) {
  Tree tree;
  // Facility 1 (LOG_USER): what a process writing "<3>..." to /dev/kmsg produces.
  const std::string line = Record(8 + 3, 1,
                                  "mlx5_core vethfw0: Port module event[error]: module "
                                  "0, Cable error, High Temperature");
  {
    Harness h(tree);
    h.Append(line);
    auto run = h.Collect();
    EXPECT_TRUE(run.events.empty());
    EXPECT_EQ(h.Value(run, "fabric_kernel_log_records_total"), 1);
  }
  fs::remove(tree.file("kmsg"));
  Harness h(tree, {{"user-records", "true"}});
  h.Append(line);
  auto run = h.Collect();
  ASSERT_EQ(run.events.size(), 1u);
  EXPECT_EQ(run.events[0].netdev, "vethfw0");  // a netdev without a PCI parent
  EXPECT_EQ(run.events[0].device, "");
}

TEST(KmsgCollector, SequenceGapsAreLostRecords) {
  Tree tree;
  Harness h(tree);
  h.Append(Record(6, 10, "mlx5_core 0000:3b:00.0 enp59s0f0np0: Link up", "0000:3b:00.0"));
  h.Append(Record(6, 15, "mlx5_core 0000:3b:00.0 enp59s0f0np0: Link up", "0000:3b:00.0"));
  auto run = h.Collect();
  EXPECT_EQ(h.Value(run, "fabric_kernel_log_lost_records_total"), 4);
}

TEST(KmsgCollector, TruncatedOrReplacedFileIsReadAgain) {
  Tree tree;
  Harness h(tree);
  h.Append(Record(6, 1, "mlx5_core 0000:3b:00.0 enp59s0f0np0: Link down", "0000:3b:00.0"));
  h.Append("6,2,5000000,-;mlx5_core 0000:3b:00.0 enp5");  // a record cut in half
  auto first = h.Collect();
  EXPECT_EQ(first.events.size(), 1u);
  // Rotated: a new file, its sequence starting over.
  h.Replace(Record(6, 1, "mlx5_core 0000:3b:00.0 enp59s0f0np0: Link up", "0000:3b:00.0"));
  auto second = h.Collect();
  ASSERT_TRUE(second.status.ok()) << second.status.ToString();
  ASSERT_EQ(second.events.size(), 1u);
  EXPECT_EQ(second.events[0].event, "link_up");
  EXPECT_EQ(h.Value(second, "fabric_kernel_log_skipped_records_total", {{"reason", "rotated"}}), 1);
  // Truncated in place, then written again.
  fs::resize_file(tree.file("kmsg"), 0);
  h.Append(Record(6, 1, "mlx5_core 0000:3b:00.0 enp59s0f0np0: Link down", "0000:3b:00.0"));
  auto third = h.Collect();
  ASSERT_EQ(third.events.size(), 1u);
  EXPECT_EQ(third.events[0].event, "link_down");
}

TEST(KmsgCollector, ResumesAfterTheSavedSequence) {
  Tree tree;
  sys::KmsgCursor cursor;
  {
    Harness h(tree, {}, &cursor);
    h.Append(Record(3, 1, "mlx5_core 0000:3b:00.0: Fatal error 1 detected", "0000:3b:00.0"));
    EXPECT_EQ(h.Collect().events.size(), 1u);
    EXPECT_EQ(cursor.Get(), 1u);
  }
  // A restart with the cursor from the state file: the old record is not new again.
  Harness h(tree, {}, &cursor);
  h.Append(Record(3, 2, "mlx5_core 0000:3b:00.0: Fatal error 2 detected", "0000:3b:00.0"));
  auto run = h.Collect();
  ASSERT_EQ(run.events.size(), 1u);
  EXPECT_EQ(run.events[0].lines[0].text, "mlx5_core 0000:3b:00.0: Fatal error 2 detected");
  EXPECT_EQ(h.Value(run, "fabric_kernel_log_lost_records_total"), 0);
}

TEST(KmsgCollector, NoSourceIsNoData) {
  Tree tree;
  testing::CollectorTestContext inputs(tree.sys());
  for (std::string path : {std::string(), tree.file("missing/kmsg")}) {
    CollectorContext context = inputs.Context();
    context.roots.SetReplay(kKernelLog, path);
    auto collector = NewKmsgCollector(context);
    ASSERT_TRUE(collector);
    MetricSink sink;
    EXPECT_EQ((*collector)->Collect(sink).code(), StatusCode::kNoData) << path;
    EXPECT_EQ(sink.sample_count(), 0u);
  }
}

TEST(KmsgCollector, OptionsAreChecked) {
  Tree tree;
  for (CollectorOptions options :
       {CollectorOptions{{"user-records", "yes"}}, CollectorOptions{{"max-records", "0"}},
        CollectorOptions{{"max-records", "x"}}}) {
    testing::CollectorTestContext inputs(tree.sys(), std::move(options));
    EXPECT_FALSE(NewKmsgCollector(inputs.Context()));
  }
}

TEST(KmsgEntity, SubjectOfReadsDeviceAndPrefixes) {
  const kmsg::KernelEventPattern& any = kmsg::KernelEventPatterns()[0];
  kmsg::KmsgRecord r;
  r.device = "+pci:0000:3b:00.0";
  auto s = SubjectOf(r, "mlx5_core 0000:3b:00.0 enp59s0f0np0: Link down", any);
  EXPECT_EQ(s.pci, "0000:3b:00.0");
  EXPECT_EQ(s.netdev, "enp59s0f0np0");
  s = SubjectOf(r, "bnxt_en 0000:3b:00.0 (unnamed net_device) (uninitialized): hwrm_ver_get failed",
                any);
  EXPECT_EQ(s.pci, "0000:3b:00.0");
  EXPECT_EQ(s.netdev, "");
  r.device = "";
  s = SubjectOf(r, "mlx5_0/1: QP 1 error: x (0x1 0x0 0x0)", any);
  EXPECT_EQ(s.ibdev, "mlx5_0");
  // A real line (tests/fixtures/real/kmsg/nvme-cli-3268-mlx5-cqe-error.log).
  s = SubjectOf(r,
                "infiniband rocep33s0f0: mlx5_poll_one:527:(pid 0): Responder error cqe on cqn "
                "0x406:",
                any);
  EXPECT_EQ(s.ibdev, "rocep33s0f0");
  EXPECT_EQ(s.netdev, "");
  r.device = "n7";
  s = SubjectOf(r, "no prefix here", any);
  EXPECT_EQ(s.ifindex, 7);
  // The AER source line names the erring function in its text.
  const kmsg::KernelEventPattern* received = kmsg::FindKernelEvent("pcie_aer_received");
  r.device = "+pci:0000:00:01.1";
  s = SubjectOf(r,
                "pcieport 0000:00:01.1: AER: Correctable Error message received from "
                "0000:3b:00.0",
                *received);
  EXPECT_EQ(s.pci, "0000:3b:00.0");
  // Before 4.15 the source is a requester ID, bus << 8 | devfn, in the printing port's domain
  // (a real line: tests/fixtures/real/kmsg/endlessm-linux-625-aer-old.log).
  const kmsg::KernelEventPattern* old_received =
      kmsg::MatchKernelEvent("pcieport 0000:00:1c.5: AER: Corrected error received: id=00e5");
  ASSERT_NE(old_received, nullptr);
  s = SubjectOf(r, "pcieport 0000:00:1c.5: AER: Corrected error received: id=00e5", *old_received);
  EXPECT_EQ(s.pci, "0000:00:1c.5");
  EXPECT_TRUE(IsPciAddress("0000:3b:00.0"));
  EXPECT_FALSE(IsPciAddress("0000:3b:00.8"));
  EXPECT_FALSE(IsPciAddress("0000:3b:00"));
  EXPECT_FALSE(IsPciAddress("../../etc/x"));
}

// Issue 38 "no silent drop": a fault line that names no function is its driver's one function's
// when the node has exactly one, else the node's; a function of this host with no RDMA device or
// netdev (its probe failed) is the node's; a generic printer's line that names nothing is skipped,
// counted by reason.
// ibdev_* printers name the RDMA device after the address ("efa 0000:a0:1a.0 rdmap160s26: ..."):
// the entity is that device and the function's one netdev, not a netdev of that name.
TEST(KmsgCollector, RdmaDeviceNamedAfterTheAddressIsTheDevice) {
  Tree tree;
  Harness h(tree);
  h.Append(Record(3, 1,
                  "mlx5_core 0000:3b:00.0 mlx5_0: poll_health:836:(pid 0): Fatal error 1 "
                  "detected"));
  auto run = h.Collect();
  ASSERT_EQ(run.events.size(), 1u);
  EXPECT_EQ(run.events[0].device, "mlx5_0");
  EXPECT_EQ(run.events[0].netdev, "enp59s0f0np0");
}

TEST(KmsgCollector, LineNamingNoFunctionIsTheOneFunctionsOrTheNodes) {
  const std::string synd = "mlx5_core: INFO: synd 0x8: unrecoverable hardware error.";
  {
    Tree tree(Tree::kOneFunction);
    Harness h(tree);
    h.Append(Record(3, 1, synd));
    auto run = h.Collect();
    ASSERT_EQ(run.events.size(), 1u);
    EXPECT_EQ(run.events[0].event, "health_syndrome");
    EXPECT_EQ(run.events[0].device, "mlx5_0");
    EXPECT_EQ(run.events[0].netdev, "enp59s0f0np0");
  }
  Tree tree;
  Harness h(tree);
  h.Append(Record(3, 1, synd));
  h.Append(Record(3, 2, "mlx5_core 0000:1c:00.0: poll_health:836:(pid 0): Fatal error 1 detected"));
  h.Append(Record(4, 3, "PFC-PAUSE-ON seen"));
  auto run = h.Collect();
  ASSERT_EQ(run.events.size(), 2u);
  for (const LogEvent& event : run.events) {
    EXPECT_EQ(event.device, "") << event.event;
    EXPECT_EQ(event.netdev, "") << event.event;
  }
  EXPECT_EQ(h.Value(run, "fabric_kernel_events_total",
                    {{"device", ""}, {"netdev", ""}, {"event", "health_syndrome"}}),
            1);
  EXPECT_EQ(h.Value(run, "fabric_kernel_events_total",
                    {{"device", ""}, {"netdev", ""}, {"event", "fw_fatal"}}),
            1);
  EXPECT_EQ(
      h.Value(run, "fabric_kernel_log_skipped_records_total", {{"reason", "no_device_named"}}), 1);
  EXPECT_EQ(
      h.Value(run, "fabric_kernel_log_skipped_records_total", {{"reason", "unmapped_device"}}), 0);
}

// Review of issue 38: a failed probe's line is the node's even with one bound sibling (never the
// healthy sibling's); "(null): " names nothing (efa at probe) and is attributed by driver; a tag
// without a device ("mlx5_port_module_event:1182:(pid 0): ") names nothing; a name no netdev can
// have is skipped; a port's own line is about the fabric function below it.
TEST(KmsgCollector, AttributionOfUnnamedProbeFailedAndPortLines) {
  {
    Tree tree(Tree::kOneFunction);
    Harness h(tree);
    h.Append(
        Record(3, 1, "mlx5_core 0000:1c:00.0: poll_health:836:(pid 0): Fatal error 1 detected"));
    h.Append(Record(3, 2, "pcieport 0000:00:01.0: AER: device recovery failed"));
    h.Append(Record(3, 3,
                    "mlx5_port_module_event:1182:(pid 0): Port module event[error]: module 0, "
                    "Cable error, High Temperature"));
    auto run = h.Collect();
    std::map<std::string, std::pair<std::string, std::string>> where;
    for (const LogEvent& event : run.events) where[event.event] = {event.device, event.netdev};
    EXPECT_EQ(where["fw_fatal"], std::make_pair(std::string(), std::string()));
    EXPECT_EQ(where["pcie_aer_recovery_failed"],
              std::make_pair(std::string("mlx5_0"), std::string("enp59s0f0np0")));
    EXPECT_EQ(where["module_high_temperature"],
              std::make_pair(std::string("mlx5_0"), std::string("enp59s0f0np0")));
  }
  Tree tree;
  Harness h(tree);
  h.Append(Record(3, 1, "(null): Reset indication didn't turn on"));
  h.Append(Record(3, 2, "pcieport 0000:00:01.0: AER: device recovery failed"));
  h.Append(Record(3, 3, "nvidia-nvswitch0: Fatal error 3 detected on link 5"));
  auto run = h.Collect();
  ASSERT_EQ(run.events.size(), 2u);
  for (const LogEvent& event : run.events) {
    EXPECT_EQ(event.device, "") << event.event;
    EXPECT_EQ(event.netdev, "") << event.event;
  }
  EXPECT_EQ(
      h.Value(run, "fabric_kernel_log_skipped_records_total", {{"reason", "unmapped_device"}}), 1);
}

// The firmware rates a health syndrome itself: at WARNING it is a degraded function, not a lost
// one (the synd line at the record's priority, the header by its words).
TEST(KmsgCollector, HealthSyndromeAtWarningIsAWarning) {
  Tree tree;
  Harness h(tree);
  h.Append(Record(4, 1,
                  "mlx5_core 0000:3b:00.0: print_health_info:431:(pid 0): Health issue observed, "
                  "High temperature, severity(4) WARNING:"));
  h.Append(Record(4, 2,
                  "mlx5_core 0000:3b:00.0: print_health_info:447:(pid 0): synd 0x10: High "
                  "temperature"));
  h.Append(Record(3, 3,
                  "mlx5_core 0000:3b:00.0: print_health_info:447:(pid 0): synd 0x1: firmware "
                  "internal error"));
  auto run = h.Collect();
  std::map<std::string, uint64_t> counts;
  for (const LogEvent& event : run.events) counts[event.event] += event.count;
  EXPECT_EQ(counts["health_warning"], 2u);
  EXPECT_EQ(counts["health_syndrome"], 1u);
}

}  // namespace
}  // namespace fabricwatch::kmsg
