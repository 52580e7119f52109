// triangular_solve, solve, inv, lu, det, slogdet, pinv, lstsq, matrix norms, expm, and the slice,
// pad and concatenate ops they use: results against their defining identities (computed here
// with a naive product), derivatives to order 2 (check_grads) in f64 and c128, and the singular
// and mismatched inputs that must raise typed errors.
#include <gmock/gmock.h>

#include <limits>

#include "linalg_test_util.hpp"

namespace tf = tenferro;
namespace la = tenferro::linalg;
using namespace tenferro::test;

namespace {
const tf::DType kDTypes[] = {tf::DType::F64, tf::DType::C128};
}  // namespace

TEST(TriangularSolve, EveryVariantSolvesItsSystemAndHasSecondDerivatives) {
  std::mt19937_64 rng(21);
  for (tf::DType dt : kDTypes) {
    for (bool left : {true, false}) {
      for (bool lower : {true, false}) {
        for (bool adjoint : {false, true}) {
          for (bool unit : {false, true}) {
            SCOPED_TRACE(std::string(tf::dtype_name(dt)) + (left ? " left" : " right") + (lower ? " lower" : " upper") +
                         (adjoint ? " adjoint" : "") + (unit ? " unit" : ""));
            const la::TriangularSolveOptions o{left, lower, adjoint, unit};
            const tf::Tensor a = random_matrix(rng, {2, 3, 3}, dt, 3.0);
            const tf::Tensor b = random_matrix(rng, left ? tf::Shape{2, 3, 2} : tf::Shape{2, 2, 3}, dt);
            // The residual op(T) X - B (or X op(T) - B) with T the triangle actually read.
            auto out = run([o](const std::vector<T>& x) {
              const T x_sol = la::triangular_solve(x[0], x[1], o);
              const T tri = tf::constant(x[0], tf::Tensor::zeros({3, 3}, x[0].dtype()));
              // Build the triangle the op reads from the full matrix with a mask.
              std::vector<double> mask(9);
              for (int i = 0; i < 3; ++i)
                for (int j = 0; j < 3; ++j) mask[static_cast<std::size_t>(i * 3 + j)] = (o.lower ? j < i : j > i) ? 1 : 0;
              T t = x[0] * tf::astype(tf::constant(x[0], tf::Tensor::from(mask, {3, 3})), x[0].dtype());
              t = t + (o.unit_diagonal ? la::eye(x[0], 3) : x[0] * la::eye(x[0], 3)) + tri;
              const T op_t = o.adjoint ? la::adjoint(t) : t;
              const T residual = o.left_side ? tf::matmul(op_t, x_sol) - x[1] : tf::matmul(x_sol, op_t) - x[1];
              return std::vector<T>{residual};
            }, {a, b});
            for (std::int64_t i = 0; i < out[0].numel(); ++i) EXPECT_LT(std::abs(at(out[0], i)), 1e-13);
            expect_grads([o](const std::vector<T>& x) { return std::vector<T>{la::triangular_solve(x[0], x[1], o)}; },
                         {a, b});
          }
        }
      }
    }
  }
}

TEST(Solve, SolvesMatrixAndVectorRightHandSidesWithSecondDerivatives) {
  std::mt19937_64 rng(22);
  for (tf::DType dt : kDTypes) {
    SCOPED_TRACE(tf::dtype_name(dt));
    const tf::Tensor a = random_matrix(rng, {2, 3, 3}, dt, 2.0), b = random_matrix(rng, {2, 3, 2}, dt);
    const tf::Tensor v = random_matrix(rng, {4, 1}, dt), a1 = random_matrix(rng, {4, 4}, dt, 2.0);
    auto out = run([](const std::vector<T>& x) {
      return std::vector<T>{tf::matmul(x[0], la::solve(x[0], x[1])) - x[1], tf::matmul(x[0], la::inv(x[0]))};
    }, {a, b});
    for (std::int64_t i = 0; i < out[0].numel(); ++i) EXPECT_LT(std::abs(at(out[0], i)), 1e-13);
    for (std::int64_t i = 0; i < out[1].numel(); ++i) EXPECT_LT(std::abs(at(out[1], i) - ((i % 9) % 4 == 0 ? 1.0 : 0.0)), 1e-13);
    expect_grads([](const std::vector<T>& x) { return std::vector<T>{la::solve(x[0], x[1]), la::inv(x[0])}; }, {a, b});
    const tf::Tensor vv = run([](const std::vector<T>& x) { return std::vector<T>{tf::reshape(x[0], {4})}; }, {v})[0];
    expect_grads([](const std::vector<T>& x) { return std::vector<T>{la::solve(x[0], x[1])}; }, {a1, vv});
  }
}

