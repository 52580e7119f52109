// gather and scatter with StableHLO dimension numbers: values against a reference written here
// element by element from StableHLO's defining formulas (independent of the kernels' window plan),
// repeated and out-of-range indices, the derivative of replacing scatter at colliding indices in
// closed form, check_grads to order 2 in f64 and c128, and the errors.
#include <gmock/gmock.h>

#include <algorithm>
#include <numeric>

#include "linalg_test_util.hpp"

namespace tf = tenferro;
using namespace tenferro::test;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

namespace {
const tf::DType kDTypes[] = {tf::DType::F64, tf::DType::C128};

std::vector<std::int64_t> unravel(std::int64_t i, const tf::Shape& shape) {
  std::vector<std::int64_t> m(shape.size());
  for (std::size_t k = shape.size(); k-- > 0;) {
    m[k] = i % shape[k];
    i /= shape[k];
  }
  return m;
}
std::int64_t ravel(const std::vector<std::int64_t>& m, const tf::Shape& shape) {
  std::int64_t i = 0;
  for (std::size_t k = 0; k < shape.size(); ++k) i = i * shape[k] + m[k];
  return i;
}
bool contains(const std::vector<std::int64_t>& v, std::int64_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }

/// The index vector of batch position `batch` (a multi-index over indices' axes but ivd).
std::vector<std::int64_t> index_vector(const tf::Tensor& idx, std::int64_t ivd, const std::vector<std::int64_t>& batch) {
  const auto rank = static_cast<std::int64_t>(idx.shape().size());
  const std::int64_t n = ivd < rank ? idx.shape()[static_cast<std::size_t>(ivd)] : 1;
  std::vector<std::int64_t> v;
  for (std::int64_t k = 0; k < n; ++k) {
    std::vector<std::int64_t> m = batch;
    if (ivd < rank) m.insert(m.begin() + ivd, k);
    v.push_back(idx.data<std::int64_t>()[ravel(m, idx.shape())]);
  }
  return v;
}

/// The window's start in the operand: the index vector mapped onto the operand's axes, clamped.
std::vector<std::int64_t> window_start(const std::vector<std::int64_t>& vec, const std::vector<std::int64_t>& map,
                                       const tf::Shape& operand, const tf::Shape& window) {
  std::vector<std::int64_t> s(operand.size(), 0);
  for (std::size_t k = 0; k < map.size(); ++k) {
    const auto d = static_cast<std::size_t>(map[k]);
    s[d] = std::clamp<std::int64_t>(vec[k], 0, operand[d] - window[d]);
  }
  return s;
}

/// gather by StableHLO's definition: result[out] = x[start(batch(out)) + offset(out)].
std::vector<tf::c128> ref_gather(const tf::Tensor& x, const tf::Tensor& idx, const tf::GatherDims& d, const tf::Shape& out) {
  std::vector<tf::c128> r;
  for (std::int64_t i = 0; i < tf::numel(out); ++i) {
    const std::vector<std::int64_t> o = unravel(i, out);
    std::vector<std::int64_t> batch, offset;
    for (std::size_t k = 0; k < o.size(); ++k) (contains(d.offset_dims, static_cast<std::int64_t>(k)) ? offset : batch).push_back(o[k]);
    std::vector<std::int64_t> pos =
        window_start(index_vector(idx, d.index_vector_dim, batch), d.start_index_map, x.shape(), d.slice_sizes);
    for (std::size_t a = 0, j = 0; a < pos.size(); ++a) {
      if (!contains(d.collapsed_slice_dims, static_cast<std::int64_t>(a))) pos[a] += offset[j++];
    }
    r.push_back(at(x, ravel(pos, x.shape())));
  }
  return r;
}

/// scatter by StableHLO's definition, windows applied in row-major order of the batch positions.
std::vector<tf::c128> ref_scatter(const tf::Tensor& x, const tf::Tensor& idx, const tf::Tensor& u, const tf::ScatterDims& d,
                                  bool add) {
  std::vector<tf::c128> r;
  for (std::int64_t i = 0; i < x.numel(); ++i) r.push_back(at(x, i));
  std::vector<std::int64_t> window_axes, batch_axes;  // of updates
  for (std::size_t a = 0; a < u.shape().size(); ++a) {
    (contains(d.update_window_dims, static_cast<std::int64_t>(a)) ? window_axes : batch_axes).push_back(static_cast<std::int64_t>(a));
  }
  tf::Shape window(x.shape().size(), 1);
  for (std::size_t a = 0, j = 0; a < window.size(); ++a) {
    if (!contains(d.inserted_window_dims, static_cast<std::int64_t>(a))) window[a] = u.shape()[static_cast<std::size_t>(window_axes[j++])];
  }
  // Update elements sorted by (batch position, window position): the order windows land in.
  std::vector<std::int64_t> order(static_cast<std::size_t>(u.numel()));
  std::iota(order.begin(), order.end(), 0);
  auto key = [&](std::int64_t e) {
    const std::vector<std::int64_t> m = unravel(e, u.shape());
    std::vector<std::int64_t> k;
    for (std::int64_t a : batch_axes) k.push_back(m[static_cast<std::size_t>(a)]);
    for (std::int64_t a : window_axes) k.push_back(m[static_cast<std::size_t>(a)]);
    return k;
  };
  std::stable_sort(order.begin(), order.end(), [&](std::int64_t a, std::int64_t b) { return key(a) < key(b); });
  for (std::int64_t e : order) {
    const std::vector<std::int64_t> m = unravel(e, u.shape());
    std::vector<std::int64_t> batch, offset;
    for (std::int64_t a : batch_axes) batch.push_back(m[static_cast<std::size_t>(a)]);
    for (std::int64_t a : window_axes) offset.push_back(m[static_cast<std::size_t>(a)]);
    std::vector<std::int64_t> pos =
        window_start(index_vector(idx, d.index_vector_dim, batch), d.scatter_dims_to_operand_dims, x.shape(), window);
    for (std::size_t a = 0, j = 0; a < pos.size(); ++a) {
      if (!contains(d.inserted_window_dims, static_cast<std::int64_t>(a))) pos[a] += offset[j++];
    }
    tf::c128& dst = r[static_cast<std::size_t>(ravel(pos, x.shape()))];
    dst = add ? dst + at(u, e) : at(u, e);
  }
  return r;
}

std::vector<tf::c128> all(const tf::Tensor& t) {
  std::vector<tf::c128> v;
  for (std::int64_t i = 0; i < t.numel(); ++i) v.push_back(at(t, i));
  return v;
}
tf::Tensor ints(std::vector<std::int64_t> v, tf::Shape shape) { return tf::Tensor::from(v, std::move(shape)); }
/// 1, 2, 3, ... (times `sign`) in row-major order.
tf::Tensor counting(tf::Shape shape, double sign = 1) {
  std::vector<double> v(static_cast<std::size_t>(tf::numel(shape)));
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = sign * static_cast<double>(i + 1);
  return tf::Tensor::from(v, std::move(shape));
}

struct GatherCase {
  const char* name;
  tf::Shape x;
  tf::Tensor idx;
  tf::GatherDims dims;
  tf::Shape out;
};
std::vector<GatherCase> gather_cases() {
  return {
      // Rows by number (numpy.take along axis 0), repeated.
      {"rows", {5, 3}, ints({4, 0, 4, 2}, {4, 1}), {{1}, {0}, {0}, 1, {1, 3}}, {4, 3}},
      // Single elements by (row, column), the last one out of range on both axes (clamped).
      {"points", {4, 5}, ints({0, 1, 3, 4, 9, -3}, {3, 2}), {{}, {0, 1}, {0, 1}, 1, {1, 1}}, {3}},
      // 2x3x2 windows, index vectors along indices' axis 0 mapped to operand axes (1, 0), starts
      // past both ends; the batch axis lands between the window's axes.
      {"windows", {4, 5, 2}, ints({1, 7, -2, 0, 2, 3}, {2, 3}), {{0, 2, 3}, {}, {1, 0}, 0, {2, 3, 2}}, {2, 3, 3, 2}},
      // index_vector_dim == rank: every entry is an index vector of length 1.
      {"implicit_vector", {6, 2}, ints({5, 1, 0, 3}, {2, 2}), {{2}, {0}, {0}, 2, {1, 2}}, {2, 2, 2}},
  };
}

struct ScatterCase {
  const char* name;
  tf::Shape x;
  tf::Tensor idx;
  tf::ScatterDims dims;
  tf::Shape updates;
};
std::vector<ScatterCase> scatter_cases() {
  return {
      // Rows, row 4 twice (index_add with a repeat).
      {"rows", {5, 3}, ints({4, 0, 4, 2}, {4, 1}), {{1}, {0}, {0}, 1}, {4, 3}},
      // Points, (0, 1) twice and one out of range on both axes.
      {"points", {4, 5}, ints({0, 1, 3, 4, 0, 1, 9, -3}, {4, 2}), {{}, {0, 1}, {0, 1}, 1}, {4}},
      // Overlapping 3x4 windows at rows 1, 2 and 9 (clamped to 3); updates' batch axis is in the
      // middle, so their row-major order differs from the batch order windows land in.
      {"overlapping_windows", {6, 4}, ints({1, 2, 9}, {3}), {{0, 2}, {}, {0}, 1}, {3, 3, 4}},
  };
}
}  // namespace

