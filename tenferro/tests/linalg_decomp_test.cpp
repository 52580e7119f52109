// svd, svdvals, eigh, eigvalsh, qr, polar and cholesky: the factors reproduce the input and have their
// structure (checked with a naive product written here), derivatives to order 2 on
// gauge-invariant functions (check_grads: finite differences and the adjoint identity, forward
// and reverse at both levels) in f64 and c128 over square, tall, wide and batched shapes, and
// degenerate spectra whose gradients must equal closed forms.
#include <gmock/gmock.h>

#include <map>
#include <regex>
#include <sstream>

#include "ising_trg_model.hpp"
#include "ising_trg_onsager.hpp"
#include "computegraph/printer.hpp"
#include "linalg_test_util.hpp"

namespace tf = tenferro;
namespace la = tenferro::linalg;
using namespace tenferro::test;

namespace {

const std::vector<tf::Shape> kShapes = {{4, 4}, {5, 3}, {3, 5}, {2, 3, 3}};
const tf::DType kDTypes[] = {tf::DType::F64, tf::DType::C128};

/// |a|^2 elementwise, real.
T abs2(const T& a) { return tf::real(a * tf::conj(a)); }
/// v [.., k] as a diagonal scaling of the columns: a * v[.., None, :].
T scale_cols(const T& a, const T& v) {
  tf::Shape s = v.shape();
  s.insert(s.end() - 1, 1);
  return a * tf::astype(tf::reshape(v, s), a.dtype());
}

}  // namespace

TEST(Svd, FactorsReproduceTheMatrixWithOrthonormalVectors) {
  std::mt19937_64 rng(1);
  for (tf::DType dt : {tf::DType::F32, tf::DType::F64, tf::DType::C64, tf::DType::C128}) {
    for (const auto& shape : kShapes) {
      SCOPED_TRACE(tf::shape_to_string(shape) + " " + tf::dtype_name(dt));
      const tf::Tensor a = random_matrix(rng, shape, dt);
      auto out = run([](const std::vector<T>& x) {
        auto r = la::svd(x[0]);
        return std::vector<T>{r.U, r.S, r.Vh, la::svdvals(x[0])};
      }, {a});
      const std::int64_t m = shape[shape.size() - 2], n = shape.back(), k = std::min(m, n);
      const double tol = (dt == tf::DType::F32 || dt == tf::DType::C64) ? 1e-5 : 1e-13;
      for (std::int64_t b = 0; b < tf::numel(shape) / (m * n); ++b) {
        std::vector<c128> us = matrix_of(out[0], b);
        for (std::int64_t i = 0; i < m; ++i) {
          for (std::int64_t j = 0; j < k; ++j) us[static_cast<std::size_t>(i * k + j)] *= at(out[1], b * k + j);
        }
        EXPECT_LT(max_abs_diff(naive_matmul(us, matrix_of(out[2], b), m, k, n), matrix_of(a, b)), tol);
        for (std::int64_t j = 0; j < k; ++j) {
          EXPECT_NEAR(at(out[1], b * k + j).real(), at(out[3], b * k + j).real(), tol);  // svdvals agrees
          if (j > 0) {
            EXPECT_GE(at(out[1], b * k + j - 1).real(), at(out[1], b * k + j).real());
          }
        }
        // U^H U = I.
        std::vector<c128> u = matrix_of(out[0], b), uh(u.size());
        for (std::int64_t i = 0; i < m; ++i)
          for (std::int64_t j = 0; j < k; ++j) uh[static_cast<std::size_t>(j * m + i)] = std::conj(u[static_cast<std::size_t>(i * k + j)]);
        std::vector<c128> eye(static_cast<std::size_t>(k * k));
        for (std::int64_t i = 0; i < k; ++i) eye[static_cast<std::size_t>(i * k + i)] = 1;
        EXPECT_LT(max_abs_diff(naive_matmul(uh, u, k, m, k), eye), tol * 10);
      }
    }
  }
}

TEST(Svd, FullMatricesAreSquareAndOrthonormal) {
  std::mt19937_64 rng(2);
  const tf::Tensor a = random_matrix(rng, {5, 3}, tf::DType::F64);
  auto out = run([](const std::vector<T>& x) {
    auto r = la::svd(x[0], {.full_matrices = true});
    return std::vector<T>{r.U, r.Vh, tf::matmul(la::adjoint(r.U), r.U)};
  }, {a});
  EXPECT_EQ(out[0].shape(), (tf::Shape{5, 5}));
  EXPECT_EQ(out[1].shape(), (tf::Shape{3, 3}));
  for (std::int64_t i = 0; i < 5; ++i)
    for (std::int64_t j = 0; j < 5; ++j) EXPECT_NEAR(at(out[2], i * 5 + j).real(), i == j ? 1.0 : 0.0, 1e-13);
}

TEST(Svd, GaugeInvariantFunctionsHaveSecondDerivatives) {
  std::mt19937_64 rng(3);
  for (tf::DType dt : kDTypes) {
    for (const auto& shape : kShapes) {
      SCOPED_TRACE(tf::shape_to_string(shape) + " " + tf::dtype_name(dt));
      const tf::Tensor a = random_matrix(rng, shape, dt);
      // S, |U|^2, |V|^2 and the polar factor U Vh (phases cancel between U and Vh).
      expect_grads([](const std::vector<T>& x) {
        auto r = la::svd(x[0]);
        return std::vector<T>{r.S, abs2(r.U), abs2(r.Vh), tf::matmul(r.U, r.Vh), la::svdvals(x[0])};
      }, {a});
    }
  }
}

