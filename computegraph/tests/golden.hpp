#pragma once
// Golden IR files of computegraph's tests live in computegraph/tests/golden/ (helper:
// testing/golden_files.hpp; UPDATE_GOLDEN=1 rewrites them).
#include "golden_files.hpp"

namespace cgtest {
inline ::testing::AssertionResult matches_golden(const std::string& name, const std::string& actual,
                                                 const std::string& input = {}) {
  return golden::matches(COMPUTEGRAPH_GOLDEN_DIR, name, actual, input);
}
}  // namespace cgtest
