// The random-program generator. It builds a program call by call while tracing it, so a call
// the traced API rejects (a typed ShapeError or DTypeError: a dtype an op does not take, shapes
// that do not broadcast) is dropped and another is drawn; any other exception is kept in the
// program, whose check then reports it. Choices are biased towards what finds bugs: size-1 axes,
// broadcasting, recent values (deep chains), several uses of one value (fan-out), and operands
// inside the domain of the ops that have a restricted one.
//
// The op list's functions (U and B entries of tenferro/op_list.hpp) are drawn from the list
// itself (listed_functions.hpp): each with the weight of its kind of op, on an operand of a dtype
// its op's shape rule takes, moved into its op's Domain (in_domain). A new entry of the list is
// drawn with no edit here; other calls are the hand-written table kHandWritten.
#include <algorithm>
#include <numeric>
#include <random>

#include "fuzz_internal.hpp"
#include "tenferro/ops/op_def.hpp"
#include "tenferro/ops/record.hpp"

namespace tenferro::testing {

namespace {

struct Weighted {
  FuzzOp op;
  int weight;
  OpKind function = OpKind::Neg;  // Unary and Binary: the op list's function
};

// How often each hand-written op is drawn (relative). Elementwise ops dominate, as in real
// programs.
const std::vector<Weighted> kHandWritten = {
    {FuzzOp::Sigmoid, 2},  {FuzzOp::Relu, 2},       {FuzzOp::Softplus, 2},   {FuzzOp::Add, 6},
    {FuzzOp::Sub, 4},
    {FuzzOp::Mul, 6},      {FuzzOp::Div, 3},        {FuzzOp::Pow, 2},        {FuzzOp::Maximum, 2},
    {FuzzOp::Minimum, 2},  {FuzzOp::Eq, 1},         {FuzzOp::Ne, 1},         {FuzzOp::Lt, 1},
    {FuzzOp::Le, 1},       {FuzzOp::Gt, 1},         {FuzzOp::Ge, 1},         {FuzzOp::AddScalar, 2},
    {FuzzOp::SubScalar, 1}, {FuzzOp::MulScalar, 2}, {FuzzOp::DivScalar, 1},  {FuzzOp::ScalarSub, 1},
    {FuzzOp::ScalarDiv, 1}, {FuzzOp::Where, 3},     {FuzzOp::Clamp, 2},      {FuzzOp::FullLike, 1},
    {FuzzOp::Transpose, 3}, {FuzzOp::TransposeAll, 1}, {FuzzOp::Reshape, 3}, {FuzzOp::BroadcastTo, 3},
    {FuzzOp::Astype, 3},   {FuzzOp::SumAll, 1},     {FuzzOp::Sum, 3},        {FuzzOp::Prod, 2},
    {FuzzOp::Max, 2},      {FuzzOp::Min, 2},        {FuzzOp::MeanAll, 1},    {FuzzOp::Mean, 2},
    {FuzzOp::Var, 2},      {FuzzOp::Logsumexp, 2},  {FuzzOp::Softmax, 2},    {FuzzOp::LogSoftmax, 2},
    {FuzzOp::DotGeneral, 4}, {FuzzOp::Matmul, 3},   {FuzzOp::CrossEntropy, 1},
    {FuzzOp::MaxWithIndex, 1}, {FuzzOp::MinWithIndex, 1}, {FuzzOp::Argmax, 1}, {FuzzOp::Argmin, 1},
    {FuzzOp::DetachedIdentity, 1}, {FuzzOp::Logaddexp, 1}, {FuzzOp::Trigamma, 1},
    {FuzzOp::Slice, 2},    {FuzzOp::Pad, 2},        {FuzzOp::Cumsum, 2},     {FuzzOp::Reverse, 1},
    {FuzzOp::Cumprod, 1},  {FuzzOp::Sort, 1},       {FuzzOp::DynamicSlice, 1}, {FuzzOp::DynamicUpdateSlice, 1},
    {FuzzOp::Dropout, 1},  {FuzzOp::Conv, 2},       {FuzzOp::Gather, 1},     {FuzzOp::Scatter, 1},
    {FuzzOp::Scan, 1},     {FuzzOp::Cond, 1},       {FuzzOp::Checkpoint, 1},  {FuzzOp::Rematerialize, 1},
    {FuzzOp::Map, 1},
};

/// Every op the generator draws: the hand-written ones, then each function of the op list, the
/// oldest ones (whose formulas name one of the executor's own loops, ElementFast: exp, log, abs,
/// ...) twice as often as the others, as real programs call them more.
const std::vector<Weighted>& drawn_ops() {
  static const std::vector<Weighted> ops = [] {
    std::vector<Weighted> all = kHandWritten;
    for (const ListedFunction& f : listed_functions()) {
      const OpDef& d = op_def(f.kind);
      const bool fast = d.formula && d.formula->fast != ElementFast::None;
      all.push_back({f.arity == 1 ? FuzzOp::Unary : FuzzOp::Binary, fast ? 2 : 1, f.kind});
    }
    return all;
  }();
  return ops;
}

/// Whether op `kind` (of one or two operands) takes operands of dtype `d`: its shape rule's
/// verdict on rank-0 operands.
bool takes(OpKind kind, DType d) {
  const OpDef& def = op_def(kind);
  const std::vector<TensorType> operands(def.arity(), TensorType{d, {}});
  try {
    def.shape_rule(operands, OpAttrs{});
    return true;
  } catch (const DTypeError&) {
    return false;
  }
}

bool broadcastable(const Shape& a, const Shape& b) {
  const std::size_t r = std::max(a.size(), b.size());
  for (std::size_t i = 0; i < r; ++i) {
    const std::int64_t x = i < r - a.size() ? 1 : a[i - (r - a.size())];
    const std::int64_t y = i < r - b.size() ? 1 : b[i - (r - b.size())];
    if (x != y && x != 1 && y != 1) return false;
  }
  return true;
}

/// Whether `from` broadcasts to exactly `to` (what broadcast_to and clamp's bounds need).
bool broadcasts_to(const Shape& from, const Shape& to) {
  if (from.size() > to.size()) return false;
  for (std::size_t i = 0; i < from.size(); ++i) {
    const std::int64_t x = from[i], y = to[to.size() - from.size() + i];
    if (x != y && x != 1) return false;
  }
  return true;
}

class Generator {
 public:
  Generator(std::uint64_t seed, const GenerateOptions& options) : rng_(seed), options_(options) {
    program_.seed = seed;
  }

