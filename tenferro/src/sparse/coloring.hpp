#pragma once
// Colorings of sparsity patterns, by ColPack (the graph-coloring library ADOL-C uses): the
// columns (or rows) of a Jacobian that one product can compute together, and the columns of a
// symmetric Hessian that one Hessian-vector product can.
#include <cstdint>
#include <string>
#include <vector>

#include "tenferro/sparse.hpp"

namespace tenferro::sparse {

struct Coloring {
  std::int64_t colors = 0;          ///< max color + 1 (0 for no vertices)
  std::vector<std::int32_t> color;  ///< one per column (or row), from 0
};

/// No two columns of one color have a nonzero in the same row (a partial distance-2 coloring of
/// the columns of the pattern's bipartite graph): J times the color's indicator vector holds each
/// of those columns' entries alone.
Coloring color_columns(const SparsityPattern& p, const std::string& ordering);
/// The same for rows (w^T J products).
Coloring color_rows(const SparsityPattern& p, const std::string& ordering);
/// A star coloring of the adjacency graph of a symmetric pattern (the diagonal ignored): adjacent
/// columns differ, and every path on four vertices uses at least three colors, so that every
/// entry of a symmetric matrix can be read directly from its products with the colors'
/// indicator vectors (recovery in sparse_derivative.cpp).
Coloring star_coloring(const SparsityPattern& p, const std::string& ordering);

}  // namespace tenferro::sparse
