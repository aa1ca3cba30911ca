// Collector goldens, driven by data: one test per case found under tests/golden/collectors/.
//
// A case is tests/golden/collectors/<collector>/<case>.*:
//   .args    its inputs (format: tests/testing/collector_case.h): sysfs root, ethtool replay,
//            options, clock, link events, injected errno values;
//   .prom    the exposition of one collection, as /metrics renders it;
//   .errors  the status and the errors recorded in the sink, roots written as $sysfs and
//            $ethtool; absent means "status: ok" and no error.
// The collector is built from the registry (collectors/core/collector_info.h) with the registry's
// option defaults, as the agent builds it. A new case needs only these files: write the .args,
// run `UPDATE_GOLDEN=1 build/tests/golden_test`, review `git diff tests/golden`.

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "collectors/registry.h"
#include "collectors/ethtool_source/ethtool_replay.h"
#include "collectors/sys/sysfs.h"
#include "tests/testing/collector_case.h"
#include "tests/testing/collector_context.h"
#include "tests/testing/fake_filesystem.h"
#include "tests/testing/temp_dir.h"
#include "tests/testing/test_paths.h"

namespace fabricwatch {
namespace {

namespace fs = std::filesystem;
using testing::CollectorCase;

const char kCleanOutcome[] = "status: ok\nerrors: 0\n";
// What a synthesised replay netdev's `ethtool -S` says.
const char kReplayStatistics[] = "NIC statistics:\n     rx_packets: 1\n";

fs::path GoldenDir() { return testing::SourcePath("tests/golden/collectors"); }

struct CaseId {
  std::string collector;
  std::string name;

  fs::path File(std::string_view extension) const {
    return GoldenDir() / collector / (name + std::string(extension));
  }
  friend auto operator<=>(const CaseId&, const CaseId&) = default;
  friend void PrintTo(const CaseId& id, std::ostream* out) {
    *out << id.collector << "/" << id.name;
  }
};

// Every <collector>/<case> that has a .prom or an .args file, sorted.
std::vector<CaseId> DiscoverCases() {
  std::set<CaseId> cases;
  std::error_code ec;
  for (const auto& dir : fs::directory_iterator(GoldenDir(), ec)) {
    if (!dir.is_directory()) continue;
    for (const auto& file : fs::directory_iterator(dir.path())) {
      const fs::path path = file.path();
      if (path.extension() == ".prom" || path.extension() == ".args") {
        cases.insert({dir.path().filename().string(), path.stem().string()});
      }
    }
  }
  return {cases.begin(), cases.end()};
}

class CaseClock final : public Clock {
 public:
  explicit CaseClock(std::chrono::system_clock::time_point now) : now_(now) {}
  std::chrono::system_clock::time_point Now() const override { return now_; }

 private:
  std::chrono::system_clock::time_point now_;
};

// Everything a case's collector reads, built from its .args; outlives the collector.
class CaseInputs {
 public:
  CaseInputs(const CollectorCase& c, const CollectorInfo& info)
      : case_(c),
        info_(info),
        sysfs_root_(testing::FixturePath(c.sysfs)),
        sysfs_(sysfs_root_, fs_),
        clock_(c.clock) {
    for (const CollectorOptionSpec& option : info.options) {
      if (!option.default_value.empty()) options_[std::string(option.key)] = option.default_value;
    }
    for (const auto& [key, value] : c.options) options_[key] = value;
  }

  Status Prepare() {
    for (const auto& [name, path] : case_.source_replays) {
      const bool declared = std::ranges::any_of(
          info_.sources, [&name](const SourceSpec& source) { return source.name == name; });
      if (!declared) {
        return Status(
            StatusCode::kInvalidArgument,
            name + "_replay: collector " + std::string(info_.name) + " declares no source " + name);
      }
    }
    if (Status replay = PrepareReplay(); !replay.ok()) return replay;
    if (case_.link_events_listening) {
      link_events_ = std::make_unique<sys::LinkEventLog>();
      link_events_->SetListening(*case_.link_events_listening);
      for (const sys::LinkEvent& event : case_.link_events) link_events_->Record(event);
    }
    for (const CollectorCase::Fault& fault : case_.faults) {
      auto path = Expand(fault.path);
      if (!path) return path.error();
      fs_.Inject(fault.op, *path, fault.err);
    }
    for (const CollectorCase::Content& content : case_.contents) {
      auto path = Expand(content.path);
      if (!path) return path.error();
      fs_.SetContent(*path, content.text);
    }
    return Status::Ok();
  }

  static std::string Fixture(const std::string& relative) {
    return relative.empty() ? std::string() : testing::FixturePath(relative);
  }

