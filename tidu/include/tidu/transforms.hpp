#pragma once
// User-level transforms over primal graphs: jvp, vjp, grad, value_and_grad, hvp, jacfwd, jacrev,
// hessian, derivative (k-th order along one direction). Generic over any op set that is both a tidu::Primitive and evaluable.
//
// A function is a primal Graph: its declared inputs, in order, are the arguments; its outputs are
// the results. Each transform linearizes (and transposes) once per function and keeps the result;
// programs come from a CompileCache, so a repeated call costs one cache look-up plus the runs.
// Jacobians and Hessians run one compiled linear program per column (jacfwd, hessian) or row
// (jacrev). Those programs are split (split_program.hpp) so that what does not depend on the
// direction (the primal values, the derivative factors) is computed once per call, when the op
// set names residual inputs (ResidualKeyed).
//
// Arguments: every vector of primals, tangents, directions and cotangents-of-inputs is aligned with
// all of f's inputs. Only the differentiable ones (see `differentiable`, `set_wrt`) are
// differentiated; the others get zero derivatives.
//
// Complex operands (docs/design.md, "Complex numbers"): vjp applies the adjoint for
// <a, b> = Re(sum conj(a) b); grad of a real loss L of z = x + iy is dL/dx + i dL/dy; jacrev
// conjugates the adjoint rows, so for holomorphic functions jacfwd and jacrev agree.
#include <algorithm>
#include <memory>
#include <mutex>
#include <span>
#include <unordered_map>
#include <utility>
#include <vector>

#include "computegraph/bind_values.hpp"
#include "computegraph/compile_cache.hpp"
#include "tidu/linear_transpose.hpp"
#include "tidu/detail/operand_helpers.hpp"
#include "tidu/detail/program_keys.hpp"
#include "tidu/linearize.hpp"
#include "tidu/operand_space.hpp"
#include "tidu/split_program.hpp"

namespace tidu {

template <class Op>
concept DifferentiableProgram = Primitive<Op> && computegraph::EvaluableGraphOperation<Op> &&
                                std::default_initializable<typename Op::Context>;

template <DifferentiableProgram Op>
class Transforms : private detail::OperandHelpers<typename Op::Operand> {
  using Helpers = detail::OperandHelpers<typename Op::Operand>;
  using Helpers::fill_column, Helpers::fill_zeros, Helpers::for_each_basis,
      Helpers::split_outputs, Helpers::total_size;

 public:
  using Operand = typename Op::Operand;
  using Space = OperandSpace<Operand>;
  using Scalar = typename Space::Scalar;
  using Function = computegraph::GraphPtr<Op>;
  using Values = std::vector<Operand>;

  explicit Transforms(std::size_t cache_capacity = 256)
      : cache_(std::make_shared<computegraph::CompileCache<Op>>(cache_capacity)) {}
  /// Shares `cache` with other Transforms objects (programs of equal structure are compiled once).
  explicit Transforms(std::shared_ptr<computegraph::CompileCache<Op>> cache) : cache_(std::move(cache)) {}

  /// f(x).
  Values eval(const Function& f, std::span<const Operand> x) {
    auto& d = derived(f);
    return computegraph::run_compiled(*program(d.primal_program, f, [&] { return std::pair{d.outputs, d.inputs}; },
                   {f}), x);
  }

  /// (f(x), J(x) dx). Outputs that do not depend on x get zero tangents.
  std::pair<Values, Values> jvp(const Function& f, std::span<const Operand> x,
                                std::span<const Operand> dx) {
    check_arity("jvp", f, x, dx.size(), "tangents");
    auto& d = derived(f);
    const auto& lin = linearized(d);
    auto prog = program(d.jvp_program, f, [&] { return detail::jvp_keys(d.inputs, d.outputs, lin); }, {lin.graph});
    Values in(x.begin(), x.end());
    for (std::size_t j : d.wrt_pos) in.push_back(dx[j]);
    Values out = computegraph::run_compiled(*prog, std::span<const Operand>(in));
    return split_outputs(out, d.outputs.size(), lin.tangent_outputs, [&](std::size_t i) {
      return Space::zeros_like(out[i]);
    });
  }

