// Python: the optimizers of tenferro/optim.hpp on flat lists of values (the package's
// tenferro.optim flattens and rebuilds the trees). Each call coerces its values with one
// Operands (module.hpp): inside a traced function they are recorded, on eager tensors they run
// with history, on arrays and Tensors they run at once and return Tensors.
#include "module.hpp"

namespace tenferro::python {

namespace {

namespace opt = tenferro::optim;

/// A learning rate given from Python: a number, a Schedule, or a callable of the step count (an
/// i64 scalar value) returning an f64 scalar value.
opt::Schedule schedule_of(const py::handle& lr) {
  if (py::isinstance<opt::Schedule>(lr)) return lr.cast<opt::Schedule>();
  if (PyFloat_Check(lr.ptr()) || (PyLong_Check(lr.ptr()) && !PyBool_Check(lr.ptr()))) return opt::Schedule(lr.cast<double>());
  if (PyCallable_Check(lr.ptr())) {
    py::function f = py::reinterpret_borrow<py::function>(lr);
    return opt::Schedule([f](const Traced& count) {
      py::object r = f(count);
      Operands ops("tenferro.optim schedule");
      ops.add(py::cast(count));
      ops.add(r);
      return ops.get(r);
    }, "python schedule");
  }
  throw py::type_error("tenferro.optim: lr must be a number, a tenferro.optim schedule or a callable of the step "
                       "count, not a " + std::string(py::str(py::type::of(lr))));
}

py::object list_result(const Operands& ops, const TracedList& values) {
  py::list out;
  for (const Traced& v : values) out.append(py::cast(v));
  return ops.result(std::move(out));
}

}  // namespace

void bind_optim(py::module_& m) {
  py::class_<opt::Schedule>(m, "Schedule",
                            "A learning rate as a function of the step count (tenferro.optim).\n"
                            "\n"
                            ">>> s = tf.optim.cosine_decay(1.0, 10)\n"
                            ">>> s.name, round(s.at(0), 12), round(s.at(10), 12)\n"
                            "('cosine_decay', 1.0, 0.0)\n")
      .def("__call__", lift("optim.Schedule", +[](const opt::Schedule& s, const Traced& count) { return s(count); }, "vi"),
           py::arg("count"), "The rate (an f64 scalar) after `count` steps.")
      .def("at", &opt::Schedule::at, py::arg("count"), "The rate after `count` steps, as a float.")
      .def_property_readonly("name", &opt::Schedule::name);
  m.def("_exponential_decay", &opt::exponential_decay, py::arg("lr"), py::arg("rate"), py::arg("transition_steps"),
        py::arg("staircase") = false);
  m.def("_cosine_decay", &opt::cosine_decay, py::arg("lr"), py::arg("decay_steps"), py::arg("alpha") = 0.0);
  m.def("_warmup_cosine_decay", &opt::warmup_cosine_decay, py::arg("peak"), py::arg("warmup_steps"),
        py::arg("decay_steps"), py::arg("end_value") = 0.0);
  m.def("_inverse_time_decay", &opt::inverse_time_decay, py::arg("lr"), py::arg("transition_steps"),
        py::arg("power") = 1.0);

  py::class_<opt::Optimizer>(m, "_Optimizer")
      .def_property_readonly("name", &opt::Optimizer::name)
      .def("init", [](const opt::Optimizer& o, const py::list& params) {
        Operands ops("tenferro.optim." + o.name() + ".init");
        ops.add_list(params);
        return list_result(ops, o.init(ops.get_list(params)));
      }, py::arg("params"))
      .def("step", [](const opt::Optimizer& o, const py::list& params, const py::list& grads, const py::list& state) {
        Operands ops("tenferro.optim." + o.name() + ".step");
        ops.add_list(params);
        ops.add_list(grads);
        ops.add_list(state, Slot::Index);
        auto [p, s] = o.step(ops.get_list(params), ops.get_list(grads), ops.get_list(state, Slot::Index));
        return py::make_tuple(list_result(ops, p), list_result(ops, s));
      }, py::arg("params"), py::arg("grads"), py::arg("state"));
  m.def("_sgd", [](const py::object& lr, double momentum, bool nesterov, double weight_decay) {
    return opt::sgd({schedule_of(lr), momentum, nesterov, weight_decay});
  }, py::arg("lr"), py::arg("momentum"), py::arg("nesterov"), py::arg("weight_decay"));
  m.def("_adam", [](const py::object& lr, double b1, double b2, double eps, double weight_decay, bool decoupled) {
    if (decoupled) return opt::adamw({schedule_of(lr), b1, b2, eps, weight_decay});
    return opt::adam({schedule_of(lr), b1, b2, eps, weight_decay});
  }, py::arg("lr"), py::arg("b1"), py::arg("b2"), py::arg("eps"), py::arg("weight_decay"), py::arg("decoupled"));

  py::class_<opt::LbfgsResult>(m, "_LbfgsResult")
      .def_readonly("x", &opt::LbfgsResult::x)
      .def_readonly("value", &opt::LbfgsResult::value)
      .def_readonly("grad", &opt::LbfgsResult::grad)
      .def_readonly("iterations", &opt::LbfgsResult::iterations)
      .def_readonly("evaluations", &opt::LbfgsResult::evaluations)
      .def_readonly("converged", &opt::LbfgsResult::converged)
      .def_readonly("message", &opt::LbfgsResult::message);
  m.def("_lbfgs", [](py::function f, const py::list& x0, int history, int max_iter, double gtol, double ftol, double c1,
                     double c2, int max_linesearch) {
    Tensors xs;
    for (const auto& x : x0) xs.push_back(to_tensor(x, "tenferro.optim.lbfgs x0"));
    return opt::detail::lbfgs_of(traced_function(std::move(f)), xs,
                                 opt::LbfgsOptions{history, max_iter, gtol, ftol, c1, c2, max_linesearch});
  }, py::arg("f"), py::arg("x0"), py::arg("history"), py::arg("max_iter"), py::arg("gtol"), py::arg("ftol"),
     py::arg("c1"), py::arg("c2"), py::arg("max_linesearch"));
}

}  // namespace tenferro::python
