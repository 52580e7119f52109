// The traced API: broadcasting, composites, functional transforms, the vector examples of
// docs/design.md and bad input. Derivatives are checked with tidu's AD test kit (finite differences and the adjoint
// identity, to order 2 in forward and reverse modes) and against closed forms.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <random>

#include "computegraph/printer.hpp"
#include "tenferro/tenferro.hpp"
#include "tenferro/program.hpp"
#include "tenferro/operand_space.hpp"
#include "tidu/testing/check.hpp"

namespace tf = tenferro;
using testing::HasSubstr;

namespace {

tf::Tensor random_tensor(tf::Shape shape, tf::DType dtype, std::uint64_t seed, double lo = -1.0, double hi = 1.0) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(lo, hi);
  std::vector<tf::c128> values(static_cast<std::size_t>(tf::numel(shape)));
  for (auto& v : values) v = tf::is_complex(dtype) ? tf::c128(u(rng), u(rng)) : tf::c128(u(rng), 0.0);
  tf::Tensor t(tf::TensorType{dtype, shape});
  tf::visit_dtype(dtype, [&](auto zero) {
    using T = decltype(zero);
    T* out = static_cast<T*>(t.raw_data());
    for (std::size_t i = 0; i < values.size(); ++i) {
      if constexpr (std::is_same_v<T, tf::c128>) out[i] = values[i];
      else if constexpr (std::is_same_v<T, tf::c64>) out[i] = tf::c64(float(values[i].real()), float(values[i].imag()));
      else out[i] = static_cast<T>(values[i].real());
    }
  });
  return t;
}

/// check_grads at order 2, forward and reverse, of a traced function at `args`.
template <class F>
void expect_grads(const char* name, F f, const std::vector<tf::Tensor>& args) {
  auto graph = tf::detail::trace_graph(f, tf::detail::types_of(args));
  auto result = tidu::testkit::check_grads(tidu::testkit::function_of(graph),
                                           std::span<const tf::Tensor>(args), 2);
  EXPECT_TRUE(result.ok) << name << "\n" << result.message;
  EXPECT_FALSE(result.checks.empty()) << name;
}

struct CompositeCase {
  const char* name;
  std::function<tf::Traced(tf::Traced, tf::Traced)> f;
  tf::Shape a, b;
  bool complex_ok;
};

}  // namespace

TEST(TracedComposites, EveryCompositePassesCheckGradsToOrderTwo) {
  using T = tf::Traced;
  const std::vector<CompositeCase> cases = {
      {"broadcast add", [](T a, T b) { return tf::sum(a + b); }, {3, 1}, {4}, true},
      {"broadcast mul rank0", [](T a, T b) { return tf::sum(a * b); }, {2, 3}, {}, true},
      {"sub", [](T a, T b) { return tf::sum((a - b) * (a - b)); }, {2, 3}, {2, 3}, true},
      {"matmul", [](T a, T b) { return tf::sum(tf::matmul(a, b)); }, {2, 3}, {3, 4}, true},
      {"matmul vec", [](T a, T b) { return tf::sum(tf::matmul(a, b) * tf::matmul(a, b)); }, {2, 3}, {3}, true},
      {"mean", [](T a, T b) { return tf::mean(a * b, {0}) * tf::mean(a * b, {0}); }, {3, 2}, {3, 2}, false},
      {"var", [](T a, T) { return tf::sum(tf::var(a, {1})); }, {2, 4}, {1}, true},
      {"var with correction", [](T a, T) { return tf::sum(tf::var(a, {0, 1}, 1)); }, {2, 4}, {1}, true},
      {"stddev", [](T a, T) { return tf::sum(tf::stddev(a, {1}, 1)); }, {2, 4}, {1}, true},
      {"sum axes", [](T a, T b) { return tf::sum(tf::sum(a * b, {0, 2}) * tf::sum(a, {0, 2})); }, {2, 2, 3}, {2, 2, 3}, true},
      {"sum no axes", [](T a, T b) { return tf::sum(tf::sum(a * b, {})); }, {2, 2}, {2, 2}, true},
      {"max axes", [](T a, T b) { return tf::sum(tf::max(a * b, {1})); }, {3, 4}, {3, 4}, false},
      {"logsumexp", [](T a, T b) { return tf::sum(tf::logsumexp(a * b, {1})); }, {3, 4}, {3, 4}, false},
      {"softmax", [](T a, T b) { return tf::sum(tf::softmax(a, -1) * b); }, {3, 4}, {3, 4}, false},
      {"log_softmax", [](T a, T b) { return tf::sum(tf::log_softmax(a, 0) * b); }, {3, 4}, {3, 4}, false},
      {"sigmoid", [](T a, T b) { return tf::sum(tf::sigmoid(a) * b); }, {5}, {5}, false},
      {"relu", [](T a, T b) { return tf::sum(tf::relu(a) * b); }, {5}, {5}, false},
      {"softplus", [](T a, T b) { return tf::sum(tf::softplus(a * 3.0) * b); }, {5}, {5}, false},
      {"cross_entropy", [](T a, T b) { return tf::cross_entropy(a, tf::softmax(b, -1)); }, {4, 3}, {4, 3}, false},
  };
  for (const auto& c : cases) {
    for (tf::DType dtype : {tf::DType::F64, tf::DType::C128}) {
      if (tf::is_complex(dtype) && !c.complex_ok) continue;
      SCOPED_TRACE(std::string(c.name) + " " + tf::dtype_name(dtype));
      auto f = [&](T a, T b) {
        T y = c.f(a, b);
        return tf::is_complex(y.dtype()) ? tf::real(y) : y;
      };
      expect_grads(c.name, f, {random_tensor(c.a, dtype, 11), random_tensor(c.b, dtype, 12)});
    }
  }
}

