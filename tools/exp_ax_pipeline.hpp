#pragma once
// The scalar example f(x) = exp(a*x) (docs/design.md, "Worked examples") through every stage of
// the pipeline, printed by the real code. docs/tidu.md embeds this output; a test keeps them in sync.
#include <ostream>

namespace tools {

/// Prints build, linearize, linear_transpose, materialize_merge, compile, run and second order.
void print_exp_ax_pipeline(std::ostream& os);

}  // namespace tools
