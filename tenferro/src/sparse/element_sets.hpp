#pragma once
// ElementSets: for each element of one value, the set of the differentiated argument's elements it
// depends on (sorted, distinct), as sparsity detection carries it through a graph (detect.cpp).
// Stored as a compressed row array, or, when every element has the same set (a value after an
// op that mixes everything), as that one set: an all-to-all op over n elements then costs one set,
// not n copies.
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

namespace tenferro::sparse {

class ElementSets {
 public:
  /// Element i depends on argument element i alone (the argument itself).
  static ElementSets identity(std::int64_t n);
  /// Every one of `numel` elements depends on `members` (sorted, distinct).
  static ElementSets uniform(std::int64_t numel, std::vector<std::int32_t> members);

  std::int64_t numel() const { return numel_; }
  bool is_uniform() const { return uniform_; }
  std::span<const std::int32_t> operator[](std::int64_t element) const {
    if (uniform_) return members_;
    const auto b = static_cast<std::size_t>(offsets_[static_cast<std::size_t>(element)]);
    const auto e = static_cast<std::size_t>(offsets_[static_cast<std::size_t>(element) + 1]);
    return std::span<const std::int32_t>(members_).subspan(b, e - b);
  }
  /// The sum of the set sizes over the elements.
  std::int64_t entries() const {
    return uniform_ ? numel_ * static_cast<std::int64_t>(members_.size()) : static_cast<std::int64_t>(members_.size());
  }
  /// The union of every element's set.
  std::vector<std::int32_t> all_members() const;

  /// Builds sets element by element: add() the members of element 0 (any order, repeats
  /// allowed), end_element(), and so on. Throws Error with `what()`'s text once the entries pass
  /// `limit` (SparseOptions::max_nonzeros).
  class Builder {
   public:
    Builder(std::int64_t numel, std::int64_t limit, std::function<std::string()> what);
    void add(std::span<const std::int32_t> members) { members_.insert(members_.end(), members.begin(), members.end()); }
    void add(std::int32_t member) { members_.push_back(member); }
    /// Ends the current element; `sorted_distinct` says its members need no sorting (one source).
    void end_element(bool sorted_distinct = false);
    ElementSets finish();

   private:
    std::int64_t numel_, limit_;
    std::function<std::string()> what_;
    std::vector<std::int64_t> offsets_;
    std::vector<std::int32_t> members_;
  };

 private:
  std::int64_t numel_ = 0;
  bool uniform_ = false;
  std::vector<std::int64_t> offsets_;  // numel + 1 entries unless uniform
  std::vector<std::int32_t> members_;  // uniform: the one set
};

/// Sorts and removes repeats in place.
void sort_distinct(std::vector<std::int32_t>& v);

}  // namespace tenferro::sparse
