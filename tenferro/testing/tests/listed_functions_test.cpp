// The op list's functions in the random programs (listed_functions.hpp). Each U and B entry of
// tenferro/op_list.hpp is drawn by the generator and printed as its user-facing call with no edit
// of tenferro/testing; and what the fuzzer reads from each op's definition about where the op is
// not smooth (OpDef::discontinuity, OpDef::branch_cut) claims no fewer jumps than the op has:
// wherever the trait says the op is smooth across a central difference, the difference agrees
// with the op's JVP.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <numbers>
#include <random>
#include <sstream>

#include "tenferro/ops/op_def.hpp"
#include "tenferro/program.hpp"
#include "tenferro/testing/listed_functions.hpp"
#include "tenferro/testing/random_program.hpp"

namespace tf = tenferro;
namespace tt = tenferro::testing;
using T = tf::Traced;

namespace {

bool uses(const tf::GraphPtr& g, const tf::OpDef& def) {
  for (const auto& node : g->operations()) {
    if (node.operation.def == &def) return true;
  }
  return false;
}

/// Whether op `kind` takes operands of dtype `d` (its shape rule on rank-0 operands).
bool takes(tf::OpKind kind, tf::DType d) {
  const tf::OpDef& def = tf::op_def(kind);
  try {
    def.shape_rule(std::vector<tf::TensorType>(def.arity(), tf::TensorType{d, {}}), tf::OpAttrs{});
    return true;
  } catch (const tf::DTypeError&) {
    return false;
  }
}

/// The function of `f` as a function of two arguments (a unary one ignores the second).
T call(const tt::ListedFunction& f, const T& a, const T& b) { return f.arity == 1 ? f.unary(a) : f.binary(a, b); }
std::vector<T> operands(const tt::ListedFunction& f, const T& a, const T& b) {
  return f.arity == 1 ? std::vector<T>{a} : std::vector<T>{a, b};
}

}  // namespace

// A new U or B line of the op list reaches the fuzzer with no edit of tenferro/testing: every
// function of the list is drawn within the first 400 seeds, its node records exactly its op, and
// the program prints it as the call a user writes (tf::exp(v3)).
TEST(ListedFunctions, TheGeneratorDrawsEachAndPrintsItsCall) {
  std::map<tf::OpKind, std::string> drawn;  // the first program that called each, as C++
  for (std::uint64_t seed = 0; seed < 400; ++seed) {
    const tt::RandomProgram p = tt::generate_program(seed);
    for (const tt::FuzzNode& n : p.nodes) {
      const bool listed = n.op == tt::FuzzOp::Unary || n.op == tt::FuzzOp::Binary;
      if (listed && !drawn.count(n.function)) drawn[n.function] = tt::to_cpp(p);
    }
  }
  for (const tt::ListedFunction& f : tt::listed_functions()) {
    SCOPED_TRACE(f.name);
    const auto it = drawn.find(f.kind);
    if (it == drawn.end()) {
      ADD_FAILURE() << "tf::" << f.name << " is never drawn by the generator";
      continue;
    }
    EXPECT_NE(it->second.find(std::string("tf::") + f.name + "(v"), std::string::npos) << it->second;
    // A program of the one call, on f64 operands: it records the function's op.
    tt::RandomProgram p;
    const tf::Tensor x = tf::Tensor::from(std::vector<double>{0.5, 1.5, 2.5}, {3});
    p.inputs.assign(f.arity, x);
    tt::FuzzNode n;
    n.op = f.arity == 1 ? tt::FuzzOp::Unary : tt::FuzzOp::Binary;
    n.function = f.kind;
    for (std::size_t i = 0; i < f.arity; ++i) n.args.push_back(static_cast<int>(i));
    p.nodes = {n};
    p.outputs = {static_cast<int>(f.arity)};
    EXPECT_EQ(tt::fuzz_name(n), std::string(f.name));
    auto y = [&p](const auto&... a) { return tt::apply_y(p, std::vector<T>{a...}); };
    EXPECT_TRUE(uses(tf::detail::trace_graph(y, tf::detail::types_of(p.inputs)), tf::op_def(f.kind)));
  }
  EXPECT_GE(tt::listed_functions().size(), 40u);
}

