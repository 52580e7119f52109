// tenferro.linalg (tenferro/linalg.hpp, and vector_norm of tenferro/math.hpp); the data movement of tenferro/indexing.hpp (slice, pad,
// concatenate, take, index_add, gather, scatter_add, scatter, cumsum, flip, tril, triu, diagonal, diag, stack, split, one_hot);
// tenferro/sort_scan.hpp (sort, argsort, top_k, take_along_axis, cumprod, cummax, cummin,
// logcumsumexp); and tenferro/conv.hpp (conv, avg_pool, max_pool), on Traced values.
// Decompositions and sorts with indices return tuples, as numpy.linalg and torch do.
// Every tensor parameter takes any operand (Traced, Tensor, NumPy array, nested sequence, Python
// scalar; module.hpp, lift), index and key parameters typing Python ints as i64.
#include <algorithm>

#include "module.hpp"

namespace tenferro::python {

namespace {
/// A conv or pool size: None (the default), an int (every spatial axis) or a list of ints.
std::vector<std::int64_t> sizes_of(const py::object& v) {
  if (v.is_none()) return {};
  if (py::isinstance<py::int_>(v)) return {v.cast<std::int64_t>()};
  return v.cast<std::vector<std::int64_t>>();
}
}  // namespace

void bind_linalg(py::module_& m) {
  using Axes = std::vector<std::int64_t>;
  namespace la = tenferro::linalg;
  m.def("slice", lift("slice", +[](const Traced& a, const Axes& start, const Axes& limit, const py::object& stride) {
    return slice(a, start, limit, stride.is_none() ? Axes{} : stride.cast<Axes>());
  }), py::arg("x"), py::arg("start"), py::arg("limit"), py::arg("stride") = py::none());
  m.def("pad", lift("pad", +[](const Traced& a, double value, const Axes& low, const Axes& high, const py::object& interior) {
    return pad(a, value, low, high, interior.is_none() ? Axes{} : interior.cast<Axes>());
  }), py::arg("x"), py::arg("value"), py::arg("low"), py::arg("high"), py::arg("interior") = py::none());
  m.def("concatenate", lift("concatenate", +[](const std::vector<Traced>& parts, std::int64_t axis) {
    return concatenate(std::span<const Traced>(parts), axis);
  }), py::arg("parts"), py::arg("axis") = 0);

  // indices: a list of ints (static positions) or any index operand.
  m.def("take", [](const py::object& x, const py::object& idx, std::int64_t axis) {
    Operands ops("tenferro.take");
    ops.add(x);
    const bool positions = (py::isinstance<py::list>(idx) || py::isinstance<py::tuple>(idx)) &&
                           std::all_of(idx.begin(), idx.end(), [](const py::handle& i) {
                             return PyLong_Check(i.ptr()) && !PyBool_Check(i.ptr());
                           });
    if (positions) return ops.result(py::cast(take(ops.get(x), idx.cast<Axes>(), axis)));
    ops.add(idx, Slot::Index);
    return ops.result(py::cast(take(ops.get(x), ops.get(idx, Slot::Index), axis)));
  }, py::arg("x"), py::arg("indices"), py::arg("axis"));
  m.def("index_add", lift("index_add", &index_add, "viv"), py::arg("base"), py::arg("indices"), py::arg("updates"),
        py::arg("axis"));
  m.def("dynamic_slice", lift("dynamic_slice", &dynamic_slice, "vi"), py::arg("x"), py::arg("starts"), py::arg("sizes"));
  m.def("dynamic_update_slice", lift("dynamic_update_slice", &dynamic_update_slice, "vvi"), py::arg("x"),
        py::arg("update"), py::arg("starts"));
  // StableHLO's gather and scatter, the dimension numbers as keywords (jax.lax.GatherDimensionNumbers).
  m.def("gather", lift("gather", +[](const Traced& x, const Traced& indices, const Axes& offset_dims,
                                     const Axes& collapsed_slice_dims, const Axes& start_index_map,
                                     std::int64_t index_vector_dim, const Axes& slice_sizes) {
    return gather(x, indices, GatherDims{offset_dims, collapsed_slice_dims, start_index_map, index_vector_dim, slice_sizes});
  }, "vi"), py::arg("x"), py::arg("indices"), py::kw_only(), py::arg("offset_dims"), py::arg("collapsed_slice_dims"),
     py::arg("start_index_map"), py::arg("index_vector_dim"), py::arg("slice_sizes"));
  using Scatter = Traced (*)(const Traced&, const Traced&, const Traced&, const Axes&, const Axes&, const Axes&,
                             std::int64_t);
  auto scatter_binding = [&m](const char* name, Scatter f) {
    m.def(name, lift(name, f, "viv"), py::arg("x"), py::arg("indices"), py::arg("updates"), py::kw_only(),
          py::arg("update_window_dims"), py::arg("inserted_window_dims"), py::arg("scatter_dims_to_operand_dims"),
          py::arg("index_vector_dim"));
  };
  scatter_binding("scatter_add", +[](const Traced& x, const Traced& i, const Traced& u, const Axes& uwd, const Axes& iwd,
                                     const Axes& sdod, std::int64_t ivd) {
    return scatter_add(x, i, u, ScatterDims{uwd, iwd, sdod, ivd});
  });
  scatter_binding("scatter", +[](const Traced& x, const Traced& i, const Traced& u, const Axes& uwd, const Axes& iwd,
                                 const Axes& sdod, std::int64_t ivd) {
    return scatter(x, i, u, ScatterDims{uwd, iwd, sdod, ivd});
  });
  m.def("cumsum", lift("cumsum", &cumsum), py::arg("x"), py::arg("axis"), py::arg("reverse") = false);
  m.def("flip", lift("flip", &reverse), py::arg("x"), py::arg("axes"));
  m.def("tril", lift("tril", &tril), py::arg("x"), py::arg("k") = 0);
  m.def("triu", lift("triu", &triu), py::arg("x"), py::arg("k") = 0);
  m.def("diagonal", lift("diagonal", &diagonal), py::arg("x"), py::arg("k") = 0);
  m.def("diag", lift("diag", &diag), py::arg("v"), py::arg("k") = 0);
  m.def("stack", lift("stack", +[](const std::vector<Traced>& parts, std::int64_t axis) {
    return stack(std::span<const Traced>(parts), axis);
  }), py::arg("parts"), py::arg("axis") = 0);
  m.def("split", lift("split", &split), py::arg("x"), py::arg("lengths"), py::arg("axis") = 0);
  m.def("one_hot", lift("one_hot", +[](const Traced& idx, std::int64_t n) { return one_hot(idx, n); }, "i"),
        py::arg("indices"), py::arg("n"));
  m.def("sort", lift("sort", &tenferro::sort), py::arg("x"), py::arg("axis") = -1, py::arg("descending") = false);
  m.def("sort_with_indices", lift("sort_with_indices", &sort_with_indices), py::arg("x"), py::arg("axis") = -1,
        py::arg("descending") = false);
  m.def("argsort", lift("argsort", &argsort), py::arg("x"), py::arg("axis") = -1, py::arg("descending") = false);
  m.def("top_k", lift("top_k", &top_k), py::arg("x"), py::arg("k"));
  m.def("take_along_axis", lift("take_along_axis", &take_along_axis, "vi"), py::arg("x"), py::arg("indices"),
        py::arg("axis"));
  m.def("cumprod", lift("cumprod", &cumprod), py::arg("x"), py::arg("axis"), py::arg("reverse") = false);
  m.def("cummax", lift("cummax", &cummax), py::arg("x"), py::arg("axis"), py::arg("reverse") = false);
  m.def("cummin", lift("cummin", &cummin), py::arg("x"), py::arg("axis"), py::arg("reverse") = false);
  m.def("logcumsumexp", lift("logcumsumexp", &logcumsumexp), py::arg("x"), py::arg("axis"), py::arg("reverse") = false);

  // conv and the pools (tenferro/conv.hpp): each size is an int (every spatial axis) or a list.
  m.def("conv", lift("conv", +[](const Traced& x, const Traced& w, const py::object& stride, const py::object& padding,
                                 const py::object& dilation, const py::object& lhs_dilation, std::int64_t groups) {
    return conv(x, w, ConvOptions{sizes_of(stride), sizes_of(padding), sizes_of(dilation), sizes_of(lhs_dilation), groups});
  }), py::arg("x"), py::arg("w"), py::arg("stride") = py::none(), py::arg("padding") = py::none(),
     py::arg("dilation") = py::none(), py::arg("lhs_dilation") = py::none(), py::arg("groups") = 1);
  m.def("avg_pool", lift("avg_pool", +[](const Traced& x, const py::object& window, const py::object& stride,
                                         const py::object& padding) {
    return avg_pool(x, sizes_of(window), sizes_of(stride), sizes_of(padding));
  }), py::arg("x"), py::arg("window"), py::arg("stride") = py::none(), py::arg("padding") = py::none());
  m.def("max_pool", lift("max_pool", +[](const Traced& x, const py::object& window, const py::object& stride,
                                         const py::object& padding) {
    return max_pool(x, sizes_of(window), sizes_of(stride), sizes_of(padding));
  }), py::arg("x"), py::arg("window"), py::arg("stride") = py::none(), py::arg("padding") = py::none());

  py::module_ l = m.def_submodule("linalg", "Decompositions and solvers with derivatives (tenferro/linalg.hpp)");
  l.def("svd", lift("linalg.svd", +[](const Traced& a, bool full_matrices, double broadening) {
    auto r = la::svd(a, {full_matrices, broadening});
    return py::make_tuple(r.U, r.S, r.Vh);
  }), py::arg("a"), py::arg("full_matrices") = false, py::arg("broadening") = la::kDefaultBroadening);
  l.def("svdvals", lift("linalg.svdvals", &la::svdvals), py::arg("a"), py::arg("broadening") = la::kDefaultBroadening);
  l.def("qr", lift("linalg.qr", +[](const Traced& a, const std::string& mode) {
    if (mode != "reduced" && mode != "complete") {
      throw ValueError("linalg.qr: mode \"" + mode + "\"; expected \"reduced\" or \"complete\"");
    }
    auto r = la::qr(a, mode == "complete" ? la::QrMode::Complete : la::QrMode::Reduced);
    return py::make_tuple(r.Q, r.R);
  }), py::arg("a"), py::arg("mode") = "reduced");
  l.def("eigh", lift("linalg.eigh", +[](const Traced& a, double broadening) {
    auto r = la::eigh(a, broadening);
    return py::make_tuple(r.eigenvalues, r.eigenvectors);
  }), py::arg("a"), py::arg("broadening") = la::kDefaultBroadening);
  l.def("eig", lift("linalg.eig", +[](const Traced& a, double broadening) {
    auto r = la::eig(a, broadening);
    return py::make_tuple(r.eigenvalues, r.eigenvectors);
  }), py::arg("a"), py::arg("broadening") = la::kDefaultBroadening);
  l.def("eigvals", lift("linalg.eigvals", &la::eigvals), py::arg("a"), py::arg("broadening") = la::kDefaultBroadening);
  l.def("eigvalsh", lift("linalg.eigvalsh", &la::eigvalsh), py::arg("a"), py::arg("broadening") = la::kDefaultBroadening);
  l.def("cholesky", lift("linalg.cholesky", &la::cholesky), py::arg("a"));
  l.def("triangular_solve", lift("linalg.triangular_solve", +[](const Traced& a, const Traced& b, bool left_side,
                                                                bool lower, bool adjoint, bool unit_diagonal) {
    return la::triangular_solve(a, b, {left_side, lower, adjoint, unit_diagonal});
  }), py::arg("a"), py::arg("b"), py::arg("left_side") = true, py::arg("lower") = true, py::arg("adjoint") = false,
        py::arg("unit_diagonal") = false);
  l.def("solve", lift("linalg.solve", &la::solve), py::arg("a"), py::arg("b"));
  l.def("inv", lift("linalg.inv", &la::inv), py::arg("a"));
  l.def("lu", lift("linalg.lu", +[](const Traced& a) {
    auto r = la::lu(a);
    return py::make_tuple(r.P, r.L, r.U);
  }), py::arg("a"));
  // Packed LU and 1-based i64 pivots (torch.linalg.lu_factor); lu_solve reads them back.
  l.def("lu_factor", lift("linalg.lu_factor", +[](const Traced& a) {
    auto r = la::lu_factor(a);
    return py::make_tuple(r.LU, r.pivots);
  }), py::arg("a"));
  l.def("lu_solve", lift("linalg.lu_solve", &la::lu_solve, "viv"), py::arg("LU"), py::arg("pivots"), py::arg("b"));
  l.def("det", lift("linalg.det", &la::det), py::arg("a"));
  l.def("slogdet", lift("linalg.slogdet", +[](const Traced& a) {
    auto r = la::slogdet(a);
    return py::make_tuple(r.sign, r.logabsdet);
  }), py::arg("a"));
  l.def("pinv", lift("linalg.pinv", &la::pinv), py::arg("a"), py::arg("rcond") = 1e-15);
  l.def("lstsq", lift("linalg.lstsq", &la::lstsq), py::arg("a"), py::arg("b"));
  // numpy.linalg.cond's p: None (2), a number (2, -2, 1, -1, inf, -inf) or "fro" / "nuc".
  l.def("cond", lift("linalg.cond", +[](const Traced& a, const py::object& p) {
    if (p.is_none()) return la::cond(a);
    if (py::isinstance<py::str>(p)) return la::cond(a, p.cast<std::string>());
    const bool number = !PyBool_Check(p.ptr()) && !py::isinstance<Traced>(p) &&
                        (PyFloat_Check(p.ptr()) || PyIndex_Check(p.ptr()));
    if (number) return la::cond(a, p.cast<double>());
    throw py::type_error("tenferro.linalg.cond: p is a " + std::string(py::str(py::type::of(p).attr("__name__"))) +
                         "; expected None, a number (2, -2, 1, -1, inf, -inf) or \"fro\" / \"nuc\"");
  }), py::arg("a"), py::arg("p") = py::none());
  l.def("householder_product", lift("linalg.householder_product", &la::householder_product), py::arg("a"),
        py::arg("tau"));
  l.def("tensorinv", lift("linalg.tensorinv", &la::tensorinv), py::arg("a"), py::arg("ind") = 2);
  l.def("tensorsolve", lift("linalg.tensorsolve", +[](const Traced& a, const Traced& b, const py::object& axes) {
    return la::tensorsolve(a, b, axes.is_none() ? Axes{} : axes.cast<Axes>());
  }), py::arg("a"), py::arg("b"), py::arg("axes") = py::none());
  // tenferro::vector_norm (tenferro/math.hpp), beside matrix_norm as in torch.linalg: any real ord
  // (inf and -inf included); axis None (every axis), an int or a list of ints.
  l.def("vector_norm", lift("linalg.vector_norm", +[](const Traced& x, double ord, const py::object& axis) {
    return vector_norm(x, ord, axes_of(axis, x.rank()));
  }), py::arg("x"), py::arg("ord") = 2.0, py::arg("axis") = py::none());
  // ord as numpy.linalg.norm's for matrices: "fro", "nuc" or a number (1, -1, 2, -2, inf, -inf); the
  // C++ text spellings of the numbers ("2", "inf", ...) are taken too.
  l.def("matrix_norm", lift("linalg.matrix_norm", +[](const Traced& a, const py::object& ord) {
    if (py::isinstance<py::str>(ord)) return la::matrix_norm(a, ord.cast<std::string>());
    const bool number = !PyBool_Check(ord.ptr()) && !py::isinstance<Traced>(ord) &&
                        (PyFloat_Check(ord.ptr()) || PyIndex_Check(ord.ptr()));
    if (number) return matrix_norm(a, ord.cast<double>());
    throw py::type_error("tenferro.linalg.matrix_norm: ord is a " + std::string(py::str(py::type::of(ord).attr("__name__"))) +
                         "; expected \"fro\", \"nuc\" or a number (1, -1, 2, -2, inf, -inf)");
  }), py::arg("a"), py::arg("ord") = "fro");
  l.def("expm", lift("linalg.expm", &la::expm), py::arg("a"));
  l.def("trace", lift("linalg.trace", &la::trace), py::arg("a"));
  l.def("adjoint", lift("linalg.adjoint", &la::adjoint), py::arg("a"), "The conjugate transpose of the last two axes.");
  l.def("eye", lift("linalg.eye", &la::eye), py::arg("like"), py::arg("n"), "The n x n identity in like's trace and dtype.");
}

}  // namespace tenferro::python
