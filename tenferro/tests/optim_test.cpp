// Optimizers (tenferro/optim.hpp) against independent scalar implementations of the published
// update rules, written here element by element in doubles; the compiled training step against
// the eager one; the schedules against their closed forms; L-BFGS on a quadratic (n iterations
// with an exact line search), on Rosenbrock's function and on an extended Rosenbrock; the errors.
#include <gmock/gmock.h>

#include <cmath>
#include <numbers>
#include <tuple>

#include "linalg_test_util.hpp"

namespace tf = tenferro;
namespace opt = tenferro::optim;
using namespace tenferro::test;
using ::testing::HasSubstr;
using E = tf::EagerTensor;

namespace {

/// The loss sum_i (c_i p_i^2 / 2 - p_i): gradient c p - 1, computed alike by the reference.
const std::vector<double> kC = {0.5, 2.0, 3.5, 1.25, 0.75, 4.0};

std::vector<double> values(const tf::Tensor& t) {
  std::vector<double> v;
  for (std::int64_t i = 0; i < t.numel(); ++i) v.push_back(t.element(i).real());
  return v;
}

/// Runs `steps` steps of `o` eagerly from p0 (a [6] tensor) on the loss above; returns the
/// parameters after each step.
std::vector<std::vector<double>> run_eager(const opt::Optimizer& o, std::vector<double> p0, int steps) {
  const tf::Tensor c = tf::Tensor::from(kC, {6});
  tf::TracedList params{static_cast<T>(E(tf::Tensor::from(p0, {6})))};
  tf::TracedList state = o.init(params);
  std::vector<std::vector<double>> out;
  for (int k = 0; k < steps; ++k) {
    const T g = static_cast<T>(E(c)) * params[0] - 1.0;
    std::tie(params, state) = o.step(params, {g}, state);
    out.push_back(values(tf::eager_value(params[0])));
  }
  return out;
}

struct AdamRef {
  double lr, b1, b2, eps, wd;
  bool decoupled;
  std::vector<std::vector<double>> run(std::vector<double> p, int steps) const {
    std::vector<double> m(p.size(), 0.0), v(p.size(), 0.0);
    std::vector<std::vector<double>> out;
    for (int t = 1; t <= steps; ++t) {
      const double bias1 = 1.0 - std::pow(b1, t), bias2_sqrt = std::sqrt(1.0 - std::pow(b2, t));
      for (std::size_t i = 0; i < p.size(); ++i) {
        double g = kC[i] * p[i] - 1.0;
        if (decoupled) {
          p[i] *= 1.0 - lr * wd;
        } else {
          g += p[i] * wd;
        }
        m[i] += (g - m[i]) * (1.0 - b1);
        v[i] = v[i] * b2 + g * (1.0 - b2) * g;
        p[i] += (-(lr / bias1)) * m[i] / (std::sqrt(v[i]) / bias2_sqrt + eps);
      }
      out.push_back(p);
    }
    return out;
  }
};

void expect_trajectories_near(const std::vector<std::vector<double>>& got, const std::vector<std::vector<double>>& want,
                              double tol) {
  ASSERT_EQ(got.size(), want.size());
  for (std::size_t k = 0; k < got.size(); ++k) {
    for (std::size_t i = 0; i < got[k].size(); ++i) {
      EXPECT_NEAR(got[k][i], want[k][i], tol * (1 + std::abs(want[k][i]))) << "step " << k + 1 << " element " << i;
    }
  }
}

const std::vector<double> kP0 = {1.0, -0.5, 2.0, 0.25, -1.5, 0.8};

}  // namespace

TEST(Optim, AdamFollowsThePublishedUpdate) {
  const AdamRef ref{0.05, 0.9, 0.999, 1e-8, 0.0, false};
  expect_trajectories_near(run_eager(opt::adam({.lr = 0.05}), kP0, 50), ref.run(kP0, 50), 1e-14);
  const AdamRef l2{0.05, 0.8, 0.99, 1e-6, 0.1, false};
  expect_trajectories_near(run_eager(opt::adam({.lr = 0.05, .b1 = 0.8, .b2 = 0.99, .eps = 1e-6, .weight_decay = 0.1}), kP0, 50),
                           l2.run(kP0, 50), 1e-14);
  const AdamRef decoupled{0.05, 0.9, 0.999, 1e-8, 0.01, true};
  expect_trajectories_near(run_eager(opt::adamw({.lr = 0.05}), kP0, 50), decoupled.run(kP0, 50), 1e-14);
}

