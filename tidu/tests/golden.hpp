#pragma once
// Golden IR files of tidu's tests live in tidu/tests/golden/ (helper: testing/golden_files.hpp;
// UPDATE_GOLDEN=1 rewrites them; check each by hand against the worked examples of docs/design.md
// before committing).
#include "golden_files.hpp"

namespace tidutest {
inline ::testing::AssertionResult matches_golden(const std::string& name, const std::string& actual,
                                                 const std::string& input = {}) {
  return golden::matches(TIDU_GOLDEN_DIR, name, actual, input);
}
}  // namespace tidutest