TEST(TracedTransforms, GradJvpVjpHessianMatchClosedForms) {
  // loss(w, x) = sum(exp(w * x)): grad_w = x exp(w x), H_w = diag(x^2 exp(w x)).
  auto loss = [](tf::Traced w, tf::Traced x) { return tf::sum(tf::exp(w * x)); };
  tf::Tensor w = tf::Tensor::from({0.5, -1.0}), x = tf::Tensor::from({1.0, 2.0});
  tf::Tensor g = tf::grad(loss)(w, x);
  tf::Tensor h = tf::hessian(loss)(w, x);
  ASSERT_EQ(h.shape(), (tf::Shape{2, 2}));
  for (std::int64_t i = 0; i < 2; ++i) {
    const double wi = w.at<double>({i}), xi = x.at<double>({i});
    EXPECT_NEAR(g.at<double>({i}), xi * std::exp(wi * xi), 1e-12);
    EXPECT_NEAR(h.at<double>({i, i}), xi * xi * std::exp(wi * xi), 1e-12);
    EXPECT_NEAR(h.at<double>({i, 1 - i}), 0.0, 1e-12);
  }
  // With respect to the second argument, a matrix one (H_x = diag(w^2 exp(w x)) as [2,2,2,2]),
  // with a non-symmetric cross term so that a transposed Hessian would show.
  auto cross = [](tf::Traced u, tf::Traced v) { return tf::sum(tf::exp(u * v)) + tf::sum(tf::sin(v) * tf::cos(u)); };
  tf::Tensor W = tf::Tensor::from({{0.5, -1.0}, {0.2, 0.7}}), X = tf::Tensor::from({{1.0, 2.0}, {-0.5, 0.3}});
  tf::Tensor hx = tf::hessian(cross, 1)(W, X);
  ASSERT_EQ(hx.shape(), (tf::Shape{2, 2, 2, 2}));
  for (std::int64_t i = 0; i < 4; ++i) {
    for (std::int64_t j = 0; j < 4; ++j) {
      const double wi = W.data<double>()[i], xi = X.data<double>()[i];
      const double expected = i == j ? wi * wi * std::exp(wi * xi) - std::sin(xi) * std::cos(wi) : 0.0;
      EXPECT_NEAR(hx.data<double>()[i * 4 + j], expected, 1e-12) << i << "," << j;
    }
  }
  tf::Tensor dw = tf::Tensor::from({1.0, 0.5}), dx = tf::Tensor::from({0.0, 0.0});
  auto [y, dy] = tf::jvp(loss, {w, x}, {dw, dx});
  EXPECT_NEAR(y.item<double>(), std::exp(0.5) + std::exp(-2.0), 1e-12);
  EXPECT_NEAR(dy.item<double>(), 1.0 * std::exp(0.5) + 0.5 * 2.0 * std::exp(-2.0), 1e-12);
  auto [value, cts] = tf::vjp(loss, {w, x}, tf::Tensor::scalar(2.0));
  EXPECT_NEAR(cts[1].at<double>({1}), 2.0 * -1.0 * std::exp(-2.0), 1e-12);
  tf::Tensor j = tf::jacfwd([](tf::Traced v) { return tf::exp(v) * v; })(x);
  tf::Tensor jr = tf::jacrev([](tf::Traced v) { return tf::exp(v) * v; })(x);
  EXPECT_TRUE(tf::allclose(j, jr));
  EXPECT_NEAR(j.at<double>({1, 1}), std::exp(2.0) * 3.0, 1e-12);
  EXPECT_NEAR(j.at<double>({0, 1}), 0.0, 1e-15);
}