TEST(Svd, RepeatedAndZeroSingularValuesGiveTheClosedFormGradient) {
  // A = Q1 diag(2, 2, 1, 0) Q2^T: a repeated pair and an exact zero. sum(S^2) = |A|_F^2 has
  // gradient 2A; the projector onto the repeated pair's left singular space is smooth there
  // (check_grads compares with finite differences of the forward SVD). First order only: at an
  // exact degeneracy the broadened rule's own derivative is 1/eps (tenferro/linalg.hpp), so second
  // derivatives there carry rounding errors of order 1e-16/eps.
  std::mt19937_64 rng(4);
  auto orthogonal = [&](std::int64_t n) {
    auto out = run([](const std::vector<T>& x) { return std::vector<T>{la::qr(x[0]).Q}; },
                   {random_matrix(rng, {n, n}, tf::DType::F64)});
    return out[0];
  };
  const tf::Tensor q1 = orthogonal(5), q2 = orthogonal(4);
  const tf::Tensor s = tf::Tensor::from(std::vector<double>{2, 0, 0, 0, 0, 2, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0},
                                        {5, 4});
  const tf::Tensor a = run([](const std::vector<T>& x) { return std::vector<T>{tf::matmul(tf::matmul(x[0], x[1]), tf::transpose(x[2]))}; },
                           {q1, s, q2})[0];
  auto g = tf::grad([](T x) { return tf::sum(la::svd(x).S * la::svd(x).S); })(a);
  for (std::int64_t i = 0; i < a.numel(); ++i) {
    ASSERT_TRUE(std::isfinite(g.data<double>()[i]));
    EXPECT_NEAR(g.data<double>()[i], 2 * a.data<double>()[i], 1e-10);
  }
  expect_grads([](const std::vector<T>& x) {
    auto u2 = tf::slice(la::svd(x[0]).U, {0, 0}, {5, 2});
    return std::vector<T>{tf::matmul(u2, tf::transpose(u2))};
  }, {a}, 1);
}

TEST(Svd, FullVectorsOfNonSquareMatrixRefuseToDifferentiate) {
  const tf::Tensor a = tf::Tensor::ones({3, 2});
  EXPECT_THROW(tf::grad([](T x) { return tf::sum(la::svd(x, {.full_matrices = true}).U); })(a), tf::ADRuleError);
}

TEST(Eigh, FactorsDiagonalizeTheHermitianPart) {
  std::mt19937_64 rng(5);
  for (tf::DType dt : {tf::DType::F32, tf::DType::F64, tf::DType::C64, tf::DType::C128}) {
    SCOPED_TRACE(tf::dtype_name(dt));
    const tf::Tensor x = random_matrix(rng, {2, 4, 4}, dt);
    auto out = run([](const std::vector<T>& v) {
      const T h = (v[0] + la::adjoint(v[0])) * 0.5;
      auto r = la::eigh(h);
      return std::vector<T>{h, r.eigenvalues, r.eigenvectors, la::eigvalsh(h)};
    }, {x});
    const double tol = (dt == tf::DType::F32 || dt == tf::DType::C64) ? 1e-5 : 1e-13;
    for (std::int64_t b = 0; b < 2; ++b) {
      std::vector<c128> vw = matrix_of(out[2], b);
      for (std::int64_t i = 0; i < 4; ++i)
        for (std::int64_t j = 0; j < 4; ++j) vw[static_cast<std::size_t>(i * 4 + j)] *= at(out[1], b * 4 + j);
      EXPECT_LT(max_abs_diff(naive_matmul(matrix_of(out[0], b), matrix_of(out[2], b), 4, 4, 4), vw), tol * 10);
      for (std::int64_t j = 0; j < 4; ++j) {
        EXPECT_NEAR(at(out[1], b * 4 + j).real(), at(out[3], b * 4 + j).real(), tol);
        if (j > 0) {
          EXPECT_LE(at(out[1], b * 4 + j - 1).real(), at(out[1], b * 4 + j).real());
        }
      }
    }
  }
}

TEST(Eigh, GaugeInvariantFunctionsHaveSecondDerivatives) {
  std::mt19937_64 rng(6);
  for (tf::DType dt : kDTypes) {
    for (const tf::Shape& shape : {tf::Shape{4, 4}, tf::Shape{2, 3, 3}}) {
      SCOPED_TRACE(tf::shape_to_string(shape) + " " + tf::dtype_name(dt));
      expect_grads([](const std::vector<T>& x) {
        const T h = (x[0] + la::adjoint(x[0])) * 0.5;
        auto r = la::eigh(h);
        const T vw2v = tf::matmul(scale_cols(r.eigenvectors, r.eigenvalues * r.eigenvalues), la::adjoint(r.eigenvectors));
        return std::vector<T>{r.eigenvalues, abs2(r.eigenvectors), vw2v, la::eigvalsh(h)};
      }, {random_matrix(rng, shape, dt)});
    }
  }
}

TEST(Eigh, RepeatedEigenvaluesGiveFiniteCorrectGradients) {
  // A = Q diag(1, 1, 2, 3) Q^T: sum(w^2) = |A|_F^2 (gradient 2A); the projector onto the repeated
  // eigenvalue's eigenspace is smooth there (finite differences through check_grads; first order,
  // as for the SVD above).
  std::mt19937_64 rng(7);
  const tf::Tensor q = run([](const std::vector<T>& x) { return std::vector<T>{la::qr(x[0]).Q}; },
                           {random_matrix(rng, {4, 4}, tf::DType::F64)})[0];
  const tf::Tensor a = run([](const std::vector<T>& x) {
    const T w = tf::constant(x[0], tf::Tensor::from(std::vector<double>{1, 1, 2, 3}, {4}));
    return std::vector<T>{tf::matmul(scale_cols(x[0], w), tf::transpose(x[0]))};
  }, {q})[0];
  auto g = tf::grad([](T x) { auto w = la::eigh(x).eigenvalues; return tf::sum(w * w); })(a);
  for (std::int64_t i = 0; i < a.numel(); ++i) EXPECT_NEAR(g.data<double>()[i], 2 * a.data<double>()[i], 1e-10);
  expect_grads([](const std::vector<T>& x) {
    auto v2 = tf::slice(la::eigh((x[0] + la::adjoint(x[0])) * 0.5).eigenvectors, {0, 0}, {4, 2});
    return std::vector<T>{tf::matmul(v2, tf::transpose(v2))};
  }, {a}, 1);
}

