// sparse_jacobian and sparse_hessian: detection, coloring, the product program and recovery.
#include <algorithm>
#include <array>
#include <cstring>
#include <mutex>

#include "sparse/signature.hpp"
#include "sparse/coloring.hpp"
#include "sparse/detect.hpp"
#include "tenferro/program.hpp"
#include "tenferro/sparse.hpp"

namespace tenferro {

// ---- the pattern and the matrix ----------------------------------------------------------------

std::vector<std::int64_t> SparsityPattern::row_indices() const {
  std::vector<std::int64_t> r(col_indices.size());
  for (std::int64_t i = 0; i < rows; ++i) {
    for (auto k = row_offsets[static_cast<std::size_t>(i)]; k < row_offsets[static_cast<std::size_t>(i) + 1]; ++k) {
      r[static_cast<std::size_t>(k)] = i;
    }
  }
  return r;
}

bool SparsityPattern::contains(std::int64_t row, std::int64_t col) const {
  if (row < 0 || row >= rows) return false;
  const auto b = col_indices.begin() + row_offsets[static_cast<std::size_t>(row)];
  const auto e = col_indices.begin() + row_offsets[static_cast<std::size_t>(row) + 1];
  return std::binary_search(b, e, col);
}

std::string SparsityPattern::print() const {
  std::string s;
  for (std::int64_t i = 0; i < rows; ++i) {
    std::string line(static_cast<std::size_t>(cols), '.');
    for (auto k = row_offsets[static_cast<std::size_t>(i)]; k < row_offsets[static_cast<std::size_t>(i) + 1]; ++k) {
      line[static_cast<std::size_t>(col_indices[static_cast<std::size_t>(k)])] = 'x';
    }
    s += line + '\n';
  }
  return s;
}

Tensor SparseMatrix::to_dense() const {
  const SparsityPattern& p = *pattern;
  Tensor d(TensorType{values.dtype(), {p.rows, p.cols}});
  const auto rows = p.row_indices();
  const auto n = static_cast<std::size_t>(p.nnz());
  auto fill = [&](auto* out, const auto* v) {
    for (std::size_t k = 0; k < n; ++k) out[rows[k] * p.cols + p.col_indices[k]] = v[k];
  };
  if (values.dtype() == DType::F64) {
    fill(d.data<double>(), values.data<double>());
  } else {
    fill(d.data<float>(), values.data<float>());
  }
  return d;
}

namespace detail {
namespace {

constexpr std::array<const char*, 5> kOrderings = {"SMALLEST_LAST", "NATURAL", "LARGEST_FIRST", "INCIDENCE_DEGREE", "RANDOM"};

void check_options(const char* what, const Tensors& args, const SparseOptions& options) {
  check_wrt(what, args, options.argnum);
  if (is_complex(args[options.argnum].dtype())) {
    throw DTypeError(std::string(what) + ": argument " + std::to_string(options.argnum) + " is " +
                     args[options.argnum].type().to_string() + "; sparse derivatives take real (f32 or f64) arguments");
  }
  if (std::find(kOrderings.begin(), kOrderings.end(), options.ordering) == kOrderings.end()) {
    std::string names;
    for (const char* o : kOrderings) names += std::string(names.empty() ? "" : ", ") + o;
    throw Error(std::string(what) + ": ordering \"" + options.ordering + "\"; expected one of " + names);
  }
  if (options.max_nonzeros < 0) throw Error(std::string(what) + ": max_nonzeros must be >= 0");
}

/// The graph of f's gradient with respect to argument `argnum` (inputs: f's arguments).
GraphPtr gradient_graph(const TracedFunction& f, const Tensors& args, std::size_t argnum) {
  const TransformedFunction grad(f, {argnum});
  return trace_function([&grad](const std::vector<Traced>& xs) { return std::vector<Traced>{grad.value_and_grads_traced(xs).second.at(0)}; },
                        types_of(args));
}

/// p and its transpose together.
SparsityPattern symmetrized(const SparsityPattern& p) {
  std::vector<std::vector<std::int64_t>> rows(static_cast<std::size_t>(p.rows));
  for (std::int64_t i = 0; i < p.rows; ++i) {
    for (auto k = p.row_offsets[static_cast<std::size_t>(i)]; k < p.row_offsets[static_cast<std::size_t>(i) + 1]; ++k) {
      const std::int64_t j = p.col_indices[static_cast<std::size_t>(k)];
      rows[static_cast<std::size_t>(i)].push_back(j);
      rows[static_cast<std::size_t>(j)].push_back(i);
    }
  }
  SparsityPattern s;
  s.rows = p.rows;
  s.cols = p.cols;
  s.row_offsets.push_back(0);
  for (auto& r : rows) {
    std::sort(r.begin(), r.end());
    r.erase(std::unique(r.begin(), r.end()), r.end());
    s.col_indices.insert(s.col_indices.end(), r.begin(), r.end());
    s.row_offsets.push_back(static_cast<std::int64_t>(s.col_indices.size()));
  }
  return s;
}

std::shared_ptr<const SparsityPattern> hessian_pattern(const TracedFunction& f, const Tensors& args, const SparseOptions& options) {
  const GraphPtr g = gradient_graph(f, args, options.argnum);
  return std::make_shared<SparsityPattern>(symmetrized(sparse::jacobian_pattern(*g, options.argnum, args, options.max_nonzeros)));
}

/// The products' directions, [colors, vector...] in the vector's dtype (f32 or f64): direction c
/// is the indicator of the vector elements of color c.
Tensor seed_matrix(const sparse::Coloring& c, const TensorType& vector) {
  Shape shape = vector.shape;
  shape.insert(shape.begin(), c.colors);
  Tensor s(TensorType{vector.dtype, std::move(shape)});
  const auto n = static_cast<std::int64_t>(c.color.size());
  auto fill = [&](auto* p) {
    for (std::int64_t j = 0; j < n; ++j) p[c.color[static_cast<std::size_t>(j)] * n + j] = 1;
  };
  if (vector.dtype == DType::F64) {
    fill(s.data<double>());
  } else {
    fill(s.data<float>());
  }
  return s;
}

/// For each nonzero of a symmetric pattern under a star coloring: where its value lies in the
/// products B [colors, n] (B[c, i] = sum of H[i, j] over the columns j of color c). H[i, j] is
/// B[color(j), i] when no other column of row i has j's color, else (star colorings guarantee
/// one of the two) B[color(i), j].
std::vector<std::int64_t> star_sources(const SparsityPattern& p, const sparse::Coloring& c) {
  const std::int64_t n = p.cols;
  std::vector<std::int32_t> seen(static_cast<std::size_t>(c.colors), 0);
  // unique[k]: column k's color appears once in its row.
  std::vector<bool> unique(static_cast<std::size_t>(p.nnz()));
  for (std::int64_t i = 0; i < p.rows; ++i) {
    const auto b = static_cast<std::size_t>(p.row_offsets[static_cast<std::size_t>(i)]);
    const auto e = static_cast<std::size_t>(p.row_offsets[static_cast<std::size_t>(i) + 1]);
    for (auto k = b; k < e; ++k) ++seen[static_cast<std::size_t>(c.color[static_cast<std::size_t>(p.col_indices[k])])];
    for (auto k = b; k < e; ++k) unique[k] = seen[static_cast<std::size_t>(c.color[static_cast<std::size_t>(p.col_indices[k])])] == 1;
    for (auto k = b; k < e; ++k) seen[static_cast<std::size_t>(c.color[static_cast<std::size_t>(p.col_indices[k])])] = 0;
  }
  std::vector<std::int64_t> src(static_cast<std::size_t>(p.nnz()));
  for (std::int64_t i = 0; i < p.rows; ++i) {
    for (auto k = p.row_offsets[static_cast<std::size_t>(i)]; k < p.row_offsets[static_cast<std::size_t>(i) + 1]; ++k) {
      const std::int64_t j = p.col_indices[static_cast<std::size_t>(k)];
      if (unique[static_cast<std::size_t>(k)]) {
        src[static_cast<std::size_t>(k)] = c.color[static_cast<std::size_t>(j)] * n + i;
        continue;
      }
      // The mirror entry (j, i): its column i's color must be alone in row j.
      const auto b = p.col_indices.begin() + p.row_offsets[static_cast<std::size_t>(j)];
      const auto e = p.col_indices.begin() + p.row_offsets[static_cast<std::size_t>(j) + 1];
      const auto at = std::lower_bound(b, e, i);
      if (at == e || *at != i || !unique[static_cast<std::size_t>(at - p.col_indices.begin())]) {
        throw Error("sparse_hessian: the coloring does not recover entry (" + std::to_string(i) + ", " + std::to_string(j) +
                    "); it is not a star coloring");
      }
      src[static_cast<std::size_t>(k)] = c.color[static_cast<std::size_t>(i)] * n + j;
    }
  }
  return src;
}

/// The most nonzeros in one column: a lower bound on the colors of any row coloring.
std::int64_t densest_column(const SparsityPattern& p) {
  std::vector<std::int64_t> count(static_cast<std::size_t>(p.cols), 0);
  for (const std::int64_t j : p.col_indices) ++count[static_cast<std::size_t>(j)];
  return count.empty() ? 0 : *std::max_element(count.begin(), count.end());
}

template <class T>
void gather_values(const Tensor& products, const std::vector<std::int64_t>& src, Tensor& values) {
  const T* b = products.data<T>();
  T* v = values.data<T>();
  for (std::size_t k = 0; k < src.size(); ++k) v[k] = b[src[k]];
}

}  // namespace

std::shared_ptr<const SparsityPattern> jacobian_sparsity_of(const TracedFunction& f, const Tensors& args, const SparseOptions& options) {
  check_options("jacobian_sparsity", args, options);
  const GraphPtr g = trace_function(f, types_of(args));
  return std::make_shared<SparsityPattern>(sparse::jacobian_pattern(*g, options.argnum, args, options.max_nonzeros));
}

std::shared_ptr<const SparsityPattern> hessian_sparsity_of(const TracedFunction& f, const Tensors& args, const SparseOptions& options) {
  check_options("hessian_sparsity", args, options);
  return hessian_pattern(f, args, options);
}

/// One analysis: the signature it holds for, the coloring, the seeds and the product program.
struct SparseEntry {
  sparse::ArgumentSignature signature;  // the types and integer arguments it was analyzed for
  SparseAnalysis analysis;
  Tensor seeds;
  std::shared_ptr<Program> program;
  std::vector<std::int64_t> sources;  // per nonzero: its flat position in the products
};

class SparseDerivativeState {
 public:
  SparseDerivativeState(TracedFunction function, SparseOptions opts, bool is_hessian)
      : f(std::move(function)), options(std::move(opts)), hessian(is_hessian), impl(f, {options.argnum}) {}

