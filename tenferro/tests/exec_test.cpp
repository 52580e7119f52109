// The executor: printed IR after each pass (golden files), results against the reference
// evaluator (StdTensorOp::eval per instruction), bitwise agreement with the passes off and across
// thread counts, in-place reuse, the buffer pool, preallocated outputs and bad input.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "computegraph/compile.hpp"
#include "computegraph/materialize.hpp"
#include "exec/executor.hpp"
#include "exec/passes.hpp"
#include "golden_files.hpp"
#include "kernels/vector_math.hpp"
#include "tenferro/buffer_pool.hpp"
#include "tenferro/tenferro.hpp"
#include "tenferro/ops/make.hpp"
#include "tenferro/program.hpp"
#include "tenferro/custom_op.hpp"
#include "tidu/linear_transpose.hpp"
#include "tidu/linearize.hpp"

namespace tf = tenferro;
using Compiled = computegraph::CompiledProgram<tf::StdTensorOp>;

namespace {

const std::string kGolden = TENFERRO_GOLDEN_DIR;

tf::Tensor random_tensor(tf::Shape shape, std::uint64_t seed, tf::DType dtype = tf::DType::F64) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-1.5, 1.5);
  std::vector<double> v(static_cast<std::size_t>(tf::numel(shape)));
  for (auto& x : v) x = u(rng);
  tf::Tensor t = tf::Tensor::from(v, std::move(shape));
  if (dtype == tf::DType::F32) {
    tf::Tensor f(tf::TensorType{tf::DType::F32, t.shape()});
    for (std::int64_t i = 0; i < t.numel(); ++i) f.data<float>()[i] = static_cast<float>(v[static_cast<std::size_t>(i)]);
    return f;
  }
  return t;
}

/// The primal program of f at arguments like `args`, and its value-and-gradient program
/// (outputs: f's value, then d f / d args[j] for every float argument; inputs: args, then the
/// output cotangent).
template <class F>
std::pair<Compiled, Compiled> programs(F f, const std::vector<tf::Tensor>& args) {
  auto g = tf::detail::trace_graph(f, tf::detail::types_of(args));
  auto outs = g->output_keys();
  std::vector<tf::TensorValueKey> inputs;
  std::vector<tf::TensorKey> wrt;
  for (auto id : g->inputs()) {
    inputs.push_back(g->key(id));
    if (tf::is_inexact(g->key(id).input_key().type.dtype)) wrt.push_back(g->key(id).input_key());
  }
  Compiled primal = computegraph::compile(computegraph::materialize_merge(computegraph::resolve({g}),
                                                                          std::span<const tf::TensorValueKey>(outs), std::span<const tf::TensorValueKey>(inputs)));
  auto lin = tidu::linearize(computegraph::resolve({g}), std::span<const tf::TensorValueKey>(outs),
                             std::span<const tf::TensorKey>(wrt));
  auto tr = tidu::linear_transpose(lin);
  auto grad_outs = outs;
  for (const auto& k : tr.tangent_output_keys()) grad_outs.push_back(*k);
  auto leading = inputs;
  for (std::size_t i = 0; i < tr.tangent_inputs.size(); ++i) leading.push_back(tr.tangent_input_key(i));
  Compiled grad = computegraph::compile(computegraph::materialize_merge(
      computegraph::resolve({tr.graph}), std::span<const tf::TensorValueKey>(grad_outs), std::span<const tf::TensorValueKey>(leading)));
  return {std::move(primal), std::move(grad)};
}

tf::ExecOptions all_off() { return {false, false, false, false, false, false}; }

/// The printed executable of `program` under `options`, as the golden files hold it: prepared
/// with the default math library (libmvec), whose sin and cos pair compiles into a run where
/// SLEEF's does not (exec/arith_jit.cpp), so that the files do not depend on the variant that runs.
std::string golden_print(const Compiled& program, const tf::ExecOptions& options) {
  const tf::MathAccuracy saved = tf::math_accuracy();
  tf::set_math_accuracy(tf::MathAccuracy::Fast);
  std::string printed = tf::exec::Executable(program, options).print();
  tf::set_math_accuracy(saved);
  return printed;
}

std::vector<tf::Tensor> reference_run(const Compiled& p, const std::vector<tf::Tensor>& in) {
  tf::ExecContext ctx;
  return p.run(std::span<const tf::Tensor>(in), ctx);
}

bool bitwise_equal(const tf::Tensor& a, const tf::Tensor& b) {
  return a.type() == b.type() && std::memcmp(a.raw_data(), b.raw_data(), a.nbytes()) == 0;
}

auto elem_chain = [](tf::Traced x) {
  return tf::sum(tf::exp(tf::sin(x) * x + tf::cos(x)) / (1.0 + x * x));
};

auto dense_layer = [](tf::Traced x, tf::Traced w, tf::Traced b) { return tf::sum(tf::tanh(tf::matmul(x, w) + b)); };

}  // namespace

TEST(ExecGolden, ElemChainForwardAndGradientFuseIntoOneKernelEach) {
  auto [primal, grad] = programs(elem_chain, {random_tensor({1000}, 1)});
  EXPECT_TRUE(golden::matches(kGolden, "elem_chain_fwd_unfused.txt", golden_print(primal, all_off())));
  EXPECT_TRUE(golden::matches(kGolden, "elem_chain_fwd.txt", golden_print(primal, {})));
  EXPECT_TRUE(golden::matches(kGolden, "elem_chain_grad.txt", golden_print(grad, {})));
}

// c = a + a @ a with a = exp(x): c and a compute in one dtype over one element count, but c needs
// the matmul, which needs a, so the two cannot be one kernel (it would read the matmul before
// computing its operand). The second kernel then joins another chain (d) that starts after the
// matmul, so the cycle check must walk past it.
TEST(ExecGolden, FusionNeverMergesAcrossAPathThroughAnotherStep) {
  auto f = [](tf::Traced x) {
    auto a = tf::exp(x);
    auto c = a + tf::matmul(a, a);
    auto d = tf::sin(c) * c;
    return tf::sum(d + a);
  };
  std::vector<tf::Tensor> args = {random_tensor({6, 6}, 31)};
  auto [primal, grad] = programs(f, args);
  EXPECT_TRUE(golden::matches(kGolden, "fusion_cycle_fwd.txt", golden_print(primal, {})));
  const auto fused = tf::exec::Executable(primal, {}).run(args);
  const auto plain = tf::exec::Executable(primal, all_off()).run(args);
  const auto ref = reference_run(primal, args);
  EXPECT_TRUE(bitwise_equal(fused[0], plain[0]));
  EXPECT_TRUE(tf::allclose(fused[0], ref[0], 1e-12, 1e-12)) << fused[0] << " vs " << ref[0];
}

