// Convolution and pooling (tenferro/conv.hpp): conv against a direct loop over the definition
// (1-D, 2-D, 3-D; strides, padding, input and kernel dilation, groups; f32, f64, c64, c128),
// derivatives to order 2 (check_grads: finite differences and the adjoint identity, both modes)
// for each feature in f64 and c128, the pools against loops and max_pool's tie rule, and errors.
#include <gmock/gmock.h>

#include <limits>

#include "kernels/conv_kernel.hpp"
#include "linalg_test_util.hpp"
#include "tenferro/conv.hpp"
#include "tenferro/ops/conv_attrs.hpp"
#include "tenferro/ops/record.hpp"

namespace tf = tenferro;
using namespace tenferro::test;

namespace {

/// out[n, o, y] = sum_{c in group(o), k} x~[n, c, y s + k rd] w[o, c, k] with x~ the input dilated
/// and padded: written from the definition, one output element at a time.
std::vector<tf::c128> direct_conv(const tf::Tensor& x, const tf::Tensor& w, const tf::ConvAttrs& a, const tf::Shape& out) {
  const std::size_t s = x.shape().size() - 2;
  const std::int64_t c = x.shape()[1], o = w.shape()[0], cg = w.shape()[1], og = o / a.groups;
  std::vector<tf::c128> r(static_cast<std::size_t>(tf::numel(out)));
  auto x_at = [&](std::int64_t n, std::int64_t ch, const std::vector<std::int64_t>& pos) -> tf::c128 {
    std::int64_t flat = n * c + ch;
    for (std::size_t d = 0; d < s; ++d) {
      const std::int64_t p = pos[d] - a.pad_lo[d];
      if (p < 0 || p % a.lhs_dilation[d] != 0 || p / a.lhs_dilation[d] >= x.shape()[d + 2]) return 0.0;
      flat = flat * x.shape()[d + 2] + p / a.lhs_dilation[d];
    }
    return at(x, flat);
  };
  std::int64_t window = 1;
  for (std::size_t d = 0; d < s; ++d) window *= w.shape()[d + 2];
  for (std::int64_t e = 0; e < static_cast<std::int64_t>(r.size()); ++e) {
    std::vector<std::int64_t> idx(out.size());
    std::int64_t rest = e;
    for (std::size_t d = out.size(); d-- > 0;) {
      idx[d] = rest % out[d];
      rest /= out[d];
    }
    const std::int64_t n = idx[0], oc = idx[1], grp = oc / og;
    tf::c128 sum = 0;
    for (std::int64_t ci = 0; ci < cg; ++ci) {
      for (std::int64_t kk = 0; kk < window; ++kk) {
        std::vector<std::int64_t> k(s), pos(s);
        std::int64_t kr = kk;
        for (std::size_t d = s; d-- > 0;) {
          k[d] = kr % w.shape()[d + 2];
          kr /= w.shape()[d + 2];
        }
        std::int64_t wflat = oc * cg + ci;
        for (std::size_t d = 0; d < s; ++d) {
          pos[d] = idx[d + 2] * a.strides[d] + k[d] * a.rhs_dilation[d];
          wflat = wflat * w.shape()[d + 2] + k[d];
        }
        sum += x_at(n, grp * cg + ci, pos) * at(w, wflat);
      }
    }
    r[static_cast<std::size_t>(e)] = sum;
  }
  return r;
}

struct Config {
  const char* name;
  tf::Shape x, w;
  tf::ConvAttrs attrs;
};

std::vector<Config> configs() {
  return {
      {"1-D plain", {2, 3, 7}, {4, 3, 3}, {{1}, {0}, {0}, {1}, {1}, 1}},
      {"1-D stride 2, padding 1/2, kernel dilation 2", {2, 2, 9}, {3, 2, 3}, {{2}, {1}, {2}, {1}, {2}, 1}},
      {"1-D input dilation 2 (transposed conv), negative padding", {1, 2, 5}, {2, 2, 2}, {{1}, {-1}, {1}, {2}, {1}, 1}},
      {"2-D groups 2, stride (2, 1)", {2, 4, 5, 6}, {6, 2, 3, 2}, {{2, 1}, {1, 0}, {1, 1}, {1, 1}, {1, 2}, 2}},
      {"2-D depthwise", {1, 3, 4, 4}, {3, 1, 2, 2}, {{1, 1}, {0, 0}, {0, 0}, {1, 1}, {1, 1}, 3}},
      {"3-D", {1, 2, 4, 3, 5}, {2, 2, 2, 2, 3}, {{1, 2, 1}, {0, 1, 1}, {1, 0, 1}, {1, 1, 2}, {1, 1, 1}, 1}},
      // Windows larger than the output (the kernel gradient's shape: summed over input features
      // with the windows of all batch elements unrolled together).
      {"2-D long window", {3, 2, 7, 7}, {4, 2, 6, 6}, {{1, 1}, {0, 0}, {0, 0}, {1, 1}, {1, 1}, 1}},
      {"2-D long window, groups 2, kernel dilation 3", {2, 4, 8, 8}, {4, 2, 3, 3}, {{1, 1}, {0, 0}, {0, 0}, {1, 1}, {3, 3}, 2}},
      // A window longer than the output along the last axis only (unrolled by output position).
      {"2-D window long on the last axis", {2, 2, 8, 7}, {3, 2, 1, 6}, {{1, 1}, {0, 0}, {0, 0}, {1, 1}, {1, 1}, 1}},
      {"1-D long window, stride 2, padding 1", {2, 3, 20}, {2, 3, 19}, {{2}, {1}, {1}, {1}, {1}, 1}},
      {"1-D long window, input dilation 2", {2, 2, 6}, {3, 2, 11}, {{1}, {0}, {0}, {2}, {1}, 1}},
  };
}

tf::Tensor conv_of(const tf::Tensor& x, const tf::Tensor& w, const tf::ConvAttrs& a) {
  return run([&](const std::vector<T>& v) { return std::vector<T>{tf::apply(tf::ops::conv(v[0].type(), v[1].type(), a), {v[0], v[1]})}; },
             {x, w}).at(0);
}

/// t with axes 0 and 1 swapped (a physical transpose).
tf::Tensor swapped01(const tf::Tensor& t) {
  tf::ops::Axes perm(t.shape().size());
  for (std::size_t i = 0; i < perm.size(); ++i) perm[i] = static_cast<std::int64_t>(i);
  std::swap(perm[0], perm[1]);
  return run([&](const std::vector<T>& v) { return std::vector<T>{tf::apply(tf::ops::transpose(v[0].type(), perm), {v[0]})}; },
             {t}).at(0);
}

/// attrs with the layout numbered `layout` (bit 0: input [C, N, ..], bit 1: kernel [C / G, O, ..],
/// bit 2: result [O, N, ..]).
tf::ConvAttrs with_layout(tf::ConvAttrs a, int layout) {
  a.lhs_batch_axis = layout & 1;
  a.rhs_out_axis = (layout >> 1) & 1;
  a.out_batch_axis = (layout >> 2) & 1;
  return a;
}

}  // namespace