TEST(Solve, SingularMatrixThrowsLinalgErrorWithThePivot) {
  const tf::Tensor a = tf::Tensor::from({{1.0, 2.0}, {2.0, 4.0}}), b = tf::Tensor::ones({2, 1});
  try {
    run([](const std::vector<T>& x) { return std::vector<T>{la::solve(x[0], x[1])}; }, {a, b});
    FAIL() << "expected LinalgError";
  } catch (const tf::LinalgError& e) {
    EXPECT_EQ(e.info(), 2);
    EXPECT_THAT(e.what(), ::testing::HasSubstr("singular"));
  }
  EXPECT_THROW(tf::trace([](T x, T y) { return la::solve(x, y); }, tf::Tensor::zeros({2, 3}), b), tf::ShapeError);
  EXPECT_THROW(tf::trace([](T x, T y) { return la::solve(x, y); }, tf::Tensor::zeros({2, 2}), tf::Tensor::zeros({3, 1})),
               tf::ShapeError);
  EXPECT_THROW(tf::trace([](T x, T y) { return la::solve(x, y); }, tf::Tensor::zeros({2, 2, 2}), tf::Tensor::zeros({3, 2, 1})),
               tf::ShapeError);
}

TEST(Lu, FactorsReproduceTheMatrixAndDeterminantsMatch) {
  std::mt19937_64 rng(23);
  for (tf::DType dt : kDTypes) {
    SCOPED_TRACE(tf::dtype_name(dt));
    const tf::Tensor a = random_matrix(rng, {4, 4}, dt), b = random_matrix(rng, {4, 4}, dt);
    auto out = run([](const std::vector<T>& x) {
      auto f = la::lu(x[0]);
      auto sl = la::slogdet(x[0]);
      return std::vector<T>{tf::matmul(tf::matmul(f.P, f.L), f.U), la::det(x[0]), la::det(x[1]),
                            la::det(tf::matmul(x[0], x[1])), sl.sign * tf::astype(tf::exp(sl.logabsdet), x[0].dtype())};
    }, {a, b});
    EXPECT_LT(max_abs_diff(matrix_of(out[0], 0), matrix_of(a, 0)), 1e-13);
    EXPECT_LT(std::abs(at(out[1], 0) * at(out[2], 0) - at(out[3], 0)), 1e-12);  // det(AB) = det A det B
    EXPECT_LT(std::abs(at(out[4], 0) - at(out[1], 0)), 1e-12);
    expect_grads([](const std::vector<T>& x) {
      auto f = la::lu(x[0]);
      return std::vector<T>{f.L, f.U, la::det(x[0]), la::slogdet(x[0]).logabsdet};
    }, {a});
  }
  // det of a 2x2 against ad - bc, and its gradient against the cofactor matrix.
  const tf::Tensor m = tf::Tensor::from({{1.5, -2.0}, {0.5, 3.0}});
  auto [v, g] = tf::value_and_grad([](T x) { return la::det(x); })(m);
  EXPECT_NEAR(v.item<double>(), 1.5 * 3.0 + 2.0 * 0.5, 1e-14);
  EXPECT_NEAR(g.data<double>()[0], 3.0, 1e-14);
  EXPECT_NEAR(g.data<double>()[1], -0.5, 1e-14);
  EXPECT_NEAR(g.data<double>()[2], 2.0, 1e-14);
  EXPECT_NEAR(g.data<double>()[3], 1.5, 1e-14);
}