  RandomProgram run() {
    make_inputs();
    const int target = options_.min_nodes + static_cast<int>(rng_() % static_cast<std::uint64_t>(
                                                                 options_.max_nodes - options_.min_nodes + 1));
    int attempts = 0;
    while (static_cast<int>(program_.nodes.size()) < target && attempts++ < 40 * target && !broken_) add_random_node();
    choose_outputs();
    return program_;
  }

 private:
  // ---- random choices ----
  double uniform() { return std::uniform_real_distribution<double>(0.0, 1.0)(rng_); }
  bool chance(double p) { return uniform() < p; }
  std::size_t below(std::size_t n) { return static_cast<std::size_t>(rng_() % n); }
  std::int64_t pick_of(std::initializer_list<std::int64_t> xs) { return *(xs.begin() + below(xs.size())); }

  const TensorType& type(int v) const { return values_.at(static_cast<std::size_t>(v)).type(); }
  int count() const { return static_cast<int>(values_.size()); }

  /// A value, biased towards the newest (deep chains) but reaching back to any (fan-out).
  int pick_value() {
    if (chance(0.5)) return std::max(0, count() - 1 - static_cast<int>(below(3)));
    return static_cast<int>(below(values_.size()));
  }
  /// A value satisfying `ok`, preferring the newest; -1 if none.
  template <class Ok>
  int pick_value_where(Ok ok) {
    std::vector<int> c;
    for (int v = 0; v < count(); ++v) {
      if (ok(v)) c.push_back(v);
    }
    if (c.empty()) return -1;
    if (chance(0.5)) return c[c.size() - 1 - below(std::min<std::size_t>(c.size(), 3))];
    return c[below(c.size())];
  }
  /// A partner for a broadcasting binary op with `a`: usually of a's dtype.
  int pick_partner(int a) {
    const bool same_dtype = chance(0.9);
    int b = pick_value_where([&](int v) {
      return broadcastable(type(v).shape, type(a).shape) && (!same_dtype || type(v).dtype == type(a).dtype);
    });
    return b < 0 ? a : b;
  }
  std::vector<std::int64_t> random_axes(std::size_t rank, bool allow_negative = true) {
    std::vector<std::int64_t> axes;
    for (std::size_t i = 0; i < rank; ++i) {
      if (chance(0.5)) axes.push_back(static_cast<std::int64_t>(i));
    }
    std::shuffle(axes.begin(), axes.end(), rng_);
    for (auto& a : axes) {
      if (allow_negative && chance(0.3)) a -= static_cast<std::int64_t>(rank);
    }
    return axes;
  }

