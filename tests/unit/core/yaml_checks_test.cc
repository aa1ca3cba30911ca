// LoadStrictYaml (issue 39): aliases are refused in every file the agent parses, so nested
// anchors ("billion laughs") cost one linear scan instead of ×10 a level in every tree walk.

#include "collectors/core/yaml_checks.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>

namespace fabricwatch {
namespace {

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

TEST(LoadStrictYamlTest, laughs_at_ten_levels_are_refused_at_once) {
  const std::string text = Laughs(10);
  ASSERT_LT(text.size(), 800u);
  const auto start = std::chrono::steady_clock::now();
  auto root = LoadStrictYaml(text, "laughs.yml");
  const auto took = std::chrono::steady_clock::now() - start;
  ASSERT_FALSE(root.has_value());
  EXPECT_EQ(root.error().code(), StatusCode::kInvalidArgument);
  // The first alias, on line 2, is named; no bound on time here (it is one linear scan), the
  // figure is printed for the note.
  EXPECT_EQ(root.error().message().rfind("laughs.yml:2:", 0), 0u) << root.error().message();
  EXPECT_NE(root.error().message().find("alias"), std::string::npos);
  std::printf("laughs at 10 levels (%zu bytes) refused in %.3f ms\n", text.size(),
              std::chrono::duration<double, std::milli>(took).count());
}

TEST(LoadStrictYamlTest, one_alias_anywhere_is_refused) {
  for (const char* text : {"a: &x 1\nb: *x\n", "hooks:\n  - &h {name: a}\n  - *h\n",
                           "base: &b {x: 1}\nother:\n  <<: *b\n"}) {
    auto root = LoadStrictYaml(text, "f.yml");
    ASSERT_FALSE(root.has_value()) << text;
    EXPECT_NE(root.error().message().find("alias"), std::string::npos) << root.error().message();
  }
}

TEST(LoadStrictYamlTest, plain_documents_load_and_empty_is_null) {
  auto root = LoadStrictYaml("a: 1\nb: [x, y]\nc: {d: e}\n", "f.yml");
  ASSERT_TRUE(root.has_value()) << root.error().message();
  EXPECT_EQ((*root)["b"][1].Scalar(), "y");
  auto empty = LoadStrictYaml("# only a comment\n", "f.yml");
  ASSERT_TRUE(empty.has_value());
  EXPECT_TRUE(empty->IsNull());
  // An anchor that nothing refers to is harmless and accepted.
  EXPECT_TRUE(LoadStrictYaml("a: &x 1\n", "f.yml").has_value());
}

TEST(LoadStrictYamlTest, syntax_errors_and_the_node_budget_name_the_place) {
  auto bad = LoadStrictYaml("a: [1, 2\n", "f.yml");
  ASSERT_FALSE(bad.has_value());
  EXPECT_NE(bad.error().message().find("not valid YAML"), std::string::npos);
  std::string big = "[";
  for (size_t i = 0; i <= kMaxYamlNodes; ++i) big += "1,";
  big += "1]\n";
  auto huge = LoadStrictYaml(big, "big.yml");
  ASSERT_FALSE(huge.has_value());
  EXPECT_NE(huge.error().message().find("more than 100000 YAML nodes"), std::string::npos)
      << huge.error().message();
}

}  // namespace
}  // namespace fabricwatch
