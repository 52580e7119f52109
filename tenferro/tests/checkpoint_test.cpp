// Checkpointing (tenferro::checkpoint, ScanOptions::checkpoint_every): values and gradients are
// those of the plain program bit for bit (same thread count), derivatives of every order pass
// check_grads, it composes with vmap and scan bodies, and it does what it is for: the gradient's
// peak tensor memory (MemoryMeter) is measured lower.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "op_test_util.hpp"
#include "tenferro/buffer_pool.hpp"
#include "tenferro/program.hpp"
#include "tenferro/tenferro.hpp"

namespace tf = tenferro;
using T = tf::Traced;
using L = tf::TracedList;

namespace {

tf::Tensor random_tensor(tf::Shape shape, std::uint64_t seed, double scale = 1.0) {
  return tf::test::random_f64(std::move(shape), seed, scale);
}

void expect_bitwise(const tf::Tensor& a, const tf::Tensor& b) { EXPECT_TRUE(tf::test::bitwise_equal(a, b)); }

/// Segments of `per_segment` tanh layers, segment s with weight ws[s] (no weight is shared
/// between segments, so that the cotangents add up in the same order with and without
/// checkpoints), each segment one checkpoint when `checkpointed`.
T deep_net(const T& x, const std::vector<T>& ws, int per_segment, bool checkpointed) {
  auto segment = [per_segment](const T& h0, const T& m) {
    T h = h0;
    for (int k = 0; k < per_segment; ++k) h = tf::tanh(tf::matmul(h, m)) + h * 0.5;
    return h;
  };
  T h = x;
  for (const T& w : ws) h = checkpointed ? tf::checkpoint(segment)(h, w) : segment(h, w);
  return tf::sum(h * h);
}

std::vector<tf::Tensor> weights(int count, std::int64_t width, std::uint64_t seed, double scale) {
  std::vector<tf::Tensor> ws;
  for (int s = 0; s < count; ++s) ws.push_back(random_tensor({width, width}, seed + static_cast<std::uint64_t>(s), scale));
  return ws;
}

}  // namespace

TEST(Checkpoint, GradientsAreThePlainGradientsBitForBit) {
  const tf::Tensor x = random_tensor({8, 16}, 1);
  const std::vector<tf::Tensor> ws = weights(4, 16, 2, 0.25);
  auto loss = [](bool c) { return [c](const T& a, const std::vector<T>& b) { return deep_net(a, b, 3, c); }; };
  const auto [v0, gx0] = tf::value_and_grad(loss(false), tf::argnum<0>)(x, ws);
  const auto [v1, gx1] = tf::value_and_grad(loss(true), tf::argnum<0>)(x, ws);
  const std::vector<tf::Tensor> gw0 = tf::grad(loss(false), tf::argnum<1>)(x, ws), gw1 = tf::grad(loss(true), tf::argnum<1>)(x, ws);
  expect_bitwise(v1, v0);
  expect_bitwise(gx1, gx0);
  for (std::size_t s = 0; s < ws.size(); ++s) expect_bitwise(gw1[s], gw0[s]);
  const std::string ir = tf::trace([&](T a, T b) { return deep_net(a, {b}, 3, true); }, x, ws[0]).print();
  EXPECT_THAT(ir, testing::HasSubstr("cond[checkpoint, operands=2]"));
}

// The reason for it: the gradient keeps a checkpoint's operands, not its intermediates. A net of
// 32 layers in 4 checkpoints keeps 4 boundaries and one segment's values at a time instead of
// every layer's.
TEST(Checkpoint, TheGradientsPeakMemoryIsLower) {
  const tf::Tensor x = random_tensor({256, 64}, 3);
  const std::vector<tf::Tensor> ws = weights(4, 64, 4, 0.12);
  auto plain = tf::grad([](const T& a, const std::vector<T>& b) { return deep_net(a, b, 8, false); }, tf::argnum<1>);
  auto checkpointed = tf::grad([](const T& a, const std::vector<T>& b) { return deep_net(a, b, 8, true); }, tf::argnum<1>);
  plain(x, ws);  // compiled and warm: the meter sees one run
  checkpointed(x, ws);
  tf::MemoryMeter meter;
  const std::vector<tf::Tensor> g0 = plain(x, ws);
  const std::size_t plain_peak = meter.peak_bytes();
  meter.reset();
  const std::vector<tf::Tensor> g1 = checkpointed(x, ws);
  const std::size_t checkpointed_peak = meter.peak_bytes();
  for (std::size_t s = 0; s < ws.size(); ++s) expect_bitwise(g1[s], g0[s]);
  const std::size_t activation = 256 * 64 * sizeof(double);
  EXPECT_GE(plain_peak, 32 * activation) << "the plain gradient keeps at least one value per layer";
  EXPECT_LT(checkpointed_peak * 2, plain_peak) << "plain " << plain_peak << " B, checkpointed " << checkpointed_peak << " B";
}