TEST(Eig, FactorsDiagonalizeAndHaveSecondDerivatives) {
  std::mt19937_64 rng(11);
  for (tf::DType dt : kDTypes) {
    SCOPED_TRACE(tf::dtype_name(dt));
    const tf::Tensor a = random_matrix(rng, {2, 4, 4}, dt);
    // A V = V diag(w), checked in c128 with the naive product; |v_j| = 1.
    auto out = run([](const std::vector<T>& x) {
      auto r = la::eig(x[0]);
      return std::vector<T>{tf::astype(x[0], tf::DType::C128), r.eigenvalues, r.eigenvectors};
    }, {a});
    for (std::int64_t b = 0; b < 2; ++b) {
      std::vector<c128> vw = matrix_of(out[2], b);
      for (std::int64_t i = 0; i < 4; ++i)
        for (std::int64_t j = 0; j < 4; ++j) vw[static_cast<std::size_t>(i * 4 + j)] *= at(out[1], b * 4 + j);
      EXPECT_LT(max_abs_diff(naive_matmul(matrix_of(out[0], b), matrix_of(out[2], b), 4, 4, 4), vw), 1e-12);
    }
    // Phase-invariant functions: w, |V|^2 and V diag(w^2) V^-1 (= A^2).
    expect_grads([](const std::vector<T>& x) {
      auto r = la::eig(x[0]);
      const T vw2 = scale_cols(r.eigenvectors, r.eigenvalues * r.eigenvalues);
      return std::vector<T>{r.eigenvalues, abs2(r.eigenvectors), tf::matmul(vw2, la::inv(r.eigenvectors))};
    }, {random_matrix(rng, {3, 3}, dt)});
  }
}

TEST(Eig, RealInputHasLapacksRealOrderAsNumPy) {
  // numpy.linalg.eig of this matrix (NumPy 1.24.2, dgeev), printed with repr: the real eigenvalue
  // first, then the conjugate pair with positive imaginary part first. The complex routine on the
  // complexified matrix orders them (pair, real, conjugate) instead.
  const std::vector<double> entries{1, 1, 3, -2, 1, 3, 3, -3, 2};
  const std::vector<c128> numpy_w{{4.202733120745532, 0.0}, {-0.10136656037276365, 2.8003139148437497},
                                  {-0.10136656037276365, -2.8003139148437497}};
  const std::vector<c128> numpy_v{{0.7023744025304737, 0.0},   {-0.3454814035576703, 0.3558511352099849},
                                  {-0.3454814035576703, -0.3558511352099849}, {0.20100466358839272, 0.0},
                                  {-0.7395889374883842, 0.0},  {-0.7395889374883842, -0.0},
                                  {0.6828376995199353, 0.0},   {0.041198572351996025, -0.4531263074977521},
                                  {0.041198572351996025, 0.4531263074977521}};
  for (tf::DType dt : {tf::DType::F64, tf::DType::F32}) {
    SCOPED_TRACE(tf::dtype_name(dt));
    const tf::Tensor a = dt == tf::DType::F64 ? tf::Tensor::from(entries, {3, 3})
                                              : tf::Tensor::from(std::vector<float>(entries.begin(), entries.end()), {3, 3});
    auto out = run([](const std::vector<T>& x) {
      auto r = la::eig(x[0]);
      return std::vector<T>{r.eigenvalues, r.eigenvectors};
    }, {a});
    const double tol = dt == tf::DType::F32 ? 2e-5 : 1e-13;
    for (std::int64_t j = 0; j < 3; ++j) {
      EXPECT_LT(std::abs(at(out[0], j) - numpy_w[static_cast<std::size_t>(j)]), tol * 5) << "eigenvalue " << j;
      // Independently: a root of the characteristic polynomial l^3 - 4 l^2 + 7 l - 33.
      const c128 l = at(out[0], j);
      EXPECT_LT(std::abs(l * l * l - 4.0 * l * l + 7.0 * l - 33.0), tol * 200);
    }
    // The real routine's structure: a real eigenvalue exactly real, an exact conjugate pair.
    EXPECT_EQ(at(out[0], 0).imag(), 0.0);
    EXPECT_EQ(at(out[0], 2), std::conj(at(out[0], 1)));
    for (std::int64_t i = 0; i < 3; ++i) {
      EXPECT_EQ(at(out[1], i * 3 + 0).imag(), 0.0);
      EXPECT_EQ(at(out[1], i * 3 + 2), std::conj(at(out[1], i * 3 + 1)));
    }
    // NumPy's vectors, up to one unit phase per column (the one free choice).
    for (std::int64_t j = 0; j < 3; ++j) {
      c128 overlap = 0;
      for (std::int64_t i = 0; i < 3; ++i) overlap += std::conj(numpy_v[static_cast<std::size_t>(i * 3 + j)]) * at(out[1], i * 3 + j);
      EXPECT_NEAR(std::abs(overlap), 1.0, tol);
      for (std::int64_t i = 0; i < 3; ++i) {
        EXPECT_LT(std::abs(at(out[1], i * 3 + j) - overlap * numpy_v[static_cast<std::size_t>(i * 3 + j)]), tol * 5);
      }
    }
  }
  // A rotation block and a real eigenvalue, in closed form: c +- i s (positive imaginary part
  // first, adjacent) and r, in the order of the real Schur form that the matrix already is.
  const tf::Tensor rot = tf::Tensor::from(std::vector<double>{0.6, -0.8, 0, 0.8, 0.6, 0, 0, 0, 2}, {3, 3});
  const tf::Tensor w = run([](const std::vector<T>& x) { return std::vector<T>{la::eigvals(x[0])}; }, {rot})[0];
  EXPECT_LT(std::abs(at(w, 0) - c128(0.6, 0.8)), 1e-15);
  EXPECT_LT(std::abs(at(w, 1) - c128(0.6, -0.8)), 1e-15);
  EXPECT_LT(std::abs(at(w, 2) - c128(2, 0)), 1e-15);
  // Derivatives through the real routine's vectors: phase-invariant functions to order 2, here at
  // a matrix with a complex pair (real-input JVPs see the complex V and w).
  expect_grads([](const std::vector<T>& x) {
    auto r = la::eig(x[0]);
    const T vw2 = scale_cols(r.eigenvectors, r.eigenvalues * r.eigenvalues);
    return std::vector<T>{r.eigenvalues, abs2(r.eigenvectors), tf::matmul(vw2, la::inv(r.eigenvectors))};
  }, {tf::Tensor::from(entries, {3, 3})});
}

