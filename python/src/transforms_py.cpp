// Python: the functional transforms over Python callables of Traced values, and jit. A
// transformed callable traces its function once per argument signature (dtypes and shapes) and
// afterwards runs compiled programs, like the C++ ones (tenferro/transforms.hpp); arguments may be
// Tensors, NumPy arrays or Python scalars (converted to Tensors), results are Tensors.
#include <map>
#include <mutex>

#include "module.hpp"

namespace tenferro::python {

namespace {

enum class Mode { Grad, ValueAndGrad, JacFwd, JacRev, Hessian };

/// The arguments of a call of the transformed function `who` (errors name it and the position).
Tensors tensors_of(const py::args& args, const std::string& who) {
  Tensors out;
  for (const auto& a : args) out.push_back(to_tensor(a, who + " argument " + std::to_string(out.size())));
  return out;
}

Tensors tensors_of_sequence(const py::handle& seq, const char* what) {
  if (!py::isinstance<py::tuple>(seq) && !py::isinstance<py::list>(seq)) {
    throw py::type_error(std::string(what) + "s: expected a tuple or list of tensors, got a " +
                         std::string(py::str(py::type::of(seq))));
  }
  Tensors out;
  for (const auto& a : seq) out.push_back(to_tensor(a, std::string(what) + " " + std::to_string(out.size())));
  return out;
}

const char* name_of(Mode mode) {
  switch (mode) {
    case Mode::Grad: return "tenferro.grad";
    case Mode::ValueAndGrad: return "tenferro.value_and_grad";
    case Mode::JacFwd: return "tenferro.jacfwd";
    case Mode::JacRev: return "tenferro.jacrev";
    case Mode::Hessian: return "tenferro.hessian";
  }
  return "tenferro";
}

py::tuple tuple_of(const Tensors& ts) {
  py::tuple t(ts.size());
  for (std::size_t i = 0; i < ts.size(); ++i) t[i] = py::cast(ts[i]);
  return t;
}

/// grad, value_and_grad, jacfwd, jacrev, hessian of a Python function. `argnums` is an int or a
/// tuple of ints (grad and value_and_grad; a tuple gives a tuple of gradients).
class Transformed {
 public:
  Transformed(py::function f, Mode mode, const py::object& argnums) : mode_(mode) {
    if (py::isinstance<py::int_>(argnums)) {
      argnums_.push_back(argnums.cast<std::size_t>());
    } else {
      argnums_ = argnums.cast<std::vector<std::size_t>>();
      many_ = true;
      if (argnums_.empty()) throw py::value_error("argnums is empty");
      if (mode != Mode::Grad && mode != Mode::ValueAndGrad) {
        throw py::value_error("jacfwd, jacrev and hessian take one argnum (an int)");
      }
    }
    impl_ = std::make_unique<detail::TransformedFunction>(traced_function(std::move(f)), argnums_);
  }

  /// On Traced arguments (inside a traced function: vmap(grad(f)), vmap(jacfwd(f)), jit): the
  /// gradient program (the batched Jacobian program) recorded into their trace; the other
  /// arguments become constants of it.
  py::object call_traced(const py::args& args) const {
    Operands operands(name_of(mode_));
    for (const auto& a : args) operands.add(a);
    std::vector<Traced> xs;
    for (const auto& a : args) xs.push_back(operands.get(a));
    if (mode_ == Mode::JacFwd || mode_ == Mode::JacRev || mode_ == Mode::Hessian) {
      using K = detail::TransformedFunction::JacobianKind;
      return py::cast(impl_->jacobian_traced(xs, mode_ == Mode::JacFwd ? K::Forward : mode_ == Mode::JacRev ? K::Reverse : K::Hessian));
    }
    auto [value, grads] = impl_->value_and_grads_traced(xs);
    py::object g;
    if (many_) {
      py::tuple t(grads.size());
      for (std::size_t i = 0; i < grads.size(); ++i) t[i] = py::cast(grads[i]);
      g = t;
    } else {
      g = py::cast(grads.at(0));
    }
    if (mode_ == Mode::Grad) return g;
    return py::make_tuple(value, g);
  }

