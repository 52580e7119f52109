// Cross-country Jacobians (sparse/cross_country.hpp): the graph of local Jacobians read off the
// jvp program, planned by the cost model and recorded as tensor operations.
#include "sparse/cross_country.hpp"

#include <algorithm>
#include <cmath>
#include <optional>

#include "sparse/elimination.hpp"
#include "tenferro/dimension_numbers.hpp"
#include "tenferro/indexing.hpp"
#include "tenferro/ops/builtin_attrs.hpp"
#include "tenferro/ops/op_def.hpp"
#include "tenferro/ops/record.hpp"
#include "tenferro/operand_space.hpp"
#include "tenferro/program.hpp"
#include "tenferro/vmap.hpp"
#include "tidu/transforms.hpp"

namespace tenferro::sparse {
namespace {

using Compiled = computegraph::CompiledProgram<StdTensorOp>;

/// The jvp program of g with respect to input argnum alone: inputs g's inputs, then x's tangent;
/// outputs g's output, then its tangent (if it depends on x).
struct JvpProgram {
  std::shared_ptr<const Compiled> program;
  std::ptrdiff_t tangent_output = -1;  ///< among the program's outputs
};
JvpProgram jvp_program_of(const GraphPtr& g, std::size_t argnum) {
  tidu::Transforms<StdTensorOp> ad(default_compile_cache());
  std::vector<bool> wrt(g->inputs().size(), false);
  wrt[argnum] = true;
  ad.set_wrt(g, std::move(wrt));
  auto [program, layout] = ad.jvp_program_with_layout(g);
  return {std::move(program), layout[0]};
}

/// One forward product's cost of an operation on operands of these types (elimination.hpp's
/// unit): a contraction's multiply-adds, else the elements it reads or writes, whichever more.
double op_cost(const StdTensorOp& op, std::span<const TensorType> operands) {
  double out = 0;
  for (std::size_t j = 0; j < op.output_count(); ++j) out += static_cast<double>(op.output_type(j).numel());
  if (op.def->dot_dims_contraction && operands.size() == 2) {
    double contracted = 1;
    for (const std::int64_t a : op.attrs.get<DotDims>().lhs_contract) contracted *= static_cast<double>(operands[0].shape[static_cast<std::size_t>(a)]);
    return out * contracted;
  }
  double in = 0;
  for (const TensorType& t : operands) in += static_cast<double>(t.numel());
  return std::max(out, in);
}

/// For a contraction of a fixed operand with linear operand `k` that has no batch axes and
/// contracts k whole (a matrix times a vector): the permutation of the fixed operand that lays its
/// axes out as the local Jacobian's rows (the result's axes) then columns (operand k's axes).
std::optional<std::vector<std::int64_t>> contraction_layout(const StdTensorOp& op, std::size_t k, std::span<const TensorType> operands) {
  if (!op.def->dot_dims_contraction || operands.size() != 2) return std::nullopt;
  const DotDims& d = op.attrs.get<DotDims>();
  if (!d.lhs_batch.empty() || !d.rhs_batch.empty()) return std::nullopt;
  const auto& mine = k == 0 ? d.lhs_contract : d.rhs_contract;
  const auto& theirs = k == 0 ? d.rhs_contract : d.lhs_contract;
  const std::size_t rank_k = operands[k].shape.size(), rank_fixed = operands[1 - k].shape.size();
  if (mine.size() != rank_k) return std::nullopt;  // k has free axes: a Kronecker product, not kept
  std::vector<std::int64_t> perm;
  for (std::size_t a = 0; a < rank_fixed; ++a) {
    if (std::find(theirs.begin(), theirs.end(), static_cast<std::int64_t>(a)) == theirs.end()) perm.push_back(static_cast<std::int64_t>(a));
  }
  for (std::size_t a = 0; a < rank_k; ++a) {
    const auto at = std::find(mine.begin(), mine.end(), static_cast<std::int64_t>(a)) - mine.begin();
    perm.push_back(theirs[static_cast<std::size_t>(at)]);
  }
  return perm;
}

/// The diagonal of an elementwise op with no fixed operand, with respect to operand k: the op run
/// on ones in k and zeros elsewhere (a constant of the program).
Tensor constant_diagonal(const StdTensorOp& op, std::size_t k, std::span<const TensorType> operands) {
  std::vector<Tensor> in;
  for (std::size_t i = 0; i < operands.size(); ++i) {
    in.push_back(i == k ? Tensor::ones(operands[i].shape, operands[i].dtype) : Tensor::zeros(operands[i].shape, operands[i].dtype));
  }
  std::vector<const Tensor*> ptrs;
  for (const Tensor& t : in) ptrs.push_back(&t);
  std::vector<Tensor> out(1);
  ExecContext ctx;
  op.eval(ctx, ptrs, out);
  return out[0];
}

/// The most elements a dense local Jacobian may have (2^24: 128 MiB of f64). A function whose
/// linear program would need a larger one (a transpose of a large intermediate) is left to the
/// other modes.
constexpr double kMaxDenseBlock = 16777216.0;

/// The coordinate vectors of a value of type t (f32 or f64) as a stack [n, t...].
Tensor identity_basis(const TensorType& t) {
  const std::int64_t n = t.numel();
  Shape shape = t.shape;
  shape.insert(shape.begin(), n);
  auto eye = [&](auto zero) {
    std::vector<decltype(zero)> values(static_cast<std::size_t>(n * n), zero);
    for (std::int64_t c = 0; c < n; ++c) values[static_cast<std::size_t>(c * n + c)] = 1;
    return Tensor::from(values, shape);
  };
  return t.dtype == DType::F32 ? eye(0.0f) : eye(0.0);
}

/// The local Jacobians [m_j, n] of each result j of the linear op with respect to one operand (of
/// n elements), from `basis` (identity_basis) recorded in the trace: the op applied to every
/// coordinate vector at once (vmap), its operands from operands_with(coordinate vector).
template <class OperandsWith>
std::vector<Traced> dense_blocks(const StdTensorOp& op, const Traced& basis, const OperandsWith& operands_with) {
  const detail::TracedFunction apply_op = [&](const std::vector<Traced>& e) { return apply_outputs(op, operands_with(e[0])); };
  const std::vector<Traced> batched = detail::vmap_traced(apply_op, std::span<const Traced>(&basis, 1), VmapOptions{});
  const std::int64_t n = basis.shape()[0];
  std::vector<Traced> blocks;
  for (std::size_t j = 0; j < batched.size(); ++j) blocks.push_back(transpose(reshape(batched[j], {n, op.output_type(j).numel()})));
  return blocks;
}

/// The local Jacobian [m, n] of the single-result linear op with respect to operand k, by reverse
/// mode on the op alone: one vjp per result element (an identity of m x m), for a result much
/// smaller than the operand. `in`: the op's operands (operand k's value is not read: the op is
/// linear in it).
Traced reverse_block(const StdTensorOp& op, std::size_t k, const std::vector<Traced>& in) {
  const detail::TracedFunction f = [&op](const std::vector<Traced>& xs) { return std::vector<Traced>{apply_outputs(op, xs)[0]}; };
  const detail::TransformedFunction transformed(f, {k});
  const Traced j = transformed.jacobian_traced(in, detail::TransformedFunction::JacobianKind::Reverse);
  return reshape(j, {op.output_type(0).numel(), in[k].type().numel()});
}

/// Whether a dense local Jacobian is read off by reverse mode (reverse_block): for one result
/// smaller than the operand, weighing a reverse product as kReverseCost forward ones.
bool by_rows(const StdTensorOp& op, std::int64_t n) {
  return op.output_count() == 1 && kReverseCost * static_cast<double>(op.output_type(0).numel()) < static_cast<double>(n);
}

/// The dense local Jacobians of an op with no fixed operand (zeros in its other linear operands),
/// computed now: the blocks are constants of the program.
std::vector<Tensor> constant_blocks(const StdTensorOp& op, std::size_t k, std::span<const TensorType> operands) {
  const bool rows = by_rows(op, operands[k].numel());
  const Tensor seed = rows ? Tensor::zeros(operands[k].shape, operands[k].dtype) : identity_basis(operands[k]);
  const GraphPtr g = detail::trace_function(
      [&](const std::vector<Traced>& b) {
        auto operands_with = [&](const Traced& arg) {
          std::vector<Traced> in;
          for (std::size_t o = 0; o < operands.size(); ++o) {
            in.push_back(o == k ? arg : astype(constant(arg, Tensor::zeros(operands[o].shape)), operands[o].dtype));
          }
          return in;
        };
        if (rows) return std::vector<Traced>{reverse_block(op, k, operands_with(b[0]))};
        return dense_blocks(op, b[0], operands_with);
      },
      {seed.type()});
  return tenferro::Program(g).run({seed});
}

/// An edge value when recording: a recorded tensor (none for an Identity edge).
using TracedValue = std::optional<Traced>;

/// The values cross-country elimination computes with: recorded tensors of one dtype, diagonals
/// [m] and dense blocks [m, n].
struct TracedAlgebra {
  Traced like;
  DType dtype;