TEST(Lu, NonSquareFactorsReproduceTheMatrixWithSecondDerivatives) {
  std::mt19937_64 rng(13);
  for (tf::DType dt : kDTypes) {
    for (const tf::Shape& shape : {tf::Shape{5, 3}, tf::Shape{3, 5}, tf::Shape{2, 4, 2}, tf::Shape{2, 2, 4}}) {
      SCOPED_TRACE(tf::shape_to_string(shape) + " " + tf::dtype_name(dt));
      const tf::Tensor a = random_matrix(rng, shape, dt);
      auto out = run([](const std::vector<T>& x) {
        auto f = la::lu(x[0]);
        return std::vector<T>{f.P, f.L, f.U};
      }, {a});
      const std::int64_t m = shape[shape.size() - 2], n = shape.back(), k = std::min(m, n);
      EXPECT_EQ(out[0].shape().back(), m);
      EXPECT_EQ(out[1].shape()[out[1].rank() - 2], m);
      EXPECT_EQ(out[1].shape().back(), k);
      EXPECT_EQ(out[2].shape()[out[2].rank() - 2], k);
      EXPECT_EQ(out[2].shape().back(), n);
      for (std::int64_t b = 0; b < tf::numel(shape) / (m * n); ++b) {
        const std::vector<c128> p = matrix_of(out[0], b), l = matrix_of(out[1], b), u = matrix_of(out[2], b);
        // A = P L U (naive products), L unit lower trapezoidal with |L| <= 1 (partial pivoting), U
        // upper trapezoidal, P a permutation matrix.
        EXPECT_LT(max_abs_diff(naive_matmul(naive_matmul(p, l, m, m, k), u, m, k, n), matrix_of(a, b)), 1e-14);
        for (std::int64_t i = 0; i < m; ++i) {
          for (std::int64_t j = 0; j < k; ++j) {
            const c128 v = l[static_cast<std::size_t>(i * k + j)];
            if (j > i) {
              EXPECT_EQ(v, c128(0));
            }
            if (j == i) {
              EXPECT_EQ(v, c128(1));
            }
            EXPECT_LE(std::abs(v), 1.0 + 1e-15);
          }
        }
        for (std::int64_t i = 0; i < k; ++i)
          for (std::int64_t j = 0; j < std::min(i, n); ++j) EXPECT_EQ(u[static_cast<std::size_t>(i * n + j)], c128(0));
        for (std::int64_t i = 0; i < m; ++i) {
          double row = 0;
          for (std::int64_t j = 0; j < m; ++j) row += std::abs(p[static_cast<std::size_t>(i * m + j)]);
          EXPECT_EQ(row, 1.0);
        }
      }
      expect_grads([](const std::vector<T>& x) {
        auto f = la::lu(x[0]);
        return std::vector<T>{f.L, f.U};
      }, {a});
    }
  }
}

