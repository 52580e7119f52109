// Indicators of where a random program is not smooth (fuzz_internal.hpp).
#include <algorithm>
#include <limits>

#include "fuzz_internal.hpp"

namespace tenferro::testing {

namespace {
/// Reductions that pick an extremum: their derivative (or index) jumps where it is attained twice.
bool extremum_op(FuzzOp op) {
  return op == FuzzOp::Max || op == FuzzOp::Min || op == FuzzOp::MaxWithIndex || op == FuzzOp::MinWithIndex ||
         op == FuzzOp::Argmax || op == FuzzOp::Argmin;
}

/// x's positions that hold its maximum (or minimum) over `axes`: the branch a max reduction took.
Traced extremum_positions(const Traced& x, const Traced& reduced, std::vector<std::int64_t> axes) {
  Shape keep = x.shape();
  for (auto& a : axes) {
    if (a < 0) a += static_cast<std::int64_t>(x.rank());
    keep[static_cast<std::size_t>(a)] = 1;
  }
  return eq(x, broadcast_to(reshape(reduced, keep), x.shape()));
}
}  // namespace

std::vector<Traced> jump_indicators(const RandomProgram& p, const std::vector<Traced>& values, bool kinks) {
  std::vector<Traced> out;
  const std::size_t inputs = p.inputs.size();
  for (std::size_t k = 0; k < p.nodes.size(); ++k) {
    const FuzzNode& n = p.nodes[k];
    const Traced& v = values[inputs + k];
    auto arg = [&](std::size_t i) -> const Traced& { return values[static_cast<std::size_t>(n.args[i])]; };
    const bool compare = n.op >= FuzzOp::Eq && n.op <= FuzzOp::Ge;
    if (compare || n.op == FuzzOp::Sign || n.op == FuzzOp::Argmax || n.op == FuzzOp::Argmin ||
        (n.op == FuzzOp::Astype && !is_inexact(n.dtype))) {
      out.push_back(v);
      continue;
    }
    // The branch cut of the complex log (and of sqrt, rsqrt and pow through it) along the
    // negative real axis (below -1 for log1p): which side of it the operand lies on.
    if (n.op == FuzzOp::Floor || n.op == FuzzOp::Round || n.op == FuzzOp::Ceil || n.op == FuzzOp::Trunc) {
      // piecewise constant: the value jumps
      out.push_back(v);
      continue;
    }
    if (n.op == FuzzOp::Frac) {  // x - trunc(x): jumps where trunc does
      out.push_back(trunc(arg(0)));
      continue;
    }
    if (n.op == FuzzOp::Remainder || n.op == FuzzOp::Fmod) {  // jumps where a / b crosses an integer
      out.push_back(n.op == FuzzOp::Fmod ? trunc(arg(0) / arg(1)) : floor(arg(0) / arg(1)));
      continue;
    }
    if (n.op == FuzzOp::Atan2) {  // the cut along the negative x axis: the sign of y where x < 0
      const Traced left = lt(arg(1), full_like(arg(1), 0.0));
      out.push_back(where(left, lt(arg(0), full_like(arg(0), 0.0)), left));
      continue;
    }
    // atan and asinh cut the imaginary axis beyond +-i: the side of it, where |Im z| > 1.
    if ((n.op == FuzzOp::Atan || n.op == FuzzOp::Asinh) && is_complex(arg(0).dtype())) {
      const Traced re = real(arg(0)), im = imag(arg(0));
      const Traced beyond = gt(abs(im), full_like(im, 1.0));
      out.push_back(where(beyond, lt(re, full_like(re, 0.0)), beyond));
      continue;
    }
    const bool cut = n.op == FuzzOp::Log || n.op == FuzzOp::Log1p || n.op == FuzzOp::Sqrt || n.op == FuzzOp::Rsqrt ||
                     n.op == FuzzOp::Pow || n.op == FuzzOp::Log2 || n.op == FuzzOp::Log10;
    if (cut && is_complex(arg(0).dtype())) {
      const Traced re = real(arg(0)), im = imag(arg(0));
      const Traced left = lt(re, full_like(re, n.op == FuzzOp::Log1p ? -1.0 : 0.0));
      out.push_back(where(left, lt(im, full_like(im, 0.0)), left));
      continue;
    }
    if (!kinks) continue;
    const bool real_args = std::all_of(n.args.begin(), n.args.end(), [&](int a) {
      return !is_complex(values[static_cast<std::size_t>(a)].dtype());
    });
    if (!real_args) continue;  // the complex kinks (abs and sign at 0) have measure zero
    switch (n.op) {
      case FuzzOp::Abs: case FuzzOp::I0e: case FuzzOp::I1e: out.push_back(sign(arg(0))); break;
      case FuzzOp::Relu: out.push_back(gt(arg(0), full_like(arg(0), 0.0))); break;
      case FuzzOp::Sort: out.push_back(argsort(arg(0), n.ints.at(0), n.ints.at(1) != 0)); break;  // ties
      case FuzzOp::Maximum:
      case FuzzOp::Minimum: out.push_back(gt(arg(0), arg(1))); break;
      case FuzzOp::Clamp:
        out.push_back(lt(arg(0), arg(1)));
        out.push_back(gt(arg(0), arg(2)));
        break;
      case FuzzOp::Max:
      case FuzzOp::Min: out.push_back(extremum_positions(arg(0), v, n.ints)); break;
      case FuzzOp::MaxWithIndex:
      case FuzzOp::MinWithIndex: out.push_back(extremum_positions(arg(0), v, n.ints)); break;
      case FuzzOp::Argmax: case FuzzOp::Argmin: case FuzzOp::DetachedIdentity:
      case FuzzOp::Neg: case FuzzOp::Exp: case FuzzOp::Log: case FuzzOp::Sin: case FuzzOp::Cos:
      case FuzzOp::Tanh: case FuzzOp::Sqrt: case FuzzOp::Rsqrt: case FuzzOp::Expm1: case FuzzOp::Log1p:
      case FuzzOp::Sign: case FuzzOp::Conj: case FuzzOp::Real: case FuzzOp::Imag: case FuzzOp::Sigmoid:
      case FuzzOp::Softplus: case FuzzOp::Add: case FuzzOp::Sub: case FuzzOp::Mul: case FuzzOp::Div:
      case FuzzOp::Pow: case FuzzOp::Eq: case FuzzOp::Ne: case FuzzOp::Lt: case FuzzOp::Le: case FuzzOp::Gt:
      case FuzzOp::Ge: case FuzzOp::AddScalar: case FuzzOp::SubScalar: case FuzzOp::MulScalar:
      case FuzzOp::DivScalar: case FuzzOp::ScalarSub: case FuzzOp::ScalarDiv: case FuzzOp::Where:
      case FuzzOp::FullLike: case FuzzOp::Transpose: case FuzzOp::TransposeAll: case FuzzOp::Reshape:
      case FuzzOp::Slice: case FuzzOp::Pad: case FuzzOp::Cumsum: case FuzzOp::Reverse: case FuzzOp::Cumprod:
      case FuzzOp::DynamicSlice: case FuzzOp::DynamicUpdateSlice: case FuzzOp::Dropout: case FuzzOp::Gather:
      case FuzzOp::Scatter:
      case FuzzOp::Conv: case FuzzOp::Scan: case FuzzOp::Cond: case FuzzOp::Checkpoint: case FuzzOp::Rematerialize:
      case FuzzOp::BroadcastTo: case FuzzOp::Astype: case FuzzOp::SumAll: case FuzzOp::Sum: case FuzzOp::Prod:
      case FuzzOp::MeanAll: case FuzzOp::Mean: case FuzzOp::Var: case FuzzOp::Logsumexp: case FuzzOp::Softmax:
      case FuzzOp::LogSoftmax: case FuzzOp::DotGeneral: case FuzzOp::Matmul: case FuzzOp::CrossEntropy:
      case FuzzOp::Sinh: case FuzzOp::Cosh: case FuzzOp::Atan: case FuzzOp::Asinh: case FuzzOp::Asin:
      case FuzzOp::Atanh: case FuzzOp::Erf: case FuzzOp::Erfc: case FuzzOp::Exp2: case FuzzOp::Log2:
      case FuzzOp::Log10: case FuzzOp::Floor: case FuzzOp::Round: case FuzzOp::Atan2: case FuzzOp::Hypot:
      case FuzzOp::Logaddexp: case FuzzOp::Remainder: case FuzzOp::Lgamma: case FuzzOp::Digamma:
      case FuzzOp::Erfinv: case FuzzOp::I1: case FuzzOp::Tan: case FuzzOp::Acos: case FuzzOp::Acosh:
      case FuzzOp::Cbrt: case FuzzOp::Ceil: case FuzzOp::Trunc: case FuzzOp::Frac: case FuzzOp::I0: case FuzzOp::Trigamma:
      case FuzzOp::Fmod:
        break;  // smooth where defined (softplus and logsumexp hide their max: its kinks cancel)
    }
  }
  return out;
}

}  // namespace tenferro::testing

