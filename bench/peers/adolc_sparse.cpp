#include "adolc_sparse.hpp"

#ifdef TENFERRO_BENCH_ADOLC
#include <adolc/adolc.h>
#include <adolc/adolc_sparse.h>
// After ADOL-C's: ColPack's headers open namespace std.
#include <ColPack/ColPackHeaders.h>

#include <omp.h>

#include <cstdlib>
#include <stdexcept>

namespace bench::adolc {
namespace {

short next_tag() {
  static short tag = 1;
  return tag++;
}

/// Rows of ADOL-C's compressed pattern format (row i: its count, then its columns), as ADOL-C
/// allocates them.
struct Pattern {
  explicit Pattern(int rows) : crs(static_cast<std::size_t>(rows), nullptr) {}
  ~Pattern() {
    for (unsigned int* r : crs) std::free(r);
  }
  std::vector<unsigned int*> crs;
};

class Driver : public SparseDriver {
 public:
  Driver(bool hessian, short tag, int m, int n, std::vector<double> x)
      : hessian_(hessian), tag_(tag), m_(m), n_(n), x_(std::move(x)), pattern_(hessian ? n : m) {}
  ~Driver() override {
    if (seed_) myfree2(seed_);
    if (compressed_) myfree2(compressed_);
  }

  int run(bool first) override {
    if (first) analyze();
    if (hessian_) {
      hess_mat(tag_, n_, colors_, x_.data(), seed_, compressed_);  // [n][colors] = H S
    } else {
      std::vector<double> y(static_cast<std::size_t>(m_));
      fov_forward(tag_, m_, n_, colors_, x_.data(), seed_, y.data(), compressed_);  // [m][colors] = J S
    }
    for (std::size_t k = 0; k < source_row_.size(); ++k) values_[k] = compressed_[source_row_[k]][source_color_[k]];
    return static_cast<int>(values_.size());
  }
  const double* values() const override { return values_.data(); }

 private:
  void analyze() {
    // ColPack on one thread: on several its speculative coloring varies from run to run and
    // takes more colors (tenferro's coloring.cpp does the same).
    const int threads = omp_get_max_threads();
    omp_set_num_threads(1);
    std::vector<int> color;
    if (hessian_) {
      hess_pat(tag_, n_, x_.data(), pattern_.crs.data(), 0);
      ColPack::GraphColoringInterface g(SRC_MEM_ADOLC, pattern_.crs.data(), n_);
      g.Coloring("SMALLEST_LAST", "STAR");
      g.GetVertexColors(color);
    } else {
      int options[3] = {0, 0, 0};  // index domains, safe mode, automatic direction
      jac_pat(tag_, m_, n_, x_.data(), pattern_.crs.data(), options);
      ColPack::BipartiteGraphPartialColoringInterface g(SRC_MEM_ADOLC, pattern_.crs.data(), m_, n_);
      g.PartialDistanceTwoColoring("SMALLEST_LAST", "COLUMN_PARTIAL_DISTANCE_TWO");
      g.GetRightVertexColors(color);
    }
    omp_set_num_threads(threads);
    colors_ = 0;
    for (int c : color) colors_ = std::max(colors_, c + 1);
    seed_ = myalloc2(static_cast<std::size_t>(n_), static_cast<std::size_t>(colors_));
    for (int j = 0; j < n_; ++j) {
      for (int c = 0; c < colors_; ++c) seed_[j][c] = color[static_cast<std::size_t>(j)] == c ? 1.0 : 0.0;
    }
    const int rows = hessian_ ? n_ : m_;
    compressed_ = myalloc2(static_cast<std::size_t>(rows), static_cast<std::size_t>(colors_));
    // Where each nonzero (i, j) is read: J S [i][color j]; a star coloring's H S [i][color j] if
    // no other column of row i has j's color, else [j][color i].
    std::vector<int> seen(static_cast<std::size_t>(colors_), 0);
    for (int i = 0; i < rows; ++i) {
      const unsigned int* r = pattern_.crs[static_cast<std::size_t>(i)];
      for (unsigned int k = 1; k <= r[0]; ++k) ++seen[static_cast<std::size_t>(color[r[k]])];
      for (unsigned int k = 1; k <= r[0]; ++k) {
        const int j = static_cast<int>(r[k]);
        if (!hessian_ || seen[static_cast<std::size_t>(color[static_cast<std::size_t>(j)])] == 1) {
          source_row_.push_back(i);
          source_color_.push_back(color[static_cast<std::size_t>(j)]);
        } else {
          source_row_.push_back(j);
          source_color_.push_back(color[static_cast<std::size_t>(i)]);
        }
      }
      for (unsigned int k = 1; k <= r[0]; ++k) seen[static_cast<std::size_t>(color[r[k]])] = 0;
    }
    values_.resize(source_row_.size());
  }