TEST(HouseholderProduct, IsTheProductOfReflectorsWithSecondDerivatives) {
  std::mt19937_64 rng(14);
  for (tf::DType dt : kDTypes) {
    for (std::int64_t k : {0, 2, 3}) {
      SCOPED_TRACE(std::string(tf::dtype_name(dt)) + " k = " + std::to_string(k));
      const std::int64_t m = 5, n = 3;
      const tf::Tensor a = random_matrix(rng, {m, n}, dt), tau = random_matrix(rng, {k}, dt);
      const tf::Tensor q = run([](const std::vector<T>& x) { return std::vector<T>{la::householder_product(x[0], x[1])}; }, {a, tau})[0];
      ASSERT_EQ(q.shape(), (tf::Shape{m, n}));
      // Reference: (I - tau_1 v_1 v_1^H) ... (I - tau_k v_k v_k^H), first n columns, by naive products.
      std::vector<c128> prod(static_cast<std::size_t>(m * m));
      for (std::int64_t i = 0; i < m; ++i) prod[static_cast<std::size_t>(i * m + i)] = 1;
      const std::vector<c128> av = matrix_of(a, 0);
      for (std::int64_t r = 0; r < k; ++r) {
        std::vector<c128> v(static_cast<std::size_t>(m)), h(static_cast<std::size_t>(m * m));
        for (std::int64_t i = 0; i < m; ++i) v[static_cast<std::size_t>(i)] = i < r ? c128(0) : i == r ? c128(1) : av[static_cast<std::size_t>(i * n + r)];
        for (std::int64_t i = 0; i < m; ++i)
          for (std::int64_t j = 0; j < m; ++j)
            h[static_cast<std::size_t>(i * m + j)] = (i == j ? 1.0 : 0.0) - at(tau, r) * v[static_cast<std::size_t>(i)] * std::conj(v[static_cast<std::size_t>(j)]);
        prod = naive_matmul(prod, h, m, m, m);
      }
      std::vector<c128> expected(static_cast<std::size_t>(m * n));
      for (std::int64_t i = 0; i < m; ++i)
        for (std::int64_t j = 0; j < n; ++j) expected[static_cast<std::size_t>(i * n + j)] = prod[static_cast<std::size_t>(i * m + j)];
      EXPECT_LT(max_abs_diff(matrix_of(q, 0), expected), 1e-13);
      expect_grads([](const std::vector<T>& x) { return std::vector<T>{la::householder_product(x[0], x[1])}; }, {a, tau});
    }
  }
  // tau_i = 2 / |v_i|^2 makes every factor an orthogonal reflector: Q has orthonormal columns.
  // A tau of 0 is the identity reflector (no division by tau). Batched.
  const tf::Tensor a = random_matrix(rng, {2, 4, 3}, tf::DType::F64);
  auto out = run([](const std::vector<T>& x) {
    const T v = tf::tril(x[0], -1) + tf::constant(x[0], tf::Tensor::from(std::vector<double>{1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0}, {4, 3}));
    const T tau = 2.0 / tf::sum(v * v, {1});
    const T q = la::householder_product(x[0], tau);
    const T q0 = la::householder_product(x[0], tau * 0.0);
    return std::vector<T>{tf::matmul(la::adjoint(q), q), q0};
  }, {a});
  for (std::int64_t b = 0; b < 2; ++b)
    for (std::int64_t i = 0; i < 3; ++i)
      for (std::int64_t j = 0; j < 3; ++j) {
        EXPECT_NEAR(at(out[0], b * 9 + i * 3 + j).real(), i == j ? 1.0 : 0.0, 1e-14);
      }
  for (std::int64_t b = 0; b < 2; ++b)
    for (std::int64_t i = 0; i < 4; ++i)
      for (std::int64_t j = 0; j < 3; ++j) EXPECT_EQ(at(out[1], b * 12 + i * 3 + j), c128(i == j ? 1.0 : 0.0));
  EXPECT_THROW(tf::trace([](T x, T t) { return la::householder_product(x, t); }, tf::Tensor::zeros({3, 4}), tf::Tensor::zeros({2})),
               tf::ShapeError);
  EXPECT_THROW(tf::trace([](T x, T t) { return la::householder_product(x, t); }, tf::Tensor::zeros({4, 3}), tf::Tensor::zeros({4})),
               tf::ShapeError);
  EXPECT_THROW(tf::trace([](T x, T t) { return la::householder_product(x, t); }, tf::Tensor::zeros({4, 3}),
                         tf::Tensor::zeros({2}, tf::DType::C128)),
               tf::DTypeError);
}

TEST(Qr, FactorsReproduceTheMatrix) {
  std::mt19937_64 rng(8);
  for (tf::DType dt : {tf::DType::F64, tf::DType::C128}) {
    for (const auto& shape : kShapes) {
      for (la::QrMode mode : {la::QrMode::Reduced, la::QrMode::Complete}) {
        SCOPED_TRACE(tf::shape_to_string(shape) + " " + tf::dtype_name(dt));
        const tf::Tensor a = random_matrix(rng, shape, dt);
        auto out = run([mode](const std::vector<T>& x) {
          auto r = la::qr(x[0], mode);
          return std::vector<T>{r.Q, r.R};
        }, {a});
        const std::int64_t m = shape[shape.size() - 2], n = shape.back();
        const std::int64_t k = out[0].shape().back();
        for (std::int64_t b = 0; b < tf::numel(shape) / (m * n); ++b) {
          EXPECT_LT(max_abs_diff(naive_matmul(matrix_of(out[0], b), matrix_of(out[1], b), m, k, n), matrix_of(a, b)), 1e-13);
          const std::vector<c128> r = matrix_of(out[1], b);
          for (std::int64_t i = 0; i < k; ++i)
            for (std::int64_t j = 0; j < std::min(i, n); ++j) EXPECT_EQ(r[static_cast<std::size_t>(i * n + j)], c128(0));
        }
      }
    }
  }
}

TEST(Qr, FactorsHaveSecondDerivatives) {
  std::mt19937_64 rng(9);
  for (tf::DType dt : kDTypes) {
    for (const auto& shape : kShapes) {
      SCOPED_TRACE(tf::shape_to_string(shape) + " " + tf::dtype_name(dt));
      expect_grads([](const std::vector<T>& x) {
        auto r = la::qr(x[0]);
        return std::vector<T>{r.Q, r.R};
      }, {random_matrix(rng, shape, dt)});
    }
  }
}

namespace {
/// The conjugate transpose of an m x n matrix given as c128 values.
std::vector<c128> adjoint_of(const std::vector<c128>& a, std::int64_t m, std::int64_t n) {
  std::vector<c128> t(a.size());
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j) t[static_cast<std::size_t>(j * m + i)] = std::conj(a[static_cast<std::size_t>(i * n + j)]);
  return t;
}
std::vector<c128> identity(std::int64_t n) {
  std::vector<c128> e(static_cast<std::size_t>(n * n));
  for (std::int64_t i = 0; i < n; ++i) e[static_cast<std::size_t>(i * n + i)] = 1.0;
  return e;
}
}  // namespace

