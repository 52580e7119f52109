// Python: einsum and einsum_path (tenferro/einsum.hpp) with the path search's options as keywords:
//   optimize   "auto", "optimal", "dp", "greedy", "random_greedy", "treesa", "left_to_right", or an
//              explicit path: a list of (i, j) pairs in SSA form (ids n, n + 1, ... are results)
//   objective  "flops", "size" or "combined" (flops + size_weight * size)
//   memory_limit  the largest intermediate (elements): concrete einsum slices the contraction
//   repeats, seed  for random_greedy and treesa
//   semiring   "standard", "max_plus", "min_plus" or "max_times" (not differentiable)
// einsum's operands are operands as anywhere (module.hpp, Operands): traced ones record, eager
// ones run with history, concrete ones run the compiled contraction (cached per subscripts, types
// and options) and return a Tensor. einsum_path takes shapes (tuples) or tensors and returns the
// ContractionPath: its SSA steps, log2 flops and size, and the sliced labels.
#include "module.hpp"

namespace tenferro::python {

namespace {

tn::Optimizer optimizer_named(const std::string& name) {
  static const std::pair<const char*, tn::Optimizer> names[] = {
      {"auto", tn::Optimizer::Auto},     {"optimal", tn::Optimizer::Optimal},
      {"dp", tn::Optimizer::DP},         {"greedy", tn::Optimizer::Greedy},
      {"random_greedy", tn::Optimizer::RandomGreedy}, {"treesa", tn::Optimizer::TreeSA},
      {"left_to_right", tn::Optimizer::LeftToRight}};
  for (const auto& [n, o] : names) {
    if (name == n) return o;
  }
  throw py::value_error("tenferro.einsum: optimize='" + name +
                        "'; expected auto, optimal, dp, greedy, random_greedy, treesa, left_to_right or a path");
}

tn::Options options_of(const py::object& optimize, const std::string& objective, double size_weight,
                       const std::optional<double>& memory_limit, int repeats, std::uint64_t seed,
                       const std::string& semiring) {
  tn::Options o;
  if (py::isinstance<py::str>(optimize)) {
    o.path.optimizer = optimizer_named(optimize.cast<std::string>());
  } else if (!optimize.is_none()) {
    o.explicit_path = optimize.cast<std::vector<std::pair<int, int>>>();
  }
  if (objective == "flops") {
    o.path.objective = tn::Objective::Flops;
  } else if (objective == "size") {
    o.path.objective = tn::Objective::Size;
  } else if (objective == "combined") {
    o.path.objective = tn::Objective::Combined;
  } else {
    throw py::value_error("tenferro.einsum: objective='" + objective + "'; expected flops, size or combined");
  }
  o.path.size_weight = size_weight;
  o.path.memory_limit = memory_limit;
  o.path.repeats = repeats;
  o.path.seed = seed;
  o.semiring = semiring_named(semiring, "tenferro.einsum");
  return o;
}

#define TENFERRO_EINSUM_OPTION_ARGS                                                                        \
  py::kw_only(), py::arg("optimize") = "auto", py::arg("objective") = "flops", py::arg("size_weight") = 1.0, \
      py::arg("memory_limit") = py::none(), py::arg("repeats") = 32, py::arg("seed") = 0,                     \
      py::arg("semiring") = "standard"

}  // namespace

void bind_einsum(py::module_& m) {
  m.def("_einsum", [](const std::string& subscripts, const py::tuple& operands, const py::object& optimize,
                      const std::string& objective, double size_weight, const std::optional<double>& memory_limit,
                      int repeats, std::uint64_t seed, const std::string& semiring) -> py::object {
    const tn::Options o = options_of(optimize, objective, size_weight, memory_limit, repeats, seed, semiring);
    Operands ops("tenferro.einsum");
    for (const auto& x : operands) ops.add(x);
    if (ops.runs_now() && std::none_of(operands.begin(), operands.end(),
                                       [](const py::handle& x) { return py::isinstance<EagerTensor>(x); })) {
      Tensors xs;  // concrete: the compiled (and, with a memory limit, sliced) contraction
      for (const auto& x : operands) xs.push_back(to_tensor(x, "tenferro.einsum"));
      return py::cast(einsum(subscripts, std::span<const Tensor>(xs), o));
    }
    std::vector<Traced> xs;
    for (const auto& x : operands) xs.push_back(ops.get(x));
    return ops.result(py::cast(einsum(subscripts, std::span<const Traced>(xs), o)));
  }, py::arg("subscripts"), py::arg("operands"), TENFERRO_EINSUM_OPTION_ARGS);

  py::class_<tn::ContractionPath>(m, "ContractionPath",
                                  "A contraction tree in SSA form and its cost (einsum_path).\n"
                                  "\n"
                                  ">>> path = tf.einsum_path(\"ij,jk->ik\", (2, 3), (3, 4))\n"
                                  ">>> path.steps, path.log2_flops > 0, path.sliced\n"
                                  "([(0, 1)], True, [])\n")
      .def_readonly("steps", &tn::ContractionPath::steps,
                    "(a, b) pairs: contract the tensors with SSA ids a and b into id n + k (n operands).")
      .def_readonly("log2_flops", &tn::ContractionPath::log2_flops)
      .def_readonly("log2_size", &tn::ContractionPath::log2_size)
      .def_readonly("sliced", &tn::ContractionPath::sliced, "The labels fixed per slice (empty: no slicing).")
      .def_readonly("slices", &tn::ContractionPath::slices)
      .def_readonly("log2_flops_unsliced", &tn::ContractionPath::log2_flops_unsliced)
      .def("__repr__", &tn::ContractionPath::print);
  m.def("einsum_path", [](const std::string& subscripts, const py::args& operands, const py::object& optimize,
                          const std::string& objective, double size_weight, const std::optional<double>& memory_limit,
                          int repeats, std::uint64_t seed, const std::string& semiring) {
    std::vector<Shape> shapes;
    for (const auto& x : operands) {
      if (py::isinstance<py::tuple>(x) && std::all_of(x.begin(), x.end(), [](const py::handle& d) { return PyLong_Check(d.ptr()); })) {
        shapes.push_back(x.cast<Shape>());
      } else if (py::hasattr(x, "shape")) {
        shapes.push_back(py::tuple(x.attr("shape")).cast<Shape>());
      } else {
        shapes.push_back(to_tensor(x, "tenferro.einsum_path").shape());
      }
    }
    return einsum_path(subscripts, std::span<const Shape>(shapes),
                       options_of(optimize, objective, size_weight, memory_limit, repeats, seed, semiring));
  }, py::arg("subscripts"), TENFERRO_EINSUM_OPTION_ARGS,
     "The contraction path einsum takes for operands of these shapes (tuples) or these tensors.\n"
     "\n"
     ">>> path = tf.einsum_path(\"ij,jk,kl->il\", (2, 3), (3, 4), (4, 5))\n"
     ">>> path.steps\n"
     "[(0, 1), (2, 3)]\n");
}

}  // namespace tenferro::python
