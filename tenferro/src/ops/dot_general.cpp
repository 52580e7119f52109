// dot_general: batched tensor contraction with StableHLO's dimension numbers.
// Order: shape/dtype rule, kernel, JVP rule, transpose rule.
//
// Result axes: batch (in lhs_batch order), then lhs free axes, then rhs free axes (each ascending).
// The kernel views each operand as a batch of matrices, lhs [M, K] and rhs [K, N], directly on its
// storage whenever the strides allow it (possibly transposed), and calls OpenBLAS GEMM per batch
// element; an operand is packed into a contiguous copy only when its free or contracting axes
// cannot be addressed with one stride each. A plain matmul makes no copy.
#include <cblas.h>

#include <algorithm>
#include <limits>
#include <numeric>
#include <optional>


#include "ir/batching.hpp"
#include "ir/family.hpp"
#include "kernels/blas_gemm.hpp"
#include "kernels/parallel.hpp"
#include "tenferro/ops/rule.hpp"
#include "kernels/layout.hpp"
#include "tenferro/ops/record.hpp"
#include "tenferro/threads.hpp"

namespace tenferro {

namespace detail {
namespace {
/// The free axes of an operand: those neither batch nor contracting, ascending.
Axes free_axes(const Axes& batch, const Axes& contract, std::size_t rank) {
  Axes used = batch;
  used.insert(used.end(), contract.begin(), contract.end());
  return complement_axes(used, static_cast<std::int64_t>(rank));
}
}  // namespace
}  // namespace detail

// ---- shape/dtype rule --------------------------------------------------------------------------

namespace ops {

TensorType dot_result_type(const std::string& name, const TensorType& a, const TensorType& b, const DotDims& dims) {
  // The message parts are built only on the way to an error: this rule runs for every recorded
  // dot_general, eager ones included.
  auto types = [&] { return detail::types_string({&a, &b}); };
  auto numbers = [&] {
    return "batch " + shape_to_string(dims.lhs_batch) + shape_to_string(dims.rhs_batch) + ", contract " +
           shape_to_string(dims.lhs_contract) + shape_to_string(dims.rhs_contract);
  };
  if (a.dtype != b.dtype) {
    throw DTypeError(name + ": operand dtypes differ (" + types() + "); expected one dtype (convert first)");
  }
  detail::require_dtype(name.c_str(), a, a.dtype != DType::Bool, "a numeric dtype (not bool)");
  if (dims.lhs_batch.size() != dims.rhs_batch.size() ||
      dims.lhs_contract.size() != dims.rhs_contract.size()) {
    throw ShapeError(name + ": dimension numbers " + numbers() + " for operands " + types() +
                     "; expected as many lhs as rhs batch axes and as many lhs as rhs contracting axes");
  }
  // Every batch and contracting axis in range, none twice; checked without building the list
  // (which check_axes gets, for its message, only on an error).
  auto check_side = [&](const char* side, const TensorType& t, const Axes& batch, const Axes& contract) {
    const auto rank = static_cast<std::int64_t>(t.rank());
    const std::size_t count = batch.size() + contract.size();
    auto at = [&](std::size_t i) { return i < batch.size() ? batch[i] : contract[i - batch.size()]; };
    bool ok = true;
    for (std::size_t i = 0; ok && i < count; ++i) {
      const std::int64_t axis = at(i);
      ok = axis >= 0 && axis < rank;
      for (std::size_t j = 0; ok && j < i; ++j) ok = at(j) != axis;
    }
    if (!ok) {
      Axes used = batch;
      used.insert(used.end(), contract.begin(), contract.end());
      detail::check_axes(name.c_str(), side, used, rank, types() + " (" + numbers() + ")");
    }
  };
  check_side("lhs batch and contracting axes", a, dims.lhs_batch, dims.lhs_contract);
  check_side("rhs batch and contracting axes", b, dims.rhs_batch, dims.rhs_contract);
  auto check_pairs = [&](const char* what, const Axes& l, const Axes& r) {
    for (std::size_t i = 0; i < l.size(); ++i) {
      const std::int64_t n = a.shape[static_cast<std::size_t>(l[i])],
                         m = b.shape[static_cast<std::size_t>(r[i])];
      if (n != m) {
        throw ShapeError(name + ": " + std::string(what) + " axes lhs " + std::to_string(l[i]) +
                         " and rhs " + std::to_string(r[i]) + " of operands " + types() + " have lengths " +
                         std::to_string(n) + " and " + std::to_string(m) + "; expected equal lengths");
      }
    }
  };
  check_pairs("batch", dims.lhs_batch, dims.rhs_batch);
  check_pairs("contracting", dims.lhs_contract, dims.rhs_contract);
  Shape shape;
  shape.reserve(a.rank() + b.rank() - dims.lhs_batch.size() - 2 * dims.lhs_contract.size());
  for (auto k : dims.lhs_batch) shape.push_back(a.shape[static_cast<std::size_t>(k)]);
  auto append_free = [&](const TensorType& t, const Axes& batch, const Axes& contract) {
    auto has = [](const Axes& axes, std::int64_t k) { return std::find(axes.begin(), axes.end(), k) != axes.end(); };
    for (std::int64_t k = 0; k < static_cast<std::int64_t>(t.rank()); ++k) {
      if (!has(batch, k) && !has(contract, k)) shape.push_back(t.shape[static_cast<std::size_t>(k)]);
    }
  };
  append_free(a, dims.lhs_batch, dims.lhs_contract);
  append_free(b, dims.rhs_batch, dims.rhs_contract);
  return TensorType{a.dtype, std::move(shape)};
}

StdTensorOp dot_general(const TensorType& a, const TensorType& b, DotDims dims) {
  TensorType out = dot_result_type("dot_general", a, b, dims);
  return detail::make(OpKind::DotGeneral, std::move(out), OpAttrs(std::move(dims)));
}

}  // namespace ops

// ---- kernel ------------------------------------------------------------------------------------

namespace detail {
namespace {

/// An operand seen as a batch of matrices: element (b, r, c) at data + batch offset + r*rs + c*cs.
struct MatrixView {
  const std::byte* data = nullptr;
  Shape batch_shape;
  Strides batch_strides;
  std::int64_t rows = 1, cols = 1, rs = 0, cs = 0;
  Tensor packed;  // owns the storage when the operand had to be copied
};

/// Length and stride of a group of axes addressed as one index, or nullopt when the axes do not
/// step through memory uniformly (length-1 axes are ignored).
std::optional<std::pair<std::int64_t, std::int64_t>> merge_group(const Shape& shape, const Strides& st,
                                                                 const Axes& group) {
  std::int64_t n = 1, stride = 0;
  bool first = true;
  for (auto k : group) {
    const auto i = static_cast<std::size_t>(k);
    if (shape[i] == 1) continue;
    if (!first && stride != st[i] * shape[i]) return std::nullopt;
    n *= shape[i];
    stride = st[i];
    first = false;
  }
  return std::pair{n, first ? 1 : stride};
}

/// Whether BLAS can read the view directly: one of its strides must be 1 and the other a valid
/// leading dimension (row-major, possibly transposed).
bool blas_ready(const MatrixView& v) {
  const bool row_major = (v.cols == 1 || v.cs == 1) && (v.rows == 1 || v.rs >= v.cols);
  const bool col_major = (v.rows == 1 || v.rs == 1) && (v.cols == 1 || v.cs >= v.rows);
  return row_major || col_major;
}

/// The view of operand `t` with rows over `row_axes` and columns over `col_axes`; nullopt if the
/// storage cannot be addressed that way (or BLAS could not read it, when `for_blas`).
std::optional<MatrixView> view_of(const Tensor& t, const Axes& batch, const Axes& row_axes,
                                  const Axes& col_axes, bool for_blas) {
  const Strides st = row_major_strides(t.shape());
  auto rows = merge_group(t.shape(), st, row_axes);
  auto cols = merge_group(t.shape(), st, col_axes);
  if (!rows || !cols) return std::nullopt;
  MatrixView v;
  v.data = static_cast<const std::byte*>(t.raw_data());
  for (auto k : batch) {
    v.batch_shape.push_back(t.shape()[static_cast<std::size_t>(k)]);
    v.batch_strides.push_back(st[static_cast<std::size_t>(k)]);
  }
  std::tie(v.rows, v.rs) = *rows;
  std::tie(v.cols, v.cs) = *cols;
  if (for_blas && !blas_ready(v)) return std::nullopt;
  return v;
}

/// The view of a contiguous copy of `t` laid out as [batch..., rows..., cols...].
MatrixView packed_view(const Tensor& t, const Axes& batch, const Axes& row_axes, const Axes& col_axes) {
  Axes perm = batch;
  perm.insert(perm.end(), row_axes.begin(), row_axes.end());
  perm.insert(perm.end(), col_axes.begin(), col_axes.end());
  Tensor p = permuted(t, perm);
  Axes nb(batch.size()), nr(row_axes.size()), nc(col_axes.size());
  std::iota(nb.begin(), nb.end(), 0);
  std::iota(nr.begin(), nr.end(), static_cast<std::int64_t>(nb.size()));
  std::iota(nc.begin(), nc.end(), static_cast<std::int64_t>(nb.size() + nr.size()));
  MatrixView v = *view_of(p, nb, nr, nc, false);
  v.packed = std::move(p);
  return v;
}

/// The fewest rows of A for which dot_general copies a transposed B out for libxsmm (see gemm):
/// an element moved costs about as much as 60 multiply-adds, so the copy repays itself only over
/// many rows (an LSTM layer's 32-row gradient products took 1.27x as long with copies from 16 on).
constexpr std::int64_t kTransposeCopyMinRows = 128;

template <class T>
void gemm(const MatrixView& a, const MatrixView& b, T* c, std::int64_t m, std::int64_t n, std::int64_t k,
          std::int64_t a_off, std::int64_t b_off) {
  const T* x = reinterpret_cast<const T*>(a.data) + a_off;
  const T* y = reinterpret_cast<const T*>(b.data) + b_off;
  if constexpr (std::is_same_v<T, std::int64_t>) {
    for (std::int64_t i = 0; i < m; ++i) {
      for (std::int64_t p = 0; p < k; ++p) {
        const T s = x[i * a.rs + p * a.cs];
        for (std::int64_t j = 0; j < n; ++j) c[i * n + j] += s * y[p * b.rs + j * b.cs];
      }
    }
  } else {
    // Row-major: a view with unit column stride is NoTrans with ld = row stride, otherwise it is
    // the transpose of a row-major matrix with ld = column stride.
    auto layout = [](const MatrixView& v) {
      const bool no_trans = (v.cols == 1 || v.cs == 1) && (v.rows == 1 || v.rs >= v.cols);
      const std::int64_t ld = no_trans ? (v.rows == 1 ? std::max<std::int64_t>(v.cols, 1) : v.rs)
                                       : (v.cols == 1 ? std::max<std::int64_t>(v.rows, 1) : v.cs);
      return std::pair{no_trans ? CblasNoTrans : CblasTrans, static_cast<blasint>(ld)};
    };
    // Plain variables, not structured bindings: the lambda below captures them (clang 14 cannot
    // capture a structured binding).
    const std::pair<CBLAS_TRANSPOSE, blasint> la = layout(a);
    std::pair<CBLAS_TRANSPOSE, blasint> lb = layout(b);
    // libxsmm reads B only untransposed: when it takes the product, a B stored transposed is
    // copied out first, which costs k n element moves against m n k multiply-adds.
    Tensor b_copy;
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
      if (lb.first == CblasTrans && m >= kTransposeCopyMinRows && libxsmm_takes(std::is_same_v<T, double>, m, n, k)) {
        b_copy = Tensor::uninitialized(TensorType{dtype_of_v<T>, {k, n}});
        const std::int64_t dst_strides[2] = {n, 1}, src_strides[2] = {b.rs, b.cs};
        strided_copy(static_cast<std::byte*>(b_copy.raw_data()), dst_strides, reinterpret_cast<const std::byte*>(y),
                     src_strides, Shape{k, n}, sizeof(T));
        y = b_copy.data<T>();
        lb = {CblasNoTrans, static_cast<blasint>(std::max<std::int64_t>(n, 1))};
      }
    }
    const CBLAS_TRANSPOSE ta = la.first, tb = lb.first;
    const blasint lda = la.second, ldb = lb.second;
    const auto K = static_cast<blasint>(k), LDC = static_cast<blasint>(n);
    // A block of rows [i0, i1) and columns [j0, j1) of C reads rows i0.. of op(A) and columns j0..
    // of op(B), which start at the same strides in either layout.
    split_gemm(m, n, k, [&](std::int64_t i0, std::int64_t i1, std::int64_t j0, std::int64_t j1) {
      const auto M = static_cast<blasint>(i1 - i0), N = static_cast<blasint>(j1 - j0);
      const T* xb = x + i0 * a.rs;
      const T* yb = y + j0 * (b_copy.rank() == 2 ? 1 : b.cs);
      T* cb = c + i0 * n + j0;
      if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
        if (tb == CblasNoTrans && libxsmm_gemm<T>(ta == CblasTrans, m, n, k, M, N, K, xb, lda, yb, ldb, false, cb, LDC)) return;
      }
      if constexpr (std::is_same_v<T, float>) {
        cblas_sgemm(CblasRowMajor, ta, tb, M, N, K, 1.0f, xb, lda, yb, ldb, 0.0f, cb, LDC);
      } else if constexpr (std::is_same_v<T, double>) {
        cblas_dgemm(CblasRowMajor, ta, tb, M, N, K, 1.0, xb, lda, yb, ldb, 0.0, cb, LDC);
      } else if constexpr (std::is_same_v<T, c64>) {
        const c64 one(1), zero(0);
        cblas_cgemm(CblasRowMajor, ta, tb, M, N, K, &one, xb, lda, yb, ldb, &zero, cb, LDC);
      } else {
        const c128 one(1), zero(0);
        cblas_zgemm(CblasRowMajor, ta, tb, M, N, K, &one, xb, lda, yb, ldb, &zero, cb, LDC);
      }
    });
  }
}

/// A small plain matrix product (a [m, k] times b [k, n], 0 < m n k <= 512, a float or complex
/// dtype) by a direct loop, since the GEMM call's setup costs more than its arithmetic there (eager
/// 2x2 matmuls, small traced ones); nullopt for any other product. Checked before anything else
/// is computed: an eager matmul pays for nothing more.
std::optional<Tensor> small_matrix_product(const StdTensorOp& op, const Tensor& a, const Tensor& b) {
  const DotDims& d = op.attrs.get<DotDims>();
  if (a.rank() != 2 || b.rank() != 2 || !d.lhs_batch.empty() || d.lhs_contract.size() != 1 ||
      d.lhs_contract[0] != 1 || d.rhs_contract[0] != 0 || a.dtype() == DType::I64) {
    return std::nullopt;
  }
  const std::int64_t m = a.shape()[0], k = a.shape()[1], n = b.shape()[1];
  if (m * n * k == 0 || m * n * k > 512) return std::nullopt;
  Tensor r = Tensor::uninitialized(op.out);
  visit_dtype(a.dtype(), [&](auto zero) {
    using T = decltype(zero);
    if constexpr (!std::is_same_v<T, bool> && !std::is_same_v<T, std::int64_t>) {
      const T* x = a.data<T>();
      const T* y = b.data<T>();
      T* z = r.data<T>();
      for (std::int64_t i = 0; i < m; ++i) {
        for (std::int64_t j = 0; j < n; ++j) {
          T acc{};
          for (std::int64_t p = 0; p < k; ++p) acc += x[i * k + p] * y[p * n + j];
          z[i * n + j] = acc;
        }
      }
    }
  });
  return r;
}

}  // namespace