// polar(A) = (U, P) is the one factorization with A = U P, U^H U = I and P Hermitian positive
// definite (A of full column rank), so P = (A^H A)^(1/2): each property is checked on its own,
// with products written here.
TEST(Polar, FactorsAreAnIsometryAndTheSquareRootOfAHA) {
  std::mt19937_64 rng(31);
  for (tf::DType dt : kDTypes) {
    for (const tf::Shape& shape : {tf::Shape{4, 4}, tf::Shape{5, 3}, tf::Shape{2, 3, 3}, tf::Shape{6, 1}}) {
      SCOPED_TRACE(tf::shape_to_string(shape) + " " + tf::dtype_name(dt));
      const tf::Tensor a = random_matrix(rng, shape, dt);
      auto out = run([](const std::vector<T>& x) {
        auto [u, p] = la::polar(x[0]);
        return std::vector<T>{u, p, la::eigvalsh(p)};
      }, {a});
      const std::int64_t m = shape[shape.size() - 2], n = shape.back();
      ASSERT_EQ(out[0].shape(), shape);
      for (std::int64_t b = 0; b < tf::numel(shape) / (m * n); ++b) {
        const auto A = matrix_of(a, b), U = matrix_of(out[0], b), P = matrix_of(out[1], b);
        EXPECT_LT(max_abs_diff(naive_matmul(U, P, m, n, n), A), 1e-13);
        EXPECT_LT(max_abs_diff(naive_matmul(adjoint_of(U, m, n), U, n, m, n), identity(n)), 1e-13);
        EXPECT_EQ(max_abs_diff(adjoint_of(P, n, n), P), 0.0);
        const auto AhA = naive_matmul(adjoint_of(A, m, n), A, n, m, n);
        EXPECT_LT(max_abs_diff(naive_matmul(P, P, n, n, n), AhA), 1e-13);
        for (std::int64_t i = 0; i < n; ++i) EXPECT_GT(at(out[2], b * n + i).real(), 0.0);
      }
    }
  }
}

TEST(Polar, FactorsHaveSecondDerivatives) {
  std::mt19937_64 rng(32);
  for (tf::DType dt : kDTypes) {
    for (const tf::Shape& shape : {tf::Shape{4, 4}, tf::Shape{5, 3}, tf::Shape{2, 3, 3}}) {
      SCOPED_TRACE(tf::shape_to_string(shape) + " " + tf::dtype_name(dt));
      expect_grads([](const std::vector<T>& x) {
        auto [u, p] = la::polar(x[0]);
        return std::vector<T>{u, p};
      }, {random_matrix(rng, shape, dt)});
    }
  }
}

// At an isometry P = I: every eigenvalue of P is repeated, so the eigenbasis the rule solves its
// Sylvester equation in is arbitrary; the tangent must not depend on it (first order, where the
// rule does not differentiate eigh).
TEST(Polar, TheTangentAtAnIsometryDoesNotDependOnTheEigenbasis) {
  std::mt19937_64 rng(33);
  for (tf::DType dt : kDTypes) {
    SCOPED_TRACE(tf::dtype_name(dt));
    const tf::Tensor q = run([](const std::vector<T>& x) { return std::vector<T>{la::qr(x[0]).Q}; },
                             {random_matrix(rng, {5, 3}, dt)})[0];
    expect_grads([](const std::vector<T>& x) {
      auto [u, p] = la::polar(x[0]);
      return std::vector<T>{u, p};
    }, {q}, 1);
  }
}

TEST(Polar, AWideMatrixIsAShapeErrorNamingTheOp) {
  try {
    (void)run([](const std::vector<T>& x) { return std::vector<T>{la::polar(x[0])[0]}; },
              {tf::Tensor(tf::TensorType{tf::DType::F64, {2, 3}})});
    ADD_FAILURE() << "a wide matrix was accepted";
  } catch (const tf::ShapeError& e) {
    EXPECT_THAT(e.what(), ::testing::HasSubstr("polar: operand f64[2, 3] is wide"));
  }
}

TEST(Cholesky, FactorReproducesTheMatrixAndHasSecondDerivatives) {
  std::mt19937_64 rng(10);
  for (tf::DType dt : kDTypes) {
    SCOPED_TRACE(tf::dtype_name(dt));
    const tf::Tensor x = random_matrix(rng, {2, 4, 4}, dt);
    auto spd = [](const T& v) { return tf::matmul(v, la::adjoint(v)) + la::eye(v, 4) * 4.0; };
    auto out = run([&](const std::vector<T>& v) {
      const T a = spd(v[0]);
      const T l = la::cholesky(a);
      return std::vector<T>{a, tf::matmul(l, la::adjoint(l)), l};
    }, {x});
    EXPECT_LT(max_abs_diff(matrix_of(out[0], 1), matrix_of(out[1], 1)), 1e-13);
    EXPECT_EQ(at(out[2], 1), c128(0));  // strict upper triangle is zero
    expect_grads([&](const std::vector<T>& v) { return std::vector<T>{la::cholesky(spd(v[0]))}; }, {x});
  }
}

TEST(Cholesky, NotPositiveDefiniteThrowsLinalgErrorWithTheMinor) {
  const tf::Tensor a = tf::Tensor::from({{1.0, 0.0}, {0.0, -1.0}});
  try {
    run([](const std::vector<T>& x) { return std::vector<T>{la::cholesky(x[0])}; }, {a});
    FAIL() << "expected LinalgError";
  } catch (const tf::LinalgError& e) {
    EXPECT_EQ(e.info(), 2);
    EXPECT_THAT(e.what(), ::testing::HasSubstr("not positive definite"));
  }
}

