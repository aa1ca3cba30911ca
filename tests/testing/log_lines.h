#pragma once
// Counting lines of a captured log, for tests that check "one line when a state starts, one when
// it ends" (issue 19).

#include <initializer_list>
#include <sstream>
#include <string>
#include <string_view>

namespace fabricwatch::testing {

// Counts the lines of `log` that contain every one of `needles`.
inline int CountLogLines(const std::string& log, std::initializer_list<std::string_view> needles) {
  std::istringstream lines(log);
  int n = 0;
  for (std::string line; std::getline(lines, line);) {
    bool all = true;
    for (std::string_view needle : needles) all &= line.find(needle) != std::string::npos;
    n += all ? 1 : 0;
  }
  return n;
}

}  // namespace fabricwatch::testing
