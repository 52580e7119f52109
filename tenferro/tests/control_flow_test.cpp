// Control flow: scan, fori_loop, cond/switch_case, while_loop and map. Values against loops written
// here in plain C++, derivatives against closed forms, against the same program unrolled (a
// different graph: no control-flow op), and check_grads to order 2 (finite differences and the
// adjoint identity, forward and reverse at every level) in f64 and c128; bodies traced once
// whatever the trip count; printed IR of a nested scan; errors.
#include <gmock/gmock.h>

#include <cmath>
#include <cstring>

#include "golden_files.hpp"
#include "linalg_test_util.hpp"
#include "tenferro/control_flow.hpp"
#include "tenferro/program.hpp"

namespace tf = tenferro;
using namespace tenferro::test;
using tf::TracedList;
using ::testing::HasSubstr;

namespace {
tf::Tensor vec(std::vector<double> v, tf::Shape shape) { return tf::Tensor::from(v, std::move(shape)); }
tf::Tensor scalar(double v) { return tf::Tensor::scalar(v); }

/// Element by element within tol (relative to 1 + |expected|).
::testing::AssertionResult near(const tf::Tensor& actual, const tf::Tensor& expected, double tol) {
  if (actual.type() != expected.type()) {
    return ::testing::AssertionFailure() << actual.type().to_string() << " vs " << expected.type().to_string();
  }
  for (std::int64_t i = 0; i < actual.numel(); ++i) {
    if (!(std::abs(at(actual, i) - at(expected, i)) <= tol * (1 + std::abs(at(expected, i))))) {
      return ::testing::AssertionFailure() << "element " << i << ": " << at(actual, i) << " vs " << at(expected, i);
    }
  }
  return ::testing::AssertionSuccess();
}

/// c <- c * x_t + sin(c), y_t = c^2 (the carry the step starts from).
std::pair<TracedList, TracedList> recurrence(const TracedList& c, const TracedList& x) {
  return {TracedList{c[0] * x[0] + tf::sin(c[0])}, TracedList{c[0] * c[0]}};
}
}  // namespace

TEST(Scan, RecurrenceMatchesALoopInBothDirections) {
  const std::vector<double> xs = {0.3, -0.5, 0.8, 0.1, -0.2};
  for (bool reverse : {false, true}) {
    SCOPED_TRACE(reverse ? "reverse" : "forward");
    const auto out = run([&](const std::vector<T>& a) {
      auto [c, ys] = tf::scan(recurrence, {a[0]}, {a[1]}, {.reverse = reverse});
      return std::vector<T>{c[0], ys[0]};
    }, {scalar(0.7), vec(xs, {5})});
    double c = 0.7;
    std::vector<double> ys(5);
    for (int s = 0; s < 5; ++s) {
      const int t = reverse ? 4 - s : s;
      ys[static_cast<std::size_t>(t)] = c * c;
      c = c * xs[static_cast<std::size_t>(t)] + std::sin(c);
    }
    EXPECT_NEAR(out[0].item<double>(), c, 1e-15);
    ASSERT_EQ(out[1].shape(), tf::Shape{5});
    for (int t = 0; t < 5; ++t) EXPECT_NEAR(at(out[1], t).real(), ys[static_cast<std::size_t>(t)], 1e-15);
  }
}

TEST(Scan, GradientEqualsTheUnrolledLoops) {
  // The same recurrence as one scan op and as five copies of its body: two different graphs.
  const std::vector<tf::Tensor> args = {scalar(0.7), vec({0.3, -0.5, 0.8, 0.1, -0.2}, {5})};
  auto scanned = [](T c0, T xs) {
    auto [c, ys] = tf::scan(recurrence, {c0}, {xs});
    return c[0] * c[0] + tf::sum(ys[0] * xs);
  };
  auto unrolled = [](T c0, T xs) {
    T c = c0, acc = c0 * 0.0;
    for (std::int64_t t = 0; t < 5; ++t) {
      const T x = tf::reshape(tf::slice(xs, {t}, {t + 1}), {});
      acc = acc + c * c * x;
      c = c * x + tf::sin(c);
    }
    return c * c + acc;
  };
  for (std::size_t arg : {0u, 1u}) {
    const auto [v1, g1] = tf::value_and_grad(scanned, arg)(args[0], args[1]);
    const auto [v2, g2] = tf::value_and_grad(unrolled, arg)(args[0], args[1]);
    EXPECT_NEAR(v1.item<double>(), v2.item<double>(), 1e-14);
    EXPECT_TRUE(near(g1, g2, 1e-13));
  }
  const tf::Tensor h1 = tf::hessian(scanned, 1)(args[0], args[1]);
  const tf::Tensor h2 = tf::hessian(unrolled, 1)(args[0], args[1]);
  EXPECT_TRUE(near(h1, h2, 1e-12));
}

