// The pass compile_arithmetic (passes.hpp): every fused kernel with a run of at least two
// arithmetic instructions gets its machine code (arith_jit.hpp).
#include <memory>

#include "arith_jit.hpp"
#include "passes.hpp"

namespace tenferro::exec {

ExecProgram compile_arithmetic(ExecProgram program) {
  const VectorIsa isa = vector_isa();
  const VectorMathTable& table = vector_math();
  for (Step& step : program.steps) {
    if (step.kind != StepKind::Fused || step.fused->code.size() < 2) continue;
    auto compiled = compile_runs(*step.fused, table, isa);
    if (!compiled) continue;
    auto kernel = std::make_shared<FusedKernel>(*step.fused);
    kernel->compiled = std::move(compiled);
    step.fused = std::move(kernel);
  }
  return program;
}

}  // namespace tenferro::exec