// A dense Hessian: f(x) = exp(sum(c x)) has H = f c c^T. The hessian callable runs the primal
// part once and one linear run per column, storing each column (H is symmetric) as a row; every
// entry must match the closed form and the column of an independent hvp along e_j, in f32 and
// f64, for a size that is not a multiple of a vector width.
template <class T>
void check_dense_hessian(double tol) {
  constexpr std::int64_t n = 13;
  std::vector<T> cs(n), xs(n);
  double s = 0;
  for (std::size_t i = 0; i < cs.size(); ++i) {
    cs[i] = static_cast<T>(0.1 * static_cast<double>(i) - 0.55);
    xs[i] = static_cast<T>(0.05 * static_cast<double>(n) - 0.05 * static_cast<double>(i));
    s += static_cast<double>(cs[i]) * static_cast<double>(xs[i]);
  }
  const tf::Tensor c = tf::Tensor::from(cs, {n}), x = tf::Tensor::from(xs, {n});
  auto f = [](tf::Traced v, tf::Traced k) { return tf::exp(tf::sum(k * v)); };
  const tf::Tensor h = tf::hessian(f)(x, c);
  ASSERT_EQ(h.shape(), (tf::Shape{n, n}));
  for (std::int64_t j = 0; j < n; ++j) {
    std::vector<T> e(n, T(0));
    e[static_cast<std::size_t>(j)] = T(1);
    const tf::Tensor column =
        tf::hvp(f, {x, c}, {tf::Tensor::from(e, {n}), tf::Tensor::from(std::vector<T>(n, T(0)), {n})}).at(0);
    for (std::int64_t i = 0; i < n; ++i) {
      const double expected = std::exp(s) * static_cast<double>(cs[static_cast<std::size_t>(i)]) *
                              static_cast<double>(cs[static_cast<std::size_t>(j)]);
      EXPECT_NEAR(h.at<T>({i, j}), expected, tol) << i << "," << j;
      EXPECT_NEAR(h.at<T>({i, j}), column.at<T>({i}), tol) << i << "," << j;
    }
  }
}

// A dense Hessian: f(x) = exp(sum(c x)) has H = f c c^T. The hessian callable runs the primal
// part once and one linear run per column, storing each column (H is symmetric) as a row; every
// entry must match the closed form and the column of an independent hvp along e_j, in f32 and
// f64, for a size that is not a multiple of a vector width.
TEST(TracedTransforms, DenseHessianMatchesClosedFormAndHvpColumns) {
  check_dense_hessian<double>(1e-13);
  check_dense_hessian<float>(1e-5);
}

