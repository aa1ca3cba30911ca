// Conformance of the kernel-log patterns with real captures (issue 38, item 4): every
// tests/fixtures/real/kmsg/<name>.kmsg (made from <name>.log, as posted by others, by
// tools/real_capture/to_kmsg.py; sources in tests/fixtures/real/SOURCES.md) is read record by
// record and matched as the kmsg collector does (ParseKmsgRecord, UnescapeKmsg,
// MatchKernelEvent, SubjectOf), and compared with <name>.expect, one line per record:
//     <event>\t<subject>
// event: the event name the record must raise, or "-" for a record that must raise nothing at
// warning or worse. subject: pci=<bdf>, netdev=<name>, ibdev=<name>, node:<driver> (no device
// in the text: the subject is empty and FabricDriverOf names the driver), or "-".
//
// Fault lines are the named records except the context lines that follow one (the health-buffer
// dump, the AER status and bit lines): those carry no finding of their own, so they are held to
// the "-" rule (nothing at warning or worse) and, when a row matches, to their name. The issue's
// target: at least 95 % of fault lines recognised with the right event and subject, and no
// false event. The figure is printed per kind and per source so the note can quote it.

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "collectors/kmsg/kmsg_parse.h"
#include "collectors/kmsg/kmsg_patterns.h"
#include "collectors/kmsg/kmsg_subject.h"
#include "tests/testing/test_paths.h"

namespace fabricwatch::kmsg {
namespace {

namespace fs = std::filesystem;

constexpr double kTargetShare = 0.95;  // issue 38, "Targets"
const std::set<std::string> kContextEvents = {"health_dump", "pcie_aer_detail"};

struct Expectation {
  std::string event;
  std::string subject;
};

struct Tally {
  int total = 0;
  int recognised = 0;
};

struct Capture {
  std::string name;
  std::vector<std::string> records;  // the .kmsg lines
  std::vector<Expectation> expected;
};

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

std::vector<Capture> LoadCorpus() {
  std::vector<Capture> corpus;
  const fs::path dir = testing::FixturePath("real/kmsg");
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() != ".kmsg") continue;
    Capture capture;
    capture.name = entry.path().stem().string();
    capture.records = Lines(testing::ReadTextFile(entry.path().string()));
    fs::path expect = entry.path();
    expect.replace_extension(".expect");
    for (const std::string& line : Lines(testing::ReadTextFile(expect.string()))) {
      const size_t tab = line.find('\t');
      capture.expected.push_back(tab == std::string::npos
                                     ? Expectation{line, ""}
                                     : Expectation{line.substr(0, tab), line.substr(tab + 1)});
    }
    corpus.push_back(std::move(capture));
  }
  std::sort(corpus.begin(), corpus.end(),
            [](const Capture& a, const Capture& b) { return a.name < b.name; });
  return corpus;
}

// The subject as the .expect file writes it, from what the collector would attribute.
std::string SubjectText(const RecordSubject& subject, const std::string& message,
                        const std::string& want) {
  if (want.starts_with("node:")) {
    if (!subject.empty()) return "not empty";
    const auto driver = kmsg::FabricDriverOf(message);
    return "node:" + std::string(driver.value_or("?"));
  }
  if (want.starts_with("pci=")) return "pci=" + subject.pci;
  if (want.starts_with("netdev=")) return "netdev=" + subject.netdev;
  if (want.starts_with("ibdev=")) return "ibdev=" + subject.ibdev;
  return want;  // "-": not checked
}

// What one record raises: "event\tsubject" as the .expect would say if right, and whether a row
// at warning or worse matched.
struct Outcome {
  std::string event = "-";
  std::string subject;
  bool at_warning = false;
};

Outcome Classify(const std::string& text, const Expectation& want, std::string& error) {
  Outcome outcome;
  auto record = kmsg::ParseKmsgRecord(text);
  if (!record) {
    error = "does not parse";
    return outcome;
  }
  const std::string message = kmsg::UnescapeKmsg(record->message);
  const kmsg::KernelEventPattern* pattern = kmsg::MatchKernelEvent(message, record->priority);
  if (pattern == nullptr) {
    outcome.subject = SubjectText({}, message, want.subject);
    return outcome;
  }
  outcome.event = std::string(pattern->event);
  outcome.at_warning = pattern->severity != kmsg::EventSeverity::kInfo;
  outcome.subject = SubjectText(SubjectOf(*record, message, *pattern), message, want.subject);
  return outcome;
}