TEST(Conv, MatchesTheDefinitionInEveryDtype) {
  std::mt19937_64 rng(51);
  for (const Config& cfg : configs()) {
    for (tf::DType dt : {tf::DType::F64, tf::DType::C128, tf::DType::F32, tf::DType::C64}) {
      SCOPED_TRACE(std::string(cfg.name) + " " + tf::dtype_name(dt));
      const tf::Tensor x = random_matrix(rng, cfg.x, dt), w = random_matrix(rng, cfg.w, dt);
      const tf::Tensor r = conv_of(x, w, cfg.attrs);
      const std::vector<tf::c128> want = direct_conv(x, w, cfg.attrs, r.shape());
      ASSERT_EQ(static_cast<std::size_t>(r.numel()), want.size());
      const bool single = dt == tf::DType::F32 || dt == tf::DType::C64;
      for (std::size_t i = 0; i < want.size(); ++i) {
        EXPECT_NEAR(std::abs(at(r, static_cast<std::int64_t>(i)) - want[i]), 0.0, single ? 1e-5 : 1e-13) << i;
      }
    }
  }
}

// The JVP and both transposes are convolutions with derived windows: every configuration to order
// 2 (forward over forward, reverse over forward, ...), one operand at a time (bilinear: eps = 1).
TEST(Conv, SecondDerivativesInRealAndComplex) {
  std::mt19937_64 rng(53);
  for (const Config& cfg : configs()) {
    for (tf::DType dt : {tf::DType::F64, tf::DType::C128}) {
      SCOPED_TRACE(std::string(cfg.name) + " " + tf::dtype_name(dt));
      const tf::Tensor x = random_matrix(rng, cfg.x, dt), w = random_matrix(rng, cfg.w, dt);
      const tf::ConvAttrs a = cfg.attrs;
      expect_grads([a](const std::vector<T>& v) {
        const T y = tf::apply(tf::ops::conv(v[0].type(), v[1].type(), a), {v[0] * v[0], v[1]});
        return std::vector<T>{y * y};
      }, {x, w});
    }
  }
}

