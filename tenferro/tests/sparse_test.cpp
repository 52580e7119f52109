// Sparse Jacobians and Hessians (tenferro/sparse.hpp): patterns against closed forms and against
// the nonzeros of dense Jacobians, colorings checked by their definitions, and values against
// jacfwd and hessian.
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "op_test_util.hpp"
#include "tenferro/tenferro.hpp"

namespace tf = tenferro;
using T = tf::Traced;

namespace {

/// The 5-point Laplacian of u [n, n] with zero Dirichlet boundary values (unit spacing).
T laplacian(const T& u) {
  const std::int64_t n = u.shape()[0];
  const T p = tf::pad(u, 0.0, {1, 1}, {1, 1});
  const T up = tf::slice(p, {0, 1}, {n, n + 1}), down = tf::slice(p, {2, 1}, {n + 2, n + 1});
  const T left = tf::slice(p, {1, 0}, {n + 1, n}), right = tf::slice(p, {1, 2}, {n + 1, n + 2});
  return up + down + left + right - 4.0 * u;
}
/// A nonlinear Poisson (Bratu) residual: -laplacian(u) - lambda exp(u).
T bratu(const T& u) { return -laplacian(u) - 0.5 * tf::exp(u); }

/// The pattern of the 5-point stencil on an n x n grid, as sets of columns per row.
std::vector<std::set<std::int64_t>> stencil(std::int64_t n) {
  std::vector<std::set<std::int64_t>> rows(static_cast<std::size_t>(n * n));
  for (std::int64_t i = 0; i < n; ++i) {
    for (std::int64_t j = 0; j < n; ++j) {
      auto& r = rows[static_cast<std::size_t>(i * n + j)];
      r.insert(i * n + j);
      if (i > 0) r.insert((i - 1) * n + j);
      if (i + 1 < n) r.insert((i + 1) * n + j);
      if (j > 0) r.insert(i * n + j - 1);
      if (j + 1 < n) r.insert(i * n + j + 1);
    }
  }
  return rows;
}

std::vector<std::set<std::int64_t>> rows_of(const tf::SparsityPattern& p) {
  std::vector<std::set<std::int64_t>> rows(static_cast<std::size_t>(p.rows));
  for (std::int64_t i = 0; i < p.rows; ++i) {
    for (auto k = p.row_offsets[static_cast<std::size_t>(i)]; k < p.row_offsets[static_cast<std::size_t>(i) + 1]; ++k) {
      rows[static_cast<std::size_t>(i)].insert(p.col_indices[static_cast<std::size_t>(k)]);
    }
  }
  return rows;
}

/// Every nonzero of the dense Jacobian `j` (viewed as [p.rows, p.cols]) lies in the pattern.
::testing::AssertionResult covers(const tf::SparsityPattern& p, const tf::Tensor& j) {
  if (j.numel() != p.rows * p.cols) return ::testing::AssertionFailure() << "shape mismatch";
  for (std::int64_t i = 0; i < p.rows; ++i) {
    for (std::int64_t c = 0; c < p.cols; ++c) {
      if (j.element(i * p.cols + c) != tf::c128(0) && !p.contains(i, c)) {
        return ::testing::AssertionFailure() << "J[" << i << ", " << c << "] = " << j.element(i * p.cols + c).real()
                                             << " is outside the pattern";
      }
    }
  }
  return ::testing::AssertionSuccess();
}

/// Checks a coloring by its definition: no two columns of one color share a row (Columns), or no
/// two rows of one color share a column (Rows).
::testing::AssertionResult valid_partial_coloring(const tf::SparsityPattern& p, const tf::SparseAnalysis& a) {
  const bool columns = a.mode == tf::SparseMode::Columns;
  if (static_cast<std::int64_t>(a.color.size()) != (columns ? p.cols : p.rows)) return ::testing::AssertionFailure() << "size";
  // Columns: the colors within each row are distinct. Rows: within each column.
  std::map<std::pair<std::int64_t, std::int32_t>, std::int64_t> owner;  // (line, color) -> vertex
  const auto rows = p.row_indices();
  for (std::size_t k = 0; k < rows.size(); ++k) {
    const std::int64_t line = columns ? rows[k] : p.col_indices[k];
    const std::int64_t vertex = columns ? p.col_indices[k] : rows[k];
    const std::int32_t c = a.color[static_cast<std::size_t>(vertex)];
    if (c < 0 || c >= a.colors) return ::testing::AssertionFailure() << "color " << c << " out of range";
    auto [it, fresh] = owner.emplace(std::make_pair(line, c), vertex);
    if (!fresh && it->second != vertex) {
      return ::testing::AssertionFailure() << "vertices " << it->second << " and " << vertex << " share line " << line << " and color " << c;
    }
  }
  return ::testing::AssertionSuccess();
}

/// A star coloring by its definition on the pattern's graph (diagonal ignored): adjacent vertices
/// differ, and no path on four vertices is two-colored.
::testing::AssertionResult valid_star_coloring(const tf::SparsityPattern& p, const std::vector<std::int32_t>& color) {
  const auto adj = rows_of(p);
  for (std::int64_t u = 0; u < p.rows; ++u) {
    for (std::int64_t v : adj[static_cast<std::size_t>(u)]) {
      if (v == u) continue;
      if (color[static_cast<std::size_t>(u)] == color[static_cast<std::size_t>(v)]) {
        return ::testing::AssertionFailure() << "adjacent " << u << ", " << v << " share a color";
      }
      for (std::int64_t w : adj[static_cast<std::size_t>(v)]) {
        if (w == v || w == u || color[static_cast<std::size_t>(w)] != color[static_cast<std::size_t>(u)]) continue;
        for (std::int64_t x : adj[static_cast<std::size_t>(w)]) {
          if (x != w && x != v && color[static_cast<std::size_t>(x)] == color[static_cast<std::size_t>(v)]) {
            return ::testing::AssertionFailure() << "path " << u << "-" << v << "-" << w << "-" << x << " has two colors";
          }
        }
      }
    }
  }
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult equal_to_dense(const tf::SparseMatrix& m, const tf::Tensor& dense, double tol) {
  return tf::test::near(m.to_dense(), dense.reshaped({m.pattern->rows, m.pattern->cols}), tol);
}

TEST(SparsityPattern, AStencilsPatternIsItsClosedForm) {
  for (std::int64_t n : {1, 2, 5, 9}) {
    SCOPED_TRACE(n);
    const tf::Tensor u = tf::test::random_tensor({tf::DType::F64, {n, n}}, 3);
    const auto p = tf::jacobian_sparsity(bratu, {u});
    EXPECT_EQ(p->rows, n * n);
    EXPECT_EQ(p->cols, n * n);
    EXPECT_EQ(rows_of(*p), stencil(n));
  }
}

TEST(SparsityPattern, PrintsAsRowsOfMarks) {
  auto f = [](const T& x) { return tf::slice(x, {1}, {4}) * tf::slice(x, {0}, {3}); };
  const auto p = tf::jacobian_sparsity(f, {tf::Tensor::ones({4})});
  EXPECT_EQ(p->print(), "xx..\n.xx.\n..xx\n");
}

TEST(SparsityPattern, ReductionsAndContractionsUnionWhatTheySum) {
  const tf::Tensor x = tf::test::random_tensor({tf::DType::F64, {3, 4}}, 5);
  // Row sums: row i depends on the 4 elements of x's row i.
  const auto p = tf::jacobian_sparsity([](const T& a) { return tf::sum(a, {1}); }, {x});
  EXPECT_EQ(p->print(), "xxxx........\n....xxxx....\n........xxxx\n");
  // A matmul with a constant: (a B)[i, j] depends on row i of a.
  const tf::Tensor b = tf::test::random_tensor({tf::DType::F64, {4, 2}}, 6);
  const auto q = tf::jacobian_sparsity([&b](const T& a) { return tf::matmul(a, tf::constant(a, b)); }, {x});
  EXPECT_EQ(q->print(), "xxxx........\nxxxx........\n....xxxx....\n....xxxx....\n........xxxx\n........xxxx\n");
  // Transposed and reshaped moves keep single entries.
  const auto t = tf::jacobian_sparsity([](const T& a) { return tf::reshape(tf::transpose(a), {12}) * 2.0; }, {x});
  for (std::int64_t r = 0; r < 12; ++r) {
    const std::int64_t i = r % 3, j = r / 3;  // element (j, i) of a^T is a[i, j]
    EXPECT_EQ(t->row_offsets[static_cast<std::size_t>(r) + 1] - t->row_offsets[static_cast<std::size_t>(r)], 1);
    EXPECT_TRUE(t->contains(r, i * 4 + j)) << r;
  }
}

TEST(SparsityPattern, ConstantIndicesMoveEntriesAndIndicesFromTheArgumentTakeAll) {
  const tf::Tensor x = tf::test::random_tensor({tf::DType::F64, {5}}, 7);
  auto by_constant = [](const T& a) { return tf::take(a, {3, 0, 3, 1}, 0) * 2.0; };
  EXPECT_EQ(tf::jacobian_sparsity(by_constant, {x})->print(), "...x.\nx....\n...x.\n.x...\n");
  // An index computed from x could point anywhere: every element of x.
  auto by_argument = [](const T& a) {
    const T idx = tf::astype(tf::floor(tf::abs(tf::slice(a, {0}, {2})) * 0.0), tf::DType::I64);
    return tf::take(a, idx, 0);
  };
  EXPECT_EQ(tf::jacobian_sparsity(by_argument, {x})->print(), "xxxxx\nxxxxx\n");
}

TEST(SparsityPattern, AccumulationsCollectWhatLandsOnEachElement) {
  const tf::Tensor x = tf::test::random_tensor({tf::DType::F64, {4}}, 53);
  const tf::Tensor idx = tf::Tensor::from(std::vector<std::int64_t>{0, 2, 0, 3}, {4});
  // index_add: out[idx[k]] += x[k]^2; out[1] receives nothing.
  auto by_index_add = [&idx](const T& a) { return tf::index_add(tf::full_like(a, 1.0), tf::constant(a, idx), a * a, 0); };
  EXPECT_EQ(tf::jacobian_sparsity(by_index_add, {x})->print(), "x.x.\n....\n.x..\n...x\n");
  // scatter_add of rows (windows of one element here) onto a base that depends on x too.
  auto by_scatter = [&idx](const T& a) {
    const T rows = tf::reshape(tf::constant(a, idx), {4, 1});
    return tf::scatter_add(tf::reverse(a, {0}), rows, tf::sin(a), {{}, {0}, {0}, 1});
  };
  const auto p = tf::jacobian_sparsity(by_scatter, {x});
  EXPECT_EQ(p->print(), "x.xx\n..x.\n.x..\nx..x\n");  // out[o] = x[3 - o] + sum of sin(x[k]) with idx[k] = o
  EXPECT_TRUE(covers(*p, tf::jacfwd(by_scatter)(x)));
  EXPECT_TRUE(equal_to_dense(tf::sparse_jacobian(by_scatter)(x), tf::jacfwd(by_scatter)(x), 1e-12));
}

TEST(SparseHessian, AnEnergyAssembledByGathersKeepsItsSparsity) {
  // E(x) = sum over the edges (i, j) of a path, listed out of order, of (x_i - x_j)^4, plus
  // sum(exp(x)). The gradient scatter-adds the edge terms back (index_add, take's transpose), so
  // the Hessian's pattern is the path's: tridiagonal, not dense.
  const std::int64_t n = 9;
  std::vector<std::int64_t> from, to;
  for (std::int64_t k : {5, 0, 7, 2, 4, 1, 6, 3}) {
    from.push_back(k);
    to.push_back(k + 1);
  }
  const tf::Tensor i = tf::Tensor::from(from, {8}), j = tf::Tensor::from(to, {8});
  auto energy = [&](const T& x) {
    const T d = tf::take(x, tf::constant(x, i), 0) - tf::take(x, tf::constant(x, j), 0);
    return tf::sum(d * d * d * d) + tf::sum(tf::exp(x));
  };
  const tf::Tensor x = tf::test::random_tensor({tf::DType::F64, {n}}, 59);
  const tf::SparseMatrix h = tf::sparse_hessian(energy)(x);
  EXPECT_EQ(h.pattern->nnz(), 3 * n - 2);
  EXPECT_TRUE(equal_to_dense(h, tf::hessian(energy)(x), 1e-10));
}

TEST(SparsityPattern, CheckpointsAndBranchesAreSeenThrough) {
  // A checkpoint is a one-branch cond: its pattern is its function's.
  const std::int64_t n = 6;
  const tf::Tensor u = tf::test::random_tensor({tf::DType::F64, {n, n}}, 61);
  auto checkpointed = [](const T& v) { return tf::checkpoint([](const T& w) { return bratu(w); })(v) * 2.0; };
  EXPECT_EQ(rows_of(*tf::jacobian_sparsity(checkpointed, {u})), stencil(n));
  EXPECT_TRUE(equal_to_dense(tf::sparse_jacobian(checkpointed)(u), tf::jacfwd(checkpointed)(u), 1e-12));
  // A cond on a value of x: either branch may run, so the union of both patterns.
  const tf::Tensor x = tf::test::random_tensor({tf::DType::F64, {4}}, 67);
  auto branchy = [](const T& a) {
    return tf::cond(tf::gt(tf::sum(a), tf::full_like(tf::sum(a), 0.0)),
                    [](const tf::TracedList& b) { return tf::TracedList{b[0] * b[0]}; },
                    [](const tf::TracedList& b) { return tf::TracedList{tf::reverse(b[0], {0}) * 3.0}; }, tf::TracedList{a})
        .at(0);
  };
  const auto p = tf::jacobian_sparsity(branchy, {x});
  EXPECT_EQ(p->print(), "x..x\n.xx.\n.xx.\nx..x\n");
  EXPECT_TRUE(covers(*p, tf::jacfwd(branchy)(x)));
  EXPECT_TRUE(equal_to_dense(tf::sparse_jacobian(branchy)(x), tf::jacfwd(branchy)(x), 1e-12));
}

TEST(SparsityPattern, CoversTheNonzerosOfDenseJacobians) {
  const tf::Tensor x = tf::test::random_tensor({tf::DType::F64, {4, 3}}, 11);
  const tf::Tensor w = tf::test::random_tensor({tf::DType::F64, {3, 3}}, 12);
  const std::vector<std::function<T(const T&)>> fs = {
      [](const T& a) { return tf::sin(a) * tf::reshape(tf::transpose(tf::reshape(a, {3, 4})), {4, 3}); },
      [&w](const T& a) { return tf::tanh(tf::matmul(a, tf::constant(a, w))) + tf::cumsum(a, 0); },
      [](const T& a) {
        return tf::concatenate({tf::exp(tf::slice(a, {0, 0}, {2, 3})), tf::reshape(tf::sum(a, {0}), {1, 3})}, std::int64_t{0});
      },
      [](const T& a) { return tf::pad(tf::reverse(a, {1}), 1.5, {0, 1}, {1, 0}) * 3.0; },
      [](const T& a) { return tf::where(tf::gt(a, tf::full_like(a, 0.0)), a * a, tf::sin(a)); },
      [](const T& a) { return tf::linalg::svdvals(a); },
  };
  for (std::size_t i = 0; i < fs.size(); ++i) {
    SCOPED_TRACE(i);
    const auto p = tf::jacobian_sparsity(fs[i], {x});
    const tf::Tensor j = tf::jacfwd(fs[i])(x);
    EXPECT_TRUE(covers(*p, j));
    const tf::SparseMatrix m = tf::sparse_jacobian(fs[i])(x);
    EXPECT_TRUE(equal_to_dense(m, j, 1e-12));
  }
}

TEST(SparseJacobian, EveryModeGivesJacfwdsValues) {
  const std::int64_t n = 7;
  const tf::Tensor u = tf::test::random_tensor({tf::DType::F64, {n, n}}, 13);
  const tf::Tensor dense = tf::jacfwd(bratu)(u);
  for (tf::SparseMode mode : {tf::SparseMode::Auto, tf::SparseMode::Columns, tf::SparseMode::Rows}) {
    SCOPED_TRACE(static_cast<int>(mode));
    const auto jac = tf::sparse_jacobian(bratu, {.mode = mode});
    const tf::SparseMatrix m = jac(u);
    EXPECT_EQ(rows_of(*m.pattern), stencil(n));
    EXPECT_TRUE(equal_to_dense(m, dense, 1e-12));
    const tf::SparseAnalysis a = jac.analysis(u);
    EXPECT_EQ(a.pattern, m.pattern);  // analyzed once, shared
    if (mode != tf::SparseMode::Auto) {
      EXPECT_EQ(a.mode, mode);
    }
    EXPECT_TRUE(valid_partial_coloring(*a.pattern, a));
    // A 5-point stencil needs 5 colors either way (a row has 5 entries); smallest-last order
    // finds such a coloring.
    EXPECT_EQ(a.colors, 5);
  }
}

TEST(SparseJacobian, ColoringsAreTheSameOnEveryRun) {
  // ColPack's coloring on several OpenMP threads is speculative and varies between runs; the
  // analysis must not (the colors decide every sum's order).
  const tf::Tensor u = tf::test::random_tensor({tf::DType::F64, {40, 40}}, 41);
  tf::set_num_threads(2);
  const auto first = tf::sparse_jacobian(bratu, {.ordering = "NATURAL"}).analysis(u);
  for (int run = 0; run < 5; ++run) {
    const auto again = tf::sparse_jacobian(bratu, {.ordering = "NATURAL"}).analysis(u);
    EXPECT_EQ(again.color, first.color) << "run " << run;
  }
  auto energy = [](const T& x) { return tf::sum(x * laplacian(x)) + tf::sum(tf::exp(x)); };
  const auto h = tf::sparse_hessian(energy).analysis(u);
  for (int run = 0; run < 5; ++run) EXPECT_EQ(tf::sparse_hessian(energy).analysis(u).color, h.color) << "run " << run;
}

TEST(SparseJacobian, RowsWinForAFunctionWithADenseRow) {
  // Output 0 depends on every element (a dense row): columns need as many colors as x has
  // elements, rows two (the dense row, and every other row, each of one column of its own).
  auto f = [](const T& a) {
    return tf::concatenate({tf::reshape(tf::sum(a), {1}), tf::slice(a, {1}, {9}) * 2.0}, std::int64_t{0});
  };
  const tf::Tensor x = tf::test::random_tensor({tf::DType::F64, {9}}, 17);
  const auto jac = tf::sparse_jacobian(f);
  const auto a = jac.analysis(x);
  EXPECT_EQ(a.mode, tf::SparseMode::Rows);
  EXPECT_EQ(a.colors, 2);
  EXPECT_TRUE(valid_partial_coloring(*a.pattern, a));
  EXPECT_TRUE(equal_to_dense(jac(x), tf::jacfwd(f)(x), 1e-12));
  const auto by_columns = tf::sparse_jacobian(f, {.mode = tf::SparseMode::Columns}).analysis(x);
  EXPECT_EQ(by_columns.colors, 9);
  EXPECT_TRUE(valid_partial_coloring(*by_columns.pattern, by_columns));
}

TEST(SparseJacobian, FixedArgumentsAndFloatSingle) {
  const tf::Tensor x = tf::test::random_tensor({tf::DType::F32, {6}}, 19);
  const tf::Tensor c = tf::test::random_tensor({tf::DType::F32, {6}}, 20);
  auto f = [](const T& a, const T& b) { return tf::slice(a, {1}, {6}) * tf::slice(b, {0}, {5}) + tf::slice(a, {0}, {5}); };
  const tf::SparseMatrix m = tf::sparse_jacobian(f)(x, c);
  EXPECT_EQ(m.values.dtype(), tf::DType::F32);
  EXPECT_TRUE(equal_to_dense(m, tf::jacfwd(f)(x, c), 1e-6));
  const tf::SparseMatrix mb = tf::sparse_jacobian(f, {.argnum = 1})(x, c);
  EXPECT_EQ(mb.pattern->print(), "x.....\n.x....\n..x...\n...x..\n....x.\n");
  EXPECT_TRUE(equal_to_dense(mb, tf::jacfwd(f, 1)(x, c), 1e-6));
}

TEST(SparseJacobian, IntegerArgumentsWithNewValuesAreAnalyzedAgain) {
  auto f = [](const T& a, const T& idx) { return tf::take(a, idx, 0) * tf::take(a, idx, 0); };
  const tf::Tensor x = tf::test::random_tensor({tf::DType::F64, {5}}, 23);
  const auto jac = tf::sparse_jacobian(f);
  const tf::Tensor i1 = tf::Tensor::from(std::vector<std::int64_t>{4, 2}, {2});
  const tf::Tensor i2 = tf::Tensor::from(std::vector<std::int64_t>{0, 1}, {2});
  EXPECT_EQ(jac(x, i1).pattern->print(), "....x\n..x..\n");
  EXPECT_EQ(jac(x, i2).pattern->print(), "x....\n.x...\n");
  EXPECT_TRUE(equal_to_dense(jac(x, i1), tf::jacfwd(f)(x, i1), 1e-12));
}

TEST(SparseJacobian, RefusesWhatItCannotDo) {
  const tf::Tensor z = tf::Tensor::zeros({3}, tf::DType::C128);
  EXPECT_THROW(tf::sparse_jacobian([](const T& a) { return a * a; })(z), tf::DTypeError);
  const tf::Tensor x = tf::Tensor::ones({3});
  EXPECT_THROW(tf::sparse_jacobian([](const T& a) { return a * a; }, {.ordering = "BEST"})(x), tf::Error);
  try {
    tf::jacobian_sparsity([](const T& a) { return tf::sum(a) * a; }, {tf::Tensor::ones({100})}, {.max_nonzeros = 1000});
    ADD_FAILURE() << "a dense Jacobian passed max_nonzeros";
  } catch (const tf::Error& e) {
    EXPECT_NE(std::string(e.what()).find("max_nonzeros"), std::string::npos) << e.what();
  }
  // Two results: a Jacobian has one.
  EXPECT_THROW(tf::jacobian_sparsity([](const T& a) { return std::vector<T>{a, a}; }, {x}), tf::ShapeError);
}

// Detection replays only the operations the result depends on: a dense intermediate the function
// computes and discards neither trips max_nonzeros nor widens the pattern (it threw, naming the
// discarded product).
TEST(SparseJacobian, DiscardedValuesDoNotCount) {
  auto f = [](const T& a) {
    const T discarded = tf::sum(a) * a;  // a dense Jacobian, 10^4 entries
    (void)discarded;
    return tf::sin(a) * 2.0;
  };
  const tf::Tensor x = tf::test::random_tensor({tf::DType::F64, {100}}, 59);
  const auto p = tf::jacobian_sparsity(f, {x}, {.max_nonzeros = 1000});
  EXPECT_EQ(p->nnz(), 100);
  for (std::int64_t i = 0; i < 100; ++i) EXPECT_TRUE(p->contains(i, i));
  EXPECT_TRUE(equal_to_dense(tf::sparse_jacobian(f, {.max_nonzeros = 1000})(x), tf::jacfwd(f)(x), 1e-12));
}

TEST(SparseJacobian, EmptyArgumentsAndResults) {
  // No argument elements: a 3 x 0 Jacobian, no products.
  auto f = [](const T& a) { return tf::broadcast_to(tf::reshape(tf::sum(a), {1}), {3}) + 1.0; };
  const tf::SparseMatrix none = tf::sparse_jacobian(f)(tf::Tensor::zeros({0}));
  EXPECT_EQ(none.pattern->rows, 3);
  EXPECT_EQ(none.pattern->cols, 0);
  EXPECT_EQ(none.values.numel(), 0);
  // No result elements: a 0 x 4 Jacobian.
  auto g = [](const T& a) { return tf::slice(a, {1}, {1}) * 2.0; };
  const tf::SparseMatrix empty = tf::sparse_jacobian(g)(tf::Tensor::ones({4}));
  EXPECT_EQ(empty.pattern->rows, 0);
  EXPECT_EQ(empty.pattern->cols, 4);
  EXPECT_EQ(empty.pattern->nnz(), 0);
  EXPECT_EQ(empty.to_dense().shape(), (tf::Shape{0, 4}));
  // A sum over an empty axis depends on nothing.
  EXPECT_EQ(tf::jacobian_sparsity([](const T& a) { return tf::sum(a, {1}); }, {tf::Tensor::ones({3, 0})})->print(), "\n\n\n");
}

/// A chained Rosenbrock objective: its Hessian is tridiagonal.
T rosenbrock(const T& x) {
  const std::int64_t n = x.shape()[0];
  const T a = tf::slice(x, {0}, {n - 1}), b = tf::slice(x, {1}, {n});
  return tf::sum(100.0 * (b - a * a) * (b - a * a) + (1.0 - a) * (1.0 - a));
}

TEST(SparseHessian, TridiagonalForAChainAndEqualToTheDenseHessian) {
  const tf::Tensor x = tf::test::random_tensor({tf::DType::F64, {10}}, 29);
  const auto hes = tf::sparse_hessian(rosenbrock);
  const tf::SparseMatrix h = hes(x);
  std::vector<std::set<std::int64_t>> tri(10);
  for (std::int64_t i = 0; i < 10; ++i) {
    for (std::int64_t j = std::max<std::int64_t>(0, i - 1); j <= std::min<std::int64_t>(9, i + 1); ++j) tri[static_cast<std::size_t>(i)].insert(j);
  }
  EXPECT_EQ(rows_of(*h.pattern), tri);
  EXPECT_TRUE(equal_to_dense(h, tf::hessian(rosenbrock)(x), 1e-10));
  const auto a = hes.analysis(x);
  EXPECT_TRUE(valid_star_coloring(*a.pattern, a.color));
  EXPECT_EQ(a.colors, 3);
}

TEST(SparseHessian, AStencilEnergysHessianIsItsStencil) {
  // E(u) = sum(u * laplacian(u)) / 2 + sum(exp(u)): Hessian = laplacian + diag(exp(u)).
  auto energy = [](const T& u) { return 0.5 * tf::sum(u * laplacian(u)) + tf::sum(tf::exp(u)); };
  const std::int64_t n = 6;
  const tf::Tensor u = tf::test::random_tensor({tf::DType::F64, {n, n}}, 31);
  const auto hes = tf::sparse_hessian(energy);
  const tf::SparseMatrix h = hes(u);
  EXPECT_EQ(rows_of(*h.pattern), stencil(n));
  EXPECT_TRUE(equal_to_dense(h, tf::hessian(energy)(u), 1e-10));
  const auto a = hes.analysis(u);
  EXPECT_TRUE(valid_star_coloring(*a.pattern, a.color));
  EXPECT_EQ(tf::hessian_sparsity(energy, {u})->print(), h.pattern->print());
}

TEST(SparseHessian, DenseCouplingGivesADenseHessian) {
  auto f = [](const T& x) { return tf::sum(x) * tf::sum(x * x); };
  const tf::Tensor x = tf::test::random_tensor({tf::DType::F64, {5}}, 37);
  const tf::SparseMatrix h = tf::sparse_hessian(f)(x);
  EXPECT_EQ(h.pattern->nnz(), 25);
  EXPECT_TRUE(equal_to_dense(h, tf::hessian(f)(x), 1e-10));
}

}  // namespace

namespace {

// jacobian (tenferro/jacobian.hpp): the choice by predicted cost, and every mode equal to jacfwd.
TEST(Jacobian, AutoChoosesByProductsAndEveryModeEqualsJacfwd) {
  struct Case {
    const char* name;
    std::function<T(const T&)> f;
    tf::Shape shape;
    tf::JacobianMode expected;
  };
  const std::vector<Case> cases = {
      // Elementwise: a diagonal Jacobian, one product by columns (forward would take 40).
      {"elementwise", [](const T& a) { return tf::exp(a) * 2.0 + tf::sin(a); }, {40}, tf::JacobianMode::Columns},
      // A 5-point stencil on 8 x 8: 5 colors against 64 products.
      {"stencil", bratu, {8, 8}, tf::JacobianMode::Columns},
      // Dense and square, J = diag(exp a) sum(a) + exp(a) 1^T: cross-country forms it from the
      // diagonal and one outer product (about 0.8x the time of the better extreme, measured),
      // where forward and reverse push a 20 x 20 identity seed through the program.
      {"dense", [](const T& a) { return tf::exp(a) * tf::sum(a); }, {20}, tf::JacobianMode::CrossCountry},
      // Dense, through a sort: forward (20 products) over reverse (20, weighing 1.5 each) and over
      // cross-country, which must read the sort's permutation off as a dense 20 x 20 block
      // (predicted 0.89 of forward's cost, measured 1.2x its time).
      {"dense sorted", [](const T& a) { return tf::sort(a, 0) * tf::sum(a); }, {20}, tf::JacobianMode::Forward},
      // Three dense outputs of 30 inputs: reverse.
      {"wide", [](const T& a) { return tf::concatenate({tf::reshape(tf::sum(a * a), {1}), tf::reshape(tf::sum(tf::sin(a)), {1}),
                                                         tf::reshape(tf::sum(tf::exp(a)), {1})}, std::int64_t{0}); },
       {30}, tf::JacobianMode::Reverse},
      // One dense row, the other rows one entry each: rows in 2 colors (3 forward products' cost).
      {"dense row", [](const T& a) { return tf::concatenate({tf::reshape(tf::sum(a), {1}), tf::slice(a, {1}, {12}) * 2.0}, std::int64_t{0}); },
       {12}, tf::JacobianMode::Rows},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const tf::Tensor x = tf::test::random_tensor({tf::DType::F64, c.shape}, 43);
    const tf::Tensor expected = tf::jacfwd(c.f)(x);
    const auto auto_j = tf::jacobian(c.f);
    const tf::JacobianChoice choice = auto_j.choice(x);
    EXPECT_EQ(choice.mode, c.expected) << choice.explain;
    EXPECT_NE(choice.explain.find(tf::jacobian_mode_name(c.expected)), std::string::npos) << choice.explain;
    EXPECT_TRUE(tf::test::near(auto_j(x), expected, 1e-12));
    for (tf::JacobianMode mode : {tf::JacobianMode::Forward, tf::JacobianMode::Reverse, tf::JacobianMode::Columns, tf::JacobianMode::Rows,
                                  tf::JacobianMode::CrossCountry}) {
      SCOPED_TRACE(tf::jacobian_mode_name(mode));
      const auto fixed = tf::jacobian(c.f, {.mode = mode});
      EXPECT_EQ(fixed.choice(x).mode, mode);
      EXPECT_TRUE(tf::test::near(fixed(x), expected, 1e-12));
    }
  }
}

// The automatic mode detects the pattern once and colors it both ways: on the first call the
// function is traced once for the choice and once inside the chosen product program (it was traced
// five times when each compressed mode made its own analysis).
TEST(Jacobian, AutoTracesTheFunctionOnceForItsChoice) {
  int traces = 0;
  auto counted = [&traces](const T& a) {
    ++traces;
    return bratu(a);
  };
  const tf::Tensor x = tf::test::random_tensor({tf::DType::F64, {8, 8}}, 53);
  const auto j = tf::jacobian(counted);
  const tf::Tensor value = j(x);
  EXPECT_EQ(j.choice(x).mode, tf::JacobianMode::Columns);
  EXPECT_EQ(traces, 2);
  EXPECT_TRUE(tf::test::near(value, tf::jacfwd(bratu)(x), 1e-12));
  traces = 0;
  (void)j(x);
  EXPECT_EQ(traces, 0);  // later calls run the compiled program
}

TEST(Jacobian, ComplexValuesTakeTheExtremes) {
  const tf::Tensor z = tf::test::random_tensor({tf::DType::C128, {4}}, 47);
  auto f = [](const T& a) { return a * a; };
  const auto j = tf::jacobian(f);
  EXPECT_TRUE(j.choice(z).mode == tf::JacobianMode::Forward || j.choice(z).mode == tf::JacobianMode::Reverse);
  EXPECT_TRUE(tf::test::near(j(z), tf::jacfwd(f)(z), 1e-12));
  EXPECT_THROW(tf::jacobian(f, {.mode = tf::JacobianMode::Columns})(z), tf::DTypeError);
}

}  // namespace
