#pragma once
// jacobian: a dense Jacobian by the cheapest way of accumulating it that tenferro knows, chosen per
// argument signature by predicted cost, with the choice reported:
//
//   auto J = tf::jacobian(f);                 // {.mode = JacobianMode::Auto}
//   tf::Tensor j = J(x);                       // shape output... + x...
//   J.choice(x).mode;                          // Forward, Reverse, Columns or Rows
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
#include <cstdint>
#include <memory>
#include <string>

#include "tenferro/sparse.hpp"
#include "tenferro/transforms.hpp"

namespace tenferro {

enum class JacobianMode : std::uint8_t {
  Auto,     ///< the cheapest of the four below, by predicted cost
  Forward,  ///< jacfwd
  Reverse,  ///< jacrev
  Columns,  ///< compressed forward: one product per color of the pattern's columns
  Rows,     ///< compressed reverse: one product per color of the pattern's rows
};
const char* jacobian_mode_name(JacobianMode mode);

struct JacobianOptions {
  std::size_t argnum = 0;
  JacobianMode mode = JacobianMode::Auto;
};

/// What a jacobian call on one signature runs, and why.
struct JacobianChoice {
  JacobianMode mode = JacobianMode::Forward;
  std::int64_t products = 0;    ///< directional derivatives per call
  double predicted_cost = 0;    ///< in forward products (reverse ones weigh kReverseCost)
  std::int64_t columns = 0;     ///< argument elements (jacfwd's products)
  std::int64_t rows = 0;        ///< output elements (jacrev's products)
  /// One line: the mode and the products of each candidate, e.g.
  /// "columns: 5 products (forward 1000, reverse 1000, rows 5)".
  std::string explain;
};

namespace detail {
class JacobianState;  // src/sparse/jacobian.cpp

class JacobianImpl {
 public:
  JacobianImpl(TracedFunction f, JacobianOptions options);
  Tensor operator()(const Tensors& args) const;
  JacobianChoice choice(const Tensors& args) const;

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
  Tensor operator()(const A&... args) const {
    return impl_(Tensors{args...});
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
