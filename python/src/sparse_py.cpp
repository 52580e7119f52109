// Python: sparse Jacobians and Hessians (tenferro/sparse.hpp). The results are CSR arrays in
// SciPy's spelling (indptr, indices, data, shape), so scipy.sparse.csr_matrix takes them as they are.
#include "module.hpp"

namespace tenferro::python {

namespace {

py::array_t<std::int64_t> int_array(const std::vector<std::int64_t>& v) {
  return py::array_t<std::int64_t>(static_cast<py::ssize_t>(v.size()), v.data());
}

SparseOptions options_of(std::size_t argnum, const std::string& mode, const std::string& ordering, std::int64_t max_nonzeros) {
  SparseOptions o;
  o.argnum = argnum;
  if (mode == "auto") {
    o.mode = SparseMode::Auto;
  } else if (mode == "columns") {
    o.mode = SparseMode::Columns;
  } else if (mode == "rows") {
    o.mode = SparseMode::Rows;
  } else {
    throw py::value_error("mode='" + mode + "'; expected 'auto', 'columns' or 'rows'");
  }
  o.ordering = ordering;
  o.max_nonzeros = max_nonzeros;
  return o;
}

Tensors tensors_of(const py::args& args, const std::string& who) {
  Tensors out;
  for (const auto& a : args) out.push_back(to_tensor(a, who + " argument " + std::to_string(out.size())));
  return out;
}

/// sparse_jacobian(f) / sparse_hessian(f): call it on tensors or arrays.
class PySparse {
 public:
  PySparse(py::function f, SparseOptions options, bool hessian)
      : name_(hessian ? "tenferro.sparse_hessian" : "tenferro.sparse_jacobian"),
        impl_(traced_function(std::move(f)), std::move(options), hessian) {}
  SparseMatrix call(const py::args& args) const { return impl_(tensors_of(args, name_)); }
  SparseAnalysis analysis(const py::args& args) const { return impl_.analysis(tensors_of(args, name_)); }

 private:
  std::string name_;
  detail::SparseDerivative impl_;
};

/// jacobian(f, mode=...): call it on tensors or arrays.
class PyJacobian {
 public:
  PyJacobian(py::function f, JacobianOptions options) : impl_(traced_function(std::move(f)), options) {}
  Tensor call(const py::args& args) const { return impl_(tensors_of(args, "tenferro.jacobian")); }
  JacobianChoice choice(const py::args& args) const { return impl_.choice(tensors_of(args, "tenferro.jacobian")); }

