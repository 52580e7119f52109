// Tenferro used from many threads at once (label `threads`: the `tsan` preset runs this under
// ThreadSanitizer). Covered: transforms tracing concurrently, on functions of their own and
// through one shared transformed callable (whose traces and derived programs are shared); the
// process-wide compile cache under contention; one compiled program and one transformed callable
// run from several threads with different inputs; the buffer pool under contention; and a mixed
// phase of bounded wall time (TENFERRO_STRESS_SECONDS, default 2), all with OpenMP kernels inside.
//
// Every result is compared bit for bit with a reference computed on the main thread before any
// worker starts: workers run the same compiled programs on the same kernels at the same thread
// count (tenferro's chunked sums do not depend on which thread runs a chunk, and how OpenBLAS
// splits a GEMM depends only on its shape and thread count), so running concurrently must not
// change a single bit. Workers record mismatches as text; the main thread asserts after joining them.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <latch>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "tenferro/tenferro.hpp"
#include "tenferro/program.hpp"

namespace {

namespace tf = tenferro;

/// The thread count of the kernels' OpenMP teams (and OpenBLAS) on every thread of this test.
constexpr int kKernelThreads = 2;

/// Deterministic, non-trivial values: start + step * i wrapped into [-1, 1).
tf::Tensor ramp(tf::Shape shape, double start, double step) {
  std::vector<double> values(static_cast<std::size_t>(tf::numel(shape)));
  for (std::size_t i = 0; i < values.size(); ++i) {
    const double v = start + step * static_cast<double>(i);
    values[i] = v - 2.0 * std::floor((v + 1.0) / 2.0);
  }
  return tf::Tensor::from(values, std::move(shape));
}

bool same_bits(const tf::Tensor& a, const tf::Tensor& b) {
  return a.type() == b.type() && std::memcmp(a.raw_data(), b.raw_data(), a.nbytes()) == 0;
}

/// Failures seen on worker threads, asserted on the main thread.
class Failures {
 public:
  void add(std::string what) {
    std::lock_guard lock(mutex_);
    list_.push_back(std::move(what));
  }
  void check(const std::string& what, const tf::Tensor& got, const tf::Tensor& want) {
    if (!same_bits(got, want)) add(what + ": " + tf::to_string(got) + " differs from " + tf::to_string(want));
  }
  void check(const std::string& what, const tf::Tensors& got, const tf::Tensors& want) {
    if (got.size() != want.size()) {
      add(what + ": " + std::to_string(got.size()) + " results, expected " + std::to_string(want.size()));
      return;
    }
    for (std::size_t i = 0; i < got.size(); ++i) check(what + ", result " + std::to_string(i), got[i], want[i]);
  }
  /// Called on the main thread once the workers are joined.
  void expect_none() const {
    if (!list_.empty()) ADD_FAILURE() << list_.size() << " failures, the first: " << list_.front();
  }

 private:
  std::mutex mutex_;
  std::vector<std::string> list_;
};

/// Runs body(t) for t in [0, n) on n std::threads released together (so that first calls race).
/// OpenMP's thread count is a setting of the calling thread (a new std::thread starts from the
/// default), so each worker sets it as the main thread did. Exceptions become failures.
void run_threads(int n, Failures& failures, const std::function<void(int)>& body) {
  std::latch start(n);
  std::vector<std::thread> threads;
  for (int t = 0; t < n; ++t) {
    threads.emplace_back([&, t] {
      tf::set_num_threads(kKernelThreads);
      start.arrive_and_wait();
      try {
        body(t);
      } catch (const std::exception& e) {
        failures.add("thread " + std::to_string(t) + " threw: " + e.what());
      }
    });
  }
  for (auto& thread : threads) thread.join();
}

/// Sets the kernel thread count on the main thread for one test and restores it after.
class ThreadStress : public ::testing::Test {
 protected:
  void SetUp() override {
    saved_threads_ = tf::num_threads();
    tf::set_num_threads(kKernelThreads);
  }
  void TearDown() override { tf::set_num_threads(saved_threads_); }

