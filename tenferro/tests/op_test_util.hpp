#pragma once
// Helpers of the op-family tests: small graphs built with GraphBuilder<StdTensorOp>, seeded random
// tensors, single-op evaluation and AD checks through tidu::Transforms and the AD test kit.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "computegraph/computegraph.hpp"
#include "tenferro/indexing.hpp"
#include "tenferro/operand_space.hpp"
#include "tenferro/ops/make.hpp"
#include "tenferro/ops/record.hpp"
#include "tenferro/program.hpp"
#include "tidu/testing/check.hpp"
#include "tidu/tidu.hpp"

namespace tenferro::test {

using Fn = computegraph::GraphPtr<StdTensorOp>;
using Value = computegraph::ValueRef<StdTensorOp>;
using Space = tidu::OperandSpace<Tensor>;

/// A graph under construction: inputs keyed by TensorKey{name, type}, ops applied by descriptor.
class GraphMaker {
 public:
  Value input(const std::string& name, TensorType type) {
    return Value::local(b_.add_input(TensorKey{name, std::move(type)}));
  }
  /// An input named after its position among the unnamed ones: x0, x1, ...
  Value input(TensorType type) { return input("x" + std::to_string(unnamed_inputs_++), std::move(type)); }
  Value apply(StdTensorOp op, std::vector<Value> in) {
    return Value::local(b_.add(std::move(op), std::move(in)));
  }
  /// All results of a multi-output op.
  std::vector<Value> apply_all(StdTensorOp op, std::vector<Value> in) {
    std::vector<Value> out;
    for (auto id : b_.add_operation(std::move(op), std::move(in))) out.push_back(Value::local(id));
    return out;
  }
  const TensorType& type(const Value& v) const { return type_of(b_.graph().key_of(v)); }
  Fn finish(const std::vector<Value>& outputs) {
    std::vector<computegraph::LocalValueId> ids;
    for (const auto& v : outputs) ids.push_back(v.local_id());
    b_.set_outputs(std::move(ids));
    return b_.finish();
  }