 private:
  detail::JacobianImpl impl_;
};

JacobianMode jacobian_mode_of(const std::string& mode) {
  for (JacobianMode m : {JacobianMode::Auto, JacobianMode::Forward, JacobianMode::Reverse, JacobianMode::Columns, JacobianMode::Rows,
                         JacobianMode::CrossCountry}) {
    if (mode == jacobian_mode_name(m)) return m;
  }
  throw py::value_error("mode='" + mode + "'; expected 'auto', 'forward', 'reverse', 'columns', 'rows' or 'cross_country'");
}

EliminationOrder elimination_order_of(const std::string& order) {
  for (EliminationOrder o : {EliminationOrder::Best, EliminationOrder::Forward, EliminationOrder::Reverse, EliminationOrder::Markowitz,
                             EliminationOrder::Search, EliminationOrder::Edges}) {
    if (order == elimination_order_name(o)) return o;
  }
  throw py::value_error("order='" + order + "'; expected 'best', 'forward', 'reverse', 'markowitz', 'search' or 'edges'");
}

}  // namespace

void bind_sparse(py::module_& m) {
  py::class_<JacobianChoice>(m, "JacobianChoice",
                             "What a jacobian call runs: the mode, its products and why.\n"
                             "\n"
                             ">>> choice = tf.jacobian(lambda x: x * x, mode=\"forward\").choice(np.ones(3))\n"
                             ">>> choice.mode, choice.products\n"
                             "('forward', 3)\n")
      .def_property_readonly("mode", [](const JacobianChoice& c) { return jacobian_mode_name(c.mode); })
      .def_readonly("products", &JacobianChoice::products)
      .def_property_readonly("order", [](const JacobianChoice& c) { return elimination_order_name(c.order); },
                             "cross_country: the elimination order the plan runs ('best' for other modes).")
      .def_readonly("predicted_cost", &JacobianChoice::predicted_cost)
      .def_readonly("explain", &JacobianChoice::explain)
      .def("__str__", [](const JacobianChoice& c) { return c.explain; });
  py::class_<PyJacobian>(m, "JacobianTransformed",
                         "A Jacobian of a function in a chosen or automatic mode (what tenferro.jacobian returns).\n"
                         "\n"
                         ">>> J = tf.jacobian(lambda x: 2.0 * x)\n"
                         ">>> J(np.ones(2)).numpy().tolist()\n"
                         "[[2.0, 0.0], [0.0, 2.0]]\n")
      .def("__call__", &PyJacobian::call)
      .def("choice", &PyJacobian::choice, "The mode a call on these arguments runs, and why.");
  m.def("jacobian",
        [](py::function f, std::size_t argnum, const std::string& mode, const std::string& order) {
          return PyJacobian(std::move(f), JacobianOptions{.argnum = argnum, .mode = jacobian_mode_of(mode), .order = elimination_order_of(order)});
        },
        py::arg("f"), py::arg("argnum") = 0, py::arg("mode") = "auto", py::arg("order") = "best",
        "The dense Jacobian of f's one output with respect to args[argnum] (shape output + argument, as jacfwd).\n"
        "\n"
        "mode is 'forward', 'reverse', 'columns' or 'rows' (compressed by a coloring of the structural sparsity "
        "pattern), 'cross_country' (vertex elimination on the linearized graph, in elimination order `order`: "
        "'forward', 'reverse', 'markowitz', 'search', 'edges' or 'best', the cheapest by the cost model), or 'auto': the "
        "cheapest by predicted cost.\n"
        "\n"
        ">>> tf.jacobian(lambda x: x * x)(np.array([1.0, 2.0])).numpy().tolist()\n"
        "[[2.0, 0.0], [0.0, 4.0]]\n"
        ">>> tf.jacobian(lambda x: x * x, mode=\"reverse\").choice(np.array([1.0, 2.0])).mode\n"
        "'reverse'\n");
  py::class_<SparsityPattern, std::shared_ptr<SparsityPattern>>(m, "SparsityPattern",
                                                                "A sparsity pattern in CSR form (indptr, indices).\n"
                                                                "\n"
                                                                ">>> p = tf.jacobian_sparsity(lambda x: x * x, "
                                                                "np.zeros(2))\n"
                                                                ">>> p.shape, p.indptr.tolist(), p.indices.tolist(), "
                                                                "(1, 1) in p\n"
                                                                "((2, 2), [0, 1, 2], [0, 1], True)\n")
      .def_property_readonly("shape", [](const SparsityPattern& p) { return py::make_tuple(p.rows, p.cols); })
      .def_property_readonly("nnz", &SparsityPattern::nnz)
      .def_property_readonly("indptr", [](const SparsityPattern& p) { return int_array(p.row_offsets); })
      .def_property_readonly("indices", [](const SparsityPattern& p) { return int_array(p.col_indices); })
      .def_property_readonly("rows", [](const SparsityPattern& p) { return int_array(p.row_indices()); },
                             "The row of each nonzero (coordinate form, with indices).")
      .def("__contains__", [](const SparsityPattern& p, std::pair<std::int64_t, std::int64_t> ij) { return p.contains(ij.first, ij.second); })
      .def("__str__", &SparsityPattern::print);
  py::class_<SparseMatrix>(m, "SparseMatrix",
                           "A sparse matrix in CSR form: indptr, indices, data, shape (SciPy's names).\n"
                           "\n"
                           ">>> S = tf.sparse_jacobian(lambda x: 3.0 * x)(np.ones(2))\n"
                           ">>> S.shape, S.nnz, S.to_dense().numpy().tolist()\n"
                           "((2, 2), 2, [[3.0, 0.0], [0.0, 3.0]])\n")
      .def_property_readonly("pattern", [](const SparseMatrix& s) { return std::const_pointer_cast<SparsityPattern>(s.pattern); })
      .def_property_readonly("shape", [](const SparseMatrix& s) { return py::make_tuple(s.pattern->rows, s.pattern->cols); })
      .def_property_readonly("nnz", [](const SparseMatrix& s) { return s.pattern->nnz(); })
      .def_property_readonly("indptr", [](const SparseMatrix& s) { return int_array(s.pattern->row_offsets); })
      .def_property_readonly("indices", [](const SparseMatrix& s) { return int_array(s.pattern->col_indices); })
      .def_property_readonly("data", [](const SparseMatrix& s) { return s.values; })
      .def("to_dense", &SparseMatrix::to_dense, "The matrix as a dense [rows, cols] tensor.");
  py::class_<SparseAnalysis>(m, "SparseAnalysis",
                             "What a sparse derivative's analysis found: the pattern, the mode and the coloring.\n"
                             "\n"
                             ">>> a = tf.sparse_jacobian(lambda x: x * x).analysis(np.ones(3))\n"
                             ">>> a.pattern.nnz, a.colors\n"
                             "(3, 1)\n")
      .def_property_readonly("pattern", [](const SparseAnalysis& a) { return std::const_pointer_cast<SparsityPattern>(a.pattern); })
      .def_property_readonly("mode", [](const SparseAnalysis& a) { return a.mode == SparseMode::Rows ? "rows" : "columns"; })
      .def_readonly("colors", &SparseAnalysis::colors)
      .def_readonly("color", &SparseAnalysis::color);
  py::class_<PySparse>(m, "SparseTransformed", "A sparse Jacobian or Hessian of a function: call it on tensors or arrays.")
      .def("__call__", &PySparse::call)
      .def("analysis", &PySparse::analysis, "The analysis a call on these arguments uses (made on first use).");
  const char* jac_doc =
      "The Jacobian of f's one output with respect to args[argnum] as a SparseMatrix (rows: output elements, columns: "
      "argument elements), from its structural sparsity pattern, a coloring (mode 'auto', 'columns' or 'rows'; ColPack "
      "ordering) and one product per color.\n"
      "\n"
      ">>> S = tf.sparse_jacobian(lambda x: x * x)(np.array([1.0, 2.0, 3.0]))\n"
      ">>> S.nnz, S.indptr.tolist(), S.indices.tolist(), S.data.numpy().tolist()\n"
      "(3, [0, 1, 2, 3], [0, 1, 2], [2.0, 4.0, 6.0])\n";
  m.def("sparse_jacobian",
        [](py::function f, std::size_t argnum, const std::string& mode, const std::string& ordering, std::int64_t max_nonzeros) {
          return PySparse(std::move(f), options_of(argnum, mode, ordering, max_nonzeros), false);
        },
        py::arg("f"), py::arg("argnum") = 0, py::arg("mode") = "auto", py::arg("ordering") = "SMALLEST_LAST",
        py::arg("max_nonzeros") = std::int64_t{1} << 28, jac_doc);
  m.def("sparse_hessian",
        [](py::function f, std::size_t argnum, const std::string& ordering, std::int64_t max_nonzeros) {
          return PySparse(std::move(f), options_of(argnum, "auto", ordering, max_nonzeros), true);
        },
        py::arg("f"), py::arg("argnum") = 0, py::arg("ordering") = "SMALLEST_LAST", py::arg("max_nonzeros") = std::int64_t{1} << 28,
        "The Hessian of a real scalar f with respect to args[argnum] as a symmetric SparseMatrix (both triangles), from a "
        "star coloring of its pattern and one Hessian-vector product per color.\n"
        "\n"
        ">>> H = tf.sparse_hessian(lambda x: tf.sum(x ** 3))(np.array([1.0, 2.0]))\n"
        ">>> H.to_dense().numpy().tolist()\n"
        "[[6.0, 0.0], [0.0, 12.0]]\n");
  // The patterns alone: one binding per detector, the same parameters.
  using PatternOf = std::shared_ptr<const SparsityPattern> (*)(const detail::TracedFunction&, const Tensors&,
                                                               const SparseOptions&);
  auto pattern = [&m](const char* name, PatternOf of, const char* doc) {
    const std::string who = std::string("tenferro.") + name;
    m.def(name, [of, who](py::function f, const py::args& args, std::size_t argnum, std::int64_t max_nonzeros) {
      return std::const_pointer_cast<SparsityPattern>(
          of(traced_function(std::move(f)), tensors_of(args, who), options_of(argnum, "auto", "SMALLEST_LAST", max_nonzeros)));
    }, py::arg("f"), py::kw_only(), py::arg("argnum") = 0, py::arg("max_nonzeros") = std::int64_t{1} << 28, doc);
  };
  pattern("jacobian_sparsity", &detail::jacobian_sparsity_of,
          "``jacobian_sparsity(f, *args, argnum=0)``: the structural sparsity pattern of f's Jacobian at these "
          "arguments' types.\n"
          "\n"
          ">>> pattern = tf.jacobian_sparsity(lambda x: x[1:] - x[:-1], np.zeros(3))\n"
          ">>> pattern.shape, pattern.nnz, (0, 1) in pattern, (0, 2) in pattern\n"
          "((2, 3), 4, True, False)\n");
  pattern("hessian_sparsity", &detail::hessian_sparsity_of,
          "``hessian_sparsity(f, *args, argnum=0)``: the structural sparsity pattern of a scalar f's Hessian.\n"
          "\n"
          ">>> pattern = tf.hessian_sparsity(lambda x: tf.sum(x * x), np.zeros(3))\n"
          ">>> pattern.shape, pattern.nnz\n"
          "((3, 3), 3)\n");
}

}  // namespace tenferro::python
