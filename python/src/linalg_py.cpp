// tenferro.linalg (tenferro/linalg.hpp); the data movement of tenferro/indexing.hpp (slice, pad,
// concatenate, take, index_add, gather, scatter_add, scatter, cumsum, flip, tril, triu, diagonal, diag, stack, split, one_hot);
// tenferro/sort_scan.hpp (sort, argsort, top_k, take_along_axis, cumprod, cummax, cummin,
// logcumsumexp); and tenferro/conv.hpp (conv, avg_pool, max_pool), on Traced values.
// Decompositions and sorts with indices return tuples, as numpy.linalg and torch do.
#include "module.hpp"

namespace tenferro::python {

void bind_linalg(py::module_& m) {
  using Axes = std::vector<std::int64_t>;
  namespace la = tenferro::linalg;
  m.def("slice", [](const Traced& a, const Axes& start, const Axes& limit, const py::object& stride) {
    return slice(a, start, limit, stride.is_none() ? Axes{} : stride.cast<Axes>());
  }, py::arg("x"), py::arg("start"), py::arg("limit"), py::arg("stride") = py::none());
  m.def("pad", [](const Traced& a, double value, const Axes& low, const Axes& high, const py::object& interior) {
    return pad(a, value, low, high, interior.is_none() ? Axes{} : interior.cast<Axes>());
  }, py::arg("x"), py::arg("value"), py::arg("low"), py::arg("high"), py::arg("interior") = py::none());
  m.def("concatenate", [](const std::vector<Traced>& parts, std::int64_t axis) {
    return concatenate(std::span<const Traced>(parts), axis);
  }, py::arg("parts"), py::arg("axis") = 0);

  m.def("take", [](const Traced& x, const py::object& idx, std::int64_t axis) {
    return py::isinstance<Traced>(idx) ? take(x, idx.cast<Traced>(), axis) : take(x, idx.cast<Axes>(), axis);
  }, py::arg("x"), py::arg("indices"), py::arg("axis"));
  m.def("index_add", &index_add, py::arg("base"), py::arg("indices"), py::arg("updates"), py::arg("axis"));
  m.def("dynamic_slice", &dynamic_slice, py::arg("x"), py::arg("starts"), py::arg("sizes"));
  m.def("dynamic_update_slice", &dynamic_update_slice, py::arg("x"), py::arg("update"), py::arg("starts"));
  // StableHLO's gather and scatter, the dimension numbers as keywords (jax.lax.GatherDimensionNumbers).
  m.def("gather", [](const Traced& x, const Traced& indices, const Axes& offset_dims, const Axes& collapsed_slice_dims,
                     const Axes& start_index_map, std::int64_t index_vector_dim, const Axes& slice_sizes) {
    return gather(x, indices, GatherDims{offset_dims, collapsed_slice_dims, start_index_map, index_vector_dim, slice_sizes});
  }, py::arg("x"), py::arg("indices"), py::kw_only(), py::arg("offset_dims"), py::arg("collapsed_slice_dims"),
     py::arg("start_index_map"), py::arg("index_vector_dim"), py::arg("slice_sizes"));
  auto scatter_binding = [&m](const char* name, Traced (*f)(const Traced&, const Traced&, const Traced&, ScatterDims)) {
    m.def(name, [f](const Traced& x, const Traced& indices, const Traced& updates, const Axes& update_window_dims,
                    const Axes& inserted_window_dims, const Axes& scatter_dims_to_operand_dims, std::int64_t index_vector_dim) {
      return f(x, indices, updates,
               ScatterDims{update_window_dims, inserted_window_dims, scatter_dims_to_operand_dims, index_vector_dim});
    }, py::arg("x"), py::arg("indices"), py::arg("updates"), py::kw_only(), py::arg("update_window_dims"),
       py::arg("inserted_window_dims"), py::arg("scatter_dims_to_operand_dims"), py::arg("index_vector_dim"));
  };
  scatter_binding("scatter_add", &scatter_add);
  scatter_binding("scatter", &scatter);
  m.def("cumsum", &cumsum, py::arg("x"), py::arg("axis"), py::arg("reverse") = false);
  m.def("flip", &reverse, py::arg("x"), py::arg("axes"));
  m.def("tril", &tril, py::arg("x"), py::arg("k") = 0);
  m.def("triu", &triu, py::arg("x"), py::arg("k") = 0);
  m.def("diagonal", &diagonal, py::arg("x"), py::arg("k") = 0);
  m.def("diag", &diag, py::arg("v"), py::arg("k") = 0);
  m.def("stack", [](const std::vector<Traced>& parts, std::int64_t axis) {
    return stack(std::span<const Traced>(parts), axis);
  }, py::arg("parts"), py::arg("axis") = 0);
  m.def("split", &split, py::arg("x"), py::arg("lengths"), py::arg("axis") = 0);
  m.def("one_hot", [](const Traced& idx, std::int64_t n) { return one_hot(idx, n); }, py::arg("indices"), py::arg("n"));
  m.def("sort", &tenferro::sort, py::arg("x"), py::arg("axis") = -1, py::arg("descending") = false);
  m.def("sort_with_indices", &sort_with_indices, py::arg("x"), py::arg("axis") = -1, py::arg("descending") = false);
  m.def("argsort", &argsort, py::arg("x"), py::arg("axis") = -1, py::arg("descending") = false);
  m.def("top_k", &top_k, py::arg("x"), py::arg("k"));
  m.def("take_along_axis", &take_along_axis, py::arg("x"), py::arg("indices"), py::arg("axis"));
  m.def("cumprod", &cumprod, py::arg("x"), py::arg("axis"), py::arg("reverse") = false);
  m.def("cummax", &cummax, py::arg("x"), py::arg("axis"), py::arg("reverse") = false);
  m.def("cummin", &cummin, py::arg("x"), py::arg("axis"), py::arg("reverse") = false);
  m.def("logcumsumexp", &logcumsumexp, py::arg("x"), py::arg("axis"), py::arg("reverse") = false);

  // conv and the pools (tenferro/conv.hpp): each size is an int (every spatial axis) or a list.
  auto sizes = [](const py::object& v) {
    if (v.is_none()) return Axes{};
    if (py::isinstance<py::int_>(v)) return Axes{v.cast<std::int64_t>()};
    return v.cast<Axes>();
  };
  m.def("conv", [sizes](const Traced& x, const Traced& w, const py::object& stride, const py::object& padding,
                        const py::object& dilation, const py::object& lhs_dilation, std::int64_t groups) {
    return conv(x, w, ConvOptions{sizes(stride), sizes(padding), sizes(dilation), sizes(lhs_dilation), groups});
  }, py::arg("x"), py::arg("w"), py::arg("stride") = py::none(), py::arg("padding") = py::none(),
     py::arg("dilation") = py::none(), py::arg("lhs_dilation") = py::none(), py::arg("groups") = 1);
  m.def("avg_pool", [sizes](const Traced& x, const py::object& window, const py::object& stride, const py::object& padding) {
    return avg_pool(x, sizes(window), sizes(stride), sizes(padding));
  }, py::arg("x"), py::arg("window"), py::arg("stride") = py::none(), py::arg("padding") = py::none());
  m.def("max_pool", [sizes](const Traced& x, const py::object& window, const py::object& stride, const py::object& padding) {
    return max_pool(x, sizes(window), sizes(stride), sizes(padding));
  }, py::arg("x"), py::arg("window"), py::arg("stride") = py::none(), py::arg("padding") = py::none());

  py::module_ l = m.def_submodule("linalg", "Decompositions and solvers with derivatives (tenferro/linalg.hpp)");
  l.def("svd", [](const Traced& a, bool full_matrices, double broadening) {
    auto r = la::svd(a, {full_matrices, broadening});
    return py::make_tuple(r.U, r.S, r.Vh);
  }, py::arg("a"), py::arg("full_matrices") = false, py::arg("broadening") = la::kDefaultBroadening);
  l.def("svdvals", &la::svdvals, py::arg("a"), py::arg("broadening") = la::kDefaultBroadening);
  l.def("qr", [](const Traced& a, const std::string& mode) {
    if (mode != "reduced" && mode != "complete") {
      throw ValueError("linalg.qr: mode \"" + mode + "\"; expected \"reduced\" or \"complete\"");
    }
    auto r = la::qr(a, mode == "complete" ? la::QrMode::Complete : la::QrMode::Reduced);
    return py::make_tuple(r.Q, r.R);
  }, py::arg("a"), py::arg("mode") = "reduced");
  l.def("eigh", [](const Traced& a, double broadening) {
    auto r = la::eigh(a, broadening);
    return py::make_tuple(r.eigenvalues, r.eigenvectors);
  }, py::arg("a"), py::arg("broadening") = la::kDefaultBroadening);
  l.def("eig", [](const Traced& a, double broadening) {
    auto r = la::eig(a, broadening);
    return py::make_tuple(r.eigenvalues, r.eigenvectors);
  }, py::arg("a"), py::arg("broadening") = la::kDefaultBroadening);
  l.def("eigvals", &la::eigvals, py::arg("a"), py::arg("broadening") = la::kDefaultBroadening);
  l.def("eigvalsh", &la::eigvalsh, py::arg("a"), py::arg("broadening") = la::kDefaultBroadening);
  l.def("cholesky", &la::cholesky, py::arg("a"));
  l.def("triangular_solve", [](const Traced& a, const Traced& b, bool left_side, bool lower, bool adjoint,
                               bool unit_diagonal) {
    return la::triangular_solve(a, b, {left_side, lower, adjoint, unit_diagonal});
  }, py::arg("a"), py::arg("b"), py::arg("left_side") = true, py::arg("lower") = true, py::arg("adjoint") = false,
        py::arg("unit_diagonal") = false);
  l.def("solve", &la::solve, py::arg("a"), py::arg("b"));
  l.def("inv", &la::inv, py::arg("a"));
  l.def("lu", [](const Traced& a) {
    auto r = la::lu(a);
    return py::make_tuple(r.P, r.L, r.U);
  }, py::arg("a"));
  l.def("det", &la::det, py::arg("a"));
  l.def("slogdet", [](const Traced& a) {
    auto r = la::slogdet(a);
    return py::make_tuple(r.sign, r.logabsdet);
  }, py::arg("a"));
  l.def("pinv", &la::pinv, py::arg("a"), py::arg("rcond") = 1e-15);
  l.def("lstsq", &la::lstsq, py::arg("a"), py::arg("b"));
  l.def("matrix_norm", &la::matrix_norm, py::arg("a"), py::arg("ord") = "fro");
  l.def("expm", &la::expm, py::arg("a"));
  l.def("trace", &la::trace, py::arg("a"));
  l.def("eye", &la::eye, py::arg("like"), py::arg("n"), "The n x n identity in like's trace and dtype.");
}

}  // namespace tenferro::python
