// tenferro.linalg (tenferro/linalg.hpp, and vector_norm of tenferro/math.hpp); the data movement of tenferro/indexing.hpp (slice, pad,
// concatenate, take, index_add, gather, scatter_add, scatter, cumsum, flip, tril, triu, diagonal, diag, stack, split, one_hot);
// tenferro/sort_scan.hpp (sort, argsort, top_k, take_along_axis, cumprod, cummax, cummin,
// logcumsumexp); and tenferro/conv.hpp (conv, avg_pool, max_pool), on Traced values.
// Decompositions and sorts with indices return tuples, as numpy.linalg and torch do.
// Every tensor parameter takes any operand (Traced, Tensor, NumPy array, nested sequence, Python
// scalar; module.hpp, lift), index and key parameters typing Python ints as i64.
#include <algorithm>
#include <string_view>
#include <tuple>

#include "module.hpp"

namespace tenferro::python {

namespace {
/// A conv or pool size: None (the default), an int (every spatial axis) or a list of ints.
std::vector<std::int64_t> sizes_of(const py::object& v) {
  if (v.is_none()) return {};
  if (py::isinstance<py::int_>(v)) return {v.cast<std::int64_t>()};
  return v.cast<std::vector<std::int64_t>>();
}

/// The docstring of an M entry's function (optional: one without gets a pointer to the docs).
const char* matrix_op_doc(std::string_view name) {
  if (name == "polar") {
    return "(U, P) with a = U @ P for a tall or square a: U's columns orthonormal, P Hermitian positive\n"
           "semidefinite (scipy.linalg.polar with side=\"right\"); differentiable where a has full column rank.\n"
           "\n"
           ">>> U, P = tf.linalg.polar(np.array([[0.0, -2.0], [1.0, 0.0]]))\n"
           ">>> np.allclose(U.numpy(), [[0.0, -1.0], [1.0, 0.0]]), np.allclose(P.numpy(), [[1.0, 0.0], [0.0, 2.0]])\n"
           "(True, True)\n";
  }
  return "The results of this op of tenferro's op list, as a tuple (docs/linalg.md).";
}
}  // namespace

void bind_linalg(py::module_& m) {
  using Axes = std::vector<std::int64_t>;
  namespace la = tenferro::linalg;
  m.def("slice", lift("slice", +[](const Traced& a, const Axes& start, const Axes& limit, const py::object& stride) {
    return slice(a, start, limit, stride.is_none() ? Axes{} : stride.cast<Axes>());
  }), py::arg("x"), py::arg("start"), py::arg("limit"), py::arg("stride") = py::none(),
        "x[start:limit:stride] on every axis (StableHLO's slice; stride None: 1).\n"
        "\n"
        ">>> tf.slice(np.arange(10.0), [2], [8], [2]).numpy().tolist()\n"
        "[2.0, 4.0, 6.0]\n");
  m.def("pad", lift("pad", +[](const Traced& a, double value, const Axes& low, const Axes& high, const py::object& interior) {
    return pad(a, value, low, high, interior.is_none() ? Axes{} : interior.cast<Axes>());
  }), py::arg("x"), py::arg("value"), py::arg("low"), py::arg("high"), py::arg("interior") = py::none(),
        "x padded with value: low and high elements before and after each axis, interior between its elements.\n"
        "\n"
        ">>> tf.pad(np.array([1.0, 2.0]), 0.0, [1], [2]).numpy().tolist()\n"
        "[0.0, 1.0, 2.0, 0.0, 0.0]\n"
        ">>> tf.pad(np.array([1.0, 2.0]), 9.0, [0], [0], [1]).numpy().tolist()\n"
        "[1.0, 9.0, 2.0]\n");
  m.def("concatenate", lift("concatenate", +[](const std::vector<Traced>& parts, std::int64_t axis) {
    return concatenate(std::span<const Traced>(parts), axis);
  }), py::arg("parts"), py::arg("axis") = 0,
        "The parts joined along an existing axis, as numpy.concatenate.\n"
        "\n"
        ">>> tf.concatenate([np.zeros((1, 2)), np.ones((2, 2))]).numpy().tolist()\n"
        "[[0.0, 0.0], [1.0, 1.0], [1.0, 1.0]]\n");

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
  }, py::arg("x"), py::arg("indices"), py::arg("axis"),
        "The slices of x at indices along axis, as numpy.take (a list of ints: fixed positions; a tensor: an index "
        "operand).\n"
        "\n"
        ">>> tf.take(np.array([10.0, 20.0, 30.0]), [2, 0], 0).numpy().tolist()\n"
        "[30.0, 10.0]\n"
        ">>> tf.take(np.array([[1.0, 2.0], [3.0, 4.0]]), np.array([1, 1]), 1).numpy().tolist()\n"
        "[[2.0, 2.0], [4.0, 4.0]]\n");
  m.def("index_add", lift("index_add", &index_add, "viv"), py::arg("base"), py::arg("indices"), py::arg("updates"),
        py::arg("axis"),
        "base with updates added at indices along axis (repeated indices accumulate), as torch.index_add.\n"
        "\n"
        ">>> tf.index_add(np.zeros(3), np.array([0, 2, 0]), np.array([1.0, 2.0, 3.0]), 0).numpy().tolist()\n"
        "[4.0, 0.0, 2.0]\n");
  m.def("dynamic_slice", lift("dynamic_slice", &dynamic_slice, "vi"), py::arg("x"), py::arg("starts"), py::arg("sizes"),
        "The block of the given sizes at starts (an index tensor, clamped so that the block fits), as "
        "jax.lax.dynamic_slice.\n"
        "\n"
        ">>> tf.dynamic_slice(np.arange(5.0), np.array([4]), [2]).numpy().tolist()\n"
        "[3.0, 4.0]\n");
  m.def("dynamic_update_slice", lift("dynamic_update_slice", &dynamic_update_slice, "vvi"), py::arg("x"),
        py::arg("update"), py::arg("starts"),
        "x with update written at starts (an index tensor, clamped so that it fits), as jax.lax.dynamic_update_slice.\n"
        "\n"
        ">>> tf.dynamic_update_slice(np.zeros(4), np.array([7.0, 8.0]), np.array([1])).numpy().tolist()\n"
        "[0.0, 7.0, 8.0, 0.0]\n");
  // StableHLO's gather and scatter, the dimension numbers as keywords (jax.lax.GatherDimensionNumbers).
  m.def("gather", lift("gather", +[](const Traced& x, const Traced& indices, const Axes& offset_dims,
                                     const Axes& collapsed_slice_dims, const Axes& start_index_map,
                                     std::int64_t index_vector_dim, const Axes& slice_sizes) {
    return gather(x, indices, GatherDims{offset_dims, collapsed_slice_dims, start_index_map, index_vector_dim, slice_sizes});
  }, "vi"), py::arg("x"), py::arg("indices"), py::kw_only(), py::arg("offset_dims"), py::arg("collapsed_slice_dims"),
     py::arg("start_index_map"), py::arg("index_vector_dim"), py::arg("slice_sizes"),
        "StableHLO's gather, its dimension numbers as keywords (jax.lax.GatherDimensionNumbers).\n"
        "\n"
        ">>> rows = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])\n"
        ">>> tf.gather(rows, np.array([[2], [0]]), offset_dims=[1], collapsed_slice_dims=[0], start_index_map=[0],\n"
        "...           index_vector_dim=1, slice_sizes=[1, 2]).numpy().tolist()\n"
        "[[5.0, 6.0], [1.0, 2.0]]\n");
  using Scatter = Traced (*)(const Traced&, const Traced&, const Traced&, const Axes&, const Axes&, const Axes&,
                             std::int64_t);
  auto scatter_binding = [&m](const char* name, Scatter f, const char* doc) {
    m.def(name, lift(name, f, "viv"), py::arg("x"), py::arg("indices"), py::arg("updates"), py::kw_only(),
          py::arg("update_window_dims"), py::arg("inserted_window_dims"), py::arg("scatter_dims_to_operand_dims"),
          py::arg("index_vector_dim"), doc);
  };
  scatter_binding("scatter_add", +[](const Traced& x, const Traced& i, const Traced& u, const Axes& uwd, const Axes& iwd,
                                     const Axes& sdod, std::int64_t ivd) {
    return scatter_add(x, i, u, ScatterDims{uwd, iwd, sdod, ivd});
  }, "x with updates added at indices (StableHLO's scatter with addition; repeated indices accumulate).\n"
     "\n"
     ">>> tf.scatter_add(np.zeros(3), np.array([[0], [2], [0]]), np.array([1.0, 2.0, 3.0]), update_window_dims=[],\n"
     "...               inserted_window_dims=[0], scatter_dims_to_operand_dims=[0], "
     "index_vector_dim=1).numpy().tolist()\n"
     "[4.0, 0.0, 2.0]\n");
  scatter_binding("scatter", +[](const Traced& x, const Traced& i, const Traced& u, const Axes& uwd, const Axes& iwd,
                                 const Axes& sdod, std::int64_t ivd) {
    return scatter(x, i, u, ScatterDims{uwd, iwd, sdod, ivd});
  }, "x with updates written at indices (StableHLO's scatter, replacing; the dimension numbers as scatter_add's).\n"
     "\n"
     ">>> tf.scatter(np.zeros(3), np.array([[0], [2]]), np.array([1.0, 2.0]), update_window_dims=[],\n"
     "...           inserted_window_dims=[0], scatter_dims_to_operand_dims=[0], index_vector_dim=1).numpy().tolist()\n"
     "[1.0, 0.0, 2.0]\n");
  m.def("cumsum", lift("cumsum", &cumsum), py::arg("x"), py::arg("axis"), py::arg("reverse") = false,
        "The running sum along axis (reverse=True: from the end).\n"
        "\n"
        ">>> tf.cumsum(np.array([1.0, 2.0, 3.0]), 0).numpy().tolist()\n"
        "[1.0, 3.0, 6.0]\n"
        ">>> tf.cumsum(np.array([1.0, 2.0, 3.0]), 0, reverse=True).numpy().tolist()\n"
        "[6.0, 5.0, 3.0]\n");
  m.def("flip", lift("flip", &reverse), py::arg("x"), py::arg("axes"),
        "x with the order of the elements along axes reversed, as numpy.flip.\n"
        "\n"
        ">>> tf.flip(np.array([[1.0, 2.0], [3.0, 4.0]]), [1]).numpy().tolist()\n"
        "[[2.0, 1.0], [4.0, 3.0]]\n");
  m.def("tril", lift("tril", &tril), py::arg("x"), py::arg("k") = 0,
        "The lower triangle of the last two axes (k > 0: k diagonals above the main one too), zeros elsewhere.\n"
        "\n"
        ">>> tf.tril(np.ones((3, 3))).numpy().tolist()\n"
        "[[1.0, 0.0, 0.0], [1.0, 1.0, 0.0], [1.0, 1.0, 1.0]]\n");
  m.def("triu", lift("triu", &triu), py::arg("x"), py::arg("k") = 0,
        "The upper triangle of the last two axes from the k-th diagonal (k < 0: below the main one too), zeros "
        "elsewhere.\n"
        "\n"
        ">>> tf.triu(np.ones((3, 3)), 1).numpy().tolist()\n"
        "[[0.0, 1.0, 1.0], [0.0, 0.0, 1.0], [0.0, 0.0, 0.0]]\n");
  m.def("diagonal", lift("diagonal", &diagonal), py::arg("x"), py::arg("k") = 0,
        "The k-th diagonal of the last two axes, as numpy.diagonal.\n"
        "\n"
        ">>> tf.diagonal(np.array([[1.0, 2.0], [3.0, 4.0]])).numpy().tolist()\n"
        "[1.0, 4.0]\n");
  m.def("diag", lift("diag", &diag), py::arg("v"), py::arg("k") = 0,
        "The matrix with v on its k-th diagonal and zeros elsewhere, as numpy.diag of a vector.\n"
        "\n"
        ">>> tf.diag(np.array([1.0, 2.0])).numpy().tolist()\n"
        "[[1.0, 0.0], [0.0, 2.0]]\n");
  m.def("stack", lift("stack", +[](const std::vector<Traced>& parts, std::int64_t axis) {
    return stack(std::span<const Traced>(parts), axis);
  }), py::arg("parts"), py::arg("axis") = 0,
        "The parts (of one shape) stacked along a new axis, as numpy.stack.\n"
        "\n"
        ">>> tf.stack([np.array([1.0, 2.0]), np.array([3.0, 4.0])], axis=1).numpy().tolist()\n"
        "[[1.0, 3.0], [2.0, 4.0]]\n");
  m.def("split", lift("split", &split), py::arg("x"), py::arg("lengths"), py::arg("axis") = 0,
        "x cut along axis into consecutive parts of the given lengths.\n"
        "\n"
        ">>> [t.numpy().tolist() for t in tf.split(np.arange(5.0), [2, 3])]\n"
        "[[0.0, 1.0], [2.0, 3.0, 4.0]]\n");
  m.def("one_hot", lift("one_hot", +[](const Traced& idx, std::int64_t n) { return one_hot(idx, n); }, "i"),
        py::arg("indices"), py::arg("n"),
        "An f64 tensor with a new last axis of length n holding 1 at each index and 0 elsewhere.\n"
        "\n"
        ">>> tf.one_hot(np.array([0, 2]), 3).numpy().tolist()\n"
        "[[1.0, 0.0, 0.0], [0.0, 0.0, 1.0]]\n");
  m.def("sort", lift("sort", &tenferro::sort), py::arg("x"), py::arg("axis") = -1, py::arg("descending") = false,
        "x sorted along axis (ascending, or descending).\n"
        "\n"
        ">>> tf.sort(np.array([3.0, 1.0, 2.0]), descending=True).numpy().tolist()\n"
        "[3.0, 2.0, 1.0]\n");
  m.def("sort_with_indices", lift("sort_with_indices", &sort_with_indices), py::arg("x"), py::arg("axis") = -1,
        py::arg("descending") = false,
        "(sorted values, their i64 positions in x) along axis.\n"
        "\n"
        ">>> [t.numpy().tolist() for t in tf.sort_with_indices(np.array([3.0, 1.0, 2.0]))]\n"
        "[[1.0, 2.0, 3.0], [1, 2, 0]]\n");
  m.def("argsort", lift("argsort", &argsort), py::arg("x"), py::arg("axis") = -1, py::arg("descending") = false,
        "The i64 positions that sort x along axis, as numpy.argsort.\n"
        "\n"
        ">>> tf.argsort(np.array([3.0, 1.0, 2.0])).numpy().tolist()\n"
        "[1, 2, 0]\n");
  m.def("top_k", lift("top_k", &top_k), py::arg("x"), py::arg("k"),
        "(the k largest values along the last axis in descending order, their i64 positions).\n"
        "\n"
        ">>> [t.numpy().tolist() for t in tf.top_k(np.array([3.0, 1.0, 2.0]), 2)]\n"
        "[[3.0, 2.0], [0, 2]]\n");
  m.def("take_along_axis", lift("take_along_axis", &take_along_axis, "vi"), py::arg("x"), py::arg("indices"),
        py::arg("axis"),
        "The elements of x at indices along axis, as numpy.take_along_axis.\n"
        "\n"
        ">>> tf.take_along_axis(np.array([[10.0, 20.0], [30.0, 40.0]]), np.array([[1], [0]]), 1).numpy().tolist()\n"
        "[[20.0], [30.0]]\n");
  m.def("cumprod", lift("cumprod", &cumprod), py::arg("x"), py::arg("axis"), py::arg("reverse") = false,
        "The running product along axis (reverse=True: from the end).\n"
        "\n"
        ">>> tf.cumprod(np.array([1.0, 2.0, 3.0]), 0).numpy().tolist()\n"
        "[1.0, 2.0, 6.0]\n");
  m.def("cummax", lift("cummax", &cummax), py::arg("x"), py::arg("axis"), py::arg("reverse") = false,
        "The running maximum along axis (reverse=True: from the end).\n"
        "\n"
        ">>> tf.cummax(np.array([1.0, 3.0, 2.0]), 0).numpy().tolist()\n"
        "[1.0, 3.0, 3.0]\n");
  m.def("cummin", lift("cummin", &cummin), py::arg("x"), py::arg("axis"), py::arg("reverse") = false,
        "The running minimum along axis (reverse=True: from the end).\n"
        "\n"
        ">>> tf.cummin(np.array([3.0, 1.0, 2.0]), 0).numpy().tolist()\n"
        "[3.0, 1.0, 1.0]\n");
  m.def("logcumsumexp", lift("logcumsumexp", &logcumsumexp), py::arg("x"), py::arg("axis"), py::arg("reverse") = false,
        "The running logsumexp along axis, without overflow (reverse=True: from the end).\n"
        "\n"
        ">>> tf.logcumsumexp(np.array([0.0, 0.0, 0.0]), 0).numpy().round(4).tolist()\n"
        "[0.0, 0.6931, 1.0986]\n");

  // conv and the pools (tenferro/conv.hpp): each size is an int (every spatial axis) or a list.
  m.def("conv", lift("conv", +[](const Traced& x, const Traced& w, const py::object& stride, const py::object& padding,
                                 const py::object& dilation, const py::object& lhs_dilation, std::int64_t groups) {
    return conv(x, w, ConvOptions{sizes_of(stride), sizes_of(padding), sizes_of(dilation), sizes_of(lhs_dilation), groups});
  }), py::arg("x"), py::arg("w"), py::arg("stride") = py::none(), py::arg("padding") = py::none(),
     py::arg("dilation") = py::none(), py::arg("lhs_dilation") = py::none(), py::arg("groups") = 1,
        "The cross-correlation of torch.nn.functional.conv1d/2d/3d: x (N, C, spatial...), w (O, C / groups, "
        "kernel...).\n"
        "\n"
        ">>> tf.conv(np.arange(4.0).reshape(1, 1, 4), np.array([[[1.0, 1.0]]]), padding=1).numpy().tolist()\n"
        "[[[0.0, 1.0, 3.0, 5.0, 3.0]]]\n");
  m.def("avg_pool", lift("avg_pool", +[](const Traced& x, const py::object& window, const py::object& stride,
                                         const py::object& padding) {
    return avg_pool(x, sizes_of(window), sizes_of(stride), sizes_of(padding));
  }), py::arg("x"), py::arg("window"), py::arg("stride") = py::none(), py::arg("padding") = py::none(),
        "The mean over each window of the spatial axes of x (N, C, spatial...), as torch's avg_pool (stride: the "
        "window by default).\n"
        "\n"
        ">>> tf.avg_pool(np.arange(4.0).reshape(1, 1, 4), 2).numpy().tolist()\n"
        "[[[0.5, 2.5]]]\n");
  m.def("max_pool", lift("max_pool", +[](const Traced& x, const py::object& window, const py::object& stride,
                                         const py::object& padding) {
    return max_pool(x, sizes_of(window), sizes_of(stride), sizes_of(padding));
  }), py::arg("x"), py::arg("window"), py::arg("stride") = py::none(), py::arg("padding") = py::none(),
        "The maximum over each window of the spatial axes of x (N, C, spatial...), as torch's max_pool (stride: the "
        "window by default).\n"
        "\n"
        ">>> tf.max_pool(np.array([[[1.0, 3.0, 2.0, 0.0]]]), 2).numpy().tolist()\n"
        "[[[3.0, 2.0]]]\n");

  py::module_ l = m.def_submodule("linalg", "Decompositions and solvers with derivatives (tenferro/linalg.hpp)");
  l.def("svd", lift("linalg.svd", +[](const Traced& a, bool full_matrices, double broadening) {
    auto r = la::svd(a, {full_matrices, broadening});
    return py::make_tuple(r.U, r.S, r.Vh);
  }), py::arg("a"), py::arg("full_matrices") = false, py::arg("broadening") = la::kDefaultBroadening,
        "(U, S, Vh) with a = U @ diag(S) @ Vh and S descending (full_matrices=False: the reduced U and Vh).\n"
        "\n"
        "broadening regularizes the derivative where singular values are (nearly) equal.\n"
        "\n"
        ">>> U, S, Vh = tf.linalg.svd(np.array([[3.0, 0.0], [0.0, -2.0]]))\n"
        ">>> S.numpy().round(6).tolist()\n"
        "[3.0, 2.0]\n"
        ">>> np.allclose(U.numpy() @ np.diag(S.numpy()) @ Vh.numpy(), [[3.0, 0.0], [0.0, -2.0]])\n"
        "True\n");
  l.def("svdvals", lift("linalg.svdvals", &la::svdvals), py::arg("a"), py::arg("broadening") = la::kDefaultBroadening,
        "The singular values of a, descending (differentiable, without the singular vectors).\n"
        "\n"
        ">>> tf.linalg.svdvals(np.array([[3.0, 0.0], [0.0, -2.0]])).numpy().round(6).tolist()\n"
        "[3.0, 2.0]\n"
        ">>> tf.grad(lambda a: tf.sum(tf.linalg.svdvals(a)))(np.array([[3.0, 0.0], [0.0, "
        "2.0]])).numpy().round(6).tolist()\n"
        "[[1.0, 0.0], [0.0, 1.0]]\n");
  l.def("qr", lift("linalg.qr", +[](const Traced& a, const std::string& mode) {
    if (mode != "reduced" && mode != "complete") {
      throw ValueError("linalg.qr: mode \"" + mode + "\"; expected \"reduced\" or \"complete\"");
    }
    auto r = la::qr(a, mode == "complete" ? la::QrMode::Complete : la::QrMode::Reduced);
    return py::make_tuple(r.Q, r.R);
  }), py::arg("a"), py::arg("mode") = "reduced",
        "(Q, R) with a = Q @ R, Q's columns orthonormal and R upper triangular (mode \"reduced\" or \"complete\").\n"
        "\n"
        ">>> Q, R = tf.linalg.qr(np.array([[1.0, 2.0], [3.0, 4.0]]))\n"
        ">>> np.allclose(Q.numpy() @ R.numpy(), [[1.0, 2.0], [3.0, 4.0]]), R.numpy()[1, 0] == 0.0\n"
        "(True, True)\n");
  // The matrix functions of the op list's M entries (tenferro/op_list.hpp): a tuple of the results.