  bool hessian_;
  short tag_;
  int m_, n_;
  std::vector<double> x_;
  Pattern pattern_;
  int colors_ = 0;
  double** seed_ = nullptr;
  double** compressed_ = nullptr;
  std::vector<int> source_row_, source_color_;
  std::vector<double> values_;
};

}  // namespace

bool available() { return true; }

std::unique_ptr<SparseDriver> bratu_jacobian(int n, double lambda, const std::vector<double>& u) {
  const short tag = next_tag();
  const int count = n * n;
  trace_on(tag);
  std::vector<adouble> v(static_cast<std::size_t>(count));
  for (int k = 0; k < count; ++k) v[static_cast<std::size_t>(k)] <<= u[static_cast<std::size_t>(k)];
  for (int i = 0; i < n; ++i) {
    for (int j = 0; j < n; ++j) {
      const adouble& c = v[static_cast<std::size_t>(i * n + j)];
      adouble r = 4.0 * c;
      if (i > 0) r -= v[static_cast<std::size_t>((i - 1) * n + j)];
      if (i + 1 < n) r -= v[static_cast<std::size_t>((i + 1) * n + j)];
      if (j > 0) r -= v[static_cast<std::size_t>(i * n + j - 1)];
      if (j + 1 < n) r -= v[static_cast<std::size_t>(i * n + j + 1)];
      r -= lambda * exp(c);
      double out = 0;
      r >>= out;
    }
  }
  trace_off();
  return std::make_unique<Driver>(false, tag, count, count, u);
}

std::unique_ptr<SparseDriver> banded_hessian(const std::vector<double>& x) {
  const short tag = next_tag();
  const int n = static_cast<int>(x.size());
  trace_on(tag);
  std::vector<adouble> v(x.size());
  for (int k = 0; k < n; ++k) v[static_cast<std::size_t>(k)] <<= x[static_cast<std::size_t>(k)];
  adouble f = 0.0;
  for (int i = 0; i + 2 < n; ++i) {
    const adouble t = v[static_cast<std::size_t>(i)] + v[static_cast<std::size_t>(i + 1)] * v[static_cast<std::size_t>(i + 2)] - 1.0;
    f += t * t;
  }
  for (int i = 0; i < n; ++i) f += exp(v[static_cast<std::size_t>(i)] / 10.0);
  double out = 0;
  f >>= out;
  trace_off();
  return std::make_unique<Driver>(true, tag, 1, n, x);
}

}  // namespace bench::adolc

#else

#include <stdexcept>

namespace bench::adolc {
bool available() { return false; }
std::unique_ptr<SparseDriver> bratu_jacobian(int, double, const std::vector<double>&) {
  throw std::logic_error("bench: built without ADOL-C");
}
std::unique_ptr<SparseDriver> banded_hessian(const std::vector<double>&) { throw std::logic_error("bench: built without ADOL-C"); }
}  // namespace bench::adolc

#endif