// Size-1 tensors of different ranks share one fusion key (dtype, element count), so groups merge
// across broadcasts and reshapes, and a group whose steps all come early can depend on a group
// that later steps joined. An earlier cycle check stopped its walk at groups that end before the
// merged set begins, and merged into a cycle here. f = exp(a) exp(b), so value = d/da = d/db.
TEST(ExecFusionCycle, GradientOfAProductOfBroadcastSizeOneExponentials) {
  auto f = [](tf::Traced a, tf::Traced b) {
    return tf::sum(tf::broadcast_to(tf::exp(a), {1}) * tf::broadcast_to(tf::exp(b), {1}));
  };
  auto [value, grads] = tf::value_and_grad(f, {0, 1})(tf::Tensor::scalar(0.28), tf::Tensor::scalar(-0.4));
  const double expected = std::exp(0.28 - 0.4);
  EXPECT_NEAR(value.item<double>(), expected, 1e-15);
  ASSERT_EQ(grads.size(), 2u);
  EXPECT_NEAR(grads[0].item<double>(), expected, 1e-15);
  EXPECT_NEAR(grads[1].item<double>(), expected, 1e-15);
}

// The second program the cycle check got wrong: with x of shape [1, 1], u = exp(x)^x = e^s with
// s = x^2, w = u u (batch axis 1, contracting axis 0), and the loss is f(x) = g(s) with
// g(s) = e^s / (e^{4s} + 1). Closed form: f'' = 2 g'(s) + 4 x^2 g''(s), where with D = 1 + e^{4s},
// g' = e^s / D - 4 e^{5s} / D^2 and g'' = e^s / D - 24 e^{5s} / D^2 + 32 e^{9s} / D^3.
TEST(ExecFusionCycle, HessianVectorProductThroughABatchedSizeOneContraction) {
  auto f = [](tf::Traced x) {
    auto u = tf::pow(tf::exp(x), x);
    auto w = tf::dot_general(u, u, tf::DotDims{{1}, {1}, {0}, {0}});
    return tf::sum(tf::max(u / (w * w + 1.0), {1, 0}));
  };
  const double x = -0.1713087311241258, v = 0.75;
  const double s = x * x, d = 1 + std::exp(4 * s);
  const double g1 = std::exp(s) / d - 4 * std::exp(5 * s) / (d * d);
  const double g2 = std::exp(s) / d - 24 * std::exp(5 * s) / (d * d) + 32 * std::exp(9 * s) / (d * d * d);
  const double second = 2 * g1 + 4 * x * x * g2;
  auto hv = tf::hvp(f, {tf::Tensor::full({1, 1}, x)}, {tf::Tensor::full({1, 1}, v)});
  ASSERT_EQ(hv.size(), 1u);
  EXPECT_NEAR(hv[0].item<double>(), second * v, 1e-14);
  auto h = tf::hessian(f)(tf::Tensor::full({1, 1}, x));
  EXPECT_NEAR(h.item<double>(), second, 1e-14);
}

TEST(ExecGolden, DenseLayerFoldsTransposesAndReadsTheBiasAsARow) {
  std::vector<tf::Tensor> args = {random_tensor({4, 3}, 2), random_tensor({3, 5}, 3), random_tensor({5}, 4)};
  auto [primal, grad] = programs(dense_layer, args);
  EXPECT_TRUE(golden::matches(kGolden, "dense_fwd.txt", golden_print(primal, {})));
  EXPECT_TRUE(golden::matches(kGolden, "dense_grad_unfused.txt", golden_print(grad, all_off())));
  EXPECT_TRUE(golden::matches(kGolden, "dense_grad.txt", golden_print(grad, {})));
}

TEST(Exec, ResultsMatchTheReferenceEvaluatorAndAreBitwiseEqualWithPassesOff) {
  // Sizes cross the block and chunk boundaries (256 and 4096 elements) and leave tails.
  for (std::int64_t n : {1, 7, 256, 1000, 4096, 9001}) {
    for (tf::DType dtype : {tf::DType::F64, tf::DType::F32}) {
      std::vector<tf::Tensor> args = {random_tensor({n}, static_cast<std::uint64_t>(n), dtype)};
      auto [primal, grad] = programs(elem_chain, args);
      auto seed = tf::Tensor::full({}, 1.0, dtype);
      std::vector<tf::Tensor> grad_in = {args[0], seed};
      for (const Compiled* p : {&primal, &grad}) {
        const auto& in = p == &primal ? args : grad_in;
        auto fused = tf::exec::Executable(*p, {}).run(in);
        auto plain = tf::exec::Executable(*p, all_off()).run(in);
        auto ref = reference_run(*p, in);
        ASSERT_EQ(fused.size(), ref.size());
        const double tol = dtype == tf::DType::F64 ? 1e-12 : 2e-5;
        for (std::size_t o = 0; o < ref.size(); ++o) {
          EXPECT_TRUE(bitwise_equal(fused[o], plain[o])) << "n=" << n << " output " << o;
          // The executor's SLEEF functions and glibc's differ by an ulp or so; the sum order too.
          EXPECT_TRUE(tf::allclose(fused[o], ref[o], tol, tol)) << "n=" << n << " output " << o << "\n"
                                                                << fused[o] << "\n" << ref[o];
        }
      }
    }
  }
}