TEST(LuFactor, PacksTheFactorsAndLuSolveEqualsSolve) {
  std::mt19937_64 rng(27);
  for (tf::DType dt : kDTypes) {
    for (const tf::Shape& shape : {tf::Shape{4, 4}, tf::Shape{5, 3}, tf::Shape{3, 5}}) {
      SCOPED_TRACE(tf::shape_to_string(shape) + " " + tf::dtype_name(dt));
      const tf::Tensor a = random_matrix(rng, shape, dt);
      auto out = run([](const std::vector<T>& x) {
        auto f = la::lu_factor(x[0]);
        auto g = la::lu(x[0]);
        return std::vector<T>{f.LU, f.pivots, g.P, g.L, g.U};
      }, {a});
      const std::int64_t m = shape[0], n = shape[1], k = std::min(m, n);
      ASSERT_EQ(out[1].dtype(), tf::DType::I64);
      ASSERT_EQ(out[1].shape(), (tf::Shape{k}));
      // LU holds L's strict lower part and U.
      for (std::int64_t i = 0; i < m; ++i) {
        for (std::int64_t j = 0; j < n; ++j) {
          const c128 want = j < i ? at(out[3], i * k + j) : at(out[4], i * n + j);
          EXPECT_EQ(at(out[0], i * n + j), want);
        }
      }
      // The pivots, applied as LAPACK's row interchanges (1-based, in order) to A's rows here,
      // give P^T A: row i of P^T A is row perm[i] of A, with P[perm[i], i] = 1.
      std::vector<std::int64_t> perm(static_cast<std::size_t>(m));
      for (std::int64_t i = 0; i < m; ++i) perm[static_cast<std::size_t>(i)] = i;
      for (std::int64_t i = 0; i < k; ++i) {
        const std::int64_t j = out[1].data<std::int64_t>()[i] - 1;
        ASSERT_GE(j, i);
        ASSERT_LT(j, m);
        std::swap(perm[static_cast<std::size_t>(i)], perm[static_cast<std::size_t>(j)]);
      }
      for (std::int64_t i = 0; i < m; ++i) EXPECT_EQ(at(out[2], perm[static_cast<std::size_t>(i)] * m + i), c128(1));
      expect_grads([](const std::vector<T>& x) { return std::vector<T>{la::lu_factor(x[0]).LU}; }, {a});
    }
    // lu_solve(lu_factor(A), B) = solve(A, B), batched, for a matrix and a vector right-hand side;
    // derivatives in A (through the factorization) and B, and in LU itself with fixed pivots.
    const tf::Tensor a = random_matrix(rng, {2, 4, 4}, dt), b = random_matrix(rng, {2, 4, 3}, dt);
    const tf::Tensor v = random_matrix(rng, {2, 4}, dt);
    auto out = run([](const std::vector<T>& x) {
      auto f = la::lu_factor(x[0]);
      return std::vector<T>{la::lu_solve(f.LU, f.pivots, x[1]) - la::solve(x[0], x[1]),
                            la::lu_solve(f.LU, f.pivots, x[2]) - la::solve(x[0], x[2]), f.pivots, la::solve(x[0], x[1]), la::solve(x[0], x[2])};
    }, {a, b, v});
    bool swapped = false;  // the permutation is exercised: some row was interchanged
    for (std::int64_t i = 0; i < 8; ++i) swapped = swapped || out[2].data<std::int64_t>()[i] != i % 4 + 1;
    EXPECT_TRUE(swapped);
    // Both are LU with partial pivoting (the same getrf) but solve their triangles in different
    // operation orders (getrs's column-major trsm against the row-major one here), so they agree
    // to rounding relative to the solution's size (this random A has |x| up to ~300).
    for (std::int64_t i = 0; i < out[0].numel(); ++i) EXPECT_LT(std::abs(at(out[0], i)), 1e-14 * (1 + std::abs(at(out[3], i))));
    for (std::int64_t i = 0; i < out[1].numel(); ++i) EXPECT_LT(std::abs(at(out[1], i)), 1e-14 * (1 + std::abs(at(out[4], i))));
    expect_grads([](const std::vector<T>& x) {
      auto f = la::lu_factor(x[0]);
      return std::vector<T>{la::lu_solve(f.LU, f.pivots, x[1])};
    }, {a, b});
    const tf::Tensor pivots = out[2];
    expect_grads([pivots](const std::vector<T>& x) {
      return std::vector<T>{la::lu_solve(x[0] + la::eye(x[0], 4) * 3.0, tf::constant(x[0], pivots), x[1])};
    }, {a, b});
  }
  // Pivots that are not LAPACK's 1-based form throw ValueError when the program runs.
  const tf::Tensor bad = tf::Tensor::from(std::vector<std::int64_t>{0, 2}, {2});
  try {
    run([](const std::vector<T>& x) { return std::vector<T>{la::lu_solve(x[0], x[1], x[2])}; },
        {tf::Tensor::ones({2, 2}), bad, tf::Tensor::ones({2, 1})});
    ADD_FAILURE() << "expected ValueError";
  } catch (const tf::ValueError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("lu_pivots_to_permutation"));
  }
  EXPECT_THROW(tf::trace([](T x, T p, T y) { return la::lu_solve(x, p, y); }, tf::Tensor::ones({2, 2}),
                         tf::Tensor::zeros({2}), tf::Tensor::ones({2, 1})),
               tf::DTypeError);
  EXPECT_THROW(tf::trace([](T x, T p, T y) { return la::lu_solve(x, p, y); }, tf::Tensor::ones({2, 2}), bad,
                         tf::Tensor::ones({3, 1})),
               tf::ShapeError);
}

