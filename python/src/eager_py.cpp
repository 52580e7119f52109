// Python: eager tensors (tenferro/eager.hpp) as PyTorch's tensors, and the concrete side of Tensor.
//
//   w = tf.EagerTensor(np.ones((3, 2)), requires_grad=True)
//   loss = tf.sum(tf.tanh(x @ w))      # runs now, records what it did
//   loss.backward()                    # w.grad holds d loss / d w
//
// Every function of the module takes EagerTensors (module.hpp, Operands): called with one, it runs
// at once on the calling thread's eager trace and returns EagerTensors; gradients flow to the
// leaves that require grad. Called with concrete values only (Tensors, NumPy arrays, sequences,
// scalars) it runs the same way without history and returns Tensors. Tensor and EagerTensor both
// take Python's concrete conversions (float(), int(), bool(), len(), iteration, numpy.asarray).
#include "module.hpp"

namespace tenferro::python {

namespace {

/// The single element of `t` as a Python number; ValueError naming `who` for another size
/// (float(x) of a [3] tensor is ambiguous, as NumPy and PyTorch say).
py::object item_of(const Tensor& t, const char* who) {
  if (t.numel() != 1) {
    throw py::value_error(std::string(who) + ": a tensor of shape " + t.type().to_string() +
                          " has " + std::to_string(t.numel()) + " elements; only one-element tensors convert");
  }
  if (is_complex(t.dtype())) return py::cast(t.element(0));
  if (t.dtype() == DType::I64) return py::int_(static_cast<std::int64_t>(t.element(0).real()));
  if (t.dtype() == DType::Bool) return py::bool_(t.element(0).real() != 0.0);
  return py::float_(t.element(0).real());
}

/// float(), int(), bool(), complex(), operator.index(), len() and iteration for a class whose
/// instances have a concrete value (`value_of`).
template <class C, class ValueOf>
void bind_concrete_conversions(py::class_<C>& cls, ValueOf value_of) {
  cls.def("item", [value_of](const C& x) { return item_of(value_of(x), "item()"); },
          "The single element as a Python number (float, int, bool or complex).\n"
          "\n"
          ">>> tf.Tensor(np.array([2.5])).item(), tf.Tensor(np.array(3)).item(), tf.Tensor(np.array(True)).item()\n"
          "(2.5, 3, True)\n")
      .def("__float__", [value_of](const C& x) { return py::float_(item_of(value_of(x), "float()")); })
      .def("__int__", [value_of](const C& x) { return py::int_(item_of(value_of(x), "int()")); })
      .def("__complex__", [value_of](const C& x) { return item_of(value_of(x), "complex()").template cast<c128>(); })
      .def("__bool__", [value_of](const C& x) {
        const py::object v = item_of(value_of(x), "bool() (an if, while, and, or, not)");
        return PyObject_IsTrue(v.ptr()) == 1;
      })
      .def("__index__", [value_of](const C& x) {
        const Tensor& t = value_of(x);
        if (t.dtype() != DType::I64 && t.dtype() != DType::Bool) {
          throw py::type_error("operator.index(): only integer tensors are indices, not " + t.type().to_string());
        }
        return item_of(t, "operator.index()").template cast<std::int64_t>();
      })
      .def("__len__", [value_of](const C& x) {
        const Tensor& t = value_of(x);
        if (t.rank() == 0) throw py::type_error("len() of a 0-d tensor (" + t.type().to_string() + ")");
        return t.shape()[0];
      }, "The length of the leading axis.")
      .def("__iter__", [](const py::object& self) {
        // x[0], x[1], ...: through __getitem__, so an EagerTensor's rows keep their history.
        py::list rows;
        const auto n = py::len(self);
        for (std::size_t i = 0; i < n; ++i) rows.append(self.attr("__getitem__")(i));
        return rows.attr("__iter__")();
      }, "The slices along the leading axis.");
}

/// torch.no_grad as a context manager: within it, eager operations record no history.
class NoGradScope {
 public:
  void enter() {
    if (scope_) throw py::value_error("tenferro.no_grad: the context is already entered");
    scope_ = std::make_unique<NoGrad>();
  }
  void exit() { scope_.reset(); }