/// Fused runs of `primal` and `grad` (args, then a scalar seed 1) give the bits of unfused runs and
/// the reference evaluator's values.
void expect_fused_equals_plain_and_reference(const Compiled& primal, const Compiled& grad,
                                             const std::vector<tf::Tensor>& args) {
  std::vector<tf::Tensor> grad_in = args;
  grad_in.push_back(tf::Tensor::scalar(1.0));
  for (const Compiled* p : {&primal, &grad}) {
    const auto& in = p == &primal ? args : grad_in;
    auto fused = tf::exec::Executable(*p, {}).run(in);
    auto plain = tf::exec::Executable(*p, all_off()).run(in);
    auto ref = reference_run(*p, in);
    for (std::size_t o = 0; o < ref.size(); ++o) {
      EXPECT_TRUE(bitwise_equal(fused[o], plain[o])) << "output " << o;
      EXPECT_TRUE(tf::allclose(fused[o], ref[o], 1e-12, 1e-12)) << "output " << o;
    }
  }
}

// A broadcast that inserts axes between the operand's (m [7, 5] over [7, 9, 5, 3], as a max pool's
// gradient broadcasts the window maxima) is read through a strided access, not materialized: the
// operand steps 5 along axis 0, 1 along axis 2 and 0 along the broadcast axes 1 and 3. Fused and
// unfused give the same bits, forward and gradient, and match the reference evaluator.
TEST(Exec, MiddleAxisBroadcastsAreReadStrided) {
  // Read through a table of the inner axes' offsets (period 15, blocks starting mid-period).
  auto f = [](tf::Traced x, tf::Traced m) {
    return tf::sum(tf::tanh(x * tf::broadcast_to(tf::reshape(m, {7, 1, 5, 1}), {7, 9, 5, 3})));
  };
  std::vector<tf::Tensor> args = {random_tensor({7, 9, 5, 3}, 11), random_tensor({7, 5}, 12)};
  auto [primal, grad] = programs(f, args);
  EXPECT_NE(tf::exec::Executable(primal, {}).print().find("strided[7x9x5x3 : 5,0,1,0]"), std::string::npos)
      << tf::exec::Executable(primal, {}).print();
  expect_fused_equals_plain_and_reference(primal, grad, args);
  // An innermost axis longer than the table (stepped element by element).
  auto g = [](tf::Traced x, tf::Traced m) {
    return tf::sum(tf::tanh(x * tf::broadcast_to(tf::reshape(m, {3, 1, 100}), {3, 4, 100})));
  };
  std::vector<tf::Tensor> args2 = {random_tensor({3, 4, 100}, 13), random_tensor({3, 100}, 14)};
  auto [primal2, grad2] = programs(g, args2);
  EXPECT_NE(tf::exec::Executable(primal2, {}).print().find("strided[3x4x100 : 100,0,1]"), std::string::npos)
      << tf::exec::Executable(primal2, {}).print();
  expect_fused_equals_plain_and_reference(primal2, grad2, args2);
  // A reshaped broadcast (an average pool's gradient: window means broadcast over the window axes
  // and merged back into the image) is read through the broadcast, not materialized.
  auto h = [](tf::Traced x, tf::Traced m) {
    return tf::sum(tf::tanh(x * tf::reshape(tf::broadcast_to(tf::reshape(m, {2, 3, 1, 4, 1}), {2, 3, 2, 4, 2}),
                                            {2, 6, 8})));
  };
  std::vector<tf::Tensor> args3 = {random_tensor({2, 6, 8}, 15), random_tensor({2, 3, 4}, 16)};
  auto [primal3, grad3] = programs(h, args3);
  const std::string printed = tf::exec::Executable(primal3, {}).print();
  EXPECT_NE(printed.find("strided[6x2x4x2 : 4,0,1,0]"), std::string::npos) << printed;
  EXPECT_EQ(printed.find("broadcast_in_dim"), std::string::npos) << printed;
  expect_fused_equals_plain_and_reference(primal3, grad3, args3);
}

// A tensor of zeros (a ReLU's derivative selects between the cotangent and zeros) is lowered to a
// broadcast scalar zero, which the fused kernel reads in place: no zero tensor is written.
TEST(Exec, ZeroTensorsAreReadAsBroadcastScalars) {
  auto f = [](tf::Traced x) { return tf::sum(tf::relu(x) * x); };
  std::vector<tf::Tensor> args = {random_tensor({6, 5}, 17)};
  auto [primal, grad] = programs(f, args);
  const std::string printed = tf::exec::Executable(grad, {}).print();
  EXPECT_EQ(printed.find("zeros[f64[6, 5]]"), std::string::npos) << printed;
  EXPECT_NE(printed.find("zeros[f64[]]"), std::string::npos) << printed;
  expect_fused_equals_plain_and_reference(primal, grad, args);
}

TEST(Exec, DenseLayerGradientMatchesTheReference) {
  std::vector<tf::Tensor> args = {random_tensor({6, 4}, 5), random_tensor({4, 3}, 6), random_tensor({3}, 7)};
  auto [primal, grad] = programs(dense_layer, args);
  std::vector<tf::Tensor> in = args;
  in.push_back(tf::Tensor::scalar(1.0));
  auto fused = tf::exec::Executable(grad, {}).run(in);
  auto ref = reference_run(grad, in);
  for (std::size_t o = 0; o < ref.size(); ++o) EXPECT_TRUE(tf::allclose(fused[o], ref[o], 1e-12, 1e-12)) << o;
}

TEST(Exec, SumsAreIdenticalForEveryThreadCount) {
  std::vector<tf::Tensor> args = {random_tensor({100003}, 8)};
  auto [primal, grad] = programs(elem_chain, args);
  tf::exec::Executable exe(primal, {});
  const int saved = tf::num_threads();
  tf::set_num_threads(1);
  auto one = exe.run(args);
  for (int t : {2, 3, 4}) {
    tf::set_num_threads(t);
    auto many = exe.run(args);
    EXPECT_TRUE(bitwise_equal(one[0], many[0])) << t << " threads";
  }
  tf::set_num_threads(saved);
}