// The JVP rule records its formula (src/ops/cholesky.cpp), written on the rule trace with the
// matrix helpers: dH = (dA + dA^T) / 2, X = L^-1 dH L^-T by two triangular solves, Phi(X) =
// tril(X, -1) + diag(X) / 2 (the mask keeps the strict lower triangle), dL = L Phi(X). Every
// operation that reads the tangent is linear in exactly it; the factor L is fixed.
TEST(Cholesky, JvpRuleRecordsItsFormula) {
  const tf::Program p = tf::trace([](T a) { return la::cholesky(a); }, tf::Tensor::zeros({2, 2}));
  EXPECT_EQ(computegraph::to_string(*tf::linearize(p).graph),
            "graph {\n"
            "  %0 = input t1:x0:f64[2, 2]\n"
            "  $0 = external cholesky(x0:f64[2, 2])\n"
            "  %1 = transpose[perm=[1, 0]](%0) linearized[active]\n"
            "  %2 = add(%0, %1) linearized[active, active]\n"
            "  %3 = constant[tensor(f64[], 0.5)]()\n"
            "  %4 = broadcast_in_dim[shape=[2, 2], dims=[]](%3)\n"
            "  %5 = mul(%2, %4) linearized[active, fixed]\n"
            "  %6 = triangular_solve[left, lower]($0, %5) linearized[fixed, active]\n"
            "  %7 = triangular_solve[right, lower, adjoint]($0, %6) linearized[fixed, active]\n"
            "  %8 = constant[tensor(f64[2, 2], [[0, 0], [1, 0]])]()\n"
            "  %9 = mul(%7, %8) linearized[active, fixed]\n"
            "  %10 = extract_diag[axes=[0, 1]](%7) linearized[active]\n"
            "  %11 = embed_diag[axes=[0, 1]](%10) linearized[active]\n"
            "  %12 = mul(%11, %4) linearized[active, fixed]\n"
            "  %13 = add(%9, %12) linearized[active, active]\n"
            "  %14 = dot_general[batch=[][], contract=[1][0]]($0, %13) linearized[fixed, active]\n"
            "  return %14\n"
            "}\n");
}

TEST(LinalgErrors, ShapesAndDTypesAreChecked) {
  const tf::Tensor rect = tf::Tensor::zeros({2, 3}), vec = tf::Tensor::zeros({3});
  const tf::Tensor ints = tf::Tensor::from(std::vector<std::int64_t>{1, 2, 3, 4}, {2, 2});
  EXPECT_THROW(tf::trace([](T x) { return la::eigh(x).eigenvalues; }, rect), tf::ShapeError);
  EXPECT_THROW(tf::trace([](T x) { return la::cholesky(x); }, rect), tf::ShapeError);
  EXPECT_THROW(tf::trace([](T x) { return la::svd(x).S; }, vec), tf::ShapeError);
  EXPECT_THROW(tf::trace([](T x) { return la::qr(x).Q; }, ints), tf::DTypeError);
}

namespace {
/// Multiply-adds of each dot_general of an executable's printed program (executor IR: a header
/// "exec(%0: f64[..], ..) {", then lines "%3 = dot_general[batch=[..][..], contract=[..][..]](%1,
/// %2) : f64[..]" and "%4, %5 = op(..) : t4, t5"): the result's element count times the extents
/// the left operand contracts.
std::vector<double> product_sizes(const std::string& program) {
  std::map<std::string, std::vector<std::int64_t>> shapes;
  std::vector<double> sizes;
  auto ints = [](const std::string& text) {
    std::vector<std::int64_t> v;
    std::stringstream s(text);
    std::string item;
    while (std::getline(s, item, ',')) {
      if (item.find_first_of("0123456789") != std::string::npos) v.push_back(std::stoll(item));
    }
    return v;
  };
  const std::regex id(R"(%\d+)"), type(R"(\w+\[([\d, ]*)\])"), input(R"((%\d+): \w+\[([\d, ]*)\])");
  const std::regex dot(R"(dot_general\[batch=\[[\d, ]*\]\[[\d, ]*\], contract=\[([\d, ]*)\]\[[\d, ]*\]\]\((%\d+), )");
  std::stringstream lines(program);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.rfind("exec(", 0) == 0) {
      for (std::sregex_iterator it(line.begin(), line.end(), input), end; it != end; ++it) shapes[(*it)[1]] = ints((*it)[2]);
      continue;
    }
    const std::size_t eq = line.find(" = "), colon = line.rfind(" : ");
    if (eq == std::string::npos || colon == std::string::npos) continue;
    const std::string lhs = line.substr(0, eq), types = line.substr(colon);
    std::vector<std::string> ids;
    for (std::sregex_iterator it(lhs.begin(), lhs.end(), id), end; it != end; ++it) ids.push_back(it->str());
    std::size_t i = 0;
    for (std::sregex_iterator it(types.begin(), types.end(), type), end; it != end && i < ids.size(); ++it) {
      shapes[ids[i++]] = ints((*it)[1]);
    }
    std::smatch m;
    if (std::regex_search(line, m, dot)) {
      double size = 1;
      for (auto d : shapes.at(ids[0])) size *= static_cast<double>(d);
      for (auto a : ints(m[1])) size *= static_cast<double>(shapes.at(m[2])[static_cast<std::size_t>(a)]);
      sizes.push_back(size);
    }
  }
  return sizes;
}
}  // namespace

