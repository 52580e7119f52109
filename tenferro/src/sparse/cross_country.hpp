#pragma once
// Cross-country Jacobians (tenferro/jacobian.hpp, JacobianMode::CrossCountry): the Jacobian of a
// traced function's output 0 with respect to one argument, accumulated by vertex elimination
// (sparse/elimination.hpp) on the graph of local Jacobians of its linearized program.
//
// The local Jacobian of each linear operation with respect to each linear operand is read off the
// operation itself, in the most structured form it has:
// - a reshape: the identity;
// - an elementwise op with no fixed operand (add, sub, neg): its diagonal is a constant, found by
//   running the op once on ones; equal entries make it scale * I;
// - an elementwise op with fixed operands (a product with a residual): the diagonal, the op
//   applied to ones in the linear operand (and zeros in the other linear operands);
// - a contraction of a fixed operand with a linear one that it contracts whole (a matrix times a
//   vector): the fixed operand, transposed into place;
// - any other linear op: the op applied to each coordinate vector of the linear operand, as one
//   vmap over the identity (dense; its cost counted as such).
// A function qualifies when every linear value is of one real float dtype; the plan says why not
// otherwise.
#include <cstddef>
#include <string>
#include <vector>

#include "tenferro/jacobian.hpp"
#include "tenferro/traced.hpp"
#include "tenferro/transforms.hpp"

namespace tenferro::sparse {

struct CrossCountryPlan {
  /// Why the function's Jacobian cannot be accumulated so; empty when it can. too_large: because a
  /// dense local Jacobian would be too large (ValueError), else because of a dtype (DTypeError).
  std::string unsupported;
  bool too_large = false;
  EliminationOrder order = EliminationOrder::Forward;  ///< the order chosen (never Best)
  /// The predicted cost in element operations (elimination.hpp): reading off the local Jacobians,
  /// eliminating in `order`, and writing the dense result.
  double cost = 0;
  double extraction_cost = 0;
  /// The linear program's operations and their elements (elimination.hpp's unit) per J v product.
  /// k products batched in one program (as jacfwd, jacrev and the compressed modes run them) cost
  /// batched_cost(k): the operations' fixed cost is paid once.
  std::size_t linear_ops = 0;
  double linear_elements = 0;
  double batched_cost(double products) const;
  std::size_t vertices = 0, edges = 0;  ///< of the pruned graph, before elimination
};

/// Plans the cross-country Jacobian of g's output 0 with respect to input `argnum` (a real float
/// input; g has one output), eliminating in `order` (Best: the cheapest order by the model).
CrossCountryPlan plan_cross_country(const GraphPtr& g, std::size_t argnum, EliminationOrder order);

/// Records the Jacobian planned by `plan` (which must be supported) into the trace of `args` (of
/// g's input types): shaped output... + argument..., as jacfwd's.
Traced record_cross_country(const GraphPtr& g, std::size_t argnum, const std::vector<Traced>& args, const CrossCountryPlan& plan);

}  // namespace tenferro::sparse
