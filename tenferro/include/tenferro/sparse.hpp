#pragma once
// Sparse Jacobians and Hessians: the structural sparsity pattern read off the traced program, a
// coloring of it (ColPack), a few batched products with the colors' seed vectors, and the
// entries read back out of them.
//
//   auto residual = [](tf::Traced u) { return laplacian(u) + tf::exp(u); };   // a PDE residual
//   auto J = tf::sparse_jacobian(residual);
//   tf::SparseMatrix m = J(u);       // CSR: m.pattern->row_offsets, col_indices; m.values
//   J.analysis(u).colors;            // products it took: 5 for a 5-point stencil, any grid size
//
// Detection (jacobian_sparsity) replays f's graph on index sets: every element of every value
// holds the set of x's elements it depends on, propagated through each op by its Dependence
// (tenferro/ops/op_def.hpp): elementwise ops take the union of their operands' element, layout
// and indexing ops (slice, pad, gather, take, dynamic slices, ...) move sets as they move
// elements (detection runs their kernels on element labels), reductions and contractions take the
// union over what they sum, scatter-add and index_add collect the updates that land on each
// element, and any other op (control flow, linear algebra, ops registered without a rule) makes
// each result element depend on everything its operands depend on. The
// pattern is structural: it holds the entries that can be nonzero for any value of x, so a
// superset of the nonzeros at any one point, and it is exact for the entries an op never touches.
// Integer values (gather's indices, dynamic slices' starts) are taken at their values when they
// do not depend on a float argument (constants and integer arguments); an index computed from x
// makes the op depend on all its operand's elements, as no one position can be assumed.
//
// Evaluation colors the pattern's columns (J v products, forward mode: no two columns of a color
// share a row: partial distance-2) or its rows (w^T J, reverse mode), whichever takes fewer colors
// (SparseOptions::mode), through ColPack; the Hessian's symmetric pattern gets a star coloring
// (H v products, forward over reverse), whose entries are recovered directly. The products run as
// one compiled program (a vmap of the derivative program over the seed vectors), so a Jacobian
// costs about as much as `colors` directional derivatives, independent of its size.
//
// sparse_jacobian and sparse_hessian analyze once per argument signature (dtypes, shapes, and the
// values of integer arguments, which may move the pattern) and then only run the product program
// and the read-back: a Newton loop pays detection and coloring once.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tenferro/transforms.hpp"

namespace tenferro {

/// A sparsity pattern in compressed sparse row form: row i's nonzero columns are
/// col_indices[row_offsets[i] .. row_offsets[i + 1]), in increasing order. A Jacobian's rows are
/// the output's elements and its columns the argument's, both in row-major order.
struct SparsityPattern {
  std::int64_t rows = 0, cols = 0;
  std::vector<std::int64_t> row_offsets;  ///< rows + 1 entries, the first 0
  std::vector<std::int64_t> col_indices;  ///< one per nonzero

  std::int64_t nnz() const { return static_cast<std::int64_t>(col_indices.size()); }
  /// The row of each nonzero (the pattern in coordinate form, with col_indices).
  std::vector<std::int64_t> row_indices() const;
  bool contains(std::int64_t row, std::int64_t col) const;
  /// The pattern as rows of '.' and 'x' (small patterns; golden tests).
  std::string print() const;
  bool operator==(const SparsityPattern&) const = default;
};

/// A sparse matrix: a pattern (shared by every matrix evaluated on it) and one value per nonzero.
struct SparseMatrix {
  std::shared_ptr<const SparsityPattern> pattern;
  Tensor values;  ///< [nnz], in the pattern's order