  // ---- inputs ----
  void make_inputs() {
    single_ = chance(options_.single_precision);
    real_ = single_ ? DType::F32 : DType::F64;
    program_.loss_dtype = real_;
    const bool complex = chance(options_.complex_inputs);
    const std::size_t rank = below(4);
    Shape base;
    for (std::size_t i = 0; i < rank; ++i) base.push_back(pick_of({1, 1, 2, 2, 3, 4}));
    if (rank > 0 && chance(options_.large)) base[below(rank)] = pick_of({1500, 4099, 20011});
    // An empty axis, decided by a generator of its own: the other programs stay those of their
    // seeds before empty axes were drawn.
    std::mt19937_64 side(program_.seed ^ 0x9e3779b97f4a7c15ULL);
    if (rank > 0 && std::uniform_real_distribution<double>(0.0, 1.0)(side) < options_.empty) {
      base[static_cast<std::size_t>(side() % rank)] = 0;
    }
    large_ = std::any_of(base.begin(), base.end(), [](std::int64_t d) { return d > 64; });
    const std::size_t n_inputs = 1 + below(3);
    auto trace = std::make_shared<TraceState>();
    for (std::size_t i = 0; i < n_inputs; ++i) {
      // A suffix of the base shape with some axes set to 1: every pair of inputs broadcasts.
      Shape shape(base.begin() + static_cast<std::ptrdiff_t>(below(rank + 1)), base.end());
      for (auto& d : shape) {
        if (chance(0.3)) d = 1;
      }
      const DType dtype = complex && (i == 0 || chance(0.5)) ? complex_dtype(real_) : real_;
      Tensor t(TensorType{dtype, shape});
      std::uniform_real_distribution<double> u(-1.0, 1.0);
      for (std::int64_t k = 0; k < t.numel(); ++k) {
        const double re = u(rng_), im = u(rng_);
        if (dtype == DType::F32) t.data<float>()[k] = static_cast<float>(re);
        else if (dtype == DType::F64) t.data<double>()[k] = re;
        else if (dtype == DType::C64) t.data<c64>()[k] = c64(static_cast<float>(re), static_cast<float>(im));
        else t.data<c128>()[k] = c128(re, im);
      }
      program_.inputs.push_back(t);
      values_.emplace_back(trace, trace->builder.add_input(TensorKey{"x" + std::to_string(i), t.type()}));
    }
  }