 private:
  std::unique_ptr<NoGrad> scope_;
};

}  // namespace

void bind_eager(py::module_& m) {
  py::class_<Tensor> tensor = py::reinterpret_borrow<py::class_<Tensor>>(m.attr("Tensor"));
  bind_concrete_conversions(tensor, [](const Tensor& t) -> const Tensor& { return t; });
  bind_tensor_methods(m, "Tensor");

  py::class_<EagerTensor> eager(
      m, "EagerTensor",
      "A tensor whose operations run at once and record what they did, so that backward() fills .grad "
      "(PyTorch's tensors).\n"
      "\n"
      "EagerTensor(data, requires_grad=False) copies nothing it can share: data is a Tensor, NumPy array, "
      "nested sequence or Python scalar.\n"
      "\n"
      ">>> w = tf.EagerTensor(np.array([1.0, 2.0]), requires_grad=True)\n"
      ">>> loss = tf.sum(w * w)\n"
      ">>> loss\n"
      "EagerTensor(tensor(f64[], 5), requires_grad=True)\n"
      ">>> loss.backward()\n"
      ">>> w.grad.numpy().tolist()\n"
      "[2.0, 4.0]\n");
  // NumPy defers to EagerTensor's reflected operators (ndarray * e keeps the history).
  eager.attr("__array_ufunc__") = py::none();
  eager.def(py::init([](const py::handle& data, bool requires_grad) {
         if (py::isinstance<EagerTensor>(data)) {
           return EagerTensor(data.cast<const EagerTensor&>().value(), requires_grad);
         }
         return EagerTensor(to_tensor(data, "tenferro.EagerTensor"), requires_grad);
       }), py::arg("data"), py::arg("requires_grad") = false)
      .def_property_readonly("shape", [](const EagerTensor& e) { return py::tuple(py::cast(e.shape())); })
      .def_property_readonly("dtype", [](const EagerTensor& e) { return std::string(dtype_name(e.dtype())); })
      .def_property_readonly("ndim", [](const EagerTensor& e) { return e.shape().size(); })
      .def_property_readonly("value", &EagerTensor::value, "The values, as a Tensor (no history).")
      .def_property("requires_grad", &EagerTensor::requires_grad, &EagerTensor::set_requires_grad,
                    "Whether backward() computes a gradient for this tensor (settable on leaves).")
      .def_property_readonly("is_leaf", &EagerTensor::is_leaf,
                             "True for tensors made from values (and detached ones), False for results.")
      .def_property_readonly("grad", [](const EagerTensor& e) -> py::object {
        EagerTensor g = e.grad();
        return g.defined() ? py::cast(g) : py::none();
      }, "The gradient that backward() accumulated (None before one reached this leaf).")
      .def("zero_grad", &EagerTensor::zero_grad,
           "Forgets the accumulated gradient.\n"
           "\n"
           ">>> e = tf.EagerTensor(np.array([1.0]), requires_grad=True)\n"
           ">>> tf.sum(e * e).backward()\n"
           ">>> e.grad.numpy().tolist()\n"
           "[2.0]\n"
           ">>> e.zero_grad()\n"
           ">>> e.grad is None\n"
           "True\n")
      .def("detach", &EagerTensor::detach,
           "The same values as a new leaf without history.\n"
           "\n"
           ">>> e = tf.EagerTensor(np.array([1.0]), requires_grad=True)\n"
           ">>> d = (e * 2.0).detach()\n"
           ">>> d.requires_grad, d.is_leaf, d.numpy().tolist()\n"
           "(False, True, [2.0])\n")
      .def("backward", [](const EagerTensor& e, const py::object& gradient, bool retain_graph, bool create_graph) {
        std::optional<Tensor> cotangent;
        if (!gradient.is_none()) cotangent = to_tensor(gradient, "tenferro.EagerTensor.backward gradient");
        e.backward(cotangent, BackwardOptions{retain_graph, create_graph});
      }, py::arg("gradient") = py::none(), py::arg("retain_graph") = false, py::arg("create_graph") = false,
         "Accumulates d self / d leaf into .grad of every leaf that requires grad.\n"
         "\n"
         "A real scalar needs no gradient argument; another tensor takes the cotangent (torch.Tensor.backward's "
         "gradient).\n"
         "\n"
         ">>> x = tf.EagerTensor(np.array([1.0, 2.0]), requires_grad=True)\n"
         ">>> (x * 3.0).backward(np.array([1.0, 10.0]))\n"
         ">>> x.grad.numpy().tolist()\n"
         "[3.0, 30.0]\n")
      .def("numpy", [](const EagerTensor& e) { return py::module_::import("numpy").attr("asarray")(py::cast(e.value())); },
           "A NumPy array sharing the values' memory (no history).")
      .def("__array__", [](const EagerTensor& e, const py::args&, const py::kwargs&) {
        return py::module_::import("numpy").attr("asarray")(py::cast(e.value()));
      })
      .def("__repr__", [](const EagerTensor& e) {
        return "EagerTensor(" + to_string(e.value()) + (e.requires_grad() ? ", requires_grad=True)" : ")");
      });
  bind_concrete_conversions(eager, [](const EagerTensor& e) -> const Tensor& { return e.value(); });
  bind_tensor_methods(m, "EagerTensor");

  py::class_<NoGradScope>(m, "no_grad",
                          "with tenferro.no_grad(): eager operations record no history (torch.no_grad).\n"
                          "\n"
                          "For an optimizer's update of parameters that require grad.\n"
                          "\n"
                          ">>> w = tf.EagerTensor(np.array([1.0]), requires_grad=True)\n"
                          ">>> tf.sum(w * w).backward()\n"
                          ">>> with tf.no_grad():\n"
                          "...     step = w - 0.1 * w.grad\n"
                          ">>> step.requires_grad, step.numpy().tolist()\n"
                          "(False, [0.8])\n")
      .def(py::init<>())
      .def("__enter__", [](NoGradScope& s) { s.enter(); })
      .def("__exit__", [](NoGradScope& s, const py::args&) { s.exit(); });

  // Constructors of concrete tensors (NumPy's names); dtype as astype names them.
  m.def("zeros", [](const Shape& shape, const std::string& dtype) {
    return Tensor::zeros(shape, dtype_named(dtype, "tenferro.zeros"));
  }, py::arg("shape"), py::arg("dtype") = "f64",
     "A tensor of zeros (numpy.zeros).\n"
     "\n"
     ">>> tf.zeros((2, 3)).shape, tf.zeros((2,), dtype=\"i64\").dtype\n"
     "((2, 3), 'i64')\n");
  m.def("ones", [](const Shape& shape, const std::string& dtype) {
    return Tensor::ones(shape, dtype_named(dtype, "tenferro.ones"));
  }, py::arg("shape"), py::arg("dtype") = "f64",
     "A tensor of ones (numpy.ones).\n"
     "\n"
     ">>> tf.ones((2,))\n"
     "tensor(f64[2], [1, 1])\n");
  m.def("full", [](const Shape& shape, double value, const std::string& dtype) {
    return Tensor::full(shape, value, dtype_named(dtype, "tenferro.full"));
  }, py::arg("shape"), py::arg("fill_value"), py::arg("dtype") = "f64",
     "A tensor of one value (numpy.full).\n"
     "\n"
     ">>> tf.full((2,), 7.0).numpy().tolist()\n"
     "[7.0, 7.0]\n");
}

}  // namespace tenferro::python