  const char* name() const { return hessian ? "sparse_hessian" : "sparse_jacobian"; }

  std::shared_ptr<const SparseEntry> entry(const Tensors& args) {
    if (auto e = find(args)) return e;
    return insert(analyze(args, types_of(args)));
  }

  /// Takes `analysis` (of a Jacobian, by columns or rows, of this function at args' signature) as
  /// the analysis for args' signature, unless one is already there.
  void adopt(const Tensors& args, const SparseAnalysis& analysis, const TensorType& output) {
    if (find(args)) return;
    check_options(name(), args, options);
    auto e = std::make_shared<SparseEntry>();
    e->signature = sparse::ArgumentSignature::of(args);
    e->analysis = analysis;
    const auto types = types_of(args);
    const bool rows = analysis.mode == SparseMode::Rows;
    complete(*e, types, rows, rows ? output : types[options.argnum]);
    insert(std::move(e));
  }

  TracedFunction f;
  SparseOptions options;
  bool hessian;
  TransformedFunction impl;

 private:
  std::shared_ptr<const SparseEntry> find(const Tensors& args) {
    std::lock_guard lock(mutex);
    for (const auto& e : entries) {
      if (e->signature.matches(args)) return e;
    }
    return nullptr;
  }
  std::shared_ptr<const SparseEntry> insert(std::shared_ptr<const SparseEntry> e) {
    std::lock_guard lock(mutex);
    entries.push_back(e);
    return e;
  }