TEST(Optim, SgdWithMomentumNesterovAndWeightDecay) {
  for (const bool nesterov : {false, true}) {
    const double lr = 0.1, mu = 0.9, wd = 0.05;
    std::vector<double> p = kP0, buf(p.size(), 0.0);
    std::vector<std::vector<double>> want;
    for (int t = 0; t < 40; ++t) {
      for (std::size_t i = 0; i < p.size(); ++i) {
        double g = kC[i] * p[i] - 1.0 + p[i] * wd;
        buf[i] = buf[i] * mu + g;
        g = nesterov ? g + buf[i] * mu : buf[i];
        p[i] += -lr * g;
      }
      want.push_back(p);
    }
    expect_trajectories_near(run_eager(opt::sgd({.lr = lr, .momentum = mu, .nesterov = nesterov, .weight_decay = wd}), kP0, 40),
                             want, 1e-14);
  }
  // Plain SGD keeps no buffers and converges to the minimizer 1 / c.
  const auto plain = run_eager(opt::sgd({.lr = 0.2}), kP0, 400);
  for (std::size_t i = 0; i < kC.size(); ++i) EXPECT_NEAR(plain.back()[i], 1.0 / kC[i], 1e-12);
}

TEST(Optim, ACompiledTrainingStepEqualsTheEagerOne) {
  const opt::Optimizer o = opt::adam({.lr = opt::cosine_decay(0.1, 30)});
  const tf::Tensor c = tf::Tensor::from(kC, {6});
  // [p, count, m, v] -> [p', count', m', v'], the gradient as run_eager computes it.
  auto step = [&](const tf::TracedList& v) {
    const T g = tf::constant(v[0], c) * v[0] - 1.0;
    auto [p2, s2] = o.step({v[0]}, {g}, {v[1], v[2], v[3]});
    p2.insert(p2.end(), s2.begin(), s2.end());
    return p2;
  };
  tf::Tensors state = o.init(tf::Tensors{tf::Tensor::from(kP0, {6})});
  tf::Tensors vals{tf::Tensor::from(kP0, {6})};
  vals.insert(vals.end(), state.begin(), state.end());
  const tf::Program program(tf::detail::trace_function(step, tf::detail::types_of(vals)));
  const auto eager = run_eager(o, kP0, 30);
  for (int k = 0; k < 30; ++k) {
    vals = program.run(vals);
    EXPECT_EQ(values(vals[0]), eager[static_cast<std::size_t>(k)]) << "step " << k + 1;
  }
  EXPECT_EQ(vals[1].element(0).real(), 30.0);  // the step count
  // The same steps on concrete values (Optimizer::step on Tensors) give the same bits too.
  tf::Tensors params{tf::Tensor::from(kP0, {6})}, st = o.init(params);
  for (int k = 0; k < 30; ++k) {
    const tf::Tensor g = tf::trace([](const T& p, const T& cc) { return cc * p - 1.0; }, params[0], c).run({params[0], c})[0];
    std::tie(params, st) = o.step(params, {g}, st);
    EXPECT_EQ(values(params[0]), eager[static_cast<std::size_t>(k)]) << "step " << k + 1;
  }
}

TEST(Optim, SchedulesMatchTheirClosedForms) {
  const double pi = std::numbers::pi;
  for (std::int64_t k : {0, 1, 7, 10, 25}) {
    const double t = static_cast<double>(k);
    EXPECT_NEAR(opt::exponential_decay(0.1, 0.5, 10).at(k), 0.1 * std::pow(0.5, t / 10), 1e-17);
    EXPECT_NEAR(opt::exponential_decay(0.1, 0.5, 10, true).at(k), 0.1 * std::pow(0.5, std::floor(t / 10)), 1e-17);
    const double tc = std::min(t, 20.0);
    EXPECT_NEAR(opt::cosine_decay(0.1, 20, 0.1).at(k), 0.1 * (0.9 * 0.5 * (1 + std::cos(pi * tc / 20)) + 0.1), 1e-16);
    const double warm = t < 5 ? 0.2 * t / 5 : 0.01 + (0.2 - 0.01) * 0.5 * (1 + std::cos(pi * std::min(t - 5, 15.0) / 15));
    EXPECT_NEAR(opt::warmup_cosine_decay(0.2, 5, 20, 0.01).at(k), warm, 1e-16);
    EXPECT_NEAR(opt::inverse_time_decay(0.1, 4, 0.5).at(k), 0.1 / std::sqrt(1 + t / 4), 1e-16);
  }
  EXPECT_EQ(opt::Schedule(0.25).at(99), 0.25);
}

