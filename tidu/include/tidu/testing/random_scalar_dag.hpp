#pragma once
// random_scalar_dag: a random DAG of reference scalar ops (tidu::reference), for property tests
// and benchmarks. The same options give the same graph and point with every compiler and standard
// library.
//
// Shape: `inputs` arguments x0, x1, ... of `dtype`; then `ops` operations drawn from the reference
// set (add, mul, neg, div, exp, log, sin, cos, and add/mul by a constant; complex DAGs also conj,
// real and to_complex, so they mix real and complex values). An operand is a value nothing uses
// yet, one of the four newest values, or any earlier value, which gives both depth and fan-out.
// Finally the values nothing uses are summed (a few more adds) until `outputs` remain, which are
// the outputs: every operation and input is reachable from them.
//
// Numerically safe at the returned point `args`: every value is computed as the DAG is built, and
// an op is kept only if its operands are well inside its domain and its result is finite with
// |v| <= 10 (sums made by the final folding may be larger). So finite differences with small
// steps around `args` see smooth functions:
//   log(u)     needs |u| >= 0.5, and for complex u, Re u > 0 or |Im u| >= 0.5 (away from the branch
//              cut); real u must be positive. Otherwise it is emitted as log(u + c) with the
//              constant c = ceil(|u|) + 1
//   div(a, b)  needs b as log's u does (also away from zero); otherwise b is shifted the same way
//   exp(u)     needs Re u <= 2; otherwise it is emitted as exp(neg(u))
//   sin, cos   need |Im u| <= 2; otherwise the draw is discarded
#include <cmath>
#include <complex>
#include <cstdint>
#include <algorithm>
#include <deque>
#include <initializer_list>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "computegraph/graph_builder.hpp"
#include "tidu/reference/scalar.hpp"

namespace tidu::testkit {

struct RandomDagOptions {
  /// Operations drawn, constants included (folding unused values into the outputs adds a few).
  std::size_t ops = 50;
  std::size_t inputs = 3;
  std::size_t outputs = 2;
  reference::DType dtype = reference::DType::Real;
  /// Complex DAGs may use conj (false: conj appears in no primal).
  bool conj = true;
  /// One real output instead: the sum of the outputs' real parts (a real loss, for grad).
  bool real_loss = false;
  std::uint64_t seed = 1;
};

struct RandomDag {
  computegraph::GraphPtr<reference::ScalarOp> graph;
  /// The point the DAG was made safe at, one value per input.
  std::vector<reference::Number> args;
};

namespace detail {
class RandomDagBuilder {
 public:
  using Number = reference::Number;
  using DType = reference::DType;
  using Kind = reference::Kind;
  using Id = computegraph::LocalValueId;

  explicit RandomDagBuilder(const RandomDagOptions& opts) : opts_(opts), rng_(opts.seed) {}

  RandomDag run() {
    RandomDag dag;
    for (std::size_t i = 0; i < opts_.inputs; ++i) {
      const bool complex = opts_.dtype == DType::Complex;
      Number v = complex ? Number(std::complex<double>(uniform_pm1(rng_), uniform_pm1(rng_)))
                         : Number(uniform_pm1(rng_));
      commit(g_.add_input({"x" + std::to_string(i), opts_.dtype}), v, {});
      dag.args.push_back(v);
    }
    for (std::size_t attempt = 0; op_count() < opts_.ops && attempt < 50 * opts_.ops; ++attempt) step();
    std::vector<Id> outs = fold_unused(std::max<std::size_t>(opts_.outputs, 1));
    if (opts_.real_loss) {
      Id loss = real_part(outs[0]);
      for (std::size_t i = 1; i < outs.size(); ++i) loss = op(Kind::Add, {loss, real_part(outs[i])});
      outs = {loss};
    }
    for (Id id : outs) g_.add_output(id);
    dag.graph = g_.finish();
    return dag;
  }

 private:
  static constexpr std::size_t kNone = static_cast<std::size_t>(-1);

  std::size_t op_count() const { return g_.graph().operations().size(); }
  /// Emits kind(operands); dtypes are consistent by construction.
  Id op(Kind kind, std::initializer_list<Id> operands, Number constant_value = {}) {
    std::vector<computegraph::ValueRef<reference::ScalarOp>> refs;
    for (Id id : operands) refs.push_back(computegraph::ValueRef<reference::ScalarOp>::local(id));
    return g_.add(reference::ScalarOp{kind, constant_value}, std::move(refs));
  }
  Id constant(const Number& c) { return op(Kind::Const, {}, c); }
  double uniform() { return 0.5 * (uniform_pm1(rng_) + 1.0); }
  std::size_t below(std::size_t n) {
    return std::min(n - 1, static_cast<std::size_t>(uniform() * static_cast<double>(n)));
  }
  static std::size_t index(DType d) { return d == DType::Real ? 0 : 1; }

