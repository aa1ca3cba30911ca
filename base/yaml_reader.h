#pragma once
// The one YAML reader of every file fabricwatch reads: --config.file (its collectors, detectors,
// hooks and probe sections), --web.config.file, --shape.file and fabricsim's scenario files
// (tools/fabricsim/scenario.h). A typo must never arm a drain or open a port (issues 19 and 39),
// so it is strict everywhere, in one place:
//
//   - YamlDocument::Parse refuses aliases (`*name`) and more than kMaxYamlNodes nodes before a
//     tree exists: yaml-cpp shares an aliased node, but every walk visits it once per reference,
//     so nested anchors cost ×10 a level (570 bytes of "laughs" ran for hours, issue 39). None of
//     our formats needs them.
//   - Duplicate keys are errors anywhere in the document. YAML 1.2 §3.2.1.1 requires unique
//     mapping keys; yaml-cpp 0.7 keeps both entries and a walk applies both (the second wins).
//   - A boolean is a plain `true` or `false` (YAML 1.2 core schema §10.3.2) or a tagged !!bool;
//     a quoted "no" and YAML 1.1's yes/no/on/off are errors (yaml-cpp's convert<bool> takes them
//     all, and a quoted "no" used to turn hooks.dry_run off). A number is never quoted either.
//   - Every error is InvalidArgument naming the file, the line and column (yaml-cpp's Mark) and
//     the key path: "fw.yml:4:16: hooks.run[0].command: must be a list". No yaml-cpp exception
//     leaves this file: every getter answers a Result.
//
// A YamlValue is a node with its path: the getters below read it as a typed value. Maps are read
// with Entries() (and CheckKeys() for the keys a section accepts), lists with Items().

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <yaml-cpp/yaml.h>

#include "base/status.h"

namespace fabricwatch {

// A flat file of 100k scalars is far beyond any configuration.
inline constexpr size_t kMaxYamlNodes = 100'000;
// A bound on nesting keeps a hostile file from recursing deep in the duplicate-key walk.
inline constexpr int kMaxYamlDepth = 64;

// The boolean spellings Bool() accepts.
enum class YamlBools {
  kCanonical,   // true, false: the agent's own formats (config, hooks, probe)
  kCoreSchema,  // also True/TRUE/False/FALSE, YAML 1.2 §10.3.2, as Go's yaml reads a file
                // written for exporter-toolkit (the web configuration)
};

enum class YamlZero { kRefused, kAllowed };

struct YamlEntry;

class YamlValue {
 public:
  // The key path: "" for the document, "hooks.run[0].command" below it.
  const std::string& path() const { return path_; }
  // "file:line:column", or the file when yaml-cpp kept no mark.
  std::string Where() const;
  // The line of Where(), counted from 1; 0 without a mark. For a caller that reports a problem
  // found later, away from the tree (the simulator checks a scenario event against its node).
  int line() const { return mark_.is_null() ? 0 : mark_.line + 1; }
  // InvalidArgument "<where>: <path>: <what>" ("<where>: <what>" at the top level).
  Status Fail(std::string_view what) const;

  bool present() const { return defined_ && !node_.IsNull(); }  // given, with a value
  bool IsNull() const { return !defined_ || node_.IsNull(); }
  bool IsMap() const { return defined_ && node_.IsMap(); }
  bool IsSequence() const { return defined_ && node_.IsSequence(); }
  bool IsScalar() const { return defined_ && node_.IsScalar(); }
  // A key written with no value at all (`key:`), not `key: ~` or `key: !!null`: what a file cut
  // after that line leaves.
  bool IsBare() const;
  size_t size() const { return defined_ ? node_.size() : 0; }

  // The text of a scalar; anything else (null included) is "must be a scalar".
  Result<std::string> Scalar() const;
  // The text of a scalar, "" for null or absent; a list or mapping is "must be a string".
  Result<std::string> String() const;
  Result<bool> Bool(YamlBools forms = YamlBools::kCanonical) const;
  // A Prometheus duration (base/duration.h): 100ms, 30s, 1h30m.
  Result<std::chrono::milliseconds> Duration(YamlZero zero = YamlZero::kRefused) const;
  // An unquoted decimal integer in [min, max].
  Result<int64_t> Integer(int64_t min, int64_t max) const;
  // An unquoted finite number in [min, max].
  Result<double> Number(double min, double max) const;
  // Bytes in [min, max]: 65536, 64KiB, 4MiB or 1GiB (IEC binary prefixes).
  Result<uint64_t> Size(uint64_t min, uint64_t max) const;

  // A list (null or absent: none); "must be a list" otherwise.
  Result<std::vector<YamlValue>> Items() const;
  // A list of scalars (null or absent: empty).
  Result<std::vector<std::string>> StringList() const;
  // A mapping's entries in file order (null or absent: none); "must be a mapping" otherwise, and
  // a key that is a list or mapping is an error.
  Result<std::vector<YamlEntry>> Entries() const;
  // A mapping of scalars to scalars (null or absent: empty).
  Result<std::map<std::string, std::string>> StringMap() const;
  // Every key is one of `known`, else "<key path>: unknown <noun> (known: a, b, c)" at the key.
  Status CheckKeys(std::span<const std::string_view> known, std::string_view noun = "key") const;
  // The value of `key` in a mapping; absent (present() false, marked at this node) when the key
  // is not there or this is not a mapping.
  YamlValue Get(std::string_view key) const;

 private:
  friend class YamlDocument;
  YamlValue(YAML::Node node, std::shared_ptr<const std::string> source, std::string path,
            bool defined, YAML::Mark mark)
      : node_(std::move(node)),
        source_(std::move(source)),
        path_(std::move(path)),
        defined_(defined),
        mark_(mark) {}
  YamlValue Child(const YAML::Node& node, std::string path) const;
  YamlValue MapValue(const YAML::Node& key, const YAML::Node& value, std::string path) const;
  bool Quoted() const { return IsScalar() && node_.Tag() == "!"; }

  YAML::Node node_;
  std::shared_ptr<const std::string> source_;
  std::string path_;
  bool defined_ = true;
  YAML::Mark mark_;
};

struct YamlEntry {
  std::string key;
  YamlValue key_node;  // marked at the key (unknown-key errors point there); same path as value
  YamlValue value;
};

class YamlDocument {
 public:
  // Parses the first document of `text` with the checks above. A text with no document (empty,
  // or only comments) parses; empty() says so and root() is null.
  static Result<YamlDocument> Parse(std::string_view text, const std::string& source);

  bool empty() const { return root_.IsNull(); }
  const YamlValue& root() const { return root_; }
  const std::string& source() const { return *source_; }
  // InvalidArgument "<source>: <what>", for the file as a whole.
  Status Fail(std::string_view what) const;

 private:
  YamlDocument(std::shared_ptr<const std::string> source, YAML::Node root);
  std::shared_ptr<const std::string> source_;
  YamlValue root_;
};

}  // namespace fabricwatch