namespace {

/// Every configuration in f64 and c64, in layouts [first_layout, 8): the convolution of the operands
/// transposed into the layout, its result transposed back, matches the definition.
void expect_layouts_match_the_definition(std::mt19937_64& rng, int first_layout) {
  for (const Config& cfg : configs()) {
    for (tf::DType dt : {tf::DType::F64, tf::DType::C64}) {
      const tf::Tensor x = random_matrix(rng, cfg.x, dt), w = random_matrix(rng, cfg.w, dt);
      const tf::Tensor want = conv_of(x, w, cfg.attrs);
      const std::vector<tf::c128> direct = direct_conv(x, w, cfg.attrs, want.shape());
      for (int layout = first_layout; layout < 8; ++layout) {
        SCOPED_TRACE(std::string(cfg.name) + " " + tf::dtype_name(dt) + " layout " + std::to_string(layout));
        const tf::ConvAttrs a = with_layout(cfg.attrs, layout);
        const tf::Tensor r = conv_of(a.lhs_batch_axis ? swapped01(x) : x, a.rhs_out_axis ? swapped01(w) : w, a);
        const tf::Tensor got = a.out_batch_axis ? swapped01(r) : r;
        ASSERT_EQ(got.shape(), want.shape());
        for (std::size_t i = 0; i < direct.size(); ++i) {
          EXPECT_NEAR(std::abs(at(got, static_cast<std::int64_t>(i)) - direct[i]), 0.0, dt == tf::DType::C64 ? 1e-5 : 1e-13)
              << i;
        }
      }
    }
  }
}

}  // namespace

// Every layout of the batch / feature axes computes the default layout's convolution of the
// operands transposed accordingly.
TEST(Conv, EveryLayoutIsTheDefaultOneTransposed) {
  std::mt19937_64 rng(59);
  expect_layouts_match_the_definition(rng, 1);
  // Axes other than 0 and 1 are refused by name.
  const tf::TensorType x{tf::DType::F64, {1, 2, 5}}, w{tf::DType::F64, {3, 2, 2}};
  tf::ConvAttrs bad = configs()[0].attrs;
  bad.rhs_out_axis = 2;
  EXPECT_THROW(tf::ops::conv(x, w, bad), tf::ShapeError);
}

// The transposes read and write the layouts as attributes: derivatives to order 2 in each layout.
TEST(Conv, SecondDerivativesInEveryLayout) {
  std::mt19937_64 rng(61);
  for (const Config& cfg : configs()) {
    for (int layout : {1, 2, 4, 7}) {
      const tf::DType dt = layout == 7 ? tf::DType::C128 : tf::DType::F64;
      SCOPED_TRACE(std::string(cfg.name) + " layout " + std::to_string(layout));
      const tf::ConvAttrs a = with_layout(cfg.attrs, layout);
      const tf::Tensor x = random_matrix(rng, cfg.x, dt), w = random_matrix(rng, cfg.w, dt);
      expect_grads([a](const std::vector<T>& v) {
        const T y = tf::apply(tf::ops::conv(v[0].type(), v[1].type(), a), {v[0] * v[0], v[1]});
        return std::vector<T>{y * y};
      }, {a.lhs_batch_axis ? swapped01(x) : x, a.rhs_out_axis ? swapped01(w) : w});
    }
  }
}

// The kernel unrolls windows in cache-sized blocks, which the small shapes above fit in one of;
// with blocks of one row every configuration runs the blocked loops (the sum over features of
// windows larger than the output, im2col by window offset), in every layout, against the
// definition and to order 2.
TEST(Conv, InBlocksOfOneRowInEveryLayout) {
  tf::detail::ConvTuning& tuning = tf::detail::conv_tuning();
  const tf::detail::ConvTuning saved = tuning;
  tuning = {.block_bytes = 1};
  std::mt19937_64 rng(67);
  expect_layouts_match_the_definition(rng, 0);
  for (const Config& cfg : configs()) {
    SCOPED_TRACE(cfg.name);
    const tf::ConvAttrs a = with_layout(cfg.attrs, 7);
    expect_grads([a](const std::vector<T>& v) {
      const T y = tf::apply(tf::ops::conv(v[0].type(), v[1].type(), a), {v[0] * v[0], v[1]});
      return std::vector<T>{y * y};
    }, {swapped01(random_matrix(rng, cfg.x, tf::DType::C128)), swapped01(random_matrix(rng, cfg.w, tf::DType::C128))});
  }
  tuning = saved;
}

