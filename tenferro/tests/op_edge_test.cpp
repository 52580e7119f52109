// Every op of the registry at the edges of its domain, against NumPy's semantics written here (not
// read off tenferro's output): empty tensors and size-0 axes (results of NumPy's shapes; sums over
// nothing are 0, products 1, contractions over an empty axis zeros), size-1 axes, and NaN and
// infinite inputs (C99 Annex F values, which NumPy's ufuncs return: exp(-inf) = 0, tanh(inf) = 1,
// NaN propagates through maximum, sort puts NaN last, ...). Where NumPy raises (the maximum of an
// empty axis, argmax of one), tenferro must throw a typed error. Cases with float operands are
// also differentiated (a vector-Jacobian product): a derivative over empty tensors is empty, and
// over a non-empty result of empty operands (a sum over nothing) it is zeros, never NaN.
//
// An op added to the registry without a case here fails EveryOpHasEdgeCases, by name.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <map>
#include <numbers>
#include <set>
#include <string>
#include <vector>

#include "tenferro/ops/linalg_attrs.hpp"
#include "tenferro/ops/make.hpp"
#include "tenferro/tenferro.hpp"
#include "tenferro/ops/record.hpp"
#include "tenferro/program.hpp"
#include "tenferro/custom_op.hpp"

namespace tf = tenferro;
using T = tf::Traced;
using tf::TracedList;