TEST(Checkpoint, DerivativesOfEveryOrder) {
  const tf::Tensor x = random_tensor({2, 3}, 5), w0 = random_tensor({3, 3}, 6, 0.5), w1 = random_tensor({3, 3}, 7, 0.5);
  auto checkpointed = [](T a, T b, T c) { return deep_net(a, {b, c}, 2, true); };
  auto plain = [](T a, T b, T c) { return deep_net(a, {b, c}, 2, false); };
  const std::vector<tf::Tensor> args = {x, w0, w1};
  const auto result = tidu::testkit::check_grads(
      tidu::testkit::function_of(tf::detail::trace_graph(checkpointed, tf::detail::types_of(args))), std::span<const tf::Tensor>(args), 2);
  EXPECT_TRUE(result.ok) << result.message;
  // Second order: the Hessian's columns combine terms in another order through the regions.
  const tf::Tensor h0 = tf::hessian(plain, 1)(x, w0, w1), h1 = tf::hessian(checkpointed, 1)(x, w0, w1);
  for (std::int64_t i = 0; i < h0.numel(); ++i) {
    EXPECT_NEAR(h1.data<double>()[i], h0.data<double>()[i], 1e-12 * (1 + std::abs(h0.data<double>()[i])));
  }
}

// Under vmap a checkpoint stays one (per-example gradients through it), and inside a scan body
// each step keeps only its checkpoint's operands.
TEST(Checkpoint, UnderVmapAndInsideScanBodies) {
  const tf::Tensor xs = random_tensor({5, 1, 3}, 8), w0 = random_tensor({3, 3}, 9, 0.5), w1 = random_tensor({3, 3}, 10, 0.5);
  auto per_example = [&](bool c) {
    auto g = tf::grad([c](T a, T b, T d) { return deep_net(a, {b, d}, 2, c); }, 1);
    return tf::vmap(g, {.in_axes = {0, std::nullopt, std::nullopt}})(xs, w0, w1);
  };
  expect_bitwise(per_example(true), per_example(false));
  auto batched = [](T a, T b, T d) {
    return tf::vmap(tf::grad([](T u, T m, T n) { return deep_net(u, {m, n}, 2, true); }, 1),
                    {.in_axes = {0, std::nullopt, std::nullopt}})(a, b, d);
  };
  EXPECT_THAT(tf::trace(batched, xs, w0, w1).print(), testing::HasSubstr("checkpoint"));

  auto recurrence = [](T h0, T m, bool c) {
    auto step = [&](const L& carry, const L&) {
      auto body = [](const T& h, const T& k) { return tf::tanh(tf::matmul(h, k)) * 0.9 + h * 0.1; };
      return std::pair{L{c ? tf::checkpoint(body)(carry[0], m) : body(carry[0], m)}, L{}};
    };
    return tf::sum(tf::scan(step, {h0}, {}, {.length = 6}).first[0]);
  };
  const tf::Tensor h0 = random_tensor({1, 3}, 11);
  // The weight's cotangent sums the steps' contributions in the same order either way: one
  // contribution per step, accumulated by the scan's transpose.
  expect_bitwise(tf::grad([&](T a, T b) { return recurrence(a, b, true); }, 1)(h0, w0),
                 tf::grad([&](T a, T b) { return recurrence(a, b, false); }, 1)(h0, w0));
}