TEST(Lstsq, WideMatricesGiveTheMinimumNormSolutionWithSecondDerivatives) {
  std::mt19937_64 rng(28);
  for (tf::DType dt : kDTypes) {
    SCOPED_TRACE(tf::dtype_name(dt));
    const tf::Tensor a = random_matrix(rng, {3, 5}, dt), b = random_matrix(rng, {3, 2}, dt);
    const tf::Tensor ab = random_matrix(rng, {2, 2, 4}, dt), bb = random_matrix(rng, {2, 2}, dt);
    auto out = run([](const std::vector<T>& x) {
      const T xs = la::lstsq(x[0], x[1]);
      // A X = B; X = A^H Y lies in the range of A^H: orthogonal to A's null space, spanned by the
      // last n - m columns of the complete Q of A^H; Y = (A A^H)^-1 B by an LU solve.
      const T null = tf::slice(la::qr(la::adjoint(x[0]), la::QrMode::Complete).Q, {0, 3}, {5, 5});
      const T y = la::solve(tf::matmul(x[0], la::adjoint(x[0])), x[1]);
      const T xv = la::lstsq(x[2], x[3]);  // batched, vector right-hand side
      return std::vector<T>{tf::matmul(x[0], xs) - x[1], tf::matmul(la::adjoint(null), xs),
                            xs - tf::matmul(la::adjoint(x[0]), y),
                            tf::reshape(tf::matmul(x[2], tf::reshape(xv, {2, 4, 1})), {2, 2}) - x[3]};
    }, {a, b, ab, bb});
    for (const auto& r : out)
      for (std::int64_t i = 0; i < r.numel(); ++i) EXPECT_LT(std::abs(at(r, i)), 1e-13);
    expect_grads([](const std::vector<T>& x) { return std::vector<T>{la::lstsq(x[0], x[1])}; }, {a, b});
  }
}