  CollectorContext Context() const {
    CollectorContext context = testing::MakeCollectorContext(
        sysfs_, clock_, options_, testing::NullSinkLogger(std::string(info_.name)));
    context.link_events = link_events_.get();
    context.ethtool = replay_.get();
    context.interval = case_.interval.value_or(info_.default_interval);
    for (const SourceSpec& source : info_.sources) {
      auto replay = case_.source_replays.find(std::string(source.name));
      if (replay != case_.source_replays.end()) {
        context.roots.SetReplay(source, Fixture(replay->second));
      }
    }
    return context;
  }

  // `text` with the roots of this run written as $sysfs and $ethtool.
  std::string Anonymise(std::string text) const {
    for (const auto& [root, name] : {std::pair{replay_dir_, "$ethtool"}, {sysfs_root_, "$sysfs"}}) {
      if (root.empty()) continue;
      for (size_t at = text.find(root); at != std::string::npos; at = text.find(root, at)) {
        text.replace(at, root.size(), name);
      }
    }
    return text;
  }

 private:
  // The replay directory: the fixture itself, or a temporary copy with the case's modules added.
  Status PrepareReplay() {
    if (case_.ethtool_replay.empty() && case_.replay_modules.empty()) return Status::Ok();
    replay_dir_ = testing::FixturePath(case_.ethtool_replay);
    if (!case_.replay_modules.empty()) {
      replay_tmp_.emplace("fw-golden-replay");
      if (!case_.ethtool_replay.empty()) {
        fs::copy(replay_dir_, replay_tmp_->str(), fs::copy_options::recursive);
      }
      replay_dir_ = replay_tmp_->str();
    }
    for (const CollectorCase::Module& module : case_.replay_modules) {
      const fs::path dir = fs::path(replay_dir_) / module.netdev;
      fs::create_directories(dir);
      if (!fs::exists(dir / "statistics")) std::ofstream(dir / "statistics") << kReplayStatistics;
      if (module.image == "none") continue;
      auto image = testing::ModuleImageNamed(module.image);
      if (!image) return image.error();
      std::ofstream(dir / "module-eeprom", std::ios::binary)
          .write(reinterpret_cast<const char*>(image->data()),
                 static_cast<std::streamsize>(image->size()));
    }
    replay_ = std::make_unique<sys::ReplayEthtool>(replay_dir_, fs_);
    return Status::Ok();
  }

  Result<std::string> Expand(const std::string& path) const {
    for (const auto& [prefix, root] :
         {std::pair{"$sysfs/", sysfs_root_}, {"$ethtool/", replay_dir_}}) {
      if (path.starts_with(prefix) && !root.empty()) {
        return root + "/" + path.substr(std::string_view(prefix).size());
      }
    }
    return Error(StatusCode::kInvalidArgument,
                 path + ": a path starts with $sysfs/ or $ethtool/ (with an ethtool replay)");
  }

  const CollectorCase& case_;
  const CollectorInfo& info_;
  testing::FakeFileSystem fs_;  // the real files, with the case's faults
  std::string sysfs_root_;
  sys::SysFs sysfs_;
  std::optional<testing::TempDir> replay_tmp_;
  std::string replay_dir_;
  std::unique_ptr<sys::ReplayEthtool> replay_;
  std::unique_ptr<sys::LinkEventLog> link_events_;
  CaseClock clock_;
  CollectorOptions options_;
};

bool Updating() {
  const char* update = std::getenv("UPDATE_GOLDEN");
  return update != nullptr && std::string_view(update) == "1";
}

// The sample lines (not # HELP / # TYPE) of an exposition.
std::vector<std::string> SampleLines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty() && !line.starts_with("#")) lines.push_back(line);
  }
  return lines;
}

// The .errors golden: compared when present, "ok and no error" when absent.
void ExpectOutcome(const std::string& actual, const CaseId& id) {
  const fs::path path = id.File(".errors");
  if (Updating()) {
    if (actual != kCleanOutcome) {
      std::ofstream(path) << actual;
    } else {
      fs::remove(path);
    }
    return;
  }
  const std::string expected =
      fs::exists(path) ? testing::ReadTextFile(path.string()) : std::string(kCleanOutcome);
  EXPECT_EQ(actual, expected) << "status and errors differ from " << path
                              << (fs::exists(path) ? "" : " (absent: no error expected)")
                              << "; UPDATE_GOLDEN=1 rewrites it";
}

