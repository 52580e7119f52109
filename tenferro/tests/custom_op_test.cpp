// Custom primitives and derivatives (tenferro/custom_op.hpp): ops registered outside the built-in
// set with traced JVP or transpose rules, a multi-output custom op, attributes in an op's identity,
// missing rules and bad calls, custom_jvp replacing a function's derivative, and the rule trace
// (tenferro/ops/rule.hpp) that custom and built-in rules are written in. Derivatives are
// checked against closed forms and with the AD test kit (finite differences and the adjoint
// identity, to order 2, forward and reverse).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "op_test_util.hpp"
#include "tenferro/tenferro.hpp"
#include "tenferro/ops/make.hpp"
#include "tenferro/program.hpp"
#include "tenferro/custom_op.hpp"
#include "tenferro/ops/rule.hpp"
#include "computegraph/printer.hpp"

namespace tf = tenferro;
using testing::HasSubstr;
using T = tf::Traced;

namespace {

tf::Tensor uniform(tf::Shape shape, tf::DType dtype, std::uint64_t seed) {
  return tf::test::random_tensor(tf::TensorType{dtype, std::move(shape)}, seed);
}

template <class F>
void expect_grads(F f, const std::vector<tf::Tensor>& args) {
  auto graph = tf::detail::trace_graph(f, tf::detail::types_of(args));
  auto result = tidu::testkit::check_grads(tidu::testkit::function_of(graph), std::span<const tf::Tensor>(args), 2);
  EXPECT_TRUE(result.ok) << result.message;
  EXPECT_FALSE(result.checks.empty());
}

/// z[i] = f(x[i]) for float and complex operands.
template <class F>
void map_inexact(const tf::Tensor& x, tf::Tensor& z, F f) {
  tf::visit_dtype(x.dtype(), [&](auto zero) {
    using E = decltype(zero);
    if constexpr (std::is_floating_point_v<E> || std::is_same_v<E, tf::c64> || std::is_same_v<E, tf::c128>) {
      for (std::int64_t i = 0; i < x.numel(); ++i) z.data<E>()[i] = f(x.data<E>()[i]);
    }
  });
}

std::vector<tf::TensorType> same_type(std::span<const tf::TensorType> in, const tf::OpAttrs&) {
  if (!tf::is_inexact(in[0].dtype)) throw tf::DTypeError("cube: operand " + in[0].to_string() + " must be float or complex");
  return {in[0]};
}

/// cube(x) = x^3: nonlinear, holomorphic; JVP 3 x^2 dx, written with traced ops.
const tf::OpDef& cube_op() {
  static const tf::OpDef& def = tf::register_op({
      .name = "cube",
      .operands = {tf::Linearity::Nonlinear},
      .elementwise = true,
      .shape_rule = same_type,
      .kernel = [](const tf::StdTensorOp& op, std::span<const tf::Tensor* const> in, std::span<tf::Tensor> out) {
        out[0] = tf::Tensor(op.out);
        map_inexact(*in[0], out[0], [](auto v) { return v * v * v; });
      },
      .jvp = tf::traced_jvp([](const tf::StdTensorOp&, std::span<const T> x, std::span<const T>, std::span<const T> t) {
        return std::vector<T>{t[0] * (x[0] * x[0]) * 3.0};
      }),
  });
  return def;
}
T cube(const T& x) { return tf::call(cube_op(), {x})[0]; }

/// The attribute of scaled_cumsum: its scale.
struct Scale {
  double value = 1;
  bool operator==(const Scale&) const = default;
  std::size_t hash() const { return std::hash<double>{}(value); }
  void print(std::ostream& os) const { os << "scale=" << value; }
};

/// scaled_cumsum(x) = s * cumsum(x) of a vector: linear, so it has a transpose rule (s L^T ct with
/// L the lower triangle of ones) and its JVP is itself (linear_jvp).
const tf::OpDef& scaled_cumsum_op() {
  static const tf::OpDef& def = tf::register_op({
      .name = "scaled_cumsum",
      .operands = {tf::Linearity::Linear},
      .shape_rule = [](std::span<const tf::TensorType> in, const tf::OpAttrs&) {
        if (in[0].rank() != 1) throw tf::ShapeError("scaled_cumsum: operand " + in[0].to_string() + " must be a vector");
        return std::vector<tf::TensorType>{in[0]};
      },
      .kernel = [](const tf::StdTensorOp& op, std::span<const tf::Tensor* const> in, std::span<tf::Tensor> out) {
        const double s = op.attrs.get<Scale>().value;
        out[0] = tf::Tensor(op.out);
        tf::visit_dtype(op.out.dtype, [&](auto zero) {
          using E = decltype(zero);
          if constexpr (std::is_same_v<E, double> || std::is_same_v<E, tf::c128>) {
            E acc{};
            for (std::int64_t i = 0; i < in[0]->numel(); ++i) {
              acc += in[0]->data<E>()[i];
              out[0].data<E>()[i] = acc * s;
            }
          }
        });
      },
      .jvp = tf::linear_jvp(),
      .transpose = tf::traced_transpose([](const tf::StdTensorOp& op, std::span<const std::optional<T>>,
                                           std::span<const T> ct) {
        const std::int64_t n = op.out.shape[0];
        std::vector<double> lower(static_cast<std::size_t>(n * n), 0.0);
        for (std::int64_t i = 0; i < n; ++i) {
          for (std::int64_t j = 0; j <= i; ++j) lower[static_cast<std::size_t>(i * n + j)] = op.attrs.get<Scale>().value;
        }
        T l = tf::astype(tf::constant(ct[0], tf::Tensor::from(lower, {n, n})), ct[0].dtype());
        return std::vector<std::optional<T>>{tf::matmul(ct[0], l)};  // ct^T (s L) = (s L^T ct)^T
      }),
  });
  return def;
}
T scaled_cumsum(const T& x, double s) { return tf::call(scaled_cumsum_op(), {x}, tf::OpAttrs(Scale{s}))[0]; }

/// sincos(x) = (sin x, cos x): two results; the JVP reads them (cos x dx, -sin x dx).
const tf::OpDef& sincos_op() {
  static const tf::OpDef& def = tf::register_op({
      .name = "sincos",
      .operands = {tf::Linearity::Nonlinear},
      .outputs = 2,
      .shape_rule = [](std::span<const tf::TensorType> in, const tf::OpAttrs&) {
        return std::vector<tf::TensorType>{in[0], in[0]};
      },
      .kernel = [](const tf::StdTensorOp& op, std::span<const tf::Tensor* const> in, std::span<tf::Tensor> out) {
        out[0] = tf::Tensor(op.out);
        out[1] = tf::Tensor(op.output_type(1));
        map_inexact(*in[0], out[0], [](auto v) { return std::sin(v); });
        map_inexact(*in[0], out[1], [](auto v) { return std::cos(v); });
      },
      .jvp = tf::traced_jvp([](const tf::StdTensorOp&, std::span<const T>, std::span<const T> y, std::span<const T> t) {
        return std::vector<T>{t[0] * y[1], -(t[0] * y[0])};
      }),
  });
  return def;
}

/// scale_pair(x) = (2x, -3x): linear with two results; its transpose takes one cotangent per
/// result (zeros where none flows) and returns 2 ct0 - 3 ct1.
const tf::OpDef& scale_pair_op() {
  static const tf::OpDef& def = tf::register_op({
      .name = "scale_pair",
      .operands = {tf::Linearity::Linear},
      .outputs = 2,
      .shape_rule = [](std::span<const tf::TensorType> in, const tf::OpAttrs&) {
        return std::vector<tf::TensorType>{in[0], in[0]};
      },
      .kernel = [](const tf::StdTensorOp& op, std::span<const tf::Tensor* const> in, std::span<tf::Tensor> out) {
        out[0] = tf::Tensor(op.out);
        out[1] = tf::Tensor(op.output_type(1));
        map_inexact(*in[0], out[0], [](auto v) { return v * decltype(v)(2); });
        map_inexact(*in[0], out[1], [](auto v) { return v * decltype(v)(-3); });
      },
      .jvp = tf::linear_jvp(),
      .transpose = tf::traced_transpose([](const tf::StdTensorOp&, std::span<const std::optional<T>>,
                                           std::span<const T> ct) {
        return std::vector<std::optional<T>>{ct[0] * 2.0 - ct[1] * 3.0};
      }),
  });
  return def;
}

}  // namespace

