// Indicators of where a random program is not smooth (fuzz_internal.hpp, listed_functions.hpp).
// The op list's functions (FuzzOp::Unary and Binary) get theirs from their op's definition
// (OpDef::discontinuity, OpDef::branch_cut: function_jump_indicators and function_jump_margins);
// the hand-written FuzzOps below from their cases here.
#include <algorithm>
#include <limits>

#include "fuzz_internal.hpp"
#include "tenferro/ops/op_def.hpp"

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

/// The smallest element, as an f64 scalar; +inf for an empty tensor (no element near a jump).
Traced smallest(const Traced& t) {
  if (t.type().numel() == 0) return constant(t, Tensor::scalar(std::numeric_limits<double>::infinity()));
  std::vector<std::int64_t> axes(t.rank());
  for (std::size_t i = 0; i < axes.size(); ++i) axes[i] = static_cast<std::int64_t>(i);
  return astype(min(t, axes), DType::F64);
}

/// The coordinates of complex z along a cut's axis and across it.
struct AxisCoordinates {
  Traced along, across;
};
AxisCoordinates axis_coordinates(const Traced& z, const BranchCut& cut) {
  return cut.imaginary ? AxisCoordinates{imag(z), real(z)} : AxisCoordinates{real(z), imag(z)};
}
/// Where z lies beyond the ends of the cut (along < from, or along >= to): both comparisons agree.
Traced beyond_ends(const AxisCoordinates& c, const BranchCut& cut) {
  return eq(lt(c.along, full_like(c.along, cut.from)), lt(c.along, full_like(c.along, cut.to)));
}
/// Which side of the cut z lies on: true beyond its ends and below (left of) its axis.
Traced cut_side(const Traced& z, const BranchCut& cut) {
  const AxisCoordinates c = axis_coordinates(z, cut);
  const Traced beyond = beyond_ends(c, cut);
  return where(beyond, lt(c.across, full_like(c.across, 0.0)), beyond);
}
/// The distance of z from the cut relative to its size, over the elements beyond the cut's ends.
Traced cut_margin(const Traced& z, const BranchCut& cut) {
  const AxisCoordinates c = axis_coordinates(z, cut);
  return smallest(where(beyond_ends(c, cut), abs(c.across) / (abs(z) + 1.0), full_like(c.across, 1.0)));
}
/// The distance of x's elements from the nearest integer, in f64.
Traced distance_to_integer(const Traced& x) {
  const Traced x64 = astype(x, DType::F64);
  const Traced frac = x64 - floor(x64);
  return smallest(minimum(frac, 1.0 - frac));
}
/// (y, x) as a point: where x < 0, the side of the x axis (atan2's cut).
Traced negative_x_axis_side(const Traced& y, const Traced& x) {
  const Traced left = lt(x, full_like(x, 0.0));
  return where(left, lt(y, full_like(y, 0.0)), left);
}
/// The branch cut of the complex log (of sqrt, rsqrt and pow through it): pow's base.
constexpr BranchCut kLogCut{false, 0.0};
}  // namespace

std::vector<Traced> function_jump_indicators(OpKind kind, const std::vector<Traced>& args, bool kinks) {
  const OpDef& d = op_def(kind);
  std::vector<Traced> out;
  for (const Traced& z : args) {
    if (d.branch_cut && is_complex(z.dtype())) out.push_back(cut_side(z, *d.branch_cut));
  }
  // Jumps on the real line: float operands (integer ones never move; complex ones have cuts).
  if (!std::all_of(args.begin(), args.end(), [](const Traced& x) { return is_floating(x.dtype()); })) return out;
  // floor and ceil together: one changes where the operand reaches an integer, the other where it
  // leaves one, so every step of floor, ceil, trunc, round and frac changes one of them.
  auto steps_of = [&](const Traced& x) {
    out.push_back(floor(x));
    out.push_back(ceil(x));
  };
  switch (d.discontinuity) {
    case Discontinuity::None: break;
    case Discontinuity::KinkAtZero:
      for (const Traced& x : args) {
        if (kinks) out.push_back(sign(x));
      }
      break;
    case Discontinuity::JumpAtZero:
      for (const Traced& x : args) out.push_back(sign(x));
      break;
    case Discontinuity::JumpsAtIntegers: steps_of(args.at(0)); break;
    case Discontinuity::JumpsAtHalfIntegers: steps_of(args.at(0) + 0.5); break;
    case Discontinuity::JumpsAtQuotientIntegers: steps_of(args.at(0) / args.at(1)); break;
    case Discontinuity::JumpsAtNegativeXAxis: out.push_back(negative_x_axis_side(args.at(0), args.at(1))); break;
  }
  return out;
}