  /// Records a new value (an operand from now on) and marks `operands` used.
  void commit(Id id, const Number& v, std::initializer_list<Id> operands) {
    for (Id o : operands) mark_used(o);
    if (id < known_.size() && known_[id]) return;  // the builder deduplicated an equal operation
    if (known_.size() <= id) {
      known_.resize(id + 1, 0);
      values_.resize(id + 1);
      unused_pos_.resize(id + 1, kNone);
    }
    known_[id] = 1;
    values_[id] = v;
    pool_[index(v.dtype)].push_back(id);
    auto& unused = unused_[index(v.dtype)];
    unused_pos_[id] = unused.size();
    unused.push_back(id);
  }
  void mark_used(Id id) {
    if (id >= unused_pos_.size() || unused_pos_[id] == kNone) return;
    auto& unused = unused_[index(values_[id].dtype)];
    Id last = unused.back();
    unused[unused_pos_[id]] = last;
    unused_pos_[last] = unused_pos_[id];
    unused.pop_back();
    unused_pos_[id] = kNone;
  }
  Id pick(DType d) {
    const auto& unused = unused_[index(d)];
    const auto& pool = pool_[index(d)];
    double r = uniform();
    if (r < 0.4 && !unused.empty()) return unused[below(unused.size())];
    if (r < 0.7) return pool[pool.size() - 1 - below(std::min<std::size_t>(4, pool.size()))];
    return pool[below(pool.size())];
  }
  /// Sums values nothing uses, two oldest of one dtype at a time (the sum is the newest), until
  /// at most `n` remain; returns them by age.
  std::vector<Id> fold_unused(std::size_t n) {
    std::deque<Id> queue[2];
    for (std::size_t d = 0; d < 2; ++d) {
      std::vector<Id> sorted = unused_[d];
      std::sort(sorted.begin(), sorted.end());
      queue[d].assign(sorted.begin(), sorted.end());
    }
    auto take = [&](std::size_t d) {
      Id id = queue[d].front();
      queue[d].pop_front();
      return id;
    };
    while (queue[0].size() + queue[1].size() > n) {
      if (queue[0].size() < 2 && queue[1].size() < 2) {  // one real and one complex value: embed
        Id r = take(0);
        Id c = op(Kind::ToComplex, {r});
        commit(c, Number(std::complex<double>(values_[r].z.real(), 0)), {r});
        queue[1].push_back(c);
        continue;
      }
      const std::size_t d = queue[0].size() >= 2 ? 0 : 1;
      Id a = take(d), b = take(d);
      Number v = values_[a];
      v.z += values_[b].z;
      Id sum = op(Kind::Add, {a, b});
      commit(sum, v, {a, b});
      queue[d].push_back(sum);
    }
    std::vector<Id> outs(queue[0].begin(), queue[0].end());
    outs.insert(outs.end(), queue[1].begin(), queue[1].end());
    std::sort(outs.begin(), outs.end());
    return outs;
  }
  Id real_part(Id id) { return values_[id].dtype == DType::Complex ? op(Kind::Real, {id}) : id; }

