#include "tests/testing/collector_case.h"

#include <cerrno>
#include <sstream>
#include <utility>

#include "base/duration.h"
#include "base/value_parse.h"
#include "tests/testing/module_images.h"

namespace fabricwatch::testing {
namespace {

// The errno values a case may inject, by name.
constexpr std::pair<std::string_view, int> kErrnos[] = {
    {"EACCES", EACCES}, {"EPERM", EPERM},         {"EIO", EIO},
    {"EINVAL", EINVAL}, {"ENODEV", ENODEV},       {"ENOENT", ENOENT},
    {"ENXIO", ENXIO},   {"EAGAIN", EAGAIN},       {"EBUSY", EBUSY},
    {"EINTR", EINTR},   {"ETIMEDOUT", ETIMEDOUT}, {"EOPNOTSUPP", EOPNOTSUPP},
};

constexpr std::pair<std::string_view, FakeFileSystem::Op> kOps[] = {
    {"open", FakeFileSystem::Op::kOpen},
    {"read", FakeFileSystem::Op::kRead},
    {"listdir", FakeFileSystem::Op::kListDir},
    {"readlink", FakeFileSystem::Op::kReadLink},
};

template <typename T, size_t N>
std::optional<T> Lookup(const std::pair<std::string_view, T> (&table)[N], std::string_view name) {
  for (const auto& [key, value] : table) {
    if (key == name) return value;
  }
  return std::nullopt;
}

// Splits off the first whitespace-separated word of `rest`.
std::string_view NextWord(std::string_view& rest) {
  rest = TrimSpace(rest);
  const size_t end = rest.find_first_of(" \t");
  std::string_view word = rest.substr(0, end);
  rest = end == std::string_view::npos ? std::string_view() : TrimSpace(rest.substr(end));
  return word;
}

std::vector<std::string_view> Words(std::string_view value) {
  std::vector<std::string_view> words;
  while (!value.empty()) words.push_back(NextWord(value));
  return words;
}

Result<std::chrono::system_clock::time_point> UnixSeconds(std::string_view text) {
  auto seconds = ParseUint64(text, "Unix seconds");
  if (!seconds) return Error(seconds.error());
  return std::chrono::system_clock::time_point(
      std::chrono::seconds(static_cast<int64_t>(*seconds)));
}

Result<sys::LinkEvent> ParseLinkEvent(std::string_view value) {
  const auto words = Words(value);
  if (words.size() != 4 || (words[3] != "up" && words[3] != "down")) {
    return Error(StatusCode::kInvalidArgument,
                 "link_event wants <unix seconds> <ifindex> <netdev> <up|down>");
  }
  auto time = UnixSeconds(words[0]);
  auto ifindex = ParseUint64(words[1], "ifindex");
  if (!time) return Error(time.error());
  if (!ifindex) return Error(ifindex.error());
  const bool up = words[3] == "up";
  return sys::LinkEvent{.time = *time,
                        .ifindex = static_cast<int>(*ifindex),
                        .netdev = std::string(words[2]),
                        .carrier_up = up,
                        .operstate = up ? "up" : "down",
                        .inferred = false};
}

Result<CollectorCase::Fault> ParseFault(std::string_view value) {
  const auto words = Words(value);
  if (words.size() != 3) {
    return Error(StatusCode::kInvalidArgument, "inject wants <operation> <path> <ERRNO>");
  }
  auto op = Lookup(kOps, words[0]);
  auto err = Lookup(kErrnos, words[2]);
  if (!op) return Error(StatusCode::kInvalidArgument, "unknown operation " + std::string(words[0]));
  if (!err) return Error(StatusCode::kInvalidArgument, "unknown errno " + std::string(words[2]));
  return CollectorCase::Fault{*op, std::string(words[1]), *err};
}

// Applies one `key = value` line to `c`.
Status Apply(std::string_view key, std::string_view value, CollectorCase& c) {
  if (key.starts_with("option.")) {
    c.options[std::string(key.substr(7))] = std::string(value);
  } else if (key == "sysfs") {
    c.sysfs = value;
  } else if (key == "ethtool_replay") {
    c.ethtool_replay = value;
  } else if (key.ends_with("_replay") && key.size() > 7) {
    c.source_replays[std::string(key.substr(0, key.size() - 7))] = std::string(value);
  } else if (key == "replay_module") {
    const auto words = Words(value);
    if (words.size() != 2) return Status(StatusCode::kInvalidArgument, "wants <netdev> <image>");
    c.replay_modules.push_back({std::string(words[0]), std::string(words[1])});
  } else if (key == "clock") {
    auto time = UnixSeconds(value);
    if (!time) return time.error();
    c.clock = *time;
  } else if (key == "interval") {
    auto interval = ParseDuration(value);
    if (!interval) return interval.error();
    c.interval = *interval;
  } else if (key == "link_events") {
    if (value != "listening" && value != "idle") {
      return Status(StatusCode::kInvalidArgument, "link_events is `listening` or `idle`");
    }
    c.link_events_listening = value == "listening";
  } else if (key == "link_event") {
    auto event = ParseLinkEvent(value);
    if (!event) return event.error();
    c.link_events.push_back(std::move(*event));
  } else if (key == "inject") {
    auto fault = ParseFault(value);
    if (!fault) return fault.error();
    c.faults.push_back(std::move(*fault));
  } else if (key == "content") {
    std::string_view rest = value;
    std::string path(NextWord(rest));
    c.contents.push_back({std::move(path), std::string(rest) + "\n"});
  } else if (key == "baseline") {
    c.baseline = value;
  } else if (key == "omitted") {
    c.omitted.emplace_back(value);
  } else {
    return Status(StatusCode::kInvalidArgument, "unknown key " + std::string(key));
  }
  return Status::Ok();
}

}  // namespace

Result<CollectorCase> ParseCollectorCase(std::string_view text) {
  CollectorCase c;
  bool has_clock = false;
  std::istringstream lines{std::string(text)};
  int number = 0;
  for (std::string line; std::getline(lines, line);) {
    ++number;
    std::string_view view = line;
    if (const size_t hash = view.find('#'); hash != std::string_view::npos) {
      view = view.substr(0, hash);
    }
    view = TrimSpace(view);
    if (view.empty()) continue;
    const size_t eq = view.find('=');
    if (eq == std::string_view::npos) {
      return Error(StatusCode::kInvalidArgument,
                   "line " + std::to_string(number) + ": not `key = value`");
    }
    const std::string_view key = TrimSpace(view.substr(0, eq));
    has_clock = has_clock || key == "clock";
    Status applied = Apply(key, TrimSpace(view.substr(eq + 1)), c);
    if (!applied.ok()) return Error(applied.WithContext("line " + std::to_string(number)));
  }
  if (c.sysfs.empty()) return Error(StatusCode::kInvalidArgument, "no `sysfs = ...` line");
  if (!has_clock) return Error(StatusCode::kInvalidArgument, "no `clock = ...` line");
  if (!c.link_events.empty() && !c.link_events_listening) {
    return Error(StatusCode::kInvalidArgument, "link_event lines need `link_events = ...`");
  }
  if (c.baseline.empty() != c.omitted.empty()) {
    return Error(StatusCode::kInvalidArgument, "`baseline` and `omitted` go together");
  }
  return c;
}

Result<std::vector<uint8_t>> ModuleImageNamed(std::string_view name) {
  constexpr std::pair<std::string_view, Image (*)()> kImages[] = {
      {"sfp-internal", SfpInternal},  {"sfp-external", SfpExternal}, {"qsfp28-paged", Qsfp28Paged},
      {"qsfp-flat-dac", QsfpFlatDac}, {"cmis-8-lane", Cmis8Lane},    {"cmis-flat-dac", CmisFlatDac},
  };
  auto build = Lookup(kImages, name);
  if (!build) return Error(StatusCode::kNotFound, "no module image named " + std::string(name));
  const Image image = (*build)();
  return std::vector<uint8_t>(image.bytes().begin(), image.bytes().end());
}

}  // namespace fabricwatch::testing