  /// The matrix as a dense [rows, cols] tensor (zeros outside the pattern).
  Tensor to_dense() const;
};

/// Which products a sparse Jacobian takes: Auto picks the one with fewer colors (columns on a tie,
/// as a J v product costs less than a w^T J one).
enum class SparseMode : std::uint8_t { Auto, Columns, Rows };

struct SparseOptions {
  /// The differentiated argument (a float tensor); the others are held fixed.
  std::size_t argnum = 0;
  SparseMode mode = SparseMode::Auto;
  /// ColPack's vertex ordering for the greedy coloring: "SMALLEST_LAST", "NATURAL",
  /// "LARGEST_FIRST", "INCIDENCE_DEGREE" or "RANDOM". Smallest-last colors a 5-point stencil's
  /// Jacobian with the optimal 5 colors, where natural order takes 7.
  std::string ordering = "SMALLEST_LAST";
  /// Detection throws Error, naming the op, once a value's index sets would hold more entries
  /// than this: the derivative is too close to dense for a sparse method (use jacfwd/jacrev).
  std::int64_t max_nonzeros = std::int64_t{1} << 28;
};

/// What one analysis found: the pattern, the products it takes, and how the entries come back.
struct SparseAnalysis {
  std::shared_ptr<const SparsityPattern> pattern;
  SparseMode mode = SparseMode::Columns;  ///< Columns (J v, or H v for a Hessian) or Rows (w^T J)
  std::int64_t colors = 0;                ///< the number of products per evaluation
  /// The color of each column (Columns) or row (Rows), from 0.
  std::vector<std::int32_t> color;
};

namespace detail {
class SparseDerivativeState;  // sparse.cpp: f, the analyses per signature, their programs

/// The transform without its function's type, compiled once (src/sparse/sparse_derivative.cpp).
class SparseDerivative {
 public:
  SparseDerivative(TracedFunction f, SparseOptions options, bool hessian);
  SparseMatrix operator()(const Tensors& args) const;
  SparseAnalysis analysis(const Tensors& args) const;
  /// Uses `analysis` (a Jacobian's pattern and its coloring by columns or rows, made from the same
  /// function at these arguments' signature, whose output has type `output`) for calls at that
  /// signature instead of detecting and coloring again; no effect if that signature already has
  /// one. tf::jacobian's automatic mode detects once and hands the chosen coloring over.
  void adopt(const Tensors& args, const SparseAnalysis& analysis, const TensorType& output) const;

 private:
  std::shared_ptr<SparseDerivativeState> state_;
};

std::shared_ptr<const SparsityPattern> jacobian_sparsity_of(const TracedFunction& f, const Tensors& args,
                                                           const SparseOptions& options);
std::shared_ptr<const SparsityPattern> hessian_sparsity_of(const TracedFunction& f, const Tensors& args,
                                                          const SparseOptions& options);
}  // namespace detail

/// The structural sparsity pattern of the Jacobian of f (one output, any shape) with respect to
/// argument options.argnum, at these arguments' types (and integer arguments' values).
template <class F>
std::shared_ptr<const SparsityPattern> jacobian_sparsity(F f, const Tensors& args, const SparseOptions& options = {}) {
  return detail::jacobian_sparsity_of(detail::erase_function(std::move(f)), args, options);
}

/// The structural sparsity pattern of the Hessian of f (a real scalar loss) with respect to
/// argument options.argnum: the Jacobian pattern of its gradient program, made symmetric.
template <class F>
std::shared_ptr<const SparsityPattern> hessian_sparsity(F f, const Tensors& args, const SparseOptions& options = {}) {
  return detail::hessian_sparsity_of(detail::erase_function(std::move(f)), args, options);
}

/// A sparse Jacobian or Hessian transform of f: call it with f's arguments (Tensors).
class SparseTransformed {
 public:
  SparseTransformed(detail::TracedFunction f, SparseOptions options, bool hessian)
      : impl_(std::move(f), std::move(options), hessian) {}
  template <class... A>
  SparseMatrix operator()(const A&... args) const {
    return impl_(Tensors{args...});
  }
  /// The same on a list of arguments.
  SparseMatrix call(const Tensors& args) const { return impl_(args); }
  SparseAnalysis analysis_of(const Tensors& args) const { return impl_.analysis(args); }
  /// The analysis the call on these arguments uses (made on first use).
  template <class... A>
  SparseAnalysis analysis(const A&... args) const {
    return impl_.analysis(Tensors{args...});
  }

 private:
  detail::SparseDerivative impl_;
};

/// The Jacobian of f (one float output) with respect to argument options.argnum, as a sparse
/// matrix with a row per output element and a column per argument element.
template <class F>
SparseTransformed sparse_jacobian(F f, SparseOptions options = {}) {
  return SparseTransformed(detail::erase_function(std::move(f)), std::move(options), /*hessian=*/false);
}

/// The Hessian of f (a real scalar loss) with respect to argument options.argnum, as a sparse
/// symmetric matrix (both triangles stored); options.mode is ignored (a star coloring of columns).
template <class F>
SparseTransformed sparse_hessian(F f, SparseOptions options = {}) {
  return SparseTransformed(detail::erase_function(std::move(f)), std::move(options), /*hessian=*/true);
}

}  // namespace tenferro
