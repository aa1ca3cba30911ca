#include "tests/testing/test_paths.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "exporter/http/render.h"

namespace fabricwatch::testing {

std::string SourcePath(std::string_view relative) {
  return std::string(FABRICWATCH_SOURCE_DIR) + "/" + std::string(relative);
}

std::string FixturePath(std::string_view relative) {
  return SourcePath("tests/fixtures/" + std::string(relative));
}

std::string ReadTextFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

void ExpectGolden(const std::string& actual, std::string_view golden_relative) {
  const std::string path = SourcePath("tests/golden/" + std::string(golden_relative));
  const char* update = std::getenv("UPDATE_GOLDEN");
  if (update != nullptr && std::string_view(update) == "1") {
    std::filesystem::create_directories(std::filesystem::path(path).parent_path());
    std::ofstream(path) << actual;
    return;
  }
  if (!std::filesystem::exists(path)) {
    ADD_FAILURE() << "golden file " << path
                  << " is missing; run the test with UPDATE_GOLDEN=1 to create it";
    return;
  }
  const std::string expected = ReadTextFile(path);
  if (expected == actual) return;
  // Show the first differing lines, which is what a reviewer needs.
  std::istringstream a(actual), e(expected);
  std::string la, le;
  int line = 0;
  std::string diff;
  int shown = 0;
  while (shown < 10) {
    bool ga = static_cast<bool>(std::getline(a, la));
    bool ge = static_cast<bool>(std::getline(e, le));
    if (!ga && !ge) break;
    ++line;
    if (!ga) la = "<end of output>";
    if (!ge) le = "<end of golden>";
    if (la != le) {
      diff += "line " + std::to_string(line) + "\n  golden: " + le + "\n  actual: " + la + "\n";
      ++shown;
    }
  }
  ADD_FAILURE() << "output differs from golden " << path
                << " (UPDATE_GOLDEN=1 rewrites it):\n" << diff;
}

std::string Exposition(std::vector<prometheus::MetricFamily> families) {
  return exporter::RenderText(families);
}

}  // namespace fabricwatch::testing
