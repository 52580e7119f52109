#pragma once
// Golden files for printed IR, shared by every library's tests.
//
//   EXPECT_TRUE(golden::matches(GOLDEN_DIR, "exp_ax_L1.txt", to_string(*l1.graph), to_string(*f0)));
//
// compares the text with <dir>/<name>. On a mismatch the failure shows the input IR (when given),
// the actual and the expected text, and the first line that differs. UPDATE_GOLDEN=1 (re)writes
// the golden files instead of comparing; every rewritten file must be read and checked by hand
// (against the worked examples of docs/design.md where they apply) before it is committed.
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

namespace golden {

inline bool update_requested() {
  const char* value = std::getenv("UPDATE_GOLDEN");
  return value != nullptr && std::string(value) != "" && std::string(value) != "0";
}

/// Line number (from 1) of the first line where `a` and `b` differ.
inline std::size_t first_difference_line(const std::string& a, const std::string& b) {
  std::size_t line = 1;
  for (std::size_t i = 0; i < a.size() && i < b.size() && a[i] == b[i]; ++i) line += a[i] == '\n';
  return line;
}

inline ::testing::AssertionResult matches(const std::string& dir, const std::string& name,
                                          const std::string& actual, const std::string& input = {}) {
  const std::string path = dir + "/" + name;
  if (update_requested()) {
    std::ofstream out(path, std::ios::binary);
    out << actual;
    if (!out) return ::testing::AssertionFailure() << "cannot write golden file " << path;
    return ::testing::AssertionSuccess();
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return ::testing::AssertionFailure() << "missing golden file " << path
                                         << " (UPDATE_GOLDEN=1 writes it; review it by hand)\n--- actual ---\n"
                                         << actual;
  }
  std::ostringstream expected;
  expected << in.rdbuf();
  if (expected.str() == actual) return ::testing::AssertionSuccess();
  auto failure = ::testing::AssertionFailure();
  failure << "printed IR differs from " << path << " at line "
          << first_difference_line(actual, expected.str()) << "\n";
  if (!input.empty()) failure << "--- input ---\n" << input;
  failure << "--- actual ---\n" << actual << "--- expected ---\n" << expected.str();
  return failure;
}

}  // namespace golden