TEST(Gather, MatchesTheStableHloFormulaWithRepeatedAndOutOfRangeIndices) {
  for (const GatherCase& c : gather_cases()) {
    SCOPED_TRACE(c.name);
    const tf::Tensor x = counting(c.x);
    const tf::GatherDims dims = c.dims;
    const auto out = run([&](const std::vector<T>& v) { return std::vector<T>{tf::gather(v[0], v[1], dims)}; }, {x, c.idx});
    EXPECT_EQ(out[0].shape(), c.out);
    EXPECT_EQ(all(out[0]), ref_gather(x, c.idx, c.dims, c.out));
  }
  // The rows case is numpy.take: the two paths agree.
  const tf::Tensor x = counting({5, 3});
  const auto both = run([](const std::vector<T>& v) {
    return std::vector<T>{tf::gather(v[0], tf::constant(v[0], ints({4, 0, 4, 2}, {4, 1})), {{1}, {0}, {0}, 1, {1, 3}}),
                          tf::take(v[0], {4, 0, 4, 2}, 0)};
  }, {x});
  EXPECT_EQ(all(both[0]), all(both[1]));
}

TEST(Scatter, AddAndReplaceMatchTheStableHloFormula) {
  for (const ScatterCase& c : scatter_cases()) {
    SCOPED_TRACE(c.name);
    const tf::Tensor x = counting(c.x), u = counting(c.updates, -1);
    const tf::ScatterDims dims = c.dims;
    const auto out = run([&](const std::vector<T>& v) {
      return std::vector<T>{tf::scatter_add(v[0], v[1], v[2], dims), tf::scatter(v[0], v[1], v[2], dims)};
    }, {x, c.idx, u});
    EXPECT_EQ(all(out[0]), ref_scatter(x, c.idx, u, c.dims, true));
    EXPECT_EQ(all(out[1]), ref_scatter(x, c.idx, u, c.dims, false));
  }
}

