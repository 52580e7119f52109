#pragma once
// jacobian: a dense Jacobian by the cheapest way of accumulating it that tenferro knows, chosen per
// argument signature by predicted cost, with the choice reported:
//
//   auto J = tf::jacobian(f);                 // {.mode = JacobianMode::Auto}
//   tf::Tensor j = J(x);                       // shape output... + x...
//   J.choice(x).mode;                          // Forward, Reverse, Columns, Rows or CrossCountry
//
// The candidates are the two extremes, forward (one J v product per argument element: jacfwd)
// and reverse (one w^T J product per output element: jacrev), and the two compressed modes of a
// sparse Jacobian (tenferro/sparse.hpp): one J v product per color of the structural pattern's
// columns, or one w^T J product per color of its rows, the entries read back into the dense
// result. A product's cost is taken as the same in both directions except for a factor
// kReverseCost on reverse products (a vjp runs the linear part backwards over stored residuals);
// compressed modes pay their read-back, and are taken only when they save at least a fifth of the
// products. A function whose Jacobian has structural zeros (elementwise parts, stencils, chains of
// per-point formulas) is thereby computed with as few products as its structure allows, which
// neither extreme does; for a dense Jacobian the better extreme is chosen.
//
// The fifth candidate is cross-country accumulation: vertex elimination on the linearized
// program's graph of local Jacobians (scale * I for reshapes and additions, diagonals for
// elementwise ops, dense blocks for contractions and the rest), in the order the cost model
// finds cheapest among forward, reverse, Markowitz's cheapest-first rule, a randomized search and
// cheapest-first edge elimination (EliminationOrder). It wins where the Jacobian is a product with a narrow or structured middle,
// which neither extreme exploits: both multiply the whole program by an identity seed. Costs are
// predicted in element operations and reported in forward products (JacobianChoice). The
// cross-country Jacobian is recorded as tensor operations, so a traced call (inside another
// transform) differentiates it again to any order.
#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "tenferro/sparse.hpp"
#include "tenferro/transforms.hpp"

namespace tenferro {

enum class JacobianMode : std::uint8_t {
  Auto,     ///< the cheapest of the four below, by predicted cost
  Forward,  ///< jacfwd
  Reverse,  ///< jacrev
  Columns,  ///< compressed forward: one product per color of the pattern's columns
  Rows,     ///< compressed reverse: one product per color of the pattern's rows
  CrossCountry,  ///< vertex elimination on the linearized graph (real values only)
};
const char* jacobian_mode_name(JacobianMode mode);

/// The order in which cross-country accumulation eliminates the intermediate values.
enum class EliminationOrder : std::uint8_t {
  Best,       ///< the cheapest of the five below, by the cost model
  Forward,    ///< topological order: what forward mode computes
  Reverse,    ///< reverse topological order: what reverse mode computes
  Markowitz,  ///< cheapest first: at each step the value whose products cost least
  Search,     ///< the best of Markowitz's order and 16 randomized cheapest-first runs
  Edges,      ///< edge elimination, cheapest first: one edge's products at a time, either side
};
const char* elimination_order_name(EliminationOrder order);

struct JacobianOptions {
  std::size_t argnum = 0;
  JacobianMode mode = JacobianMode::Auto;
  /// CrossCountry (and Auto when it picks CrossCountry): the elimination order.
  EliminationOrder order = EliminationOrder::Best;
};

/// What a jacobian call on one signature runs, and why.
struct JacobianChoice {
  JacobianMode mode = JacobianMode::Forward;
  std::int64_t products = 0;    ///< directional derivatives per call
  double predicted_cost = 0;    ///< in forward products (reverse ones weigh kReverseCost)
  std::int64_t columns = 0;     ///< argument elements (jacfwd's products)
  std::int64_t rows = 0;        ///< output elements (jacrev's products)
  /// CrossCountry: the order the plan eliminates in (Best resolved to one of the others).
  EliminationOrder order = EliminationOrder::Best;
  /// One line: the mode and the products of each candidate, e.g.
  /// "columns: 5 products (forward 1000, reverse 1000, rows 5, cross_country 31.5)"; a
  /// cross-country candidate counts its predicted cost in forward products and names its order.
  std::string explain;
};

namespace detail {
class JacobianState;  // src/sparse/jacobian.cpp

class JacobianImpl {
 public:
  JacobianImpl(TracedFunction f, JacobianOptions options);
  Tensor operator()(const Tensors& args) const;
  JacobianChoice choice(const Tensors& args) const;
  /// For Traced arguments (inside another transform): the Jacobian recorded into their trace, by
  /// cross-country elimination (modes CrossCountry and Auto) or as jacfwd / jacrev (Forward,
  /// Reverse). Columns and Rows need argument values and throw BindingError.
  Traced traced(const std::vector<Traced>& args) const;

 private:
  std::shared_ptr<JacobianState> state_;
};
}  // namespace detail

/// The weight of one reverse product against one forward product in the cost model.
inline constexpr double kReverseCost = 1.5;

class JacobianTransformed {
 public:
  JacobianTransformed(detail::TracedFunction f, JacobianOptions options) : impl_(std::move(f), options) {}
  template <class... A>
  Tensor operator()(const A&... args) const
    requires(!(std::is_same_v<A, Traced> && ...))
  {
    return impl_(Tensors{args...});
  }
  /// Inside another transform (JacobianImpl::traced).
  template <class... A>
  Traced operator()(const A&... args) const
    requires(sizeof...(A) > 0 && (std::is_same_v<A, Traced> && ...))
  {
    return impl_.traced(std::vector<Traced>{args...});
  }
  template <class... A>
  JacobianChoice choice(const A&... args) const {
    return impl_.choice(Tensors{args...});
  }
  /// The same on a list of arguments.
  Tensor call(const Tensors& args) const { return impl_(args); }

 private:
  detail::JacobianImpl impl_;
};

/// The Jacobian of f's one real output with respect to argument options.argnum, shaped output...
/// + argument... as jacfwd's, computed in options.mode.
template <class F>
JacobianTransformed jacobian(F f, JacobianOptions options = {}) {
  return JacobianTransformed(detail::erase_function(std::move(f)), options);
}

}  // namespace tenferro