 private:
  int saved_threads_ = 1;
};

// Elementwise work over n >= 12289 elements (four chunks of 4096 or more) runs on OpenMP teams.
constexpr std::int64_t kWide = 20000;
auto wide_loss = [](tf::Traced w, tf::Traced x) { return tf::sum(tf::exp(w * x) * tf::sin(x)) + tf::sum(w * w); };
// A GEMM large enough that OpenBLAS splits it over its threads, feeding elementwise work.
constexpr std::int64_t kLayer = 96;
auto layer_loss = [](tf::Traced w, tf::Traced x) { return tf::sum(tf::tanh(tf::matmul(x, w))); };
// 64 Hessian columns: two chunks of 32, so the column sweep runs on an OpenMP team.
constexpr std::int64_t kCurved = 64;
auto curved = [](tf::Traced v) { return tf::sum(tf::exp(v) * tf::cos(v)) + tf::sum(v) * tf::sum(v * v); };
/// A family of functions: equal scales give structurally equal graphs, different ones do not.
auto scaled(double s) {
  return [s](tf::Traced w, tf::Traced x) { return tf::sum(tf::exp(w * x * s) + tf::tanh(w) * s); };
}

/// Inputs of worker t: shapes alternate between threads, so a shared callable traces two
/// signatures at once.
struct Inputs {
  tf::Tensor w, x, lw, lx, v;
  explicit Inputs(int t)
      : w(ramp({t % 2 == 0 ? kWide : kWide - 7000}, 0.1 * t, 1e-3)),
        x(ramp({t % 2 == 0 ? kWide : kWide - 7000}, -0.3 * t, 7e-4)),
        lw(ramp({kLayer, kLayer}, 0.05 * t, 3e-3)),
        lx(ramp({kLayer, kLayer}, 0.2 - 0.05 * t, 5e-3)),
        v(ramp({kCurved}, 0.03 * t, 0.02)) {}
};
double scale_of(int t) { return 0.5 + 0.25 * (t % 3); }

TEST_F(ThreadStress, ConcurrentTracingOfTransforms) {
  constexpr int kThreads = 4;
  struct Expected {
    tf::Tensor own_grad, value, layer_grad, hessian, jvp_value, jvp_tangent, shared_grad, shared_hessian;
  };
  std::vector<Inputs> inputs;
  std::vector<Expected> expected;
  for (int t = 0; t < kThreads; ++t) {
    const Inputs& in = inputs.emplace_back(t);
    auto [value, layer_grad] = tf::value_and_grad(layer_loss)(in.lw, in.lx);
    auto [y, dy] = tf::jvp(scaled(scale_of(t)), {in.w, in.x}, {in.x, in.w});
    const tf::Tensor h = tf::hessian(curved)(in.v);
    expected.push_back({tf::grad(scaled(scale_of(t)))(in.w, in.x), value, layer_grad, h, y, dy,
                        tf::grad(wide_loss)(in.w, in.x), h});
  }
  // Not called before the workers: they trace them, linearize them and compile them concurrently.
  const auto shared = tf::grad(wide_loss);
  const auto shared_hessian = tf::hessian(curved);
  Failures failures;
  run_threads(kThreads, failures, [&](int t) {
    const Inputs& in = inputs[static_cast<std::size_t>(t)];
    const Expected& want = expected[static_cast<std::size_t>(t)];
    const std::string who = "thread " + std::to_string(t) + ": ";
    for (int round = 0; round < 2; ++round) {
      failures.check(who + "shared grad", shared(in.w, in.x), want.shared_grad);
      failures.check(who + "shared hessian", shared_hessian(in.v), want.shared_hessian);
      failures.check(who + "grad", tf::grad(scaled(scale_of(t)))(in.w, in.x), want.own_grad);
      auto [value, layer_grad] = tf::value_and_grad(layer_loss)(in.lw, in.lx);
      failures.check(who + "value", value, want.value);
      failures.check(who + "layer grad", layer_grad, want.layer_grad);
      failures.check(who + "hessian", tf::hessian(curved)(in.v), want.hessian);
      auto [y, dy] = tf::jvp(scaled(scale_of(t)), {in.w, in.x}, {in.x, in.w});
      failures.check(who + "jvp value", y, want.jvp_value);
      failures.check(who + "jvp tangent", dy, want.jvp_tangent);
    }
  });
  failures.expect_none();
}

TEST_F(ThreadStress, CompileCacheUnderContention) {
  // kStructures functions, each compiled (jvp and vjp programs) by several threads at once from
  // an emptied cache; every thread also meets structures another thread has just compiled.
  constexpr int kThreads = 8, kStructures = 6, kRounds = 6;
  const tf::Tensor x = ramp({kWide}, 0.2, 1e-3), dx = ramp({kWide}, -0.4, 3e-4);
  const tf::Tensor cotangent = tf::Tensor::scalar(0.75);
  auto scale = [](int k) { return 0.2 + 0.1 * k; };
  struct Expected {
    tf::Tensor jvp_value, tangent, vjp_value;
    tf::Tensors cotangents;
  };
  std::vector<Expected> expected;
  for (int k = 0; k < kStructures; ++k) {
    auto [y, dy] = tf::jvp(scaled(scale(k)), {x, dx}, {dx, x});
    auto [value, cts] = tf::vjp(scaled(scale(k)), {x, dx}, cotangent);
    expected.push_back({y, dy, value, cts});
  }
  const auto cache = tf::default_compile_cache();
  cache->clear();
  const auto before = cache->stats();
  Failures failures;
  run_threads(kThreads, failures, [&](int t) {
    for (int i = 0; i < kRounds * kStructures; ++i) {
      const int k = (i + t) % kStructures;
      const Expected& want = expected[static_cast<std::size_t>(k)];
      const std::string who = "thread " + std::to_string(t) + ", structure " + std::to_string(k) + ": ";
      auto [y, dy] = tf::jvp(scaled(scale(k)), {x, dx}, {dx, x});
      failures.check(who + "jvp value", y, want.jvp_value);
      failures.check(who + "jvp tangent", dy, want.tangent);
      auto [value, cts] = tf::vjp(scaled(scale(k)), {x, dx}, cotangent);
      failures.check(who + "vjp value", value, want.vjp_value);
      failures.check(who + "vjp cotangents", cts, want.cotangents);
    }
  });
  failures.expect_none();
  const auto after = cache->stats();
  // Every structure was compiled again after the clear (concurrent misses on one key may compile
  // twice), and later calls found what other threads had compiled.
  EXPECT_GE(after.misses - before.misses, static_cast<std::uint64_t>(kStructures));
  EXPECT_GT(after.hits - before.hits, 0u);
  EXPECT_LE(after.size, after.capacity);
}

TEST_F(ThreadStress, OneProgramAndOneCallableFromManyThreads) {
  constexpr int kThreads = 4, kInputs = 6, kRuns = 12;
  // Two outputs: a GEMM (OpenBLAS's threads) and elementwise work on OpenMP teams.
  auto f = [](tf::Traced a, tf::Traced b) {
    return std::vector<tf::Traced>{tf::tanh(tf::matmul(a, b)) * 2.0, tf::exp(a) * tf::cos(b) + a};
  };
  constexpr std::int64_t n = 128;
  std::vector<tf::Tensors> args;
  for (int k = 0; k < kInputs; ++k) args.push_back({ramp({n, n}, 0.1 * k, 1e-4), ramp({n, n}, -0.2 * k, 3e-4)});
  const tf::Program reference = tf::trace(f, args[0][0], args[0][1]);
  const auto layer = tf::value_and_grad(layer_loss, {0, 1});
  std::vector<tf::Tensors> expected;
  std::vector<std::pair<tf::Tensor, tf::Tensors>> layer_expected;
  for (int k = 0; k < kInputs; ++k) {
    expected.push_back(reference.run(args[static_cast<std::size_t>(k)]));
    layer_expected.push_back(layer(ramp({kLayer, kLayer}, 0.1 * k, 1e-3), ramp({kLayer, kLayer}, -0.1 * k, 2e-3)));
  }
  // A fresh trace of the same function, compiled on its first run by whichever worker gets there
  // first, from an emptied cache (so its executable is built under contention too).
  tf::default_compile_cache()->clear();
  const tf::Program program = tf::trace(f, args[0][0], args[0][1]);
  Failures failures;
  run_threads(kThreads, failures, [&](int t) {
    tf::Tensors outputs = {tf::Tensor::uninitialized(expected[0][0].type()),
                           tf::Tensor::uninitialized(expected[0][1].type())};
    for (int i = 0; i < kRuns; ++i) {
      const int k = (i * 5 + t) % kInputs;
      const auto& want = expected[static_cast<std::size_t>(k)];
      const std::string who = "thread " + std::to_string(t) + ", input " + std::to_string(k) + ": ";
      // Half the runs write into this thread's own output tensors.
      if (i % 2 == 0) {
        program.run_into(args[static_cast<std::size_t>(k)], outputs);
      } else {
        outputs = program.run(args[static_cast<std::size_t>(k)]);
      }
      failures.check(who + "program", outputs, want);
      auto [value, grads] = layer(ramp({kLayer, kLayer}, 0.1 * k, 1e-3), ramp({kLayer, kLayer}, -0.1 * k, 2e-3));
      const auto& layer_want = layer_expected[static_cast<std::size_t>(k)];
      failures.check(who + "value_and_grad value", value, layer_want.first);
      failures.check(who + "value_and_grad grads", grads, layer_want.second);
    }
  });
  failures.expect_none();
}

/// Tensors handed between threads: a mailbox per thread.
struct Mailbox {
  std::mutex mutex;
  std::deque<std::pair<tf::Tensor, double>> items;  // each tensor and the value of all its elements
  void put(tf::Tensor t, double value) {
    std::lock_guard lock(mutex);
    items.emplace_back(std::move(t), value);
  }
  bool take(std::pair<tf::Tensor, double>& out) {
    std::lock_guard lock(mutex);
    if (items.empty()) return false;
    out = std::move(items.front());
    items.pop_front();
    return true;
  }
};

/// Whether every element of `t` equals `value`.
bool filled_with(const tf::Tensor& t, double value) {
  for (double x : t.values<double>()) {
    if (x != value) return false;
  }
  return true;
}

/// Turns pooling on for one test (sanitizer builds default to off) and restores the capacity.
class PoolStress : public ThreadStress {
 protected:
  void SetUp() override {
    ThreadStress::SetUp();
    saved_capacity_ = tf::buffer_pool_stats().capacity;
    tf::set_buffer_pool_capacity(std::size_t{64} << 20);
  }
  void TearDown() override {
    tf::trim_buffer_pool();
    tf::set_buffer_pool_capacity(saved_capacity_);
    ThreadStress::TearDown();
  }