TEST(Exec, ElementwiseOpsOfEveryFusibleKindMatchTheReference) {
  // One kernel with every instruction kind, including NaN, infinities and signed zeros.
  auto f = [](tf::Traced x, tf::Traced y) {
    tf::Traced a = tf::maximum(x, y) + tf::minimum(x, y) * tf::abs(x) - tf::sign(y);
    tf::Traced b = tf::where(tf::lt(x, y), tf::sqrt(tf::abs(x)) + tf::rsqrt(tf::abs(y) + 1.0), tf::tanh(x));
    tf::Traced c = tf::pow(tf::abs(x) + 0.5, y) + tf::expm1(x) + tf::log1p(tf::abs(y)) + tf::log(tf::abs(x) + 1.0);
    return std::vector<tf::Traced>{a, b, c, -tf::clamp(x, tf::full_like(x, -0.5), tf::full_like(x, 0.5))};
  };
  std::vector<double> xs = {0.0, -0.0, 1.0, -2.5, NAN, INFINITY, -INFINITY, 0.3, 7.0, -1e-300};
  std::vector<double> ys = {-0.0, 0.0, 1.0, 2.5, 0.5, NAN, 3.0, -0.3, 7.0, 1e300};
  std::vector<tf::Tensor> args = {tf::Tensor::from(xs, {10}), tf::Tensor::from(ys, {10})};
  auto [primal, grad] = programs(f, args);
  auto fused = tf::exec::Executable(primal, {}).run(args);
  auto ref = reference_run(primal, args);
  for (std::size_t o = 0; o < ref.size(); ++o) EXPECT_TRUE(tf::allclose(fused[o], ref[o], 1e-14, 1e-300)) << o << "\n" << fused[o] << "\n" << ref[o];
}

TEST(Exec, RepeatedRunsReuseBuffersFromThePool) {
  std::vector<tf::Tensor> args = {random_tensor({256, 256}, 9), random_tensor({256, 256}, 10), random_tensor({256}, 11)};
  auto [primal, grad] = programs(dense_layer, args);
  std::vector<tf::Tensor> in = args;
  in.push_back(tf::Tensor::scalar(1.0));
  tf::exec::Executable exe(grad, {});
  exe.run(in);
  const auto before = tf::buffer_pool_stats();
  if (before.capacity == 0) GTEST_SKIP() << "pooling is off in sanitizer builds";
  exe.run(in);
  const auto after = tf::buffer_pool_stats();
  EXPECT_EQ(after.misses, before.misses) << "a warm run asked the system for memory";
  EXPECT_GT(after.hits, before.hits);
}

TEST(Exec, OutputsAreWrittenIntoProvidedStorage) {
  std::vector<tf::Tensor> args = {random_tensor({500}, 12)};
  auto [primal, grad] = programs(elem_chain, args);
  std::vector<tf::Tensor> in = {args[0], tf::Tensor::scalar(1.0)};
  std::vector<tf::Tensor> into = {tf::Tensor::zeros({}), tf::Tensor::zeros({500})};
  const void* storage = into[1].raw_data();
  tf::exec::Executable exe(grad, {});
  auto out = exe.run(in, into);
  EXPECT_EQ(out[1].raw_data(), storage);
  EXPECT_TRUE(bitwise_equal(out[1], exe.run(in)[1]));
  std::vector<tf::Tensor> wrong = {tf::Tensor::zeros({}), tf::Tensor::zeros({499})};
  EXPECT_THROW(exe.run(in, wrong), tf::ShapeError);
}

// The executor reads the caller's input tensors in place and computes elementwise results into a
// dying operand's buffer when nothing else holds it: an input the caller holds alone must still
// never be written, and an input returned as a result comes back as it is.
TEST(Exec, InputsTheCallerHoldsAloneAreNeverWritten) {
  auto f = [](tf::Traced x, tf::Traced y) { return std::vector<tf::Traced>{tf::exp(x) + 1.0, y}; };
  const std::vector<tf::Tensor> like = {random_tensor({300}, 14), random_tensor({7}, 15)};
  auto [primal, grad] = programs(f, like);
  tf::exec::Executable exe(primal, {});
  for (int run = 0; run < 2; ++run) {
    std::vector<tf::Tensor> in = {like[0].clone(), like[1].clone()};  // the only references
    ASSERT_TRUE(in[0].unique_storage());
    const auto out = exe.run(in);
    EXPECT_TRUE(bitwise_equal(in[0], like[0])) << "the input was overwritten";
    EXPECT_TRUE(bitwise_equal(out[1], like[1]));
    EXPECT_TRUE(out[1].shares_storage_with(in[1]));
    for (std::int64_t i = 0; i < 300; ++i) {  // the vector exp is within a few ulp of libm's
      const double want = std::exp(like[0].data<double>()[i]) + 1.0;
      EXPECT_NEAR(out[0].data<double>()[i], want, 1e-14 * want);
    }
  }
}

TEST(Exec, BadInputsGiveTypedErrors) {
  auto [primal, grad] = programs(elem_chain, {random_tensor({5}, 13)});
  tf::exec::Executable exe(primal, {});
  EXPECT_THROW(exe.run({}), tf::BindingError);
  std::vector<tf::Tensor> wrong_shape = {random_tensor({6}, 1)};
  EXPECT_THROW(exe.run(wrong_shape), tf::ShapeError);
  std::vector<tf::Tensor> wrong_dtype = {random_tensor({5}, 1, tf::DType::F32)};
  EXPECT_THROW(exe.run(wrong_dtype), tf::DTypeError);
}

// ---- sin and cos of one value (exec_program.hpp, Trig) --------------------------------------------

namespace {
/// Checks `program`'s printed IR with all passes off and on against the golden files
/// `<name>_unfused.txt` and `<name>.txt`, and that both forms give the same bits on `args`;
/// returns the results with the passes on.
std::vector<tf::Tensor> golden_runs(const Compiled& program, const std::vector<tf::Tensor>& args, const std::string& name) {
  EXPECT_TRUE(golden::matches(kGolden, name + "_unfused.txt", golden_print(program, all_off())));
  EXPECT_TRUE(golden::matches(kGolden, name + ".txt", golden_print(program, {})));
  auto fused = tf::exec::Executable(program, {}).run(args);
  auto plain = tf::exec::Executable(program, all_off()).run(args);
  for (std::size_t o = 0; o < fused.size(); ++o) EXPECT_TRUE(bitwise_equal(fused[o], plain[o])) << name << " output " << o;
  return fused;
}

auto trig_mix = [](tf::Traced x, tf::Traced y, tf::Traced w) {
  // x: cos before sin in one kernel; y: sin alone; w: sin and cos in separate kernels.
  return std::vector<tf::Traced>{tf::cos(x) * tf::sin(x) + tf::sin(y), tf::sin(w), tf::cos(w) + 1.0};
};
}  // namespace