  /// (f(x), J(x)^* ct): one cotangent per output.
  std::pair<Values, Values> vjp(const Function& f, std::span<const Operand> x,
                                std::span<const Operand> ct) {
    auto& d = derived(f);
    if (ct.size() != d.outputs.size()) {
      throw computegraph::BindingError("vjp: expected " + std::to_string(d.outputs.size()) +
                                       " cotangents (one per output), got " +
                                       std::to_string(ct.size()));
    }
    check_arity("vjp", f, x, x.size(), "primals");
    const auto& lin = linearized(d);
    const auto& tr = transposed(d);
    auto prog = vjp_program(d);
    Values in(x.begin(), x.end());
    for (std::size_t i = 0; i < lin.tangent_outputs.size(); ++i) {
      if (lin.tangent_outputs[i]) in.push_back(ct[i]);
    }
    Values out = computegraph::run_compiled(*prog, std::span<const Operand>(in));
    Values primal(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(d.outputs.size()));
    return {std::move(primal), per_argument(out, gradient_layout(d, tr), x)};
  }

  /// (f(x), grad f(x)) for a function with one output (a real loss, for the complex convention).
  std::pair<Operand, Values> value_and_grad(const Function& f, std::span<const Operand> x) {
    auto& d = derived(f);
    Operand one = unit_seed(d, x);
    auto [values, grads] = vjp(f, x, std::span<const Operand>(&one, 1));
    return {values[0], grads};
  }
  Values grad(const Function& f, std::span<const Operand> x) { return value_and_grad(f, x).second; }

  /// Hessian-vector product H(x) v of a one-output function (forward-over-reverse).
  Values hvp(const Function& f, std::span<const Operand> x, std::span<const Operand> v) {
    check_arity("hvp", f, x, v.size(), "directions");
    auto& d = derived(f);
    auto prog = hvp_program(d);
    const auto& tr = *d.transpose;
    Operand seed = unit_seed(d, x);  // also checks that f has one output
    Values in(x.begin(), x.end());
    // The transposed graph has no seed input when f does not depend on the differentiated inputs.
    if (!tr.tangent_inputs.empty()) in.push_back(std::move(seed));
    for (std::size_t j : d.wrt_pos) in.push_back(v[j]);
    Values out = computegraph::run_compiled(*prog, std::span<const Operand>(in));
    return per_argument(out, hvp_layout(d), x);
  }

  /// Jacobian: rows are output coordinates, columns input coordinates. The jvp program is split
  /// (SplitProgram): its direction-independent part runs once, its linear part once per column.
  /// `schedule` runs the columns (hessian_columns' contract).
  template <class Schedule = SequentialColumns>
  Matrix<Scalar> jacfwd(const Function& f, std::span<const Operand> x, Schedule&& schedule = {}) {
    check_arity("jacfwd", f, x, x.size(), "primals");
    const Values y = eval(f, x);
    Matrix<Scalar> J(total_size(y), total_size(x));
    jacobian_columns_at(f, x, y, [&](std::size_t col, const Values& tangents) {
      fill_column(J, col, tangents, [](const Scalar& s) { return s; });
    }, schedule);
    return J;
  }

  /// The Jacobian column by column, for callers that store it their own way: for each coordinate
  /// `col` of the differentiated arguments (numbered across all arguments, as in jacfwd()),
  /// visit(col, t) with t = J(x) e_col, one operand per output (zeros for outputs that do not
  /// depend on x). `schedule` as in hessian_columns.
  template <class Visit, class Schedule = SequentialColumns>
  void jacobian_columns(const Function& f, std::span<const Operand> x, Visit&& visit, Schedule&& schedule = {}) {
    check_arity("jacfwd", f, x, x.size(), "primals");
    jacobian_columns_at(f, x, eval(f, x), visit, schedule);
  }