namespace {

constexpr double kStep = 1e-3;  // the random programs' central-difference step (program_check.cpp)
constexpr std::int64_t kSamples = 8192;

/// Points at which to difference a function: per operand the values and the directions, and per
/// element the step (kStep, shorter near a singular point of the Domain, so that differences
/// there stay as accurate as elsewhere).
struct Points {
  std::vector<tf::c128> x[2], t[2];
  std::vector<double> h;
};

/// Draws operands as the random programs draw them (generate.cpp): values of order 1 (inputs in
/// (-1, 1) and what programs compute from them), moved into the op's Domain. A quarter of the
/// points lies within two steps of where the ops' jumps, kinks and cuts are: a multiple of 1/2, a
/// point of an axis, the negative real axis (the angle pi of exp(u)). A binary op whose operands
/// are both drawn anywhere gets, at an eighth of the points, one value twice (programs call
/// hypot(v, v) too: a line through the point (0, 0)).
class Sampler {
 public:
  explicit Sampler(std::uint64_t seed) : rng_(seed) {}

  Points draw(const tt::ListedFunction& f, tf::DType dtype) {
    Points p;
    const tf::Domain domain = tf::op_def(f.kind).domain;
    const bool complex = tf::is_complex(dtype);
    for (std::int64_t i = 0; i < kSamples; ++i) {
      // The last operand is in the op's Domain, a binary op's first one anywhere; one of them
      // may be put near a jump.
      const bool snap = chance(0.25);
      const std::size_t snapped = f.arity == 2 && chance(0.5) ? 0 : f.arity - 1;
      double scale = 1;
      for (std::size_t k = 0; k < 2; ++k) {
        const tf::Domain d = k + 1 == f.arity ? domain : tf::Domain::Any;
        const bool near = snap && k == snapped;
        const auto [x, s] = complex ? complex_point(d, near) : real_point(d, near);
        p.x[k].push_back(k < f.arity ? x : 0.0);
        p.t[k].push_back(complex ? tf::c128(uniform(-1, 1), uniform(-1, 1)) : tf::c128(uniform(-1, 1)));
        if (k < f.arity) scale = std::min(scale, s);
      }
      if (f.arity == 2 && domain == tf::Domain::Any && chance(0.125)) {
        p.x[1].back() = p.x[0].back();
        p.t[1].back() = p.t[0].back();
      }
      p.h.push_back(kStep * scale);
    }
    return p;
  }

 private:
  double uniform(double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(rng_); }
  bool chance(double p) { return uniform(0, 1) < p; }
  double nudge() { return uniform(-2 * kStep, 2 * kStep); }
  /// A multiple of 1/2 in [lo, hi].
  double half_integer(int lo, int hi) { return std::floor(uniform(2 * lo, 2 * hi + 1)) / 2; }

  /// A real operand in `d` and its step scale.
  std::pair<tf::c128, double> real_point(tf::Domain d, bool near) {
    switch (d) {
      case tf::Domain::Any:
      case tf::Domain::Steps: return {near ? half_integer(-4, 4) + nudge() : uniform(-4, 4), 1.0};
      case tf::Domain::Positive: {
        const double x = near ? half_integer(1, 8) + nudge() : std::exp(uniform(-4, 4));
        return {x, std::min(1.0, x)};
      }
      case tf::Domain::AboveOne: {
        const double x = near ? half_integer(1, 8) + nudge() : std::exp(uniform(-4, 4));
        return {1 + x, std::min(1.0, x)};
      }
      case tf::Domain::Centered: return {near ? nudge() : uniform(-0.5, 0.5), 1.0};
      case tf::Domain::NearOne: return {1 + (near ? nudge() : uniform(-0.5, 0.5)), 1.0};
    }
    return {0.0, 1.0};
  }

  /// exp(u) for u of real part in [-4, 4] and imaginary part in [-4, 4] (crossing the negative
  /// real axis at +-pi), or near +-pi.
  tf::c128 exp_point(bool near) {
    const double angle = near ? (chance(0.5) ? 1 : -1) * std::numbers::pi + nudge() : uniform(-4, 4);
    return std::exp(tf::c128(uniform(-4, 4), angle));
  }
  /// A point of the disk of radius 1/2, or near one of its axes.
  tf::c128 disk_point(bool near) {
    const double r = 0.5 * std::sqrt(uniform(0, 1)), angle = uniform(0, 2 * std::numbers::pi);
    const tf::c128 z = std::polar(r, angle);
    if (!near) return z;
    return chance(0.5) ? tf::c128(z.real(), nudge()) : tf::c128(nudge(), z.imag());
  }

