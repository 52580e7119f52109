// CompileCache: compile once per structure; hits, misses, LRU eviction, concurrency
// (docs/design.md, "Compile once, run many").
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <thread>

#include "test_graphs.hpp"

namespace cgtest {
namespace {

using computegraph::resolve;
using Cache = computegraph::CompileCache<ScalarOp>;

std::vector<Key> outputs_of(const GraphPtr& g) { return g->output_keys(); }
Cache::ProgramPtr get(Cache& cache, const View& view, const std::vector<Key>& outputs,
                      const std::vector<Key>& leading = {}) {
  return cache.get_or_compile(view, std::span<const Key>(outputs), std::span<const Key>(leading));
}
Cache::ProgramPtr find(Cache& cache, const std::vector<Key>& outputs,
                       const std::vector<Key>& leading = {}) {
  return cache.find(std::span<const Key>(outputs), std::span<const Key>(leading));
}

void expect_stats(const Cache& cache, std::uint64_t hits, std::uint64_t misses,
                  std::uint64_t evictions, std::size_t size) {
  auto s = cache.stats();
  EXPECT_EQ(s.hits, hits);
  EXPECT_EQ(s.misses, misses);
  EXPECT_EQ(s.evictions, evictions);
  EXPECT_EQ(s.size, size);
}

/// `op`(x) as its own graph.
GraphPtr unary(ScalarOp op) {
  Builder b;
  b.add_output(b.add(op, {L(b.add_input("x"))}));
  return finish(b);
}

TEST(CompileCache, MissThenHitReturnsTheSameProgram) {
  Cache cache(4);
  expect_stats(cache, 0, 0, 0, 0);
  EXPECT_EQ(cache.stats().capacity, 4u);
  GraphPtr g = exp_ax_graph();
  View view = resolve({g});
  auto p1 = get(cache, view, outputs_of(g));
  expect_stats(cache, 0, 1, 0, 1);
  auto p2 = get(cache, view, outputs_of(g));
  expect_stats(cache, 1, 1, 0, 1);
  EXPECT_EQ(p1, p2);
  EXPECT_DOUBLE_EQ(p1->run({0.5, 4.0})[0], std::exp(2.0));
  EXPECT_EQ(find(cache, outputs_of(g)), p1);
  expect_stats(cache, 2, 1, 0, 1);
}

TEST(CompileCache, EqualStructuresBuiltIndependentlyHit) {
  Cache cache;
  GraphPtr g1 = exp_ax_graph();
  auto p1 = get(cache, resolve({g1}), outputs_of(g1));
  // A second graph built from scratch has the same output keys: no recompilation.
  GraphPtr g2 = exp_ax_graph();
  auto p2 = get(cache, resolve({g2}), outputs_of(g2));
  EXPECT_EQ(p1, p2);
  expect_stats(cache, 1, 1, 0, 1);
  // Also through a different view that only reaches the structure through a child graph.
  GraphPtr jvp = exp_ax_jvp_graph(g2);
  auto p3 = get(cache, resolve({jvp}), outputs_of(g1));
  EXPECT_EQ(p3, p1);
  expect_stats(cache, 2, 1, 0, 1);
}

TEST(CompileCache, OutputOrderAndLeadingInputsArePartOfTheKey) {
  Cache cache;
  GraphPtr s = unary(ScalarOp::sin());
  GraphPtr c = unary(ScalarOp::cos());
  View view = resolve({s, c});
  const Key sin_x = outputs_of(s)[0];
  const Key cos_x = outputs_of(c)[0];
  auto sc = get(cache, view, {sin_x, cos_x});
  auto cs = get(cache, view, {cos_x, sin_x});
  auto sc_leading = get(cache, view, {sin_x, cos_x}, {in("x")});
  auto sc_other_leading = get(cache, view, {sin_x, cos_x}, {in("y")});
  auto single = get(cache, view, {sin_x});
  expect_stats(cache, 0, 5, 0, 5);
  EXPECT_NE(sc, cs);
  EXPECT_NE(sc, sc_leading);
  EXPECT_NE(sc_leading, sc_other_leading);
  EXPECT_EQ(sc->run({0.2}), (std::vector<double>{std::sin(0.2), std::cos(0.2)}));
  EXPECT_EQ(cs->run({0.2}), (std::vector<double>{std::cos(0.2), std::sin(0.2)}));
  EXPECT_EQ(sc_other_leading->input_keys(), (std::vector<std::string>{"y", "x"}));
  EXPECT_EQ(single->run({0.2}), (std::vector<double>{std::sin(0.2)}));
  // The same key list split differently between outputs and leading inputs is another entry.
  auto split = get(cache, view, {sin_x}, {in("x")});
  auto joined = get(cache, view, {sin_x, in("x")});
  EXPECT_NE(split, joined);
  EXPECT_EQ(split->run({0.2}), (std::vector<double>{std::sin(0.2)}));
  EXPECT_EQ(joined->run({0.2}), (std::vector<double>{std::sin(0.2), 0.2}));
  expect_stats(cache, 0, 7, 0, 7);
}

TEST(CompileCache, LeastRecentlyUsedEntryIsEvicted) {
  Cache cache(2);
  GraphPtr s = unary(ScalarOp::sin());
  GraphPtr c = unary(ScalarOp::cos());
  GraphPtr n = unary(ScalarOp::neg());
  View view = resolve({s, c, n});
  auto ps = get(cache, view, outputs_of(s));  // miss: [s]
  auto pc = get(cache, view, outputs_of(c));  // miss: [c, s]
  expect_stats(cache, 0, 2, 0, 2);
  EXPECT_EQ(get(cache, view, outputs_of(s)), ps);  // hit: [s, c]
  auto pn = get(cache, view, outputs_of(n));       // miss, evicts c: [n, s]
  expect_stats(cache, 1, 3, 1, 2);
  EXPECT_EQ(find(cache, outputs_of(c)), nullptr);  // miss
  EXPECT_EQ(find(cache, outputs_of(s)), ps);       // hit: [s, n]
  EXPECT_EQ(find(cache, outputs_of(n)), pn);       // hit: [n, s]
  expect_stats(cache, 3, 4, 1, 2);
  // c comes back as a new program and evicts s, now the least recently used.
  auto pc2 = get(cache, view, outputs_of(c));  // miss: [c, n]
  EXPECT_NE(pc2, nullptr);
  expect_stats(cache, 3, 5, 2, 2);
  EXPECT_EQ(find(cache, outputs_of(s)), nullptr);
  // Evicted programs stay valid for whoever holds them.
  EXPECT_DOUBLE_EQ(pc->run({1.0})[0], std::cos(1.0));
  EXPECT_DOUBLE_EQ(ps->run({1.0})[0], std::sin(1.0));
}

TEST(CompileCache, CapacityOneKeepsTheLatest) {
  Cache cache(1);
  GraphPtr s = unary(ScalarOp::sin());
  GraphPtr c = unary(ScalarOp::cos());
  View view = resolve({s, c});
  for (int round = 0; round < 3; ++round) {
    get(cache, view, outputs_of(s));
    get(cache, view, outputs_of(c));
  }
  expect_stats(cache, 0, 6, 5, 1);
  EXPECT_NE(find(cache, outputs_of(c)), nullptr);
}

TEST(CompileCache, ClearEmptiesButKeepsCounting) {
  Cache cache;
  GraphPtr g = exp_ax_graph();
  View view = resolve({g});
  auto p1 = get(cache, view, outputs_of(g));
  cache.clear();
  expect_stats(cache, 0, 1, 0, 0);
  auto p2 = get(cache, view, outputs_of(g));
  expect_stats(cache, 0, 2, 0, 1);
  EXPECT_NE(p1, p2);
  EXPECT_EQ(p1->run({1.0, 2.0}), p2->run({1.0, 2.0}));
}

TEST(CompileCache, FailedCompilationCachesNothing) {
  Cache cache;
  GraphPtr g = exp_ax_graph();
  View wrong_view = resolve({unary(ScalarOp::sin())});
  EXPECT_THROW(get(cache, wrong_view, outputs_of(g)), computegraph::GraphError);
  expect_stats(cache, 0, 1, 0, 0);
  EXPECT_NE(get(cache, resolve({g}), outputs_of(g)), nullptr);
  expect_stats(cache, 0, 2, 0, 1);
}

TEST(CompileCache, CachedProgramsKeepTheirKeysAlive) {
  auto live_operations = [] {
    return computegraph::detail::live_nodes<computegraph::detail::OperationNode<ScalarOp>>();
  };
  Cache cache;
  const std::size_t before = live_operations();
  {
    Builder b;
    auto v = b.add_input("keep_alive_x");
    for (int i = 0; i < 5; ++i) v = b.add(ScalarOp::sin(), {L(v)});
    b.add_output(v);
    GraphPtr g = finish(b);
    get(cache, resolve({g}), outputs_of(g));
  }
  // The graph is gone; the cache entry still owns its output key (and so the whole structure).
  EXPECT_EQ(live_operations(), before + 5);
  Key again = key_of(ScalarOp::sin(), {in("keep_alive_x")});
  for (int i = 1; i < 5; ++i) again = key_of(ScalarOp::sin(), {again});
  auto hit = find(cache, {again});
  ASSERT_NE(hit, nullptr);
  double expected = 0.9;
  for (int i = 0; i < 5; ++i) expected = std::sin(expected);
  EXPECT_DOUBLE_EQ(hit->run({0.9})[0], expected);
  hit.reset();
  cache.clear();
  again = in("keep_alive_x");
  EXPECT_EQ(live_operations(), before);
}

TEST(CompileCache, ConcurrentGetOrCompile) {
  constexpr int kThreads = 8;
  constexpr int kCalls = 300;
  Cache cache(16);
  std::vector<GraphPtr> graphs{unary(ScalarOp::sin()), unary(ScalarOp::cos()),
                               unary(ScalarOp::neg()), unary(ScalarOp::exp()), exp_ax_graph()};
  View view = resolve(graphs);
  std::vector<std::vector<Cache::ProgramPtr>> seen(kThreads,
                                                   std::vector<Cache::ProgramPtr>(graphs.size()));
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kCalls; ++i) {
        const std::size_t which = static_cast<std::size_t>(i + t) % graphs.size();
        auto program = get(cache, view, outputs_of(graphs[which]));
        if (!seen[t][which]) seen[t][which] = program;
        if (seen[t][which] != program) ++failures;  // one program per structure
        const double x = 0.01 * i;
        const double y = which == 4 ? program->run({x, 0.5})[0] : program->run({x})[0];
        const double expected = which == 0   ? std::sin(x)
                                : which == 1 ? std::cos(x)
                                : which == 2 ? -x
                                : which == 3 ? std::exp(x)
                                             : std::exp(x * 0.5);
        if (y != expected) ++failures;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(failures.load(), 0);
  auto stats = cache.stats();
  EXPECT_EQ(stats.hits + stats.misses, static_cast<std::uint64_t>(kThreads * kCalls));
  EXPECT_GE(stats.misses, graphs.size());  // concurrent misses on one key may compile twice
  EXPECT_EQ(stats.size, graphs.size());
  EXPECT_EQ(stats.evictions, 0u);
  // Every thread got the one program that the cache kept.
  for (std::size_t which = 0; which < graphs.size(); ++which) {
    auto kept = find(cache, outputs_of(graphs[which]));
    for (int t = 0; t < kThreads; ++t) EXPECT_EQ(seen[t][which], kept) << t << ", " << which;
  }
}

TEST(CompileCache, ConcurrentAccessWithEviction) {
  // More structures than capacity: entries are evicted while other threads use them.
  Cache cache(3);
  std::vector<GraphPtr> graphs;
  for (int i = 0; i < 8; ++i) {
    Builder b;
    b.add_output(
        b.add(ScalarOp::add(), {L(b.add_input("x")), L(b.add(ScalarOp::constant(i), {}))}));
    graphs.push_back(finish(b));
  }
  View view = resolve(graphs);
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 400; ++i) {
        const int which = (i * 7 + t) % 8;
        auto program = get(cache, view, outputs_of(graphs[static_cast<std::size_t>(which)]));
        if (program->run({1.5})[0] != 1.5 + which) ++failures;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(failures.load(), 0);
  auto stats = cache.stats();
  EXPECT_EQ(stats.hits + stats.misses, 8u * 400u);
  EXPECT_EQ(stats.size, 3u);
  // Every inserted entry but the 3 kept was evicted; concurrent misses on one key insert once.
  EXPECT_GE(stats.misses, stats.evictions + 3u);
}

}  // namespace
}  // namespace cgtest