  // ---- nodes ----
  /// Traces `n` on the values so far; keeps it (and returns its value) unless the API rejects it
  /// with a typed error or its result is too large.
  int add(FuzzNode n) {
    try {
      Traced t = apply_node(n, values_);
      const std::int64_t limit = large_ ? 60000 : 256;
      if (t.type().numel() > limit) return -1;
      values_.push_back(t);
      program_.nodes.push_back(std::move(n));
      return count() - 1;
    } catch (const ShapeError&) {
      return -1;
    } catch (const DTypeError&) {
      return -1;
    } catch (const ValueError&) {  // a value outside the op's domain (the maximum of an empty axis)
      return -1;
    } catch (...) {
      // Not a documented error for a call: keep it so that the program's check reports it.
      program_.nodes.push_back(std::move(n));
      broken_ = true;
      return -1;
    }
  }
  /// A call of the op list's function of op `kind` on `args` (FuzzOp::Unary or Binary).
  int call(OpKind kind, std::vector<int> args) {
    const FuzzOp op = args.size() == 1 ? FuzzOp::Unary : FuzzOp::Binary;
    return add(FuzzNode{op, std::move(args), {}, {}, DType::F64, 0, kind});
  }
  /// v op s for a scalar op (AddScalar, MulScalar, ...); -1 if v is -1.
  int with_scalar(FuzzOp op, int v, double s) { return v < 0 ? -1 : add(FuzzNode{op, {v}, {}, {}, DType::F64, s}); }

  /// An operand for an op with a restricted domain (a divisor, a power's base): exp(a), which is
  /// positive for real a and off the negative real axis for small imaginary parts. (Operands
  /// near zero make derivatives whose rounding noise, of order eps / a^2, no tolerance can tell
  /// from a wrong rule.) a itself where it is not float or complex.
  int positive(int a) {
    if (!is_inexact(type(a).dtype)) return a;
    const int e = call(OpKind::Exp, {a});
    return e < 0 ? a : e;
  }
  /// An operand well inside the unit disk: tanh(a) / 2 for real a (inside (-1/2, 1/2)), and
  /// a / (a conj(a) + 2) for complex a (of modulus at most 1 / (2 sqrt 2), so that the branch cuts
  /// of asin, atanh, atan, ... on the axes beyond +-1 and +-i stay far); -1 for integer a.
  int centered(int a) {
    if (is_floating(type(a).dtype)) return with_scalar(FuzzOp::MulScalar, call(OpKind::Tanh, {a}), 0.5);
    if (!is_complex(type(a).dtype)) return -1;
    const int c = call(OpKind::Conj, {a});
    const int square = c < 0 ? -1 : add(FuzzNode{FuzzOp::Mul, {a, c}, {}, {}, DType::F64, 0});
    const int denominator = with_scalar(FuzzOp::AddScalar, square, 2.0);
    return denominator < 0 ? -1 : add(FuzzNode{FuzzOp::Div, {a, denominator}, {}, {}, DType::F64, 0});
  }
  /// An operand in `domain` (OpDef::domain) made from a by calls the program records: a itself
  /// (Any, and Steps: the jumps of piecewise constant ops are tracked, indicators.cpp), exp(a)
  /// (Positive), exp(a) + 1 (AboveOne), a centered value (Centered) or one plus it (NearOne); -1
  /// where a has none (an integer a).
  int in_domain(Domain domain, int a) {
    const bool inexact = is_inexact(type(a).dtype);
    switch (domain) {
      case Domain::Any: return a;
      case Domain::Steps: return a;
      case Domain::Positive: return inexact ? positive(a) : -1;
      case Domain::AboveOne: return inexact ? with_scalar(FuzzOp::AddScalar, positive(a), 1.0) : -1;
      case Domain::Centered: return centered(a);
      case Domain::NearOne: return with_scalar(FuzzOp::AddScalar, centered(a), 1.0);
    }
    return -1;
  }
  /// A call of the op list's function `f`: on a value of a dtype its op takes (its shape rule's
  /// verdict), a binary one with a partner (either first), and the operand its op's Domain
  /// describes (the last one, for a binary op) moved into the domain.
  void add_listed(const ListedFunction& f) {
    const int a = pick_value_where([&](int v) { return takes(f.kind, type(v).dtype); });
    if (a < 0) return;
    std::vector<int> args = {a};
    if (f.arity == 2) {
      args.push_back(pick_partner(a));
      if (chance(0.5)) std::swap(args[0], args[1]);
    }
    args.back() = in_domain(op_def(f.kind).domain, args.back());
    if (args.back() < 0) return;
    call(f.kind, std::move(args));
  }
  int boolean_for(int a) {
    int p = pick_value_where([&](int v) { return type(v).dtype == DType::Bool && broadcastable(type(v).shape, type(a).shape); });
    if (p >= 0 && chance(0.7)) return p;
    const int b = pick_partner(a);
    return add(FuzzNode{chance(0.5) ? FuzzOp::Gt : FuzzOp::Le, {a, b}, {}, {}, DType::F64, 0});
  }
  int bound_for(int x, double value) {
    int b = pick_value_where([&](int v) { return v != x && type(v).dtype == type(x).dtype && broadcasts_to(type(v).shape, type(x).shape); });
    if (b >= 0 && chance(0.5)) return b;
    return add(FuzzNode{FuzzOp::FullLike, {x}, {}, {}, DType::F64, value});
  }
  Shape random_reshape(std::int64_t numel) {
    Shape s;
    std::int64_t left = numel;
    const std::size_t rank = below(5);
    for (std::size_t i = 0; i + 1 < rank; ++i) {
      if (left == 0) {  // an empty tensor: any axes, with the last one 0
        s.push_back(static_cast<std::int64_t>(below(3)));
        continue;
      }
      std::vector<std::int64_t> divisors;
      for (std::int64_t d = 1; d <= left && d <= 8; ++d) {
        if (left % d == 0) divisors.push_back(d);
      }
      const std::int64_t d = divisors[below(divisors.size())];
      s.push_back(d);
      left /= d;
    }
    if (rank > 0) s.push_back(left);
    if (rank == 0 && numel != 1) s.push_back(numel);
    std::shuffle(s.begin(), s.end(), rng_);
    return s;
  }
  DotDims random_dot_dims(const Shape& a, const Shape& b) {
    DotDims d;
    std::vector<bool> used_a(a.size()), used_b(b.size());
    for (std::size_t i = 0; i < a.size(); ++i) {
      for (std::size_t j = 0; j < b.size(); ++j) {
        if (used_a[i] || used_b[j] || a[i] != b[j] || !chance(0.4)) continue;
        used_a[i] = used_b[j] = true;
        auto& lhs = chance(0.35) ? d.lhs_batch : d.lhs_contract;
        auto& rhs = &lhs == &d.lhs_batch ? d.rhs_batch : d.rhs_contract;
        lhs.push_back(static_cast<std::int64_t>(i));
        rhs.push_back(static_cast<std::int64_t>(j));
      }
    }
    return d;
  }