  static Number eval(Kind kind, std::initializer_list<Number> in) {
    reference::ScalarOp descriptor{kind, {}};
    reference::ScalarOp::Context ctx;
    std::vector<const Number*> ptrs;
    for (const auto& v : in) ptrs.push_back(&v);
    Number out;
    descriptor.eval(ctx, ptrs, std::span<Number>(&out, 1));
    return out;
  }
  static bool safe(const Number& v) { return std::isfinite(std::abs(v.z)) && std::abs(v.z) <= 10; }
  Number random_constant(DType d) {
    double re = std::round(8 * uniform_pm1(rng_)) / 4;  // multiples of 1/4 in [-2, 2]
    if (d == DType::Real) return Number(re);
    return Number(std::complex<double>(re, std::round(8 * uniform_pm1(rng_)) / 4));
  }
  /// The constant c to add to u to keep it away from zero and the branch cut, if u needs one.
  static std::optional<Number> shift_for(const Number& u) {
    bool ok = std::abs(u.z) >= 0.5 && (u.z.real() > 0 || (u.dtype == DType::Complex &&
                                                          std::abs(u.z.imag()) >= 0.5));
    if (ok) return std::nullopt;
    double c = std::ceil(std::abs(u.z)) + 1;
    return u.dtype == DType::Real ? Number(c) : Number(std::complex<double>(c, 0.0));
  }
  /// u + c as emitted ops (c from shift_for), or u.
  Id shifted(Id u, const std::optional<Number>& c) {
    if (!c) return u;
    Id s = op(Kind::Add, {u, constant(*c)});
    commit(s, eval(Kind::Add, {values_[u], *c}), {u});
    mark_used(s);
    return s;
  }
  Number shifted_value(Id u, const std::optional<Number>& c) {
    return c ? eval(Kind::Add, {values_[u], *c}) : values_[u];
  }
  void step() {
    const bool complex = opts_.dtype == DType::Complex;
    // Weights favour add and mul.
    static constexpr Kind kReal[] = {Kind::Add, Kind::Add, Kind::Add, Kind::Mul, Kind::Mul, Kind::Mul,
                                     Kind::Neg, Kind::Div, Kind::Exp, Kind::Log, Kind::Sin, Kind::Cos,
                                     Kind::Const, Kind::Const};
    static constexpr Kind kComplex[] = {Kind::Conj, Kind::Real, Kind::ToComplex};
    const std::size_t n_real = std::size(kReal);
    const std::size_t r = below(n_real + (complex ? std::size(kComplex) : 0));
    const Kind kind = r < n_real ? kReal[r] : kComplex[r - n_real];
    if (kind == Kind::Conj && !opts_.conj) return;
    if (kind == Kind::ToComplex && pool_[0].empty()) return;
    // Most ops stay in one dtype: mostly the inputs' one, sometimes the real values of a complex DAG.
    DType d = complex && (pool_[0].empty() || uniform() < 0.75) ? DType::Complex : DType::Real;
    if (kind == Kind::Real) d = DType::Complex;
    if (kind == Kind::ToComplex) d = DType::Real;
    const Id a = pick(d);
    const Number va = values_[a];
    switch (kind) {
      case Kind::Add:
      case Kind::Mul: {
        Id b = pick(d);
        Number v = eval(kind, {va, values_[b]});
        if (safe(v)) commit(op(kind, {a, b}), v, {a, b});
        return;
      }
      case Kind::Div: {
        Id b = pick(d);
        auto c = shift_for(values_[b]);
        Number v = eval(kind, {va, shifted_value(b, c)});
        if (safe(v)) commit(op(kind, {a, shifted(b, c)}), v, {a, b});
        return;
      }
      case Kind::Log: {
        auto c = shift_for(va);
        Number v = eval(kind, {shifted_value(a, c)});
        if (safe(v)) commit(op(kind, {shifted(a, c)}), v, {a});
        return;
      }
      case Kind::Exp: {
        if (va.z.real() <= 2) return commit(op(kind, {a}), eval(kind, {va}), {a});
        Number neg = eval(Kind::Neg, {va});
        Id n = op(Kind::Neg, {a});
        commit(n, neg, {a});
        mark_used(n);
        return commit(op(kind, {n}), eval(kind, {neg}), {n});
      }
      case Kind::Sin:
      case Kind::Cos:
        if (std::abs(va.z.imag()) <= 2) commit(op(kind, {a}), eval(kind, {va}), {a});
        return;
      case Kind::Const: {
        Number c = random_constant(d);
        Kind with = uniform() < 0.5 ? Kind::Add : Kind::Mul;
        Number v = eval(with, {va, c});
        if (safe(v)) commit(op(with, {a, constant(c)}), v, {a});
        return;
      }
      case Kind::Neg:
      case Kind::Conj:
      case Kind::Real:
      case Kind::ToComplex: commit(op(kind, {a}), eval(kind, {va}), {a}); return;
    }
  }

  RandomDagOptions opts_;
  std::mt19937_64 rng_;
  computegraph::GraphBuilder<reference::ScalarOp> g_;
  std::vector<Number> values_;                 // by local id
  std::vector<std::uint8_t> known_;            // by local id: recorded as an operand
  std::vector<Id> pool_[2];                    // operands by dtype (real, complex), oldest first
  std::vector<Id> unused_[2];                  // operands no operation uses yet, by dtype
  std::vector<std::size_t> unused_pos_;        // by local id: position in unused_, or kNone
};
}  // namespace detail

/// A random DAG as described above; deterministic for a given `opts`.
inline RandomDag random_scalar_dag(const RandomDagOptions& opts) {
  return detail::RandomDagBuilder(opts).run();
}

}  // namespace tidu::testkit