TEST(ExecGolden, SinAndCosOfOneValueRunAsOneSinCos) {
  std::vector<tf::Tensor> args;
  for (std::uint64_t seed : {21, 22, 23}) args.push_back(random_tensor({300}, seed, tf::DType::F32));
  auto [primal, grad] = programs(trig_mix, args);
  auto fused = golden_runs(primal, args, "sincos_fwd");
  auto ref = reference_run(primal, args);
  for (std::size_t o = 0; o < ref.size(); ++o) {
    EXPECT_TRUE(tf::allclose(fused[o], ref[o], 2e-6, 2e-6)) << o << "\n" << fused[o] << "\n" << ref[o];
  }
}

TEST(ExecGolden, DeadCodeEliminationSplitsASinCosPairWithOneResultUnread) {
  // {sin(x), cos(x), sin(x) * cos(x)}: one kernel with a pair; dropping the product and one of
  // the two leaves the other's half of sincos.
  auto f = [](tf::Traced x) { return std::vector<tf::Traced>{tf::sin(x), tf::cos(x), tf::sin(x) * tf::cos(x)}; };
  auto [primal, grad] = programs(f, {random_tensor({64}, 24)});
  const tf::exec::ExecProgram fused = tf::exec::fuse_elementwise(tf::exec::lower(primal));
  std::string printed = tf::exec::to_string(fused);
  for (std::size_t keep : {0, 1}) {
    tf::exec::ExecProgram p = fused;
    p.outputs = {p.outputs[keep]};
    printed += tf::exec::to_string(tf::exec::eliminate_dead_code(std::move(p)));
  }
  EXPECT_TRUE(golden::matches(kGolden, "sincos_dce.txt", printed));
}

// ---- convert between f32, f64 and bool inside kernels ----------------------------------------------

TEST(ExecGolden, ConvertsBetweenF32F64AndBoolFuseIntoKernels) {
  // x: f32, y: f64. astype(x, f64) is read from x converting on load; y's f32 round trip rounds in
  // its f64 register; compares become f64 masks; a bool made from x crosses from an f32 kernel
  // into an f64 one.
  auto f = [](tf::Traced x, tf::Traced y) {
    tf::Traced mask = tf::astype(tf::gt(y, tf::full_like(y, 0.0)), tf::DType::F64);
    tf::Traced a = tf::sum(tf::astype(x, tf::DType::F64) * y + mask);
    tf::Traced b = tf::astype(y * y, tf::DType::F32);
    tf::Traced c = tf::astype(tf::astype(y, tf::DType::F32), tf::DType::F64) - y;
    tf::Traced d = tf::where(tf::astype(x * x, tf::DType::Bool), y, -y);
    return std::vector<tf::Traced>{a, b, c, d};
  };
  tf::Tensor x = random_tensor({300}, 25, tf::DType::F32);
  tf::Tensor y = random_tensor({300}, 26);
  const float fx[] = {0.0f, -0.0f, NAN, INFINITY, 1e-40f, 3e38f, -1.0f, 2.0f};
  const double fy[] = {-0.0, 1e300, 1e-300, NAN, -INFINITY, 0.1, 3.0000001, -2.5};
  for (std::size_t i = 0; i < 8; ++i) {
    x.data<float>()[i] = fx[i];
    y.data<double>()[i] = fy[i];
  }
  std::vector<tf::Tensor> args = {x, y};
  auto [primal, grad] = programs(f, args);
  auto fused = golden_runs(primal, args, "convert_fwd");
  auto ref = reference_run(primal, args);
  for (std::size_t o = 1; o < ref.size(); ++o) {  // output 0 is a sum, in the executor's own order
    // The same values and signs of zero; a NaN's sign may differ (when both operands of a sum are
    // NaN, which one it returns depends on the kernel's instruction order).
    ASSERT_EQ(fused[o].type(), ref[o].type());
    for (std::int64_t i = 0; i < ref[o].numel(); ++i) {
      const tf::c128 u = fused[o].element(i), v = ref[o].element(i);
      const bool both_nan = std::isnan(u.real()) && std::isnan(v.real());
      EXPECT_TRUE(both_nan || (u == v && std::signbit(u.real()) == std::signbit(v.real())))
          << "output " << o << " element " << i << ": " << u << " vs " << v;
    }
  }
  // The gradient program converts tangents back from f64 to f32.
  std::vector<tf::Tensor> grad_in = args;  // then a cotangent of ones per output
  for (std::size_t i = args.size(); i < grad.input_keys().size(); ++i) {
    const tf::TensorType& t = grad.input_keys()[i].type;
    grad_in.push_back(tf::Tensor::full(t.shape, 1.0, t.dtype));
  }
  auto gf = tf::exec::Executable(grad, {}).run(grad_in);
  auto gp = tf::exec::Executable(grad, all_off()).run(grad_in);
  for (std::size_t o = 0; o < gf.size(); ++o) EXPECT_TRUE(bitwise_equal(gf[o], gp[o])) << o;
}

