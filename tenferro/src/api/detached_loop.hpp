#pragma once
// Internal to the control-flow API: the while_loop that fixed_point and root solve with.
#include "tenferro/control_flow.hpp"

namespace tenferro::detail {

/// while_loop(cond, body, init) whose every input is detached: the carry's initial values and
/// every value the callables capture from enclosing traces pass through stop_gradient (float and
/// complex ones; others carry no derivative). The implicit solvers iterate on detached values and
/// attach the derivative afterwards (implicit-function theorem); a captured value left live would
/// be differentiated twice (through the iterations and through the attached step), and reverse
/// mode would meet while_loop's missing transpose.
TracedList detached_while_loop(const LoopCondition& cond, const LoopBody& body, const TracedList& init);

}  // namespace tenferro::detail
