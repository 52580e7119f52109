// The kernels' thread pool (src/kernels/parallel.hpp) and what runs on it: every chunk runs once,
// exceptions come back, nested loops and concurrent callers run serially, and results do not
// depend on the thread count (a fused reduction, and GEMMs whose rows or columns are shared out:
// each element of the product is the same dot product whichever block it falls in).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <thread>
#include <vector>

#include "kernels/parallel.hpp"
#include "tenferro/tenferro.hpp"

namespace {

namespace tf = tenferro;
using tf::exec::parallel_chunks;

/// Restores the thread count when a test ends.
struct ThreadCount {
  int saved = tf::num_threads();
  ~ThreadCount() { tf::set_num_threads(saved); }
};

TEST(Parallel, EveryChunkRunsExactlyOnceAtAnyThreadCount) {
  for (const int threads : {1, 2, 3, 8}) {
    for (const std::int64_t chunks : {0, 1, 2, 7, 64, 1000}) {
      SCOPED_TRACE(std::to_string(threads) + " threads, " + std::to_string(chunks) + " chunks");
      std::vector<std::atomic<int>> runs(static_cast<std::size_t>(chunks));
      parallel_chunks(chunks, threads, [&](std::int64_t c) { runs[static_cast<std::size_t>(c)].fetch_add(1); });
      for (std::int64_t c = 0; c < chunks; ++c) EXPECT_EQ(runs[static_cast<std::size_t>(c)].load(), 1) << "chunk " << c;
    }
  }
}

TEST(Parallel, RangesCoverTheCountOnce) {
  for (const std::int64_t count : {1, 5, 8, 9, 1001}) {
    std::vector<std::atomic<int>> hits(static_cast<std::size_t>(count));
    tf::exec::parallel_ranges(count, 2, [&](std::int64_t lo, std::int64_t hi) {
      EXPECT_LT(lo, hi);
      for (std::int64_t i = lo; i < hi; ++i) hits[static_cast<std::size_t>(i)].fetch_add(1);
    });
    for (std::int64_t i = 0; i < count; ++i) EXPECT_EQ(hits[static_cast<std::size_t>(i)].load(), 1);
  }
}

TEST(Parallel, TheFirstExceptionReachesTheCallerAndThePoolStaysUsable) {
  std::atomic<int> ran{0};
  EXPECT_THROW(parallel_chunks(100, 2,
                               [&](std::int64_t c) {
                                 ran.fetch_add(1);
                                 if (c == 37) throw std::runtime_error("chunk 37");
                               }),
               std::runtime_error);
  EXPECT_GE(ran.load(), 1);
  std::atomic<std::int64_t> sum{0};
  parallel_chunks(100, 2, [&](std::int64_t c) { sum.fetch_add(c); });
  EXPECT_EQ(sum.load(), 4950);
}

TEST(Parallel, NestedLoopsRunOnTheirCallersThread) {
  std::atomic<int> nested_elsewhere{0}, outer_inside{0};
  parallel_chunks(8, 2, [&](std::int64_t) {
    if (tf::exec::in_parallel_body()) outer_inside.fetch_add(1);
    const auto me = std::this_thread::get_id();
    parallel_chunks(8, 2, [&](std::int64_t) {
      if (std::this_thread::get_id() != me) nested_elsewhere.fetch_add(1);
    });
  });
  EXPECT_EQ(outer_inside.load(), 8);
  EXPECT_EQ(nested_elsewhere.load(), 0);
  EXPECT_FALSE(tf::exec::in_parallel_body());
}

// Two user threads call kernels at once: each loop completes with every chunk run once (one of
// them may run alone while the other holds the pool).
TEST(Parallel, ConcurrentCallersEachCompleteTheirLoops) {
  std::vector<std::int64_t> totals(2, 0);
  std::vector<std::thread> callers;
  for (int t = 0; t < 2; ++t) {
    callers.emplace_back([&, t] {
      for (int round = 0; round < 200; ++round) {
        std::atomic<std::int64_t> sum{0};
        parallel_chunks(50, 2, [&](std::int64_t c) { sum.fetch_add(c + 1); });
        totals[static_cast<std::size_t>(t)] += sum.load();
      }
    });
  }
  for (auto& c : callers) c.join();
  EXPECT_EQ(totals[0], 200 * 1275);
  EXPECT_EQ(totals[1], 200 * 1275);
}

#if defined(__SANITIZE_THREAD__)
#define TENFERRO_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define TENFERRO_TSAN 1
#endif
#endif

// A child made by fork() has none of the pool's threads (and possibly a job the parent was
// running): its loops still complete, on a pool of its own. (Not under ThreadSanitizer, which does
// not support starting threads after a multi-threaded fork.)
TEST(Parallel, AForkedChildRunsItsLoops) {
#ifdef TENFERRO_TSAN
  GTEST_SKIP() << "ThreadSanitizer does not support threads started after fork";
#else
  parallel_chunks(16, 2, [](std::int64_t) {});  // the parent's pool is running
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    std::atomic<std::int64_t> sum{0};
    parallel_chunks(100, 2, [&](std::int64_t c) { sum.fetch_add(c); });
    _exit(sum.load() == 4950 ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
#endif
}

std::vector<double> wave(std::int64_t n, double phase) {
  std::vector<double> v(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) v[static_cast<std::size_t>(i)] = std::sin(0.37 * static_cast<double>(i) + phase);
  return v;
}

bool bitwise_equal(const tf::Tensor& a, const tf::Tensor& b) {
  return a.shape() == b.shape() && a.dtype() == b.dtype() &&
         std::memcmp(a.raw_data(), b.raw_data(), static_cast<std::size_t>(a.numel()) * tf::dtype_size(a.dtype())) == 0;
}

// Products large enough to be shared out (split over columns: 96 x 512 x 300; over rows, C being
// narrow: 700 x 20 x 400; a batch of small products shared a range of batches at a time), and a
// fused reduction of 10^6 elements: the same bits on one thread and on two. The products are also
// checked against a plain triple loop.
TEST(Parallel, ProductsAndReductionsAreTheSameOnOneThreadAndOnTwo) {
  const ThreadCount restore;
  struct Shape3 {
    std::int64_t batch, m, k, n;
  };
  for (const Shape3 s : {Shape3{1, 96, 300, 512}, Shape3{1, 700, 400, 20}, Shape3{64, 24, 24, 24}}) {
    SCOPED_TRACE(std::to_string(s.batch) + " x " + std::to_string(s.m) + " x " + std::to_string(s.k) + " x " +
                 std::to_string(s.n));
    const tf::Tensor a = tf::Tensor::from(wave(s.batch * s.m * s.k, 0.1), {s.batch, s.m, s.k});
    const tf::Tensor b = tf::Tensor::from(wave(s.batch * s.k * s.n, 0.7), {s.batch, s.k, s.n});
    auto product = [](tf::Traced x, tf::Traced y) { return tf::matmul(x, y); };
    tf::Program p = tf::trace(product, a, b);
    tf::set_num_threads(1);
    const tf::Tensor one = p.run({a, b}).at(0);
    tf::set_num_threads(2);
    const tf::Tensor two = p.run({a, b}).at(0);
    EXPECT_TRUE(bitwise_equal(one, two));
    const double* x = a.data<double>();
    const double* y = b.data<double>();
    const double* z = two.data<double>();
    double worst = 0;
    for (std::int64_t q = 0; q < s.batch; ++q) {
      for (std::int64_t i = 0; i < s.m; ++i) {
        for (std::int64_t j = 0; j < s.n; ++j) {
          double expected = 0;
          for (std::int64_t l = 0; l < s.k; ++l) expected += x[(q * s.m + i) * s.k + l] * y[(q * s.k + l) * s.n + j];
          worst = std::max(worst, std::abs(z[(q * s.m + i) * s.n + j] - expected));
        }
      }
    }
    EXPECT_LT(worst, 1e-11);
  }
  const tf::Tensor v = tf::Tensor::from(wave(1'000'000, 0.3), {1'000'000});
  tf::Program total = tf::trace([](tf::Traced t) { return tf::sum(tf::exp(t) * t); }, v);
  tf::set_num_threads(1);
  const tf::Tensor s1 = total.run({v}).at(0);
  tf::set_num_threads(2);
  const tf::Tensor s2 = total.run({v}).at(0);
  EXPECT_TRUE(bitwise_equal(s1, s2));
}

// A batch of decompositions runs one matrix per call on whichever thread takes it: the same bits
// on one thread and on two, and a failure names the lowest failing matrix either way.
TEST(Parallel, BatchesOfDecompositionsAreTheSameOnOneThreadAndOnTwo) {
  const ThreadCount restore;
  constexpr std::int64_t batch = 12, n = 24;
  std::vector<double> values = wave(batch * n * n, 0.2);
  for (std::int64_t b = 0; b < batch; ++b) {  // diagonally dominant: positive definite once symmetrized
    for (std::int64_t i = 0; i < n; ++i) values[static_cast<std::size_t>((b * n + i) * n + i)] += 2.0 * n;
  }
  const tf::Tensor a = tf::Tensor::from(values, {batch, n, n});
  auto decompositions = [](tf::Traced m) {
    const tf::Traced sym = m + tf::transpose(m, {0, 2, 1});
    const tf::linalg::Svd usv = tf::linalg::svd(m);
    return std::vector<tf::Traced>{usv.U, usv.S, usv.Vh, tf::linalg::cholesky(sym), tf::linalg::qr(m).R, tf::linalg::eigh(sym).eigenvalues};
  };
  tf::Program p = tf::trace(decompositions, a);
  tf::set_num_threads(1);
  const tf::Tensors one = p.run({a});
  tf::set_num_threads(2);
  const tf::Tensors two = p.run({a});
  ASSERT_EQ(one.size(), two.size());
  for (std::size_t i = 0; i < one.size(); ++i) EXPECT_TRUE(bitwise_equal(one[i], two[i])) << "result " << i;

  // Matrices 5 and 9 of the batch are not positive definite (a negative diagonal entry).
  std::vector<double> bad = values;
  for (const std::int64_t b : {9, 5}) bad[static_cast<std::size_t>((b * n + 3) * n + 3)] = -1e6;
  const tf::Tensor c = tf::Tensor::from(bad, {batch, n, n});
  tf::Program chol = tf::trace([](tf::Traced m) { return tf::linalg::cholesky(m + tf::transpose(m, {0, 2, 1})); }, c);
  for (const int threads : {1, 2}) {
    tf::set_num_threads(threads);
    try {
      chol.run({c});
      ADD_FAILURE() << "cholesky of a batch with indefinite matrices did not throw";
    } catch (const tf::LinalgError& e) {
      EXPECT_NE(std::string(e.what()).find("in matrix 5 "), std::string::npos) << e.what();
    }
  }
}

}  // namespace