TEST(Scan, SecondDerivativesInRealAndComplex) {
  std::mt19937_64 rng(3);
  for (tf::DType dt : {tf::DType::F64, tf::DType::C128}) {
    SCOPED_TRACE(tf::dtype_name(dt));
    const tf::Tensor c0 = random_matrix(rng, {3}, dt), xs = random_matrix(rng, {4, 3}, dt),
                     w0 = random_matrix(rng, {3, 3}, dt);
    // An RNN cell whose weight the body reads from the enclosing function (a captured const),
    // with stacked outputs, run forward and in reverse.
    expect_grads([](const std::vector<T>& a) {
      const T w = a[2];
      auto cell = [&](const TracedList& c, const TracedList& x) {
        const T next = tf::tanh(tf::matmul(w, c[0]) * 0.5 + x[0]);
        return std::pair{TracedList{next}, TracedList{c[0] * x[0]}};
      };
      auto [c, ys] = tf::scan(cell, {a[0]}, {a[1]});
      auto [cr, ysr] = tf::scan(cell, {a[0]}, {a[1] * a[1]}, {.reverse = true});
      return std::vector<T>{c[0], ys[0], cr[0] * ysr[0]};
    }, {c0, xs, w0});
  }
}

TEST(Scan, NestedScansDifferentiateToOrderTwo) {
  std::mt19937_64 rng(4);
  const tf::Tensor x = random_matrix(rng, {3, 2}, tf::DType::F64), p0 = random_matrix(rng, {2}, tf::DType::F64);
  // The inner body reads the outer body's carry and the function's argument p (two levels up).
  auto f = [](const std::vector<T>& a) {
    const T p = a[1];
    auto outer = [&](const TracedList& c, const TracedList& row) {
      auto inner = [&](const TracedList& d, const TracedList& xi) {
        return std::pair{TracedList{tf::sin(d[0] * xi[0]) + c[0] * p}, TracedList{}};
      };
      auto [d, unused] = tf::scan(inner, {c[0]}, {row[0]});
      return std::pair{TracedList{d[0] * 0.9}, TracedList{tf::sum(d[0])}};
    };
    auto [c, ys] = tf::scan(outer, {p}, {a[0]});
    return std::vector<T>{tf::sum(c[0]) + tf::sum(ys[0] * ys[0])};
  };
  expect_grads(f, {x, p0});
  // Against plain loops.
  const double pv[2] = {p0.data<double>()[0], p0.data<double>()[1]};
  double c[2] = {pv[0], pv[1]}, total = 0;
  for (int r = 0; r < 3; ++r) {
    double d[2] = {c[0], c[1]};
    for (int i = 0; i < 2; ++i) {
      const double xi = x.data<double>()[r * 2 + i];
      for (int k = 0; k < 2; ++k) d[k] = std::sin(d[k] * xi) + c[k] * pv[k];
    }
    total += (d[0] + d[1]) * (d[0] + d[1]);
    c[0] = d[0] * 0.9;
    c[1] = d[1] * 0.9;
  }
  total += c[0] + c[1];
  EXPECT_NEAR(run(f, {x, p0})[0].item<double>(), total, 1e-13);
}

TEST(Scan, NestedScanPrintsItsRegions) {
  // A scan over rows whose body scans the row, reading the outer carry and the function's
  // argument w; its gradient program holds the stacking scan, the linear scan and its transpose.
  auto f = [](T x, T w) {
    auto outer = [&](const TracedList& c, const TracedList& row) {
      auto inner = [&](const TracedList& d, const TracedList& xi) {
        return std::pair{TracedList{d[0] * xi[0] + w}, TracedList{}};
      };
      return std::pair{tf::scan(inner, {c[0]}, {row[0]}).first, TracedList{tf::sin(c[0])}};
    };
    auto [c, ys] = tf::scan(outer, {w}, {x});
    return c[0] + tf::sum(ys[0]);
  };
  const tf::Tensor x = vec({0.1, 0.2, 0.3, 0.4}, {2, 2}), w = scalar(0.5);
  EXPECT_TRUE(golden::matches(TENFERRO_GOLDEN_DIR, "nested_scan.txt", tf::trace(f, x, w).print()));
}

TEST(Scan, BodyIsTracedOnceWhateverTheLength) {
  for (std::int64_t n : {10, 10000}) {
    int calls = 0;
    auto f = [&](T x) {
      auto [last, ys] = tf::scan([&](const TracedList& c, const TracedList&) {
        ++calls;
        return std::pair{TracedList{c[0] * 0.999 + tf::sin(c[0]) * 0.001}, TracedList{}};
      }, {x}, {}, {.length = n});
      return last[0];
    };
    const auto [v, g] = tf::value_and_grad(f)(scalar(0.5));
    EXPECT_EQ(calls, 1) << n;
    // Against the loop and its derivative (product of the steps' derivatives).
    double c = 0.5, d = 1;
    for (std::int64_t t = 0; t < n; ++t) {
      d *= 0.999 + std::cos(c) * 0.001;
      c = c * 0.999 + std::sin(c) * 0.001;
    }
    EXPECT_NEAR(v.item<double>(), c, 1e-12);
    EXPECT_NEAR(g.item<double>(), d, 1e-12);
  }
}