// neg is IEEE negation everywhere (formulas::neg_of): neg(+0) = -0 and neg(-0) = +0 in the
// reference kernels, in fused kernels and on the scalar path alike.
TEST(Exec, NegFlipsTheSignOfZeroOnEveryPath) {
  auto f = [](tf::Traced x) { return std::vector<tf::Traced>{-x, tf::exp(x) * 0.0 - x}; };
  const std::vector<tf::Tensor> args = {tf::Tensor::from(std::vector<double>{0.0, -0.0, 1.5}, {3})};
  auto [primal, grad] = programs(f, args);
  const std::vector<tf::Tensor> fused = tf::exec::Executable(primal, {}).run(args);
  const std::vector<tf::Tensor> ref = reference_run(primal, args);
  for (const std::vector<tf::Tensor>* results : {&fused, &ref}) {
    const double* negated = (*results)[0].data<double>();
    EXPECT_TRUE(std::signbit(negated[0]));
    EXPECT_FALSE(std::signbit(negated[1]));
    EXPECT_EQ(negated[2], -1.5);
  }
  EXPECT_TRUE(bitwise_equal(fused[1], ref[1]));
  tf::Tensor zero = tf::Tensor::from(std::vector<double>{0.0}, {});
  auto neg = [](tf::Traced s) { return -s; };
  EXPECT_TRUE(std::signbit(tf::trace(neg, zero).run({zero}).at(0).item<double>()));  // the scalar path
}

// docs/tenferro.md, "Adding an operation": an op given by its formula alone (exp2, a vectorized
// formula in powers_logs.cpp) fuses with its neighbours into one loop kernel, and that kernel runs
// the formula's block form (the vector math library), bit for bit, in f64 and f32.
TEST(Exec, AFormulaOpFusesWithItsNeighboursAndRunsItsBlockForm) {
  auto f = [](tf::Traced x) { return tf::exp2(x * x) + x; };
  const tf::OpDef* exp2 = tf::find_op("exp2");
  ASSERT_NE(exp2, nullptr);
  ASSERT_TRUE(exp2->formula && exp2->formula->f64_block && exp2->formula->f32_block);
  for (tf::DType dtype : {tf::DType::F64, tf::DType::F32}) {
    SCOPED_TRACE(tf::dtype_name(dtype));
    const std::int64_t n = 1000;
    std::vector<tf::Tensor> args = {random_tensor({n}, 31, dtype)};
    auto [primal, grad] = programs(f, args);
    const tf::exec::Executable executable(primal, {});
    const std::string ir = executable.print();
    // One fused kernel holds mul, exp2 and add; no other step computes anything.
    std::size_t kernels = 0;
    for (std::size_t at = ir.find("fused["); at != std::string::npos; at = ir.find("fused[", at + 1)) ++kernels;
    EXPECT_EQ(kernels, 1u) << ir;
    const std::size_t line = ir.find("fused[");
    ASSERT_NE(line, std::string::npos) << ir;
    const std::string kernel = ir.substr(line, ir.find('\n', line) - line);
    for (const char* ins : {"= mul r0 r0", "= exp2 r", "= add r"}) EXPECT_NE(kernel.find(ins), std::string::npos) << ins << "\n" << ir;
    const tf::Tensor fused = executable.run(args)[0];
    // The expected bits: the block form on x * x, then + x, both IEEE-rounded as in the kernel.
    tf::Tensor expected(tf::TensorType{dtype, {n}});
    auto check = [&](auto zero, auto block) {
      using T = decltype(zero);
      const T* x = args[0].data<T>();
      std::vector<T> sq(static_cast<std::size_t>(n)), y(static_cast<std::size_t>(n));
      for (std::int64_t i = 0; i < n; ++i) sq[static_cast<std::size_t>(i)] = x[i] * x[i];
      block(tf::math_accuracy(), sq.data(), sq.data(), y.data(), n);
      T* e = expected.data<T>();
      for (std::int64_t i = 0; i < n; ++i) e[i] = y[static_cast<std::size_t>(i)] + x[i];
    };
    if (dtype == tf::DType::F64) {
      check(0.0, exp2->formula->f64_block);
    } else {
      check(0.0f, exp2->formula->f32_block);
    }
    EXPECT_TRUE(bitwise_equal(fused, expected)) << fused << "\n" << expected;
    // And the reference kernel (the scalar function) agrees within the vector library's bound.
    EXPECT_TRUE(tf::allclose(fused, reference_run(primal, args)[0], dtype == tf::DType::F64 ? 1e-14 : 1e-6, 0.0));
  }
}

// A broadcast of a broadcast (a constant broadcast to a row and then over a batch, as vmap makes
// them) is read through one composed access: the scalar c as a scalar and the vector v along the
// innermost axis, with neither intermediate matrix materialized.
TEST(ExecGolden, ABroadcastOfABroadcastIsReadAsOne) {
  auto f = [](tf::Traced x, tf::Traced c, tf::Traced v) {
    const tf::Traced cc = tf::broadcast_to(tf::broadcast_to(c, {2, 3}), {4, 2, 3});
    const tf::Traced vv = tf::broadcast_to(tf::broadcast_to(v, {2, 3}), {4, 2, 3});
    return x * cc + vv;
  };
  const std::vector<tf::Tensor> args = {random_tensor({4, 2, 3}, 31), random_tensor({}, 32), random_tensor({3}, 33)};
  auto [primal, grad] = programs(f, args);
  const auto fused = golden_runs(primal, args, "broadcast_of_broadcast");
  const double* x = args[0].data<double>();
  const double c = args[1].item<double>();
  const double* v = args[2].data<double>();
  const double* y = fused[0].data<double>();
  for (std::int64_t e = 0; e < 24; ++e) EXPECT_EQ(y[e], x[e] * c + v[e % 3]) << e;
}

// ---- compiled runs of arithmetic (exec/arith_jit.hpp) ---------------------------------------------