TEST(Cond, MatchesClosedFormsAndNormIdentitiesWithSecondDerivatives) {
  // A diagonal matrix diag(4, -2, 0.5): singular values 4, 2, 0.5; A^-1 = diag(0.25, -0.5, 2).
  const tf::Tensor d = tf::Tensor::from(std::vector<double>{4, 0, 0, 0, -2, 0, 0, 0, 0.5}, {3, 3});
  const std::pair<const char*, double> expected[] = {
      {"2", 8.0}, {"-2", 0.125}, {"fro", std::sqrt(16 + 4 + 0.25) * std::sqrt(0.0625 + 0.25 + 4)},
      {"nuc", 6.5 * 2.75}, {"1", 8.0}, {"-1", 0.5 * 0.25}, {"inf", 8.0}, {"-inf", 0.125}};
  for (const auto& [ord, value] : expected) {
    SCOPED_TRACE(ord);
    const std::string o = ord;
    auto out = run([o](const std::vector<T>& x) { return std::vector<T>{la::cond(x[0], o)}; }, {d});
    EXPECT_NEAR(out[0].item<double>(), value, 1e-14 * value);
  }
  EXPECT_NEAR(run([](const std::vector<T>& x) { return std::vector<T>{la::cond(x[0], -2.0)}; }, {d})[0].item<double>(), 0.125, 1e-15);
  std::mt19937_64 rng(29);
  for (tf::DType dt : kDTypes) {
    SCOPED_TRACE(tf::dtype_name(dt));
    const tf::Tensor a = random_matrix(rng, {2, 3, 3}, dt, 2.0), w = random_matrix(rng, {4, 2}, dt);
    // cond_2 = |A|_2 |A^-1|_2 (the inverse's largest singular value is 1 / the smallest), and for
    // a non-square A the ratio of its extreme singular values.
    auto out = run([](const std::vector<T>& x) {
      const T s = la::svdvals(x[1]);
      return std::vector<T>{la::cond(x[0]) - la::matrix_norm(x[0], "2") * la::matrix_norm(la::inv(x[0]), "2"),
                            la::cond(x[1]) - tf::max(s, {-1}) / tf::min(s, {-1})};
    }, {a, w});
    for (const auto& r : out)
      for (std::int64_t i = 0; i < r.numel(); ++i) EXPECT_LT(std::abs(at(r, i)), 1e-12);
    expect_grads([](const std::vector<T>& x) {
      return std::vector<T>{la::cond(x[0]), la::cond(x[0], "-2"), la::cond(x[0], "fro"), la::cond(x[0], "nuc"),
                            la::cond(x[0], "inf"), la::cond(x[1])};
    }, {a, w});
  }
  EXPECT_THROW(tf::trace([](T x) { return la::cond(x, "3"); }, d), tf::ValueError);
  EXPECT_THROW(tf::trace([](T x) { return la::cond(x, "fro"); }, tf::Tensor::ones({2, 3})), tf::ShapeError);
}

TEST(TensorInvSolve, AreNumPysTensorInverseAndSolveWithSecondDerivatives) {
  std::mt19937_64 rng(30);
  for (tf::DType dt : kDTypes) {
    SCOPED_TRACE(tf::dtype_name(dt));
    // A [2, 3, 6] with ind = 2 maps [6] to [2, 3]; its inverse has shape [6, 2, 3], and contracting
    // the inverse's trailing axes with A's leading ones gives the identity on [6] (and the other
    // way round on [2, 3]).
    const tf::Tensor a = random_matrix(rng, {2, 3, 6}, dt), b = random_matrix(rng, {2, 3}, dt);
    auto out = run([](const std::vector<T>& x) {
      const T ai = la::tensorinv(x[0], 2);
      const T left = tf::einsum("kij,ijl->kl", {ai, x[0]});
      const T right = tf::einsum("ijk,klm->ijlm", {x[0], ai});
      // tensorsolve: tensordot(A, X, 1) = B, X [6]; with axes {0} on A [6, 2, 3] (moved last).
      const T xs = la::tensorsolve(x[0], x[1]);
      const T moved = tf::transpose(x[0], {2, 0, 1});
      const T xm = la::tensorsolve(moved, x[1], {0});
      return std::vector<T>{ai, left, right, tf::einsum("ijk,k->ij", {x[0], xs}) - x[1], xm - xs};
    }, {a, b});
    EXPECT_EQ(out[0].shape(), (tf::Shape{6, 2, 3}));
    for (std::int64_t i = 0; i < 36; ++i) EXPECT_LT(std::abs(at(out[1], i) - (i % 7 == 0 ? 1.0 : 0.0)), 1e-12);
    for (std::int64_t i = 0; i < 36; ++i) EXPECT_LT(std::abs(at(out[2], i) - (i % 7 == 0 ? 1.0 : 0.0)), 1e-12);
    for (std::int64_t i = 0; i < out[3].numel(); ++i) EXPECT_LT(std::abs(at(out[3], i)), 1e-12);
    for (std::int64_t i = 0; i < out[4].numel(); ++i) EXPECT_LT(std::abs(at(out[4], i)), 1e-12);
    expect_grads([](const std::vector<T>& x) {
      return std::vector<T>{la::tensorinv(x[0], 2), la::tensorsolve(x[0], x[1])};
    }, {a, b});
  }
  EXPECT_THROW(tf::trace([](T x) { return la::tensorinv(x, 1); }, tf::Tensor::zeros({2, 3, 6})), tf::ShapeError);
  EXPECT_THROW(tf::trace([](T x) { return la::tensorinv(x, 0); }, tf::Tensor::zeros({2, 3, 6})), tf::ValueError);
  EXPECT_THROW(tf::trace([](T x, T y) { return la::tensorsolve(x, y); }, tf::Tensor::zeros({2, 3, 6}), tf::Tensor::zeros({3, 3})),
               tf::ShapeError);
}