TEST(CustomOp, LinearMultiOutputOpTransposesWithAbsentCotangents) {
  const tf::Tensor x = tf::Tensor::from({1.0, -2.0});
  auto both = [](T a) {
    auto r = tf::call(scale_pair_op(), {a});
    return tf::sum(r[0] * r[0] + r[1]);  // 4 x^2 - 3 x
  };
  EXPECT_TRUE(tf::test::near(tf::grad(both)(x), tf::Tensor::from({5.0, -19.0}), 0.0));
  auto second = [](T a) { return tf::sum(tf::call(scale_pair_op(), {a})[1]); };  // only result 1
  EXPECT_TRUE(tf::test::near(tf::grad(second)(x), tf::Tensor::from({-3.0, -3.0}), 0.0));
  for (tf::DType d : {tf::DType::F64, tf::DType::C128}) {
    SCOPED_TRACE(tf::dtype_name(d));
    expect_grads([](T a, T b) {
      auto r = tf::call(scale_pair_op(), {a * b});
      return tf::real(tf::sum(r[0] * b + r[1] * r[0]));
    }, {uniform({3}, d, 8), uniform({3}, d, 9)});
  }
}

TEST(CustomOp, NonlinearOpWithTracedJvpHasBothModesToOrderTwo) {
  const tf::Tensor x = tf::Tensor::from({0.5, -1.5, 2.0});
  auto f = [](T a) { return tf::sum(cube(a)); };
  EXPECT_TRUE(tf::test::near(tf::trace(f, x).run({x})[0], tf::Tensor::scalar(0.125 - 3.375 + 8.0, tf::DType::F64), 1e-15));
  // Reverse mode comes from transposing the traced JVP: d/dx sum(x^3) = 3 x^2.
  EXPECT_TRUE(tf::test::near(tf::grad(f)(x), tf::Tensor::from({0.75, 6.75, 12.0}), 1e-15));
  // Second order: the Hessian is diag(6 x).
  const tf::Tensor h = tf::hessian(f)(x);
  for (std::int64_t i = 0; i < 3; ++i) EXPECT_NEAR(h.element(i * 4).real(), 6 * x.element(i).real(), 1e-14);
  for (tf::DType d : {tf::DType::F64, tf::DType::C128}) {
    SCOPED_TRACE(tf::dtype_name(d));
    expect_grads([](T a, T b) { return tf::real(tf::sum(cube(a * b) * b)); }, {uniform({4}, d, 1), uniform({4}, d, 2)});
  }
}