Tensor eval_dot(const StdTensorOp& op, Operands in) {
  const Tensor& a = *in[0];
  const Tensor& b = *in[1];
  if (auto small = small_matrix_product(op, a, b)) return std::move(*small);
  const DotDims& d = op.attrs.get<DotDims>();
  const Axes lhs_free = free_axes(d.lhs_batch, d.lhs_contract, a.rank());
  const Axes rhs_free = free_axes(d.rhs_batch, d.rhs_contract, b.rank());
  const bool blas = a.dtype() != DType::I64;
  auto length = [](const Tensor& t, const Axes& axes) {
    std::int64_t n = 1;
    for (auto k : axes) n *= t.shape()[static_cast<std::size_t>(k)];
    return n;
  };
  // GEMM with beta = 0 writes every result element, so the result needs no zero fill; the i64
  // loop accumulates, and an empty contraction writes nothing, so those start from zeros.
  Tensor r = blas && length(a, d.lhs_contract) > 0 ? Tensor::uninitialized(op.out) : Tensor(op.out);
  const std::int64_t batches = length(a, d.lhs_batch), m = length(a, lhs_free), k = length(a, d.lhs_contract),
                     n = length(b, rhs_free);
  if (batches == 0 || m == 0 || n == 0 || k == 0) return r;  // empty, or empty sums: zeros

  // The contracting pairs may be taken in any common order. Try the given order, then the orders
  // that follow lhs and rhs memory, and keep the first that needs the fewest copies.
  std::vector<std::size_t> order(d.lhs_contract.size());
  std::iota(order.begin(), order.end(), 0);
  std::vector<std::vector<std::size_t>> candidates{order};
  for (const Axes* side : {&d.lhs_contract, &d.rhs_contract}) {
    auto o = order;
    std::stable_sort(o.begin(), o.end(),
                     [&](std::size_t i, std::size_t j) { return (*side)[i] < (*side)[j]; });
    candidates.push_back(std::move(o));
  }
  std::optional<MatrixView> va, vb;
  Axes lk, rk;
  int best = -1;
  for (const auto& cand : candidates) {
    Axes l, rr;
    for (auto i : cand) {
      l.push_back(d.lhs_contract[i]);
      rr.push_back(d.rhs_contract[i]);
    }
    auto x = view_of(a, d.lhs_batch, lhs_free, l, blas);
    auto y = view_of(b, d.rhs_batch, rr, rhs_free, blas);
    const int ready = (x ? 1 : 0) + (y ? 1 : 0);
    if (ready > best) {
      best = ready;
      va = std::move(x);
      vb = std::move(y);
      lk = std::move(l);
      rk = std::move(rr);
    }
    if (best == 2) break;
  }
  if (!va) va = packed_view(a, d.lhs_batch, lhs_free, lk);
  if (!vb) vb = packed_view(b, d.rhs_batch, rk, rhs_free);

  if (blas) {
    constexpr auto kMax = static_cast<std::int64_t>(std::numeric_limits<blasint>::max());
    for (std::int64_t v : {m, n, k, va->rs, va->cs, vb->rs, vb->cs}) {
      if (v > kMax)
        throw ShapeError("dot_general: " + op.name() +
                         " has a dimension or stride beyond the BLAS integer range");
    }
  }
  // Batch loop: an odometer over the batch index with both operands' batch offsets. Products too
  // small to split (split_gemm) are shared among the threads a range of batches at a time.
  auto run_batches = [&](std::int64_t first, std::int64_t last) {
    std::vector<std::int64_t> index(va->batch_shape.size(), 0);
    std::int64_t a_off = 0, b_off = 0;
    for (std::size_t q = index.size(), rest = static_cast<std::size_t>(first); q-- > 0;) {
      const auto extent = static_cast<std::size_t>(va->batch_shape[q]);
      index[q] = static_cast<std::int64_t>(rest % extent);
      rest /= extent;
      a_off += index[q] * va->batch_strides[q];
      b_off += index[q] * vb->batch_strides[q];
    }
    visit_dtype(a.dtype(), [&](auto zero) {
      using T = decltype(zero);
      if constexpr (!std::is_same_v<T, bool>) {
        T* c = r.data<T>();
        for (std::int64_t bi = first; bi < last; ++bi) {
          gemm<T>(*va, *vb, c + bi * m * n, m, n, k, a_off, b_off);
          for (std::size_t q = index.size(); q-- > 0;) {
            a_off += va->batch_strides[q];
            b_off += vb->batch_strides[q];
            if (++index[q] < va->batch_shape[q]) break;
            a_off -= va->batch_strides[q] * va->batch_shape[q];
            b_off -= vb->batch_strides[q] * vb->batch_shape[q];
            index[q] = 0;
          }
        }
      }
    });
  };
  const double work = static_cast<double>(m) * static_cast<double>(n) * static_cast<double>(k);
  const int threads = exec::in_parallel_body() ? 1 : num_threads();
  if (batches < 2 || threads < 2 || work >= kGemmSplitWork || work * static_cast<double>(batches) < kGemmSplitWork) {
    run_batches(0, batches);
  } else {
    const std::int64_t ranges = std::min<std::int64_t>(batches, 4 * std::int64_t{threads});
    exec::parallel_chunks(ranges, threads, [&](std::int64_t g) {
      run_batches(g * batches / ranges, (g + 1) * batches / ranges);
    });
  }
  return r;
}