namespace tenferro::testing {

std::vector<Traced> jump_margins(const RandomProgram& p, const std::vector<Traced>& values, bool kinks) {
  std::vector<Traced> out;
  // The smallest element, as an f64 scalar; +inf for an empty tensor (no element near a jump).
  auto smallest = [](const Traced& t) {
    if (t.type().numel() == 0) return constant(t, Tensor::scalar(std::numeric_limits<double>::infinity()));
    std::vector<std::int64_t> axes(t.rank());
    for (std::size_t i = 0; i < axes.size(); ++i) axes[i] = static_cast<std::int64_t>(i);
    return astype(min(t, axes), DType::F64);
  };
  for (std::size_t k = 0; k < p.nodes.size(); ++k) {
    const FuzzNode& n = p.nodes[k];
    auto arg = [&](std::size_t i) -> const Traced& { return values[static_cast<std::size_t>(n.args[i])]; };
    const bool compare = n.op >= FuzzOp::Eq && n.op <= FuzzOp::Ge;
    // Integer and bool operands compare exactly; their conversions from floats have margins.
    const bool inexact = std::all_of(n.args.begin(), n.args.end(), [&](int a) {
      return is_inexact(values[static_cast<std::size_t>(a)].dtype());
    });
    if (!inexact) continue;
    if (compare && n.args[0] != n.args[1]) {
      const Traced gap = abs(arg(0) - arg(1)), size = abs(arg(0)) + abs(arg(1));
      out.push_back(smallest(gap / (size + 1.0)));
    } else if (n.op == FuzzOp::Sign || (n.op == FuzzOp::Astype && n.dtype == DType::Bool)) {
      out.push_back(smallest(abs(arg(0))));
    } else if ((n.op == FuzzOp::Floor || n.op == FuzzOp::Round || n.op == FuzzOp::Remainder || n.op == FuzzOp::Ceil ||
                n.op == FuzzOp::Trunc || n.op == FuzzOp::Frac || n.op == FuzzOp::Fmod) &&
               !is_complex(arg(0).dtype())) {
      // Distance to the nearest jump: integers (floor, ceil, trunc, frac, and a / b for remainder and
      // fmod), half-integers (round).
      const bool quotient = n.op == FuzzOp::Remainder || n.op == FuzzOp::Fmod;
      const Traced x = astype(quotient ? arg(0) / arg(1) : arg(0), DType::F64);
      const Traced shifted = n.op == FuzzOp::Round ? x + 0.5 : x;
      const Traced frac = shifted - floor(shifted);
      out.push_back(smallest(minimum(frac, 1.0 - frac)));
    } else if (n.op == FuzzOp::Atan2) {
      // |y| where x < 0 (the cut), relative to the point's size.
      const Traced y = astype(arg(0), DType::F64), x = astype(arg(1), DType::F64);
      const Traced left = lt(x, full_like(x, 0.0));
      out.push_back(smallest(where(left, abs(y) / (abs(x) + 1.0), full_like(y, 1.0))));
    } else if (n.op == FuzzOp::Astype && n.dtype == DType::I64 && !is_complex(arg(0).dtype())) {
      // Conversion truncates: it jumps at every integer.
      const Traced x = astype(arg(0), DType::F64);
      const Traced frac = abs(x - astype(astype(x, DType::I64), DType::F64));
      out.push_back(smallest(minimum(frac, 1.0 - frac)));
    } else if ((kinks || n.op == FuzzOp::Argmax || n.op == FuzzOp::Argmin) && !is_complex(arg(0).dtype())) {
      auto gap = [&](const Traced& a, const Traced& b) {
        return smallest(abs(a - b) / (abs(a) + abs(b) + 1.0));
      };
      if ((n.op == FuzzOp::Maximum || n.op == FuzzOp::Minimum) && n.args[0] != n.args[1]) {
        out.push_back(gap(arg(0), arg(1)));
      } else if (n.op == FuzzOp::Clamp) {
        out.push_back(gap(arg(0), arg(1)));
        out.push_back(gap(arg(0), arg(2)));
      } else if (n.op == FuzzOp::Abs || n.op == FuzzOp::Relu || n.op == FuzzOp::I0e || n.op == FuzzOp::I1e) {
        out.push_back(smallest(abs(arg(0))));
      } else if (extremum_op(n.op) && arg(0).type().numel() > 1) {
        // The gap between the extremum and the runner-up (0 when it is attained twice).
        const Traced& x = arg(0);
        const bool is_max = n.op == FuzzOp::Max || n.op == FuzzOp::MaxWithIndex || n.op == FuzzOp::Argmax;
        const Traced extremum = is_max ? max(x, n.ints) : min(x, n.ints);
        const Traced at = extremum_positions(x, extremum, n.ints);
        const Traced others = where(at, full_like(x, is_max ? -1e300 : 1e300), x);
        const Traced runner_up = is_max ? max(others, n.ints) : min(others, n.ints);
        out.push_back(smallest(abs(extremum - runner_up) / (abs(extremum) + 1.0)));
        // Attained twice: `at` marks more than one element of some reduced slice.
        const Traced count = sum(astype(at, DType::F64), n.ints);
        out.push_back(smallest(2.0 - count));  // <= 0 exactly where the extremum is attained twice
      }
    }
  }
  return out;
}

}  // namespace tenferro::testing