TEST(Scan, EqualLoopsShareOneKey) {
  auto body = [](const TracedList& c, const TracedList& x) { return std::pair{TracedList{c[0] + x[0]}, TracedList{}}; };
  const auto g = tf::detail::trace_function([&](const std::vector<T>& a) {
    return std::vector<T>{tf::scan(body, {a[0]}, {a[1]}).first[0], tf::scan(body, {a[0]}, {a[1]}).first[0]};
  }, {tf::TensorType{tf::DType::F64, {}}, tf::TensorType{tf::DType::F64, {4}}});
  // Hash-consing: the second scan is the first one (same body structure, same operands).
  EXPECT_EQ(g->operations().size(), 1u);
  EXPECT_EQ(g->output_keys()[0], g->output_keys()[1]);
}

TEST(ForiLoop, MatchesALoopAndDifferentiates) {
  auto f = [](T x, T a) {
    return tf::fori_loop(2, 7, [&](const T& i, const TracedList& c) {
      return TracedList{c[0] * a + tf::astype(i, tf::DType::F64)};
    }, {x})[0];
  };
  const auto [v, g] = tf::value_and_grad(f, 1)(scalar(0.5), scalar(0.9));
  double c = 0.5, dc = 0;
  for (int i = 2; i < 7; ++i) {
    dc = dc * 0.9 + c;
    c = c * 0.9 + i;
  }
  EXPECT_NEAR(v.item<double>(), c, 1e-14);
  EXPECT_NEAR(g.item<double>(), dc, 1e-13);
  expect_grads([&](const std::vector<T>& a) { return std::vector<T>{f(a[0], a[1])}; }, {scalar(0.5), scalar(0.9)});
}

TEST(Cond, RunsTheChosenBranchAndDifferentiatesThroughIt) {
  auto branches = [](T x, T y) {
    const T pred = tf::gt(tf::sum(x), y * 0.0);
    return tf::cond(pred, [](const TracedList& o) { return TracedList{tf::sin(o[0]) * o[1]}; },
                    [](const TracedList& o) { return TracedList{o[0] * o[0] - o[1]}; }, {x, y})[0];
  };
  auto f = [&](T x, T y) { return tf::sum(branches(x, y)); };
  const tf::Tensor xp = vec({0.4, 0.3}, {2}), xn = vec({-0.4, 0.1}, {2}), y = scalar(1.5);
  auto values = [&](const tf::Tensor& x) {
    return run([&](const std::vector<T>& a) { return std::vector<T>{branches(a[0], a[1])}; }, {x, y})[0];
  };
  const tf::Tensor vp = values(xp), vn = values(xn);
  const tf::Tensor gp = tf::grad(f)(xp, y), gn = tf::grad(f)(xn, y);
  for (int i = 0; i < 2; ++i) {
    const double a = xp.data<double>()[i], b = xn.data<double>()[i];
    EXPECT_NEAR(at(vp, i).real(), std::sin(a) * 1.5, 1e-15);
    EXPECT_NEAR(at(gp, i).real(), std::cos(a) * 1.5, 1e-15);
    EXPECT_NEAR(at(vn, i).real(), b * b - 1.5, 1e-15);
    EXPECT_NEAR(at(gn, i).real(), 2 * b, 1e-15);
  }
  for (tf::DType dt : {tf::DType::F64, tf::DType::C128}) {
    SCOPED_TRACE(tf::dtype_name(dt));
    std::mt19937_64 rng(6);
    const tf::Tensor x = random_matrix(rng, {3}, dt), z = random_matrix(rng, {3}, dt);
    for (std::int64_t branch : {0, 1, 2, 7}) {  // 7 clamps to the last branch
      expect_grads([branch](const std::vector<T>& a) {
        const T index = tf::constant(a[0], tf::Tensor::from(std::vector<std::int64_t>{branch}, {}));
        const T w = a[1];  // read by the branches from the enclosing function
        return tf::switch_case(index, {[&](const TracedList& o) { return TracedList{tf::exp(o[0]) * w}; },
                                       [&](const TracedList& o) { return TracedList{o[0] * o[0]}; },
                                       [&](const TracedList&) { return TracedList{w * w * w}; }},
                               {a[0]});
      }, {x, z});
    }
  }
}

