// Python: tenferro::distributed (tenferro/distributed.hpp) over an mpi4py communicator, built when
// the component tenferro::mpi is. A communicator is any object with py2f() (mpi4py's Comm: its
// Fortran handle, which MPI_Comm_f2c turns back into the MPI_Comm of the same process) or that
// integer handle itself. The package's tenferro.distributed wraps these for trees.
#include "module.hpp"
#include "tenferro/distributed.hpp"

namespace tenferro::python {

namespace {

namespace dist = tenferro::distributed;

MPI_Comm comm_of(const py::handle& comm, const char* who) {
  if (py::hasattr(comm, "py2f")) return MPI_Comm_f2c(comm.attr("py2f")().cast<MPI_Fint>());
  if (PyLong_Check(comm.ptr()) && !PyBool_Check(comm.ptr())) return MPI_Comm_f2c(comm.cast<MPI_Fint>());
  throw py::type_error(std::string(who) + ": the communicator must be an mpi4py communicator (mpi4py.MPI.Comm) or "
                       "its Fortran handle, not a " + std::string(py::str(py::type::of(comm))));
}

/// f with the module's errors raised inside it (a tf.ShapeError from an operation of the Python
/// function) turned back into their C++ types, so that distributed::agree hands every rank the
/// error's own type rather than a generic one.
detail::TracedFunction keeping_error_types(detail::TracedFunction f) {
  return [f = std::move(f)](const std::vector<Traced>& args) {
    try {
      return f(args);
    } catch (py::error_already_set& e) {
      const py::module_ module = py::module_::import("tenferro._tenferro");
      const std::string message = py::str(e.value());
      if (e.matches(module.attr("ShapeError"))) throw ShapeError(message);
      if (e.matches(module.attr("DTypeError"))) throw DTypeError(message);
      if (e.matches(module.attr("ValueError"))) throw ValueError(message);
      throw;
    }
  };
}

Tensors tensors_of(const py::handle& seq, const std::string& who) {
  Tensors out;
  for (const auto& x : seq) out.push_back(to_tensor(x, who + " " + std::to_string(out.size())));
  return out;
}

}  // namespace

void bind_distributed(py::module_& m) {
  py::module_ d = m.def_submodule("_distributed", "tenferro::distributed over MPI (see tenferro.distributed)");
  d.def("rank_and_size", [](const py::object& comm) {
    return dist::rank_and_size(comm_of(comm, "tenferro.distributed"), "tenferro.distributed");
  }, py::arg("comm"));
  d.def("shard", [](const py::object& comm, const py::object& batch) {
    return dist::shard(comm_of(comm, "tenferro.distributed.shard"), to_tensor(batch, "tenferro.distributed.shard"));
  }, py::arg("comm"), py::arg("batch"));
  d.def("einsum", [](const py::object& comm, const std::string& subscripts, const py::tuple& operands,
                     const std::optional<double>& memory_limit) {
    tn::Options options;
    options.path.memory_limit = memory_limit;
    dist::EinsumSplit split;
    Tensor out = dist::einsum(comm_of(comm, "tenferro.distributed.einsum"), subscripts,
                              tensors_of(operands, "tenferro.distributed.einsum operand"), options, split);
    return py::make_tuple(out, split.slices, split.begin, split.end);
  }, py::arg("comm"), py::arg("subscripts"), py::arg("operands"), py::arg("memory_limit") = py::none());
  d.def("einsum_vjp", [](const py::object& comm, const std::string& subscripts, const py::tuple& operands,
                         const py::object& cotangent, const std::optional<double>& memory_limit) {
    tn::Options options;
    options.path.memory_limit = memory_limit;
    auto [value, grads] = dist::einsum_vjp(comm_of(comm, "tenferro.distributed.einsum_vjp"), subscripts,
                                           tensors_of(operands, "tenferro.distributed.einsum_vjp operand"),
                                           to_tensor(cotangent, "tenferro.distributed.einsum_vjp cotangent"), options);
    py::tuple g(grads.size());
    for (std::size_t i = 0; i < grads.size(); ++i) g[i] = py::cast(grads[i]);
    return py::make_tuple(value, g);
  }, py::arg("comm"), py::arg("subscripts"), py::arg("operands"), py::arg("cotangent"), py::arg("memory_limit") = py::none());
  py::class_<dist::DataParallelValueAndGrad>(d, "DataParallelValueAndGrad")
      .def("__call__", [](const dist::DataParallelValueAndGrad& vg, const py::list& params, const py::list& data) {
        auto [loss, grads] = vg(tensors_of(params, "tenferro.distributed.value_and_grad parameter"),
                                tensors_of(data, "tenferro.distributed.value_and_grad data"));
        py::tuple g(grads.size());
        for (std::size_t i = 0; i < grads.size(); ++i) g[i] = py::cast(grads[i]);
        return py::make_tuple(loss, g);
      }, py::arg("params"), py::arg("data"));
  d.def("value_and_grad", [](const py::object& comm, py::function f, std::size_t num_params) {
    return dist::DataParallelValueAndGrad(comm_of(comm, "tenferro.distributed.value_and_grad"),
                                          keeping_error_types(traced_function(std::move(f))), num_params);
  }, py::arg("comm"), py::arg("f"), py::arg("num_params"));
}

}  // namespace tenferro::python