// sum(w * scatter(x, idx, u)) with (0, 1) written twice: the second write wins, so d/du is w at the
// written positions except for the first write's, zero; d/dx is w with every written position zeroed.
TEST(Scatter, ReplacingDerivativeGoesToTheWinningUpdate) {
  const ScatterCase c = scatter_cases()[1];
  const tf::Tensor x = counting(c.x), u = counting(c.updates), w = counting(c.x, -1);
  auto f = [&](T xv, T uv) { return tf::sum(tf::scatter(xv, tf::constant(xv, c.idx), uv, c.dims) * tf::constant(xv, w)); };
  const tf::Tensor gx = tf::grad(f, 0)(x, u), gu = tf::grad(f, 1)(x, u);
  // Written positions: (0, 1) twice, (3, 4), and (9, -3) clamped to (3, 0).
  std::vector<tf::c128> expect_x = all(w);
  for (std::int64_t p : {1, 19, 15}) expect_x[static_cast<std::size_t>(p)] = 0;
  EXPECT_EQ(all(gx), expect_x);
  EXPECT_THAT(all(gu), ElementsAre(0.0, -20.0, -2.0, -16.0));
  // With addition every update reaches the result: d/du is w at each update's position.
  auto g = [&](T xv, T uv) { return tf::sum(tf::scatter_add(xv, tf::constant(xv, c.idx), uv, c.dims) * tf::constant(xv, w)); };
  EXPECT_THAT(all(tf::grad(g, 1)(x, u)), ElementsAre(-2.0, -20.0, -2.0, -16.0));
  EXPECT_EQ(all(tf::grad(g, 0)(x, u)), all(w));
}

TEST(GatherScatter, SecondDerivatives) {
  std::mt19937_64 rng(41);
  const std::vector<GatherCase> gathers = gather_cases();
  const std::vector<ScatterCase> scatters = scatter_cases();
  for (tf::DType dt : kDTypes) {
    SCOPED_TRACE(tf::dtype_name(dt));
    for (const GatherCase& c : gathers) {
      SCOPED_TRACE(c.name);
      const tf::Tensor x = random_matrix(rng, c.x, dt), y = random_matrix(rng, c.out, dt);
      const tf::Tensor idx = c.idx;
      const tf::GatherDims dims = c.dims;
      expect_grads([&](const std::vector<T>& v) { return std::vector<T>{tf::gather(v[0] * v[0], tf::constant(v[0], idx), dims) * v[1]}; },
                   {x, y});
    }
    for (const ScatterCase& c : scatters) {
      SCOPED_TRACE(c.name);
      const tf::Tensor x = random_matrix(rng, c.x, dt), u = random_matrix(rng, c.updates, dt);
      const tf::Tensor idx = c.idx;
      const tf::ScatterDims dims = c.dims;
      expect_grads([&](const std::vector<T>& v) {
        const T i = tf::constant(v[0], idx);
        return std::vector<T>{tf::scatter_add(v[0] * v[0], i, v[1] * v[1], dims) * v[0],
                              tf::scatter(v[0] * v[0], i, v[1] * v[1], dims) * v[0]};
      }, {x, u});
    }
  }
}