TEST(NewLinalgFunctions, RunInSinglePrecisionWithTheirIdentitiesAndDerivatives) {
  // f32 and c64: the defining identities of lu (non-square), lu_factor / lu_solve, wide lstsq,
  // cond, householder_product, tensorinv and tensorsolve to single-precision rounding, and
  // check_grads to order 2 with float's step and tolerances (its rounding, 6e-8 relative, over the
  // step bounds a difference quotient's noise; a wrong rule errs by O(|J t|), far above).
  tidu::testkit::CheckOptions opts;
  opts.step = 1e-2;
  opts.eps = std::numeric_limits<float>::epsilon();
  opts.rtol = 2e-3;
  opts.atol = 1e-4;
  opts.adjoint_rtol = 1e-5;
  std::mt19937_64 rng(31);
  for (tf::DType dt : {tf::DType::F32, tf::DType::C64}) {
    SCOPED_TRACE(tf::dtype_name(dt));
    const tf::Tensor tall = random_matrix(rng, {5, 3}, dt), wide = random_matrix(rng, {3, 5}, dt, 1.0);
    const tf::Tensor sq = random_matrix(rng, {4, 4}, dt, 2.0), rhs = random_matrix(rng, {4, 2}, dt);
    const tf::Tensor rhs3 = random_matrix(rng, {3, 2}, dt), tau = random_matrix(rng, {2}, dt);
    const tf::Tensor t3 = random_matrix(rng, {2, 2, 4}, dt, 0.0);
    const std::vector<tf::Tensor> args = {tall, wide, sq, rhs, rhs3, tau};
    auto f = [](const std::vector<T>& x) {
      auto lt = la::lu(x[0]);
      auto lw = la::lu(x[1]);
      auto fac = la::lu_factor(x[2]);
      const T xw = la::lstsq(x[1], x[4]);
      return std::vector<T>{
          tf::matmul(tf::matmul(lt.P, lt.L), lt.U) - x[0],
          tf::matmul(tf::matmul(lw.P, lw.L), lw.U) - x[1],
          la::lu_solve(fac.LU, fac.pivots, x[3]) - la::solve(x[2], x[3]),
          tf::matmul(x[1], xw) - x[4],
          xw - tf::matmul(la::adjoint(x[1]), la::solve(tf::matmul(x[1], la::adjoint(x[1])), x[4])),
          tf::astype(la::cond(x[2]) - la::matrix_norm(x[2], "2") * la::matrix_norm(la::inv(x[2]), "2"), x[2].dtype()),
          // tau = 2 / |v|^2: each factor a unitary reflector, so Q has orthonormal columns.
          [&] {
            const T v = tf::tril(x[0], -1) + tf::pad(la::eye(x[0], 3), 0.0, {0, 0}, {2, 0});
            const T q = la::householder_product(x[0], 2.0 / tf::astype(tf::sum(tf::real(v * tf::conj(v)), {0}), x[0].dtype()));
            return tf::matmul(la::adjoint(q), q) - la::eye(x[0], 3);
          }(),
          tf::reshape(tf::matmul(tf::reshape(la::tensorinv(tf::reshape(x[2], {2, 2, 4}), 2), {4, 4}), x[2]), {4, 4}) -
              la::eye(x[2], 4)};
    };
    const tf::Tensors out = run(f, args);
    for (std::size_t r = 0; r < out.size(); ++r) {
      SCOPED_TRACE(r);
      for (std::int64_t i = 0; i < out[r].numel(); ++i) EXPECT_LT(std::abs(at(out[r], i)), 2e-5);
    }
    const tf::Tensor tb = random_matrix(rng, {2, 2}, dt);
    const tf::Tensor xs = run([](const std::vector<T>& x) {
      return std::vector<T>{tf::einsum("ijk,k->ij", {x[0], la::tensorsolve(x[0], x[1])}) - x[1]};
    }, {t3, tb})[0];
    for (std::int64_t i = 0; i < xs.numel(); ++i) EXPECT_LT(std::abs(at(xs, i)), 1e-4);
    // Partial pivoting jumps where two pivot candidates tie; float's larger step would reach such
    // a tie of the random tall matrix, so dominant entries at (4, 0), (3, 1), (2, 2) fix the
    // interchanges (rows 4, 3, 2 become the pivots) with a wide margin.
    const tf::Tensor dominant = tf::Tensor::from(std::vector<double>{0, 0, 0, 0, 0, 0, 0, 0, 3, 0, 3, 0, 3, 0, 0}, {5, 3});
    auto g = [dominant](const std::vector<T>& x) {
      auto fac = la::lu_factor(x[2]);
      const T pivoted = x[0] + tf::astype(tf::constant(x[0], dominant), x[0].dtype());
      return std::vector<T>{la::lu(pivoted).L, la::lu(x[1]).U, la::lu_solve(fac.LU, fac.pivots, x[3]), la::lstsq(x[1], x[4]),
                            la::cond(x[2], "fro"), la::householder_product(x[0], x[5]), la::tensorinv(x[2], 1)};
    };
    auto graph = tf::detail::trace_function(g, tf::detail::types_of(args));
    auto result = tidu::testkit::check_grads(tidu::testkit::function_of(graph), std::span<const tf::Tensor>(args), 2,
                                             {tidu::testkit::Mode::Forward, tidu::testkit::Mode::Reverse}, opts);
    EXPECT_TRUE(result.ok) << result.message;
  }
}

