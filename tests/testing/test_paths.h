#pragma once
// Where the test data lives, and golden-file comparison.
//
// FABRICWATCH_SOURCE_DIR is set by tests/CMakeLists.txt at compile time.
// Goldens: ExpectGolden() compares text with tests/golden/<relative>; run a test binary with
// UPDATE_GOLDEN=1 in the environment to rewrite the files, then review `git diff tests/golden`.

#include <string>
#include <string_view>
#include <vector>

#include <prometheus/metric_family.h>

namespace fabricwatch::testing {

std::string SourcePath(std::string_view relative);   // <repo>/<relative>
std::string FixturePath(std::string_view relative);  // <repo>/tests/fixtures/<relative>
std::string ReadTextFile(const std::string& path);

// gtest assertion helper: EXPECT-style failure with a unified-ish diff when text differs.
void ExpectGolden(const std::string& actual, std::string_view golden_relative);

// Renders families as the text exposition (sorted), as /metrics would.
std::string Exposition(std::vector<prometheus::MetricFamily> families);

}  // namespace fabricwatch::testing
