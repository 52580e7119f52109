// Eager mode: elementwise results bitwise equal to a compiled program's, gradients against the
// traced API's on the same programs, accumulation, retain_graph,
// NoGrad and detach, non-scalar outputs with cotangents against tf::vjp, higher order through
// create_graph against tf::hvp, an MLP trained eagerly and traced to the same losses, independent
// computations on several threads, and the errors.
#include <gmock/gmock.h>

#include <cstring>
#include <thread>

#include "linalg_test_util.hpp"

namespace tf = tenferro;
using namespace tenferro::test;
using ::testing::HasSubstr;
using E = tf::EagerTensor;

namespace {
/// A program with broadcasting, a contraction, a reduction over an axis, a composite (logsumexp)
/// and a value used twice.
T program(T w, T x) {
  const T h = tf::tanh(tf::matmul(x, w) + 0.5);
  return tf::sum(h * h) + tf::sum(tf::logsumexp(h, {1})) + tf::sum(tf::exp(w) * w);
}

void expect_near(const tf::Tensor& a, const tf::Tensor& b, double tol = 1e-13) {
  ASSERT_EQ(a.type(), b.type());
  for (std::int64_t i = 0; i < a.numel(); ++i) {
    EXPECT_NEAR(std::abs(at(a, i) - at(b, i)), 0.0, tol * (1 + std::abs(at(b, i)))) << "element " << i;
  }
}

template <class Fn>
std::string error_of(Fn&& fn) {
  try {
    fn();
  } catch (const tf::ValueError& e) {
    return e.what();
  }
  return "no ValueError";
}
}  // namespace

TEST(Eager, GradientsEqualTheTracedAPIs) {
  std::mt19937_64 rng(3);
  for (tf::DType dt : {tf::DType::F64, tf::DType::F32}) {
    const tf::Tensor w0 = random_matrix(rng, {3, 2}, dt), x0 = random_matrix(rng, {4, 3}, dt);
    E w(w0, true), x(x0);
    E loss = program(w, x);
    EXPECT_TRUE(loss.requires_grad());
    EXPECT_FALSE(loss.is_leaf());
    loss.backward();
    auto [value, g] = tf::value_and_grad(program)(w0, x0);
    expect_near(loss.value(), value, dt == tf::DType::F32 ? 1e-6 : 1e-14);
    expect_near(w.grad().value(), g, dt == tf::DType::F32 ? 1e-6 : 1e-14);
    EXPECT_FALSE(x.grad().defined());  // x does not require grad
  }
}

// Eager elementwise ops and full sums run the executor's loops, so they give the bits of a compiled
// program (here a fused chain) exactly, in f32 and f64.
TEST(Eager, ElementwiseResultsEqualACompiledProgramsBits) {
  std::mt19937_64 rng(5);
  for (tf::DType dt : {tf::DType::F32, tf::DType::F64}) {
    const tf::Tensor x0 = random_matrix(rng, {37, 29}, dt), y0 = random_matrix(rng, {37, 29}, dt);
    auto f = [](T x, T y) {
      const T z = tf::tanh(x) * tf::exp(y) + tf::sin(x * y) - tf::sqrt(tf::abs(y) + 1.0);
      return std::vector<T>{z, tf::sum(z)};
    };
    const std::vector<tf::Tensor> traced = tf::test::run([&](const std::vector<T>& v) { return f(v[0], v[1]); }, {x0, y0});
    const std::vector<T> eager = f(E(x0), E(y0));
    for (std::size_t k = 0; k < 2; ++k) {
      const tf::Tensor& a = tf::eager_value(eager[k]);
      ASSERT_EQ(a.type(), traced[k].type());
      EXPECT_EQ(std::memcmp(a.raw_data(), traced[k].raw_data(), a.nbytes()), 0) << "output " << k;
    }
  }
}