TEST(PinvLstsqNorms, AgreeWithTheirDefinitionsAndHaveSecondDerivatives) {
  std::mt19937_64 rng(24);
  for (tf::DType dt : kDTypes) {
    SCOPED_TRACE(tf::dtype_name(dt));
    const tf::Tensor a = random_matrix(rng, {5, 3}, dt), b = random_matrix(rng, {5, 2}, dt);
    auto out = run([](const std::vector<T>& x) {
      const T p = la::pinv(x[0]);
      const T xs = la::lstsq(x[0], x[1]);
      // Normal equations A^H (A X - B) = 0; Moore-Penrose: A P A = A; Frobenius norm^2 = sum S^2.
      const T s = la::svdvals(x[0]);
      return std::vector<T>{tf::matmul(la::adjoint(x[0]), tf::matmul(x[0], xs) - x[1]),
                            tf::matmul(tf::matmul(x[0], p), x[0]) - x[0],
                            la::matrix_norm(x[0], "fro") * la::matrix_norm(x[0], "fro") - tf::sum(s * s),
                            la::matrix_norm(x[0], "2") - tf::max(s, {-1}), la::matrix_norm(x[0], "nuc") - tf::sum(s)};
    }, {a, b});
    for (const auto& r : out)
      for (std::int64_t i = 0; i < r.numel(); ++i) EXPECT_LT(std::abs(at(r, i)), 1e-12);
    expect_grads([](const std::vector<T>& x) {
      return std::vector<T>{la::pinv(x[0]), la::lstsq(x[0], x[1]), la::matrix_norm(x[0], "fro"),
                            la::matrix_norm(x[0], "nuc"), la::matrix_norm(x[0], "2")};
    }, {a, b});
  }
  EXPECT_THROW(tf::trace([](T x) { return la::matrix_norm(x, "3"); }, tf::Tensor::zeros({2, 2})), tf::ValueError);
}