TEST(WhileLoop, NewtonIterationForwardAndBoundedReverse) {
  // Newton's iteration for sqrt(a) from x0 = a, until |x^2 - a| < 1e-13: d sqrt(a) / da = 1 / (2 sqrt(a)).
  auto newton = [](std::optional<std::int64_t> max_trips) {
    return [max_trips](T a) {
      return tf::while_loop([&](const TracedList& c) { return tf::gt(tf::abs(c[0] * c[0] - a), c[0] * 0.0 + 1e-13); },
                            [&](const TracedList& c) { return TracedList{(c[0] + a / c[0]) * 0.5}; }, {a},
                            {.max_trips = max_trips})[0];
    };
  };
  const tf::Tensor a = scalar(2.0);
  const auto [v, dv] = tf::jvp(newton(std::nullopt), {a}, {scalar(1.0)});
  EXPECT_NEAR(v.item<double>(), std::sqrt(2.0), 1e-15);
  // The iteration's own derivative (not the implicit one): it converges to it quadratically.
  EXPECT_NEAR(dv.item<double>(), 0.5 / std::sqrt(2.0), 1e-12);
  try {
    tf::grad(newton(std::nullopt))(a);
    FAIL() << "expected ADRuleError";
  } catch (const tidu::ADRuleError& e) {
    EXPECT_THAT(e.what(), HasSubstr("while_loop"));
    EXPECT_THAT(e.what(), HasSubstr("max_trips"));
  }
  const auto [vb, gb] = tf::value_and_grad(newton(50))(a);
  EXPECT_NEAR(vb.item<double>(), std::sqrt(2.0), 1e-15);
  EXPECT_NEAR(gb.item<double>(), 0.5 / std::sqrt(2.0), 1e-12);
  expect_grads([&](const std::vector<T>& x) { return std::vector<T>{newton(30)(x[0] * x[0] + 1.0)}; }, {scalar(0.8)});
}

TEST(WhileLoop, FixedPointOfScaledCosineAndItsDerivative) {
  // x <- a cos(x) from 0.5 until the step is below 1e-12; at the fixed point x* = a cos(x*),
  // dx*/da = cos(x*) / (1 + a sin(x*)).
  auto fixed_point = [](T a) {
    auto out = tf::while_loop(
        [&](const TracedList& c) { return tf::gt(tf::abs(c[0] - c[1]), c[0] * 0.0 + 1e-12); },
        [&](const TracedList& c) { return TracedList{a * tf::cos(c[0]), c[0]}; },
        {tf::full_like(a, 0.5), tf::full_like(a, 10.0)}, {.max_trips = 200});
    return out[0];
  };
  const auto [x, g] = tf::value_and_grad(fixed_point)(scalar(0.8));
  const double xs = x.item<double>();
  EXPECT_NEAR(xs, 0.8 * std::cos(xs), 1e-11);
  EXPECT_NEAR(g.item<double>(), std::cos(xs) / (1 + 0.8 * std::sin(xs)), 1e-9);
  const auto [x2, t2] = tf::jvp([&](T a) {
    return tf::while_loop([&](const TracedList& c) { return tf::gt(tf::abs(c[0] - c[1]), c[0] * 0.0 + 1e-12); },
                          [&](const TracedList& c) { return TracedList{a * tf::cos(c[0]), c[0]}; },
                          {tf::full_like(a, 0.5), tf::full_like(a, 10.0)})[0];
  }, {scalar(0.8)}, {scalar(1.0)});
  EXPECT_NEAR(x2.item<double>(), xs, 1e-15);
  EXPECT_NEAR(t2.item<double>(), g.item<double>(), 1e-12);
}

TEST(ControlFlow, RunsEagerlyAndBackwardMatchesGrad) {
  // The same function as a traced gradient and as eager operations with backward(): a scan whose
  // body reads an eager leaf (captured), then a cond.
  auto f = [](T c0, T xs, T w) {
    auto [c, ys] = tf::scan([&](const TracedList& carry, const TracedList& x) {
      // w (an eager leaf in the eager run) as the first operand: captured, not unified.
      return std::pair{TracedList{tf::sin(w * carry[0]) + x[0]}, TracedList{carry[0] * x[0]}};
    }, {c0}, {xs});
    const T pick = tf::cond(tf::gt(c[0], c[0] * 0.0 - 10.0), [](const TracedList& o) { return TracedList{o[0] * o[0]}; },
                            [](const TracedList& o) { return o; }, {c[0]})[0];
    return pick + tf::sum(ys[0]);
  };
  const tf::Tensor c0 = scalar(0.4), xs = vec({0.1, -0.3, 0.7}, {3}), w = scalar(1.3);
  const tf::Tensors expected = tf::value_and_grad(f, {0, 1, 2})(c0, xs, w).second;
  tf::EagerTensor ec(c0, true), ex(xs, true), ew(w, true);
  tf::EagerTensor loss = f(ec, ex, ew);
  EXPECT_NEAR(loss.value().item<double>(), tf::trace(f, c0, xs, w).run({c0, xs, w})[0].item<double>(), 1e-15);
  loss.backward();
  EXPECT_TRUE(near(ec.grad().value(), expected[0], 1e-15));
  EXPECT_TRUE(near(ex.grad().value(), expected[1], 1e-15));
  EXPECT_TRUE(near(ew.grad().value(), expected[2], 1e-15));
}