  Traced eye(std::int64_t n, double scale) const {
    std::vector<double> values(static_cast<std::size_t>(n * n), 0.0);
    for (std::int64_t i = 0; i < n; ++i) values[static_cast<std::size_t>(i * n + i)] = scale;
    return astype(constant(like, Tensor::from(values, {n, n})), dtype);
  }
  /// e as an edge of kind `kind` (at least as general as its own), m x n.
  Traced as(const Edge<TracedValue>& e, EdgeKind kind, std::int64_t m, std::int64_t n) const {
    if (e.kind == EdgeKind::Identity) {
      if (kind == EdgeKind::Dense) return eye(n, e.scale);
      return astype(constant(like, Tensor::full({m}, e.scale)), dtype);
    }
    if (e.kind == EdgeKind::Diagonal && kind == EdgeKind::Dense) return diag(*e.value);
    return *e.value;
  }
  TracedValue product(const Edge<TracedValue>& b, const Edge<TracedValue>& a, EdgeKind, std::int64_t m, std::int64_t, std::int64_t n) const {
    if (b.kind == EdgeKind::Identity) return *a.value * b.scale;
    if (a.kind == EdgeKind::Identity) return *b.value * a.scale;
    if (b.kind == EdgeKind::Diagonal && a.kind == EdgeKind::Diagonal) return *b.value * *a.value;
    if (b.kind == EdgeKind::Diagonal) return broadcast_to(reshape(*b.value, {m, 1}), {m, n}) * *a.value;
    if (a.kind == EdgeKind::Diagonal) return *b.value * broadcast_to(reshape(*a.value, {1, n}), {m, n});
    return matmul(*b.value, *a.value);
  }
  TracedValue sum(const Edge<TracedValue>& a, const Edge<TracedValue>& b, EdgeKind kind, std::int64_t m, std::int64_t n) const {
    return as(a, kind, m, n) + as(b, kind, m, n);
  }
};

/// The graph of local Jacobians of a jvp program, with edge values P (NoValues::Value to plan,
/// Traced to record).
template <class P>
struct LocalJacobians {
  JacobianGraph<P> graph;
  int independent = 0;
  int dependent = -1;  ///< -1: the output does not depend on x
  std::vector<int> intermediates;
  double extraction_cost = 0;
  std::size_t linear_ops = 0;
  double linear_elements = 0;
  std::string unsupported;
  bool too_large = false;
};

/// Reads the local Jacobians off `jvp`. Recording (`args` given): the program's fixed values are
/// recorded into args' trace and the edges carry recorded tensors; planning: no values. The
/// result is pruned to the values on a path from x's tangent to the output's.
template <class P>
LocalJacobians<P> local_jacobians(const JvpProgram& jvp, const std::vector<TensorType>& input_types, const TensorType& x,
                                  const TensorType& y, const std::vector<Traced>* args) {
  constexpr bool kRecord = std::is_same_v<P, TracedValue>;
  const Compiled& program = *jvp.program;
  LocalJacobians<P> result;
  JacobianGraph<P> full;
  // The dtype every linear value must have.
  const DType dtype = x.dtype;
  if (!is_floating(dtype) || y.dtype != dtype) {
    result.unsupported = "cross-country takes a real float argument and result of one dtype; got " + x.to_string() + " -> " + y.to_string();
    return result;
  }
  const std::size_t slots = program.slot_count();
  std::vector<int> vertex(slots, -1);
  std::vector<std::optional<TensorType>> type(slots);
  std::vector<std::optional<Traced>> fixed(slots);
  const auto& inputs = program.input_slots();
  const std::size_t primal_count = inputs.size() - 1;
  for (std::size_t i = 0; i < primal_count; ++i) {
    type[inputs[i]] = input_types[i];
    if constexpr (kRecord) fixed[inputs[i]] = (*args)[i];
  }
  const std::uint32_t tangent_in = inputs.back();
  vertex[tangent_in] = full.add_vertex(x.numel());
  type[tangent_in] = x;
  // Per edge (from, to): its extraction cost, summed over the kept edges afterwards.
  std::map<std::pair<int, int>, double> extraction;
  std::optional<TracedAlgebra> algebra;
  NoValues none;
  if constexpr (kRecord) algebra = TracedAlgebra{(*args)[0], dtype};
  auto add = [&](int from, int to, Edge<P> e, double cost) {
    extraction[{from, to}] += cost;
    if constexpr (kRecord) {
      full.add_edge(from, to, std::move(e), *algebra);
    } else {
      full.add_edge(from, to, std::move(e), none);
    }
  };
  const auto& instructions = program.instructions();
  for (std::size_t i = 0; i < instructions.size() && result.unsupported.empty(); ++i) {
    const auto& ins = instructions[i];
    const StdTensorOp& op = ins.operation;
    const auto operands = program.operands(i);
    std::vector<TensorType> types;
    bool linear = false;
    for (std::size_t k = 0; k < operands.size(); ++k) {
      const std::uint32_t s = operands[k];
      if (vertex[s] >= 0) {
        if (!ins.role.is_active(k)) {
          // The linearized program's contract: a linear value is read only where its reader is
          // linear. Not a property of the user's function.
          throw Error("jacobian: cross-country: operation " + op.name() + " reads a linear value in operand " + std::to_string(k) +
                      ", which it is not linear in");
        }
        linear = true;
      }
      types.push_back(type[s] ? *type[s] : TensorType{});
    }
    if (!linear) {
      // A fixed value: recorded as the program computes it (its type from the op).
      for (std::uint32_t j = 0; j < ins.output_count; ++j) type[ins.first_output + j] = op.output_type(j);
      if constexpr (kRecord) {
        std::vector<Traced> in;
        for (const std::uint32_t s : operands) in.push_back(*fixed[s]);
        const std::vector<Traced> out = in.empty() ? std::vector<Traced>{detail::record_nullary((*args)[0], op)} : apply_outputs(op, in);
        for (std::uint32_t j = 0; j < ins.output_count; ++j) fixed[ins.first_output + j] = out[j];
      }
      continue;
    }
    // A linear operation: a vertex per result, an edge per linear operand and result.
    std::vector<int> outs;
    for (std::uint32_t j = 0; j < ins.output_count; ++j) {
      const TensorType& t = op.output_type(j);
      if (t.dtype != dtype) {
        result.unsupported = "operation " + op.name() + " makes a linear value of type " + t.to_string() + " in a program of " + dtype_name(dtype);
        break;
      }
      type[ins.first_output + j] = t;
      vertex[ins.first_output + j] = full.add_vertex(t.numel());
      outs.push_back(vertex[ins.first_output + j]);
    }
    if (!result.unsupported.empty()) break;
    const double cost = op_cost(op, types);
    result.linear_ops += 1;
    result.linear_elements += cost;
    bool has_fixed = false;
    for (const std::uint32_t s : operands) has_fixed = has_fixed || vertex[s] < 0;
    for (std::size_t k = 0; k < operands.size(); ++k) {
      const int u = vertex[operands[k]];
      if (u < 0) continue;
      const std::int64_t n = types[k].numel();
      // Operand values for applying the op with `arg` in operand k: zeros in the other linear
      // operands, the fixed values in the rest.
      auto operands_with = [&](const Traced& arg) {
        std::vector<Traced> in;
        for (std::size_t o = 0; o < operands.size(); ++o) {
          if (o == k) {
            in.push_back(arg);
          } else if (vertex[operands[o]] >= 0) {
            in.push_back(astype(constant(arg, Tensor::zeros(types[o].shape)), types[o].dtype));
          } else {
            in.push_back(*fixed[operands[o]]);
          }
        }
        return in;
      };
      const bool single = ins.output_count == 1;
      const std::int64_t m = single ? op.output_type(0).numel() : 0;
      if (single && op.def->layout == Layout::Reshape) {
        add(u, outs[0], Edge<P>{EdgeKind::Identity, 1, {}}, 0);
        continue;
      }
      if (single && op.def->element_dependence() == Dependence::Elementwise && types[k].shape == op.output_type(0).shape) {
        if (!has_fixed) {
          const Tensor d = constant_diagonal(op, k, types);
          const double first = m > 0 ? d.element(0).real() : 1.0;
          bool uniform = true;
          for (std::int64_t e = 1; e < m && uniform; ++e) uniform = d.element(e).real() == first;
          if (uniform) {
            add(u, outs[0], Edge<P>{EdgeKind::Identity, first, {}}, 0);
            continue;
          }
          Edge<P> e{EdgeKind::Diagonal, 1, {}};
          if constexpr (kRecord) e.value = astype(constant((*args)[0], d.reshaped({m})), dtype);
          add(u, outs[0], std::move(e), kOpCost);
          continue;
        }
        Edge<P> e{EdgeKind::Diagonal, 1, {}};
        if constexpr (kRecord) {
          const Traced ones = astype(constant((*args)[0], Tensor::ones(types[k].shape)), dtype);
          e.value = reshape(apply_outputs(op, operands_with(ones))[0], {m});
        }
        add(u, outs[0], std::move(e), kOpCost + static_cast<double>(m));
        continue;
      }
      if (single) {
        if (const auto perm = contraction_layout(op, k, types)) {
          Edge<P> e{EdgeKind::Dense, 1, {}};
          if constexpr (kRecord) {
            const Traced& held = *fixed[operands[1 - k]];
            bool in_place = true;
            for (std::size_t a = 0; a < perm->size(); ++a) in_place = in_place && (*perm)[a] == static_cast<std::int64_t>(a);
            e.value = reshape(in_place ? held : transpose(held, *perm), {m, n});
          }
          add(u, outs[0], std::move(e), kOpCost + static_cast<double>(m * n));
          continue;
        }
      }
      // Any other linear op: applied to each coordinate vector of operand k at once (or, for a
      // result much smaller than the operand, each result element pulled back by reverse mode).
      // Without fixed operands (a transpose, a broadcast, a sum) the blocks are constants,
      // computed now. Dense blocks are refused above kMaxDenseBlock elements.
      double block_elements = 0;
      for (std::size_t j = 0; j < outs.size(); ++j) block_elements += static_cast<double>(op.output_type(j).numel()) * static_cast<double>(n);
      if (block_elements > kMaxDenseBlock) {
        result.too_large = true;
        result.unsupported = "operation " + op.name() + " would need a dense local Jacobian of " + std::to_string(static_cast<std::int64_t>(block_elements)) +
                             " elements (the limit is " + std::to_string(static_cast<std::int64_t>(kMaxDenseBlock)) + ")";
        break;
      }
      const bool rows = by_rows(op, n);
      std::vector<P> columns(outs.size());
      if constexpr (kRecord) {
        if (!has_fixed) {
          const std::vector<Tensor> blocks = constant_blocks(op, k, types);
          for (std::size_t j = 0; j < outs.size(); ++j) columns[j] = constant((*args)[0], blocks[j]);
        } else if (rows) {
          columns[0] = reverse_block(op, k, operands_with(astype(constant((*args)[0], Tensor::zeros(types[k].shape)), types[k].dtype)));
        } else {
          const Traced basis = constant((*args)[0], identity_basis(types[k]));
          const std::vector<Traced> blocks = dense_blocks(op, basis, operands_with);
          for (std::size_t j = 0; j < outs.size(); ++j) columns[j] = blocks[j];
        }
      }
      const double products = rows ? kReverseCost * static_cast<double>(m) : static_cast<double>(n);
      for (std::size_t j = 0; j < outs.size(); ++j) {
        const double mj = static_cast<double>(op.output_type(j).numel());
        const double computed = (j == 0 ? kOpCost + products * cost : 0) + mj * static_cast<double>(n);
        add(u, outs[j], Edge<P>{EdgeKind::Dense, 1, columns[j]}, has_fixed ? computed : 0);
      }
    }
  }
  if (!result.unsupported.empty()) return result;
  if (jvp.tangent_output >= 0) {
    const std::uint32_t out_slot = program.output_slots()[static_cast<std::size_t>(jvp.tangent_output)];
    result.dependent = vertex[out_slot];
  }
  // Prune to the vertices on a path to the dependent (every vertex is on a path from x's tangent)
  // and renumber them in order.
  const int count = static_cast<int>(full.vertex_count());
  std::vector<bool> keep(static_cast<std::size_t>(count), false);
  keep[0] = true;
  if (result.dependent >= 0) {
    std::vector<int> stack{result.dependent};
    keep[static_cast<std::size_t>(result.dependent)] = true;
    while (!stack.empty()) {
      const int v = stack.back();
      stack.pop_back();
      for (const int u : full.in_edges(v)) {
        if (!keep[static_cast<std::size_t>(u)]) {
          keep[static_cast<std::size_t>(u)] = true;
          stack.push_back(u);
        }
      }
    }
  }
  std::vector<int> renumbered(static_cast<std::size_t>(count), -1);
  for (int v = 0; v < count; ++v) {
    if (keep[static_cast<std::size_t>(v)]) renumbered[static_cast<std::size_t>(v)] = result.graph.add_vertex(full.size(v));
  }
  for (int u = 0; u < count; ++u) {
    if (!keep[static_cast<std::size_t>(u)]) continue;
    for (const auto& [w, e] : full.out_edges(u)) {
      if (!keep[static_cast<std::size_t>(w)]) continue;
      const int a = renumbered[static_cast<std::size_t>(u)], b = renumbered[static_cast<std::size_t>(w)];
      if constexpr (kRecord) {
        result.graph.add_edge(a, b, e, *algebra);
      } else {
        result.graph.add_edge(a, b, e, none);
      }
      result.extraction_cost += extraction[{u, w}];
    }
  }
  result.independent = 0;
  if (result.dependent >= 0) result.dependent = renumbered[static_cast<std::size_t>(result.dependent)];
  for (int v = 1; v < static_cast<int>(result.graph.vertex_count()); ++v) {
    if (v != result.dependent) result.intermediates.push_back(v);
  }
  return result;
}

TensorType output_type(const GraphPtr& g) { return type_of(g->key(g->outputs()[0])); }
std::vector<TensorType> input_types(const GraphPtr& g) {
  std::vector<TensorType> types;
  for (const auto id : g->inputs()) types.push_back(type_of(g->key(id)));
  return types;
}

}  // namespace

double CrossCountryPlan::batched_cost(double products) const {
  return std::max(products * linear_elements + kOpCost * static_cast<double>(linear_ops), kOpCost);
}

CrossCountryPlan plan_cross_country(const GraphPtr& g, std::size_t argnum, EliminationOrder order) {
  CrossCountryPlan plan;
  const TensorType x = type_of(g->key(g->inputs()[argnum])), y = output_type(g);
  const JvpProgram jvp = jvp_program_of(g, argnum);
  LocalJacobians<NoValues::Value> local = local_jacobians<NoValues::Value>(jvp, input_types(g), x, y, nullptr);
  plan.unsupported = local.unsupported;
  plan.too_large = local.too_large;
  if (!plan.unsupported.empty()) return plan;
  plan.vertices = local.graph.vertex_count();
  plan.edges = local.graph.edge_count();
  plan.extraction_cost = local.extraction_cost;
  plan.linear_ops = local.linear_ops;
  plan.linear_elements = local.linear_elements;
  // The randomized runs cost O(vertices^2) each: only for graphs of up to 2000 values; edge
  // elimination O(edges^2): up to 1000 values, else Best leaves it out.
  const int runs = local.intermediates.size() <= 2000 ? 16 : 0;
  const PlannedOrder planned = plan_order(local.graph, local.intermediates, order, runs, local.intermediates.size() <= 1000);
  plan.order = planned.order;
  const double densify = kOpCost + static_cast<double>(x.numel()) * static_cast<double>(y.numel());
  plan.cost = plan.extraction_cost + planned.cost + densify;
  return plan;
}

Traced record_cross_country(const GraphPtr& g, std::size_t argnum, const std::vector<Traced>& args, const CrossCountryPlan& plan) {
  const TensorType x = type_of(g->key(g->inputs()[argnum])), y = output_type(g);
  const JvpProgram jvp = jvp_program_of(g, argnum);
  LocalJacobians<TracedValue> local = local_jacobians<TracedValue>(jvp, input_types(g), x, y, &args);
  if (local.too_large) throw ValueError("jacobian: cross-country: " + local.unsupported);
  if (!local.unsupported.empty()) throw DTypeError("jacobian: cross-country: " + local.unsupported);
  const std::int64_t m = y.numel(), n = x.numel();
  TracedAlgebra algebra{args[0], x.dtype};
  Shape shape = y.shape;
  shape.insert(shape.end(), x.shape.begin(), x.shape.end());
  if (m == 0 || n == 0) return astype(constant(args[0], Tensor::zeros(std::move(shape))), x.dtype);
  if (local.dependent == local.independent) return reshape(algebra.eye(n, 1.0), std::move(shape));
  if (local.dependent < 0) return astype(constant(args[0], Tensor::zeros(std::move(shape))), x.dtype);
  // The planned order, on this graph: the same vertices in the same numbering.
  const PlannedOrder planned = plan_order(structure_of(local.graph), local.intermediates, plan.order,
                                          local.intermediates.size() <= 2000 ? 16 : 0);
  apply_plan(local.graph, planned, algebra);
  const auto& edges = local.graph.out_edges(local.independent);
  const auto it = edges.find(local.dependent);
  if (it == edges.end()) return astype(constant(args[0], Tensor::zeros(std::move(shape))), x.dtype);
  return reshape(algebra.as(it->second, EdgeKind::Dense, m, n), std::move(shape));
}

}  // namespace tenferro::sparse
