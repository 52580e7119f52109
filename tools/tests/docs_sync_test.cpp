// docs/tidu.md embeds the output of tools::print_exp_ax_pipeline between two marker lines; this
// test fails when the code's printed IR and the documentation drift apart.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "exp_ax_pipeline.hpp"

TEST(DocsSync, TiduPipelineListingMatchesTheCode) {
  std::ifstream doc(TENFERRO_DOCS_DIR "/tidu.md");
  ASSERT_TRUE(doc) << "cannot open docs/tidu.md";
  std::stringstream text;
  text << doc.rdbuf();
  const std::string s = text.str();
  const std::string begin = "<!-- BEGIN print_pipeline -->\n```\n";
  const std::string end = "```\n<!-- END print_pipeline -->";
  auto b = s.find(begin);
  auto e = s.find(end);
  ASSERT_NE(b, std::string::npos);
  ASSERT_NE(e, std::string::npos);
  const std::string embedded = s.substr(b + begin.size(), e - b - begin.size());
  std::ostringstream actual;
  tools::print_exp_ax_pipeline(actual);
  EXPECT_EQ(embedded, actual.str()) << "regenerate with ./build/release/tools/print_pipeline";
}