TEST(FixedPoint, ImplicitDerivativeOfScaledCosine) {
  // x* = a cos(x*): dx*/da = cos(x*) / (1 + a sin(x*)), independent of the iterations. tol = 0
  // iterates until a step moves nothing (or 200 steps), so x* is exact to rounding and the closed
  // form can be compared at 1e-13.
  auto solve = [](T a) {
    auto map = [](const TracedList& x, const TracedList& p) { return TracedList{p[0] * tf::cos(x[0])}; };
    return tf::fixed_point(map, {tf::full_like(a, 0.5)}, {a}, {.tol = 0, .max_iter = 200})[0];
  };
  const auto [x, g] = tf::value_and_grad(solve)(scalar(0.8));
  const double xs = x.item<double>();
  EXPECT_NEAR(xs, 0.8 * std::cos(xs), 1e-15);
  EXPECT_NEAR(g.item<double>(), std::cos(xs) / (1 + 0.8 * std::sin(xs)), 1e-13);
  // Forward mode agrees; the second derivative against the closed form's derivative,
  // d/da [cos x / (1 + a sin x)] with x' = dx*/da, by central differences of the closed form.
  const auto [x2, t2] = tf::jvp(solve, {scalar(0.8)}, {scalar(1.0)});
  EXPECT_EQ(x2.item<double>(), xs);
  EXPECT_NEAR(t2.item<double>(), g.item<double>(), 1e-13);
  auto closed = [](double a) {
    double y = 0.5;
    for (int k = 0; k < 2000; ++k) y = a * std::cos(y);
    return std::cos(y) / (1 + a * std::sin(y));
  };
  const double h = 1e-5, second = (closed(0.8 + h) - closed(0.8 - h)) / (2 * h);
  EXPECT_NEAR(tf::hessian(solve)(scalar(0.8)).item<double>(), second, 1e-8);
}

TEST(FixedPoint, VectorProblemAgainstUnrolledIterationsAndFiniteDifferences) {
  // x* = tanh(W x* + b), a contraction for small W; the gradient of sum(x* * x*) against the
  // gradient through 300 unrolled iterations (converged), and check_grads to order 2.
  std::mt19937_64 rng(8);
  const tf::Tensor w = random_matrix(rng, {3, 3}, tf::DType::F64), b = random_matrix(rng, {3}, tf::DType::F64);
  auto map = [](const TracedList& x, const TracedList& p) {
    return TracedList{tf::tanh(tf::matmul(p[0], x[0]) * 0.4 + p[1])};
  };
  auto implicit = [&](T wt, T bt) {
    const T x = tf::fixed_point(map, {bt * 0.0}, {wt, bt}, {.tol = 0, .max_iter = 400})[0];
    return tf::sum(x * x);
  };
  auto unrolled = [&](T wt, T bt) {
    TracedList x{bt * 0.0};
    for (int k = 0; k < 300; ++k) x = map(x, {wt, bt});
    return tf::sum(x[0] * x[0]);
  };
  for (std::size_t arg : {0u, 1u}) {
    const tf::Tensor g1 = tf::grad(implicit, arg)(w, b), g2 = tf::grad(unrolled, arg)(w, b);
    EXPECT_TRUE(near(g1, g2, 1e-12));
  }
  expect_grads([&](const std::vector<T>& a) { return std::vector<T>{implicit(a[0], a[1])}; }, {w, b});
}

// A value the map reads from the enclosing function (captured, not passed as a parameter) is
// differentiated exactly as a parameter: once got twice its forward derivative (through the
// iterations and through the attached step) and reverse mode threw while_loop's max_trips error.
TEST(FixedPoint, CapturedValuesAreDifferentiatedAsParameters) {
  auto captured = [](T a) {
    auto map = [a](const TracedList& x, const TracedList&) { return TracedList{a * tf::cos(x[0])}; };
    return tf::fixed_point(map, {tf::full_like(a, 0.5)}, {}, {.tol = 0, .max_iter = 200})[0];
  };
  const tf::Tensor a = scalar(0.8);
  const auto [x, g] = tf::value_and_grad(captured)(a);
  const double xs = x.item<double>(), want = std::cos(xs) / (1 + 0.8 * std::sin(xs));  // dx*/da
  EXPECT_NEAR(xs, 0.8 * std::cos(xs), 1e-15);
  EXPECT_NEAR(g.item<double>(), want, 1e-13);
  EXPECT_NEAR(tf::jvp(captured, {a}, {scalar(1.0)}).second.item<double>(), want, 1e-13);
  // Captured and passed at once: the derivative is the sum of both paths. And to second order
  // against finite differences.
  auto both = [](T s) {
    auto map = [s](const TracedList& v, const TracedList& p) { return TracedList{s * p[0] * tf::cos(v[0])}; };
    return tf::fixed_point(map, {tf::full_like(s, 0.5)}, {s}, {.tol = 0, .max_iter = 300})[0];
  };
  const double xb = tf::grad(both)(scalar(0.8)).item<double>();
  // x* = a^2 cos x*: dx*/da = 2 a cos x* / (1 + a^2 sin x*), with x* iterated here in doubles.
  double y = 0.5;
  for (int k = 0; k < 3000; ++k) y = 0.64 * std::cos(y);
  EXPECT_NEAR(xb, 2 * 0.8 * std::cos(y) / (1 + 0.64 * std::sin(y)), 1e-12);
  expect_grads([&](const std::vector<T>& v) { return std::vector<T>{captured(v[0])}; }, {a});
}