// jacfwd stores each column J e_j and jacrev each row conj(J^H e_i) straight into the result, in
// the output's dtype: a holomorphic c128 function, an f32 one, a real function of a complex
// argument (J = the real part of the derivative along the real axis), and an output that does
// not depend on the argument (all zeros) must all match their closed forms.
TEST(TracedTransforms, JacobiansMatchClosedFormsInEveryDtype) {
  const std::vector<tf::c128> zs = {{0.3, -0.2}, {-0.5, 0.4}, {0.1, 0.7}};
  const tf::Tensor z = tf::Tensor::from(zs, {3});
  auto holomorphic = [](tf::Traced v) { return v * tf::exp(v); };  // J = diag((1 + z) e^z)
  auto squared_modulus = [](tf::Traced v) { return tf::real(v * tf::conj(v)); };  // J = diag(2 Re z)
  for (bool forward : {true, false}) {
    SCOPED_TRACE(forward ? "jacfwd" : "jacrev");
    const tf::Tensor jh = forward ? tf::jacfwd(holomorphic)(z) : tf::jacrev(holomorphic)(z);
    const tf::Tensor jm = forward ? tf::jacfwd(squared_modulus)(z) : tf::jacrev(squared_modulus)(z);
    ASSERT_EQ(jh.dtype(), tf::DType::C128);
    ASSERT_EQ(jm.dtype(), tf::DType::F64);
    for (std::int64_t i = 0; i < 3; ++i) {
      for (std::int64_t j = 0; j < 3; ++j) {
        const tf::c128 zi = zs[static_cast<std::size_t>(i)];
        const tf::c128 expected = i == j ? (1.0 + zi) * std::exp(zi) : tf::c128(0.0);
        EXPECT_NEAR(std::abs(jh.at<tf::c128>({i, j}) - expected), 0.0, 1e-14) << i << "," << j;
        EXPECT_NEAR(jm.at<double>({i, j}), i == j ? 2 * zi.real() : 0.0, 1e-14) << i << "," << j;
      }
    }
    const tf::Tensor x = tf::Tensor::from(std::vector<float>{0.5f, -1.0f}, {2});
    auto cubic = [](tf::Traced v) { return v * v * v; };  // J = diag(3 x^2)
    const tf::Tensor jf = forward ? tf::jacfwd(cubic)(x) : tf::jacrev(cubic)(x);
    ASSERT_EQ(jf.dtype(), tf::DType::F32);
    EXPECT_FLOAT_EQ(jf.at<float>({0, 0}), 0.75f);
    EXPECT_FLOAT_EQ(jf.at<float>({1, 1}), 3.0f);
    EXPECT_FLOAT_EQ(jf.at<float>({0, 1}), 0.0f);
    auto constant = [](tf::Traced, tf::Traced c) { return c * 2.0; };  // constant in argument 0
    const tf::Tensor c = tf::Tensor::from({1.0, 2.0});
    const tf::Tensor jc = forward ? tf::jacfwd(constant, 1)(tf::Tensor::from({4.0, 5.0, 6.0}), c)
                                  : tf::jacrev(constant, 1)(tf::Tensor::from({4.0, 5.0, 6.0}), c);
    EXPECT_EQ(jc.at<double>({0, 0}), 2.0);
    EXPECT_EQ(jc.at<double>({0, 1}), 0.0);
    const tf::Tensor jv = forward ? tf::jacfwd(constant, 0)(tf::Tensor::from({4.0, 5.0, 6.0}), c)
                                  : tf::jacrev(constant, 0)(tf::Tensor::from({4.0, 5.0, 6.0}), c);
    ASSERT_EQ(jv.shape(), (tf::Shape{2, 3}));
    for (std::int64_t k = 0; k < jv.numel(); ++k) EXPECT_EQ(jv.data<double>()[k], 0.0);
    // One tensor out, as the result's shape out.shape + x.shape assumes.
    auto two = [](tf::Traced v) { return std::vector<tf::Traced>{v, v * v}; };
    EXPECT_THROW(forward ? tf::jacfwd(two)(x) : tf::jacrev(two)(x), tf::ShapeError);
  }
}

TEST(TracedTransforms, SecondCallReusesTheCompiledProgram) {
  auto loss = [](tf::Traced w) { return tf::sum(tf::sin(w) * w); };
  auto g = tf::grad(loss);
  tf::Tensor w = tf::Tensor::from({0.1, 0.2, 0.3});
  g(w);
  const auto misses = tf::default_compile_cache()->stats().misses;
  tf::Tensor second = g(tf::Tensor::from({1.0, 2.0, 3.0}));
  EXPECT_EQ(tf::default_compile_cache()->stats().misses, misses);
  EXPECT_NEAR(second.at<double>({2}), std::cos(3.0) * 3.0 + std::sin(3.0), 1e-12);
}

