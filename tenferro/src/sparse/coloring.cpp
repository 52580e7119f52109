// ColPack behind the Coloring interface. ColPack's headers open namespace std at file scope, so
// they are included in this file only.
#include "sparse/coloring.hpp"

#include <ColPack/ColPackHeaders.h>

#include <omp.h>

#include <algorithm>

#include "tenferro/error.hpp"

namespace tenferro::sparse {
namespace {

/// The pattern in ADOL-C's compressed row format, which ColPack reads: row i is an array of its
/// count followed by its columns.
class AdolcRows {
 public:
  explicit AdolcRows(const SparsityPattern& p) {
    if (p.cols > std::int64_t{0x7fffffff} || p.rows > std::int64_t{0x7fffffff}) {
      throw ShapeError("sparse coloring: a pattern of " + std::to_string(p.rows) + " x " + std::to_string(p.cols) +
                       "; ColPack indexes at most 2^31 - 1 rows and columns");
    }
    storage_.reserve(static_cast<std::size_t>(p.rows + p.nnz()));
    for (std::int64_t i = 0; i < p.rows; ++i) {
      const auto b = p.row_offsets[static_cast<std::size_t>(i)], e = p.row_offsets[static_cast<std::size_t>(i) + 1];
      storage_.push_back(static_cast<unsigned int>(e - b));
      for (auto k = b; k < e; ++k) storage_.push_back(static_cast<unsigned int>(p.col_indices[static_cast<std::size_t>(k)]));
    }
    std::size_t at = 0;
    for (std::int64_t i = 0; i < p.rows; ++i) {
      rows_.push_back(storage_.data() + at);
      at += 1 + storage_[at];
    }
  }
  unsigned int** rows() { return rows_.data(); }

 private:
  std::vector<unsigned int> storage_;
  std::vector<unsigned int*> rows_;
};

/// ColPack colors on OpenMP threads when there are several, speculatively: the colors then
/// change from run to run, and there are more of them (10 instead of 7 for a 5-point stencil in
/// natural order, on 2 threads). A coloring decides the products and the order of every sum, so
/// it runs on this thread alone, for the same colors on every run.
class OneThread {
 public:
  OneThread() : saved_(omp_get_max_threads()) { omp_set_num_threads(1); }
  ~OneThread() { omp_set_num_threads(saved_); }
  OneThread(const OneThread&) = delete;
  OneThread& operator=(const OneThread&) = delete;

 private:
  int saved_;
};

Coloring from_colors(const std::vector<int>& colors, std::int64_t count) {
  if (static_cast<std::int64_t>(colors.size()) != count) {
    throw Error("sparse coloring: ColPack colored " + std::to_string(colors.size()) + " vertices of " + std::to_string(count));
  }
  Coloring c;
  c.color.assign(colors.begin(), colors.end());
  for (int v : colors) c.colors = std::max<std::int64_t>(c.colors, v + 1);
  return c;
}

Coloring partial_distance_two(const SparsityPattern& p, const std::string& ordering, bool columns) {
  const std::int64_t count = columns ? p.cols : p.rows;
  if (p.nnz() == 0) return Coloring{count > 0 ? 1 : 0, std::vector<std::int32_t>(static_cast<std::size_t>(count), 0)};
  AdolcRows rows(p);
  const OneThread one;
  ColPack::BipartiteGraphPartialColoringInterface g(SRC_MEM_ADOLC, rows.rows(), static_cast<int>(p.rows), static_cast<int>(p.cols));
  g.PartialDistanceTwoColoring(ordering, columns ? "COLUMN_PARTIAL_DISTANCE_TWO" : "ROW_PARTIAL_DISTANCE_TWO");
  std::vector<int> colors;
  if (columns) {
    g.GetRightVertexColors(colors);
  } else {
    g.GetLeftVertexColors(colors);
  }
  return from_colors(colors, count);
}

}  // namespace

Coloring color_columns(const SparsityPattern& p, const std::string& ordering) { return partial_distance_two(p, ordering, true); }
Coloring color_rows(const SparsityPattern& p, const std::string& ordering) { return partial_distance_two(p, ordering, false); }

Coloring star_coloring(const SparsityPattern& p, const std::string& ordering) {
  if (p.rows != p.cols) {
    throw ShapeError("sparse coloring: a star coloring needs a square pattern, not " + std::to_string(p.rows) + " x " + std::to_string(p.cols));
  }
  if (p.nnz() == 0) return Coloring{p.cols > 0 ? 1 : 0, std::vector<std::int32_t>(static_cast<std::size_t>(p.cols), 0)};
  AdolcRows rows(p);
  const OneThread one;
  ColPack::GraphColoringInterface g(SRC_MEM_ADOLC, rows.rows(), static_cast<int>(p.rows));
  g.Coloring(ordering, "STAR");
  std::vector<int> colors;
  g.GetVertexColors(colors);
  return from_colors(colors, p.cols);
}

}  // namespace tenferro::sparse