// scan's checkpoint_every (blocks of k steps, each a checkpoint; a remainder block runs plain):
// forward and reverse scans with xs and ys give the plain scan's values and gradients bit for
// bit, and the gradient's peak memory falls. (checkpoint_snapshots: checkpoint_loop_test.cpp.)
TEST(Checkpoint, ScanInCheckpointedBlocks) {
  const tf::Tensor c0 = random_tensor({64, 32}, 10), xs = random_tensor({50, 32}, 11, 0.3);
  auto run = [](T c, T x, tf::ScanOptions options) {
    auto step = [](const L& carry, const L& x_t) {
      const T h = tf::tanh(carry[0] * 0.9 + x_t[0]);
      return std::pair{L{h}, L{tf::sum(h, {0})}};
    };
    auto r = tf::scan(step, {c}, {x}, options);
    return tf::sum(r.first[0]) + tf::sum(r.second[0] * r.second[0]);
  };
  for (bool reverse : {false, true}) {
    SCOPED_TRACE(reverse ? "reverse" : "forward");
    const auto [v0, g0] = tf::value_and_grad([=](T c, T x) { return run(c, x, {.reverse = reverse}); }, {0, 1})(c0, xs);
    for (const tf::ScanOptions& options : {tf::ScanOptions{.checkpoint_every = 7}, tf::ScanOptions{.checkpoint_every = 10},
                                           tf::ScanOptions{.checkpoint_every = 50}, tf::ScanOptions{.checkpoint_every = 80}}) {
      SCOPED_TRACE("every " + std::to_string(options.checkpoint_every));
      tf::ScanOptions o = options;
      o.reverse = reverse;
      const auto [v1, g1] = tf::value_and_grad([=](T c, T x) { return run(c, x, o); }, {0, 1})(c0, xs);
      expect_bitwise(v1, v0);
      expect_bitwise(g1[0], g0[0]);
      expect_bitwise(g1[1], g0[1]);
    }
  }
  auto plain = tf::grad([=](T c, T x) { return run(c, x, {}); }, 0);
  auto blocked = tf::grad([=](T c, T x) { return run(c, x, {.checkpoint_every = 7}); }, 0);
  plain(c0, xs);
  blocked(c0, xs);
  tf::MemoryMeter meter;
  plain(c0, xs);
  const std::size_t plain_peak = meter.peak_bytes();
  meter.reset();
  blocked(c0, xs);
  const std::size_t blocked_peak = meter.peak_bytes();
  EXPECT_LT(blocked_peak * 2, plain_peak) << "plain " << plain_peak << " B, blocked " << blocked_peak << " B";
  auto negative = [](T c) {
    return tf::scan([](const L& carry, const L&) { return std::pair{carry, L{}}; }, {c}, {}, {.length = 3, .checkpoint_every = -1})
        .first[0];
  };
  EXPECT_THROW(tf::trace(negative, c0), tf::ValueError);
}

// A checkpoint of 70 operands, more than one machine word of per-operand flags: its gradient is
// the plain one bit for bit, as is a scan that carries 70 values.
TEST(Checkpoint, SeventyOperands) {
  constexpr int kCount = 70;
  std::vector<tf::Tensor> xs;
  for (int i = 0; i < kCount; ++i) xs.push_back(random_tensor({3}, 100 + static_cast<std::uint64_t>(i)));
  const auto body = [](const L& a) {
    T acc = tf::tanh(a[0]);
    for (std::size_t i = 1; i < a.size(); ++i) acc = acc * 0.9 + tf::sin(a[i]) * a[i - 1];
    return L{acc};
  };
  auto loss = [&](bool checkpointed) {
    return [=](const std::vector<T>& v) {
      const L out = checkpointed ? tf::checkpoint(body, L(v.begin(), v.end())) : body(L(v.begin(), v.end()));
      return tf::sum(out[0] * out[0]);
    };
  };
  const std::vector<tf::Tensor> plain = tf::grad(loss(false))(xs), checkpointed = tf::grad(loss(true))(xs);
  ASSERT_EQ(checkpointed.size(), plain.size());
  for (std::size_t i = 0; i < plain.size(); ++i) expect_bitwise(checkpointed[i], plain[i]);

  auto scanned = [&](bool in_scan) {
    return [=](const std::vector<T>& v) {
      const auto step = [](const L& carry, const L&) {
        L next = carry;
        for (std::size_t i = 0; i + 1 < carry.size(); ++i) next[i] = tf::sin(carry[i + 1]) * carry[i];
        return std::pair{next, L{}};
      };
      L carry(v.begin(), v.end());
      if (in_scan) {
        carry = tf::scan(step, carry, {}, {.length = 2}).first;
      } else {
        for (int k = 0; k < 2; ++k) carry = step(carry, {}).first;
      }
      T total = tf::sum(carry[0]);
      for (std::size_t i = 1; i < carry.size(); ++i) total = total + tf::sum(carry[i]);
      return total;
    };
  };
  const std::vector<tf::Tensor> unrolled = tf::grad(scanned(false))(xs), looped = tf::grad(scanned(true))(xs);
  ASSERT_EQ(looped.size(), unrolled.size());
  for (std::size_t i = 0; i < unrolled.size(); ++i) {
    EXPECT_TRUE(tf::test::near(looped[i], unrolled[i], 1e-12)) << "operand " << i;
  }
}