std::vector<Traced> function_jump_margins(OpKind kind, const std::vector<Traced>& args, bool kinks) {
  const OpDef& d = op_def(kind);
  std::vector<Traced> out;
  for (const Traced& z : args) {
    if (d.branch_cut && is_complex(z.dtype())) out.push_back(cut_margin(z, *d.branch_cut));
  }
  if (!std::all_of(args.begin(), args.end(), [](const Traced& x) { return is_floating(x.dtype()); })) return out;
  switch (d.discontinuity) {
    case Discontinuity::None: break;
    case Discontinuity::KinkAtZero:
      for (const Traced& x : args) {
        if (kinks) out.push_back(smallest(abs(x)));
      }
      break;
    case Discontinuity::JumpAtZero:
      for (const Traced& x : args) out.push_back(smallest(abs(x)));
      break;
    case Discontinuity::JumpsAtIntegers: out.push_back(distance_to_integer(args.at(0))); break;
    case Discontinuity::JumpsAtHalfIntegers: out.push_back(distance_to_integer(astype(args.at(0), DType::F64) + 0.5)); break;
    case Discontinuity::JumpsAtQuotientIntegers: out.push_back(distance_to_integer(args.at(0) / args.at(1))); break;
    case Discontinuity::JumpsAtNegativeXAxis: {
      // |y| where x < 0, relative to the point's size.
      const Traced y = astype(args.at(0), DType::F64), x = astype(args.at(1), DType::F64);
      const Traced left = lt(x, full_like(x, 0.0));
      out.push_back(smallest(where(left, abs(y) / (abs(x) + 1.0), full_like(y, 1.0))));
      break;
    }
  }
  return out;
}

namespace {
std::vector<Traced> args_of(const FuzzNode& n, const std::vector<Traced>& values) {
  std::vector<Traced> args;
  for (int a : n.args) args.push_back(values[static_cast<std::size_t>(a)]);
  return args;
}
bool listed(const FuzzNode& n) { return n.op == FuzzOp::Unary || n.op == FuzzOp::Binary; }
}  // namespace

std::vector<Traced> jump_indicators(const RandomProgram& p, const std::vector<Traced>& values, bool kinks) {
  std::vector<Traced> out;
  const std::size_t inputs = p.inputs.size();
  for (std::size_t k = 0; k < p.nodes.size(); ++k) {
    const FuzzNode& n = p.nodes[k];
    const Traced& v = values[inputs + k];
    auto arg = [&](std::size_t i) -> const Traced& { return values[static_cast<std::size_t>(n.args[i])]; };
    if (listed(n)) {
      for (Traced& t : function_jump_indicators(n.function, args_of(n, values), kinks)) out.push_back(std::move(t));
      continue;
    }
    const bool compare = n.op >= FuzzOp::Eq && n.op <= FuzzOp::Ge;
    if (compare || n.op == FuzzOp::Argmax || n.op == FuzzOp::Argmin || (n.op == FuzzOp::Astype && !is_inexact(n.dtype))) {
      out.push_back(v);
      continue;
    }
    if (n.op == FuzzOp::Pow && is_complex(arg(0).dtype())) {  // the base's side of the log's cut
      out.push_back(cut_side(arg(0), kLogCut));
      continue;
    }
    if (!kinks) continue;
    const bool real_args = std::all_of(n.args.begin(), n.args.end(), [&](int a) {
      return !is_complex(values[static_cast<std::size_t>(a)].dtype());
    });
    if (!real_args) continue;  // the complex kinks have measure zero
    switch (n.op) {
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
      case FuzzOp::Unary: case FuzzOp::Binary:  // above
      case FuzzOp::Argmax: case FuzzOp::Argmin: case FuzzOp::DetachedIdentity:
      case FuzzOp::Sigmoid: case FuzzOp::Softplus: case FuzzOp::Trigamma: case FuzzOp::Add: case FuzzOp::Sub:
      case FuzzOp::Mul: case FuzzOp::Div: case FuzzOp::Pow: case FuzzOp::Logaddexp: case FuzzOp::Eq:
      case FuzzOp::Ne: case FuzzOp::Lt: case FuzzOp::Le: case FuzzOp::Gt: case FuzzOp::Ge: case FuzzOp::AddScalar:
      case FuzzOp::SubScalar: case FuzzOp::MulScalar: case FuzzOp::DivScalar: case FuzzOp::ScalarSub:
      case FuzzOp::ScalarDiv: case FuzzOp::Where: case FuzzOp::FullLike: case FuzzOp::Transpose:
      case FuzzOp::TransposeAll: case FuzzOp::Reshape: case FuzzOp::Slice: case FuzzOp::Pad: case FuzzOp::Cumsum:
      case FuzzOp::Reverse: case FuzzOp::Cumprod: case FuzzOp::DynamicSlice: case FuzzOp::DynamicUpdateSlice:
      case FuzzOp::Dropout: case FuzzOp::Gather: case FuzzOp::Scatter: case FuzzOp::Conv: case FuzzOp::Scan:
      case FuzzOp::Cond: case FuzzOp::Map: case FuzzOp::Checkpoint: case FuzzOp::Rematerialize: case FuzzOp::BroadcastTo:
      case FuzzOp::Astype: case FuzzOp::SumAll: case FuzzOp::Sum: case FuzzOp::Prod: case FuzzOp::MeanAll:
      case FuzzOp::Mean: case FuzzOp::Var: case FuzzOp::Logsumexp: case FuzzOp::Softmax: case FuzzOp::LogSoftmax:
      case FuzzOp::DotGeneral: case FuzzOp::Matmul: case FuzzOp::CrossEntropy:
        break;  // smooth where defined (softplus and logsumexp hide their max: its kinks cancel)
    }
  }
  return out;
}

}  // namespace tenferro::testing