// ---- JVP rule ----------------------------------------------------------------------------------

Tangents jvp_dot(const StdTensorOp& op, const JvpArgs& a) {
  if (!is_inexact(op.out.dtype)) return {std::nullopt};
  // Bilinear: d(a . b) = da . b + a . db, each term linear in its active operand.
  RuleTrace r(a.b);
  std::optional<Traced> da, db;
  if (a.t[0]) da = apply_binary(op, r.linear(*a.t[0]), r.fixed(a.x[1]));
  if (a.t[1]) db = apply_binary(op, r.fixed(a.x[0]), r.linear(*a.t[1]));
  return {r.result(sum_present(da, db), op, tidu::RuleKind::Jvp)};
}

// ---- transpose rule ----------------------------------------------------------------------------
// Adjoint for <u, v> = Re(sum conj(u) v): for z = a . b with b fixed, ct_a = ct . conj(b)
// contracted over the rhs free axes (and symmetrically for b), then permuted to the operand's axes.

namespace {
/// Position of each element of `axes` in ascending order.
std::vector<std::int64_t> ranks_of(const Axes& axes) {
  Axes sorted = axes;
  std::sort(sorted.begin(), sorted.end());
  std::vector<std::int64_t> ranks;
  for (auto k : axes) ranks.push_back(std::lower_bound(sorted.begin(), sorted.end(), k) - sorted.begin());
  return ranks;
}

Axes range(std::int64_t from, std::size_t count) {
  Axes r(count);
  std::iota(r.begin(), r.end(), from);
  return r;
}

/// transpose(v, perm), or v where perm is the identity.
Traced permute_to(const Traced& v, const Axes& perm) {
  Axes identity = range(0, perm.size());
  if (perm == identity) return v;
  return apply_unary(ops::transpose(v.type(), perm), v);
}
}  // namespace