TEST(GatherScatter, PrintsItsDimensionNumbers) {
  const GatherCase c = gather_cases()[0];
  const tf::Tensor idx = c.idx;
  const tf::GatherDims dims = c.dims;
  EXPECT_THAT(tf::trace([&](T x) { return tf::gather(x, tf::constant(x, idx), dims); }, counting(c.x)).print(),
              HasSubstr("gather[offset_dims=[1], collapsed=[0], start_index_map=[0], index_vector_dim=1, slice_sizes=[1, 3]]"));
}

TEST(GatherScatter, BadDimensionNumbersNameTheProblem) {
  const tf::Tensor x = counting({5, 3}), idx = ints({4, 0}, {2, 1});
  auto gather_error = [&](tf::GatherDims d, const tf::Tensor& i) {
    try {
      tf::trace([&](T xv, T iv) { return tf::gather(xv, iv, d); }, x, i);
    } catch (const tf::ShapeError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_THAT(gather_error({{1}, {0}, {0}, 3, {1, 3}}, idx), HasSubstr("index_vector_dim expected in [0, 2]"));
  EXPECT_THAT(gather_error({{1}, {0}, {0, 1}, 1, {1, 3}}, idx), HasSubstr("the index map has 2 entries"));
  EXPECT_THAT(gather_error({{1}, {0}, {0}, 1, {1, 4}}, idx), HasSubstr("slice_sizes[1] expected in [0, 3]"));
  EXPECT_THAT(gather_error({{1}, {0}, {0}, 1, {2, 3}}, idx), HasSubstr("a collapsed axis expected slice size 1"));
  EXPECT_THAT(gather_error({{}, {0}, {0}, 1, {1, 3}}, idx), HasSubstr("offset_dims expected ascending result axes"));
  EXPECT_THAT(gather_error({{1}, {0}, {2}, 1, {1, 3}}, idx), HasSubstr("start_index_map expected distinct operand axes"));
  EXPECT_THAT(gather_error({{1}, {0}, {0}, 1, {1, 3}}, idx), HasSubstr("no error"));
  EXPECT_THROW(tf::trace([](T xv) { return tf::gather(xv, xv, {{1}, {0}, {0}, 1, {1, 3}}); }, x), tf::DTypeError);

  const tf::Tensor u = counting({2, 3});
  auto scatter_error = [&](tf::ScatterDims d, const tf::Tensor& up) {
    try {
      tf::trace([&](T xv, T iv, T uv) { return tf::scatter_add(xv, iv, uv, d); }, x, idx, up);
    } catch (const tf::ShapeError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_THAT(scatter_error({{1}, {0}, {0}, 1}, u), HasSubstr("no error"));
  EXPECT_THAT(scatter_error({{1}, {0}, {0}, 1}, counting({3, 3})), HasSubstr("updates axis 0 expected the length"));
  EXPECT_THAT(scatter_error({{1}, {0}, {0}, 1}, counting({2, 4})), HasSubstr("expected at most its length"));
  EXPECT_THAT(scatter_error({{0, 1}, {0}, {0}, 1}, u), HasSubstr("update_window_dims expected ascending axes"));
  EXPECT_THAT(scatter_error({{1}, {1, 0}, {0}, 1}, u), HasSubstr("inserted_window_dims expected ascending"));
  EXPECT_THAT(scatter_error({{1}, {0}, {0}, 1}, counting({2, 3, 1})), HasSubstr("updates expected rank 2"));
  EXPECT_THROW(tf::trace([&](T xv, T iv) { return tf::scatter(xv, iv, tf::astype(xv, tf::DType::F32), {{1}, {}, {0}, 1}); }, x, idx),
               tf::DTypeError);
  EXPECT_THROW(tf::trace([&](T xv, T iv) {
                 const T flags = tf::astype(xv, tf::DType::Bool);
                 return tf::scatter_add(flags, iv, flags, {{1}, {0}, {0}, 1});
               }, counting({1, 3}), ints({0}, {1, 1})),
               tf::DTypeError);
}