TEST(Root, CapturedValuesAreDifferentiatedAsParameters) {
  // x^3 + p x - q = 0 with p and q captured: dx/dq = 1 / (3x^2 + p), dx/dp = -x / (3x^2 + p).
  auto solve = [](T p, T q) {
    auto g = [p, q](const TracedList& x, const TracedList&) { return TracedList{x[0] * x[0] * x[0] + p * x[0] - q}; };
    return tf::root(g, {tf::full_like(p, 1.0)}, {})[0];
  };
  const tf::Tensor p = scalar(2.0), q = scalar(5.0);
  const auto [x, gp] = tf::value_and_grad(solve, 0)(p, q);
  const double xs = x.item<double>(), d = 3 * xs * xs + 2.0;
  EXPECT_NEAR(xs * xs * xs + 2.0 * xs - 5.0, 0.0, 1e-13);
  EXPECT_NEAR(gp.item<double>(), -xs / d, 1e-14);
  EXPECT_NEAR(tf::grad(solve, 1)(p, q).item<double>(), 1 / d, 1e-14);
  EXPECT_NEAR(tf::jvp(solve, {p, q}, {scalar(0.0), scalar(1.0)}).second.item<double>(), 1 / d, 1e-14);
  EXPECT_NEAR(tf::jvp(solve, {p, q}, {scalar(1.0), scalar(0.0)}).second.item<double>(), -xs / d, 1e-14);
  expect_grads([&](const std::vector<T>& a) { return std::vector<T>{solve(a[0] * a[0] + 1.0, a[1])}; }, {scalar(0.9), q});
}

TEST(Root, NewtonWithImplicitDerivatives) {
  // x^3 + p x - q = 0 (one real root for p > 0): dx/dq = 1 / (3x^2 + p), dx/dp = -x / (3x^2 + p).
  auto solve = [](T p, T q) {
    auto g = [](const TracedList& x, const TracedList& a) { return TracedList{x[0] * x[0] * x[0] + a[0] * x[0] - a[1]}; };
    return tf::root(g, {tf::full_like(p, 1.0)}, {p, q})[0];
  };
  const tf::Tensor p = scalar(2.0), q = scalar(5.0);
  const auto [x, gp] = tf::value_and_grad(solve, 0)(p, q);
  const tf::Tensor gq = tf::grad(solve, 1)(p, q);
  const double xs = x.item<double>(), d = 3 * xs * xs + 2.0;
  EXPECT_NEAR(xs * xs * xs + 2.0 * xs - 5.0, 0.0, 1e-13);
  EXPECT_NEAR(gq.item<double>(), 1 / d, 1e-14);
  EXPECT_NEAR(gp.item<double>(), -xs / d, 1e-14);
  // Second derivatives (two derivative steps) against finite differences; a two-unknown system.
  expect_grads([&](const std::vector<T>& a) { return std::vector<T>{solve(a[0] * a[0] + 1.0, a[1])}; }, {scalar(0.9), q});
  auto circle = [](const std::vector<T>& a) {
    // x^2 + y^2 = r^2, y = s x (x > 0): x = r / sqrt(1 + s^2).
    auto g = [](const TracedList& v, const TracedList& k) {
      const T xy = v[0];
      const T x0 = tf::reshape(tf::slice(xy, {0}, {1}), {}), y0 = tf::reshape(tf::slice(xy, {1}, {2}), {});
      return TracedList{tf::stack({x0 * x0 + y0 * y0 - k[0] * k[0], y0 - k[1] * x0})};
    };
    return std::vector<T>{tf::root(g, {tf::constant(a[0], vec({1.0, 1.0}, {2}))}, {a[0], a[1]})[0]};
  };
  const tf::Tensor r = scalar(2.0), s = scalar(0.5);
  const tf::Tensor xy = run(circle, {r, s})[0];
  EXPECT_NEAR(at(xy, 0).real(), 2.0 / std::sqrt(1.25), 1e-14);
  EXPECT_NEAR(at(xy, 1).real(), 1.0 / std::sqrt(1.25), 1e-14);
  expect_grads(circle, {r, s});
}

