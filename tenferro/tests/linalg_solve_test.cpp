// triangular_solve, solve, inv, lu, det, slogdet, pinv, lstsq, matrix norms, expm, and the slice,
// pad and concatenate ops they use: results against their defining identities (computed here
// with a naive product), derivatives to order 2 (check_grads) in f64 and c128, and the singular
// and mismatched inputs that must raise typed errors.
#include <gmock/gmock.h>

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