namespace {

constexpr double inf = std::numeric_limits<double>::infinity();
const double nan = std::numeric_limits<double>::quiet_NaN();
constexpr double pi = std::numbers::pi;

using Fn = std::function<std::vector<T>(const std::vector<T>&)>;

/// One program on edge inputs, with NumPy's answer or the error NumPy raises.
struct Edge {
  std::string what;
  std::vector<tf::Tensor> args;
  Fn f;
  std::vector<tf::Tensor> want;  ///< the results (NaN matches NaN); empty when `error`
  bool error = false;            ///< NumPy raises: a tf::Error must be thrown
};

tf::Tensor vec(std::vector<double> v) {
  const auto n = static_cast<std::int64_t>(v.size());
  return tf::Tensor::from(std::move(v), {n});
}
tf::Tensor ivec(std::vector<std::int64_t> v) {
  const auto n = static_cast<std::int64_t>(v.size());
  return tf::Tensor::from(std::move(v), {n});
}
tf::Tensor zeros(tf::Shape s, tf::DType d = tf::DType::F64) { return tf::Tensor::zeros(std::move(s), d); }
tf::Tensor full(tf::Shape s, double v, tf::DType d = tf::DType::F64) { return tf::Tensor::full(std::move(s), v, d); }
tf::Tensor ones(tf::Shape s) { return full(std::move(s), 1.0); }

Fn one(std::function<T(T)> g) {
  return [g](const std::vector<T>& a) { return std::vector<T>{g(a[0])}; };
}
Fn two(std::function<T(T, T)> g) {
  return [g](const std::vector<T>& a) { return std::vector<T>{g(a[0], a[1])}; };
}
Fn many(std::function<TracedList(const std::vector<T>&)> g) {
  return [g](const std::vector<T>& a) { return g(a); };
}

bool same_value(tf::c128 got, tf::c128 want) {
  auto part = [](double g, double w) {
    if (std::isnan(w)) return std::isnan(g);
    if (std::isinf(w)) return g == w;
    return std::abs(g - w) <= 4e-16 * std::max(1.0, std::abs(w));
  };
  return part(got.real(), want.real()) && part(got.imag(), want.imag());
}

::testing::AssertionResult matches(const tf::Tensor& got, const tf::Tensor& want) {
  if (got.shape() != want.shape() || got.dtype() != want.dtype()) {
    return ::testing::AssertionFailure() << "got " << got.type().to_string() << ", NumPy gives " << want.type().to_string();
  }
  for (std::int64_t i = 0; i < got.numel(); ++i) {
    if (!same_value(got.element(i), want.element(i))) {
      return ::testing::AssertionFailure() << "element " << i << ": got " << got.element(i) << ", NumPy gives "
                                           << want.element(i) << "\n got  " << got << "\n want " << want;
    }
  }
  return ::testing::AssertionSuccess();
}

bool inexact(const tf::Tensor& t) { return tf::is_inexact(t.dtype()); }

/// Runs one case: the values (or the error), then, for a single float result of float operands,
/// the vector-Jacobian product with a cotangent of ones: each cotangent has its primal's shape
/// and no NaN (the derivatives of NaN and infinite inputs are not checked: only empty ones).
void run_case(const tf::OpDef& def, const Edge& e) {
  const std::string& op = def.name;
  SCOPED_TRACE(op + ": " + e.what);
  std::vector<tf::TensorType> types = tf::detail::types_of(e.args);
  if (e.error) {
    try {
      const tf::Program p(tf::detail::trace_function(e.f, types));
      (void)p.run(e.args);
      ADD_FAILURE() << op << " (" << e.what << ") returned a value where NumPy raises";
    } catch (const tf::Error& err) {
      EXPECT_FALSE(std::string(err.what()).empty());
    }
    return;
  }
  std::vector<tf::Tensor> got;
  try {
    const tf::Program p(tf::detail::trace_function(e.f, types));
    bool found = false;
    for (const auto& node : p.graph()->operations()) found = found || node.operation.def->name == op;
    EXPECT_TRUE(found) << "the case does not apply " << op << ":\n" << p.print();
    got = p.run(e.args);
  } catch (const std::exception& err) {
    ADD_FAILURE() << op << " (" << e.what << ") threw: " << err.what();
    return;
  }
  ASSERT_EQ(got.size(), e.want.size());
  for (std::size_t i = 0; i < got.size(); ++i) EXPECT_TRUE(matches(got[i], e.want[i])) << "result " << i;
  // Derivatives where the operands are empty (or the result is): shapes and no NaN.
  bool any_empty = false, all_inexact = true;
  for (const auto& a : e.args) {
    any_empty = any_empty || a.numel() == 0;
    all_inexact = all_inexact && inexact(a);
  }
  if (!any_empty || !all_inexact || got.size() != 1 || !inexact(got[0]) || e.args.empty()) return;
  // The semiring ops have no AD by design (their rules throw ADRuleError; op_coverage_test checks).
  if (def.never_differentiable() || op.rfind("semiring_", 0) == 0) return;
  auto no_nan = [](const tf::Tensor& t, const std::string& which) {
    for (std::int64_t k = 0; k < t.numel(); ++k) EXPECT_FALSE(std::isnan(std::abs(t.element(k)))) << which << " element " << k;
  };
  try {
    if (op == "while_loop") {  // forward mode only (reverse mode needs max_trips)
      std::vector<tf::Tensor> tangents;
      for (const auto& a : e.args) tangents.push_back(tf::Tensor::full(a.shape(), 1.0, a.dtype()));
      const auto [value, tangent] = tf::detail::jvp_of(e.f, e.args, tangents);
      EXPECT_EQ(tangent.shape(), got[0].shape());
      no_nan(tangent, "tangent");
      return;
    }
    const tf::Tensor ct = tf::Tensor::full(got[0].shape(), 1.0, got[0].dtype());
    const auto [value, cts] = tf::detail::vjp_of(e.f, e.args, ct);
    ASSERT_EQ(cts.size(), e.args.size());
    for (std::size_t i = 0; i < cts.size(); ++i) {
      EXPECT_EQ(cts[i].shape(), e.args[i].shape()) << "cotangent " << i;
      no_nan(cts[i], "cotangent " + std::to_string(i));
    }
  } catch (const std::exception& err) {
    ADD_FAILURE() << op << " (" << e.what << "): the derivative threw: " << err.what();
  }
}

/// An elementwise unary op: NaN and infinite inputs against NumPy's outputs, then empty operands
/// ([0] and [2, 0]).
std::vector<Edge> unary(std::function<T(T)> g, std::vector<double> x, std::vector<double> want) {
  return {{"special values", {vec(std::move(x))}, one(g), {vec(std::move(want))}},
          {"[0]", {zeros({0})}, one(g), {zeros({0})}},
          {"[2, 0]", {zeros({2, 0})}, one(g), {zeros({2, 0})}}};
}

/// An elementwise binary op: special values, then NumPy broadcasting with size-0 and size-1 axes:
/// [0, 1] with [1, 3] is [0, 3], [2, 0] with [2, 1] is [2, 0], [1] with [0] is [0].
std::vector<Edge> binary(std::function<T(T, T)> g, std::vector<double> a, std::vector<double> b,
                         std::vector<double> want) {
  return {{"special values", {vec(std::move(a)), vec(std::move(b))}, two(g), {vec(std::move(want))}},
          {"[0, 1] with [1, 3]", {zeros({0, 1}), ones({1, 3})}, two(g), {zeros({0, 3})}},
          {"[2, 0] with [2, 1]", {ones({2, 0}), ones({2, 1})}, two(g), {zeros({2, 0})}},
          {"[1] with [0]", {ones({1}), zeros({0})}, two(g), {zeros({0})}}};
}

tf::Tensor bools(std::vector<bool> v) {
  std::vector<bool> copy = v;
  tf::Tensor t = tf::Tensor::zeros({static_cast<std::int64_t>(v.size())}, tf::DType::Bool);
  for (std::size_t i = 0; i < v.size(); ++i) t.data<bool>()[i] = copy[i];
  return t;
}

std::map<std::string, std::vector<Edge>> edge_cases() {
  std::map<std::string, std::vector<Edge>> c;
  using K = tf::OpKind;
  namespace la = tf::linalg;

  // Elementwise, unary.
  c["neg"] = unary(tf::neg, {inf, -inf, nan}, {-inf, inf, nan});
  c["abs"] = unary(tf::abs, {inf, -inf, nan, -0.0}, {inf, inf, nan, 0});
  c["sign"] = unary(tf::sign, {inf, -inf, nan, 0, -2}, {1, -1, nan, 0, -1});
  c["conj"] = unary(tf::conj, {inf, -inf, nan}, {inf, -inf, nan});
  c["real"] = unary(tf::real, {inf, nan}, {inf, nan});
  c["imag"] = unary(tf::imag, {inf, nan}, {0, 0});  // a real number's imaginary part is 0, NaN or not
  c["exp"] = unary(tf::exp, {inf, -inf, nan}, {inf, 0, nan});
  c["log"] = unary(tf::log, {inf, 0, -1, -inf, nan}, {inf, -inf, nan, nan, nan});
  c["sin"] = unary(tf::sin, {inf, -inf, nan}, {nan, nan, nan});
  c["cos"] = unary(tf::cos, {inf, -inf, nan}, {nan, nan, nan});
  c["tan"] = unary(tf::tan, {inf, -inf, nan}, {nan, nan, nan});
  c["tanh"] = unary(tf::tanh, {inf, -inf, nan}, {1, -1, nan});
  c["sqrt"] = unary(tf::sqrt, {inf, -inf, -1, nan, 0}, {inf, nan, nan, nan, 0});
  c["rsqrt"] = unary(tf::rsqrt, {inf, 0, -1, nan, 4}, {0, inf, nan, nan, 0.5});
  c["expm1"] = unary(tf::expm1, {inf, -inf, nan}, {inf, -1, nan});
  c["log1p"] = unary(tf::log1p, {inf, -1, -2, nan}, {inf, -inf, nan, nan});
  c["asin"] = unary(tf::asin, {2, inf, -inf, nan}, {nan, nan, nan, nan});
  c["acos"] = unary(tf::acos, {2, inf, -inf, nan}, {nan, nan, nan, nan});
  c["atan"] = unary(tf::atan, {inf, -inf, nan}, {pi / 2, -pi / 2, nan});
  c["sinh"] = unary(tf::sinh, {inf, -inf, nan}, {inf, -inf, nan});
  c["cosh"] = unary(tf::cosh, {inf, -inf, nan}, {inf, inf, nan});
  c["asinh"] = unary(tf::asinh, {inf, -inf, nan}, {inf, -inf, nan});
  c["acosh"] = unary(tf::acosh, {inf, 0.5, -inf, nan, 1}, {inf, nan, nan, nan, 0});
  c["atanh"] = unary(tf::atanh, {1, -1, 2, inf, nan}, {inf, -inf, nan, nan, nan});
  c["log2"] = unary(tf::log2, {inf, 0, -1, nan, 8}, {inf, -inf, nan, nan, 3});
  c["log10"] = unary(tf::log10, {inf, 0, -1, nan, 100}, {inf, -inf, nan, nan, 2});
  c["exp2"] = unary(tf::exp2, {inf, -inf, nan, 3}, {inf, 0, nan, 8});
  c["cbrt"] = unary(tf::cbrt, {inf, -inf, nan, -8}, {inf, -inf, nan, -2});
  c["erf"] = unary(tf::erf, {inf, -inf, nan}, {1, -1, nan});
  c["erfc"] = unary(tf::erfc, {inf, -inf, nan}, {0, 2, nan});
  c["erfinv"] = unary(tf::erfinv, {1, -1, 2, inf, nan, 0}, {inf, -inf, nan, nan, nan, 0});
  c["erfcinv"] = unary(tf::erfcinv, {0, 2, 3, -1, nan, 1}, {inf, -inf, nan, nan, nan, 0});
  c["erfcx"] = unary(tf::erfcx, {inf, -inf, nan, 0}, {0, inf, nan, 1});
  // lgamma: C99's lgamma is +inf at the poles and at -inf (log |Gamma|).
  c["lgamma"] = unary(tf::lgamma, {inf, -inf, 0, -1, nan, 1}, {inf, inf, inf, inf, nan, 0});
  // digamma at the negative integers (poles of either sign) is NaN, as in SciPy and PyTorch.
  c["digamma"] = unary(tf::digamma, {inf, -1, -inf, nan}, {inf, nan, nan, nan});
  c["bessel_i0"] = unary(tf::i0, {inf, -inf, nan, 0}, {inf, inf, nan, 1});
  c["bessel_i0e"] = unary(tf::i0e, {inf, -inf, nan, 0}, {0, 0, nan, 1});
  c["bessel_i1"] = unary(tf::i1, {inf, -inf, nan, 0}, {inf, -inf, nan, 0});
  c["bessel_i1e"] = unary(tf::i1e, {inf, -inf, nan, 0}, {0, -0.0, nan, 0});
  c["floor"] = unary(tf::floor, {inf, -inf, nan, -0.5}, {inf, -inf, nan, -1});
  c["ceil"] = unary(tf::ceil, {inf, -inf, nan, -1.5}, {inf, -inf, nan, -1});
  c["round"] = unary([](T x) { return tf::round(x); }, {inf, -inf, nan, 2.5, -0.5}, {inf, -inf, nan, 2, -0.0});  // half to even
  c["trunc"] = unary(tf::trunc, {inf, -inf, nan, -1.5}, {inf, -inf, nan, -1});
  c["frac"] = unary(tf::frac, {inf, -inf, nan, -2.5, 3}, {nan, nan, nan, -0.5, 0});  // torch.frac: x - trunc(x)
  c["stop_gradient"] = unary(tf::stop_gradient, {inf, nan}, {inf, nan});
  c["checkpoint_name"] = unary([](T x) { return tf::checkpoint_name(x, "x"); }, {inf, nan}, {inf, nan});
  // frexp: NumPy gives (x, 0) for NaN, infinities and zero.
  {
    auto f = many([](const std::vector<T>& a) {
      auto [m, e] = tf::frexp(a[0]);
      return TracedList{m, e};
    });
    c["frexp"] = {{"special values", {vec({nan, inf, -inf, 0, 8})}, f, {vec({nan, inf, -inf, 0, 0.5}), ivec({0, 0, 0, 0, 4})}},
                  {"[2, 0]", {zeros({2, 0})}, f, {zeros({2, 0}), zeros({2, 0}, tf::DType::I64)}}};
  }

  // Elementwise, binary (special values in NumPy's order: a, b, a op b).
  c["add"] = binary(tf::add, {inf, inf, nan}, {-inf, 1, 1}, {nan, inf, nan});
  c["mul"] = binary(tf::mul, {0, inf, nan}, {inf, -2, 1}, {nan, -inf, nan});
  c["div"] = binary(tf::div, {1, 0, -1, inf, 1}, {0, 0, 0, inf, inf}, {inf, nan, -inf, nan, 0});
  c["maximum"] = binary(tf::maximum, {nan, 1, inf}, {1, nan, -inf}, {nan, nan, inf});
  c["minimum"] = binary(tf::minimum, {nan, 1, inf}, {1, nan, -inf}, {nan, nan, -inf});
  c["pow"] = binary(tf::pow, {nan, 1, 0, -8, inf, 2}, {0, nan, -1, 1.0 / 3, -1, inf}, {1, 1, inf, nan, 0, inf});
  c["atan2"] = binary(tf::atan2, {inf, 1, 0, nan}, {inf, -inf, 1, 1}, {pi / 4, pi, 0, nan});
  c["hypot"] = binary(tf::hypot, {inf, nan, -inf}, {nan, 1, 2}, {inf, nan, inf});
  c["fmod"] = binary(tf::fmod, {inf, 1, 1, nan, -5}, {2, 0, inf, 1, 3}, {nan, nan, 1, nan, -2});
  // remainder has the divisor's sign (Python's %): remainder(-1, inf) = inf in NumPy and Python.
  c["remainder"] = binary(tf::remainder, {1, -1, inf, 1, 5}, {inf, inf, 2, 0, -3}, {1, inf, nan, nan, -1});
  c["polygamma"] = unary([](T x) { return tf::polygamma(1, x); }, {inf, nan, 1}, {0, nan, pi * pi / 6});
  {
    auto cmp = [](const std::vector<T>& a) {
      return TracedList{tf::lt(a[0], a[1]), tf::ne(a[0], a[1]), tf::eq(a[0], a[1]), tf::ge(a[0], a[1])};
    };
    c["compare"] = {{"NaN compares false except !=", {vec({nan, nan, inf, 1}), vec({1, nan, inf, nan})}, many(cmp),
                     {bools({false, false, false, false}), bools({true, true, false, true}), bools({false, false, true, false}),
                      bools({false, false, true, false})}},
                    {"[0, 1] with [1, 3]", {zeros({0, 1}), ones({1, 3})}, two(tf::lt), {zeros({0, 3}, tf::DType::Bool)}}};
  }
  c["select"] = {{"NaN passes through", {vec({nan, 1}), vec({2, nan})}, two([](T a, T b) { return tf::where(tf::gt(b, a), a, b); }),
                  {vec({2, nan})}},
                 {"[2, 0]", {zeros({2, 0}), ones({2, 0})}, two([](T a, T b) { return tf::where(tf::gt(b, a), a, b); }), {zeros({2, 0})}}};
  c["clamp"] = {{"NaN stays NaN; infinities clip", {vec({nan, inf, -inf, 0.5})},
                 one([](T x) { return tf::clamp(x, tf::full_like(x, 0.0), tf::full_like(x, 1.0)); }), {vec({nan, 1, 0, 0.5})}},
                {"[2, 0]", {zeros({2, 0})}, one([](T x) { return tf::clamp(x, tf::full_like(x, 0.0), tf::full_like(x, 1.0)); }),
                 {zeros({2, 0})}}};

  // Conversions: NaN and infinities keep their meaning; f64 beyond f32's range overflows to inf.
  c["convert"] = {{"to f32", {vec({nan, inf, -1e300, 1e-300})}, one([](T x) { return tf::astype(x, tf::DType::F32); }),
                   {tf::Tensor::from(std::vector<float>{NAN, INFINITY, -INFINITY, 0.0f}, {4})}},
                  {"[2, 0] to c128", {zeros({2, 0})}, one([](T x) { return tf::astype(x, tf::DType::C128); }),
                   {zeros({2, 0}, tf::DType::C128)}}};

  // Reductions: over an empty axis the sum is 0 and the product 1 (NumPy); the primitives
  // reduce_max/min return their identity -inf/+inf there (tenferro::max and min throw, as NumPy).
  auto reduce = [](K k, std::vector<std::int64_t> axes) {
    return [k, axes](T x) { return tf::apply(tf::ops::reduce(k, x.type(), axes), {x}); };
  };
  c["reduce_sum"] = {{"over an empty axis", {zeros({2, 0})}, one(reduce(K::ReduceSum, {1})), {zeros({2})}},
                     {"of everything empty", {zeros({0, 3})}, one([](T x) { return tf::sum(x); }), {zeros({})}},
                     {"keeping an empty axis", {zeros({2, 0})}, one(reduce(K::ReduceSum, {0})), {zeros({0})}},
                     {"over a size-1 axis", {vec({1, 2})}, one([](T x) { return tf::sum(tf::reshape(x, {2, 1}), {1}); }), {vec({1, 2})}},
                     {"inf and -inf", {vec({inf, -inf, 1})}, one(reduce(K::ReduceSum, {0})), {full({}, nan)}}};
  c["reduce_prod"] = {{"over an empty axis", {zeros({2, 0})}, one(reduce(K::ReduceProd, {1})), {ones({2})}},
                      {"0 * inf", {vec({0, inf})}, one(reduce(K::ReduceProd, {0})), {full({}, nan)}}};
  c["reduce_max"] = {{"NaN propagates", {vec({1, nan, 3})}, one(reduce(K::ReduceMax, {0})), {full({}, nan)}},
                     {"identity over an empty axis", {zeros({2, 0})}, one(reduce(K::ReduceMax, {1})), {full({2}, -inf)}},
                     {"tenferro::max over an empty axis (NumPy raises)", {zeros({2, 0})},
                      one([](T x) { return tf::max(x, {1}); }), {}, true},
                     {"keeping an empty axis", {zeros({0, 3})}, one([](T x) { return tf::max(x, {1}); }), {zeros({0})}}};
  c["reduce_min"] = {{"NaN propagates", {vec({1, nan, 3})}, one(reduce(K::ReduceMin, {0})), {full({}, nan)}},
                     {"identity over an empty axis", {zeros({2, 0})}, one(reduce(K::ReduceMin, {1})), {full({2}, inf)}},
                     {"tenferro::min over an empty axis (NumPy raises)", {zeros({0})}, one([](T x) { return tf::min(x, {0}); }), {}, true}};
  // argmax: the first NaN wins (NumPy); over an empty axis NumPy raises.
  c["reduce_max_index"] = {{"first NaN wins", {vec({1, nan, 3, nan})}, one([](T x) { return tf::argmax(x, 0); }), {full({}, 1, tf::DType::I64)}},
                           {"ties: the first", {vec({3, 1, 3})}, one([](T x) { return tf::argmax(x, 0); }), {full({}, 0, tf::DType::I64)}},
                           {"empty axis (NumPy raises)", {zeros({2, 0})}, one([](T x) { return tf::argmax(x, 1); }), {}, true},
                           {"keeping an empty axis", {zeros({0, 3})}, one([](T x) { return tf::argmax(x, 1); }),
                            {zeros({0}, tf::DType::I64)}}};
  c["reduce_min_index"] = {{"first NaN wins", {vec({1, nan, -3})}, one([](T x) { return tf::argmin(x, 0); }), {full({}, 1, tf::DType::I64)}},
                           {"empty axis (NumPy raises)", {zeros({0})}, one([](T x) { return tf::argmin(x, 0); }), {}, true}};

  // Contractions: an empty contracted axis gives zeros; 0 * inf in a product is NaN.
  c["dot_general"] = {{"contraction over an empty axis", {zeros({2, 0}), zeros({0, 3})}, two(tf::matmul), {zeros({2, 3})}},
                      {"empty free axis", {zeros({0, 2}), ones({2, 3})}, two(tf::matmul), {zeros({0, 3})}},
                      {"empty batch", {zeros({0, 2, 2}), ones({0, 2, 2})}, two(tf::matmul), {zeros({0, 2, 2})}},
                      {"0 * inf", {tf::Tensor::from({{0.0, 1.0}}), tf::Tensor::from({{inf}, {1.0}})}, two(tf::matmul),
                       {full({1, 1}, nan)}}};
  c["semiring_dot_general"] = {{"max-plus over an empty axis: the semiring's zero (-inf)", {zeros({2, 0}), zeros({0, 3})},
                                two([](T a, T b) { return tf::semiring_dot_general(a, b, tf::Semiring::MaxPlus, {{}, {}, {1}, {0}}); }),
                                {full({2, 3}, -inf)}},
                               {"min-plus, empty free axis", {zeros({0, 2}), ones({2, 3})},
                                two([](T a, T b) { return tf::semiring_dot_general(a, b, tf::Semiring::MinPlus, {{}, {}, {1}, {0}}); }),
                                {zeros({0, 3})}}};
  c["semiring_dot_general_index"] = {{"empty free axis", {zeros({0, 2}), ones({2, 3})}, many([](const std::vector<T>& a) {
                                        auto [v, i] = tf::semiring_dot_general_index(a[0], a[1], tf::Semiring::MaxPlus, {{}, {}, {1}, {0}});
                                        return TracedList{v, i};
                                      }),
                                      {zeros({0, 3}), zeros({0, 3}, tf::DType::I64)}}};

  // Layout.
  c["transpose"] = {{"[2, 0] -> [0, 2]", {zeros({2, 0})}, one([](T x) { return tf::transpose(x); }), {zeros({0, 2})}}};
  c["reshape"] = {{"[2, 0] -> [0, 5]", {zeros({2, 0})}, one([](T x) { return tf::reshape(x, {0, 5}); }), {zeros({0, 5})}}};
  c["broadcast_in_dim"] = {{"[1] -> [0]", {vec({nan})}, one([](T x) { return tf::broadcast_to(x, {0}); }), {zeros({0})}},
                           {"[0] -> [2, 0]", {zeros({0})}, one([](T x) { return tf::broadcast_to(x, {2, 0}); }), {zeros({2, 0})}},
                           {"NaN broadcast", {vec({nan})}, one([](T x) { return tf::broadcast_to(x, {2}); }), {vec({nan, nan})}}};
  c["extract_diag"] = {{"[0, 0]", {zeros({0, 0})}, one([](T x) { return tf::diagonal(x); }), {zeros({0})}},
                       {"[2, 0]", {zeros({2, 0})}, one([](T x) { return tf::diagonal(x); }), {zeros({0})}}};
  c["embed_diag"] = {{"[0]", {zeros({0})}, one([](T x) { return tf::diag(x); }), {zeros({0, 0})}}};
  c["slice"] = {{"empty range", {vec({1, 2, 3})}, one([](T x) { return tf::slice(x, {1}, {1}); }), {zeros({0})}},
                {"of an empty axis", {zeros({2, 0})}, one([](T x) { return tf::slice(x, {1, 0}, {2, 0}); }), {zeros({1, 0})}}};
  c["pad"] = {{"an empty axis padded", {zeros({0})}, one([](T x) { return tf::pad(x, 7.0, {1}, {2}); }), {vec({7, 7, 7})}},
              {"keeping an empty axis", {zeros({2, 0})}, one([](T x) { return tf::pad(x, 7.0, {1, 0}, {0, 0}); }), {zeros({3, 0})}}};
  c["take"] = {{"no indices", {vec({1, 2})}, one([](T x) { return tf::take(x, std::vector<std::int64_t>{}, 0); }), {zeros({0})}},
               {"rows of an empty axis", {zeros({3, 0})}, one([](T x) { return tf::take(x, {2, 0}, 0); }), {zeros({2, 0})}}};
  c["index_add"] = {{"no updates", {vec({1, 2})},
                     one([](T x) { return tf::index_add(x, tf::constant(x, ivec({})), tf::constant(x, zeros({0})), 0); }),
                     {vec({1, 2})}}};
  c["cumsum"] = {{"inf then -inf", {vec({1, inf, -inf})}, one([](T x) { return tf::cumsum(x, 0); }), {vec({1, inf, nan})}},
                 {"[2, 0]", {zeros({2, 0})}, one([](T x) { return tf::cumsum(x, 1); }), {zeros({2, 0})}},
                 {"[0, 2] along the empty axis", {zeros({0, 2})}, one([](T x) { return tf::cumsum(x, 0); }), {zeros({0, 2})}}};
  c["reverse"] = {{"[0]", {zeros({0})}, one([](T x) { return tf::reverse(x, {0}); }), {zeros({0})}}};
  // NumPy sorts NaN last (ascending); argsort puts NaN's index last too.
  c["sort"] = {{"NaN last", {vec({3, nan, 1, -inf})}, many([](const std::vector<T>& a) {
                  auto [v, i] = tf::sort_with_indices(a[0]);
                  return TracedList{v, i};
                }),
                {vec({-inf, 1, 3, nan}), ivec({3, 2, 0, 1})}},
               {"[0]", {zeros({0})}, one([](T x) { return tf::sort(x); }), {zeros({0})}},
               {"[2, 0]", {zeros({2, 0})}, one([](T x) { return tf::sort(x, 1); }), {zeros({2, 0})}}};
  c["dynamic_slice"] = {{"size 0", {vec({1, 2, 3})},
                         one([](T x) { return tf::dynamic_slice(x, tf::constant(x, ivec({1})), {0}); }), {zeros({0})}}};
  c["dynamic_update_slice"] = {{"an empty update", {vec({1, 2, 3})},
                                one([](T x) { return tf::dynamic_update_slice(x, tf::constant(x, zeros({0})), tf::constant(x, ivec({1}))); }),
                                {vec({1, 2, 3})}}};
  c["gather"] = {{"no indices", {vec({1, 2, 3})}, one([](T x) {
                    return tf::gather(x, tf::constant(x, tf::Tensor::zeros({0, 1}, tf::DType::I64)), {{}, {0}, {0}, 1, {1}});
                  }),
                  {zeros({0})}}};
  c["scatter"] = {{"no updates", {vec({1, 2, 3})}, one([](T x) {
                     return tf::scatter_add(x, tf::constant(x, tf::Tensor::zeros({0, 1}, tf::DType::I64)), tf::constant(x, zeros({0})),
                                            {{}, {0}, {0}, 1});
                   }),
                   {vec({1, 2, 3})}}};

  // Creation and random numbers: zero-size shapes.
  c["constant"] = {{"an empty constant", {vec({1})}, one([](T x) { return tf::constant(x, zeros({0, 2})); }), {zeros({0, 2})}}};
  c["iota"] = {{"length 0", {vec({1})}, one([](T x) {
                  return T(x.trace(), x.trace()->builder.add(tf::ops::iota({0}, 0, tf::DType::F64), {}));
                }),
                {zeros({0})}}};
  c["zeros"] = {{"[0, 3]", {vec({1})}, one([](T x) {
                   return T(x.trace(), x.trace()->builder.add(tf::ops::zeros({tf::DType::F64, {0, 3}}), {}));
                 }),
                 {zeros({0, 3})}}};
  c["random_bits"] = {{"[0, 4]", {vec({1})}, one([](T x) {
                         return tf::random::bits(tf::constant(x, tf::random::key(3)), {0, 4});
                       }),
                       {zeros({0, 4}, tf::DType::I64)}}};
  c["random_uniform"] = {{"[2, 0]", {vec({1})}, one([](T x) { return tf::random::uniform(tf::constant(x, tf::random::key(4)), {2, 0}); }),
                          {zeros({2, 0})}}};

  // Convolution: an empty batch, and empty features.
  c["conv"] = {{"empty batch", {zeros({0, 2, 5}), ones({3, 2, 2})}, two([](T x, T w) { return tf::conv(x, w); }), {zeros({0, 3, 4})}},
               {"no input features: zeros", {zeros({1, 0, 4}), zeros({2, 0, 2})}, two([](T x, T w) { return tf::conv(x, w); }),
                {zeros({1, 2, 3})}}};

  // Linear algebra on empty batches and 0 x 0 matrices: NumPy's shapes (numpy.linalg accepts both).
  c["svd"] = {{"[0, 3, 3]", {zeros({0, 3, 3})}, many([](const std::vector<T>& a) {
                 auto r = la::svd(a[0]);
                 return TracedList{r.U, r.S, r.Vh};
               }),
               {zeros({0, 3, 3}), zeros({0, 3}), zeros({0, 3, 3})}},
              {"[0, 0]", {zeros({0, 0})}, many([](const std::vector<T>& a) {
                 auto r = la::svd(a[0]);
                 return TracedList{r.U, r.S, r.Vh};
               }),
               {zeros({0, 0}), zeros({0}), zeros({0, 0})}}};
  c["svdvals"] = {{"[0, 2, 3]", {zeros({0, 2, 3})}, one([](T x) { return la::svdvals(x); }), {zeros({0, 2})}},
                  {"[0, 0]", {zeros({0, 0})}, one([](T x) { return la::svdvals(x); }), {zeros({0})}}};
  c["eigh"] = {{"[0, 3, 3]", {zeros({0, 3, 3})}, many([](const std::vector<T>& a) {
                  auto r = la::eigh(a[0]);
                  return TracedList{r.eigenvalues, r.eigenvectors};
                }),
                {zeros({0, 3}), zeros({0, 3, 3})}},
               {"[0, 0]", {zeros({0, 0})}, many([](const std::vector<T>& a) {
                  auto r = la::eigh(a[0]);
                  return TracedList{r.eigenvalues, r.eigenvectors};
                }),
                {zeros({0}), zeros({0, 0})}}};
  c["eigvalsh"] = {{"[0, 0]", {zeros({0, 0})}, one([](T x) { return la::eigvalsh(x); }), {zeros({0})}}};
  c["eig"] = {{"[0, 2, 2]", {zeros({0, 2, 2})}, many([](const std::vector<T>& a) {
                 auto r = la::eig(a[0]);
                 return TracedList{r.eigenvalues, r.eigenvectors};
               }),
               {zeros({0, 2}, tf::DType::C128), zeros({0, 2, 2}, tf::DType::C128)}}};
  c["qr"] = {{"[0, 3, 2]", {zeros({0, 3, 2})}, many([](const std::vector<T>& a) {
                auto r = la::qr(a[0]);
                return TracedList{r.Q, r.R};
              }),
              {zeros({0, 3, 2}), zeros({0, 2, 2})}},
             {"[0, 0]", {zeros({0, 0})}, many([](const std::vector<T>& a) {
                auto r = la::qr(a[0]);
                return TracedList{r.Q, r.R};
              }),
              {zeros({0, 0}), zeros({0, 0})}}};
  auto polar_of = many([](const std::vector<T>& a) {
    auto [u, p] = la::polar(a[0]);
    return TracedList{u, p};
  });
  c["polar"] = {{"[3, 0]", {zeros({3, 0})}, polar_of, {zeros({3, 0}), zeros({0, 0})}},
                {"[0, 4, 2]", {zeros({0, 4, 2})}, polar_of, {zeros({0, 4, 2}), zeros({0, 2, 2})}},
                {"wide [2, 3]", {zeros({2, 3})}, polar_of, {}, true}};
  c["cholesky"] = {{"[0, 0]", {zeros({0, 0})}, one([](T x) { return la::cholesky(x); }), {zeros({0, 0})}},
                   {"[0, 2, 2]", {zeros({0, 2, 2})}, one([](T x) { return la::cholesky(x); }), {zeros({0, 2, 2})}}};
  c["triangular_solve"] = {{"[0, 0] with [0, 3]", {zeros({0, 0}), zeros({0, 3})}, two([](T a, T b) { return la::triangular_solve(a, b); }),
                            {zeros({0, 3})}}};
  c["solve"] = {{"[0, 0] with [0]", {zeros({0, 0}), zeros({0})}, two([](T a, T b) { return la::solve(a, b); }), {zeros({0})}},
                {"[0, 2, 2] with [0, 2]", {zeros({0, 2, 2}), zeros({0, 2})}, two([](T a, T b) { return la::solve(a, b); }), {zeros({0, 2})}},
};
  c["lu"] = {{"[0, 2, 2]", {zeros({0, 2, 2})}, many([](const std::vector<T>& a) {
                auto r = la::lu(a[0]);
                return TracedList{r.P, r.L, r.U};
              }),
              {zeros({0, 2, 2}), zeros({0, 2, 2}), zeros({0, 2, 2})}},
             {"det of [0, 0] is 1", {zeros({0, 0})}, one([](T a) { return la::det(a); }), {ones({})}}};
  // lu_solve reads the pivots as a permutation: LU = I with pivots [2, 2] is A = P (rows 1 and 2
  // swapped), so x = P^T b swaps b.
  c["lu_pivots_to_permutation"] = {
      {"pivots [2, 2] swap two rows", {tf::Tensor::from({{1.0, 0.0}, {0.0, 1.0}}), ivec({2, 2}), vec({1, 2})},
       many([](const std::vector<T>& a) { return TracedList{la::lu_solve(a[0], a[1], a[2])}; }), {vec({2, 1})}},
      {"[0, 0] with [0]", {zeros({0, 0}), ivec({}), zeros({0})},
       many([](const std::vector<T>& a) { return TracedList{la::lu_solve(a[0], a[1], a[2])}; }), {zeros({0})}}};
  c["expm"] = {{"[0, 0]", {zeros({0, 0})}, one([](T a) { return la::expm(a); }), {zeros({0, 0})}},
               {"[0, 2, 2]", {zeros({0, 2, 2})}, one([](T a) { return la::expm(a); }), {zeros({0, 2, 2})}}};
  c["expm_frechet"] = {{"[0, 0]", {zeros({0, 0}), zeros({0, 0})},
                        two([](T a, T e) { return tf::apply(tf::ops::expm_frechet(a.type(), e.type()), {a, e}); }), {zeros({0, 0})}}};

  // Control flow: zero trips, empty carries.
  c["scan"] = {{"length 0", {vec({1, 2}), zeros({0, 2})}, many([](const std::vector<T>& a) {
                  auto [last, ys] = tf::scan([](const TracedList& carry, const TracedList& x) {
                    return std::pair{TracedList{carry[0] * x[0]}, TracedList{carry[0] + x[0]}};
                  }, {a[0]}, {a[1]});
                  return TracedList{last[0], ys[0]};
                }),
                {vec({1, 2}), zeros({0, 2})}}};
  // The gradient of sum(c * x_0 * ... ) under binomial checkpointing: over no steps the carry's
  // cotangent passes through and xs get none; over one step each gets the other's value.
  auto product_gradient = [](const std::vector<T>& a) {
    auto loss = [](T h, T xs) {
      auto [last, ys] = tf::scan([](const TracedList& carry, const TracedList& x) {
        return std::pair{TracedList{carry[0] * x[0]}, TracedList{}};
      }, {h}, {xs}, {.checkpoint_snapshots = 1});
      return tf::sum(last[0]);
    };
    return tf::vjp(loss, {a[0], a[1]}, tf::full_like(loss(a[0], a[1]), 1.0)).second;
  };
  c["scan_adjoint"] = {{"gradient over length 0", {vec({1, 2}), zeros({0, 2})}, many(product_gradient), {ones({2}), zeros({0, 2})}},
                       {"gradient over one step", {vec({1, 2}), tf::Tensor::from({{3.0, 4.0}})}, many(product_gradient),
                        {vec({3, 4}), tf::Tensor::from({{1.0, 2.0}})}}};
  c["cond"] = {{"empty operands", {zeros({2, 0})}, one([](T x) {
                  return tf::cond(tf::constant(x, tf::Tensor::full({}, 1.0, tf::DType::Bool)),
                                  [](const TracedList& o) { return TracedList{tf::exp(o[0])}; },
                                  [](const TracedList& o) { return TracedList{o[0]}; }, {x})[0];
                }),
                {zeros({2, 0})}}};
  auto map_of = many([](const std::vector<T>& a) {
    return tf::map([](const TracedList& x) { return TracedList{x[0] * 2.0, tf::sum(x[0])}; }, {a[0]});
  });
  c["map"] = {{"length 0", {zeros({0, 2})}, map_of, {zeros({0, 2}), zeros({0})}},
              {"empty slices", {zeros({3, 0})}, map_of, {zeros({3, 0}), zeros({3})}},
              {"a scalar operand", {tf::Tensor::scalar(1.0)}, map_of, {}, true}};
  c["while_loop"] = {{"no trips", {vec({1, 2})}, one([](T x) {
                        return tf::while_loop([](const TracedList& carry) { return tf::gt(tf::sum(carry[0]), tf::full_like(tf::sum(carry[0]), 10.0)); },
                                              [](const TracedList& carry) { return TracedList{carry[0] * 2.0}; }, {x})[0];
                      }),
                      {vec({1, 2})}},
                     {"an empty carry", {zeros({0})}, one([](T x) {
                        return tf::while_loop([](const TracedList& carry) { return tf::lt(tf::sum(carry[0]), tf::full_like(tf::sum(carry[0]), -1.0)); },
                                              [](const TracedList& carry) { return TracedList{carry[0] * 2.0}; }, {x})[0];
                      }),
                      {zeros({0})}}};
  return c;
}

}  // namespace

TEST(OpEdges, EveryOpHasEdgeCases) {
  const auto all = edge_cases();
  std::set<std::string> registered;
  for (const tf::OpDef* d : tf::registered_ops()) {
    registered.insert(d->name);
    auto it = all.find(d->name);
    if (it == all.end()) {
      ADD_FAILURE() << "op " << d->name << " has no edge cases in op_edge_test.cpp";
      continue;
    }
    for (const Edge& e : it->second) run_case(*d, e);
  }
  for (const auto& [name, cases] : all) EXPECT_TRUE(registered.count(name)) << "edge cases for an unknown op " << name;
}
