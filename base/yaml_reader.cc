#include "base/yaml_reader.h"

#include <yaml-cpp/eventhandler.h>

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <set>
#include <sstream>

#include "base/duration.h"

namespace fabricwatch {
namespace {

constexpr std::string_view kBoolTag = "tag:yaml.org,2002:bool";
constexpr std::string_view kNullTag = "tag:yaml.org,2002:null";

std::string MarkText(const YAML::Mark& mark, const std::string& source) {
  if (mark.is_null()) return source;
  return source + ":" + std::to_string(mark.line + 1) + ":" + std::to_string(mark.column + 1);
}

// A key's text for paths and comparison: scalars by their text, other keys by their emitted form.
std::string KeyText(const YAML::Node& key) {
  if (key.IsScalar()) return key.Scalar();
  YAML::Emitter out;
  out << YAML::Flow << key;
  return out.c_str();
}

std::string ChildPath(const std::string& parent, std::string_view key) {
  return parent.empty() ? std::string(key) : parent + "." + std::string(key);
}

Status DuplicateWalk(const YAML::Node& node, const std::string& source, const std::string& path,
                     int depth) {
  if (depth > kMaxYamlDepth) {
    return Status(StatusCode::kInvalidArgument, MarkText(node.Mark(), source) + ": " + path +
                                                    ": nested deeper than " +
                                                    std::to_string(kMaxYamlDepth) + " levels");
  }
  if (node.IsMap()) {
    std::set<std::string> seen;
    for (const auto& entry : node) {
      const std::string key = KeyText(entry.first);
      const std::string child = ChildPath(path, key);
      if (!seen.insert(key).second) {
        return Status(StatusCode::kInvalidArgument,
                      MarkText(entry.first.Mark(), source) + ": " + child +
                          ": duplicate key (each key may appear once in a mapping)");
      }
      if (Status s = DuplicateWalk(entry.second, source, child, depth + 1); !s.ok()) return s;
    }
  } else if (node.IsSequence()) {
    for (size_t i = 0; i < node.size(); ++i) {
      const std::string child = path + "[" + std::to_string(i) + "]";
      if (Status s = DuplicateWalk(node[i], source, child, depth + 1); !s.ok()) return s;
    }
  }
  return Status::Ok();
}

// The first pass of LoadStrictYaml: yaml-cpp's event stream, before any tree exists. It stops
// at the first alias or past the node budget by throwing, so a hostile file costs one linear scan.
class AliasAndSizeCheck final : public YAML::EventHandler {
 public:
  struct Refused {
    YAML::Mark mark;
    std::string what;
  };
  void OnDocumentStart(const YAML::Mark&) override {}
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& mark, YAML::anchor_t) override { Count(mark); }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t) override {
    throw Refused{mark,
                  "an alias (*name): aliases and anchors are not accepted in fabricwatch's "
                  "files; write the value out"};
  }
  void OnScalar(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                const std::string&) override {
    Count(mark);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {
    Count(mark);
  }
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {
    Count(mark);
  }
  void OnMapEnd() override {}

 private:
  void Count(const YAML::Mark& mark) {
    if (++nodes_ > kMaxYamlNodes) {
      throw Refused{mark, "more than " + std::to_string(kMaxYamlNodes) + " YAML nodes"};
    }
  }
  size_t nodes_ = 0;
};

std::string Quote(const std::string& text) { return "\"" + text + "\""; }

// What a value is, for "got ..." in messages.
std::string Described(const YAML::Node& node) {
  if (node.IsMap()) return "a mapping";
  if (node.IsSequence()) return "a list";
  if (node.IsScalar())
    return (node.Tag() == "!" ? "the quoted string " : "") + Quote(node.Scalar());
  return "no value";
}

// The tree of the first document of `text` (a Null node when there is none), after the alias
// and size checks.
Result<YAML::Node> LoadStrictYaml(std::string_view text, const std::string& source) {
  const std::string copy(text);
  try {
    std::istringstream in(copy);
    YAML::Parser parser(in);
    AliasAndSizeCheck check;
    parser.HandleNextDocument(check);  // only the first document, as YAML::Load reads
  } catch (const AliasAndSizeCheck::Refused& refused) {
    return Error(StatusCode::kInvalidArgument,
                 MarkText(refused.mark, source) + ": " + refused.what);
  } catch (const YAML::Exception& e) {
    return Error(StatusCode::kInvalidArgument,
                 MarkText(e.mark, source) + ": not valid YAML: " + e.msg);
  }
  try {
    return YAML::Load(copy);
  } catch (const YAML::Exception& e) {
    return Error(StatusCode::kInvalidArgument,
                 MarkText(e.mark, source) + ": not valid YAML: " + e.msg);
  }
}

}  // namespace