#define TENFERRO_PY_LIST_MATRIX(X, kind, name, n)                                                       \
  l.def(#name, lift("linalg." #name, +[](const Traced& a) {                                            \
          return std::apply([](const auto&... r) { return py::make_tuple(r...); }, la::name(a));        \
        }), py::arg("a"), matrix_op_doc(#name));
  TENFERRO_OP_LIST(TENFERRO_OP_LIST_NONE, TENFERRO_OP_LIST_SKIP, TENFERRO_OP_LIST_SKIP, TENFERRO_PY_LIST_MATRIX, TENFERRO_OP_LIST_SKIP)
#undef TENFERRO_PY_LIST_MATRIX
  l.def("eigh", lift("linalg.eigh", +[](const Traced& a, double broadening) {
    auto r = la::eigh(a, broadening);
    return py::make_tuple(r.eigenvalues, r.eigenvectors);
  }), py::arg("a"), py::arg("broadening") = la::kDefaultBroadening,
        "(eigenvalues ascending, eigenvectors as columns) of a Hermitian matrix.\n"
        "\n"
        ">>> w, V = tf.linalg.eigh(np.array([[2.0, 1.0], [1.0, 2.0]]))\n"
        ">>> w.numpy().round(6).tolist()\n"
        "[1.0, 3.0]\n"
        ">>> np.allclose(V.numpy() @ np.diag(w.numpy()) @ V.numpy().T, [[2.0, 1.0], [1.0, 2.0]])\n"
        "True\n");
  l.def("eig", lift("linalg.eig", +[](const Traced& a, double broadening) {
    auto r = la::eig(a, broadening);
    return py::make_tuple(r.eigenvalues, r.eigenvectors);
  }), py::arg("a"), py::arg("broadening") = la::kDefaultBroadening,
        "(eigenvalues, eigenvectors as columns) of a general square matrix, both complex.\n"
        "\n"
        ">>> w, V = tf.linalg.eig(np.array([[0.0, 1.0], [-1.0, 0.0]]))\n"
        ">>> sorted(w.numpy().round(6).tolist(), key=lambda z: z.imag)\n"
        "[-1j, 1j]\n");
  l.def("eigvals", lift("linalg.eigvals", &la::eigvals), py::arg("a"), py::arg("broadening") = la::kDefaultBroadening,
        "The eigenvalues of a general square matrix (complex).\n"
        "\n"
        ">>> sorted(tf.linalg.eigvals(np.array([[2.0, 0.0], [0.0, 3.0]])).numpy().real.round(6).tolist())\n"
        "[2.0, 3.0]\n");
  l.def("eigvalsh", lift("linalg.eigvalsh", &la::eigvalsh), py::arg("a"), py::arg("broadening") = la::kDefaultBroadening,
        "The eigenvalues of a Hermitian matrix, ascending.\n"
        "\n"
        ">>> tf.linalg.eigvalsh(np.array([[2.0, 1.0], [1.0, 2.0]])).numpy().round(6).tolist()\n"
        "[1.0, 3.0]\n");
  l.def("cholesky", lift("linalg.cholesky", &la::cholesky), py::arg("a"),
        "The lower-triangular L with a = L @ L^H, for a Hermitian positive-definite a.\n"
        "\n"
        ">>> tf.linalg.cholesky(np.array([[4.0, 2.0], [2.0, 5.0]])).numpy().round(6).tolist()\n"
        "[[2.0, 0.0], [1.0, 2.0]]\n");
  l.def("triangular_solve", lift("linalg.triangular_solve", +[](const Traced& a, const Traced& b, bool left_side,
                                                                bool lower, bool adjoint, bool unit_diagonal) {
    return la::triangular_solve(a, b, {left_side, lower, adjoint, unit_diagonal});
  }), py::arg("a"), py::arg("b"), py::arg("left_side") = true, py::arg("lower") = true, py::arg("adjoint") = false,
        py::arg("unit_diagonal") = false,
        "x solving a @ x = b (left_side=False: x @ a = b) for a triangular a (lower, or upper; adjoint: a^H).\n"
        "\n"
        ">>> tf.linalg.triangular_solve(np.array([[2.0, 0.0], [1.0, 1.0]]), np.array([[2.0], "
        "[3.0]])).numpy().tolist()\n"
        "[[1.0], [2.0]]\n");
  l.def("solve", lift("linalg.solve", &la::solve), py::arg("a"), py::arg("b"),
        "x solving a @ x = b, for a square a (b a vector or a matrix of right-hand sides).\n"
        "\n"
        ">>> tf.linalg.solve(np.array([[2.0, 1.0], [1.0, 3.0]]), np.array([3.0, 5.0])).numpy().round(6).tolist()\n"
        "[0.8, 1.4]\n");
  l.def("inv", lift("linalg.inv", &la::inv), py::arg("a"),
        "The inverse of a square matrix.\n"
        "\n"
        ">>> tf.linalg.inv(np.array([[2.0, 0.0], [0.0, 4.0]])).numpy().tolist()\n"
        "[[0.5, 0.0], [0.0, 0.25]]\n");
  l.def("lu", lift("linalg.lu", +[](const Traced& a) {
    auto r = la::lu(a);
    return py::make_tuple(r.P, r.L, r.U);
  }), py::arg("a"),
        "(P, L, U) with a = P @ L @ U: P a permutation, L unit lower triangular, U upper triangular.\n"
        "\n"
        ">>> P, L, U = tf.linalg.lu(np.array([[1.0, 2.0], [3.0, 4.0]]))\n"
        ">>> P.numpy().tolist(), U.numpy().round(6).tolist()\n"
        "([[0.0, 1.0], [1.0, 0.0]], [[3.0, 4.0], [0.0, 0.666667]])\n");
  // Packed LU and 1-based i64 pivots (torch.linalg.lu_factor); lu_solve reads them back.
  l.def("lu_factor", lift("linalg.lu_factor", +[](const Traced& a) {
    auto r = la::lu_factor(a);
    return py::make_tuple(r.LU, r.pivots);
  }), py::arg("a"),
        "(LU packed in one matrix, 1-based i64 pivots), as torch.linalg.lu_factor; lu_solve reads them back.\n"
        "\n"
        ">>> LU, pivots = tf.linalg.lu_factor(np.array([[1.0, 2.0], [3.0, 4.0]]))\n"
        ">>> pivots.numpy().tolist()\n"
        "[2, 2]\n");
  l.def("lu_solve", lift("linalg.lu_solve", &la::lu_solve, "viv"), py::arg("LU"), py::arg("pivots"), py::arg("b"),
        "x solving a @ x = b from lu_factor(a)'s (LU, pivots).\n"
        "\n"
        ">>> LU, pivots = tf.linalg.lu_factor(np.array([[1.0, 2.0], [3.0, 4.0]]))\n"
        ">>> tf.linalg.lu_solve(LU, pivots, np.array([[5.0], [11.0]])).numpy().round(6).tolist()\n"
        "[[1.0], [2.0]]\n");
  l.def("det", lift("linalg.det", &la::det), py::arg("a"),
        "The determinant of a square matrix.\n"
        "\n"
        ">>> round(tf.linalg.det(np.array([[1.0, 2.0], [3.0, 4.0]])).item(), 6)\n"
        "-2.0\n");
  l.def("slogdet", lift("linalg.slogdet", +[](const Traced& a) {
    auto r = la::slogdet(a);
    return py::make_tuple(r.sign, r.logabsdet);
  }), py::arg("a"),
        "(sign, log(abs(det a))): the determinant without overflow or underflow.\n"
        "\n"
        ">>> sign, logabsdet = tf.linalg.slogdet(np.array([[1.0, 2.0], [3.0, 4.0]]))\n"
        ">>> sign.item(), round(logabsdet.item(), 4)\n"
        "(-1.0, 0.6931)\n");
  l.def("pinv", lift("linalg.pinv", &la::pinv), py::arg("a"), py::arg("rcond") = 1e-15,
        "The Moore-Penrose pseudo-inverse (singular values below rcond times the largest count as zero).\n"
        "\n"
        ">>> tf.linalg.pinv(np.array([[2.0, 0.0], [0.0, 0.0]])).numpy().round(6).tolist()\n"
        "[[0.5, 0.0], [0.0, 0.0]]\n");
  l.def("lstsq", lift("linalg.lstsq", &la::lstsq), py::arg("a"), py::arg("b"),
        "The least-squares solution x minimizing the 2-norm of a @ x - b.\n"
        "\n"
        ">>> tf.linalg.lstsq(np.array([[1.0], [1.0]]), np.array([[1.0], [3.0]])).numpy().round(6).tolist()\n"
        "[[2.0]]\n");
  // numpy.linalg.cond's p: None (2), a number (2, -2, 1, -1, inf, -inf) or "fro" / "nuc".
  l.def("cond", lift("linalg.cond", +[](const Traced& a, const py::object& p) {
    if (p.is_none()) return la::cond(a);
    if (py::isinstance<py::str>(p)) return la::cond(a, p.cast<std::string>());
    const bool number = !PyBool_Check(p.ptr()) && !py::isinstance<Traced>(p) &&
                        (PyFloat_Check(p.ptr()) || PyIndex_Check(p.ptr()));
    if (number) return la::cond(a, p.cast<double>());
    throw py::type_error("tenferro.linalg.cond: p is a " + std::string(py::str(py::type::of(p).attr("__name__"))) +
                         "; expected None, a number (2, -2, 1, -1, inf, -inf) or \"fro\" / \"nuc\"");
  }), py::arg("a"), py::arg("p") = py::none(),
        "The condition number of a, as numpy.linalg.cond (p None: 2; a number or \"fro\" / \"nuc\").\n"
        "\n"
        ">>> round(tf.linalg.cond(np.array([[2.0, 0.0], [0.0, 0.5]])).item(), 6)\n"
        "4.0\n");
  l.def("householder_product", lift("linalg.householder_product", &la::householder_product), py::arg("a"),
        py::arg("tau"),
        "The first columns of the product of Householder reflectors I - tau_i v_i v_i^H stored below a's diagonal "
        "(LAPACK's orgqr).\n"
        "\n"
        ">>> tf.linalg.householder_product(np.array([[0.0], [1.0]]), np.array([1.0])).numpy().tolist()\n"
        "[[0.0], [-1.0]]\n");
  l.def("tensorinv", lift("linalg.tensorinv", &la::tensorinv), py::arg("a"), py::arg("ind") = 2,
        "The inverse of a tensor for tensordot over its first ind axes, as numpy.linalg.tensorinv.\n"
        "\n"
        ">>> tf.linalg.tensorinv(np.eye(4).reshape(2, 2, 2, 2)).shape\n"
        "(2, 2, 2, 2)\n");
  l.def("tensorsolve", lift("linalg.tensorsolve", +[](const Traced& a, const Traced& b, const py::object& axes) {
    return la::tensorsolve(a, b, axes.is_none() ? Axes{} : axes.cast<Axes>());
  }), py::arg("a"), py::arg("b"), py::arg("axes") = py::none(),
        "x solving tensordot(a, x, x.ndim) = b, as numpy.linalg.tensorsolve.\n"
        "\n"
        ">>> tf.linalg.tensorsolve(np.eye(4).reshape(2, 2, 4), np.arange(4.0).reshape(2, "
        "2)).numpy().round(6).tolist()\n"
        "[0.0, 1.0, 2.0, 3.0]\n");
  // tenferro::vector_norm (tenferro/math.hpp), beside matrix_norm as in torch.linalg: any real ord
  // (inf and -inf included); axis None (every axis), an int or a list of ints.
  l.def("vector_norm", lift("linalg.vector_norm", +[](const Traced& x, double ord, const py::object& axis) {
    return vector_norm(x, ord, axes_of(axis, x.rank()));
  }), py::arg("x"), py::arg("ord") = 2.0, py::arg("axis") = py::none(),
        "The ord-norm of x over axis (None: every axis), any real ord, inf and -inf included.\n"
        "\n"
        ">>> tf.linalg.vector_norm(np.array([3.0, 4.0])).item()\n"
        "5.0\n"
        ">>> tf.linalg.vector_norm(np.array([[3.0, -4.0], [1.0, 1.0]]), 1.0, axis=1).numpy().tolist()\n"
        "[7.0, 2.0]\n");
  // ord as numpy.linalg.norm's for matrices: "fro", "nuc" or a number (1, -1, 2, -2, inf, -inf); the
  // C++ text spellings of the numbers ("2", "inf", ...) are taken too.
  l.def("matrix_norm", lift("linalg.matrix_norm", +[](const Traced& a, const py::object& ord) {
    if (py::isinstance<py::str>(ord)) return la::matrix_norm(a, ord.cast<std::string>());
    const bool number = !PyBool_Check(ord.ptr()) && !py::isinstance<Traced>(ord) &&
                        (PyFloat_Check(ord.ptr()) || PyIndex_Check(ord.ptr()));
    if (number) return matrix_norm(a, ord.cast<double>());
    throw py::type_error("tenferro.linalg.matrix_norm: ord is a " + std::string(py::str(py::type::of(ord).attr("__name__"))) +
                         "; expected \"fro\", \"nuc\" or a number (1, -1, 2, -2, inf, -inf)");
  }), py::arg("a"), py::arg("ord") = "fro",
        "The norm of the last two axes, as numpy.linalg.norm's for matrices (ord \"fro\", \"nuc\", 1, -1, 2, -2, inf, "
        "-inf).\n"
        "\n"
        ">>> round(tf.linalg.matrix_norm(np.array([[1.0, 2.0], [2.0, 1.0]])).item(), 4)\n"
        "3.1623\n"
        ">>> tf.linalg.matrix_norm(np.array([[1.0, 2.0], [3.0, 4.0]]), 1).item()\n"
        "6.0\n");
  l.def("expm", lift("linalg.expm", &la::expm), py::arg("a"),
        "The matrix exponential.\n"
        "\n"
        ">>> tf.linalg.expm(np.array([[0.0, 1.0], [0.0, 0.0]])).numpy().round(6).tolist()\n"
        "[[1.0, 1.0], [0.0, 1.0]]\n");
  l.def("trace", lift("linalg.trace", &la::trace), py::arg("a"),
        "The sum of the diagonal of the last two axes.\n"
        "\n"
        ">>> tf.linalg.trace(np.array([[1.0, 2.0], [3.0, 4.0]])).item()\n"
        "5.0\n");
  l.def("adjoint", lift("linalg.adjoint", &la::adjoint), py::arg("a"),
        "The conjugate transpose of the last two axes.\n"
        "\n"
        ">>> tf.linalg.adjoint(np.array([[1.0, 2j], [3.0, 4.0]])).numpy().tolist()\n"
        "[[(1-0j), (3-0j)], [-2j, (4-0j)]]\n");
  l.def("eye", lift("linalg.eye", &la::eye), py::arg("like"), py::arg("n"),
        "The n x n identity in like's trace and dtype.\n"
        "\n"
        ">>> tf.linalg.eye(np.zeros(()), 2).numpy().tolist()\n"
        "[[1.0, 0.0], [0.0, 1.0]]\n");
}

}  // namespace tenferro::python