TEST(ControlFlow, BadInputGivesTypedErrors) {
  const tf::Tensor x = vec({1, 2, 3}, {3});
  auto expect_message = [](auto&& call, const char* text) {
    try {
      call();
      ADD_FAILURE() << "expected an error containing " << text;
    } catch (const tf::Error& e) {
      EXPECT_THAT(e.what(), HasSubstr(text));
    }
  };
  // A body that changes the carry's shape.
  EXPECT_THROW(tf::trace([](T a) {
    return tf::scan([](const TracedList& c, const TracedList&) { return std::pair{TracedList{tf::sum(c[0])}, TracedList{}}; },
                    {a}, {}, {.length = 2}).first[0];
  }, x), tf::ShapeError);
  expect_message([&] {
    tf::trace([](T a) {
      return tf::scan([](const TracedList& c, const TracedList&) { return std::pair{TracedList{tf::astype(c[0], tf::DType::F32)}, TracedList{}}; },
                      {a}, {}, {.length = 2}).first[0];
    }, x);
  }, "f32[3]");
  // xs of a length other than the one given; a negative length; no length.
  EXPECT_THROW(tf::trace([](T a) { return tf::scan(recurrence, {tf::sum(a)}, {a}, {.length = 4}).first[0]; }, x), tf::ShapeError);
  EXPECT_THROW(tf::trace([](T a) { return tf::scan(recurrence, {a}, {}, {.length = -1}).first[0]; }, x), tf::ShapeError);
  EXPECT_THROW(tf::trace([](T a) { return tf::scan(recurrence, {a}, {}).first[0]; }, x), tf::ShapeError);
  EXPECT_THROW(tf::trace([](T a) { return tf::fori_loop(3, 1, [](const T&, const TracedList& c) { return c; }, {a})[0]; }, x),
               tf::ShapeError);
  // Branches whose results differ.
  expect_message([&] {
    tf::trace([](T a) {
      return tf::cond(tf::gt(tf::sum(a), tf::sum(a) * 0.0), [](const TracedList& o) { return o; },
                      [](const TracedList& o) { return TracedList{tf::sum(o[0])}; }, {a})[0];
    }, x);
  }, "every branch must return the same types");
  EXPECT_THROW(tf::trace([](T a) { return tf::cond(a, [](const TracedList& o) { return o; }, [](const TracedList& o) { return o; }, {a})[0]; }, x),
               tf::DTypeError);
  // A root problem that is not square; a fixed point without iterations.
  expect_message([&] {
    tf::trace([](T a) {
      return tf::root([](const TracedList& v, const TracedList&) { return TracedList{tf::sum(v[0])}; }, {a}, {})[0];
    }, x);
  }, "square system");
  EXPECT_THROW(tf::trace([](T a) {
    return tf::fixed_point([](const TracedList& v, const TracedList&) { return v; }, {a}, {}, {.max_iter = 0})[0];
  }, x), tf::ValueError);
  // A while_loop whose condition is not a bool scalar, whose body changes the carry.
  EXPECT_THROW(tf::trace([](T a) {
    return tf::while_loop([](const TracedList& c) { return c[0]; }, [](const TracedList& c) { return c; }, {a})[0];
  }, x), tf::DTypeError);
  EXPECT_THROW(tf::trace([](T a) {
    return tf::while_loop([](const TracedList& c) { return tf::gt(tf::sum(c[0]), tf::sum(c[0])); },
                          [](const TracedList& c) { return TracedList{c[0], c[0]}; }, {a})[0];
  }, x), tf::ShapeError);
}

namespace {
/// One step of the map tests: a row x_t, a scalar s_t and a matrix w the body captures.
TracedList map_step(const TracedList& x, const T& w) {
  return {tf::tanh(tf::matmul(w, x[0]) * 0.5) * x[1] + tf::sum(x[0] * x[0]), tf::sin(x[1]) * x[1]};
}
/// Example b of a batch (axis 0).
tf::Tensor example_of(const tf::Tensor& x, std::int64_t b) {
  tf::Tensor e(tf::TensorType{x.dtype(), tf::Shape(x.shape().begin() + 1, x.shape().end())});
  std::memcpy(e.raw_data(), static_cast<const char*>(x.raw_data()) + b * e.nbytes(), e.nbytes());
  return e;
}
/// The same program without a map op: every step written out, the results stacked.
std::vector<T> unrolled_map(const T& xs, const T& ss, const T& w) {
  std::vector<T> a, b;
  for (std::int64_t t = 0; t < xs.shape()[0]; ++t) {
    const TracedList r = map_step({xs[{t}], ss[{t}]}, w);
    a.push_back(r[0]);
    b.push_back(r[1]);
  }
  return {tf::stack(a), tf::stack(b)};
}
std::vector<T> map_program(const T& xs, const T& ss, const T& w) {
  const TracedList r = tf::map([&w](const TracedList& x) { return map_step(x, w); }, {xs, ss});
  return {r[0], r[1]};
}
}  // namespace

