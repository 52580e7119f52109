#include "sparse/element_sets.hpp"

#include <algorithm>

#include "tenferro/error.hpp"

namespace tenferro::sparse {

void sort_distinct(std::vector<std::int32_t>& v) {
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
}

ElementSets ElementSets::identity(std::int64_t n) {
  ElementSets s;
  s.numel_ = n;
  s.offsets_.resize(static_cast<std::size_t>(n) + 1);
  s.members_.resize(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i <= n; ++i) s.offsets_[static_cast<std::size_t>(i)] = i;
  for (std::int64_t i = 0; i < n; ++i) s.members_[static_cast<std::size_t>(i)] = static_cast<std::int32_t>(i);
  return s;
}

ElementSets ElementSets::uniform(std::int64_t numel, std::vector<std::int32_t> members) {
  ElementSets s;
  s.numel_ = numel;
  s.uniform_ = true;
  s.members_ = std::move(members);
  return s;
}

std::vector<std::int32_t> ElementSets::all_members() const {
  std::vector<std::int32_t> all = members_;
  if (!uniform_) sort_distinct(all);
  return all;
}

ElementSets::Builder::Builder(std::int64_t numel, std::int64_t limit, std::function<std::string()> what)
    : numel_(numel), limit_(limit), what_(std::move(what)) {
  offsets_.reserve(static_cast<std::size_t>(numel) + 1);
  offsets_.push_back(0);
}

void ElementSets::Builder::end_element(bool sorted_distinct) {
  const auto begin = members_.begin() + offsets_.back();
  if (!sorted_distinct) {
    std::sort(begin, members_.end());
    members_.erase(std::unique(begin, members_.end()), members_.end());
  }
  if (static_cast<std::int64_t>(members_.size()) > limit_) {
    throw Error(what_() + ": its sparsity pattern holds more than " + std::to_string(limit_) +
                " entries (SparseOptions::max_nonzeros); the derivative is close to dense, so jacfwd/jacrev suit it better");
  }
  offsets_.push_back(static_cast<std::int64_t>(members_.size()));
}

ElementSets ElementSets::Builder::finish() {
  if (static_cast<std::int64_t>(offsets_.size()) != numel_ + 1) {
    throw Error("ElementSets::Builder: " + std::to_string(offsets_.size() - 1) + " elements ended of " + std::to_string(numel_));
  }
  ElementSets s;
  s.numel_ = numel_;
  s.offsets_ = std::move(offsets_);
  s.members_ = std::move(members_);
  return s;
}

}  // namespace tenferro::sparse