  std::shared_ptr<SparseEntry> analyze(const Tensors& args, const std::vector<TensorType>& types) const {
    check_options(name(), args, options);
    auto e = std::make_shared<SparseEntry>();
    e->signature = sparse::ArgumentSignature::of(args);
    const std::size_t argnum = options.argnum;
    TensorType along = types[argnum];  // the type of one direction
    bool rows = false;
    if (hessian) {
      e->analysis.pattern = hessian_pattern(f, args, options);
      sparse::Coloring coloring = sparse::star_coloring(*e->analysis.pattern, options.ordering);
      e->analysis.colors = coloring.colors;
      e->analysis.color = std::move(coloring.color);
      e->sources = star_sources(*e->analysis.pattern, sparse::Coloring{e->analysis.colors, e->analysis.color});
    } else {
      const GraphPtr g = trace_function(f, types);
      auto p = std::make_shared<SparsityPattern>(sparse::jacobian_pattern(*g, argnum, args, options.max_nonzeros));
      const TensorType out = type_of(g->key(g->outputs()[0]));
      if (!is_inexact(out.dtype) || is_complex(out.dtype)) {
        throw DTypeError(std::string(name()) + ": the function returns " + out.to_string() + "; expected a real float result");
      }
      rows = options.mode == SparseMode::Rows;
      sparse::Coloring coloring;
      if (rows) {
        coloring = sparse::color_rows(*p, options.ordering);
      } else {
        coloring = sparse::color_columns(*p, options.ordering);
        // Auto: rows need at least as many colors as the densest column has entries; only when
        // that is below the columns' count can they win, and only then are they colored (a
        // coloring of 10^6 vertices takes about 0.4 s).
        if (options.mode == SparseMode::Auto && densest_column(*p) < coloring.colors) {
          sparse::Coloring by_rows = sparse::color_rows(*p, options.ordering);
          rows = by_rows.colors < coloring.colors;
          if (rows) coloring = std::move(by_rows);
        }
      }
      if (rows) along = out;
      e->analysis.pattern = std::move(p);
      e->analysis.mode = rows ? SparseMode::Rows : SparseMode::Columns;
      e->analysis.colors = coloring.colors;
      e->analysis.color = std::move(coloring.color);
    }
    complete(*e, types, rows, along);
    return e;
  }