// A fault case loses exactly the `omitted` samples of its baseline, and nothing else; what it has
// that an `omitted` text matches is compared with its own golden only.
void ExpectBaselineMinusOmitted(const std::string& text, const CaseId& id, const CollectorCase& c) {
  const fs::path baseline = CaseId{id.collector, c.baseline}.File(".prom");
  ASSERT_TRUE(fs::exists(baseline)) << "baseline " << baseline << " does not exist";
  std::vector<std::string> expected;
  std::set<std::string> matched;
  for (const std::string& line : SampleLines(testing::ReadTextFile(baseline.string()))) {
    bool omit = false;
    for (const std::string& text_omitted : c.omitted) {
      if (line.find(text_omitted) == std::string::npos) continue;
      omit = true;
      matched.insert(text_omitted);
    }
    if (!omit) expected.push_back(line);
  }
  for (const std::string& text_omitted : c.omitted) {
    EXPECT_TRUE(matched.contains(text_omitted))
        << "`omitted = " << text_omitted << "` matches no sample of " << baseline;
  }
  const std::vector<std::string> actual = SampleLines(text);
  const std::set<std::string> have(actual.begin(), actual.end());
  const std::set<std::string> want(expected.begin(), expected.end());
  std::string diff;
  for (const std::string& line : expected) {
    if (!have.contains(line)) diff += "  lost:  " + line + "\n";
  }
  for (const std::string& line : actual) {
    // A sample the fault changed (one an `omitted` text matches) is pinned by the case's own
    // golden; e.g. the device reads of a sample whose read failed.
    const auto touched = [&](const std::string& text_omitted) {
      return line.find(text_omitted) != std::string::npos;
    };
    if (std::any_of(c.omitted.begin(), c.omitted.end(), touched)) continue;
    if (!want.contains(line)) diff += "  extra: " + line + "\n";
  }
  EXPECT_EQ(diff, "") << "the samples are not those of " << baseline
                      << " without the omitted ones:\n"
                      << diff;
}

class CollectorGoldenTest : public ::testing::TestWithParam<CaseId> {};

TEST_P(CollectorGoldenTest, matches) {
  const CaseId& id = GetParam();
  const CollectorInfo* info = FindCollector(id.collector);
  ASSERT_NE(info, nullptr) << GoldenDir() / id.collector << " names no registered collector";
  const fs::path args = id.File(".args");
  ASSERT_TRUE(fs::exists(args)) << args << " is missing: it says what the golden is collected "
                                << "from (tests/testing/collector_case.h)";
  auto c = testing::ParseCollectorCase(testing::ReadTextFile(args.string()));
  ASSERT_TRUE(c) << args << ": " << c.error().ToString();

  CaseInputs inputs(*c, *info);
  const Status prepared = inputs.Prepare();
  ASSERT_TRUE(prepared.ok()) << args << ": " << prepared.ToString();
  auto collector = info->factory(inputs.Context());
  ASSERT_TRUE(collector) << collector.error().ToString();
  MetricSink sink;
  const Status status = (*collector)->Collect(sink);

  std::string outcome =
      "status: " + status.ToString() + "\nerrors: " + std::to_string(sink.error_count()) + "\n";
  for (const Status& error : sink.errors()) outcome += error.ToString() + "\n";
  ExpectOutcome(inputs.Anonymise(outcome), id);
  const std::string text = testing::Exposition(sink.TakeFamilies());
  testing::ExpectGolden(text, "collectors/" + id.collector + "/" + id.name + ".prom");
  if (!c->baseline.empty()) ExpectBaselineMinusOmitted(text, id, *c);
}

INSTANTIATE_TEST_SUITE_P(Cases, CollectorGoldenTest, ::testing::ValuesIn(DiscoverCases()),
                         [](const ::testing::TestParamInfo<CaseId>& param) {
                           std::string name = param.param.collector + "_" + param.param.name;
                           for (char& ch : name) {
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           }
                           return name;
                         });

// The golden directory holds cases only: no stray file that no test reads.
TEST(CollectorGoldenFilesTest, every_file_belongs_to_a_case) {
  const std::vector<CaseId> cases = DiscoverCases();
  EXPECT_FALSE(cases.empty()) << "no case under " << GoldenDir();
  for (const auto& dir : fs::directory_iterator(GoldenDir())) {
    ASSERT_TRUE(dir.is_directory()) << dir.path() << ": only collector folders belong here";
    for (const auto& file : fs::directory_iterator(dir.path())) {
      const fs::path path = file.path();
      const std::string ext = path.extension().string();
      EXPECT_TRUE(ext == ".prom" || ext == ".args" || ext == ".errors") << path;
      const CaseId id{dir.path().filename().string(), path.stem().string()};
      EXPECT_TRUE(std::binary_search(cases.begin(), cases.end(), id))
          << path << " belongs to no case (it needs a .args and a .prom)";
    }
  }
}

}  // namespace
}  // namespace fabricwatch