TEST(Checkpoint, NeedsAnOperand) {
  EXPECT_THROW(tf::checkpoint([](const L& xs) { return xs; }, L{}), tf::ShapeError);
}

// Program::memory_stats: the run plan's peak against the measured one. The plan follows the
// executor's allocations (results, in-place reuse, shared storage) and adds, while a control-flow
// op runs, its largest body's own plan; the pool grants at most 1/8 above a request, and kernels'
// scratch (OpenBLAS's, LAPACK's) does not come from the pool. So the measurement lies within
// [plan, 1.15 plan]: measured 8618432 B for 8618016 planned without checkpoints, 3015168 B for
// 2850856 with them.
TEST(Checkpoint, PlannedAndMeasuredPeaks) {
  const tf::Tensor x = random_tensor({256, 64}, 12), w = random_tensor({64, 64}, 13, 0.12);
  std::size_t plain = 0, checkpointed = 0;
  for (bool c : {false, true}) {
    SCOPED_TRACE(c ? "checkpointed" : "plain");
    auto gradient = [c](T a, T m) {
      return tf::grad([c](T u, T k) { return deep_net(u, {k, k * 1.0, k * 0.9, k * 1.1}, 8, c); }, 1)(a, m);
    };
    const auto stats = tf::trace(gradient, x, w).memory_stats({x, w});
    EXPECT_GE(stats.measured_peak_bytes, stats.planned_peak_bytes);
    EXPECT_LE(static_cast<double>(stats.measured_peak_bytes), 1.15 * static_cast<double>(stats.planned_peak_bytes));
    (c ? checkpointed : plain) = stats.planned_peak_bytes;
  }
  EXPECT_LT(checkpointed * 2, plain);
}

// The automatic schedule: rematerialize cuts f into as few checkpoints as keep the planned peak
// of the gradient within the limit. With room to spare it changes nothing; below the plain plan
// it checkpoints, the gradient program's plan stays within the limit and its measured peak within
// the plan's tolerance, and the gradients are the plain ones (each weight is read in one range,
// so its cotangent adds up as in the plain program); a limit below every plan is a ValueError.
TEST(Checkpoint, TheAutomaticScheduleKeepsThePlanWithinTheLimit) {
  const tf::Tensor x = random_tensor({256, 64}, 14);
  const std::vector<tf::Tensor> ws = weights(4, 64, 15, 0.12);
  auto net = [](T a, T w0, T w1, T w2, T w3) { return deep_net(a, {w0, w1, w2, w3}, 8, false); };
  auto gradient_program = [&](std::size_t limit) {
    auto loss = [net, limit](T a, T w0, T w1, T w2, T w3) {
      return limit == 0 ? net(a, w0, w1, w2, w3) : tf::rematerialize(net, {.memory_limit = limit})(a, w0, w1, w2, w3);
    };
    auto g = [loss](T a, T w0, T w1, T w2, T w3) {
      return tf::value_and_grad(loss, {0, 1, 2, 3, 4})(a, w0, w1, w2, w3).second;
    };
    return tf::trace(g, x, ws[0], ws[1], ws[2], ws[3]);
  };
  const tf::Tensors args = {x, ws[0], ws[1], ws[2], ws[3]};
  const tf::Program plain = gradient_program(0);
  const std::size_t plain_plan = plain.planned_peak_bytes();
  const tf::Tensors g0 = plain.run(args);

  const tf::Program roomy = gradient_program(plain_plan);
  EXPECT_THAT(roomy.print(), testing::Not(testing::HasSubstr("checkpoint")));

  const std::size_t limit = plain_plan * 2 / 5;
  const tf::Program tight = gradient_program(limit);
  EXPECT_THAT(tight.print(), testing::HasSubstr("cond[checkpoint"));
  const auto stats = tight.memory_stats(args);
  EXPECT_LE(stats.planned_peak_bytes, limit);
  EXPECT_LE(static_cast<double>(stats.measured_peak_bytes), 1.15 * static_cast<double>(stats.planned_peak_bytes));
  const tf::Tensors g1 = tight.run(args);
  for (std::size_t k = 0; k < g0.size(); ++k) expect_bitwise(g1[k], g0[k]);

  try {
    gradient_program(4096);
    ADD_FAILURE() << "a 4 KiB limit was accepted";
  } catch (const tf::ValueError& e) {
    EXPECT_THAT(e.what(), testing::HasSubstr("the lowest is"));
  }
}