TEST(VectorExamples, SumExpAxGoldenIrAndClosedForms) {
  // Vector example 2 (docs/design.md): y = Sum(exp(a * x)), x, a in R^2, linearized in x and
  // transposed.
  auto f = [](tf::Traced x, tf::Traced a) { return tf::sum(tf::exp(x * a)); };
  tf::Tensor x = tf::Tensor::from({0.3, -0.7}), a = tf::Tensor::from({1.5, 2.0});
  tf::Program p = tf::trace(f, x, a);
  EXPECT_EQ(p.print(),
            "graph {\n"
            "  %0 = input x0:f64[2]\n"
            "  %1 = input x1:f64[2]\n"
            "  %2 = mul(%0, %1)\n"
            "  %3 = exp(%2)\n"
            "  %4 = reduce_sum[axes=[0]](%3)\n"
            "  return %4\n"
            "}\n");
  auto linear = tf::linearize(p);
  auto transposed = tidu::linear_transpose(linear);
  const std::string t = computegraph::to_string(*transposed.graph);
  EXPECT_THAT(t, HasSubstr("broadcast_in_dim[shape=[2], dims=[]]"));
  EXPECT_THAT(t, testing::Not(HasSubstr("conj")));
  auto [y, grads] = tf::vjp(f, {x, a}, tf::Tensor::scalar(1.0));
  for (std::int64_t i = 0; i < 2; ++i) {
    const double xi = x.at<double>({i}), ai = a.at<double>({i});
    EXPECT_NEAR(grads[0].at<double>({i}), ai * std::exp(ai * xi), 1e-12);
    EXPECT_NEAR(grads[1].at<double>({i}), xi * std::exp(ai * xi), 1e-12);
  }
  EXPECT_NEAR(y.item<double>(), std::exp(0.45) + std::exp(-1.4), 1e-12);
}

TEST(TracedErrors, BadInputThrowsTypedErrorsAtTraceTime) {
  tf::Tensor v3 = tf::Tensor::from({1.0, 2.0, 3.0}), v2 = tf::Tensor::from({1.0, 2.0});
  tf::Tensor m23 = tf::Tensor::zeros({2, 3});
  auto add = [](tf::Traced a, tf::Traced b) { return tf::sum(a + b); };
  EXPECT_THROW(
      try { tf::grad(add)(v3, v2); } catch (const tf::ShapeError& e) {
        EXPECT_THAT(e.what(), HasSubstr("add"));
        EXPECT_THAT(e.what(), HasSubstr("[3]"));
        throw;
      },
      tf::ShapeError);
  auto not_scalar = [](tf::Traced a) { return a * a; };
  EXPECT_THROW(
      try { tf::grad(not_scalar)(v3); } catch (const tf::ShapeError& e) {
        EXPECT_THAT(e.what(), HasSubstr("scalar"));
        throw;
      },
      tf::ShapeError);
  auto ints = [](tf::Traced a) { return tf::sum(tf::astype(a, tf::DType::F64)); };
  tf::Tensor i64 = tf::Tensor::from(std::vector<std::int64_t>{1, 2}, {2});
  EXPECT_THROW(
      try { tf::grad(ints)(i64); } catch (const tf::DTypeError& e) {
        EXPECT_THAT(e.what(), HasSubstr("i64"));
        throw;
      },
      tf::DTypeError);
  auto reshape = [](tf::Traced a) { return tf::sum(tf::reshape(a, {4})); };
  EXPECT_THROW(tf::grad(reshape)(m23), tf::ShapeError);
  auto mm = [](tf::Traced a, tf::Traced b) { return tf::sum(tf::matmul(a, b)); };
  EXPECT_THROW(
      try { tf::grad(mm)(m23, m23); } catch (const tf::ShapeError& e) {
        EXPECT_THAT(e.what(), HasSubstr("dot_general"));
        throw;
      },
      tf::ShapeError);
  auto axes = [](tf::Traced a) { return tf::sum(tf::sum(a, {2})); };
  EXPECT_THROW(tf::grad(axes)(m23), tf::ShapeError);
  auto perm = [](tf::Traced a) { return tf::sum(tf::transpose(a, {0, 0})); };
  EXPECT_THROW(tf::grad(perm)(m23), tf::ShapeError);
  auto mixed = [](tf::Traced a, tf::Traced b) { return tf::sum(a * b); };
  EXPECT_THROW(tf::grad(mixed)(v2, tf::Tensor::from({tf::c128(1, 0), tf::c128(0, 1)})), tf::DTypeError);
}

