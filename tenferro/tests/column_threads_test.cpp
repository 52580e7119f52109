// The column sweeps of hessian, jacfwd and jacrev run on the threads (tenferro::detail::
// ParallelColumns): every entry must match its closed form and be bitwise the same for one thread
// and for two, and the schedule must visit every column once and pass exceptions back. Small
// Jacobians run as one batched program instead (vmap of the derivative program; transformed.cpp,
// batched_jacobian): each test takes one size of each kind, with the same expectations.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <cstring>
#include <vector>

#include "tenferro/tenferro.hpp"

namespace {

namespace tf = tenferro;

// The hessian callable runs its columns on several threads when there are enough of them
// (ParallelColumns, chunks of 32 columns). With n = 330 (eleven chunks, the last one short) and a
// dense, non-symmetric-looking term, H = f c c^T + diag(-sin(x) x + 2 cos(x)) for
// f = exp(sum(c x)) + sum(sin(x) x), must match the closed form and be bitwise the same with one
// thread and with two; n = 150 takes the batched program.
TEST(ColumnThreads, HessianColumnsOnThreadsMatchClosedFormAndOneThread) {
  for (const std::int64_t n : {330, 150}) {
  SCOPED_TRACE(n);
  std::vector<double> cs(n), xs(n);
  double s = 0;
  for (std::size_t i = 0; i < cs.size(); ++i) {
    cs[i] = 0.7 * std::cos(0.1 * static_cast<double>(i));  // bounded entries and sum at any n
    xs[i] = 0.5 * std::sin(0.07 * static_cast<double>(i));
    s += cs[i] * xs[i];
  }
  const tf::Tensor c = tf::Tensor::from(cs, {n}), x = tf::Tensor::from(xs, {n});
  auto f = [](tf::Traced v, tf::Traced k) { return tf::exp(tf::sum(k * v)) + tf::sum(tf::sin(v) * v); };
  const int threads = tf::num_threads();
  tf::set_num_threads(1);
  const tf::Tensor h1 = tf::hessian(f)(x, c);
  tf::set_num_threads(2);
  const tf::Tensor h2 = tf::hessian(f)(x, c);
  tf::set_num_threads(threads);
  ASSERT_EQ(h2.shape(), (tf::Shape{n, n}));
  EXPECT_EQ(std::memcmp(h1.raw_data(), h2.raw_data(), h1.nbytes()), 0);
  for (std::int64_t i = 0; i < n; ++i) {
    for (std::int64_t j = 0; j < n; ++j) {
      const auto a = static_cast<std::size_t>(i), b = static_cast<std::size_t>(j);
      const double diagonal = i == j ? -std::sin(xs[a]) * xs[a] + 2 * std::cos(xs[a]) : 0.0;
      EXPECT_NEAR(h2.at<double>({i, j}), std::exp(s) * cs[a] * cs[b] + diagonal, 1e-12) << i << "," << j;
    }
  }
  }
}

// jacfwd and jacrev run their columns (rows) on the threads too. f(v) = exp(v) * sum(v) on n = 260
// (the sweep) and n = 100 (the batched program) has J_ij = exp(v_i) (delta_ij S + 1), S = sum(v):
// both must match it and be bitwise the same with one thread and with two.
TEST(ColumnThreads, JacobiansOnThreadsMatchClosedFormAndOneThread) {
  for (const std::int64_t n : {260, 100}) {
  SCOPED_TRACE(n);
  std::vector<double> vs(n);
  double total = 0;
  for (std::size_t i = 0; i < vs.size(); ++i) total += vs[i] = 0.3 - 0.6 * static_cast<double>(i) / static_cast<double>(n);
  const tf::Tensor v = tf::Tensor::from(vs, {n});
  auto f = [](tf::Traced u) { return tf::exp(u) * tf::sum(u); };
  const int threads = tf::num_threads();
  for (bool forward : {true, false}) {
    SCOPED_TRACE(forward ? "jacfwd" : "jacrev");
    auto jacobian = [&] { return forward ? tf::jacfwd(f)(v) : tf::jacrev(f)(v); };
    tf::set_num_threads(1);
    const tf::Tensor j1 = jacobian();
    tf::set_num_threads(2);
    const tf::Tensor j2 = jacobian();
    tf::set_num_threads(threads);
    ASSERT_EQ(j2.shape(), (tf::Shape{n, n}));
    EXPECT_EQ(std::memcmp(j1.raw_data(), j2.raw_data(), j1.nbytes()), 0);
    for (std::int64_t i = 0; i < n; ++i) {
      for (std::int64_t j = 0; j < n; ++j) {
        const double e = std::exp(vs[static_cast<std::size_t>(i)]);
        EXPECT_NEAR(j2.at<double>({i, j}), e * ((i == j ? total : 0.0) + 1.0), 1e-12) << i << "," << j;
      }
    }
  }
  }
}

// ParallelColumns, the column schedule behind them: every column in exactly one range for counts
// around the chunk size and thread counts 1 to 3, and an exception from a range on any thread
// comes back to the caller.
TEST(ColumnThreads, ParallelColumnsCoversEveryColumnOnceAndRethrows) {
  const int threads = tf::num_threads();
  for (int t : {1, 2, 3}) {
    tf::set_num_threads(t);
    for (std::size_t count : {0, 1, 31, 32, 63, 64, 65, 200}) {
      std::vector<std::atomic<int>> seen(count);
      tf::detail::ParallelColumns{}(count, [&](std::size_t begin, std::size_t end) {
        ASSERT_LT(begin, end);
        ASSERT_LE(end, count);
        for (std::size_t c = begin; c < end; ++c) ++seen[c];
      });
      for (std::size_t c = 0; c < count; ++c) EXPECT_EQ(seen[c].load(), 1) << t << " threads, column " << c << " of " << count;
    }
    EXPECT_THROW(tf::detail::ParallelColumns{}(200, [](std::size_t begin, std::size_t end) {
      if (begin <= 150 && 150 < end) throw tf::ShapeError("column 150");
    }), tf::ShapeError);
  }
  tf::set_num_threads(threads);
}

}  // namespace