// A fixed count of ranges (RematOptions::checkpoints): every cut of the operations is a valid
// sequence of checkpoints. The gradients are the plain ones bit for bit here, where no value is
// read more than twice (a sum of two cotangents does not depend on its order); a value read by
// three operations that a cut separates would get its cotangents added in another order.
TEST(Checkpoint, EveryCutOfTheOperationsIsValid) {
  const tf::Tensor x = random_tensor({4, 6}, 16);
  const std::vector<tf::Tensor> ws = weights(3, 6, 17, 0.4);
  auto net = [](T a, T w0, T w1, T w2) { return deep_net(a, {w0, w1, w2}, 1, false); };
  const tf::Tensors g0 = tf::value_and_grad(net, {0, 1, 2, 3})(x, ws[0], ws[1], ws[2]).second;
  for (std::size_t count = 1; count <= 40; count += count < 8 ? 1 : 16) {
    SCOPED_TRACE(count);
    auto cut = [count, net](T a, T w0, T w1, T w2) { return tf::rematerialize(net, {.checkpoints = count})(a, w0, w1, w2); };
    const tf::Tensors g1 = tf::value_and_grad(cut, {0, 1, 2, 3})(x, ws[0], ws[1], ws[2]).second;
    for (std::size_t k = 0; k < g0.size(); ++k) expect_bitwise(g1[k], g0[k]);
    const std::string ir = tf::trace(cut, x, ws[0], ws[1], ws[2]).print();
    EXPECT_EQ(ir.find("checkpoint") == std::string::npos, count == 1) << ir;
  }
  auto both = [net](T a, T w0, T w1, T w2) {
    return tf::rematerialize(net, {.memory_limit = 1 << 20, .checkpoints = 2})(a, w0, w1, w2);
  };
  EXPECT_THROW(tf::trace(both, x, ws[0], ws[1], ws[2]), tf::ValueError);
}

namespace {
/// Layers h -> act(h w) with an activation of several intermediates (what a plain gradient keeps
/// per layer: sin, tanh, exp and their derivatives' factors), the weights captured from the
/// enclosing trace, the whole net one checkpoint under `policy` (none: no checkpoint).
T policy_net(const T& x, const std::vector<T>& ws, std::optional<tf::CheckpointPolicy> policy) {
  auto net = [&ws](const T& h0) {
    T h = h0;
    for (const T& w : ws) {
      const T m = tf::matmul(h, w);
      h = tf::sin(m) * tf::tanh(m) + tf::exp(m * 0.1);
    }
    return h;
  };
  const T h = policy ? tf::checkpoint(net, *policy)(x) : net(x);
  return tf::sum(h * h);
}

std::size_t count_of(const std::string& text, const std::string& word) {
  std::size_t count = 0;
  for (std::size_t at = text.find(word); at != std::string::npos; at = text.find(word, at + 1)) ++count;
  return count;
}
}  // namespace