TEST(CustomOp, LinearOpWithTracedTransposeAndAttributes) {
  const tf::Tensor x = tf::Tensor::from({1.0, 2.0, 3.0});
  auto two = [](T a) { return scaled_cumsum(a, 2.0); };
  auto three = [](T a) { return scaled_cumsum(a, 3.0); };
  // Attributes are part of the op's identity: the two programs compile and run separately.
  EXPECT_TRUE(tf::test::near(tf::trace(two, x).run({x})[0], tf::Tensor::from({2.0, 6.0, 12.0}), 0.0));
  EXPECT_TRUE(tf::test::near(tf::trace(three, x).run({x})[0], tf::Tensor::from({3.0, 9.0, 18.0}), 0.0));
  auto both = [](T a) { return std::vector<T>{scaled_cumsum(a, 2.0), scaled_cumsum(a, 3.0)}; };
  const auto r = tf::trace(both, x).run({x});
  EXPECT_TRUE(tf::test::near(r[1], tf::Tensor::from({3.0, 9.0, 18.0}), 0.0));
  EXPECT_THAT(tf::trace(both, x).print(), HasSubstr("scaled_cumsum[scale=2]"));
  // vjp: s L^T ct = s * reverse cumsum.
  const auto [y, ct] = tf::vjp(two, {x}, tf::Tensor::from({1.0, 10.0, 100.0}));
  EXPECT_TRUE(tf::test::near(ct[0], tf::Tensor::from({222.0, 220.0, 200.0}), 0.0));
  for (tf::DType d : {tf::DType::F64, tf::DType::C128}) {
    SCOPED_TRACE(tf::dtype_name(d));
    expect_grads([](T a, T b) { return tf::real(tf::sum(scaled_cumsum(a * b, 0.5) * scaled_cumsum(b, -2.0))); },
                 {uniform({5}, d, 3), uniform({5}, d, 4)});
  }
}