namespace tenferro::testing {

std::vector<Traced> jump_margins(const RandomProgram& p, const std::vector<Traced>& values, bool kinks) {
  std::vector<Traced> out;
  for (std::size_t k = 0; k < p.nodes.size(); ++k) {
    const FuzzNode& n = p.nodes[k];
    auto arg = [&](std::size_t i) -> const Traced& { return values[static_cast<std::size_t>(n.args[i])]; };
    // Integer and bool operands compare exactly; their conversions from floats have margins.
    const bool inexact = std::all_of(n.args.begin(), n.args.end(), [&](int a) {
      return is_inexact(values[static_cast<std::size_t>(a)].dtype());
    });
    if (!inexact) continue;
    if (listed(n)) {
      for (Traced& t : function_jump_margins(n.function, args_of(n, values), kinks)) out.push_back(std::move(t));
      continue;
    }
    const bool compare = n.op >= FuzzOp::Eq && n.op <= FuzzOp::Ge;
    if (compare && n.args[0] != n.args[1]) {
      const Traced gap = abs(arg(0) - arg(1)), size = abs(arg(0)) + abs(arg(1));
      out.push_back(smallest(gap / (size + 1.0)));
    } else if (n.op == FuzzOp::Astype && n.dtype == DType::Bool) {
      out.push_back(smallest(abs(arg(0))));
    } else if (n.op == FuzzOp::Pow && is_complex(arg(0).dtype())) {
      out.push_back(cut_margin(arg(0), kLogCut));
    } else if (n.op == FuzzOp::Astype && n.dtype == DType::I64 && !is_complex(arg(0).dtype())) {
      // Conversion truncates: it jumps at every integer.
      out.push_back(distance_to_integer(arg(0)));
    } else if ((kinks || n.op == FuzzOp::Argmax || n.op == FuzzOp::Argmin) && !is_complex(arg(0).dtype())) {
      auto gap = [&](const Traced& a, const Traced& b) {
        return smallest(abs(a - b) / (abs(a) + abs(b) + 1.0));
      };
      if ((n.op == FuzzOp::Maximum || n.op == FuzzOp::Minimum) && n.args[0] != n.args[1]) {
        out.push_back(gap(arg(0), arg(1)));
      } else if (n.op == FuzzOp::Clamp) {
        out.push_back(gap(arg(0), arg(1)));
        out.push_back(gap(arg(0), arg(2)));
      } else if (n.op == FuzzOp::Relu) {
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