  /// Fills in what follows from an entry's analysis: a Jacobian's read-back positions (a
  /// Hessian's star_sources are the caller's), the seed matrix and the product program, whose
  /// directions have type `along` (f's argument, or its output for rows).
  void complete(SparseEntry& e, const std::vector<TensorType>& types, bool rows, const TensorType& along) const {
    using K = TransformedFunction::JacobianKind;
    const K kind = hessian ? K::Hessian : rows ? K::Reverse : K::Forward;
    if (!hessian) {
      const SparsityPattern& p = *e.analysis.pattern;
      const std::int64_t m = p.rows, n = p.cols;
      e.sources.resize(static_cast<std::size_t>(p.nnz()));
      for (std::int64_t i = 0; i < m; ++i) {
        for (auto k = p.row_offsets[static_cast<std::size_t>(i)]; k < p.row_offsets[static_cast<std::size_t>(i) + 1]; ++k) {
          const std::int64_t j = p.col_indices[static_cast<std::size_t>(k)];
          e.sources[static_cast<std::size_t>(k)] = rows ? e.analysis.color[static_cast<std::size_t>(i)] * n + j
                                                        : e.analysis.color[static_cast<std::size_t>(j)] * m + i;
        }
      }
    }
    if (e.analysis.colors == 0) return;  // no argument elements, or no output elements
    e.seeds = seed_matrix(sparse::Coloring{e.analysis.colors, e.analysis.color}, along);
    std::vector<TensorType> in_types = types;
    in_types.push_back(e.seeds.type());
    const TransformedFunction products = impl;
    const std::size_t count = types.size();
    e.program = std::make_shared<Program>(trace_function(
        [products, kind, count](const std::vector<Traced>& xs) {
          const std::vector<Traced> fargs(xs.begin(), xs.begin() + static_cast<std::ptrdiff_t>(count));
          return std::vector<Traced>{products.products_traced(fargs, kind, xs[count])};
        },
        in_types));
  }

  std::mutex mutex;
  std::vector<std::shared_ptr<const SparseEntry>> entries;
};

SparseDerivative::SparseDerivative(TracedFunction f, SparseOptions options, bool hessian)
    : state_(std::make_shared<SparseDerivativeState>(std::move(f), std::move(options), hessian)) {}

SparseAnalysis SparseDerivative::analysis(const Tensors& args) const { return state_->entry(args)->analysis; }

void SparseDerivative::adopt(const Tensors& args, const SparseAnalysis& analysis, const TensorType& output) const {
  state_->adopt(args, analysis, output);
}

SparseMatrix SparseDerivative::operator()(const Tensors& args) const {
  const auto e = state_->entry(args);
  SparseMatrix m;
  m.pattern = e->analysis.pattern;
  if (!e->program) {
    m.values = Tensor(TensorType{args[state_->options.argnum].dtype(), {0}});
    return m;
  }
  Tensors in = args;
  in.push_back(e->seeds);
  const Tensor products = e->program->run(in)[0];
  m.values = Tensor::uninitialized(TensorType{products.dtype(), {m.pattern->nnz()}});
  if (products.dtype() == DType::F64) {
    gather_values<double>(products, e->sources, m.values);
  } else if (products.dtype() == DType::F32) {
    gather_values<float>(products, e->sources, m.values);
  } else {
    throw DTypeError(std::string(state_->name()) + ": the products are " + products.type().to_string() + "; expected f32 or f64");
  }
  return m;
}

}  // namespace detail
}  // namespace tenferro