  /// Jacobian by rows (one run of the split vjp program's linear part per output coordinate).
  /// `schedule` runs the rows (hessian_columns' contract, with rows for columns).
  template <class Schedule = SequentialColumns>
  Matrix<Scalar> jacrev(const Function& f, std::span<const Operand> x, Schedule&& schedule = {}) {
    check_arity("jacrev", f, x, x.size(), "primals");
    const Values y = eval(f, x);
    Matrix<Scalar> J(total_size(y), total_size(x));
    std::vector<std::size_t> column_of(x.size(), 0);  // first column of each argument
    for (std::size_t j = 1; j < x.size(); ++j) column_of[j] = column_of[j - 1] + Space::size(x[j - 1]);
    jacobian_rows_at(f, x, y, [&](std::size_t row, const Values& c) {
      for (std::size_t j = 0; j < c.size(); ++j) {
        for (std::size_t m = 0; m < Space::size(c[j]); ++m) J(row, column_of[j] + m) = Space::conj(Space::coordinate(c[j], m));
      }
    }, schedule);
    return J;
  }

  /// The Jacobian row by row: for each coordinate `row` of the outputs that depend on x (numbered
  /// across all outputs, as in jacrev()), visit(row, c) with c = J(x)^H e_row aligned with x, so
  /// that J(row, column of coordinate m of argument j) = conj(c[j]_m); zeros for arguments not
  /// differentiated or not reached. Rows of outputs that do not depend on x are not visited.
  /// `schedule` as in hessian_columns.
  template <class Visit, class Schedule = SequentialColumns>
  void jacobian_rows(const Function& f, std::span<const Operand> x, Visit&& visit, Schedule&& schedule = {}) {
    check_arity("jacrev", f, x, x.size(), "primals");
    jacobian_rows_at(f, x, eval(f, x), visit, schedule);
  }

  /// Hessian of a one-output function (one run of the split hvp program's linear part per column).
  Matrix<Scalar> hessian(const Function& f, std::span<const Operand> x) {
    Matrix<Scalar> H(total_size(x), total_size(x));
    hessian_columns(f, x, [&](std::size_t col, const Values& hv) {
      fill_column(H, col, hv, [](const Scalar& s) { return s; });
    });
    return H;
  }

  /// The Hessian column by column, for callers that store it their own way: for each coordinate
  /// `col` of the differentiated arguments (numbered across all arguments, as in hessian()),
  /// visit(col, hv) with hv = H(x) e_col aligned with x (zeros for arguments not differentiated).
  /// The hvp program is split (SplitProgram): the primal and gradient parts run once per call,
  /// the part linear in the direction once per column.
  ///
  /// `schedule(count, body)` runs body(begin, end) over the columns' range [0, count) of the
  /// differentiated coordinates (SequentialColumns: all on this thread). A schedule that calls
  /// body on several threads at once needs an op set whose compiled programs may run
  /// concurrently, and a visit that may be called concurrently for different columns; each
  /// column's values do not depend on the schedule.
  template <class Visit, class Schedule = SequentialColumns>
  void hessian_columns(const Function& f, std::span<const Operand> x, Visit&& visit, Schedule&& schedule = {}) {
    check_arity("hessian", f, x, x.size(), "primals");
    auto& d = derived(f);
    const auto& split = hvp_split(d);
    const auto& tr = *d.transpose;
    Values fixed(x.begin(), x.end());
    if (!tr.tangent_inputs.empty()) fixed.push_back(unit_seed(d, x));
    Values prepared = split.prepare(fixed);
    const std::size_t first = prepared.size();
    for (std::size_t j : d.wrt_pos) prepared.push_back(Space::zeros_like(x[j]));
    const std::vector<std::ptrdiff_t> layout = hvp_layout(d);
    const Values zeros = zeros_like_each(x);
    Helpers::sweep_scheduled(x, Helpers::basis_segments(x, d.wrt_pos), prepared, first, schedule,
                             [&](std::size_t col, const Values& in) {
      Values out = split.run(std::span<const Operand>(in));
      visit(col, static_cast<const Values&>(per_argument(out, layout, zeros)));
    });
  }