TEST(Expm, MatchesTheSpectralFormAndHasSecondDerivatives) {
  std::mt19937_64 rng(25);
  // A symmetric A = V diag(w) V^T has exp(A) = V diag(exp w) V^T; scaled so that squaring runs.
  for (double scale : {0.3, 20.0}) {
    const tf::Tensor x = random_matrix(rng, {4, 4}, tf::DType::F64);
    auto out = run([scale](const std::vector<T>& v) {
      const T a = (v[0] + tf::transpose(v[0])) * scale;
      auto e = la::eigh(a);
      tf::Shape row{1, 4};
      const T spectral = tf::matmul(e.eigenvectors * tf::reshape(tf::exp(e.eigenvalues), row), tf::transpose(e.eigenvectors));
      return std::vector<T>{la::expm(a), spectral};
    }, {x});
    for (std::int64_t i = 0; i < 16; ++i) {
      EXPECT_NEAR(out[0].data<double>()[i], out[1].data<double>()[i], 1e-12 * std::max(1.0, std::abs(out[1].data<double>()[i])));
    }
  }
  for (tf::DType dt : kDTypes) {
    SCOPED_TRACE(tf::dtype_name(dt));
    expect_grads([](const std::vector<T>& x) { return std::vector<T>{la::expm(x[0])}; },
                 {random_matrix(rng, {2, 3, 3}, dt)});
  }
}

TEST(SlicePad, ShapesValuesAndSecondDerivatives) {
  const tf::Tensor a = tf::Tensor::from(std::vector<double>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, {3, 4});
  auto out = run([](const std::vector<T>& x) {
    return std::vector<T>{tf::slice(x[0], {0, 1}, {3, 4}, {2, 2}), tf::pad(x[0], -1.0, {1, -1}, {0, 2}, {0, 1}),
                          tf::concatenate({x[0], x[0]}, -1)};
  }, {a});
  EXPECT_EQ(out[0].shape(), (tf::Shape{2, 2}));
  EXPECT_THAT(std::vector<double>(out[0].data<double>(), out[0].data<double>() + 4), ::testing::ElementsAre(1, 3, 9, 11));
  // pad: one row before; columns [0, -1, 1, -1, 2, -1, 3] with the first cut and two appended.
  EXPECT_EQ(out[1].shape(), (tf::Shape{4, 8}));
  EXPECT_THAT(std::vector<double>(out[1].data<double>() + 8, out[1].data<double>() + 16),
              ::testing::ElementsAre(-1, 1, -1, 2, -1, 3, -1, -1));
  EXPECT_EQ(out[2].shape(), (tf::Shape{3, 8}));
  EXPECT_EQ(out[2].data<double>()[5], 1.0);
  std::mt19937_64 rng(26);
  for (tf::DType dt : kDTypes) {
    expect_grads([](const std::vector<T>& x) {
      const T s = tf::slice(x[0], {1, 0}, {3, 4}, {1, 3});
      const T p = tf::pad(x[0] * x[0], 0.0, {1, -1}, {-1, 2}, {1, 0});
      return std::vector<T>{s * s, p, tf::concatenate({x[0], tf::sin(x[0])}, 0)};
    }, {random_matrix(rng, {3, 4}, dt)});
  }
  EXPECT_THROW(tf::trace([](T x) { return tf::slice(x, {0, 0}, {4, 4}); }, a), tf::ShapeError);
  EXPECT_THROW(tf::trace([](T x) { return tf::slice(x, {0, 0}, {3, 4}, {0, 1}); }, a), tf::ShapeError);
  EXPECT_THROW(tf::trace([](T x) { return tf::pad(x, 0.0, {-3, 0}, {-1, 0}); }, a), tf::ShapeError);
}
