#include "collectors/core/yaml_checks.h"

#include <yaml-cpp/eventhandler.h>

#include <set>
#include <sstream>

namespace fabricwatch {
namespace {

constexpr std::string_view kBoolTag = "tag:yaml.org,2002:bool";

// A key's text for paths and comparison: scalars by their text, other keys by their emitted form.
std::string KeyText(const YAML::Node& key) {
  if (key.IsScalar()) return key.Scalar();
  YAML::Emitter out;
  out << YAML::Flow << key;
  return out.c_str();
}

Status Walk(const YAML::Node& node, const std::string& source, const std::string& path, int depth) {
  // yaml-cpp nodes are shared; an alias cycle is impossible in a parsed document, but a bound
  // keeps a hostile file from recursing deep.
  if (depth > 64) {
    return Status(StatusCode::kInvalidArgument,
                  YamlWhere(node, source) + ": " + path + ": nested deeper than 64 levels");
  }
  if (node.IsMap()) {
    std::set<std::string> seen;
    for (const auto& entry : node) {
      const std::string key = KeyText(entry.first);
      const std::string child = path.empty() ? key : path + "." + key;
      if (!seen.insert(key).second) {
        return Status(StatusCode::kInvalidArgument,
                      YamlWhere(entry.first, source) + ": " + child +
                          ": duplicate key (each key may appear once in a mapping)");
      }
      if (Status s = Walk(entry.second, source, child, depth + 1); !s.ok()) return s;
    }
  } else if (node.IsSequence()) {
    for (size_t i = 0; i < node.size(); ++i) {
      const std::string child = path + "[" + std::to_string(i) + "]";
      if (Status s = Walk(node[i], source, child, depth + 1); !s.ok()) return s;
    }
  }
  return Status::Ok();
}

std::string MarkText(const YAML::Mark& mark, const std::string& source) {
  if (mark.is_null()) return source;
  return source + ":" + std::to_string(mark.line + 1) + ":" + std::to_string(mark.column + 1);
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

}  // namespace

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

std::string YamlWhere(const YAML::Node& node, const std::string& source) {
  return MarkText(node.Mark(), source);
}

Status CheckNoDuplicateKeys(const YAML::Node& root, const std::string& source) {
  return Walk(root, source, "", 0);
}

Result<bool> StrictBool(const YAML::Node& node, const std::string& source, const std::string& key) {
  // yaml-cpp tags a plain scalar "?" and a quoted one "!" (the non-specific tags, YAML 1.2
  // §6.9.1); an explicit !!bool comes resolved.
  const bool plain = node.IsScalar() && (node.Tag() == "?" || node.Tag() == kBoolTag);
  if (plain && node.Scalar() == "true") return true;
  if (plain && node.Scalar() == "false") return false;
  std::string got = node.IsScalar() ? "\"" + node.Scalar() + "\"" : "a list or mapping";
  if (node.IsScalar() && node.Tag() == "!") got = "the quoted string " + got;
  return Error(StatusCode::kInvalidArgument, YamlWhere(node, source) + ": " + key +
                                                 ": expected true or false (unquoted), got " + got);
}

}  // namespace fabricwatch