// Found by the invalid-program generator (tenferro/testing/invalid_program.hpp): these named an
// internal primitive or an internal input ("run: input 1 (ct1:0 ...)") instead of the call.
TEST(TracedErrors, BoundsTangentsAndCotangentsOfTheWrongTypeNameTheCall) {
  auto expect_error = [](auto call, const char* name, const char* type) {
    try {
      call();
      ADD_FAILURE() << name << ": no error";
    } catch (const tf::ShapeError& e) {
      EXPECT_THAT(e.what(), HasSubstr(name));
      EXPECT_THAT(e.what(), HasSubstr(type));
    } catch (const tf::DTypeError& e) {
      EXPECT_THAT(e.what(), HasSubstr(name));
      EXPECT_THAT(e.what(), HasSubstr(type));
    }
  };
  tf::Tensor v2 = tf::Tensor::from({1.0, 2.0}), v3 = tf::Tensor::from({1.0, 2.0, 3.0});
  auto clamped = [](tf::Traced x, tf::Traced lo) { return tf::sum(tf::clamp(x, lo, x)); };
  expect_error([&] { tf::grad(clamped)(v2, v3); }, "clamp", "f64[3]");
  auto f = [](tf::Traced a) { return tf::sum(tf::exp(a)); };
  expect_error([&] { tf::jvp(f, {v2}, {v3}); }, "jvp", "f64[3]");
  expect_error([&] { tf::jvp(f, {v2}, {tf::Tensor::from({1.0f, 2.0f})}); }, "jvp", "f32[2]");
  expect_error([&] { tf::hvp(f, {v2}, {v3}); }, "hvp", "f64[3]");
  expect_error([&] { tf::vjp(f, {v2}, v2); }, "vjp", "f64[2]");
  EXPECT_THROW(tf::vjp(f, {v2}, tf::Tensor::scalar(1.0, tf::DType::F32)), tf::DTypeError);
}

TEST(TracedMlp, GradientMatchesFiniteDifferencesOnSampledEntries) {
  // A 6-5-4-3 MLP with tanh and softmax cross-entropy; central differences on sampled weights.
  std::vector<tf::Tensor> p = {random_tensor({6, 5}, tf::DType::F64, 1), random_tensor({5}, tf::DType::F64, 2),
                               random_tensor({5, 4}, tf::DType::F64, 3), random_tensor({4}, tf::DType::F64, 4),
                               random_tensor({4, 3}, tf::DType::F64, 5), random_tensor({3}, tf::DType::F64, 6),
                               random_tensor({8, 6}, tf::DType::F64, 7)};
  std::vector<double> onehot(24, 0.0);
  for (int i = 0; i < 8; ++i) onehot[static_cast<std::size_t>(i * 3 + i % 3)] = 1.0;
  p.push_back(tf::Tensor::from(onehot, {8, 3}));
  auto loss = [](tf::Traced w1, tf::Traced b1, tf::Traced w2, tf::Traced b2, tf::Traced w3, tf::Traced b3,
                 tf::Traced x, tf::Traced y) {
    tf::Traced h1 = tf::tanh(tf::matmul(x, w1) + b1);
    tf::Traced h2 = tf::tanh(tf::matmul(h1, w2) + b2);
    return tf::cross_entropy(tf::matmul(h2, w3) + b3, y);
  };
  auto vg = tf::value_and_grad(loss, {0, 1, 2, 3, 4, 5});
  auto [value, grads] = vg(p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7]);
  tf::Program primal = tf::trace(loss, p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7]);
  const double h = 1e-6;
  for (std::size_t k = 0; k < 6; ++k) {
    for (std::int64_t e = 0; e < p[k].numel(); e += 3) {
      auto shifted = [&](double delta) {
        std::vector<tf::Tensor> q = p;
        q[k] = p[k].clone();
        q[k].data<double>()[e] += delta;
        return primal.run(q)[0].item<double>();
      };
      const double fd = (shifted(h) - shifted(-h)) / (2 * h);
      EXPECT_NEAR(grads[k].data<double>()[e], fd, 1e-7 * (1 + std::abs(fd))) << "param " << k << " entry " << e;
    }
  }
}

