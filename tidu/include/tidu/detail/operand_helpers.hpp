#pragma once
// Helpers of tidu::Transforms that see operands as coordinate vectors (OperandSpace).
#include <algorithm>
#include <cstddef>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "computegraph/graph.hpp"
#include "tidu/operand_space.hpp"

namespace tidu::detail {

template <class Operand>
struct OperandHelpers {
  using Space = OperandSpace<Operand>;
  using Scalar = typename Space::Scalar;
  using Values = std::vector<Operand>;

  /// Splits a run's outputs into the first `n_primal` values and the present derivative values,
  /// filling absent ones with `zero(i)`.
  template <class Zero>
  static std::pair<Values, Values> split_outputs(
      Values& out, std::size_t n_primal,
      const std::vector<std::optional<computegraph::LocalValueId>>& present, Zero&& zero) {
    Values primal(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(n_primal));
    Values derivative;
    std::size_t k = n_primal;
    for (std::size_t i = 0; i < present.size(); ++i) {
      derivative.push_back(present[i] ? out[k++] : zero(i));
    }
    return {std::move(primal), std::move(derivative)};
  }

  /// One value per operand of `like`: reached[j] where set, else zeros shaped like like[j].
  static Values fill_zeros(std::vector<std::optional<Operand>> reached, std::span<const Operand> like) {
    Values values;
    values.reserve(reached.size());
    for (std::size_t j = 0; j < reached.size(); ++j) {
      values.push_back(reached[j] ? std::move(*reached[j]) : Space::zeros_like(like[j]));
    }
    return values;
  }

  static std::size_t total_size(std::span<const Operand> xs) {
    std::size_t n = 0;
    for (const auto& x : xs) n += Space::size(x);
    return n;
  }

  /// Calls visit(global index, directions) with one basis direction per coordinate of `xs`,
  /// skipping the operands whose position `use` rejects (their indices are still counted).
  template <class Visit, class Use>
  static void for_each_basis(std::span<const Operand> xs, Visit&& visit, Use&& use) {
    Values dirs;
    for (const auto& x : xs) dirs.push_back(Space::zeros_like(x));
    std::size_t index = 0;
    for (std::size_t j = 0; j < xs.size(); ++j) {
      if (!use(j)) {
        index += Space::size(xs[j]);
        continue;
      }
      for (std::size_t k = 0; k < Space::size(xs[j]); ++k) {
        dirs[j] = Space::basis_like(xs[j], k);
        visit(index++, dirs);
      }
      dirs[j] = Space::zeros_like(xs[j]);
    }
  }
  template <class Visit>
  static void for_each_basis(std::span<const Operand> xs, Visit&& visit) {
    for_each_basis(xs, std::forward<Visit>(visit), [](std::size_t) { return true; });
  }

  /// One differentiated argument of a column sweep: its position in x, its slot among the
  /// directions (its place in wrt_pos), its first column (columns number the coordinates of all
  /// arguments, differentiated or not) and its coordinate count.
  struct BasisSegment {
    std::size_t arg, slot, first_col, size;
  };

  /// The differentiated arguments (positions `wrt_pos`) in argument order.
  static std::vector<BasisSegment> basis_segments(std::span<const Operand> x, const std::vector<std::size_t>& wrt_pos) {
    std::vector<BasisSegment> segments;
    std::size_t col = 0;
    for (std::size_t j = 0; j < x.size(); ++j) {
      const auto w = static_cast<std::size_t>(std::find(wrt_pos.begin(), wrt_pos.end(), j) - wrt_pos.begin());
      if (w < wrt_pos.size()) segments.push_back({j, w, col, Space::size(x[j])});
      col += Space::size(x[j]);
    }
    return segments;
  }

  static std::size_t coordinate_count(const std::vector<BasisSegment>& segments) {
    std::size_t count = 0;
    for (const auto& seg : segments) count += seg.size;
    return count;
  }

  /// Sweeps the differentiated coordinates t in [begin, end) (numbered across `segments`, in
  /// order): for each, puts its basis direction at in[first + slot], every other direction zero,
  /// and calls visit(col). On entry and on return every direction in `in` is zero. Steps the
  /// direction in place (OperandSpace::move_basis) where the op set can.
  template <class Visit>
  static void sweep_basis_range(std::span<const Operand> x, const std::vector<BasisSegment>& segments, Values& in,
                                std::size_t first, std::size_t begin, std::size_t end, Visit&& visit) {
    std::size_t offset = 0;  // t of segments[s]'s first coordinate
    for (const BasisSegment& seg : segments) {
      const std::size_t lo = std::max(begin, offset), hi = std::min(end, offset + seg.size);
      offset += seg.size;
      if (lo >= hi) continue;
      Operand& direction = in[first + seg.slot];
      for (std::size_t t = lo; t < hi; ++t) {
        const std::size_t k = t - (offset - seg.size);
        if constexpr (requires(Operand& e) { Space::move_basis(e, k, k); }) {
          if (t == lo) {
            direction = Space::basis_like(x[seg.arg], k);
          } else {
            Space::move_basis(direction, k - 1, k);
          }
        } else {
          direction = Space::basis_like(x[seg.arg], k);
        }
        visit(seg.first_col + k);
      }
      direction = Space::zeros_like(x[seg.arg]);
    }
  }

  /// Every coordinate of `segments` under `schedule` (SequentialColumns' contract): each range
  /// sweeps its own copy of `prepared`, whose directions at [first, ...) are zero, and calls
  /// body(index, in) with the basis direction of coordinate `index` set in `in`.
  template <class Schedule, class Body>
  static void sweep_scheduled(std::span<const Operand> x, const std::vector<BasisSegment>& segments,
                              const Values& prepared, std::size_t first, Schedule&& schedule, Body&& body) {
    schedule(coordinate_count(segments), [&](std::size_t begin, std::size_t end) {
      Values in = prepared;
      sweep_basis_range(x, segments, in, first, begin, end,
                        [&](std::size_t index) { body(index, static_cast<const Values&>(in)); });
    });
  }

  template <class Map>
  static void fill_column(Matrix<Scalar>& m, std::size_t col, const Values& values, Map&& map) {
    std::size_t row = 0;
    for (const auto& v : values) {
      for (std::size_t k = 0; k < Space::size(v); ++k) m(row++, col) = map(Space::coordinate(v, k));
    }
  }
};

}  // namespace tidu::detail