  /// For functions that return (loss, aux...): output 0 differentiated, the others (detached by
  /// the caller) returned as they are: (value, gradients for argnums, aux values).
  py::tuple call_aux(const py::args& args) const {
    const Tensors xs = tensors_of(args, name_of(mode_));
    auto [value, grads, aux] = impl_->value_grads_aux(xs);
    return py::make_tuple(value, tuple_of(grads), tuple_of(aux));
  }

  py::object call(const py::args& args) const {
    bool traced = false;
    for (const auto& a : args) traced = traced || py::isinstance<Traced>(a);
    if (traced) return call_traced(args);
    const Tensors xs = tensors_of(args, name_of(mode_));
    switch (mode_) {
      case Mode::Grad:
        if (!many_) return py::cast(impl_->grad(xs));
        return tuple_of(impl_->value_and_grads(xs).second);
      case Mode::ValueAndGrad:
        if (!many_) {
          auto [v, g] = impl_->value_and_grad(xs);
          return py::make_tuple(v, g);
        } else {
          auto [v, gs] = impl_->value_and_grads(xs);
          return py::make_tuple(v, tuple_of(gs));
        }
      case Mode::JacFwd: return py::cast(impl_->jacfwd(xs));
      case Mode::JacRev: return py::cast(impl_->jacrev(xs));
      case Mode::Hessian: return py::cast(impl_->hessian(xs));
    }
    return py::none();
  }

 private:
  Mode mode_;
  std::vector<std::size_t> argnums_;
  bool many_ = false;
  std::unique_ptr<detail::TransformedFunction> impl_;
};

/// vmap(f): f mapped over a batch axis of its arguments (tenferro/vmap.hpp). On Traced arguments it
/// records the batched program into their trace; on tensors or arrays it traces and runs it.
class Vmapped {
 public:
  Vmapped(py::function f, VmapOptions options) : f_(traced_function(std::move(f))), options_(std::move(options)) {}

  py::object call(const py::args& args) const {
    bool traced = false;
    for (const auto& a : args) traced = traced || py::isinstance<Traced>(a);
    if (traced) {
      std::vector<Traced> xs;
      for (const auto& a : args) {
        if (!py::isinstance<Traced>(a)) {
          throw py::type_error("tenferro.vmap: argument " + std::to_string(xs.size()) +
                               " is not Traced while others are; pass all Traced values or all arrays");
        }
        xs.push_back(a.cast<Traced>());
      }
      return results(detail::vmap_traced(f_, std::span<const Traced>(xs), options_));
    }
    const Tensors xs = tensors_of(args, "tenferro.vmap");
    const auto f = f_;
    const auto options = options_;
    const detail::TracedFunction batched = [f, options](const std::vector<Traced>& in) {
      return detail::vmap_traced(f, std::span<const Traced>(in), options);
    };
    const Tensors out = Program(detail::trace_function(batched, detail::types_of(xs))).run(xs);
    if (out.size() == 1) return py::cast(out[0]);
    return tuple_of(out);
  }

 private:
  static py::object results(const std::vector<Traced>& out) {
    if (out.size() == 1) return py::cast(out[0]);
    py::tuple t(out.size());
    for (std::size_t i = 0; i < out.size(); ++i) t[i] = py::cast(out[i]);
    return t;
  }
  detail::TracedFunction f_;
  VmapOptions options_;
};

/// vmap's axes from Python: an int or None for every argument (result), or a sequence of them.
std::vector<std::optional<std::int64_t>> axes_list(const py::object& axes) {
  std::vector<std::optional<std::int64_t>> out;
  if (axes.is_none()) return {std::nullopt};
  if (py::isinstance<py::int_>(axes)) return {axes.cast<std::int64_t>()};
  for (const auto& a : axes) {
    if (a.is_none()) {
      out.push_back(std::nullopt);
    } else {
      out.push_back(a.cast<std::int64_t>());
    }
  }
  return out;
}

/// jit(f): f traced once per argument signature and compiled; a call runs the program.
class Jit {
 public:
  explicit Jit(py::function f) : f_(std::move(f)) {}