  /// The k-th derivative of f at x along one direction, f^(k)(x)[v, ..., v], for each output
  /// (k = 0: f(x); k = 1: jvp's tangent). Built as (resolve -> linearize_along) k times with every
  /// pass seeded by the same direction inputs, so equal terms of different passes share keys and
  /// merge: the program has O(k^2 n) ops for n primal ops, where fresh seeds per pass would give
  /// O(2^k n). Outputs that do not depend on x get zeros.
  Values derivative(const Function& f, std::span<const Operand> x, std::span<const Operand> v,
                    std::size_t k) {
    check_arity("derivative", f, x, v.size(), "directions");
    if (k == 0) return eval(f, x);
    auto& d = derived(f);
    const auto& lin = linearized(d);
    ProgramPtr* slot;
    {
      std::lock_guard lock(mutex_);
      slot = &d.derivative_programs[k];  // node-based map: the reference stays valid
    }
    auto [keys, present] = along_outputs(d, k);
    // An init-capture: clang++ 14 cannot capture a structured binding.
    auto prog = program(*slot, f, [&, &keys = keys] {
      auto outs = d.outputs;
      outs.insert(outs.end(), keys.begin(), keys.end());
      auto leading = d.inputs;
      for (std::size_t i = 0; i < lin.tangent_inputs.size(); ++i) leading.push_back(lin.tangent_input_key(i));
      return std::pair{outs, leading};
    }, {k == 1 ? lin.graph : d.along[k - 2]->graph});
    Values in(x.begin(), x.end());
    for (std::size_t j : d.wrt_pos) in.push_back(v[j]);
    Values out = computegraph::run_compiled(*prog, std::span<const Operand>(in));
    Values result;
    for (std::size_t i = 0; i < d.outputs.size(); ++i) result.push_back(Space::zeros_like(out[i]));
    for (std::size_t i = 0; i < present.size(); ++i) result[present[i]] = out[d.outputs.size() + i];
    return result;
  }

  computegraph::CompileCacheStats cache_stats() const { return cache_->stats(); }

  /// Differentiate `f` only with respect to the arguments marked in `mask` (all by default).
  /// Must be called before the first transform of `f`; derivatives of the other arguments are
  /// zeros (and tangents given for them are ignored).
  void set_wrt(const Function& f, std::vector<bool> mask) {
    std::lock_guard lock(mutex_);
    if (functions_.contains(f.get())) {
      throw computegraph::Error("Transforms::set_wrt: the function has already been transformed");
    }
    wrt_override_[f.get()] = std::move(mask);
  }

  /// Whether an input can carry a tangent: `Op::is_differentiable(key)` if the op set defines it
  /// (tenferro: float and complex inputs), else every input.
  static bool differentiable(const typename Op::InputKey& key) {
    if constexpr (requires { { Op::is_differentiable(key) } -> std::convertible_to<bool>; }) {
      return Op::is_differentiable(key);
    } else {
      return true;
    }
  }

 private:
  /// jacobian_columns with f(x) = y already evaluated.
  template <class Visit, class Schedule>
  void jacobian_columns_at(const Function& f, std::span<const Operand> x, const Values& y, Visit&& visit,
                           Schedule&& schedule) {
    auto& d = derived(f);
    const auto& lin = linearized(d);
    const auto& split = jvp_split(d);
    Values prepared = split.prepare(x);
    const std::size_t first = prepared.size();
    for (std::size_t j : d.wrt_pos) prepared.push_back(Space::zeros_like(x[j]));
    Helpers::sweep_scheduled(x, Helpers::basis_segments(x, d.wrt_pos), prepared, first, schedule,
                             [&](std::size_t col, const Values& in) {
      Values out = split.run(std::span<const Operand>(in));
      const Values tangents = split_outputs(out, d.outputs.size(), lin.tangent_outputs,
                                            [&](std::size_t i) { return Space::zeros_like(y[i]); }).second;
      visit(col, tangents);
    });
  }

  /// jacobian_rows with f(x) = y already evaluated.
  template <class Visit, class Schedule>
  void jacobian_rows_at(const Function& f, std::span<const Operand> x, const Values& y, Visit&& visit,
                        Schedule&& schedule) {
    auto& d = derived(f);
    const auto& tr = transposed(d);
    const auto& split = vjp_split(d);
    Values prepared = split.prepare(x);
    const std::size_t first = prepared.size();
    // The outputs that depend on x, as sweep segments over y: output i's seed sits at
    // prepared[first + slot].
    std::vector<std::size_t> seeded;
    const auto& lin = linearized(d);
    for (std::size_t i = 0; i < y.size(); ++i) {
      if (!lin.tangent_outputs[i]) continue;
      seeded.push_back(i);
      prepared.push_back(Space::zeros_like(y[i]));
    }
    const std::vector<std::ptrdiff_t> layout = gradient_layout(d, tr);
    const Values zeros = zeros_like_each(x);
    Helpers::sweep_scheduled(y, Helpers::basis_segments(y, seeded), prepared, first, schedule,
                             [&](std::size_t row, const Values& in) {
      Values out = split.run(std::span<const Operand>(in));
      visit(row, static_cast<const Values&>(per_argument(out, layout, zeros)));
    });
  }
  using Keys = std::vector<ValueKey<Op>>;