TEST(CustomOp, MultiOutputOpUsesBothResultsInItsRule) {
  const tf::Tensor x = tf::Tensor::from({0.3, -1.2, 2.5});
  auto f = [](T a) {
    auto sc = tf::call(sincos_op(), {a});
    return tf::sum(sc[0] * sc[1] + sc[0]);
  };
  // d/dx (sin x cos x + sin x) = cos 2x + cos x.
  const tf::Tensor g = tf::grad(f)(x);
  for (std::int64_t i = 0; i < 3; ++i) {
    const double v = x.element(i).real();
    EXPECT_NEAR(g.element(i).real(), std::cos(2 * v) + std::cos(v), 1e-15);
  }
  // Only one of the results used: the other's cotangent is absent.
  auto only_cos = [](T a) { return tf::sum(tf::call(sincos_op(), {a})[1]); };
  const tf::Tensor gc = tf::grad(only_cos)(x);
  for (std::int64_t i = 0; i < 3; ++i) EXPECT_NEAR(gc.element(i).real(), -std::sin(x.element(i).real()), 1e-15);
  for (tf::DType d : {tf::DType::F64, tf::DType::C128}) {
    SCOPED_TRACE(tf::dtype_name(d));
    expect_grads([](T a) {
      auto sc = tf::call(sincos_op(), {a});
      return tf::real(tf::sum(sc[0] * sc[0] * sc[1]));
    }, {uniform({4}, d, 5)});
  }
}

TEST(CustomOp, MissingRulesAndBadCallsNameTheOp) {
  static const tf::OpDef& no_rules = tf::register_op({
      .name = "forward_only",
      .operands = {tf::Linearity::Nonlinear},
      .shape_rule = same_type,
      .kernel = [](const tf::StdTensorOp&, std::span<const tf::Tensor* const> in, std::span<tf::Tensor> out) {
        out[0] = in[0]->clone();
      },
  });
  const tf::Tensor x = tf::Tensor::from({1.0, 2.0});
  auto f = [](T a) { return tf::sum(tf::call(no_rules, {a})[0]); };
  EXPECT_TRUE(tf::test::near(tf::trace(f, x).run({x})[0], tf::Tensor::scalar(3.0, tf::DType::F64), 0.0));
  try {
    tf::grad(f)(x);
    FAIL() << "no JVP rule, yet differentiated";
  } catch (const tidu::ADRuleError& e) {
    EXPECT_EQ(e.op_name(), "forward_only");
    EXPECT_EQ(e.kind(), tidu::RuleKind::Jvp);
  }
  // A name is registered once; built-in names are taken.
  EXPECT_THROW(tf::register_op({.name = "forward_only", .shape_rule = same_type, .kernel = no_rules.kernel}), tf::Error);
  EXPECT_THROW(tf::register_op({.name = "add", .shape_rule = same_type, .kernel = no_rules.kernel}), tf::Error);
  EXPECT_THROW(tf::register_op({.name = "no_kernel", .shape_rule = same_type}), tf::Error);
  EXPECT_EQ(tf::find_op("forward_only"), &no_rules);
  EXPECT_EQ(tf::find_op("dot_general"), &tf::op_def(tf::OpKind::DotGeneral));
  // Wrong operand count, and the user's shape rule rejecting an operand, at trace time.
  auto two_args = [](T a) { return tf::call(cube_op(), {a, a})[0]; };
  EXPECT_THROW(tf::trace(two_args, x), tf::Error);
  auto ints = [](T a) { return cube(tf::astype(a, tf::DType::I64)); };
  EXPECT_THROW(tf::trace(ints, x), tf::DTypeError);
  // A linear JVP on an op declared nonlinear is refused by name.
  static const tf::OpDef& wrong = tf::register_op({
      .name = "claims_linear_jvp",
      .operands = {tf::Linearity::Nonlinear},
      .shape_rule = same_type,
      .kernel = no_rules.kernel,
      .jvp = tf::linear_jvp(),
  });
  auto g = [](T a) { return tf::sum(tf::call(wrong, {a})[0]); };
  try {
    tf::grad(g)(x);
    FAIL() << "linear_jvp accepted a nonlinear operand";
  } catch (const tidu::ADRuleError& e) {
    EXPECT_THAT(e.what(), HasSubstr("claims_linear_jvp"));
    EXPECT_THAT(e.what(), HasSubstr("nonlinear"));
  }
}