  py::object call(const py::args& args) {
    const Tensors xs = tensors_of(args, "tenferro.jit");
    const std::vector<TensorType> types = detail::types_of(xs);
    auto it = programs_.find(types);
    if (it == programs_.end()) {
      it = programs_.emplace(types, Program(detail::trace_function(traced_function(f_), types))).first;
    }
    const Tensors out = it->second.run(xs);
    if (out.size() == 1) return py::cast(out[0]);
    return tuple_of(out);
  }

  std::string print(const py::args& args) {
    const Tensors xs = tensors_of(args, "tenferro.jit");
    return Program(detail::trace_function(traced_function(f_), detail::types_of(xs))).print();
  }

 private:
  struct TypesLess {
    bool operator()(const std::vector<TensorType>& a, const std::vector<TensorType>& b) const {
      return std::lexicographical_compare(a.begin(), a.end(), b.begin(), b.end(), [](const auto& x, const auto& y) {
        return std::tie(x.dtype, x.shape) < std::tie(y.dtype, y.shape);
      });
    }
  };
  py::function f_;
  std::map<std::vector<TensorType>, Program, TypesLess> programs_;
};

}  // namespace

void bind_transforms(py::module_& m) {
  py::class_<Transformed>(m, "Transformed",
                          "A transformed function (jacfwd, jacrev, hessian): call it on tensors or arrays.\n"
                          "\n"
                          ">>> j = tf.jacfwd(lambda x: 3.0 * x)\n"
                          ">>> j(np.array([1.0])).numpy().tolist()\n"
                          "[[3.0]]\n")
      .def("__call__", &Transformed::call)
      .def("call_aux", &Transformed::call_aux,
           "(loss, gradients, aux) of a function returning a loss and detached auxiliary values.");
  py::class_<Jit>(m, "Jit",
                  "A function compiled once per argument signature (what the C++ side of tenferro.jit returns).")
      .def("__call__", &Jit::call)
      .def("print", &Jit::print, "The traced graph for these arguments, as text.");
  auto transform = [&m](const char* name, Mode mode, const char* doc) {
    m.def(name, [mode](py::function f, const py::object& argnums) { return Transformed(std::move(f), mode, argnums); },
          py::arg("f"), py::arg("argnums") = 0, doc);
  };
  transform("grad", Mode::Grad, "d f / d args[argnums] of a function returning a real scalar.");
  transform("value_and_grad", Mode::ValueAndGrad, "(f(args), d f / d args[argnums]).");
  transform("jacfwd", Mode::JacFwd,
            "Jacobian of f's output with respect to args[argnums], forward mode.\n"
            "\n"
            "Its shape is the output's shape followed by the argument's.\n"
            "\n"
            ">>> tf.jacfwd(lambda x: x ** 2)(np.array([1.0, 2.0])).numpy().tolist()\n"
            "[[2.0, 0.0], [0.0, 4.0]]\n");
  transform("jacrev", Mode::JacRev,
            "Jacobian of f's output with respect to args[argnums], reverse mode.\n"
            "\n"
            "Its shape is the output's shape followed by the argument's.\n"
            "\n"
            ">>> tf.jacrev(lambda x, y: x * y, argnums=1)(np.array([2.0, 3.0]), np.array([1.0, "
            "1.0])).numpy().tolist()\n"
            "[[2.0, 0.0], [0.0, 3.0]]\n");
  transform("hessian", Mode::Hessian,
            "Hessian of a real scalar f with respect to args[argnums].\n"
            "\n"
            ">>> tf.hessian(lambda x: tf.sum(x ** 3))(np.array([1.0, 2.0])).numpy().tolist()\n"
            "[[6.0, 0.0], [0.0, 12.0]]\n");
  m.def("jit", [](py::function f) { return Jit(std::move(f)); }, py::arg("f"),
        "f compiled once per argument signature (tenferro.jit, over trees, calls it).");
  py::class_<Vmapped>(m, "Vmapped", "A function mapped over a batch axis of its arguments.")
      .def("__call__", &Vmapped::call);
  m.def("_vmap", [](py::function f, py::object in_axes, py::object out_axes, py::object axis_size, std::size_t nargs,
                    bool loop_fallback) {
    VmapOptions options;
    options.loop_fallback = loop_fallback;
    // One entry stands for every argument (an int or None), as in JAX.
    auto in = axes_list(in_axes);
    if (!py::isinstance<py::tuple>(in_axes) && !py::isinstance<py::list>(in_axes)) in.assign(nargs, in.at(0));
    options.in_axes = std::move(in);
    if (!out_axes.is_none() && !py::isinstance<py::int_>(out_axes)) {
      for (const auto& a : out_axes) options.out_axes.push_back(a.cast<std::int64_t>());
    } else if (py::isinstance<py::int_>(out_axes) && out_axes.cast<std::int64_t>() != 0) {
      options.out_axes = {out_axes.cast<std::int64_t>()};
    }
    if (!axis_size.is_none()) options.axis_size = axis_size.cast<std::int64_t>();
    return Vmapped(std::move(f), std::move(options));
  }, py::arg("f"), py::arg("in_axes"), py::arg("out_axes"), py::arg("axis_size"), py::arg("nargs"),
     py::arg("loop_fallback") = true);
  m.def("jvp", [](py::function f, const py::object& primals, const py::object& tangents) {
    auto [y, t] = detail::jvp_of(traced_function(std::move(f)), tensors_of_sequence(primals, "tenferro.jvp primal"),
                         tensors_of_sequence(tangents, "tenferro.jvp tangent"));
    return py::make_tuple(y, t);
  }, py::arg("f"), py::arg("primals"), py::arg("tangents"),
     "(f(primals), J tangents): a forward-mode derivative along the tangents (tuples, one per primal).\n"
     "\n"
     ">>> y, t = tf.jvp(lambda x: x ** 2, (np.array([3.0]),), (np.array([1.0]),))\n"
     ">>> y.numpy().tolist(), t.numpy().tolist()\n"
     "([9.0], [6.0])\n");
  m.def("vjp", [](py::function f, const py::object& primals, const py::object& cotangent) {
    auto [y, cts] = detail::vjp_of(traced_function(std::move(f)), tensors_of_sequence(primals, "tenferro.vjp primal"),
                           to_tensor(cotangent, "tenferro.vjp cotangent"));
    return py::make_tuple(y, tuple_of(cts));
  }, py::arg("f"), py::arg("primals"), py::arg("cotangent"),
     "(f(primals), J^* cotangent): a reverse-mode derivative, one cotangent result per primal.\n"
     "\n"
     ">>> y, (ct,) = tf.vjp(lambda x: x ** 2, (np.array([3.0]),), np.array([1.0]))\n"
     ">>> y.numpy().tolist(), ct.numpy().tolist()\n"
     "([9.0], [6.0])\n");
  m.def("hvp", [](py::function f, const py::object& primals, const py::object& directions) {
    return tuple_of(detail::hvp_of(traced_function(std::move(f)), tensors_of_sequence(primals, "tenferro.hvp primal"),
                                   tensors_of_sequence(directions, "tenferro.hvp direction")));
  }, py::arg("f"), py::arg("primals"), py::arg("directions"),
     "The Hessian of the real scalar f at primals applied to directions (forward over reverse), one per primal.\n"
     "\n"
     ">>> (h,) = tf.hvp(lambda x: tf.sum(x ** 3), (np.array([1.0, 2.0]),), (np.array([1.0, 0.0]),))\n"
     ">>> h.numpy().tolist()\n"
     "[6.0, 0.0]\n");
}

}  // namespace tenferro::python
