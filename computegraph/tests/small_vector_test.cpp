// SmallVector against std::vector as the reference: the same operations on both give the same
// elements, every element constructed is destroyed exactly once, and growth never loses an element.
#include "computegraph/small_vector.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <random>
#include <string>
#include <vector>

namespace {

using computegraph::SmallVector;

/// An element that counts live instances and carries a heap-owning payload, so that a double
/// destruction, a leak or a read of a moved-from slot is caught (the live count, ASan).
struct Tracked {
  static inline int live = 0;
  std::unique_ptr<std::string> text;
  explicit Tracked(std::string s) : text(std::make_unique<std::string>(std::move(s))) { ++live; }
  Tracked(const Tracked& other) : text(std::make_unique<std::string>(*other.text)) { ++live; }
  Tracked(Tracked&& other) noexcept : text(std::move(other.text)) { ++live; }
  Tracked& operator=(const Tracked& other) {
    text = std::make_unique<std::string>(*other.text);
    return *this;
  }
  Tracked& operator=(Tracked&&) noexcept = default;
  ~Tracked() { --live; }
  bool operator==(const Tracked& other) const { return *text == *other.text; }
};

template <class V>
std::vector<std::string> texts(const V& v) {
  std::vector<std::string> out;
  for (const auto& x : v) out.push_back(*x.text);
  return out;
}

TEST(SmallVector, StaysInlineUpToItsCapacityThenGrowsOnTheHeap) {
  SmallVector<int, 2> v;
  EXPECT_TRUE(v.empty());
  EXPECT_TRUE(v.is_inline());
  v.push_back(1);
  v.push_back(2);
  EXPECT_TRUE(v.is_inline());
  EXPECT_EQ(v.capacity(), 2u);
  v.push_back(3);
  EXPECT_FALSE(v.is_inline());
  EXPECT_GE(v.capacity(), 3u);
  EXPECT_EQ(v, (std::vector<int>{1, 2, 3}));
  v.pop_back();
  EXPECT_EQ(v.back(), 2);
  v.clear();
  EXPECT_TRUE(v.empty());
}

TEST(SmallVector, ConstructsFromVectorsListsAndRanges) {
  std::vector<int> source{4, 5, 6};
  SmallVector<int, 2> from_vector(std::move(source));
  EXPECT_EQ(from_vector, (std::vector<int>{4, 5, 6}));
  SmallVector<int, 4> from_list{7, 8};
  EXPECT_TRUE(from_list.is_inline());
  EXPECT_EQ(from_list.to_vector(), (std::vector<int>{7, 8}));
  const std::vector<int> range{1, 2, 3, 4, 5};
  SmallVector<int, 2> from_range(range.begin() + 1, range.end());
  EXPECT_EQ(from_range, (std::vector<int>{2, 3, 4, 5}));
  std::span<const int> view = from_range;
  EXPECT_EQ(view.size(), 4u);
  EXPECT_EQ(view[3], 5);
}

TEST(SmallVector, PushingAnOwnElementWhileGrowingCopiesItFirst) {
  SmallVector<Tracked, 2> v;
  v.emplace_back("a");
  v.emplace_back("b");
  v.push_back(v[0]);  // growth moves v[0]; the copy must be taken before
  v.push_back(v[2]);
  EXPECT_EQ(texts(v), (std::vector<std::string>{"a", "b", "a", "a"}));
}

TEST(SmallVector, CopiesAndMovesInlineAndHeapContents) {
  {
    for (int n : {0, 1, 2, 3, 7}) {
      SmallVector<Tracked, 2> a;
      for (int i = 0; i < n; ++i) a.emplace_back(std::to_string(i));
      SmallVector<Tracked, 2> copy(a);
      EXPECT_EQ(texts(copy), texts(a));
      SmallVector<Tracked, 2> moved(std::move(copy));
      EXPECT_EQ(texts(moved), texts(a));
      EXPECT_TRUE(copy.empty());  // NOLINT(bugprone-use-after-move): moved-from is empty
      SmallVector<Tracked, 2> assigned;
      assigned.emplace_back("old");
      assigned = a;
      EXPECT_EQ(texts(assigned), texts(a));
      assigned = assigned;  // self-assignment keeps the contents
      EXPECT_EQ(texts(assigned), texts(a));
      SmallVector<Tracked, 2> move_assigned;
      for (int i = 0; i < 5; ++i) move_assigned.emplace_back("x");
      move_assigned = std::move(moved);
      EXPECT_EQ(texts(move_assigned), texts(a));
    }
  }
  EXPECT_EQ(Tracked::live, 0);
}

TEST(SmallVector, RandomOperationSequencesMatchStdVector) {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 200; ++trial) {
    {
      SmallVector<Tracked, 2> small;
      std::vector<Tracked> reference;
      for (int step = 0; step < 60; ++step) {
        const int action = static_cast<int>(rng() % 10);
        if (action < 5) {
          const std::string s = std::to_string(rng() % 1000);
          small.emplace_back(s);
          reference.emplace_back(s);
        } else if (action < 7 && !reference.empty()) {
          small.pop_back();
          reference.pop_back();
        } else if (action == 7) {
          SmallVector<Tracked, 2> copy = small;
          small = std::move(copy);
        } else if (action == 8) {
          small.reserve(rng() % 12);
        } else if (!reference.empty()) {
          const std::size_t i = rng() % reference.size();
          small[i] = reference[i] = Tracked(std::to_string(step));
        }
        ASSERT_EQ(texts(small), texts(reference)) << "trial " << trial << " step " << step;
        ASSERT_EQ(small.size(), reference.size());
      }
    }
    ASSERT_EQ(Tracked::live, 0) << "trial " << trial;
  }
}

}  // namespace