TEST(TracedMlp, FullSizeGradientMatchesFiniteDifferencesOnSampledEntries) {
  // The benchmark's network: 784-512-512-10, tanh, softmax cross-entropy, batch 256, f64.
  std::vector<tf::Tensor> p = {random_tensor({784, 512}, tf::DType::F64, 21, -0.05, 0.05),
                               random_tensor({512}, tf::DType::F64, 22, -0.1, 0.1),
                               random_tensor({512, 512}, tf::DType::F64, 23, -0.06, 0.06),
                               random_tensor({512}, tf::DType::F64, 24, -0.1, 0.1),
                               random_tensor({512, 10}, tf::DType::F64, 25, -0.06, 0.06),
                               random_tensor({10}, tf::DType::F64, 26, -0.1, 0.1),
                               random_tensor({256, 784}, tf::DType::F64, 27)};
  std::vector<double> onehot(256 * 10, 0.0);
  for (int i = 0; i < 256; ++i) onehot[static_cast<std::size_t>(i * 10 + (i * 7) % 10)] = 1.0;
  p.push_back(tf::Tensor::from(onehot, {256, 10}));
  auto loss = [](tf::Traced w1, tf::Traced b1, tf::Traced w2, tf::Traced b2, tf::Traced w3, tf::Traced b3,
                 tf::Traced x, tf::Traced y) {
    tf::Traced h1 = tf::tanh(tf::matmul(x, w1) + b1);
    tf::Traced h2 = tf::tanh(tf::matmul(h1, w2) + b2);
    return tf::cross_entropy(tf::matmul(h2, w3) + b3, y);
  };
  auto [value, grads] = tf::value_and_grad(loss, {0, 1, 2, 3, 4, 5})(p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7]);
  tf::Program primal = tf::trace(loss, p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7]);
  EXPECT_NEAR(primal.run(p)[0].item<double>(), value.item<double>(), 1e-12);
  const double h = 1e-5;
  std::mt19937_64 rng(99);
  for (std::size_t k = 0; k < 6; ++k) {
    for (int sample = 0; sample < 2; ++sample) {
      const std::int64_t e = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(p[k].numel()));
      auto shifted = [&](double delta) {
        std::vector<tf::Tensor> q = p;
        q[k] = p[k].clone();
        q[k].data<double>()[e] += delta;
        return primal.run(q)[0].item<double>();
      };
      const double fd = (shifted(h) - shifted(-h)) / (2 * h);
      EXPECT_NEAR(grads[k].data<double>()[e], fd, 1e-8 + 1e-5 * std::abs(fd)) << "param " << k << " entry " << e;
    }
  }
}