TEST(Eager, ComplexLeavesFollowTheTracedConvention) {
  std::mt19937_64 rng(5);
  const tf::Tensor z0 = random_matrix(rng, {3}, tf::DType::C128);
  auto f = [](T z) { return tf::sum(tf::real(z * tf::conj(z) * tf::exp(z))); };
  E z(z0, true);
  E(f(z)).backward();
  expect_near(z.grad().value(), tf::grad(f)(z0));
}

TEST(Eager, BackwardAccumulatesAndRetainGraphAllowsASecondPass) {
  E w(tf::Tensor::from(std::vector<double>{1, 2, 3}, {3}), true);
  E loss = tf::sum(tf::sin(static_cast<T>(w)) * w);
  loss.backward(std::nullopt, {.retain_graph = true});
  const tf::Tensor once = w.grad().value().clone();
  loss.backward();
  for (std::int64_t i = 0; i < 3; ++i) EXPECT_DOUBLE_EQ(at(w.grad().value(), i).real(), 2 * at(once, i).real());
  // d/dw sum(sin(w) w) = cos(w) w + sin(w)
  for (std::int64_t i = 0; i < 3; ++i) {
    const double v = static_cast<double>(i + 1);
    EXPECT_NEAR(at(once, i).real(), std::cos(v) * v + std::sin(v), 1e-15);
  }
  EXPECT_THAT(error_of([&] { loss.backward(); }), HasSubstr("freed by an earlier backward()"));
  w.zero_grad();
  EXPECT_FALSE(w.grad().defined());
  // New operations after a backward() record into a fresh trace: the leaf binds again.
  E again = tf::sum(static_cast<T>(w) * w);
  again.backward();
  for (std::int64_t i = 0; i < 3; ++i) EXPECT_DOUBLE_EQ(at(w.grad().value(), i).real(), 2.0 * static_cast<double>(i + 1));
}

TEST(Eager, NoGradAndDetachStopGradients) {
  E w(tf::Tensor::from(std::vector<double>{0.5, -1.0}, {2}), true);
  E frozen;
  {
    tf::NoGrad scope;
    EXPECT_FALSE(tf::grad_enabled());
    frozen = tf::exp(static_cast<T>(w));
    EXPECT_FALSE(frozen.requires_grad());
  }
  EXPECT_TRUE(tf::grad_enabled());
  E loss = tf::sum(frozen * w + w.detach() * w);
  loss.backward();
  // d/dw (exp(w)_frozen w + w_detached w) = exp(w) + w
  EXPECT_NEAR(at(w.grad().value(), 0).real(), std::exp(0.5) + 0.5, 1e-15);
  EXPECT_NEAR(at(w.grad().value(), 1).real(), std::exp(-1.0) - 1.0, 1e-15);
  EXPECT_THAT(error_of([&] { frozen.backward(); }), HasSubstr("does not require grad"));
  // The same operation on the same values, inside NoGrad and outside: only the second has grad.
  E h = tf::exp(static_cast<T>(w));
  {
    tf::NoGrad scope;
    EXPECT_FALSE(E(static_cast<T>(h) * 2.0).requires_grad());
  }
  EXPECT_TRUE(E(static_cast<T>(h) * 2.0).requires_grad());
  E plain(tf::Tensor::ones({2}));
  EXPECT_THAT(error_of([&] { E(tf::sum(static_cast<T>(plain) * 2.0)).backward(); }), HasSubstr("does not require grad"));
}

TEST(Eager, NonScalarOutputsTakeACotangent) {
  std::mt19937_64 rng(9);
  const tf::Tensor a0 = random_matrix(rng, {2, 3}, tf::DType::F64), ct = random_matrix(rng, {2, 2}, tf::DType::F64);
  auto f = [](T a) { return tf::matmul(a, tf::transpose(tf::sin(a))); };
  E a(a0, true);
  E y = f(a);
  EXPECT_THAT(error_of([&] { y.backward(); }), HasSubstr("not a real scalar"));
  EXPECT_THAT(error_of([&] { y.backward(tf::Tensor::ones({2, 3})); }), HasSubstr("expected one of the tensor's type"));
  y.backward(ct);
  auto [value, grads] = tf::vjp(f, {a0}, ct);
  expect_near(y.value(), value);
  expect_near(a.grad().value(), grads[0]);
}