 private:
  std::size_t saved_capacity_ = 0;
};

TEST_F(PoolStress, TensorsHandedBetweenThreadsWhileThePoolIsTrimmed) {
  // Each worker fills tensors with a value of its own and posts them to the next worker, which
  // checks and drops them: storage is taken on one thread and freed on another, through both the
  // thread caches (up to 1 MiB) and the shared pool, while one more thread trims the pool, reads
  // its stats and changes its capacity. A buffer handed to two owners at once shows as a tensor
  // whose elements changed after it was filled.
  constexpr int kWorkers = 4, kSteps = 300;
  const tf::Shape shapes[] = {{1}, {100}, {5000}, {70000}, {200000}};
  std::vector<Mailbox> boxes(kWorkers);
  std::atomic<int> running{kWorkers};
  Failures failures;
  run_threads(kWorkers + 1, failures, [&](int t) {
    if (t == kWorkers) {  // the janitor
      for (int i = 0; running.load() > 0; ++i) {
        if (i % 3 == 0) tf::trim_buffer_pool();
        if (i % 3 == 1) tf::set_buffer_pool_capacity(i % 2 == 0 ? std::size_t{1} << 20 : std::size_t{64} << 20);
        (void)tf::buffer_pool_stats();
        std::this_thread::yield();
      }
      return;
    }
    std::mt19937 rng(static_cast<unsigned>(17 + t));
    const std::string who = "thread " + std::to_string(t) + ": ";
    std::vector<std::pair<tf::Tensor, double>> held;
    std::pair<tf::Tensor, double> item;
    for (int step = 0; step < kSteps; ++step) {
      const double value = t * 1000.0 + step;
      tf::Tensor fresh = tf::Tensor::full(shapes[rng() % 5], value);
      if (rng() % 3 == 0) {
        held.emplace_back(std::move(fresh), value);  // kept a while on this thread
      } else {
        boxes[static_cast<std::size_t>((t + 1) % kWorkers)].put(std::move(fresh), value);
      }
      while (boxes[static_cast<std::size_t>(t)].take(item)) {
        if (!filled_with(item.first, item.second)) failures.add(who + "a tensor received changed");
      }
      if (held.size() > 6) {
        if (!filled_with(held.front().first, held.front().second)) failures.add(who + "a tensor held changed");
        held.erase(held.begin());
      }
    }
    for (const auto& [tensor, value] : held) {
      if (!filled_with(tensor, value)) failures.add(who + "a tensor held changed");
    }
    --running;
  });
  failures.expect_none();
  // The tensors still in mailboxes are dropped here, on the main thread; then nothing is left.
  for (auto& box : boxes) {
    std::pair<tf::Tensor, double> item;
    while (box.take(item)) EXPECT_TRUE(filled_with(item.first, item.second));
  }
  tf::trim_buffer_pool();
  EXPECT_EQ(tf::buffer_pool_stats().cached_bytes, 0u);
}

/// The mixed phase's length: TENFERRO_STRESS_SECONDS, default 2.
double stress_seconds() {
  const char* env = std::getenv("TENFERRO_STRESS_SECONDS");
  return env ? std::atof(env) : 2.0;
}

TEST_F(PoolStress, MixedWorkloadForABoundedTime) {
  // Workers pick operations at random until the deadline, after one round of every kind (so that
  // each kind runs however slow the build). A janitor thread trims the buffer pool and empties
  // the compile cache meanwhile, so programs are recompiled while other threads run them.
  enum Kind { SharedGrad, OwnValueAndGrad, Jvp, Vjp, SharedHessian, ProgramRun, Handoff, kKinds };
  constexpr int kWorkers = 4, kInputs = 4;
  std::vector<Inputs> inputs;
  for (int k = 0; k < kInputs; ++k) inputs.emplace_back(k);
  auto f = [](tf::Traced a, tf::Traced b) { return tf::exp(tf::matmul(a, b) * 0.1) + a; };
  const tf::Program program = tf::trace(f, inputs[0].lw, inputs[0].lx);
  const auto shared_grad = tf::grad(wide_loss);
  const auto shared_hessian = tf::hessian(curved);
  struct Expected {
    tf::Tensor grad, value, layer_grad, jvp_value, jvp_tangent, hessian, program;
    tf::Tensors cotangents;
  };
  std::vector<Expected> expected;
  const tf::Tensor cotangent = tf::Tensor::scalar(-1.5);
  for (int k = 0; k < kInputs; ++k) {
    const Inputs& in = inputs[static_cast<std::size_t>(k)];
    auto [value, layer_grad] = tf::value_and_grad(layer_loss)(in.lw, in.lx);
    auto [y, dy] = tf::jvp(scaled(scale_of(k)), {in.w, in.x}, {in.x, in.w});
    auto cotangents = tf::vjp(scaled(scale_of(k)), {in.w, in.x}, cotangent).second;
    expected.push_back({shared_grad(in.w, in.x), value, layer_grad, y, dy, shared_hessian(in.v),
                        program.run({in.lw, in.lx}).at(0), cotangents});
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(stress_seconds());
  std::vector<Mailbox> boxes(kWorkers);
  std::vector<std::vector<int>> done(kWorkers, std::vector<int>(kKinds, 0));
  std::atomic<int> running{kWorkers};
  Failures failures;
  run_threads(kWorkers + 1, failures, [&](int t) {
    if (t == kWorkers) {  // the janitor
      for (int i = 0; running.load() > 0; ++i) {
        if (i % 2 == 0) tf::trim_buffer_pool();
        if (i % 7 == 3) tf::default_compile_cache()->clear();
        (void)tf::buffer_pool_stats();
        (void)tf::default_compile_cache()->stats();
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
      return;
    }
    std::mt19937 rng(static_cast<unsigned>(5 + t));
    std::pair<tf::Tensor, double> item;
    for (int i = 0; i < kKinds || std::chrono::steady_clock::now() < deadline; ++i) {
      const auto kind = static_cast<Kind>(i < kKinds ? (i + t) % kKinds : static_cast<int>(rng() % kKinds));
      const int k = static_cast<int>(rng() % kInputs);
      const Inputs& in = inputs[static_cast<std::size_t>(k)];
      const Expected& want = expected[static_cast<std::size_t>(k)];
      const std::string who =
          "thread " + std::to_string(t) + ", kind " + std::to_string(kind) + ", input " + std::to_string(k);
      switch (kind) {
        case SharedGrad:
          failures.check(who, shared_grad(in.w, in.x), want.grad);
          break;
        case OwnValueAndGrad: {
          auto [value, layer_grad] = tf::value_and_grad(layer_loss)(in.lw, in.lx);
          failures.check(who, value, want.value);
          failures.check(who, layer_grad, want.layer_grad);
          break;
        }
        case Jvp: {
          auto [y, dy] = tf::jvp(scaled(scale_of(k)), {in.w, in.x}, {in.x, in.w});
          failures.check(who, y, want.jvp_value);
          failures.check(who, dy, want.jvp_tangent);
          break;
        }
        case Vjp: {
          failures.check(who, tf::vjp(scaled(scale_of(k)), {in.w, in.x}, cotangent).second, want.cotangents);
          break;
        }
        case SharedHessian:
          failures.check(who, shared_hessian(in.v), want.hessian);
          break;
        case ProgramRun:
          failures.check(who, program.run({in.lw, in.lx}).at(0), want.program);
          break;
        case Handoff:
          boxes[static_cast<std::size_t>((t + 1) % kWorkers)].put(tf::Tensor::full({5000}, t + 0.5), t + 0.5);
          while (boxes[static_cast<std::size_t>(t)].take(item)) {
            if (!filled_with(item.first, item.second)) failures.add(who + ": a tensor received changed");
          }
          break;
        case kKinds:
          break;
      }
      ++done[static_cast<std::size_t>(t)][static_cast<std::size_t>(kind)];
    }
    --running;
  });
  failures.expect_none();
  for (std::size_t t = 0; t < kWorkers; ++t) {
    for (std::size_t kind = 0; kind < kKinds; ++kind) EXPECT_GE(done[t][kind], 1) << "thread " << t << " kind " << kind;
  }
}

}  // namespace

// set_num_threads is process-wide: a thread started afterwards sees the setting (omp_set_num_threads
// alone sets only the calling thread's count, and new threads started from OpenMP's default).
TEST(Threads, TheSettingIsProcessWide) {
  const int saved = tf::num_threads();
  for (int n : {1, 3, 2}) {
    tf::set_num_threads(n);
    int seen = 0;
    std::thread([&] { seen = tf::num_threads(); }).join();
    EXPECT_EQ(seen, n);
  }
  tf::set_num_threads(saved);
}