std::string Share(const Tally& tally) {
  char text[64];
  std::snprintf(text, sizeof(text), "%d/%d (%.1f %%)", tally.recognised, tally.total,
                tally.total == 0 ? 100.0 : 100.0 * tally.recognised / tally.total);
  return text;
}

TEST(KmsgConformanceTest, RealCapturesAreRecognisedAndAttributed) {
  const std::vector<Capture> corpus = LoadCorpus();
  ASSERT_GE(corpus.size(), 15u) << "the corpus is tests/fixtures/real/kmsg";
  Tally all;
  std::map<std::string, Tally> by_kind;
  std::map<std::string, Tally> by_source;
  int benign = 0;
  int false_events = 0;
  for (const Capture& capture : corpus) {
    ASSERT_EQ(capture.records.size(), capture.expected.size())
        << capture.name << ".expect needs one line per record of " << capture.name << ".kmsg";
    for (size_t i = 0; i < capture.records.size(); ++i) {
      const Expectation& want = capture.expected[i];
      const std::string where = capture.name + ".kmsg:" + std::to_string(i + 1);
      std::string error;
      const Outcome got = Classify(capture.records[i], want, error);
      ASSERT_TRUE(error.empty()) << where << ": " << error;
      if (want.event == "-" || kContextEvents.contains(want.event)) {
        ++benign;
        if (got.at_warning) {
          ++false_events;
          ADD_FAILURE() << where << ": false event " << got.event << " on " << capture.records[i];
        } else if (want.event != "-" && got.event != "-" && got.event != want.event) {
          ADD_FAILURE() << where << ": context line raised " << got.event << ", not " << want.event;
        }
        continue;
      }
      const bool right = got.event == want.event && got.subject == want.subject;
      for (Tally* tally : {&all, &by_kind[want.event], &by_source[capture.name]}) {
        ++tally->total;
        if (right) ++tally->recognised;
      }
      if (!right) {
        std::printf("  missed %s: want %s %s, got %s %s\n", where.c_str(), want.event.c_str(),
                    want.subject.c_str(), got.event.c_str(), got.subject.c_str());
      }
    }
  }
  std::printf("kmsg conformance by kind:\n");
  for (const auto& [kind, tally] : by_kind) {
    std::printf("  %-40s %s\n", kind.c_str(), Share(tally).c_str());
  }
  std::printf("kmsg conformance by source:\n");
  for (const auto& [source, tally] : by_source) {
    std::printf("  %-48s %s\n", source.c_str(), Share(tally).c_str());
  }
  std::printf(
      "kmsg conformance: %s fault lines recognised and attributed, %zu kinds, %zu sources; "
      "%d non-fault lines, %d false events\n",
      Share(all).c_str(), by_kind.size(), corpus.size(), benign, false_events);
  EXPECT_GE(all.total, 60) << "the corpus lost fault lines";
  EXPECT_EQ(false_events, 0);
  EXPECT_GE(all.recognised, kTargetShare * all.total)
      << "below the issue's target of 95 %: " << Share(all);
}

// Every .expect names the subject in a form the test reads, and each .kmsg has its .log (the
// capture it was made from) and its .expect: a half-added capture fails here, not silently.
TEST(KmsgConformanceTest, CorpusFilesAreComplete) {
  const fs::path dir = testing::FixturePath("real/kmsg");
  int captures = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    const fs::path path = entry.path();
    if (path.extension() != ".log") continue;
    ++captures;
    for (const char* extension : {".kmsg", ".expect"}) {
      fs::path sibling = path;
      sibling.replace_extension(extension);
      EXPECT_TRUE(fs::exists(sibling)) << sibling;
    }
  }
  EXPECT_GE(captures, 15);
  for (const Capture& capture : LoadCorpus()) {
    for (const Expectation& want : capture.expected) {
      const bool known_form = want.subject == "-" || want.subject.starts_with("pci=") ||
                              want.subject.starts_with("netdev=") ||
                              want.subject.starts_with("ibdev=") ||
                              want.subject.starts_with("node:");
      EXPECT_TRUE(known_form) << capture.name << ".expect: subject '" << want.subject << "'";
      EXPECT_FALSE(want.event.empty()) << capture.name << ".expect: empty event";
    }
  }
}

}  // namespace
}  // namespace fabricwatch::kmsg