Tangents transpose_dot(const StdTensorOp& op, const TransposeArgs& a) {
  if (a.role.is_active(0) == a.role.is_active(1)) {
    not_linear(op, "dot_general is linear only when exactly one operand is active");
  }
  RuleTrace r(a.b);
  const DotDims& d = op.attrs.get<DotDims>();
  const TensorType& lt = type_of(a.b.key_of(a.x[0]));
  const TensorType& rt = type_of(a.b.key_of(a.x[1]));
  const Traced ct = r.linear(a.ct());
  const auto nb = d.lhs_batch.size(), nc = d.lhs_contract.size();
  const std::size_t nlf = lt.rank() - nb - nc, nrf = rt.rank() - nb - nc;
  const Axes ct_batch = range(0, nb);
  const Axes ct_lhs_free = range(static_cast<std::int64_t>(nb), nlf);
  const Axes ct_rhs_free = range(static_cast<std::int64_t>(nb + nlf), nrf);
  Tangents result(2);
  if (a.role.is_active(0)) {
    // ct_a = dot(ct, conj(b)): result [batch, lhs free, rhs contracting axes ascending].
    const Traced fixed = conj_if_complex(r.fixed(a.x[1]));
    DotDims dd{ct_batch, d.rhs_batch, ct_rhs_free, free_axes(d.rhs_batch, d.rhs_contract, rt.rank())};
    const Traced v = apply_binary(ops::dot_general(ct.type(), fixed.type(), dd), ct, fixed);
    Axes perm(lt.rank());
    const auto rk = ranks_of(d.rhs_contract);
    for (std::size_t i = 0; i < nb; ++i)
      perm[static_cast<std::size_t>(d.lhs_batch[i])] = static_cast<std::int64_t>(i);
    const Axes lf = free_axes(d.lhs_batch, d.lhs_contract, lt.rank());
    for (std::size_t j = 0; j < nlf; ++j)
      perm[static_cast<std::size_t>(lf[j])] = static_cast<std::int64_t>(nb + j);
    for (std::size_t q = 0; q < nc; ++q) {
      perm[static_cast<std::size_t>(d.lhs_contract[q])] = static_cast<std::int64_t>(nb + nlf) + rk[q];
    }
    result[0] = r.result(permute_to(v, perm), op, tidu::RuleKind::Transpose);
  } else {
    // ct_b = dot(conj(a), ct): result [batch, lhs contracting axes ascending, rhs free].
    const Traced fixed = conj_if_complex(r.fixed(a.x[0]));
    DotDims dd{d.lhs_batch, ct_batch, free_axes(d.lhs_batch, d.lhs_contract, lt.rank()), ct_lhs_free};
    const Traced v = apply_binary(ops::dot_general(fixed.type(), ct.type(), dd), fixed, ct);
    Axes perm(rt.rank());
    const auto lk = ranks_of(d.lhs_contract);
    for (std::size_t i = 0; i < nb; ++i)
      perm[static_cast<std::size_t>(d.rhs_batch[i])] = static_cast<std::int64_t>(i);
    for (std::size_t q = 0; q < nc; ++q) {
      perm[static_cast<std::size_t>(d.rhs_contract[q])] = static_cast<std::int64_t>(nb) + lk[q];
    }
    const Axes rf = free_axes(d.rhs_batch, d.rhs_contract, rt.rank());
    for (std::size_t j = 0; j < nrf; ++j)
      perm[static_cast<std::size_t>(rf[j])] = static_cast<std::int64_t>(nb + nc + j);
    result[1] = r.result(permute_to(v, perm), op, tidu::RuleKind::Transpose);
  }
  return result;
}

/// vmap: the contraction kit's rule (ir/batching.hpp).
static std::vector<BatchedValue> batch_dot_general(const StdTensorOp& op, std::span<const BatchedValue> x, std::int64_t) {
  return detail::batch_contraction(x, op.attrs.get<DotDims>(), [](const Traced& a, const Traced& b, DotDims e) {
    return std::vector<Traced>{apply(ops::dot_general(a.type(), b.type(), std::move(e)), {a, b})};
  });
}

const OpDef& def_DotGeneral() {
  static const OpDef d{.name = "dot_general", .kind = OpKind::DotGeneral, .operands = {kBilinear, kBilinear},
                       .shape_rule = single_type(+[](Types t, const OpAttrs& a) {
                         return ops::dot_general(t[0], t[1], a.get<DotDims>()).out;
                       }),
                       .kernel = single_result(eval_dot), .jvp = jvp_dot, .transpose = transpose_dot,
                       .dot_dims_contraction = true, .rank0_formula = ElementFormula{.fast = ElementFast::Dot}, .dependence = Dependence::Contracts, .batch = batch_dot_general};
  return d;
}

}  // namespace detail
}  // namespace tenferro