  const Weighted& draw_op() {
    const std::vector<Weighted>& ops = drawn_ops();
    int total = 0;
    for (const auto& w : ops) total += w.weight;
    int r = static_cast<int>(below(static_cast<std::size_t>(total)));
    for (const auto& w : ops) {
      if ((r -= w.weight) < 0) return w;
    }
    return ops.back();
  }

  void add_random_node() {
    const Weighted& drawn = draw_op();
    if (drawn.op == FuzzOp::Unary || drawn.op == FuzzOp::Binary) return add_listed(listed_function(drawn.function));
    const FuzzOp op = drawn.op;
    const int a = pick_value();
    const TensorType ta = type(a);
    FuzzNode n{op, {a}, {}, {}, DType::F64, 0};
    const double scalars[] = {0.5, -1.5, 2.0, 3.0, 0.25, -0.75};
    auto is = [&](std::initializer_list<FuzzOp> ops) { return std::find(ops.begin(), ops.end(), op) != ops.end(); };
    if (op == FuzzOp::Trigamma) {  // polygamma(1, x): poles at 0, -1, ...
      n.args = {positive(a)};
    } else if (op == FuzzOp::Logaddexp) {
      n.args = {a, pick_partner(a)};
      if (chance(0.5)) std::swap(n.args[0], n.args[1]);
    } else if (is({FuzzOp::Add, FuzzOp::Sub, FuzzOp::Mul, FuzzOp::Maximum, FuzzOp::Minimum, FuzzOp::Eq, FuzzOp::Ne,
                   FuzzOp::Lt, FuzzOp::Le, FuzzOp::Gt, FuzzOp::Ge})) {
      n.args = {a, pick_partner(a)};
      if (chance(0.5)) std::swap(n.args[0], n.args[1]);
    } else if (op == FuzzOp::Div) {
      n.args = {a, positive(pick_partner(a))};
    } else if (op == FuzzOp::Pow) {
      n.args = {positive(a), pick_partner(a)};
    } else if (is({FuzzOp::AddScalar, FuzzOp::SubScalar, FuzzOp::MulScalar, FuzzOp::DivScalar, FuzzOp::ScalarSub,
                   FuzzOp::FullLike})) {
      n.scalar = scalars[below(6)];
    } else if (op == FuzzOp::ScalarDiv) {
      n.args = {positive(a)};
      n.scalar = scalars[below(6)];
    } else if (op == FuzzOp::Where) {
      const int p = boolean_for(a);
      if (p < 0) return;
      n.args = {p, a, pick_partner(a)};
    } else if (op == FuzzOp::Clamp) {
      const int lo = bound_for(a, -0.5), hi = bound_for(a, 0.6);
      if (lo < 0 || hi < 0) return;
      n.args = {a, lo, hi};
    } else if (op == FuzzOp::Transpose) {
      std::vector<std::int64_t> perm(ta.rank());
      std::iota(perm.begin(), perm.end(), 0);
      std::shuffle(perm.begin(), perm.end(), rng_);
      for (auto& p : perm) {
        if (chance(0.2)) p -= static_cast<std::int64_t>(ta.rank());
      }
      n.ints = perm;
    } else if (op == FuzzOp::Cumsum || op == FuzzOp::Cumprod || op == FuzzOp::Sort) {
      if (ta.rank() == 0 || ta.dtype == DType::Bool) return;
      n.ints = {static_cast<std::int64_t>(below(2 * ta.rank())) - static_cast<std::int64_t>(ta.rank()), chance(0.5) ? 1 : 0};
    } else if (op == FuzzOp::Conv) {
      // [N, C, spatial..] with every spatial axis long enough for a dilated window of 2.
      if (!is_inexact(ta.dtype) || ta.rank() < 3 || ta.shape[1] == 0) return;
      const std::int64_t dilation = chance(0.3) ? 2 : 1, padding = static_cast<std::int64_t>(below(2));
      for (std::size_t d = 2; d < ta.rank(); ++d) {
        if (ta.shape[d] + 2 * padding < dilation + 1) return;
      }
      n.ints = {chance(0.3) ? 2 : 1, padding, dilation};
    } else if (op == FuzzOp::Scan) {
      // A leading axis with at least one step; float or complex values.
      // Reverse or not; half the time binomial checkpointing with 1 to 3 snapshots.
      if (!is_inexact(ta.dtype) || ta.rank() == 0 || ta.shape[0] == 0) return;
      n.ints = {chance(0.5) ? 1 : 0, chance(0.5) ? 1 + static_cast<std::int64_t>(below(3)) : 0};
    } else if (op == FuzzOp::Map) {
      // A leading axis with at least one step; float or complex values.
      if (!is_inexact(ta.dtype) || ta.rank() == 0 || ta.shape[0] == 0) return;
    } else if (op == FuzzOp::Cond) {
      if (!is_inexact(ta.dtype)) return;
      n.ints = {static_cast<std::int64_t>(below(5)) - 1};  // -1 and 3 are clamped
    } else if (op == FuzzOp::Checkpoint) {
      if (!is_inexact(ta.dtype)) return;
      n.ints = {static_cast<std::int64_t>(below(3))};  // the policy: nothing, dots, names
    } else if (op == FuzzOp::Rematerialize) {
      if (!is_inexact(ta.dtype)) return;
      // 1 to 4 ranges, or (one time in three) a memory budget of 2^12 to 2^27 bytes.
      n.ints = {1 + static_cast<std::int64_t>(below(4)), chance(1.0 / 3) ? 12 + static_cast<std::int64_t>(below(16)) : 0};
    } else if (op == FuzzOp::Dropout) {
      if (!is_inexact(ta.dtype)) return;
      n.ints = {static_cast<std::int64_t>(below(1000))};
      n.scalar = chance(0.5) ? 0.5 : 0.1;
    } else if (op == FuzzOp::Gather || op == FuzzOp::Scatter) {
      // An axis of length >= 1, then 1 to 4 positions from -2 to dim + 1 (repeats likely).
      if (ta.rank() == 0 || (op == FuzzOp::Scatter && !is_inexact(ta.dtype))) return;
      const auto axis = static_cast<std::int64_t>(below(ta.rank()));
      const std::int64_t dim = ta.shape[static_cast<std::size_t>(axis)];
      if (dim == 0) return;
      n.ints = {axis};
      if (op == FuzzOp::Scatter) n.ints.push_back(chance(0.5) ? 1 : 0);
      for (std::size_t k = 1 + below(4); k-- > 0;) {
        n.ints.push_back(static_cast<std::int64_t>(below(static_cast<std::size_t>(dim) + 4)) - 2);
      }
    } else if (op == FuzzOp::DynamicSlice || op == FuzzOp::DynamicUpdateSlice) {
      // Per axis a window size and two starts from -2 to dim + 1: out of range ones get clamped.
      std::vector<std::int64_t> starts, sizes, to;
      for (std::int64_t d : ta.shape) {
        sizes.push_back(static_cast<std::int64_t>(below(static_cast<std::size_t>(d) + 1)));
        starts.push_back(static_cast<std::int64_t>(below(static_cast<std::size_t>(d) + 4)) - 2);
        to.push_back(static_cast<std::int64_t>(below(static_cast<std::size_t>(d) + 4)) - 2);
      }
      n.ints = starts;
      n.ints.insert(n.ints.end(), sizes.begin(), sizes.end());
      n.ints.insert(n.ints.end(), to.begin(), to.end());
    } else if (op == FuzzOp::Reverse) {
      n.ints = random_axes(ta.rank());
    } else if (op == FuzzOp::Slice) {
      // Per axis a start, a limit at or after it, and a stride of 1 or 2.
      std::vector<std::int64_t> start, limit, stride;
      for (std::int64_t d : ta.shape) {
        start.push_back(static_cast<std::int64_t>(below(static_cast<std::size_t>(d) + 1)));
        limit.push_back(start.back() + static_cast<std::int64_t>(below(static_cast<std::size_t>(d - start.back()) + 1)));
        stride.push_back(chance(0.3) ? 2 : 1);
      }
      n.ints = start;
      n.ints.insert(n.ints.end(), limit.begin(), limit.end());
      n.ints.insert(n.ints.end(), stride.begin(), stride.end());
    } else if (op == FuzzOp::Pad) {
      // Per axis padding of -1..2 on each side (a cut only where the axis keeps an element) and
      // interior padding of 0 or 1; any padding value.
      std::vector<std::int64_t> low, high, interior;
      for (std::int64_t d : ta.shape) {
        interior.push_back(chance(0.3) ? 1 : 0);
        const std::int64_t length = d + std::max<std::int64_t>(d - 1, 0) * interior.back();
        const std::int64_t least = length >= 3 ? -1 : 0;
        low.push_back(least + static_cast<std::int64_t>(below(static_cast<std::size_t>(3 - least))));
        high.push_back(least + static_cast<std::int64_t>(below(static_cast<std::size_t>(3 - least))));
      }
      n.ints = low;
      n.ints.insert(n.ints.end(), high.begin(), high.end());
      n.ints.insert(n.ints.end(), interior.begin(), interior.end());
      n.scalar = scalars[below(6)];
    } else if (op == FuzzOp::Reshape) {
      n.ints = random_reshape(ta.numel());
    } else if (op == FuzzOp::BroadcastTo) {
      Shape to = ta.shape;
      for (auto& d : to) {
        if (d == 1 && chance(0.5)) d = pick_of({2, 3});
      }
      while (to.size() < 4 && chance(0.4)) to.insert(to.begin(), pick_of({1, 2, 3}));
      n.ints = to;
    } else if (op == FuzzOp::Astype) {
      const DType other = single_ && chance(0.2) ? DType::F64 : real_;
      const DType targets[] = {other, complex_dtype(other), DType::I64, DType::Bool, real_, complex_dtype(real_)};
      n.dtype = targets[below(6)];
    } else if (is({FuzzOp::Sum, FuzzOp::Prod, FuzzOp::Max, FuzzOp::Min, FuzzOp::Mean, FuzzOp::Var, FuzzOp::Logsumexp})) {
      n.ints = random_axes(ta.rank());
    } else if (is({FuzzOp::MaxWithIndex, FuzzOp::MinWithIndex, FuzzOp::Argmax, FuzzOp::Argmin})) {
      if (ta.rank() == 0) return;
      n.ints = {static_cast<std::int64_t>(below(2 * ta.rank())) - static_cast<std::int64_t>(ta.rank())};
    } else if (is({FuzzOp::Softmax, FuzzOp::LogSoftmax})) {
      n.ints = {ta.rank() == 0 ? 0 : static_cast<std::int64_t>(below(2 * ta.rank())) - static_cast<std::int64_t>(ta.rank())};
    } else if (op == FuzzOp::DotGeneral) {
      const int b = pick_value();
      n.args = {a, b};
      n.dims = random_dot_dims(ta.shape, type(b).shape);
    } else if (op == FuzzOp::Matmul) {
      const int b = pick_value_where([&](int v) {
        const Shape& s = type(v).shape;
        if (ta.rank() == 0 || s.empty()) return false;
        const std::int64_t k = ta.shape.back();
        return s.size() == 1 ? s[0] == k : s[s.size() - 2] == k;
      });
      if (b < 0) return;
      n.args = {a, b};
    } else if (op == FuzzOp::CrossEntropy) {
      const int b = pick_value_where([&](int v) { return type(v).shape == ta.shape && type(v).dtype == ta.dtype; });
      if (b < 0 || ta.rank() == 0) return;
      const int labels = add(FuzzNode{FuzzOp::Softmax, {b}, {-1}, {}, DType::F64, 0});
      if (labels < 0) return;
      n.args = {a, labels};
    }
    add(std::move(n));
  }

  /// y is the newest value; up to two other values nobody reads join the loss.
  void choose_outputs() {
    const int inputs = static_cast<int>(program_.inputs.size());
    const int n = static_cast<int>(inputs + program_.nodes.size());
    program_.outputs = {n - 1};
    std::vector<bool> read(static_cast<std::size_t>(n), false);
    for (const auto& node : program_.nodes) {
      for (int v : node.args) read[static_cast<std::size_t>(v)] = true;
    }
    for (int v = n - 2; v >= inputs && program_.outputs.size() < 3; --v) {
      if (!read[static_cast<std::size_t>(v)]) program_.outputs.push_back(v);
    }
  }

  std::mt19937_64 rng_;
  GenerateOptions options_;
  RandomProgram program_;
  std::vector<Traced> values_;
  bool single_ = false, large_ = false, broken_ = false;
  DType real_ = DType::F64;
};

}  // namespace

RandomProgram generate_program(std::uint64_t seed, const GenerateOptions& options) {
  return Generator(seed, options).run();
}

}  // namespace tenferro::testing
