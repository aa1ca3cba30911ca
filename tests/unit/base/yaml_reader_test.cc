// YamlDocument and YamlValue (base/yaml_reader.h): the one YAML reader of the config,
// hooks, probe, web config and shape manifest. Every getter's value, and every error naming the
// file, line, column and key path.

#include "base/yaml_reader.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <string>

namespace fabricwatch {
namespace {

using std::chrono::milliseconds;

YamlDocument Load(const std::string& text) {
  auto document = YamlDocument::Parse(text, "f.yml");
  EXPECT_TRUE(document.has_value()) << document.error().message();
  return std::move(*document);
}

// The error message of a failed Result.
template <typename T>
std::string ErrorOf(const Result<T>& result) {
  EXPECT_FALSE(result.has_value());
  return result ? std::string("(no error)") : result.error().message();
}

TEST(YamlReaderTest, paths_and_marks_name_the_place) {
  const YamlDocument doc = Load("a:\n  b:\n    - x\n    - c: 1\n");
  const YamlValue c = doc.root().Get("a").Get("b");
  auto items = c.Items();
  ASSERT_TRUE(items.has_value());
  ASSERT_EQ(items->size(), 2u);
  const YamlValue leaf = (*items)[1].Get("c");
  EXPECT_EQ(leaf.path(), "a.b[1].c");
  EXPECT_EQ(leaf.Where(), "f.yml:4:10");
  EXPECT_EQ(leaf.Fail("bad").message(), "f.yml:4:10: a.b[1].c: bad");
  EXPECT_EQ(leaf.Fail("bad").code(), StatusCode::kInvalidArgument);
  // The top level has no path; the document as a whole names only the file.
  EXPECT_EQ(doc.root().Fail("the top level must be a mapping").message(),
            "f.yml:1:1: the top level must be a mapping");
  EXPECT_EQ(doc.Fail("is empty").message(), "f.yml: is empty");
  // An absent key is marked at its parent and keeps its path.
  const YamlValue absent = doc.root().Get("a").Get("nope");
  EXPECT_FALSE(absent.present());
  EXPECT_EQ(absent.Fail("is required").message(), "f.yml:2:3: a.nope: is required");
}

TEST(YamlReaderTest, scalars_strings_and_bare_keys) {
  const YamlDocument doc = Load("s: text\nq: \"quoted\"\nn:\nt: ~\nl: [1]\nm: {}\n");
  const YamlValue& r = doc.root();
  EXPECT_EQ(*r.Get("s").Scalar(), "text");
  EXPECT_EQ(*r.Get("q").Scalar(), "quoted");
  EXPECT_EQ(ErrorOf(r.Get("n").Scalar()), "f.yml:3:1: n: must be a scalar");  // at the key
  EXPECT_EQ(ErrorOf(r.Get("l").Scalar()), "f.yml:5:4: l: must be a scalar");
  // String: null and absent read as "", a list or mapping does not.
  EXPECT_EQ(*r.Get("n").String(), "");
  EXPECT_EQ(*r.Get("absent").String(), "");
  EXPECT_EQ(ErrorOf(r.Get("m").String()), "f.yml:6:4: m: must be a string");
  // A key with no value is bare (what a cut file leaves); yaml-cpp reads ~ alike, so only an
  // explicit !!null says "nothing" on purpose.
  EXPECT_TRUE(r.Get("n").IsBare());
  EXPECT_FALSE(r.Get("m").IsBare());
  EXPECT_FALSE(r.Get("absent").IsBare());
  EXPECT_FALSE(Load("k: !!null\n").root().Get("k").IsBare());
}

TEST(YamlReaderTest, booleans_are_unquoted_true_or_false) {
  const YamlDocument doc =
      Load("a: true\nb: false\nc: !!bool true\nd: True\ne: \"no\"\nf: yes\ng: [true]\nh:\n");
  const YamlValue& r = doc.root();
  EXPECT_TRUE(*r.Get("a").Bool());
  EXPECT_FALSE(*r.Get("b").Bool());
  EXPECT_TRUE(*r.Get("c").Bool());
  EXPECT_EQ(ErrorOf(r.Get("d").Bool()),
            "f.yml:4:4: d: expected true or false (unquoted), got \"True\"");
  EXPECT_TRUE(*r.Get("d").Bool(YamlBools::kCoreSchema));  // Go's yaml, the web config
  EXPECT_EQ(ErrorOf(r.Get("e").Bool(YamlBools::kCoreSchema)),
            "f.yml:5:4: e: expected true or false (unquoted), got the quoted string \"no\"");
  EXPECT_NE(ErrorOf(r.Get("f").Bool()).find("got \"yes\""), std::string::npos);
  EXPECT_NE(ErrorOf(r.Get("g").Bool()).find("got a list"), std::string::npos);
  EXPECT_NE(ErrorOf(r.Get("h").Bool()).find("got no value"), std::string::npos);
  EXPECT_NE(ErrorOf(r.Get("absent").Bool()).find("absent: expected true or false"),
            std::string::npos);
}

TEST(YamlReaderTest, durations_integers_numbers_and_sizes) {
  const YamlDocument doc = Load(
      "d: 1m30s\nz: 0s\nbad: fast\ni: -3\nq: \"5\"\nf: 2.5\nbig: 1e400\nsz: 64KiB\nmb: 4MiB\n"
      "gb: 1GiB\nraw: 65536\nneg: -1\n");
  const YamlValue& r = doc.root();
  EXPECT_EQ(*r.Get("d").Duration(), milliseconds(90'000));
  EXPECT_EQ(*r.Get("z").Duration(YamlZero::kAllowed), milliseconds(0));
  EXPECT_EQ(ErrorOf(r.Get("z").Duration()), "f.yml:2:4: z: must be greater than 0");
  EXPECT_EQ(ErrorOf(r.Get("bad").Duration()).rfind("f.yml:3:6: bad: ", 0), 0u);

  EXPECT_EQ(*r.Get("i").Integer(-5, 5), -3);
  EXPECT_EQ(ErrorOf(r.Get("i").Integer(0, 10)),
            "f.yml:4:4: i: expected an integer between 0 and 10, got \"-3\"");
  // A quoted number is a string (YAML 1.2 core schema), as a quoted boolean is.
  EXPECT_EQ(ErrorOf(r.Get("q").Integer(0, 10)),
            "f.yml:5:4: q: expected an integer between 0 and 10, got the quoted string \"5\"");
  EXPECT_FALSE(r.Get("f").Integer(0, 10).has_value());

  EXPECT_DOUBLE_EQ(*r.Get("f").Number(0, 10), 2.5);
  EXPECT_EQ(ErrorOf(r.Get("f").Number(3, 10)), "f.yml:6:4: f: must be between 3 and 10, got 2.5");
  EXPECT_NE(ErrorOf(r.Get("big").Number(0, 10)).find("expected a number"), std::string::npos);
  EXPECT_NE(ErrorOf(r.Get("q").Number(0, 10)).find("expected a number"), std::string::npos);

  EXPECT_EQ(*r.Get("sz").Size(0, 1ull << 40), 64u << 10);
  EXPECT_EQ(*r.Get("mb").Size(0, 1ull << 40), 4u << 20);
  EXPECT_EQ(*r.Get("gb").Size(0, 1ull << 40), 1ull << 30);
  EXPECT_EQ(*r.Get("raw").Size(64, 65536), 65536u);
  EXPECT_EQ(ErrorOf(r.Get("mb").Size(64, 1 << 20)),
            "f.yml:9:5: mb: expected 64 to 1048576 bytes (a number, or with KiB, MiB, GiB), got "
            "\"4MiB\"");
  EXPECT_FALSE(r.Get("neg").Size(0, 100).has_value());
}

TEST(YamlReaderTest, lists_maps_and_unknown_keys) {
  const YamlDocument doc =
      Load("l: [a, b]\nbad: [a, [b]]\nm: {x: 1, y: two}\nnested: {x: {y: 1}}\ns: 5\n");
  const YamlValue& r = doc.root();
  EXPECT_EQ(*r.Get("l").StringList(), (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(r.Get("absent").StringList()->empty());
  EXPECT_EQ(ErrorOf(r.Get("bad").StringList()), "f.yml:2:10: bad[1]: must be a scalar");
  EXPECT_EQ(ErrorOf(r.Get("s").Items()), "f.yml:5:4: s: must be a list");
  const auto map = r.Get("m").StringMap();
  ASSERT_TRUE(map.has_value());
  EXPECT_EQ(map->at("y"), "two");
  EXPECT_EQ(ErrorOf(r.Get("nested").StringMap()), "f.yml:4:13: nested.x: must be a scalar");
  EXPECT_EQ(ErrorOf(r.Get("s").Entries()), "f.yml:5:4: s: must be a mapping");

  auto entries = r.Get("m").Entries();
  ASSERT_TRUE(entries.has_value());
  ASSERT_EQ(entries->size(), 2u);
  EXPECT_EQ((*entries)[1].key, "y");
  EXPECT_EQ((*entries)[1].key_node.Where(), "f.yml:3:11");
  EXPECT_EQ((*entries)[1].value.path(), "m.y");

  static constexpr std::string_view kKnown[] = {"x", "z"};
  EXPECT_EQ(r.Get("m").CheckKeys(kKnown).message(), "f.yml:3:11: m.y: unknown key (known: x, z)");
  EXPECT_EQ(r.Get("m").CheckKeys(kKnown, "field").message(),
            "f.yml:3:11: m.y: unknown field (known: x, z)");
  static constexpr std::string_view kAll[] = {"x", "y"};
  EXPECT_TRUE(r.Get("m").CheckKeys(kAll).ok());
  EXPECT_TRUE(r.Get("absent").CheckKeys(kAll).ok());
  // A key that is itself a list or mapping is refused, not thrown.
  EXPECT_NE(ErrorOf(Load("? [a]\n: 1\n").root().Entries()).find("keys must be strings"),
            std::string::npos);
}

TEST(YamlReaderTest, the_document_refuses_duplicates_aliases_and_bad_syntax) {
  auto duplicate = YamlDocument::Parse("a:\n  b: 1\n  b: 2\n", "f.yml");
  ASSERT_FALSE(duplicate.has_value());
  EXPECT_EQ(duplicate.error().message(),
            "f.yml:3:3: a.b: duplicate key (each key may appear once in a mapping)");
  auto alias = YamlDocument::Parse("a: &x 1\nb: *x\n", "f.yml");
  ASSERT_FALSE(alias.has_value());
  EXPECT_NE(alias.error().message().find("alias"), std::string::npos);
  auto syntax = YamlDocument::Parse("a: [1, 2\n", "f.yml");
  ASSERT_FALSE(syntax.has_value());
  EXPECT_NE(syntax.error().message().find("not valid YAML"), std::string::npos);
  std::string deep;
  for (int i = 0; i < 80; ++i) deep += "[";
  for (int i = 0; i < 80; ++i) deep += "]";
  auto nested = YamlDocument::Parse(deep, "f.yml");
  ASSERT_FALSE(nested.has_value());
  EXPECT_NE(nested.error().message().find("nested deeper than 64 levels"), std::string::npos);
  for (const char* empty : {"", "# only a comment\n"}) {
    auto document = YamlDocument::Parse(empty, "f.yml");
    ASSERT_TRUE(document.has_value());
    EXPECT_TRUE(document->empty());
    EXPECT_TRUE(document->root().Entries()->empty());
  }
}

// line(): what the scenario loader keeps of an event for the simulator's later checks.
TEST(YamlReaderTest, line_is_the_values_or_its_keys) {
  const YamlDocument doc = Load("events:\n  - at: 5s\n  - {at: 6s}\nbare:\n");
  auto events = doc.root().Get("events").Items();
  ASSERT_TRUE(events.has_value());
  ASSERT_EQ(events->size(), 2u);
  EXPECT_EQ((*events)[0].line(), 2);
  EXPECT_EQ((*events)[1].line(), 3);
  EXPECT_EQ(doc.root().Get("bare").line(), 4);  // no value: marked at the key
  EXPECT_EQ(Load("").root().line(), 0);         // no mark at all
}

// a0: [x, x, ...]; aN: [*aN-1 × 10]: 10^levels leaves for a walk, a few hundred bytes of text.
std::string Laughs(int levels) {
  std::string text = "a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n";
  for (int i = 1; i <= levels; ++i) {
    const std::string prev = "*a" + std::to_string(i - 1);
    text += "a" + std::to_string(i) + ": &a" + std::to_string(i) + " [";
    for (int j = 0; j < 10; ++j) text += (j ? ", " : "") + prev;
    text += "]\n";
  }
  return text;
}

// Issue 39: nested anchors ("billion laughs") cost one linear scan, not ×10 a level of every walk.
TEST(YamlReaderTest, laughs_at_ten_levels_are_refused_at_the_first_alias) {
  const std::string text = Laughs(10);
  ASSERT_LT(text.size(), 800u);
  const auto start = std::chrono::steady_clock::now();
  auto document = YamlDocument::Parse(text, "laughs.yml");
  const auto took = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(document.has_value());
  EXPECT_EQ(document.error().code(), StatusCode::kInvalidArgument);
  // The first alias, on line 2, is named; no bound on time here (it is one linear scan), the
  // figure is printed for the note.
  EXPECT_EQ(document.error().message().rfind("laughs.yml:2:", 0), 0u) << document.error().message();
  EXPECT_NE(document.error().message().find("alias"), std::string::npos);
  std::printf("laughs at 10 levels (%zu bytes) refused in %.3f ms\n", text.size(),
              std::chrono::duration<double, std::milli>(took).count());
}

TEST(YamlReaderTest, an_alias_anywhere_is_refused_and_a_lone_anchor_is_not) {
  for (const char* text : {"a: &x 1\nb: *x\n", "hooks:\n  - &h {name: a}\n  - *h\n",
                           "base: &b {x: 1}\nother:\n  <<: *b\n"}) {
    auto document = YamlDocument::Parse(text, "f.yml");
    ASSERT_FALSE(document.has_value()) << text;
    EXPECT_NE(document.error().message().find("alias"), std::string::npos)
        << document.error().message();
  }
  // An anchor that nothing refers to is harmless and accepted.
  EXPECT_EQ(*Load("a: &x 1\n").root().Get("a").Integer(0, 9), 1);
}

TEST(YamlReaderTest, the_node_budget_is_checked_before_a_tree_exists) {
  std::string big = "[";
  for (size_t i = 0; i <= kMaxYamlNodes; ++i) big += "1,";
  big += "1]\n";
  auto huge = YamlDocument::Parse(big, "big.yml");
  ASSERT_FALSE(huge.has_value());
  EXPECT_EQ(huge.error().message().rfind("big.yml:1:", 0), 0u) << huge.error().message();
  EXPECT_NE(huge.error().message().find("more than 100000 YAML nodes"), std::string::npos)
      << huge.error().message();
}

}  // namespace
}  // namespace fabricwatch