TEST(Conv, PublicOptionsAndPools) {
  // conv with torch's options: stride, symmetric padding, dilation, groups.
  std::mt19937_64 rng(57);
  const tf::Tensor x = random_matrix(rng, {2, 4, 6, 5}, tf::DType::F64), w = random_matrix(rng, {2, 2, 3, 3}, tf::DType::F64);
  auto r = run([](const std::vector<T>& v) {
    return std::vector<T>{tf::conv(v[0], v[1], {.stride = {2}, .padding = {1, 2}, .dilation = {1, 2}, .groups = 2})};
  }, {x, w}).at(0);
  const tf::ConvAttrs a{{2, 2}, {1, 2}, {1, 2}, {1, 1}, {1, 2}, 2};
  EXPECT_EQ(r.shape(), (tf::Shape{2, 2, 3, 3}));
  const auto want = direct_conv(x, w, a, r.shape());
  for (std::size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(at(r, static_cast<std::int64_t>(i)).real(), want[i].real(), 1e-13);

  // Pools against loops: a [1, 1, 4, 5] ramp, window 2, stride 2, padding (0, 1).
  std::vector<double> v(20);
  for (int i = 0; i < 20; ++i) v[static_cast<std::size_t>(i)] = i;
  const tf::Tensor ramp = tf::Tensor::from(v, {1, 1, 4, 5});
  auto pools = run([](const std::vector<T>& t) {
    return std::vector<T>{tf::max_pool(t[0], {2}, {}, {0, 1}), tf::avg_pool(t[0], {2}, {}, {0, 1})};
  }, {ramp});
  EXPECT_EQ(pools[0].shape(), (tf::Shape{1, 1, 2, 3}));
  // Padded columns: -1 | 0 1 2 3 4 | 5: windows of columns {-1, 0}, {1, 2}, {3, 4}.
  EXPECT_THAT(std::vector<double>(pools[0].data<double>(), pools[0].data<double>() + 6),
              ::testing::ElementsAre(5, 7, 9, 15, 17, 19));
  EXPECT_THAT(std::vector<double>(pools[1].data<double>(), pools[1].data<double>() + 6),
              ::testing::ElementsAre((0 + 5) / 4.0, (1 + 2 + 6 + 7) / 4.0, (3 + 4 + 8 + 9) / 4.0, (10 + 15) / 4.0,
                                     (11 + 12 + 16 + 17) / 4.0, (13 + 14 + 18 + 19) / 4.0));
  // max_pool's derivative goes to the window's maximum; two equal maxima share it.
  const tf::Tensor tie = tf::Tensor::from(std::vector<double>{1, 3, 3, 2}, {1, 1, 4});
  const tf::Tensor g = tf::grad([](T t) { return tf::sum(tf::max_pool(t, {4})); })(tie);
  EXPECT_THAT(std::vector<double>(g.data<double>(), g.data<double>() + 4), ::testing::ElementsAre(0, 0.5, 0.5, 0));
  // Overlapping and gapped windows (strided slices), and tiling ones (a reshape; 5 rows cut to 4).
  expect_grads([](const std::vector<T>& t) {
    return std::vector<T>{tf::max_pool(t[0] * t[0], {2, 3}, {1, 2}, {1, 1}), tf::avg_pool(t[0] * t[0], {3}, {2}, {1}),
                          tf::max_pool(t[0] * t[0], {2}), tf::avg_pool(t[0] * t[0], {2, 3})};
  }, {random_matrix(rng, {2, 2, 5, 6}, tf::DType::F64)});
}

TEST(Conv, BadInputGivesTypedErrors) {
  const tf::Tensor x = tf::Tensor::zeros({1, 4, 5, 5}), w = tf::Tensor::zeros({2, 4, 3, 3});
  auto trace = [&](std::function<T(T, T)> f) { return tf::trace([&](T a, T b) { return f(a, b); }, x, w); };
  EXPECT_THROW(trace([](T a, T b) { return tf::conv(tf::astype(a, tf::DType::I64), b); }), tf::DTypeError);
  EXPECT_THROW(trace([](T a, T b) { return tf::conv(a, tf::astype(b, tf::DType::F32)); }), tf::DTypeError);
  EXPECT_THROW(trace([](T a, T b) { return tf::conv(tf::reshape(a, {4, 25}), b); }), tf::ShapeError);
  EXPECT_THROW(trace([](T a, T b) { return tf::conv(a, b, {.groups = 3}); }), tf::ShapeError);
  EXPECT_THROW(trace([](T a, T b) { return tf::conv(a, b, {.groups = 2}); }), tf::ShapeError);  // w's C / G
  EXPECT_THROW(trace([](T a, T b) { return tf::conv(a, b, {.stride = {0}}); }), tf::ShapeError);
  EXPECT_THROW(trace([](T a, T b) { return tf::conv(a, b, {.dilation = {1, 2, 3}}); }), tf::ShapeError);
  EXPECT_THROW(trace([](T a, T b) { return tf::conv(a, b, {.padding = {-1}}); }), tf::ShapeError);
  EXPECT_THROW(trace([](T a, T) { return tf::max_pool(a, {0}); }), tf::ValueError);
  EXPECT_THROW(trace([](T a, T) { return tf::max_pool(a, {6}); }), tf::ShapeError);
  EXPECT_THROW(trace([](T a, T) { return tf::max_pool(tf::astype(a, tf::DType::C128), {2}); }), tf::DTypeError);
  EXPECT_THROW(trace([](T a, T) { return tf::avg_pool(a, {2}, {}, {2}); }), tf::ValueError);
}