TEST(VectorExamples, LinearAndTransposedGraphsMatchTheWorkedExamples) {
  // Both vector examples of docs/design.md ("Worked examples"), linearized with respect to x only.
  // Expected text written from their linear and transposed graphs, in the project's printer syntax.
  auto graphs_of = [](auto f) {
    tf::Tensor x = tf::Tensor::from({0.3, -0.7}), a = tf::Tensor::from({1.5, 2.0});
    tf::Program p = tf::trace(f, x, a);
    auto outputs = p.graph()->output_keys();
    std::vector<tf::TensorKey> wrt{p.graph()->key(p.graph()->inputs()[0]).input_key()};
    auto linear = tidu::linearize(computegraph::resolve({p.graph()}), std::span<const tf::TensorValueKey>(outputs),
                                  std::span<const tf::TensorKey>(wrt));
    auto transposed = tidu::linear_transpose(linear);
    return std::pair{computegraph::to_string(*linear.graph), computegraph::to_string(*transposed.graph)};
  };
  auto [l1, t1] = graphs_of([](tf::Traced x, tf::Traced a) { return tf::exp(x * a); });
  EXPECT_EQ(l1,
            "graph {\n"
            "  %0 = input t1:x0:f64[2]\n"
            "  $0 = external x1:f64[2]\n"
            "  $1 = external exp(mul(x0:f64[2], x1:f64[2]))\n"
            "  %1 = mul($0, %0) linearized[fixed, active]\n"
            "  %2 = mul($1, %1) linearized[fixed, active]\n"
            "  return %2\n"
            "}\n");
  EXPECT_EQ(t1,
            "graph {\n"
            "  %0 = input ct1:0:f64[2]\n"
            "  $0 = external exp(mul(x0:f64[2], x1:f64[2]))\n"
            "  $1 = external x1:f64[2]\n"
            "  %1 = mul($0, %0) linearized[fixed, active]\n"
            "  %2 = mul($1, %1) linearized[fixed, active]\n"
            "  return %2\n"
            "}\n");
  auto [l2, t2] = graphs_of([](tf::Traced x, tf::Traced a) { return tf::sum(tf::exp(x * a)); });
  EXPECT_EQ(l2,
            "graph {\n"
            "  %0 = input t1:x0:f64[2]\n"
            "  $0 = external x1:f64[2]\n"
            "  $1 = external exp(mul(x0:f64[2], x1:f64[2]))\n"
            "  %1 = mul($0, %0) linearized[fixed, active]\n"
            "  %2 = mul($1, %1) linearized[fixed, active]\n"
            "  %3 = reduce_sum[axes=[0]](%2) linearized[active]\n"
            "  return %3\n"
            "}\n");
  EXPECT_EQ(t2,
            "graph {\n"
            "  %0 = input ct1:0:f64[]\n"
            "  $0 = external exp(mul(x0:f64[2], x1:f64[2]))\n"
            "  $1 = external x1:f64[2]\n"
            "  %1 = broadcast_in_dim[shape=[2], dims=[]](%0) linearized[active]\n"
            "  %2 = mul($0, %1) linearized[fixed, active]\n"
            "  %3 = mul($1, %2) linearized[fixed, active]\n"
            "  return %3\n"
            "}\n");
}

TEST(TracedProgram, RunIntoWritesIntoTheCallersTensorsAndPrintsTheExecutable) {
  auto f = [](tf::Traced x) { return tf::tanh(x) * 2.0 + x; };
  tf::Tensor x = tf::Tensor::from({0.5, -1.0, 2.0});
  tf::Program p = tf::trace(f, x);
  tf::Tensors out = {tf::Tensor::zeros({3})};
  const void* storage = out[0].raw_data();
  p.run_into({x}, out);
  EXPECT_EQ(out[0].raw_data(), storage);
  for (std::int64_t i = 0; i < 3; ++i) {
    const double xi = x.data<double>()[i];
    EXPECT_NEAR(out[0].data<double>()[i], std::tanh(xi) * 2.0 + xi, 1e-15);
  }
  tf::Tensors wrong = {tf::Tensor::zeros({4})};
  EXPECT_THROW(p.run_into({x}, wrong), tf::ShapeError);
  // One fused kernel, unless the passes are switched off for this run of the suite.
  if (tf::exec_options().fuse_elementwise) {
    EXPECT_NE(p.print_executable().find("fused[f64 x 3]"), std::string::npos) << p.print_executable();
  }
}

// tenferro::Function, the user tier's callable (std::function's role without <functional>):
// copies own copies of the callable, a moved-from Function is empty, calling an empty one is a
// BindingError, and void results work.
TEST(Function, CopiesOwnTheirCallableAndEmptyCallsThrow) {
  int calls = 0;
  tf::Function<int(int)> counter = [n = 0](int step) mutable { return n += step; };
  EXPECT_EQ(counter(1), 1);
  tf::Function<int(int)> copy = counter;  // the copy starts from the state at copy time
  EXPECT_EQ(counter(1), 2);
  EXPECT_EQ(copy(10), 11);
  EXPECT_EQ(counter(1), 3);
  tf::Function<int(int)> moved = std::move(copy);
  EXPECT_FALSE(static_cast<bool>(copy));  // NOLINT(bugprone-use-after-move): moved-from is empty
  EXPECT_EQ(moved(1), 12);
  copy = moved;
  EXPECT_EQ(copy(1), 13);
  EXPECT_EQ(moved(1), 13);
  tf::Function<void()> effect = [&calls] { ++calls; };
  effect();
  effect();
  EXPECT_EQ(calls, 2);
  tf::Function<void()> none;
  EXPECT_FALSE(static_cast<bool>(none));
  EXPECT_THROW(none(), tf::BindingError);
  none = nullptr;
  EXPECT_THROW(none(), tf::BindingError);
}
