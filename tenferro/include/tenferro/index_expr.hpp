#pragma once
// NumPy-style indexing of traced tensors: x[{...}] with integers, ranges with steps, an
// ellipsis, new axes and an i64 index tensor.
//
//   NumPy                       tenferro
//   x[1]                        x[{1}]                (or x[1])
//   x[-1, ::-1]                 x[{-1, tf::range(tf::none, tf::none, -1)}]
//   x[1:5:2, ..., None, 3]      x[{tf::range(1, 5, 2), tf::ellipsis, tf::newaxis, 3}]
//   x[:, idx]                   x[{tf::all, idx}]     (idx an i64 Traced of any shape)
//
// Semantics are NumPy's basic indexing: an integer picks one position and drops the axis
// (negative counts from the end; out of range is a ValueError), a range selects start:stop:step
// with NumPy's clamping and defaults (a negative step walks backwards), an ellipsis stands for
// as many full ranges as the rank needs, newaxis inserts a length-1 axis, and axes left over are
// taken whole. One i64 index tensor may stand for an axis (numpy.take: its shape replaces the
// axis). Several index tensors, whose NumPy semantics move axes around, and boolean masks, whose
// result shape depends on the data, are refused with a ValueError: use take_along_axis,
// gather-style composites or where instead.
//
// The result is built from slice, reverse, take and reshape, so every derivative order works and
// the reverse pass scatters back into the indexed positions.
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <vector>

#include "tenferro/traced.hpp"

namespace tenferro {

/// An omitted bound of a range (NumPy's empty start or stop).
struct None {};
inline constexpr None none{};

/// A range's start or stop: a position (negative from the end) or none.
struct RangeBound {
  RangeBound(std::int64_t position) : value(position) {}  // NOLINT: implicit, as NumPy's numbers
  RangeBound(None) {}                                     // NOLINT
  std::optional<std::int64_t> value;
};

/// start:stop:step (step != 0).
struct Range {
  RangeBound start = none, stop = none;
  std::int64_t step = 1;
};
inline Range range(RangeBound start, RangeBound stop, std::int64_t step = 1) { return Range{start, stop, step}; }

struct Ellipsis {};
struct NewAxis {};
inline constexpr Ellipsis ellipsis{};
inline constexpr NewAxis newaxis{};
/// ":" (the whole axis).
inline const Range all{};

/// One item of an index expression: a position, a range, an i64 index tensor, the ellipsis or a
/// new axis. (A tagged struct rather than a std::variant: the user tier includes this header, and
/// the variant's instantiation was a twentieth of a user file's compile time.)
class IndexItem {
 public:
  enum class Kind : std::uint8_t { Position, Range, Tensor, Ellipsis, NewAxis };
  template <class I, class = std::enable_if_t<std::is_integral_v<I>>>
  IndexItem(I position) : kind_(Kind::Position), position_(static_cast<std::int64_t>(position)) {}  // NOLINT
  IndexItem(Range r) : kind_(Kind::Range), range_(r) {}                                             // NOLINT
  IndexItem(Traced idx) : kind_(Kind::Tensor), tensor_(std::move(idx)) {}                           // NOLINT
  IndexItem(Ellipsis) : kind_(Kind::Ellipsis) {}                                                     // NOLINT
  IndexItem(NewAxis) : kind_(Kind::NewAxis) {}                                                       // NOLINT

  Kind kind() const { return kind_; }
  /// The item's position (Kind::Position), range (Kind::Range) or index tensor (Kind::Tensor);
  /// meaningless for the other kinds.
  std::int64_t position() const { return position_; }
  const Range& range() const { return range_; }
  const Traced& tensor() const { return *tensor_; }

 private:
  Kind kind_;
  std::int64_t position_ = 0;
  Range range_;
  std::optional<Traced> tensor_;
};

/// The items of x[{...}].
class IndexExpr {
 public:
  IndexExpr(std::initializer_list<IndexItem> items) : items_(items) {}  // NOLINT
  template <class I, class = std::enable_if_t<std::is_integral_v<I>>>
  IndexExpr(I position) : items_{IndexItem(position)} {}  // NOLINT: x[2]
  IndexExpr(Range r) : items_{IndexItem(r)} {}             // NOLINT: x[tf::range(1, 3)]
  explicit IndexExpr(std::vector<IndexItem> items) : items_(std::move(items)) {}
  const std::vector<IndexItem>& items() const { return items_; }

 private:
  std::vector<IndexItem> items_;
};

/// x indexed as NumPy would (x[{...}] calls this).
Traced index(const Traced& x, const IndexExpr& expr);

}  // namespace tenferro