// create_graph: the gradient is itself an eager tensor; the gradient of <grad, v> is H v.
TEST(Eager, CreateGraphGivesHessianVectorProducts) {
  std::mt19937_64 rng(11);
  const tf::Tensor w0 = random_matrix(rng, {3}, tf::DType::F64), v0 = random_matrix(rng, {3}, tf::DType::F64);
  auto f = [](T w) { return tf::sum(tf::exp(w) * tf::sin(w)) + tf::sum(w * w * w); };
  E w(w0, true);
  E(f(w)).backward(std::nullopt, {.create_graph = true});
  E g = w.grad();
  EXPECT_TRUE(g.requires_grad());
  expect_near(g.value(), tf::grad(f)(w0));
  w.zero_grad();
  E(tf::sum(static_cast<T>(g) * static_cast<T>(E(v0)))).backward();
  expect_near(w.grad().value(), tf::hvp(f, {w0}, {v0})[0]);
}

TEST(Eager, AnMLPTrainedEagerlyReachesTheTracedLosses) {
  std::mt19937_64 rng(13);
  const tf::Tensor x0 = random_matrix(rng, {8, 5}, tf::DType::F64);
  const tf::Tensor labels = tf::Tensor::from(std::vector<double>{1, 0, 0, 1, 0, 1, 1, 0, 0, 1, 1, 0, 0, 1, 1, 0}, {8, 2});
  auto loss_of = [](T w1, T w2, T x, T y) { return tf::cross_entropy(tf::matmul(tf::tanh(tf::matmul(x, w1)), w2), y); };
  tf::Tensor w1 = random_matrix(rng, {5, 4}, tf::DType::F64), w2 = random_matrix(rng, {4, 2}, tf::DType::F64);
  E e1(w1, true), e2(w2, true);
  const double lr = 0.5;
  auto step = tf::value_and_grad(loss_of, std::vector<std::size_t>{0, 1});
  for (int it = 0; it < 5; ++it) {
    auto [traced_loss, grads] = step(w1, w2, x0, labels);
    E loss = loss_of(e1, e2, E(x0), E(labels));
    expect_near(loss.value(), traced_loss, 1e-13);
    loss.backward();
    expect_near(e1.grad().value(), grads[0], 1e-13);
    w1 = tf::test::run([&](const std::vector<T>& v) { return std::vector<T>{v[0] - v[1] * lr}; }, {w1, grads[0]})[0];
    w2 = tf::test::run([&](const std::vector<T>& v) { return std::vector<T>{v[0] - v[1] * lr}; }, {w2, grads[1]})[0];
    {
      tf::NoGrad scope;
      e1 = E(E(e1 - static_cast<T>(e1.grad()) * lr).value(), true);
      e2 = E(E(e2 - static_cast<T>(e2.grad()) * lr).value(), true);
    }
  }
  expect_near(e1.value(), w1, 1e-12);
  expect_near(e2.value(), w2, 1e-12);
}

TEST(Eager, IndependentComputationsOnSeveralThreads) {
  std::mt19937_64 rng(17);
  const tf::Tensor w0 = random_matrix(rng, {3, 2}, tf::DType::F64), x0 = random_matrix(rng, {4, 3}, tf::DType::F64);
  const tf::Tensor expected = tf::grad(program)(w0, x0);
  std::vector<tf::Tensor> got(4);
  std::vector<std::thread> threads;
  for (std::size_t t = 0; t < got.size(); ++t) {
    threads.emplace_back([&, t] {
      for (int rep = 0; rep < 20; ++rep) {
        E w(w0, true);
        E(program(w, E(x0))).backward();
        got[t] = w.grad().value();
      }
    });
  }
  for (auto& th : threads) th.join();
  for (const tf::Tensor& g : got) expect_near(g, expected, 1e-14);
}