 public:
  using ProgramPtr = typename computegraph::CompileCache<Op>::ProgramPtr;

  /// The compiled program that vjp() runs for f (inputs: f's inputs, then one cotangent per output
  /// that a tangent reaches; outputs: f's outputs, then cotangents) and, per input of f, the
  /// position of its cotangent among the program's outputs (-1 where none reaches it). For callers
  /// that run the program's instructions themselves.
  std::pair<ProgramPtr, std::vector<std::ptrdiff_t>> vjp_program_with_layout(const Function& f) {
    auto& d = derived(f);
    const auto& tr = transposed(d);
    return {vjp_program(d), gradient_layout(d, tr)};
  }

  /// The positions of f's inputs that are differentiated (set_wrt, else every differentiable
  /// input), ascending: the tangent inputs of the programs below follow this order.
  const std::vector<std::size_t>& wrt_positions(const Function& f) { return derived(f).wrt_pos; }

  /// The compiled program that jvp() runs for f (inputs: f's inputs, then one tangent per
  /// wrt position; outputs: f's outputs, then the tangents of the outputs that depend on x) and,
  /// per output of f, the position of its tangent among the program's outputs (-1 where none).
  /// For callers that replay the program elsewhere (into a trace, batched by vmap).
  std::pair<ProgramPtr, std::vector<std::ptrdiff_t>> jvp_program_with_layout(const Function& f) {
    auto& d = derived(f);
    const auto& lin = linearized(d);
    ProgramPtr prog = program(d.jvp_program, f, [&] { return detail::jvp_keys(d.inputs, d.outputs, lin); }, {lin.graph});
    std::vector<std::ptrdiff_t> at(d.outputs.size(), -1);
    auto k = static_cast<std::ptrdiff_t>(d.outputs.size());
    for (std::size_t i = 0; i < at.size(); ++i) {
      if (lin.tangent_outputs[i]) at[i] = k++;
    }
    return {std::move(prog), std::move(at)};
  }

  /// The compiled program that hvp() runs for a one-output f: inputs f's inputs, then the seed
  /// (the cotangent 1 of f's output) if `seeded`, then one direction per wrt position; per input
  /// of f, the position of H v's part for it among the outputs (-1 where none).
  struct HvpProgram {
    ProgramPtr program;
    bool seeded = false;
    std::vector<std::ptrdiff_t> layout;
  };
  HvpProgram hvp_program_with_layout(const Function& f) {
    auto& d = derived(f);
    ProgramPtr prog = hvp_program(d);
    return {std::move(prog), !d.transpose->tangent_inputs.empty(), hvp_layout(d)};
  }

  /// The vjp program of f for a caller that already holds f's primal values (a tape that ran f's
  /// operations as they were recorded): its inputs are those of vjp_program_with_layout (f's
  /// inputs, then the cotangents), then one input per value that f's operations compute, in f's
  /// value order (computed_values(f)); it computes none of those again (computegraph::bind_values),
  /// only what the transpose needs beyond them. Outputs and layout as vjp_program_with_layout.
  /// Built once per function. Needs an op set that names residual inputs.
  std::pair<ProgramPtr, std::vector<std::ptrdiff_t>> vjp_program_at_values(const Function& f)
    requires ResidualKeyed<Op>
  {
    auto& d = derived(f);
    const auto& tr = transposed(d);
    ProgramPtr program = memo(d.vjp_at_values_program, [&] {
      auto [outputs, leading] = detail::vjp_keys(d.inputs, d.outputs, tr);
      const auto graph = computegraph::materialize_merge(computegraph::resolve({tr.graph}),
                                                         std::span<const ValueKey<Op>>(outputs),
                                                         std::span<const ValueKey<Op>>(leading));
      const Keys known = computed_values(*f);
      const auto bound = computegraph::bind_values(graph, std::span<const ValueKey<Op>>(known),
                                                   [](const ValueKey<Op>& value, std::size_t index) {
                                                     return Op::residual_key(value, index);
                                                   });
      return std::make_shared<const computegraph::CompiledProgram<Op>>(computegraph::compile(bound));
    });
    return {program, gradient_layout(d, tr)};
  }