// map against the same steps unrolled (a different graph: no map op): values, gradients in every
// operand (w is captured: its cotangent sums over the steps) and the Hessian; then check_grads to
// order 2 in f64 and c128.
TEST(Map, ValuesAndDerivativesAreThoseOfTheUnrolledSteps) {
  std::mt19937_64 rng(41);
  const tf::Tensors args = {random_matrix(rng, {4, 3}, tf::DType::F64), random_matrix(rng, {4}, tf::DType::F64),
                            random_matrix(rng, {3, 3}, tf::DType::F64)};
  const auto got = tf::trace([](T xs, T ss, T w) { return map_program(xs, ss, w); }, args[0], args[1], args[2]).run(args);
  const auto want = tf::trace([](T xs, T ss, T w) { return unrolled_map(xs, ss, w); }, args[0], args[1], args[2]).run(args);
  ASSERT_EQ(got[0].shape(), (tf::Shape{4, 3}));
  EXPECT_TRUE(near(got[0], want[0], 1e-15));
  EXPECT_TRUE(near(got[1], want[1], 1e-15));
  auto loss = [](auto program) {
    return [program](T xs, T ss, T w) {
      const auto r = program(xs, ss, w);
      return tf::sum(r[0] * r[0]) + tf::sum(r[1]);
    };
  };
  const auto g1 = tf::value_and_grad(loss(map_program), {0, 1, 2})(args[0], args[1], args[2]).second;
  const auto g2 = tf::value_and_grad(loss(unrolled_map), {0, 1, 2})(args[0], args[1], args[2]).second;
  for (std::size_t i = 0; i < 3; ++i) EXPECT_TRUE(near(g1[i], g2[i], 1e-13)) << "operand " << i;
  EXPECT_TRUE(near(tf::hessian(loss(map_program), 2)(args[0], args[1], args[2]),
                   tf::hessian(loss(unrolled_map), 2)(args[0], args[1], args[2]), 1e-12));
  for (tf::DType dt : {tf::DType::F64, tf::DType::C128}) {
    SCOPED_TRACE(tf::dtype_name(dt));
    expect_grads([](const std::vector<T>& a) { return map_program(a[0], a[1], a[2]); },
                 {random_matrix(rng, {3, 2}, dt), random_matrix(rng, {3}, dt), random_matrix(rng, {2, 2}, dt)});
  }
}

// vmap of a map is one map (of the batched body), not a loop over the batch, and equals the map
// applied to each example.
TEST(Map, VmapOfAMapIsAMapOfTheBatchedBody) {
  std::mt19937_64 rng(42);
  const tf::Tensor xs = random_matrix(rng, {2, 4, 3}, tf::DType::F64), ss = random_matrix(rng, {4}, tf::DType::F64),
                   w = random_matrix(rng, {2, 3, 3}, tf::DType::F64);
  auto f = [&ss](T x, T wb) { return map_program(x, tf::constant(x, ss), wb)[0]; };
  const tf::Tensor batched = tf::vmap(f)(xs, w);
  for (std::int64_t b = 0; b < 2; ++b) {
    const tf::Tensor xb = example_of(xs, b), wb = example_of(w, b);
    EXPECT_TRUE(near(example_of(batched, b), tf::trace(f, xb, wb).run({xb, wb})[0], 1e-14)) << "example " << b;
  }
  const std::string printed = tf::trace([&](T x, T wb) { return tf::vmap(f)(x, wb); }, xs, w).print();
  EXPECT_THAT(printed, HasSubstr("map[length=4"));
  EXPECT_THAT(printed, ::testing::Not(HasSubstr("scan")));
}

TEST(Map, RunsEagerlyAndOnEmptyAxesAndRefusesBadOperands) {
  const tf::Tensor xs = vec({1, 2, 3, 4}, {2, 2}), ss = vec({0.5, -1}, {2}), w = vec({1, 0.5, -0.5, 2}, {2, 2});
  auto loss = [](T a, T b, T c) { return tf::sum(map_program(a, b, c)[0]); };
  const tf::Tensors expected = tf::value_and_grad(loss, {0, 1, 2})(xs, ss, w).second;
  tf::EagerTensor ex(xs, true), es(ss, true), ew(w, true);
  tf::EagerTensor l = loss(ex, es, ew);
  l.backward();
  EXPECT_TRUE(near(ex.grad().value(), expected[0], 1e-15));
  EXPECT_TRUE(near(es.grad().value(), expected[1], 1e-15));
  EXPECT_TRUE(near(ew.grad().value(), expected[2], 1e-15));
  // Length 0: results with a leading axis of 0, as a loop over no slices.
  const tf::Tensor none(tf::TensorType{tf::DType::F64, {0, 3}});
  const auto r = tf::trace([](T x) { return tf::map([](const TracedList& v) { return TracedList{v[0] * 2.0, tf::sum(v[0])}; }, {x}); },
                           none).run({none});
  EXPECT_EQ(r[0].shape(), (tf::Shape{0, 3}));
  EXPECT_EQ(r[1].shape(), (tf::Shape{0}));
  auto expect_message = [](auto&& call, const char* text) {
    try {
      call();
      ADD_FAILURE() << "expected an error containing " << text;
    } catch (const tf::ShapeError& e) {
      EXPECT_THAT(e.what(), HasSubstr(text));
    }
  };
  auto id = [](const TracedList& v) { return v; };
  expect_message([&] { tf::trace([&](T a, T b) { return tf::map(id, {a, b}); }, xs, vec({1, 2, 3}, {3})); },
                 "map: operand 1 is f64[3]; every mapped operand needs a leading axis of the map's length 2");
  expect_message([&] { tf::trace([&](T a) { return tf::map(id, {a}); }, scalar(1)); }, "map: operand 0 is f64[]");
  expect_message([&] { tf::trace([&](T a) { return tf::map(id, {}).at(0) + a; }, xs); }, "map: needs at least one operand");
}