TEST(Optim, LbfgsMinimizesAQuadraticInNIterations) {
  // f(x) = x^T A x / 2 - b^T x, A symmetric positive definite with condition number 100.
  constexpr std::int64_t n = 8;
  std::vector<double> a(n * n, 0.0), b(n);
  for (std::int64_t i = 0; i < n; ++i) {
    b[static_cast<std::size_t>(i)] = std::sin(1.0 + static_cast<double>(i));
    for (std::int64_t j = 0; j < n; ++j) {
      a[static_cast<std::size_t>(i * n + j)] =
          (i == j ? std::pow(100.0, static_cast<double>(i) / (n - 1)) : 0.0) + 0.1 * std::cos(static_cast<double>(i + j));
    }
  }
  const tf::Tensor A = tf::Tensor::from(a, {n, n}), B = tf::Tensor::from(b, {n});
  auto f = [&](const T& x) {
    return tf::sum(x * tf::matmul(tf::constant(x, A), x)) * 0.5 - tf::sum(tf::constant(x, B) * x);
  };
  const auto r = opt::lbfgs(f, {tf::Tensor::zeros({n})}, {.history = 10, .gtol = 1e-10, .c1 = 1e-10, .c2 = 1e-6});
  EXPECT_TRUE(r.converged) << r.message;
  EXPECT_LE(r.iterations, n);
  // The solution of A x = b, checked by its residual.
  for (std::int64_t i = 0; i < n; ++i) {
    double res = -b[static_cast<std::size_t>(i)];
    for (std::int64_t j = 0; j < n; ++j) res += a[static_cast<std::size_t>(i * n + j)] * r.x[0].element(j).real();
    EXPECT_NEAR(res, 0.0, 1e-9);
  }
}

TEST(Optim, LbfgsMinimizesRosenbrock) {
  auto rosen = [](const T& x) {
    const auto n = x.shape()[0];
    const T head = tf::slice(x, {0}, {n - 1}), tail = tf::slice(x, {1}, {n});
    return tf::sum((tail - head * head) * (tail - head * head) * 100.0 + (1.0 - head) * (1.0 - head));
  };
  const auto r2 = opt::lbfgs(rosen, {tf::Tensor::from(std::vector<double>{-1.2, 1.0}, {2})});
  EXPECT_TRUE(r2.converged) << r2.message;
  for (std::int64_t i = 0; i < 2; ++i) EXPECT_NEAR(r2.x[0].element(i).real(), 1.0, 1e-10);
  EXPECT_LT(r2.iterations, 100);
  std::vector<double> x0(10);
  for (std::size_t i = 0; i < x0.size(); ++i) x0[i] = i % 2 == 0 ? -1.2 : 1.0;
  const auto r10 = opt::lbfgs(rosen, {tf::Tensor::from(x0, {10})});
  EXPECT_TRUE(r10.converged) << r10.message;
  for (std::int64_t i = 0; i < 10; ++i) EXPECT_NEAR(r10.x[0].element(i).real(), 1.0, 1e-10);
  // Several arguments, one of them f32: each keeps its dtype and shape.
  auto two = [](const T& x, const T& y) { return tf::sum((x - 3.0) * (x - 3.0)) + tf::sum(tf::astype((y + 1.0) * (y + 1.0), tf::DType::F64)); };
  const auto r = opt::lbfgs(two, {tf::Tensor::zeros({2, 2}), tf::Tensor::zeros({3}, tf::DType::F32)},
                            {.gtol = 1e-6});
  EXPECT_TRUE(r.converged) << r.message;
  EXPECT_EQ(r.x[1].dtype(), tf::DType::F32);
  EXPECT_NEAR(r.x[0].element(3).real(), 3.0, 1e-9);
  EXPECT_NEAR(r.x[1].element(2).real(), -1.0, 1e-6);
}

TEST(Optim, ErrorsNameTheOptimizerAndWhatWasExpected) {
  const opt::Optimizer a = opt::adam();
  const T p = static_cast<T>(E(tf::Tensor::ones({3})));
  const tf::TracedList s = a.init({p});
  try {
    a.step({p}, {static_cast<T>(E(tf::Tensor::ones({4})))}, s);
    FAIL() << "no ShapeError";
  } catch (const tf::ShapeError& e) {
    EXPECT_THAT(e.what(), HasSubstr("optim::adam.step: gradient 0 is f64[4] for a parameter f64[3]"));
  }
  EXPECT_THROW(a.step({p}, {p}, {s[0]}), tf::ShapeError);
  EXPECT_THROW(a.init({static_cast<T>(E(tf::Tensor::zeros({2}, tf::DType::C128)))}), tf::DTypeError);
  EXPECT_THROW(a.init({static_cast<T>(E(tf::Tensor::zeros({2}, tf::DType::I64)))}), tf::DTypeError);
  EXPECT_THROW(opt::adam({.b1 = 1.0}), tf::ValueError);
  EXPECT_THROW(opt::sgd({.nesterov = true}), tf::ValueError);
  EXPECT_THROW(opt::cosine_decay(0.1, 0), tf::ValueError);
  auto sq = [](const T& x) { return tf::sum(x * x); };
  EXPECT_THROW(opt::lbfgs(sq, {tf::Tensor::zeros({2})}, {.c1 = 0.5, .c2 = 0.1}), tf::ValueError);
  EXPECT_THROW(opt::lbfgs(sq, {tf::Tensor::zeros({2}, tf::DType::I64)}), tf::DTypeError);
}