  /// The keys of the values that f's operations compute, in f's value order: the extra inputs of
  /// vjp_program_at_values.
  static Keys computed_values(const computegraph::Graph<Op>& f) {
    Keys keys;
    for (computegraph::LocalValueId v = 0; v < f.values().size(); ++v) {
      if (f.values()[v].producer) keys.push_back(f.key(v));
    }
    return keys;
  }

 private:

  // ---- where each argument's derivative sits among a program's outputs --------------------------

  /// For each argument of f, the output of a vjp-layout program (primal outputs first, then the
  /// cotangents of the differentiated arguments that the transpose reaches, in wrt order) holding
  /// its cotangent, or -1.
  template <class D>
  static std::vector<std::ptrdiff_t> gradient_layout(const D& d, const LinearizedGraph<Op>& tr) {
    std::vector<std::ptrdiff_t> at(d.inputs.size(), -1);
    auto k = static_cast<std::ptrdiff_t>(d.outputs.size());
    for (std::size_t w = 0; w < d.wrt_pos.size(); ++w) {
      if (tr.tangent_outputs[w]) at[d.wrt_pos[w]] = k++;
    }
    return at;
  }
  /// The same for the hvp program: its outputs follow the gradients that exist, in wrt order, and
  /// are present where the second linearization reaches them.
  template <class D>
  static std::vector<std::ptrdiff_t> hvp_layout(const D& d) {
    std::vector<std::ptrdiff_t> at(d.inputs.size(), -1);
    std::ptrdiff_t k = 0;
    for (std::size_t w = 0, g = 0; w < d.wrt_pos.size(); ++w) {
      if (!d.transpose->tangent_outputs[w]) continue;
      if (d.hvp_linear->tangent_outputs[g++]) at[d.wrt_pos[w]] = k++;
    }
    return at;
  }
  /// Per argument: its output by `layout` (moved out of `out`), or a zero like `like[a]`.
  static Values per_argument(Values& out, const std::vector<std::ptrdiff_t>& layout, std::span<const Operand> like) {
    Values r;
    r.reserve(layout.size());
    for (std::size_t a = 0; a < layout.size(); ++a) {
      // Zeros only where nothing reaches (a zero tensor as large as x costs a memset).
      r.push_back(layout[a] >= 0 ? std::move(out[static_cast<std::size_t>(layout[a])]) : Space::zeros_like(like[a]));
    }
    return r;
  }
  static Values per_argument(Values& out, const std::vector<std::ptrdiff_t>& layout, const Values& zeros) {
    Values r;
    r.reserve(layout.size());
    for (std::size_t a = 0; a < layout.size(); ++a) {
      r.push_back(layout[a] >= 0 ? std::move(out[static_cast<std::size_t>(layout[a])]) : zeros[a]);
    }
    return r;
  }
  static Values zeros_like_each(std::span<const Operand> x) {
    Values zeros;
    for (const auto& xj : x) zeros.push_back(Space::zeros_like(xj));
    return zeros;
  }

  /// The value of `slot`, built by `build()` on first use. The build runs outside the lock (it
  /// may fill other slots); if two threads build at once, both build the same structure and the
  /// first one stored is kept. A filled slot never changes, so the reference stays valid.
  template <class Slot, class Build>
  Slot& memo(Slot& slot, Build&& build) {
    {
      std::lock_guard lock(mutex_);
      if (slot) return slot;
    }
    auto value = build();
    std::lock_guard lock(mutex_);
    if (!slot) slot = std::move(value);
    return slot;
  }

