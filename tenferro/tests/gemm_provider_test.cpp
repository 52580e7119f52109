// The GEMM providers (src/kernels/gemm_provider.hpp): with libxsmm and with OpenBLAS forced, every
// layout of a real product (A B, A^T B, A B^T, A^T B^T; libxsmm takes the first two, and the last
// two through a copy of B when A has at least 128 rows) equals a plain triple loop, small products
// and ones split over threads alike, and with libxsmm a product split over two threads has the
// same bits as on one.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "kernels/gemm_provider.hpp"
#include "tenferro/tenferro.hpp"

namespace {

namespace tf = tenferro;
using tf::detail::GemmProvider;

/// Restores the provider and the thread count when a test ends.
struct Restore {
  int threads = tf::num_threads();
  ~Restore() {
    tf::detail::set_gemm_provider(GemmProvider::Auto);
    tf::set_num_threads(threads);
  }
};

tf::Tensor wave(tf::Shape shape, double phase, tf::DType dtype) {
  std::vector<double> v(static_cast<std::size_t>(tf::numel(shape)));
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = std::sin(0.37 * static_cast<double>(i) + phase);
  if (dtype == tf::DType::F64) return tf::Tensor::from(v, std::move(shape));
  return tf::Tensor::from(std::vector<float>(v.begin(), v.end()), std::move(shape));
}

double at(const tf::Tensor& t, std::int64_t i) {
  return t.dtype() == tf::DType::F64 ? t.data<double>()[i] : static_cast<double>(t.data<float>()[i]);
}

bool bitwise_equal(const tf::Tensor& a, const tf::Tensor& b) {
  return a.shape() == b.shape() && a.dtype() == b.dtype() &&
         std::memcmp(a.raw_data(), b.raw_data(), static_cast<std::size_t>(a.numel()) * tf::dtype_size(a.dtype())) == 0;
}

struct Case {
  std::int64_t m, n, k;
};

// Small products (one block, where the policy picks libxsmm), and ones shared out over columns
// (96 x 512 x 300) and over rows (700 x 20 x 400).
const Case kCases[] = {{7, 5, 3}, {16, 16, 16}, {64, 64, 64}, {33, 17, 129}, {96, 512, 300}, {700, 20, 400}};

TEST(GemmProvider, EveryLayoutMatchesATripleLoopWithEitherProvider) {
  const Restore restore;
  tf::set_num_threads(2);
  for (const tf::DType dtype : {tf::DType::F64, tf::DType::F32}) {
    for (const Case c : kCases) {
      for (const bool ta : {false, true}) {
        for (const bool tb : {false, true}) {
          SCOPED_TRACE(std::string(tf::dtype_name(dtype)) + " " + std::to_string(c.m) + "x" + std::to_string(c.n) + "x" +
                       std::to_string(c.k) + (ta ? " A^T" : " A") + (tb ? " B^T" : " B"));
          // A stored [m, k] or [k, m]; B stored [k, n] or [n, k].
          const tf::Tensor a = wave(ta ? tf::Shape{c.k, c.m} : tf::Shape{c.m, c.k}, 0.1, dtype);
          const tf::Tensor b = wave(tb ? tf::Shape{c.n, c.k} : tf::Shape{c.k, c.n}, 0.7, dtype);
          const tf::DotDims dims{{}, {}, {ta ? 0 : 1}, {tb ? 1 : 0}};
          tf::Program p = tf::trace([&dims](tf::Traced x, tf::Traced y) { return tf::dot_general(x, y, dims); }, a, b);
          tf::detail::set_gemm_provider(GemmProvider::Libxsmm);
          const tf::Tensor by_libxsmm = p.run({a, b}).at(0);
          tf::detail::set_gemm_provider(GemmProvider::OpenBlas);
          const tf::Tensor by_openblas = p.run({a, b}).at(0);
          ASSERT_EQ(by_libxsmm.shape(), (tf::Shape{c.m, c.n}));
          const double tolerance = (dtype == tf::DType::F64 ? 1e-14 : 2e-6) * static_cast<double>(c.k);
          double worst_x = 0, worst_o = 0;
          for (std::int64_t i = 0; i < c.m; ++i) {
            for (std::int64_t j = 0; j < c.n; ++j) {
              double expected = 0;
              for (std::int64_t l = 0; l < c.k; ++l) {
                expected += at(a, ta ? l * c.m + i : i * c.k + l) * at(b, tb ? j * c.k + l : l * c.n + j);
              }
              worst_x = std::max(worst_x, std::abs(at(by_libxsmm, i * c.n + j) - expected));
              worst_o = std::max(worst_o, std::abs(at(by_openblas, i * c.n + j) - expected));
            }
          }
          EXPECT_LT(worst_x, tolerance);
          EXPECT_LT(worst_o, tolerance);
        }
      }
    }
  }
}

// libxsmm's kernels sum each element over k in the same order whatever the block's width, so a
// product split over two threads (blocks of columns or rows) has the bits of the unsplit one; and
// so does a product accumulated into a conv's output (gemm_rows with C += A B).
TEST(GemmProvider, LibxsmmProductsAreTheSameOnOneThreadAndOnTwo) {
  const Restore restore;
  tf::detail::set_gemm_provider(GemmProvider::Libxsmm);
  for (const tf::DType dtype : {tf::DType::F64, tf::DType::F32}) {
    for (const Case c : {Case{96, 512, 300}, Case{700, 20, 400}, Case{256, 256, 256}}) {
      for (const bool ta : {false, true}) {
        for (const bool tb : {false, true}) {  // a B^T is copied out for libxsmm (dot_general)
          SCOPED_TRACE(std::to_string(c.m) + "x" + std::to_string(c.n) + "x" + std::to_string(c.k) + (ta ? " A^T" : "") +
                       (tb ? " B^T" : ""));
          const tf::Tensor a = wave(ta ? tf::Shape{c.k, c.m} : tf::Shape{c.m, c.k}, 0.2, dtype);
          const tf::Tensor b = wave(tb ? tf::Shape{c.n, c.k} : tf::Shape{c.k, c.n}, 0.9, dtype);
          const tf::DotDims dims{{}, {}, {ta ? 0 : 1}, {tb ? 1 : 0}};
          tf::Program p = tf::trace([&dims](tf::Traced x, tf::Traced y) { return tf::dot_general(x, y, dims); }, a, b);
          tf::set_num_threads(1);
          const tf::Tensor one = p.run({a, b}).at(0);
          tf::set_num_threads(2);
          const tf::Tensor two = p.run({a, b}).at(0);
          EXPECT_TRUE(bitwise_equal(one, two));
        }
      }
    }
  }
  const tf::Tensor x = wave({2, 8, 40, 40}, 0.3, tf::DType::F64);
  const tf::Tensor w = wave({16, 8, 3, 3}, 0.5, tf::DType::F64);
  tf::Program conv = tf::trace([](tf::Traced u, tf::Traced v) { return tf::conv(u, v); }, x, w);
  tf::set_num_threads(1);
  const tf::Tensor one = conv.run({x, w}).at(0);
  tf::set_num_threads(2);
  const tf::Tensor two = conv.run({x, w}).at(0);
  EXPECT_TRUE(bitwise_equal(one, two));
  tf::detail::set_gemm_provider(GemmProvider::OpenBlas);
  const tf::Tensor reference = conv.run({x, w}).at(0);
  double worst = 0;
  for (std::int64_t i = 0; i < reference.numel(); ++i) worst = std::max(worst, std::abs(at(two, i) - at(reference, i)));
  EXPECT_LT(worst, 1e-12);
}

// The policy against the measurements it comes from (docs/tenferro.md, "GEMM providers"; time of
// libxsmm over OpenBLAS on one thread): libxsmm wherever it was clearly faster, OpenBLAS where it
// was clearly slower; within 3% (run-to-run noise here) either may take the shape.
TEST(GemmProvider, ThePolicyPicksTheMeasuredFasterProvider) {
  struct Measured {
    bool f64;
    std::int64_t m, n, k;
    double ratio_avx2_openblas;    // libxsmm / OpenBLAS on AVX2 kernels (OPENBLAS_CORETYPE=Haswell), AMD
    double ratio_avx512_openblas;  // libxsmm / OpenBLAS on its own AVX-512 kernels, AMD (Zen 4)
    double ratio_intel;            // libxsmm / OpenBLAS on its own AVX-512 kernels, Intel Xeon (A B
                                   // and A^T B, the less favourable to libxsmm; L2 2 MiB a core)
  };
  constexpr double kNotMeasured = std::numeric_limits<double>::quiet_NaN();
  constexpr std::int64_t kIntelL2 = 2 << 20;
  const Measured table[] = {
      {false, 256, 512, 784, 0.70, 1.29, 1.40}, {false, 256, 512, 512, 0.56, 1.02, 1.15},
      {true, 256, 512, 784, 0.60, 0.94, 2.70},  {true, 576, 576, 576, 0.72, 0.89, 2.30},
      {true, 256, 256, 256, 0.45, 0.76, 0.92},  {true, 1000, 1600, 64, 0.53, 0.91, 1.05},
      {true, 1000, 500, 20, 0.49, 0.75, 0.61},  {false, 32, 1024, 256, 0.58, 0.64, 0.79},
      {false, 64, 224, 576, 0.47, 0.80, 0.84},  {true, 64, 112, 576, 0.43, 0.65, 0.71},
      {false, 128, 128, 128, 0.47, 0.83, 0.83}, {true, 64, 64, 64, 0.41, 0.97, 1.02},
      {true, 32, 32, 32, 0.37, 0.96, 1.15},     {true, 16, 16, 16, 0.33, 0.75, 1.36},
      {true, 8, 8, 8, 0.33, 0.60, 2.11},        {false, 16, 16, 16, 0.38, 0.67, 1.50},
      {false, 8, 784, 144, 0.36, 1.00, 0.99},
      // Long contractions (einsum abc,bcd->ad at 64): the operands' size against L2, Intel only.
      {true, 64, 64, 4096, kNotMeasured, kNotMeasured, 2.26},  {true, 64, 64, 2048, kNotMeasured, kNotMeasured, 0.74},
      {true, 32, 32, 4096, kNotMeasured, kNotMeasured, 0.58},  {true, 128, 128, 1024, kNotMeasured, kNotMeasured, 1.00},
  };
  auto check = [](bool picked, double ratio) {
    if (!std::isnan(ratio) && std::abs(ratio - 1.0) > 0.03) {
      EXPECT_EQ(picked, ratio < 1.0) << "measured ratio " << ratio;
    }
  };
  for (const Measured& r : table) {
    SCOPED_TRACE(std::string(r.f64 ? "f64 " : "f32 ") + std::to_string(r.m) + "x" + std::to_string(r.n) + "x" +
                 std::to_string(r.k));
    using tf::detail::CpuVendor;
    // The AMD measurements were taken on a core of 1 MiB L2, which the AMD rules do not read.
    check(tf::detail::policy_picks_libxsmm(r.f64, r.m, r.n, r.k, false, true, CpuVendor::Amd, 1 << 20), r.ratio_avx2_openblas);
    check(tf::detail::policy_picks_libxsmm(r.f64, r.m, r.n, r.k, true, true, CpuVendor::Amd, 1 << 20), r.ratio_avx512_openblas);
    check(tf::detail::policy_picks_libxsmm(r.f64, r.m, r.n, r.k, true, true, CpuVendor::Other, kIntelL2), r.ratio_intel);
  }
  // On the Xeon, products up to 2^18 stay with OpenBLAS although libxsmm's kernel alone was within
  // 0.88-1.02x there: a program of such products (the einsum family's 6 x 6 lattice: 2^16 and
  // 2^18) took 1.10x as long with them in libxsmm.
  for (const auto& [m, n, k] : {std::array<std::int64_t, 3>{16, 256, 16}, {64, 64, 64}}) {
    EXPECT_FALSE(tf::detail::policy_picks_libxsmm(true, m, n, k, true, true, tf::detail::CpuVendor::Other, kIntelL2));
  }
  // Without AVX-512 on either side (not measured here): libxsmm for the small products only.
  for (auto vendor : {tf::detail::CpuVendor::Amd, tf::detail::CpuVendor::Other}) {
    EXPECT_TRUE(tf::detail::policy_picks_libxsmm(true, 64, 64, 64, false, false, vendor, kIntelL2));
    EXPECT_FALSE(tf::detail::policy_picks_libxsmm(true, 65, 64, 64, false, false, vendor, kIntelL2));
  }
}

}  // namespace