// vmap batches an op registered without a batching rule by a loop over the examples (the same
// kernel on each example's slice: equal bit for bit), an elementwise one over the leading axis,
// and refuses the loop, naming the op, under loop_fallback = false.
TEST(CustomOp, VmapLoopsOverAnOpWithoutABatchingRuleUnlessForbidden) {
  const tf::Tensor xs = uniform({3, 4}, tf::DType::F64, 31);
  auto f = [](T x) { return cube(scaled_cumsum(x, 0.5)); };
  const tf::Tensor r = tf::vmap(f)(xs);
  for (std::int64_t i = 0; i < 3; ++i) {
    std::vector<double> row(xs.data<double>() + i * 4, xs.data<double>() + i * 4 + 4);
    const tf::Tensor x = tf::Tensor::from(row, {4});
    const tf::Tensor e = tf::trace(f, x).run({x})[0];
    for (std::int64_t k = 0; k < 4; ++k) EXPECT_EQ(r.data<double>()[i * 4 + k], e.data<double>()[k]);
  }
  EXPECT_NO_THROW(tf::vmap([](T x) { return cube(x); }, {.loop_fallback = false})(xs));  // elementwise: no loop
  try {
    tf::vmap(f, {.loop_fallback = false})(xs);
    ADD_FAILURE() << "the loop was not refused";
  } catch (const tf::Error& e) {
    EXPECT_THAT(e.what(), testing::HasSubstr("scaled_cumsum has no batching rule"));
  }
}

TEST(CustomOp, RegistryListsBuiltinsThenRegisteredOps) {
  (void)cube_op();
  const auto all = tf::registered_ops();
  ASSERT_GE(all.size(), tf::kBuiltinOpCount + 1);
  for (std::size_t k = 0; k < tf::kBuiltinOpCount; ++k) EXPECT_EQ(all[k], &tf::op_def(static_cast<tf::OpKind>(k)));
  EXPECT_NE(std::find(all.begin(), all.end(), &cube_op()), all.end());
}

TEST(CustomJvp, ReplacesTheDerivativeOfATracedFunction) {
  // log(1 + exp(x)) differentiated as written is exp(x) / (1 + exp(x)): inf / inf at x = 100 in f32.
  auto value = [](std::span<const T> x) { return std::vector<T>{tf::log(1.0 + tf::exp(x[0]))}; };
  auto stable = [](std::span<const T> x, std::span<const T> t) {
    return std::vector<T>{t[0] * (1.0 - 1.0 / (1.0 + tf::exp(x[0])))};
  };
  static const tf::CustomJvp log1pexp("log1pexp", value, stable);
  const tf::Tensor x = tf::Tensor::from(std::vector<float>{100.0f, 0.0f, -3.0f}, {3});
  auto plain = [&](T a) { return tf::sum(value(std::span<const T>(&a, 1))[0]); };
  auto custom = [&](T a) { return tf::sum(log1pexp({a})[0]); };
  EXPECT_TRUE(std::isnan(tf::grad(plain)(x).element(0).real()));
  const tf::Tensor g = tf::grad(custom)(x);
  EXPECT_EQ(g.element(0).real(), 1.0);
  EXPECT_NEAR(g.element(1).real(), 0.5, 1e-7);
  EXPECT_NEAR(g.element(2).real(), 1.0 / (1.0 + std::exp(3.0)), 1e-7);
  // Its value is the function's (inf here, as written), and it prints under its name.
  const tf::Tensor xs = tf::Tensor::from(std::vector<float>{1.0f, 0.0f, -3.0f}, {3});
  EXPECT_TRUE(tf::test::near(tf::trace(custom, xs).run({xs})[0], tf::trace(plain, xs).run({xs})[0], 0.0));
  EXPECT_TRUE(std::isinf(tf::trace(custom, x).run({x})[0].element(0).real()));
  EXPECT_THAT(tf::trace(custom, x).print(), HasSubstr("log1pexp[f32[3]]"));
}