// JAX's policies: SaveDots keeps the contractions' results and recomputes the activations between
// them; the gradients are the plain ones (to rounding: a value read by two ranges adds its
// cotangents in another order), no contraction runs twice, and the peak is lower than the plain
// gradient's. SaveNothing recomputes the contractions too; SaveEverything is the plain program.
TEST(Checkpoint, PoliciesSaveWhatTheySay) {
  const tf::Tensor x = random_tensor({128, 48}, 11, 0.5);
  const std::vector<tf::Tensor> ws = weights(6, 48, 12, 0.15);
  using P = std::optional<tf::CheckpointPolicy>;
  auto gradient = [](P p) {
    return tf::grad([p](const T& a, const std::vector<T>& b) { return policy_net(a, b, p); }, tf::argnum<1>);
  };
  auto x_gradient = [](P p) { return tf::grad([p](const T& a, const std::vector<T>& b) { return policy_net(a, b, p); }); };
  const auto plain = gradient(std::nullopt);
  const std::vector<tf::Tensor> gw0 = plain(x, ws);
  const tf::Tensor gx0 = x_gradient(std::nullopt)(x, ws);
  for (const tf::CheckpointPolicy p : {tf::CheckpointPolicy::SaveNothing, tf::CheckpointPolicy::SaveDots, tf::CheckpointPolicy::SaveEverything}) {
    SCOPED_TRACE(static_cast<int>(p));
    const std::vector<tf::Tensor> gw = gradient(p)(x, ws);
    EXPECT_TRUE(tf::test::near(x_gradient(p)(x, ws), gx0, 1e-12));
    for (std::size_t s = 0; s < ws.size(); ++s) EXPECT_TRUE(tf::test::near(gw[s], gw0[s], 1e-12));
  }
  // The gradient programs, printed with their regions: how many contractions each runs.
  auto printed = [&](P p) {
    return tf::trace(
               [p](T a, T w0, T w1, T w2, T w3, T w4, T w5) {
                 const std::vector<T> w = {w0, w1, w2, w3, w4, w5};
                 return tf::grad([p](const T& v, const std::vector<T>& b) { return policy_net(v, b, p); }, tf::argnum<1>)(a, w)[0];
               },
               x, ws[0], ws[1], ws[2], ws[3], ws[4], ws[5])
        .print();
  };
  const std::size_t plain_dots = count_of(printed(std::nullopt), "dot_general");
  EXPECT_EQ(count_of(printed(tf::CheckpointPolicy::SaveDots), "dot_general"), plain_dots);
  EXPECT_GT(count_of(printed(tf::CheckpointPolicy::SaveNothing), "dot_general"), plain_dots);
  EXPECT_THAT(printed(tf::CheckpointPolicy::SaveDots), testing::HasSubstr("cond[checkpoint"));
  // Memory, measured: the plain gradient keeps several activations' worth per layer, SaveDots one.
  const auto dots = gradient(tf::CheckpointPolicy::SaveDots);
  plain(x, ws);
  dots(x, ws);
  tf::MemoryMeter meter;
  plain(x, ws);
  const std::size_t plain_peak = meter.peak_bytes();
  meter.reset();
  dots(x, ws);
  const std::size_t dots_peak = meter.peak_bytes();
  EXPECT_LT(dots_peak * 3, plain_peak * 2) << "plain " << plain_peak << " B, SaveDots " << dots_peak << " B";
}

// Without a contraction SaveDots is checkpoint(f); under vmap and at second order it is f.
TEST(Checkpoint, SaveDotsComposes) {
  auto f = [](const T& a) { return tf::sum(tf::sin(a) * a); };
  const tf::Tensor x = random_tensor({5}, 13);
  const std::string ir = tf::trace([&](T a) { return tf::checkpoint(f, tf::CheckpointPolicy::SaveDots)(a); }, x).print();
  EXPECT_THAT(ir, testing::HasSubstr("cond[checkpoint, operands=1]"));
  const tf::Tensor w = random_tensor({5, 5}, 14, 0.3);
  auto g = [&](const T& a) {
    return tf::checkpoint([&](const T& v) { return tf::sum(tf::tanh(tf::matmul(tf::constant(v, w), v)) * v); }, tf::CheckpointPolicy::SaveDots)(a);
  };
  auto plain = [&](const T& a) { return tf::sum(tf::tanh(tf::matmul(tf::constant(a, w), a)) * a); };
  EXPECT_TRUE(tf::test::near(tf::hessian(g)(x), tf::hessian(plain)(x), 1e-12));
  const tf::Tensor xs = random_tensor({3, 5}, 15);
  EXPECT_TRUE(tf::test::near(tf::vmap(tf::grad(g))(xs), tf::vmap(tf::grad(plain))(xs), 1e-12));
}