  /// A complex operand in `d` and its step scale (the distance to the Domain's branch point or to
  /// 0, where abs and sign are singular, at most 1).
  std::pair<tf::c128, double> complex_point(tf::Domain d, bool near) {
    switch (d) {
      case tf::Domain::Any:
      case tf::Domain::Steps: {
        // Within 1.2 of the real axis: tanh's poles at +-i pi/2 stay 0.37 away.
        const double re = near && chance(0.5) ? half_integer(-3, 3) + nudge() : uniform(-3, 3);
        const double im = near ? half_integer(-1, 1) + nudge() : uniform(-1.2, 1.2);
        const tf::c128 z(re, im);
        return {z, std::min(1.0, std::abs(z))};
      }
      case tf::Domain::Positive: {
        const tf::c128 z = exp_point(near);
        return {z, std::min(1.0, std::abs(z))};
      }
      case tf::Domain::AboveOne: {
        const tf::c128 z = exp_point(near);
        return {1.0 + z, std::min(1.0, std::abs(z))};
      }
      case tf::Domain::Centered: return {disk_point(near), 1.0};
      case tf::Domain::NearOne: return {1.0 + disk_point(near), 1.0};
    }
    return {0.0, 1.0};
  }

  std::mt19937_64 rng_;
};

/// The operands x + s h t (element by element) as tensors of `dtype`.
tf::Tensors at(const Points& p, double s, tf::DType dtype) {
  tf::Tensors out;
  for (std::size_t k = 0; k < 2; ++k) {
    tf::Tensor v(tf::TensorType{dtype, {kSamples}});
    for (std::int64_t i = 0; i < kSamples; ++i) {
      const auto e = static_cast<std::size_t>(i);
      const tf::c128 z = p.x[k][e] + s * p.h[e] * p.t[k][e];
      if (dtype == tf::DType::C128) v.data<tf::c128>()[i] = z;
      else v.data<double>()[i] = z.real();
    }
    out.push_back(std::move(v));
  }
  return out;
}

tf::Tensors directions(const Points& p, tf::DType dtype) {
  tf::Tensors out;
  for (std::size_t k = 0; k < 2; ++k) {
    tf::Tensor v(tf::TensorType{dtype, {kSamples}});
    for (std::int64_t i = 0; i < kSamples; ++i) {
      const tf::c128 z = p.t[k][static_cast<std::size_t>(i)];
      if (dtype == tf::DType::C128) v.data<tf::c128>()[i] = z;
      else v.data<double>()[i] = z.real();
    }
    out.push_back(std::move(v));
  }
  return out;
}

struct Verdict {
  std::int64_t compared = 0, mismatched = 0;
  std::string worst;  // the element farthest outside its tolerance
};

/// Central differences of `f` on `dtype` (4-point, at the step and half of it) against its JVP at
/// kSamples points of its Domain, at the points where every point of the stencil takes the
/// branches the point itself takes (function_jump_indicators: the op's traits); with
/// `trait_ignored`, at every point (a control: what the test would see of an op whose jumps were
/// not declared). A mismatch is a difference farther from the JVP than rounding and the
/// differences' own error allow.
Verdict difference_against_jvp(const tt::ListedFunction& f, tf::DType dtype, bool trait_ignored, std::uint64_t seed) {
  const Points p = Sampler(seed).draw(f, dtype);
  auto fn = [&f](const T& a, const T& b) { return call(f, a, b); };
  auto indicators = [&f](const T& a, const T& b) { return tt::function_jump_indicators(f.kind, operands(f, a, b), true); };
  const tf::Tensors x = at(p, 0, dtype);
  const tf::Program value(tf::detail::trace_graph(fn, tf::detail::types_of(x)));
  const tf::Program sides(tf::detail::trace_graph(indicators, tf::detail::types_of(x)));
  auto run = [&](double s) { return value.run(at(p, s, dtype))[0]; };
  const tf::Tensor m2 = run(-2), m1 = run(-1), mh = run(-0.5), ph = run(0.5), p1 = run(1), p2 = run(2);
  const double longer = 1 + 0x1p-36;  // a step a few ulps longer: f differs by rounding only
  const tf::Tensor mh_noise = run(-0.5 * longer), ph_noise = run(0.5 * longer);
  const tf::Tensor jt = tf::jvp(fn, x, directions(p, dtype)).second;
  const bool has_sides = !sides.graph()->outputs().empty();
  const tf::Tensors sides_at_x = has_sides ? sides.run(x) : tf::Tensors{};
  std::vector<bool> smooth(static_cast<std::size_t>(kSamples), true);
  if (has_sides && !trait_ignored) {
    for (double s : {-2.0, -1.0, -0.5, 0.5, 1.0, 2.0}) {
      const tf::Tensors sides_at = sides.run(at(p, s, dtype));
      for (std::size_t o = 0; o < sides_at.size(); ++o) {
        for (std::int64_t i = 0; i < kSamples; ++i) {
          if (sides_at[o].element(i) != sides_at_x[o].element(i)) smooth[static_cast<std::size_t>(i)] = false;
        }
      }
    }
  }
  Verdict v;
  double worst_ratio = 1;
  for (std::int64_t i = 0; i < kSamples; ++i) {
    const double h = p.h[static_cast<std::size_t>(i)];
    const tf::c128 coarse = (-p2.element(i) + 8.0 * p1.element(i) - 8.0 * m1.element(i) + m2.element(i)) / (12 * h);
    const tf::c128 fine = (-p1.element(i) + 8.0 * ph.element(i) - 8.0 * mh.element(i) + m1.element(i)) / (6 * h);
    const tf::c128 d = jt.element(i);
    const double noise = std::max(std::abs(ph_noise.element(i) - ph.element(i)), std::abs(mh_noise.element(i) - mh.element(i)));
    const bool finite = std::isfinite(std::abs(coarse)) && std::isfinite(std::abs(fine)) && std::isfinite(std::abs(d));
    if (!smooth[static_cast<std::size_t>(i)] || !finite) continue;
    ++v.compared;
    // Rounding (measured, as program_check does), the differences' own error (a quarter of their
    // spread: a smooth function's fine difference is off by about 1/15 of it) and 1e-6 relative.
    const double tol = 1e-6 * (1 + std::abs(d)) + 2 * 12 * noise / h + std::abs(coarse - fine) / 4;
    const double err = std::abs(fine - d);
    if (!(err <= tol)) {
      ++v.mismatched;
      if (err / tol > worst_ratio) {
        worst_ratio = err / tol;
        std::ostringstream os;
        os.precision(17);
        os << "at x = " << p.x[0][static_cast<std::size_t>(i)];
        if (f.arity == 2) os << ", " << p.x[1][static_cast<std::size_t>(i)];
        os << " along t = " << p.t[0][static_cast<std::size_t>(i)];
        if (f.arity == 2) os << ", " << p.t[1][static_cast<std::size_t>(i)];
        os << " (step " << h << "): difference " << fine << " (coarse " << coarse << "), JVP " << d << ", tolerance " << tol;
        v.worst = os.str();
      }
    }
  }
  return v;
}

}  // namespace