 private:
  computegraph::GraphBuilder<StdTensorOp> b_;
  int unnamed_inputs_ = 0;
};

/// The graph x -> op(x) (or (x, y) -> op(x, y)) for one op with inputs of the given types.
inline Fn one_op(const StdTensorOp& op, const std::vector<TensorType>& inputs) {
  GraphMaker g;
  std::vector<Value> in;
  for (std::size_t i = 0; i < inputs.size(); ++i) in.push_back(g.input("x" + std::to_string(i), inputs[i]));
  return g.finish({g.apply(op, in)});
}

/// op(inputs) evaluated directly by the kernel.
inline Tensor eval_op(const StdTensorOp& op, const std::vector<Tensor>& inputs) {
  ExecContext ctx;
  std::vector<const Tensor*> ptrs;
  for (const auto& t : inputs) ptrs.push_back(&t);
  Tensor out;
  op.eval(ctx, ptrs, std::span<Tensor>(&out, 1));
  return out;
}

/// Seeded values: float and complex parts uniform in [-1, 1), i64 in [-4, 4], bool alternating.
inline Tensor random_tensor(const TensorType& type, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  if (type.dtype == DType::I64) {
    std::vector<std::int64_t> v(static_cast<std::size_t>(type.numel()));
    for (auto& x : v) x = static_cast<std::int64_t>(rng() % 9) - 4;
    return Tensor::from(v, type.shape);
  }
  if (type.dtype == DType::Bool) {
    Tensor t(type);
    bool* p = t.data<bool>();
    for (std::int64_t i = 0; i < t.numel(); ++i) p[i] = (rng() & 1) != 0;
    return t;
  }
  return Space::random_like(Tensor(type), rng);
}

/// f64 values uniform in [-scale, scale) (random_tensor's, scaled).
inline Tensor random_f64(Shape shape, std::uint64_t seed, double scale = 1.0) {
  Tensor t = random_tensor({DType::F64, std::move(shape)}, seed);
  for (std::int64_t i = 0; i < t.numel(); ++i) t.data<double>()[i] *= scale;
  return t;
}

/// Whether two tensors hold the same bits (same type, same bytes), with a message otherwise.
inline ::testing::AssertionResult bitwise_equal(const Tensor& actual, const Tensor& expected) {
  if (actual.type() != expected.type()) {
    return ::testing::AssertionFailure() << "type " << actual.type().to_string() << " vs expected " << expected.type().to_string();
  }
  if (std::memcmp(actual.raw_data(), expected.raw_data(), actual.nbytes()) != 0) {
    return ::testing::AssertionFailure() << "not bit for bit:\n" << actual << "\nexpected " << expected;
  }
  return ::testing::AssertionSuccess();
}

/// Tolerances scaled to a dtype's precision.
inline double tol_for(DType d) { return real_dtype(d) == DType::F32 ? 2e-5 : 1e-12; }

/// Element-wise closeness with a message naming the first mismatch.
inline ::testing::AssertionResult near(const Tensor& actual, const Tensor& expected, double tol) {
  if (actual.type() != expected.type()) {
    return ::testing::AssertionFailure()
           << "type " << actual.type().to_string() << " vs expected " << expected.type().to_string();
  }
  for (std::int64_t i = 0; i < actual.numel(); ++i) {
    const c128 x = actual.element(i), y = expected.element(i);
    if (!(std::abs(x - y) <= tol * (1 + std::abs(y)))) {
      return ::testing::AssertionFailure() << "element " << i << ": " << x << " vs expected " << y << "\n"
                                           << actual << "\nexpected " << expected;
    }
  }
  return ::testing::AssertionSuccess();
}

/// The test kit's options for a dtype. f32 needs a larger step and looser tolerances: its
/// rounding error (6e-8 relative) divided by the step bounds the noise of a difference quotient,
/// about 6e-8 * 20 |f| / (12 h) for the 4-point stencil, i.e. ~1e-4 absolute for |f| ~ 10 and
/// h = 1e-2 (the kit's own rounding term assumes f64). A wrong rule errs by O(|J t|), far above.
inline tidu::testkit::CheckOptions check_options(DType d) {
  tidu::testkit::CheckOptions o;
  if (real_dtype(d) == DType::F32) {
    o.step = 1e-2;
    o.rtol = 2e-3;
    o.atol = 1e-4;
    o.adjoint_rtol = 1e-5;
  }
  return o;
}

/// check_jvp and check_vjp of f at x and of every function up to `order` AD steps away.
inline void expect_grads(const Fn& f, const std::vector<Tensor>& x, int order, DType d) {
  auto result = tidu::testkit::check_grads(f, std::span<const Tensor>(x), order,
                                           {tidu::testkit::Mode::Forward, tidu::testkit::Mode::Reverse},
                                           check_options(d));
  EXPECT_FALSE(result.checks.empty());
  EXPECT_TRUE(result.ok) << result.message;
}

/// The dtype's name, for parameterized test names.
inline std::string dtype_param_name(const ::testing::TestParamInfo<DType>& info) {
  return dtype_name(info.param);
}

/// linearize(resolve({f}), f's outputs, wrt).
inline tidu::LinearizedGraph<StdTensorOp> linearize_wrt(const Fn& f, const std::vector<TensorKey>& wrt) {
  const auto outputs = f->output_keys();
  return tidu::linearize(computegraph::resolve({f}), std::span<const TensorValueKey>(outputs),
                         std::span<const TensorKey>(wrt));
}

/// sum over all elements of re(conj(a) b): the real inner product of the complex convention.
inline double inner(const Tensor& a, const Tensor& b) { return Space::inner(a, b); }

/// Example i of a batch: x's slice i along `axis`, without that axis (vmap tests compare a
/// batched result's examples with unbatched runs).
inline Tensor example(const Tensor& x, std::int64_t axis, std::int64_t i) {
  auto f = [axis, i](Traced a) {
    std::vector<std::int64_t> start(a.rank(), 0), limit(a.shape().begin(), a.shape().end());
    start[static_cast<std::size_t>(axis)] = i;
    limit[static_cast<std::size_t>(axis)] = i + 1;
    Shape shape = a.shape();
    shape.erase(shape.begin() + axis);
    return reshape(slice(a, start, limit), shape);
  };
  return trace(f, x).run({x})[0];
}

}  // namespace tenferro::test