// The tangent of a truncated SVD (U[:, :k], S[:k], Vh[:k, :] of an n x n matrix), as TRG and
// other tensor-network codes take it: its JVP rule states n x n x n products, but only k columns
// are read, and the executor's pass narrow_slices computes only those (n x n x k products). The
// tangent equals the unnarrowed program's and central differences of the rank-k reconstruction.
TEST(Svd, TruncatedTangentComputesOnlyTheReadColumns) {
  constexpr std::int64_t n = 40, k = 4;
  std::mt19937_64 rng(7);
  const tf::Tensor a = random_matrix(rng, {n, n}, tf::DType::F64);
  const tf::Tensor da = random_matrix(rng, {n, n}, tf::DType::F64);
  auto truncated = [](const T& x) {
    auto r = la::svd(x);
    const T u = tf::slice(r.U, {0, 0}, {n, k}), s = tf::slice(r.S, {0}, {k}), vh = tf::slice(r.Vh, {0, 0}, {k, n});
    return std::vector<T>{u, s, vh, tf::matmul(scale_cols(u, s), vh)};
  };
  const tf::Program tangent = tf::trace(
      [&](const T& x, const T& dx) {
        std::vector<T> out;
        for (std::size_t i = 0; i < 4; ++i) {
          out.push_back(tf::jvp([&](const T& y) { return truncated(y)[i]; }, std::vector<T>{x}, std::vector<T>{dx}).second);
        }
        return out;
      },
      a, da);
  const tf::ExecOptions saved = tf::exec_options();
  tf::ExecOptions off = saved;
  off.narrow_slices = false;
  tf::set_exec_options(off);
  const std::vector<double> full_sizes = product_sizes(tangent.print_executable());
  const tf::Tensors wide = tangent.run({a, da});
  tf::ExecOptions on = saved;  // whatever the environment switched off (the suite's passes_off run)
  on.narrow_slices = true;
  tf::set_exec_options(on);
  const std::vector<double> sizes = product_sizes(tangent.print_executable());
  const tf::Tensors narrow = tangent.run({a, da});
  tf::set_exec_options(saved);
  const double cube = static_cast<double>(n * n * n);
  ASSERT_FALSE(sizes.empty());
  EXPECT_EQ(*std::max_element(full_sizes.begin(), full_sizes.end()), cube);  // the check can fail
  EXPECT_LE(*std::max_element(sizes.begin(), sizes.end()), static_cast<double>(n * n * k));
  // Largest difference relative to the largest element of the reference.
  auto rel_diff = [](const tf::Tensor& x, const tf::Tensor& ref) {
    double diff = 0, scale = 0;
    for (std::int64_t i = 0; i < ref.numel(); ++i) {
      diff = std::max(diff, std::abs(x.element(i) - ref.element(i)));
      scale = std::max(scale, std::abs(ref.element(i)));
    }
    return diff / scale;
  };
  for (std::size_t i = 0; i < narrow.size(); ++i) EXPECT_LT(rel_diff(narrow[i], wide[i]), 1e-11) << "output " << i;
  // Central differences of the gauge-invariant reconstruction U_k S_k Vh_k.
  const double h = 1e-5;
  const tf::Program moved = tf::trace([&](const T& x, const T& dx, const T& t) { return truncated(x + dx * t)[3]; },
                                      a, da, tf::Tensor::scalar(0.0));
  const tf::Tensor plus = moved.run({a, da, tf::Tensor::scalar(h)})[0];
  const tf::Tensor minus = moved.run({a, da, tf::Tensor::scalar(-h)})[0];
  const tf::Tensor central = run([h](const std::vector<T>& x) { return std::vector<T>{(x[0] - x[1]) * (0.5 / h)}; },
                                 {plus, minus})[0];
  EXPECT_LT(rel_diff(narrow[3], central), 1e-6);
}

// The TRG example's observables (examples/ising_trg_model.hpp) by forward mode twice, as one
// program in which the SVD tangents are narrowed to the k columns read and the two SVDs of each
// step run concurrently, against reverse mode (value_and_grad and hessian: other rules, other
// programs) and against Onsager's exact solution at chi = 16 (matrices of 256 x 256, k = 16).
TEST(Svd, TrgDerivativesAgreeInEitherModeAndWithOnsager) {
  constexpr std::int64_t chi = 16;
  constexpr int niter = 14;
  auto f = [](const T& K) { return ising::lnz_per_site(K, chi, niter); };
  const tf::Program forward = tf::trace([](const T& K) { return ising::lnz_and_derivatives(K, chi, niter); },
                                        tf::Tensor::scalar(1.0));
  auto value_and_slope = tf::value_and_grad(f);
  auto curvature = tf::hessian(f);
  for (const double K : {0.3, 0.6}) {
    SCOPED_TRACE("K = " + std::to_string(K));
    const tf::Tensor k = tf::Tensor::scalar(K);
    const tf::Tensors fwd = forward.run({k});
    const auto [lnz, slope] = value_and_slope(k);
    const double second = curvature(k).item<double>();
    EXPECT_NEAR(fwd[0].item<double>(), lnz.item<double>(), 1e-12);
    EXPECT_NEAR(fwd[1].item<double>(), slope.item<double>(), 1e-10 * std::abs(slope.item<double>()));
    EXPECT_NEAR(fwd[2].item<double>(), second, 1e-8 * std::abs(second));
    // Onsager: lnZ/N to the finite torus's ln(2) / 2^niter, u and c to the truncation's error.
    const ising::Exact exact = ising::onsager(K);
    EXPECT_NEAR(fwd[0].item<double>(), exact.lnz, 1e-4);
    EXPECT_NEAR(-fwd[1].item<double>(), exact.u, 1e-3);
    EXPECT_NEAR(K * K * fwd[2].item<double>(), exact.c, 1e-2 * exact.c);
  }
}
