// ValueKey / OperationKey: hash-consed structural identity (docs/design.md, "Identity").
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <optional>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "test_graphs.hpp"

namespace cgtest {
namespace {

using computegraph::key_to_string;
using computegraph::detail::InputNode;
using computegraph::detail::OperationNode;

std::size_t live_inputs() { return computegraph::detail::live_nodes<InputNode<ScalarOp>>(); }
std::size_t live_operations() {
  return computegraph::detail::live_nodes<OperationNode<ScalarOp>>();
}

/// exp(mul(x, a)) + sin(x), built from scratch on every call.
Key build_example(const std::string& x_name, const std::string& a_name) {
  Key x = in(x_name);
  Key a = in(a_name);
  Key e = key_of(ScalarOp::exp(), {key_of(ScalarOp::mul(), {x, a})});
  return key_of(ScalarOp::add(), {e, key_of(ScalarOp::sin(), {x})});
}

/// A chain neg(neg(...neg(x)...)) of `depth` operations.
Key neg_chain(const Key& x, std::size_t depth) {
  Key k = x;
  for (std::size_t i = 0; i < depth; ++i) k = key_of(ScalarOp::neg(), {k});
  return k;
}

TEST(ValueKey, EqualInputKeysAreIdentical) {
  Key x1 = in("x");
  Key x2 = in(std::string("x"));
  EXPECT_EQ(x1, x2);
  EXPECT_EQ(x1.node_identity(), x2.node_identity());
  EXPECT_EQ(x1.hash(), x2.hash());
  EXPECT_EQ(std::hash<Key>{}(x1), std::hash<Key>{}(x2));
  EXPECT_TRUE(x1.is_input());
  EXPECT_FALSE(x1.is_derived());
  EXPECT_EQ(x1.input_key(), "x");
  EXPECT_NE(in("x"), in("y"));
  EXPECT_NE(in("x").node_identity(), in("y").node_identity());
}

TEST(ValueKey, StructurallyEqualKeysBuiltIndependentlyAreIdentical) {
  Key k1 = build_example("x", "a");
  Key k2 = build_example("x", "a");
  EXPECT_EQ(k1, k2);
  EXPECT_EQ(k1.node_identity(), k2.node_identity());
  EXPECT_EQ(k1.operation().identity(), k2.operation().identity());
  EXPECT_EQ(k1.operation(), k2.operation());
  EXPECT_EQ(k1.hash(), k2.hash());
  EXPECT_EQ(k1.operation().hash(), k2.operation().hash());
  EXPECT_EQ(std::hash<OpKey>{}(k1.operation()), std::hash<OpKey>{}(k2.operation()));
  // Every sub-key is shared as well.
  ASSERT_EQ(k1.producer_inputs().size(), 2u);
  EXPECT_EQ(k1.producer_inputs()[0].node_identity(), k2.producer_inputs()[0].node_identity());
  EXPECT_EQ(k1.producer_inputs()[1].node_identity(), k2.producer_inputs()[1].node_identity());

  EXPECT_NE(build_example("x", "a"), build_example("a", "x"));
  EXPECT_NE(build_example("x", "a"), build_example("x", "b"));
}

TEST(ValueKey, KeysBuiltInGraphsEqualKeysBuiltWithoutGraphs) {
  GraphPtr g = exp_ax_graph();
  Key expected = key_of(ScalarOp::exp(), {key_of(ScalarOp::mul(), {in("x"), in("a")})});
  EXPECT_EQ(g->key(g->outputs()[0]), expected);
  EXPECT_EQ(g->key(g->outputs()[0]).node_identity(), expected.node_identity());
  EXPECT_EQ(g->key(0), in("x"));
  EXPECT_EQ(g->key(1), in("a"));
}

TEST(ValueKey, DerivedKeyAccessors) {
  Key x = in("x");
  Key a = in("a");
  Key product = key_of(ScalarOp::mul(), {x, a});
  ASSERT_TRUE(product.is_derived());
  EXPECT_EQ(product.producer_op(), ScalarOp::mul());
  const auto producer_inputs = product.producer_inputs();
  EXPECT_EQ(std::vector<Key>(producer_inputs.begin(), producer_inputs.end()),
            (std::vector<Key>{x, a}));
  EXPECT_TRUE(product.producer_role().is_primary());
  EXPECT_EQ(product.output_slot(), 0u);
  OpKey op = product.operation();
  EXPECT_EQ(op.operation(), ScalarOp::mul());
  const auto op_inputs = op.inputs();
  EXPECT_EQ(std::vector<Key>(op_inputs.begin(), op_inputs.end()), (std::vector<Key>{x, a}));
  EXPECT_EQ(op.output(0), product);
  EXPECT_EQ(Key::derived(op, 0), product);
}

TEST(ValueKey, OperandOrderIsPartOfIdentity) {
  EXPECT_NE(key_of(ScalarOp::mul(), {in("x"), in("a")}),
            key_of(ScalarOp::mul(), {in("a"), in("x")}));
  EXPECT_EQ(key_of(ScalarOp::mul(), {in("x"), in("x")}),
            key_of(ScalarOp::mul(), {in("x"), in("x")}));
}

TEST(ValueKey, OperationAttributesArePartOfIdentity) {
  EXPECT_EQ(key_of(ScalarOp::constant(2.0), {}), key_of(ScalarOp::constant(2.0), {}));
  EXPECT_NE(key_of(ScalarOp::constant(2.0), {}), key_of(ScalarOp::constant(3.0), {}));
  EXPECT_NE(key_of(ScalarOp::sum(2), {in("x"), in("y")}),
            key_of(ScalarOp::add(), {in("x"), in("y")}));
  EXPECT_NE(key_of(ScalarOp::sin(), {in("x")}), key_of(ScalarOp::cos(), {in("x")}));
}

TEST(ValueKey, RoleAndActiveMaskArePartOfIdentity) {
  const std::vector<Key> ins{in("a"), in("dx")};
  Key p = key_of(ScalarOp::mul(), ins);
  Key fa = key_of(ScalarOp::mul(), ins, linearized({false, true}));
  Key af = key_of(ScalarOp::mul(), ins, linearized({true, false}));
  Key aa = key_of(ScalarOp::mul(), ins, linearized({true, true}));
  Key ff = key_of(ScalarOp::mul(), ins, linearized({false, false}));
  const std::vector<Key> all{p, fa, af, aa, ff};
  for (std::size_t i = 0; i < all.size(); ++i) {
    for (std::size_t j = 0; j < all.size(); ++j) {
      EXPECT_EQ(all[i] == all[j], i == j) << i << " vs " << j;
      EXPECT_EQ(all[i].node_identity() == all[j].node_identity(), i == j) << i << " vs " << j;
    }
  }
  EXPECT_EQ(fa, key_of(ScalarOp::mul(), ins, linearized({false, true})));
  EXPECT_TRUE(fa.producer_role().is_linearized());
  EXPECT_EQ(fa.producer_role().active_mask(), (std::vector<bool>{false, true}));
  EXPECT_FALSE(fa.producer_role().is_active(0));
  EXPECT_TRUE(fa.producer_role().is_active(1));
  EXPECT_FALSE(p.producer_role().is_active(1));
  EXPECT_TRUE(p.producer_role().active_mask().empty());
  // A linearized role with an empty mask is still not the primary role.
  EXPECT_NE(key_of(ScalarOp::constant(1.0), {}),
            key_of(ScalarOp::constant(1.0), {}, linearized({})));
}

TEST(ValueKey, OutputSlotsShareTheOperationNode) {
  OpKey sc = OpKey::make(ScalarOp::sincos(), {in("x")}, primary());
  Key s = sc.output(0);
  Key c = sc.output(1);
  EXPECT_NE(s, c);
  EXPECT_EQ(s.node_identity(), c.node_identity());
  EXPECT_EQ(s.operation(), c.operation());
  EXPECT_EQ(s.output_slot(), 0u);
  EXPECT_EQ(c.output_slot(), 1u);
  EXPECT_NE(s.hash(), c.hash());
  EXPECT_EQ(c, key_of(ScalarOp::sincos(), {in("x")}, primary(), 1));
}

TEST(ValueKey, KeysWorkAsHashMapKeys) {
  std::unordered_map<Key, int> map;
  map[build_example("x", "a")] = 1;
  map[build_example("a", "x")] = 2;
  map[in("x")] = 3;
  EXPECT_EQ(map.size(), 3u);
  EXPECT_EQ(map.at(build_example("x", "a")), 1);
  EXPECT_EQ(map.at(build_example("a", "x")), 2);
  EXPECT_EQ(map.at(in("x")), 3);
  std::unordered_set<OpKey> ops{build_example("x", "a").operation(),
                                build_example("x", "a").operation()};
  EXPECT_EQ(ops.size(), 1u);
}

TEST(ValueKey, KeyText) {
  EXPECT_EQ(key_to_string(in("x")), "x");
  EXPECT_EQ(key_to_string(build_example("x", "a")), "add(exp(mul(x, a)), sin(x))");
  EXPECT_EQ(key_to_string(key_of(ScalarOp::sincos(), {in("x")}, primary(), 1)), "sincos(x)#1");
  EXPECT_EQ(key_to_string(key_of(ScalarOp::mul(), {in("a"), in("dx")}, linearized({false, true}))),
            "mul'(a, dx)");
  EXPECT_EQ(key_to_string(key_of(ScalarOp::constant(2.5), {})), "const[2.500000]()");
  // Deep keys print their top six levels only.
  EXPECT_EQ(key_to_string(neg_chain(in("x"), 10)), "neg(neg(neg(neg(neg(neg(...))))))");
  EXPECT_EQ(key_to_string(neg_chain(in("x"), 7)), "neg(neg(neg(neg(neg(neg(...))))))");
  EXPECT_EQ(key_to_string(neg_chain(in("x"), 6)), "neg(neg(neg(neg(neg(neg(x))))))");
  EXPECT_EQ(key_to_string(neg_chain(in("x"), 3), 2), "neg(neg(...))");
}

TEST(ValueKey, CopiesShareOneNode) {
  const std::size_t ops_before = live_operations();
  Key k = build_example("copy_x", "copy_a");
  EXPECT_EQ(live_operations(), ops_before + 4);
  std::vector<Key> copies(100, k);
  Key moved = std::move(copies.back());
  copies.pop_back();
  EXPECT_EQ(live_operations(), ops_before + 4);
  for (const Key& c : copies) EXPECT_EQ(c.node_identity(), k.node_identity());
  EXPECT_EQ(moved, k);
}

TEST(ValueKey, KeysAreFreedWhenDropped) {
  const std::size_t inputs_before = live_inputs();
  const std::size_t ops_before = live_operations();
  {
    Key k1 = build_example("free_x", "free_a");
    Key k2 = build_example("free_x", "free_a");  // shares every node with k1
    EXPECT_EQ(live_inputs(), inputs_before + 2);
    EXPECT_EQ(live_operations(), ops_before + 4);  // add, exp, mul, sin
    {
      Key only_sin = key_of(ScalarOp::sin(), {in("free_x")});  // already interned inside k1
      EXPECT_EQ(live_operations(), ops_before + 4);
    }
    k1 = in("free_x");  // k2 still holds the whole structure
    EXPECT_EQ(live_operations(), ops_before + 4);
    k2 = in("free_y");
    // Dropping the root frees every operation node; free_x lives on in k1, free_y in k2.
    EXPECT_EQ(live_operations(), ops_before);
    EXPECT_EQ(live_inputs(), inputs_before + 2);
  }
  EXPECT_EQ(live_inputs(), inputs_before);
  EXPECT_EQ(live_operations(), ops_before);
}

TEST(ValueKey, SubKeysSurviveWhileReferenced) {
  const std::size_t ops_before = live_operations();
  std::optional<Key> inner;
  {
    Key outer = build_example("sub_x", "sub_a");
    inner = outer.producer_inputs()[0];  // exp(mul(sub_x, sub_a))
  }
  EXPECT_EQ(live_operations(), ops_before + 2);  // exp and mul
  EXPECT_EQ(key_to_string(*inner), "exp(mul(sub_x, sub_a))");
  // Rebuilding finds the surviving nodes.
  Key again = key_of(ScalarOp::exp(), {key_of(ScalarOp::mul(), {in("sub_x"), in("sub_a")})});
  EXPECT_EQ(again.node_identity(), inner->node_identity());
}

TEST(ValueKey, MillionDeepChainDropsWithoutStackOverflow) {
  constexpr std::size_t kDepth = 1'000'000;
  const std::size_t ops_before = live_operations();
  {
    Key chain = neg_chain(in("deep_x"), kDepth);
    EXPECT_EQ(live_operations(), ops_before + kDepth);
    // Each level keeps its producer alive; dropping the root releases all of them iteratively.
  }
  EXPECT_EQ(live_operations(), ops_before);

  // The same through a container destructor and through the last of several owners.
  {
    std::vector<Key> owners(3, neg_chain(in("deep_y"), kDepth));
    owners.pop_back();
    EXPECT_EQ(live_operations(), ops_before + kDepth);
  }
  EXPECT_EQ(live_operations(), ops_before);
}

TEST(ValueKey, DeepKeysCompareAndHashInConstantTime) {
  constexpr std::size_t kDepth = 100'000;
  Key d1 = neg_chain(in("cmp_x"), kDepth);
  Key d2 = neg_chain(in("cmp_x"), kDepth);
  Key other = neg_chain(in("cmp_y"), kDepth);
  // A structural comparison would cost ~10^5 steps each: 10^6 of them would take minutes.
  const auto start = std::chrono::steady_clock::now();
  std::size_t equal = 0;
  std::size_t hash_sum = 0;
  for (int i = 0; i < 1'000'000; ++i) {
    equal += d1 == d2;
    equal += d1 == other;
    hash_sum += d2.hash();
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(equal, 1'000'000u);
  EXPECT_EQ(hash_sum, d1.hash() * 1'000'000u);  // arithmetic mod 2^64 on both sides
  EXPECT_LT(seconds, 5.0);
  EXPECT_EQ(d1.hash(), d2.hash());
}

TEST(ValueKey, ConcurrentCreateAndDrop) {
  const std::size_t inputs_before = live_inputs();
  const std::size_t ops_before = live_operations();
  constexpr int kThreads = 8;
  constexpr int kRounds = 2000;
  // Reference identities and hashes, computed once on this thread. `pinned` stays alive for the
  // whole test; the other structures are created and dropped by every thread over and over, so
  // threads race on interning nodes that another thread is freeing at the same time.
  const Key pinned = build_example("cc_x", "cc_a");
  std::size_t chain_hash;
  { chain_hash = neg_chain(in("cc_z"), 20).hash(); }
  const std::size_t example_hash = build_example("cc_a", "cc_x").hash();
  EXPECT_EQ(live_operations(), ops_before + 4);

  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int r = 0; r < kRounds; ++r) {
        Key same = build_example("cc_x", "cc_a");
        if (same.node_identity() != pinned.node_identity() || !(same == pinned)) ++failures;
        Key transient = build_example("cc_a", "cc_x");
        Key transient2 = build_example("cc_a", "cc_x");
        if (!(transient == transient2) || transient.hash() != example_hash) ++failures;
        if (neg_chain(in("cc_z"), 20).hash() != chain_hash) ++failures;
        Key local = key_of(ScalarOp::constant(t), {});  // per-thread structure
        if (!(local == key_of(ScalarOp::constant(t), {}))) ++failures;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(live_operations(), ops_before + 4);
  EXPECT_EQ(live_inputs(), inputs_before + 2);
}

TEST(ValueKey, ConcurrentCopiesAndDropsOfSharedKeys) {
  const std::size_t ops_before = live_operations();
  {
    std::vector<Key> shared;
    for (int i = 0; i < 64; ++i) shared.push_back(neg_chain(in("sh_" + std::to_string(i % 8)), i));
    std::vector<std::thread> threads;
    std::atomic<int> failures{0};
    for (int t = 0; t < 8; ++t) {
      threads.emplace_back([&] {
        for (int r = 0; r < 500; ++r) {
          std::vector<Key> copies(shared.begin(), shared.end());
          for (std::size_t i = 0; i < copies.size(); ++i) {
            if (!(copies[i] == shared[i])) ++failures;
          }
        }
      });
    }
    for (auto& thread : threads) thread.join();
    EXPECT_EQ(failures.load(), 0);
  }
  EXPECT_EQ(live_operations(), ops_before);
}

}  // namespace
}  // namespace cgtest