  /// What this object has derived from one function; built lazily, kept while f is cached.
  struct Derived {
    Function f;
    Keys inputs;   // primal input keys, in argument order
    Keys outputs;  // primal output keys
    std::vector<typename Op::InputKey> wrt;  // the differentiated inputs' keys
    std::vector<std::size_t> wrt_pos;        // and their argument positions
    std::unique_ptr<LinearizedGraph<Op>> linear, transpose, hvp_linear;
    /// along[j]: linearize_along of along[j - 1] (of `linear` for j = 0) along linear's tangent
    /// inputs: the derivative of order j + 2 along one direction.
    std::vector<std::unique_ptr<LinearizedGraph<Op>>> along;
    std::unordered_map<std::size_t, ProgramPtr> derivative_programs;  // by order
    ProgramPtr primal_program, jvp_program, vjp_program, hvp_program, vjp_at_values_program;
    std::shared_ptr<const SplitProgram<Op>> jvp_split, vjp_split, hvp_split;  // by direction
    std::optional<Operand> unit_seed;
  };

  Derived& derived(const Function& f) {
    std::lock_guard lock(mutex_);
    auto& slot = functions_[f.get()];
    if (!slot) {
      slot = std::make_unique<Derived>();
      slot->f = f;
      auto mask = wrt_override_.find(f.get());
      for (std::size_t j = 0; j < f->inputs().size(); ++j) {
        const auto& key = f->key(f->inputs()[j]);
        slot->inputs.push_back(key);
        bool chosen = mask == wrt_override_.end() || (j < mask->second.size() && mask->second[j]);
        if (chosen && differentiable(key.input_key())) {
          slot->wrt.push_back(key.input_key());
          slot->wrt_pos.push_back(j);
        }
      }
      slot->outputs = f->output_keys();
    }
    return *slot;
  }

  const LinearizedGraph<Op>& linearized(Derived& d) {
    return *memo(d.linear, [&] {
      return std::make_unique<LinearizedGraph<Op>>(linearize(computegraph::resolve({d.f}),
                                                             std::span<const ValueKey<Op>>(d.outputs),
                                                             std::span<const typename Op::InputKey>(d.wrt)));
    });
  }

  const LinearizedGraph<Op>& transposed(Derived& d) {
    return *memo(d.transpose, [&] { return std::make_unique<LinearizedGraph<Op>>(linear_transpose(linearized(d))); });
  }

  template <class MakeKeys>
  ProgramPtr program(ProgramPtr& slot, const Function&, MakeKeys&& make_keys,
                     std::initializer_list<computegraph::GraphPtr<Op>> roots) {
    return memo(slot, [&] {
      auto [outputs, leading] = make_keys();
      return cache_->get_or_compile(computegraph::resolve(roots), std::span<const ValueKey<Op>>(outputs),
                                    std::span<const ValueKey<Op>>(leading));
    });
  }

  ProgramPtr vjp_program(Derived& d) {
    const auto& tr = transposed(d);
    return program(d.vjp_program, d.f, [&] { return detail::vjp_keys(d.inputs, d.outputs, tr); }, {tr.graph});
  }

  /// The keys of the order-k derivatives along linear's directions that exist (k >= 1), and the
  /// index of the output of f each belongs to. Builds the missing orders.
  std::pair<Keys, std::vector<std::size_t>> along_outputs(Derived& d, std::size_t k) {
    const auto& lin = linearized(d);
    std::lock_guard lock(mutex_);
    auto present = [](const LinearizedGraph<Op>& g, const std::vector<std::size_t>& of) {
      std::pair<Keys, std::vector<std::size_t>> r;
      for (std::size_t i = 0; i < g.tangent_outputs.size(); ++i) {
        if (!g.tangent_outputs[i]) continue;
        r.first.push_back(g.graph->key(*g.tangent_outputs[i]));
        r.second.push_back(of[i]);
      }
      return r;
    };
    std::vector<std::size_t> all(d.outputs.size());
    for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
    auto current = present(lin, all);
    const auto directions = lin.tangent_input_keys();
    for (std::size_t order = 2; order <= k; ++order) {
      const LinearizedGraph<Op>& prev = order == 2 ? lin : *d.along[order - 3];
      if (d.along.size() < order - 1) {
        d.along.push_back(std::make_unique<LinearizedGraph<Op>>(linearize_along(
            computegraph::resolve({prev.graph}), std::span<const ValueKey<Op>>(current.first),
            std::span<const typename Op::InputKey>(d.wrt),
            std::span<const typename Op::InputKey>(directions))));
      }
      current = present(*d.along[order - 2], current.second);
    }
    return current;
  }