TEST(CustomJvp, RuleIsDifferentiatedToOrderTwoInBothModes) {
  // f(x, y) = (x sin y, x + y) with its exact rule: the test kit checks the rule's derivatives too.
  auto value = [](std::span<const T> a) { return std::vector<T>{a[0] * tf::sin(a[1]), a[0] + a[1]}; };
  auto rule = [](std::span<const T> a, std::span<const T> t) {
    return std::vector<T>{t[0] * tf::sin(a[1]) + a[0] * tf::cos(a[1]) * t[1], t[0] + t[1]};
  };
  static const tf::CustomJvp f("x_sin_y", value, rule);
  for (tf::DType d : {tf::DType::F64, tf::DType::C128}) {
    SCOPED_TRACE(tf::dtype_name(d));
    expect_grads([](T a, T b) {
      auto r = f({a, b});
      return tf::real(tf::sum(r[0] * r[1]));
    }, {uniform({3}, d, 6), uniform({3}, d, 7)});
  }
  // A second call with another argument count is refused by name.
  auto bad = [](T a) { return f({a})[0]; };
  try {
    tf::trace(bad, tf::Tensor::from({1.0}));
    FAIL() << "arity change accepted";
  } catch (const tf::Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("x_sin_y"));
  }
}

// A rule written in traced operations records straight into the linear graph: asin's JVP
// dx / sqrt(1 - x^2) is one linear division of the tangent by a fixed value computed from x alone
// (the printed IR holds nothing else), and atan2's (b da - a db) / (a^2 + b^2) has one linear
// product per tangent and their linear sum.
TEST(RuleTrace, BuiltInRulesRecordTheirFormulaWithInferredRoles) {
  const tf::Program asin = tf::trace([](T x) { return tf::asin(x); }, tf::Tensor::zeros({3}));
  EXPECT_EQ(computegraph::to_string(*tf::linearize(asin).graph),
            "graph {\n"
            "  %0 = input t1:x0:f64[3]\n"
            "  $0 = external x0:f64[3]\n"
            "  %1 = mul($0, $0)\n"
            "  %2 = constant[tensor(f64[], 1)]()\n"
            "  %3 = broadcast_in_dim[shape=[3], dims=[]](%2)\n"
            "  %4 = neg(%1)\n"
            "  %5 = add(%3, %4)\n"
            "  %6 = sqrt(%5)\n"
            "  %7 = div(%0, %6) linearized[active, fixed]\n"
            "  return %7\n"
            "}\n");
  const tf::Program atan2 = tf::trace([](T a, T b) { return tf::atan2(a, b); }, tf::Tensor::zeros({2}), tf::Tensor::zeros({2}));
  EXPECT_EQ(computegraph::to_string(*tf::linearize(atan2).graph),
            "graph {\n"
            "  %0 = input t1:x0:f64[2]\n"
            "  %1 = input t1:x1:f64[2]\n"
            "  $0 = external x0:f64[2]\n"
            "  $1 = external x1:f64[2]\n"
            "  %2 = mul($0, $0)\n"
            "  %3 = mul($1, $1)\n"
            "  %4 = add(%2, %3)\n"
            "  %5 = div($1, %4)\n"
            "  %6 = mul(%5, %0) linearized[fixed, active]\n"
            "  %7 = div($0, %4)\n"
            "  %8 = neg(%7)\n"
            "  %9 = mul(%8, %1) linearized[fixed, active]\n"
            "  %10 = add(%6, %9) linearized[active, active]\n"
            "  return %10\n"
            "}\n");
}