// SaveNamed keeps the values named by checkpoint_name (those in `names`, or all) and recomputes
// the rest: gradients are f's, and the kept values bound the ranges (one checkpoint per range).
TEST(Checkpoint, SaveNamedKeepsTheNamedValues) {
  const tf::Tensor x = random_tensor({16, 12}, 21, 0.5);
  const std::vector<tf::Tensor> ws = weights(4, 12, 22, 0.2);
  auto net = [](const T& x0, const std::vector<T>& w, std::optional<tf::CheckpointOptions> options) {
    auto body = [&w](const T& h0) {
      T h = h0;
      for (std::size_t k = 0; k < w.size(); ++k) {
        const T m = tf::checkpoint_name(tf::matmul(h, w[k]), k % 2 == 0 ? "even" : "odd");
        h = tf::sin(m) * tf::tanh(m);
      }
      return h;
    };
    const T h = options ? tf::checkpoint(body, *options)(x0) : body(x0);
    return tf::sum(h * h);
  };
  using O = std::optional<tf::CheckpointOptions>;
  auto gradient = [&](O o) { return tf::grad([&net, o](const T& a, const std::vector<T>& b) { return net(a, b, o); }, tf::argnum<1>); };
  const std::vector<tf::Tensor> expected = gradient(std::nullopt)(x, ws);
  auto checkpoints = [&](O o) {
    const std::string ir = tf::trace([&net, o](T a, T w0, T w1, T w2, T w3) { return net(a, {w0, w1, w2, w3}, o); }, x, ws[0], ws[1], ws[2], ws[3]).print();
    return count_of(ir, "cond[checkpoint");
  };
  for (const O& o : {O{{.policy = tf::CheckpointPolicy::SaveNamed}}, O{{.policy = tf::CheckpointPolicy::SaveNamed, .names = {"odd"}}},
                    O{{.policy = tf::CheckpointPolicy::SaveNamed, .names = {"none of them"}}}}) {
    const std::vector<tf::Tensor> got = gradient(o)(x, ws);
    for (std::size_t s = 0; s < ws.size(); ++s) EXPECT_TRUE(tf::test::near(got[s], expected[s], 1e-12));
  }
  // Four named values: four cuts, five ranges; the two named "odd": three ranges; no match: the
  // plain checkpoint, one.
  EXPECT_EQ(checkpoints(O{{.policy = tf::CheckpointPolicy::SaveNamed}}), 5u);
  EXPECT_EQ(checkpoints(O{{.policy = tf::CheckpointPolicy::SaveNamed, .names = {"odd"}}}), 3u);
  EXPECT_EQ(checkpoints(O{{.policy = tf::CheckpointPolicy::SaveNamed, .names = {"none of them"}}}), 1u);
  // The name is printed and reads through: the value is its operand's.
  const std::string ir = tf::trace([](T a) { return tf::checkpoint_name(a * 2.0, "twice"); }, x).print();
  EXPECT_THAT(ir, testing::HasSubstr("checkpoint_name[\"twice\"]"));
}

// A policy's ranges read the values they keep in their derivatives instead of recomputing them
// (CondAttrs::reads_results): with an SVD's factors named and kept, the gradient program runs the
// SVD once, as the plain one does, where the plain checkpoint runs it again; the gradient and the
// Hessian equal the plain ones.
TEST(Checkpoint, APolicysDerivativeReadsTheValuesItKeeps) {
  const tf::Tensor x = random_tensor({6, 5}, 31);
  auto f = [](const T& a) {
    auto [u, s, vh] = tf::linalg::svd(a);
    u = tf::checkpoint_name(u, "svd");
    s = tf::checkpoint_name(s, "svd");
    vh = tf::checkpoint_name(vh, "svd");
    const T m = tf::matmul(u * tf::sin(s), vh);
    return tf::sum(m * m * a);
  };
  auto loss = [&f](int mode) {
    return [&f, mode](const T& a) {
      if (mode == 0) return f(a);
      if (mode == 1) return tf::checkpoint(f)(a);
      return tf::checkpoint(f, {.policy = tf::CheckpointPolicy::SaveNamed, .names = {"svd"}})(a);
    };
  };
  auto svds_in_gradient = [&](int mode) {
    const std::string ir = tf::trace([&](T a) { return tf::vjp(loss(mode), {a}, tf::full_like(tf::sum(a), 1.0)).second[0]; }, x).print();
    return count_of(ir, "= svd[");
  };
  EXPECT_EQ(svds_in_gradient(0), 1u);
  EXPECT_EQ(svds_in_gradient(1), 2u) << "the plain checkpoint recomputes the SVD";
  EXPECT_EQ(svds_in_gradient(2), 1u) << "the kept factors are read, not recomputed";
  const tf::Tensor g0 = tf::grad(loss(0))(x), h0 = tf::hessian(loss(0))(x);
  for (int mode : {1, 2}) {
    EXPECT_TRUE(tf::test::near(tf::grad(loss(mode))(x), g0, 1e-12)) << "mode " << mode;
    EXPECT_TRUE(tf::test::near(tf::hessian(loss(mode))(x), h0, 1e-10)) << "mode " << mode;
  }
}