// --- YamlDocument -------------------------------------------------------------------------------

YamlDocument::YamlDocument(std::shared_ptr<const std::string> source, YAML::Node root)
    : source_(source), root_(root, source, "", true, root.Mark()) {}

Result<YamlDocument> YamlDocument::Parse(std::string_view text, const std::string& source) {
  auto tree = LoadStrictYaml(text, source);
  if (!tree) return Error(tree.error());
  if (Status s = DuplicateWalk(*tree, source, "", 0); !s.ok()) return Error(s);
  return YamlDocument(std::make_shared<const std::string>(source), std::move(*tree));
}

Status YamlDocument::Fail(std::string_view what) const {
  return Status(StatusCode::kInvalidArgument, *source_ + ": " + std::string(what));
}

// --- YamlValue ----------------------------------------------------------------------------------

std::string YamlValue::Where() const { return MarkText(mark_, *source_); }

Status YamlValue::Fail(std::string_view what) const {
  std::string message = Where() + ": ";
  if (!path_.empty()) message += path_ + ": ";
  return Status(StatusCode::kInvalidArgument, message + std::string(what));
}

YamlValue YamlValue::Child(const YAML::Node& node, std::string path) const {
  return YamlValue(node, source_, std::move(path), true, node.Mark());
}

YamlValue YamlValue::MapValue(const YAML::Node& key, const YAML::Node& value,
                              std::string path) const {
  // yaml-cpp marks an empty value where the next token starts, often the next line: a value
  // that is not there is marked at its key, so "a file cut at this line" names the right one.
  const YAML::Mark mark = value.IsNull() ? key.Mark() : value.Mark();
  return YamlValue(value, source_, std::move(path), true, mark);
}

bool YamlValue::IsBare() const { return defined_ && node_.IsNull() && node_.Tag() != kNullTag; }

Result<std::string> YamlValue::Scalar() const {
  if (!IsScalar()) return Error(Fail("must be a scalar"));
  return node_.Scalar();
}

Result<std::string> YamlValue::String() const {
  if (IsNull()) return std::string();
  if (!IsScalar()) return Error(Fail("must be a string"));
  return node_.Scalar();
}

Result<bool> YamlValue::Bool(YamlBools forms) const {
  // yaml-cpp tags a plain scalar "?" and a quoted one "!" (the non-specific tags, YAML 1.2
  // §6.9.1); an explicit !!bool comes resolved.
  const bool plain = IsScalar() && (node_.Tag() == "?" || node_.Tag() == kBoolTag);
  if (plain) {
    const std::string& v = node_.Scalar();
    const bool core = forms == YamlBools::kCoreSchema;
    if (v == "true" || (core && (v == "True" || v == "TRUE"))) return true;
    if (v == "false" || (core && (v == "False" || v == "FALSE"))) return false;
  }
  return Error(Fail("expected true or false (unquoted), got " +
                    (defined_ ? Described(node_) : std::string("no value"))));
}

Result<std::chrono::milliseconds> YamlValue::Duration(YamlZero zero) const {
  auto text = Scalar();
  if (!text) return Error(text.error());
  auto duration = ParseDuration(*text);
  if (!duration) return Error(Fail(duration.error().message()));
  if (zero == YamlZero::kRefused && duration->count() <= 0) {
    return Error(Fail("must be greater than 0"));
  }
  return *duration;
}

Result<int64_t> YamlValue::Integer(int64_t min, int64_t max) const {
  int64_t value = 0;
  bool ok = IsScalar() && !Quoted();
  if (ok) {
    const std::string& text = node_.Scalar();
    const char* begin = text.data() + (text.starts_with('+') ? 1 : 0);
    auto [ptr, ec] = std::from_chars(begin, text.data() + text.size(), value);
    ok = !text.empty() && ec == std::errc() && ptr == text.data() + text.size();
  }
  if (!ok || value < min || value > max) {
    return Error(Fail("expected an integer between " + std::to_string(min) + " and " +
                      std::to_string(max) + ", got " + Described(node_)));
  }
  return value;
}