// The traits the random programs read (OpDef::discontinuity, OpDef::branch_cut) claim no fewer
// jumps than each function of the op list has: at 8192 points of its Domain, in f64 and (where
// its op takes it) c128, a quarter of them next to where such ops jump, every central difference
// whose stencil the trait calls smooth agrees with the JVP. An op declared smooth that jumps or
// has a kink (or a complex function without its cut) fails here, by name.
TEST(ListedFunctions, EachIsSmoothWhereItsTraitsSaySo) {
  std::uint64_t seed = 1;
  for (const tt::ListedFunction& f : tt::listed_functions()) {
    for (tf::DType dtype : {tf::DType::F64, tf::DType::C128}) {
      if (!takes(f.kind, dtype)) continue;
      SCOPED_TRACE(std::string(f.name) + " on " + tf::dtype_name(dtype));
      const Verdict v = difference_against_jvp(f, dtype, false, seed++);
      EXPECT_EQ(v.mismatched, 0) << v.mismatched << " of " << v.compared << " differences disagree with the JVP where "
                                 << f.name << "'s traits say it is smooth; worst " << v.worst;
      EXPECT_GE(v.compared * 2, kSamples) << "the traits leave too few points to compare";
    }
  }
}

// The check above sees the jumps, kinks and cuts the traits declare: with the traits ignored, it
// fails for each of these ops.
TEST(ListedFunctions, TheSmoothnessCheckSeesUndeclaredJumps) {
  const std::pair<tf::OpKind, tf::DType> declared[] = {
      {tf::OpKind::Floor, tf::DType::F64}, {tf::OpKind::Round, tf::DType::F64},    {tf::OpKind::Frac, tf::DType::F64},
      {tf::OpKind::Abs, tf::DType::F64},   {tf::OpKind::Sign, tf::DType::F64},     {tf::OpKind::Fmod, tf::DType::F64},
      {tf::OpKind::Remainder, tf::DType::F64}, {tf::OpKind::Hypot, tf::DType::F64}, {tf::OpKind::Log, tf::DType::C128},
      {tf::OpKind::Sqrt, tf::DType::C128},
      {tf::OpKind::Log1p, tf::DType::C128}, {tf::OpKind::Acosh, tf::DType::C128},
  };
  for (const auto& [kind, dtype] : declared) {
    const tt::ListedFunction& f = tt::listed_function(kind);
    SCOPED_TRACE(std::string(f.name) + " on " + tf::dtype_name(dtype));
    EXPECT_GT(difference_against_jvp(f, dtype, true, 99).mismatched, 0);
  }
}