// A rule that multiplies two tangents is not linear: linear_transpose names the op it cannot
// transpose. A value kept past its rule cannot record any more (an Error, not a dangling graph).
TEST(RuleTrace, NonlinearRulesAndValuesKeptPastTheRuleAreRefused) {
  static const tf::OpDef& squares_tangent = tf::register_op({
      .name = "squares_its_tangent",
      .operands = {tf::Linearity::Nonlinear},
      .shape_rule = same_type,
      .kernel = [](const tf::StdTensorOp&, std::span<const tf::Tensor* const> in, std::span<tf::Tensor> out) {
        out[0] = in[0]->clone();
      },
      .jvp = tf::traced_jvp([](const tf::StdTensorOp&, std::span<const T>, std::span<const T>, std::span<const T> t) {
        return std::vector<T>{t[0] * t[0]};
      }),
  });
  const tf::Tensor x = tf::Tensor::from({1.0, 2.0});
  EXPECT_THROW(tf::grad([](T a) { return tf::sum(tf::call(squares_tangent, {a})[0]); })(x), tidu::ADRuleError);

  static std::optional<T> kept;
  static const tf::OpDef& keeps_tangent = tf::register_op({
      .name = "keeps_its_tangent",
      .operands = {tf::Linearity::Nonlinear},
      .shape_rule = same_type,
      .kernel = squares_tangent.kernel,
      .jvp = tf::traced_jvp([](const tf::StdTensorOp&, std::span<const T>, std::span<const T>, std::span<const T> t) {
        kept = t[0];
        return std::vector<T>{t[0]};
      }),
  });
  const tf::Tensor g = tf::grad([](T a) { return tf::sum(tf::call(keeps_tangent, {a})[0]); })(x);
  EXPECT_TRUE(tf::test::near(g, tf::Tensor::from({1.0, 1.0}), 0.0));
  ASSERT_TRUE(kept.has_value());
  EXPECT_EQ(kept->type(), x.type());
  try {
    tf::sin(*kept);
    FAIL() << "a value of a finished rule recorded";
  } catch (const tf::Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("after the rule returned"));
  }
  kept.reset();
}

// A rule may use control flow: the branches are traced under the rule's trace, and the cond they
// make is recorded into the rule's graph, linear in the tangent it reads. piecewise(x) = x^2 for
// x >= 0 and x^3 below; its derivatives come from transposing and differentiating that cond.
TEST(RuleTrace, ARuleThatBranchesIsDifferentiatedInBothModesToOrderTwo) {
  static const tf::OpDef& piecewise = tf::register_op({
      .name = "piecewise_square_cube",
      .operands = {tf::Linearity::Nonlinear},
      .shape_rule = same_type,
      .kernel = [](const tf::StdTensorOp& op, std::span<const tf::Tensor* const> in, std::span<tf::Tensor> out) {
        const double v = in[0]->item<double>();
        out[0] = tf::Tensor::scalar(v >= 0 ? v * v : v * v * v, op.out.dtype);
      },
      .jvp = tf::traced_jvp([](const tf::StdTensorOp&, std::span<const T> x, std::span<const T>, std::span<const T> t) {
        const tf::TracedList d = tf::cond(
            tf::ge(x[0], tf::full_like(x[0], 0.0)),
            [](const tf::TracedList& v) { return tf::TracedList{v[0] * v[1] * 2.0}; },
            [](const tf::TracedList& v) { return tf::TracedList{v[0] * v[0] * v[1] * 3.0}; }, {x[0], t[0]});
        return std::vector<T>{d[0]};
      }),
  });
  auto f = [](T a) { return tf::call(piecewise, {a})[0]; };
  for (double v : {1.5, -1.0}) {
    SCOPED_TRACE(v);
    const tf::Tensor x = tf::Tensor::scalar(v);
    const double slope = v >= 0 ? 2 * v : 3 * v * v, curvature = v >= 0 ? 2.0 : 6 * v;
    EXPECT_NEAR(tf::grad(f)(x).item<double>(), slope, 1e-14);
    EXPECT_NEAR(tf::jvp(f, {x}, {tf::Tensor::scalar(1.0)}).second.item<double>(), slope, 1e-14);
    EXPECT_NEAR(tf::hessian(f)(x).item<double>(), curvature, 1e-13);
    expect_grads([](T a) { return tf::call(piecewise, {a})[0]; }, {x});
  }
}
