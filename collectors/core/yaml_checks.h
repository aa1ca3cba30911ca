#pragma once
// Strict YAML checks shared by every file the agent reads (--config.file, its hooks section, the
// web configuration): a typo must never arm a drain (issue 19).
//
//   - Duplicate keys are errors anywhere in a document. YAML 1.2 §3.2.1.1 requires mapping keys
//     to be unique, but yaml-cpp 0.7 keeps both entries and a walk applies both (the second
//     wins), so the check walks the whole tree once after parsing.
//   - A boolean is a plain (unquoted) `true` or `false`, the YAML 1.2 core schema's canonical
//     forms (§10.3.2), or an explicitly tagged !!bool. Quoted strings ("no", "off", "false")
//     and YAML 1.1's yes/no/on/off are errors that name the key: yaml-cpp's own
//     convert<bool> accepts all of them, so a quoted "no" used to turn dry-run off.
//   - Aliases (`*name`) are refused, in every file (LoadStrictYaml). yaml-cpp shares an aliased
//     node, but every walk over the tree (the duplicate-key check, each reader) visits it once per
//     reference, so nested anchors cost ×10 a level: 570 bytes of "laughs" ran for hours on
//     start, --config.check and SIGHUP (issue 39). None of our formats needs them; a node budget
//     bounds what is left (a flat file of 100k scalars is far beyond any configuration).

#include <yaml-cpp/yaml.h>

#include <string>
#include <string_view>

#include "collectors/core/status.h"

namespace fabricwatch {

inline constexpr size_t kMaxYamlNodes = 100'000;

// Parses the first document of `text`. InvalidArgument naming `source`, the line and the column
// for invalid YAML, an alias, or more than kMaxYamlNodes nodes; a Null node for an empty text.
Result<YAML::Node> LoadStrictYaml(std::string_view text, const std::string& source);

// "source:line:column" of a node, or `source` when the node has no mark.
std::string YamlWhere(const YAML::Node& node, const std::string& source);

// InvalidArgument naming the file, the line and the dotted key path of the first duplicate.
Status CheckNoDuplicateKeys(const YAML::Node& root, const std::string& source);

// The value of a boolean key. `key` is the dotted path for the error message.
Result<bool> StrictBool(const YAML::Node& node, const std::string& source, const std::string& key);

}  // namespace fabricwatch