namespace {
tf::ExecOptions interpreted() {
  tf::ExecOptions o;
  o.compile_arithmetic = false;
  return o;
}

/// Equal bits, or both NaN: where both operands of an add or a multiply are NaN, which one comes
/// out is unspecified (arith_jit.hpp).
bool same_bits_or_both_nan(const tf::Tensor& a, const tf::Tensor& b) {
  if (a.type() != b.type()) return false;
  for (std::int64_t i = 0; i < a.numel(); ++i) {
    const double x = a.dtype() == tf::DType::F64 ? a.data<double>()[i] : a.data<float>()[i];
    const double y = b.dtype() == tf::DType::F64 ? b.data<double>()[i] : b.data<float>()[i];
    if (std::isnan(x) && std::isnan(y)) continue;
    const std::size_t size = tf::dtype_size(a.dtype());
    if (std::memcmp(static_cast<const char*>(a.raw_data()) + i * static_cast<std::int64_t>(size),
                    static_cast<const char*>(b.raw_data()) + i * static_cast<std::int64_t>(size), size) != 0) {
      return false;
    }
  }
  return true;
}

/// A random straight-line program over x, y, z: each step combines earlier values picked at
/// random among all of them (so many stay live at once) by add, sub, mul, div, neg, abs or
/// sqrt(|.|), or by exp, sin and cos (often of one value: a sincos pair), tanh, log and expm1,
/// which compiled runs call; the result adds every value, so each is read once more at the end.
auto random_arithmetic(std::uint64_t seed, int steps) {
  return [seed, steps](tf::Traced x, tf::Traced y, tf::Traced z) {
    std::mt19937_64 rng(seed);
    std::vector<tf::Traced> v = {x, y, z};
    for (int s = 0; s < steps; ++s) {
      const tf::Traced& a = v[rng() % v.size()];
      const tf::Traced& b = v[rng() % v.size()];
      switch (rng() % 12) {
        case 0: v.push_back(a + b); break;
        case 1: v.push_back(a - b); break;
        case 2: v.push_back(a * b); break;
        case 3: v.push_back(a / (tf::abs(b) + 0.5)); break;
        case 4: v.push_back(-a); break;
        case 5: v.push_back(tf::abs(a) * b); break;
        case 6: v.push_back(tf::sqrt(tf::abs(a))); break;
        case 7: v.push_back(tf::exp(-tf::abs(a))); break;
        case 8: v.push_back(tf::sin(a) * tf::cos(a) + tf::sin(b)); break;  // a sincos pair
        case 9: v.push_back(tf::tanh(a) - tf::log(tf::abs(b) + 1.0)); break;
        case 10: v.push_back(tf::expm1(-tf::abs(a)) / (tf::cos(b) + 2.0)); break;
        default: v.push_back(a * 0.75 + b); break;
      }
    }
    tf::Traced total = v[0];
    for (std::size_t k = 1; k < v.size(); ++k) total = total + v[k];
    return total;
  };
}

std::size_t count_of(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

/// Restores the vector instruction set a test changes.
struct IsaGuard {
  tf::exec::VectorIsa saved = tf::exec::vector_isa();
  ~IsaGuard() { tf::exec::set_vector_isa(saved); }
};
}  // namespace

// At every vector width the CPU runs, for f64 and f32, at lengths around the vector, block and
// chunk sizes, compiled runs give the interpreter's bits; programs of 60 steps keep more values
// live than the registers hold (the runs are cut, and pointers beyond the general registers are
// reloaded).
TEST(CompiledArithmetic, RunsGiveTheInterpretersBits) {
  IsaGuard guard;
  for (tf::exec::VectorIsa isa : tf::exec::runnable_vector_isas()) {
    if (isa == tf::exec::VectorIsa::Sse2) continue;
    tf::exec::set_vector_isa(isa);
    for (tf::DType dtype : {tf::DType::F64, tf::DType::F32}) {
      for (std::int64_t n : {1, 9, 257, 4099, 20000}) {
        for (std::uint64_t seed = 1; seed <= 4; ++seed) {
          const int steps = seed <= 2 ? 12 : 60;
          const std::vector<tf::Tensor> args = {random_tensor({n}, 10 * seed, dtype), random_tensor({n}, 10 * seed + 1, dtype),
                                                random_tensor({n}, 10 * seed + 2, dtype)};
          auto [primal, grad] = programs(random_arithmetic(seed, steps), args);
          const tf::exec::Executable compiled(primal, {}), plain(primal, interpreted());
          const std::string printed = compiled.print();
          // Kernels of fewer than 64 elements stay interpreted (arith_jit.hpp).
          if (n < 64) {
            EXPECT_EQ(count_of(printed, "compiled("), 0u) << printed;
          } else {
            ASSERT_GE(count_of(printed, "compiled("), 1u) << printed;
          }
          if (steps == 60 && n >= 64) {
            EXPECT_GE(count_of(printed, "compiled("), 2u) << printed;
          }
          const std::string where = std::string(tf::exec::to_string(isa)) + " " + tf::dtype_name(dtype) +
                                    " n=" + std::to_string(n) + " seed=" + std::to_string(seed);
          EXPECT_TRUE(same_bits_or_both_nan(compiled.run(args)[0], plain.run(args)[0])) << where;
          // The gradient program's kernels too (its reverse sweep is mostly products and sums).
          std::vector<tf::Tensor> grad_args = args;
          grad_args.push_back(random_tensor({n}, 10 * seed + 3, dtype));
          const auto a = tf::exec::Executable(grad, {}).run(grad_args);
          const auto b = tf::exec::Executable(grad, interpreted()).run(grad_args);
          for (std::size_t o = 0; o < a.size(); ++o) EXPECT_TRUE(same_bits_or_both_nan(a[o], b[o])) << where << " gradient " << o;
        }
      }
    }
  }
}

// A closed form, element by element: ((x + y) * x - y) / (|x| + 1) + sqrt(|y|), each operation
// rounded once, in the order written.
TEST(CompiledArithmetic, MatchesTheFormulaRoundedOnceAtEachStep) {
  auto f = [](tf::Traced x, tf::Traced y) { return ((x + y) * x - y) / (tf::abs(x) + 1.0) + tf::sqrt(tf::abs(y)); };
  const std::int64_t n = 1001;
  const std::vector<tf::Tensor> args = {random_tensor({n}, 5), random_tensor({n}, 6)};
  auto [primal, grad] = programs(f, args);
  const tf::exec::Executable compiled(primal, {});
  ASSERT_EQ(count_of(compiled.print(), "compiled("), tf::exec::vector_isa() == tf::exec::VectorIsa::Sse2 ? 0u : 1u)
      << compiled.print();
  const tf::Tensor result = compiled.run(args)[0];
  for (std::int64_t i = 0; i < n; ++i) {
    volatile double x = args[0].data<double>()[i], y = args[1].data<double>()[i];
    volatile double s = x + y;
    volatile double p = s * x;
    volatile double d = p - y;
    volatile double q = d / (std::fabs(x) + 1.0);
    const double expected = q + std::sqrt(std::fabs(y));
    ASSERT_EQ(result.data<double>()[i], expected) << i;
  }
}

// Runs made for one vector-math table are not used with another: after a change of the
// instruction set or of the math library the interpreter runs them, with the same bits.
TEST(CompiledArithmetic, RunsMadeForOneTableAreNotUsedWithAnother) {
  IsaGuard guard;
  const auto isas = tf::exec::runnable_vector_isas();
  if (isas.back() == tf::exec::VectorIsa::Sse2) GTEST_SKIP() << "this CPU has no AVX2";
  const std::vector<tf::Tensor> args = {random_tensor({777}, 1), random_tensor({777}, 2), random_tensor({777}, 3)};
  auto [primal, grad] = programs(random_arithmetic(7, 40), args);
  tf::exec::set_vector_isa(isas.back());
  const tf::exec::Executable compiled(primal, {});
  ASSERT_GE(count_of(compiled.print(), "compiled("), 1u);
  const tf::MathAccuracy saved = tf::math_accuracy();
  for (tf::MathAccuracy accuracy : {tf::MathAccuracy::Fast, tf::MathAccuracy::Precise}) {
    tf::set_math_accuracy(accuracy);
    for (tf::exec::VectorIsa other : isas) {
      tf::exec::set_vector_isa(other);
      EXPECT_TRUE(same_bits_or_both_nan(compiled.run(args)[0], tf::exec::Executable(primal, interpreted()).run(args)[0]))
          << tf::exec::to_string(other) << " " << tf::to_string(accuracy);
    }
  }
  tf::set_math_accuracy(saved);
}

namespace {
/// `program` printed and run with the pass run_concurrently on or off (whatever the environment
/// switched off otherwise).
std::pair<std::string, std::vector<tf::Tensor>> run_with_concurrency(const tf::Program& program,
                                                                     const std::vector<tf::Tensor>& args, bool on) {
  const tf::ExecOptions saved = tf::exec_options();
  tf::ExecOptions o = saved;
  o.run_concurrently = on;
  tf::set_exec_options(o);
  try {
    std::pair<std::string, std::vector<tf::Tensor>> out{program.print_executable(), program.run(args)};
    tf::set_exec_options(saved);
    return out;
  } catch (...) {
    tf::set_exec_options(saved);
    throw;
  }
}
}  // namespace

// Independent decompositions (two SVDs and an eigh that need nothing of each other) run as one
// concurrent step, each on its own thread, with the same bits as one after the other; an SVD that
// reads their results runs after them, alone.
TEST(RunConcurrently, IndependentDecompositionsRunAtOnceWithTheSameBits) {
  const tf::Tensor a = random_tensor({160, 160}, 1), b = random_tensor({160, 160}, 2);
  const tf::Program program = tf::trace(
      [](const tf::Traced& x, const tf::Traced& y) {
        const auto s1 = tf::linalg::svd(x);
        const auto s2 = tf::linalg::svd(y * 2.0);
        const auto e = tf::linalg::eigh(tf::matmul(x, tf::transpose(x)));
        const auto late = tf::linalg::svd(s1.U + s2.U + e.eigenvectors);
        return std::vector<tf::Traced>{s1.S, s2.U, e.eigenvalues, late.S, late.Vh};
      },
      a, b);
  const auto [text, together] = run_with_concurrency(program, {a, b}, true);
  const auto [plain_text, alone] = run_with_concurrency(program, {a, b}, false);
  ASSERT_EQ(together.size(), alone.size());
  for (std::size_t i = 0; i < alone.size(); ++i) {
    EXPECT_EQ(std::memcmp(together[i].raw_data(), alone[i].raw_data(), alone[i].nbytes()), 0) << "output " << i;
  }
  const std::size_t at = text.find("concurrent {");
  ASSERT_NE(at, std::string::npos) << text;
  const std::string line = text.substr(at, text.find('\n', at) - at);
  auto count = [](const std::string& s, const std::string& what) {
    std::size_t n = 0;
    for (std::size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
    return n;
  };
  EXPECT_EQ(count(line, "svd["), 2u) << line;
  EXPECT_EQ(count(line, "eigh"), 1u) << line;
  EXPECT_EQ(count(text, "svd["), 3u) << text;  // the late one stays outside
  EXPECT_EQ(plain_text.find("concurrent"), std::string::npos);
}

// When several ops of a concurrent step fail, the error is the one the first would have thrown
// had they run in program order, whichever thread finished first.
TEST(RunConcurrently, TheFirstFailureInProgramOrderIsThrown) {
  constexpr std::int64_t n = 130;
  auto indefinite_at = [](std::int64_t k) {
    std::vector<double> v(static_cast<std::size_t>(n * n), 0.0);
    for (std::int64_t i = 0; i < n; ++i) v[static_cast<std::size_t>(i * n + i)] = i == k ? -1.0 : 1.0;
    return tf::Tensor::from(v, {n, n});
  };
  const tf::Tensor a = indefinite_at(3), b = indefinite_at(7);  // minors of order 4 and 8 fail
  for (const bool a_first : {true, false}) {
    const tf::Program program = tf::trace(
        [a_first](const tf::Traced& x, const tf::Traced& y) {
          const tf::Traced first = tf::linalg::cholesky(a_first ? x : y);
          const tf::Traced second = tf::linalg::cholesky(a_first ? y : x);
          return std::vector<tf::Traced>{first, second};
        },
        a, b);
    try {
      const auto result = run_with_concurrency(program, {a, b}, true);
      FAIL() << "expected LinalgError";
    } catch (const tf::LinalgError& e) {
      EXPECT_EQ(e.info(), a_first ? 4 : 8);
    }
    const tf::ExecOptions saved = tf::exec_options();
    tf::ExecOptions on = saved;
    on.run_concurrently = true;
    tf::set_exec_options(on);
    const std::string text = program.print_executable();  // the two factorizations are one step
    tf::set_exec_options(saved);
    EXPECT_NE(text.find("concurrent {"), std::string::npos) << text;
  }
}