Result<double> YamlValue::Number(double min, double max) const {
  double value = 0;
  bool ok = IsScalar() && !Quoted();
  if (ok) {
    const std::string& text = node_.Scalar();
    char* end = nullptr;
    value = std::strtod(text.c_str(), &end);
    ok = !text.empty() && end == text.c_str() + text.size() && std::isfinite(value);
  }
  if (!ok) return Error(Fail("expected a number, got " + Described(node_)));
  if (value < min || value > max) {
    std::ostringstream range;
    range << "must be between " << min << " and " << max << ", got " << node_.Scalar();
    return Error(Fail(range.str()));
  }
  return value;
}

Result<uint64_t> YamlValue::Size(uint64_t min, uint64_t max) const {
  auto text = Scalar();
  if (!text) return Error(text.error());
  std::string_view digits = *text;
  uint64_t scale = 1;
  for (const auto& [suffix, factor] : {std::pair<std::string_view, uint64_t>{"KiB", 1ull << 10},
                                       {"MiB", 1ull << 20},
                                       {"GiB", 1ull << 30}}) {
    if (digits.ends_with(suffix)) {
      digits.remove_suffix(suffix.size());
      scale = factor;
    }
  }
  uint64_t value = 0;
  auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
  const bool parsed = !digits.empty() && ec == std::errc() &&
                      ptr == digits.data() + digits.size() && value <= max / scale;
  if (!parsed || value * scale < min || value * scale > max) {
    return Error(Fail("expected " + std::to_string(min) + " to " + std::to_string(max) +
                      " bytes (a number, or with KiB, MiB, GiB), got " + Quote(*text)));
  }
  return value * scale;
}

Result<std::vector<YamlValue>> YamlValue::Items() const {
  std::vector<YamlValue> items;
  if (IsNull()) return items;
  if (!IsSequence()) return Error(Fail("must be a list"));
  items.reserve(node_.size());
  for (size_t i = 0; i < node_.size(); ++i) {
    items.push_back(Child(node_[i], path_ + "[" + std::to_string(i) + "]"));
  }
  return items;
}

Result<std::vector<std::string>> YamlValue::StringList() const {
  auto items = Items();
  if (!items) return Error(items.error());
  std::vector<std::string> out;
  for (const YamlValue& item : *items) {
    auto text = item.Scalar();
    if (!text) return Error(text.error());
    out.push_back(std::move(*text));
  }
  return out;
}

Result<std::vector<YamlEntry>> YamlValue::Entries() const {
  std::vector<YamlEntry> entries;
  if (IsNull()) return entries;
  if (!IsMap()) return Error(Fail("must be a mapping"));
  for (const auto& entry : node_) {
    if (!entry.first.IsScalar()) {
      return Error(Child(entry.first, path_).Fail("keys must be strings"));
    }
    std::string key = entry.first.Scalar();
    std::string path = ChildPath(path_, key);
    entries.push_back({key, Child(entry.first, path), MapValue(entry.first, entry.second, path)});
  }
  return entries;
}

Result<std::map<std::string, std::string>> YamlValue::StringMap() const {
  auto entries = Entries();
  if (!entries) return Error(entries.error());
  std::map<std::string, std::string> out;
  for (const YamlEntry& entry : *entries) {
    auto text = entry.value.Scalar();
    if (!text) return Error(text.error());
    out[entry.key] = std::move(*text);
  }
  return out;
}

Status YamlValue::CheckKeys(std::span<const std::string_view> known, std::string_view noun) const {
  auto entries = Entries();
  if (!entries) return entries.error();
  for (const YamlEntry& entry : *entries) {
    bool found = false;
    for (std::string_view k : known) found |= k == entry.key;
    if (found) continue;
    std::string names;
    for (std::string_view k : known) names += (names.empty() ? "" : ", ") + std::string(k);
    return entry.key_node.Fail("unknown " + std::string(noun) + " (known: " + names + ")");
  }
  return Status::Ok();
}

YamlValue YamlValue::Get(std::string_view key) const {
  if (IsMap()) {
    for (const auto& entry : node_) {
      if (entry.first.IsScalar() && entry.first.Scalar() == key) {
        return MapValue(entry.first, entry.second, ChildPath(path_, key));
      }
    }
  }
  return YamlValue(YAML::Node(), source_, ChildPath(path_, key), false, mark_);
}

}  // namespace fabricwatch