  /// Forward-over-reverse: the gradient graph linearized again with respect to the primal inputs.
  const LinearizedGraph<Op>& hvp_linearized(Derived& d) {
    return *memo(d.hvp_linear, [&] {
      Keys grads;
      for (const auto& k : transposed(d).tangent_output_keys()) if (k) grads.push_back(*k);
      return std::make_unique<LinearizedGraph<Op>>(linearize(computegraph::resolve({d.transpose->graph}),
                                                             std::span<const ValueKey<Op>>(grads),
                                                             std::span<const typename Op::InputKey>(d.wrt)));
    });
  }

  ProgramPtr hvp_program(Derived& d) {
    const auto& second = hvp_linearized(d);
    return program(d.hvp_program, d.f, [&] { return detail::hvp_keys(d.inputs, *d.transpose, second); }, {second.graph});
  }

  /// The program of `slot` split by direction: outputs and inputs from make_keys(), of which the
  /// last `varying_count` are the directions. Built once per function.
  template <class MakeKeys>
  const SplitProgram<Op>& split_program(std::shared_ptr<const SplitProgram<Op>>& slot, MakeKeys&& make_keys,
                                        std::initializer_list<computegraph::GraphPtr<Op>> roots,
                                        std::size_t varying_count) {
    return *memo(slot, [&] {
      auto [outputs, inputs] = make_keys();
      return std::make_shared<const SplitProgram<Op>>(*cache_, computegraph::resolve(roots), outputs, inputs,
                                                      varying_count);
    });
  }

  const SplitProgram<Op>& jvp_split(Derived& d) {
    const auto& lin = linearized(d);
    return split_program(d.jvp_split, [&] { return detail::jvp_keys(d.inputs, d.outputs, lin); }, {lin.graph}, lin.tangent_inputs.size());
  }
  const SplitProgram<Op>& vjp_split(Derived& d) {
    const auto& tr = transposed(d);
    return split_program(d.vjp_split, [&] { return detail::vjp_keys(d.inputs, d.outputs, tr); }, {tr.graph}, tr.tangent_inputs.size());
  }
  const SplitProgram<Op>& hvp_split(Derived& d) {
    const auto& second = hvp_linearized(d);
    return split_program(d.hvp_split, [&] { return detail::hvp_keys(d.inputs, *d.transpose, second); }, {second.graph},
                         second.tangent_inputs.size());
  }

  /// The cotangent 1 shaped like the single output. Computed by one primal run the first time;
  /// an output's type is fixed by the graph, so it is reused afterwards.
  Operand unit_seed(Derived& d, std::span<const Operand> x) {
    return *memo(d.unit_seed, [&] {
      if (d.outputs.size() != 1) {
        throw computegraph::BindingError("grad/hvp: the function must have exactly one output, it has " +
                                         std::to_string(d.outputs.size()));
      }
      return std::optional<Operand>(Space::basis_like(eval(d.f, x)[0], 0));
    });
  }

  void check_arity(const char* what, const Function& f, std::span<const Operand> x,
                   std::size_t n_second, const char* second_name) {
    const std::size_t n = f->inputs().size();
    if (x.size() != n || n_second != n) {
      throw computegraph::BindingError(std::string(what) + ": the function has " +
                                       std::to_string(n) + " inputs; got " +
                                       std::to_string(x.size()) + " primals and " +
                                       std::to_string(n_second) + " " + second_name);
    }
  }

  /// Whether argument j of f is differentiated.
  bool is_wrt(Derived& d, std::size_t j) const {
    return std::find(d.wrt_pos.begin(), d.wrt_pos.end(), j) != d.wrt_pos.end();
  }

  std::shared_ptr<computegraph::CompileCache<Op>> cache_;
  std::mutex mutex_;
  std::unordered_map<const computegraph::Graph<Op>*, std::unique_ptr<Derived>> functions_;
  std::unordered_map<const computegraph::Graph<Op>*, std::vector<bool>> wrt_override_;
};

}  // namespace tidu
