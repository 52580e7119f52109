#pragma once
// SplitProgram: a compiled program run for many directions at one primal point (Jacobian columns
// and rows, Hessian columns), split by computegraph::unzip into
//   fixed    everything that does not depend on the direction (the primal values and the
//            derivative factors: exp(a x) in d exp(a x) = exp(a x) a dx), run once per point;
//   varying  the part linear in the direction, run once per direction on fixed's residuals.
// This is the unzipping of Radul et al., *You Only Linearize Once* (section 6, seen as partial
// evaluation): the primal part is evaluated once instead of once per column.
//
// It needs an op set that can name residual inputs (ResidualKeyed). For other op sets `fixed` is
// empty and `varying` is the whole program; prepare() then passes the fixed inputs through, so
// callers do not distinguish the two.
#include <memory>
#include <numeric>
#include <span>
#include <vector>

#include "computegraph/compile_cache.hpp"
#include "computegraph/unzip.hpp"

namespace tidu {

/// An op set whose residual inputs have keys: `Op::residual_key(value, index)` returns the input
/// key that stands for `value` as the index-th residual of an unzipped program. Keys must be
/// distinct for distinct indices, differ from every user and tangent key, and carry the value's
/// type where the op set's keys hold one.
template <class Op>
concept ResidualKeyed = requires(const computegraph::ValueKey<Op>& value, std::size_t index) {
  { Op::residual_key(value, index) } -> std::same_as<typename Op::InputKey>;
};

template <computegraph::EvaluableGraphOperation Op>
class SplitProgram {
 public:
  using Operand = typename Op::Operand;
  using Values = std::vector<Operand>;
  using ProgramPtr = std::shared_ptr<const computegraph::CompiledProgram<Op>>;
  using Keys = std::vector<computegraph::ValueKey<Op>>;

  /// The program computing `outputs` over `view` with inputs `inputs` (which must be input keys),
  /// of which the last `varying_count` vary. Without residual keys the whole program comes from
  /// `cache`.
  SplitProgram(computegraph::CompileCache<Op>& cache, const computegraph::ResolvedView<Op>& view,
               const Keys& outputs, const Keys& inputs, std::size_t varying_count)
      : fixed_input_count_(inputs.size() - varying_count) {
    const std::span<const computegraph::ValueKey<Op>> outs(outputs), ins(inputs);
    if constexpr (ResidualKeyed<Op>) {
      const auto graph = computegraph::materialize_merge(view, outs, ins);
      std::vector<std::size_t> varying(varying_count);
      std::iota(varying.begin(), varying.end(), fixed_input_count_);
      auto parts = computegraph::unzip(graph, std::span<const std::size_t>(varying),
                                       [](const computegraph::ValueKey<Op>& value, std::size_t index) {
                                         return Op::residual_key(value, index);
                                       });
      fixed_ = std::make_shared<const computegraph::CompiledProgram<Op>>(computegraph::compile(parts.fixed));
      varying_ = std::make_shared<const computegraph::CompiledProgram<Op>>(computegraph::compile(parts.varying));
    } else {
      varying_ = cache.get_or_compile(view, outs, ins);
    }
  }

  /// The inputs of a per-direction run up to the directions: the residuals of `fixed_inputs`
  /// (the program's inputs but the varying ones). Append the directions and call run().
  Values prepare(std::span<const Operand> fixed_inputs) const {
    if (!fixed_) return Values(fixed_inputs.begin(), fixed_inputs.end());
    return computegraph::run_compiled(*fixed_, fixed_inputs);
  }
  /// The program's outputs for prepare()'s values followed by the directions.
  Values run(std::span<const Operand> prepared_and_directions) const {
    return computegraph::run_compiled(*varying_, prepared_and_directions);
  }

  std::size_t fixed_input_count() const { return fixed_input_count_; }
  /// The part run per direction (the whole program when the op set has no residual keys).
  const computegraph::CompiledProgram<Op>& varying() const { return *varying_; }
  /// The part run once per point, or nullptr.
  const computegraph::CompiledProgram<Op>* fixed() const { return fixed_.get(); }

 private:
  std::size_t fixed_input_count_;
  ProgramPtr fixed_, varying_;
};

}  // namespace tidu