TEST(Eager, ErrorsNameTheMisuse) {
  E w(tf::Tensor::ones({2}), true);
  E h = tf::exp(static_cast<T>(w));
  std::string from_other_thread;
  std::thread([&] { from_other_thread = error_of([&] { E(tf::sum(static_cast<T>(h))).backward(); }); }).join();
  EXPECT_THAT(from_other_thread, HasSubstr("computed on another thread"));
  EXPECT_THROW(E(tf::Tensor::from(std::vector<std::int64_t>{1}, {1}), true), tf::DTypeError);
  EXPECT_THAT(error_of([&] { h.set_requires_grad(false); }), HasSubstr("only a leaf's requirement"));
  EXPECT_THAT(error_of([&] { tf::trace([](T x) { return T(E(x)); }, tf::Tensor::ones({1})); }),
              HasSubstr("value of a traced function"));
  EXPECT_THAT(error_of([&] { E().value(); }), HasSubstr("undefined"));
  // A value whose history an earlier backward() freed may still be used, but not differentiated through.
  E loss = tf::sum(static_cast<T>(h));
  loss.backward();
  E later = tf::sum(static_cast<T>(h) * w);
  EXPECT_THAT(error_of([&] { later.backward(); }), HasSubstr("an earlier backward() freed"));
  // Shape errors are the traced API's.
  EXPECT_THROW(E(tf::matmul(static_cast<T>(w), static_cast<T>(E(tf::Tensor::ones({3, 3}))))), tf::ShapeError);
}

// Implicit solvers and loops whose bodies compute with eager values they close over: the body is
// traced more than once (a while_loop's condition and body share one capture list), so operations
// on those values must be staged into the body, not run anew per trace. The root and its
// derivative against the closed forms of x^3 + x = a (dx/da = 1 / (3x^2 + 1)) and of
// x = a cos(x) (dx/da = cos x / (1 + a sin x)).
TEST(Eager, ImplicitSolversAndLoopsOnEagerValues) {
  E a(tf::Tensor::scalar(3.0), true);
  E x0(tf::Tensor::scalar(1.0));
  E r = tf::root([](const tf::TracedList& x, const tf::TracedList& p) { return tf::TracedList{x[0] * x[0] * x[0] + x[0] - p[0]}; },
                 {static_cast<T>(x0)}, {static_cast<T>(a)}, {})[0];
  const double x = at(r.value(), 0).real();
  EXPECT_NEAR(x * x * x + x, 3.0, 1e-12);
  r.backward();
  EXPECT_NEAR(at(a.grad().value(), 0).real(), 1.0 / (3 * x * x + 1), 1e-12);

  E b(tf::Tensor::scalar(0.8), true);
  E f = tf::fixed_point([](const tf::TracedList& y, const tf::TracedList& p) { return tf::TracedList{p[0] * tf::cos(y[0])}; },
                        {static_cast<T>(E(tf::Tensor::scalar(0.5)))}, {static_cast<T>(b)}, {})[0];
  const double y = at(f.value(), 0).real();
  EXPECT_NEAR(y, 0.8 * std::cos(y), 1e-12);
  f.backward();
  EXPECT_NEAR(at(b.grad().value(), 0).real(), std::cos(y) / (1 + 0.8 * std::sin(y)), 1e-10);

  // A while_loop whose condition and body both use a closed-over eager value (and arithmetic on it).
  E limit(tf::Tensor::scalar(10.0));
  const T lim = limit;
  E w = tf::while_loop([&](const tf::TracedList& c) { return tf::lt(tf::sum(c[0]), lim * 1.0); },
                       [&](const tf::TracedList& c) { return tf::TracedList{c[0] * (lim / 5.0)}; },
                       {static_cast<T>(E(tf::Tensor::scalar(1.0)))})[0];
  EXPECT_EQ(at(w.value(), 0).real(), 16.0);
}
