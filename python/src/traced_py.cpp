// Python: Traced values and the functions on them. Inside a function handed to a transform
// (grad, jvp, jit, ...) the arguments are Traced; arithmetic operators and the functions below
// record operations, exactly as the C++ API does (tenferro/traced.hpp, tenferro/math.hpp,
// tenferro/einsum.hpp, tenferro/semiring.hpp), with NumPy-style broadcasting and the same errors.
//
// Operands: wherever a function or operator takes a tensor, it takes a Traced value, a Tensor, a
// NumPy array, a nested sequence or a Python scalar, as long as one operand of the call is Traced
// (Operands, module.hpp). NumPy defers to Traced (__array_ufunc__ = None), so `ndarray * x` runs
// Traced.__rmul__ instead of building an object array.
//
// Concrete values: a Traced value has a type (dtype and shape) but no value while tracing. Python
// asking for one (bool(), int(), float(), complex(), operator.index, numpy.asarray; so `if`,
// `while`, `and`, `or`, `not` and indexing Python sequences) raises TracerConversionError instead
// of taking one branch for every argument. len() and iteration are those of the leading axis,
// whose length is known while tracing (as in JAX); both raise TypeError for 0-d values.
#include <climits>

#include "module.hpp"

namespace tenferro::python {

namespace {

using Axes = std::vector<std::int64_t>;

PyObject* tracer_conversion_class = nullptr;  // tenferro.TracerConversionError, alive as long as the module

std::string type_name(const py::handle& x) {
  const py::handle type = py::type::of(x);
  const std::string module = py::str(type.attr("__module__"));
  const std::string name = py::str(type.attr("__qualname__"));
  return module == "builtins" ? name : module + "." + name;
}

/// `what` (bool(), int(), ...) of a Traced value: TracerConversionError saying why and what instead.
[[noreturn]] void refuse_conversion(const Traced& t, const std::string& what) {
  throw_tracer_conversion(
      what + " of a Traced value (" + t.type().to_string() +
      "): its value is not known while tracing, since it depends on the arguments of the traced function; "
      "only its dtype and shape are. Python control flow (if, while, and, or, not) and Python numbers cannot "
      "use it, or every call would take the branch of the first trace. Record the choice instead: tf.where(pred, "
      "a, b) picks between values elementwise, tf.cond(pred, true_fun, false_fun, *operands) or tf.switch "
      "between computations, tf.while_loop loops on a traced condition. A value that should steer Python code "
      "must be concrete: pass it as a NumPy array the function closes over instead of a traced argument "
      "(tf.stop_gradient does not make a value concrete, it only cuts its derivative)");
}

/// An i64 scalar tensor of the Python int `x`; ValueError naming `fn` if it does not fit.
Tensor i64_scalar(const py::handle& x, const std::string& fn) {
  int overflow = 0;
  const long long v = PyLong_AsLongLongAndOverflow(x.ptr(), &overflow);
  if (overflow != 0) throw py::value_error(fn + ": the integer " + std::string(py::str(x)) + " does not fit i64");
  return Tensor::from(std::vector<std::int64_t>{static_cast<std::int64_t>(v)}, Shape{});
}

}  // namespace

/// One item of x[...]: an int, a slice, Ellipsis, None (new axis), a Traced or an array of
/// integer indices (a constant of the trace).
IndexItem index_item(const Traced& x, const py::handle& k) {
  if (PyBool_Check(k.ptr())) {
    // Python's bool is an int: x[True] would silently read x[1].
    throw py::type_error("tenferro.Traced.__getitem__: a bool index (NumPy's boolean masks have a data-dependent "
                         "shape); use tf.where, or an integer index");
  }
  if (py::isinstance<py::int_>(k)) return IndexItem(k.cast<std::int64_t>());
  if (py::isinstance<py::slice>(k)) {
    auto bound = [](const py::object& b) { return b.is_none() ? RangeBound(none) : RangeBound(b.cast<std::int64_t>()); };
    const py::object step = k.attr("step");
    return IndexItem(Range{bound(k.attr("start")), bound(k.attr("stop")), step.is_none() ? 1 : step.cast<std::int64_t>()});
  }
  if (k.is(py::ellipsis())) return IndexItem(ellipsis);
  if (k.is_none()) return IndexItem(newaxis);
  if (py::isinstance<Traced>(k)) return IndexItem(k.cast<Traced>());
  return IndexItem(constant(x, to_tensor(k, "tenferro.Traced.__getitem__")));
}

/// The DType named as Traced.astype and tf.astype name it ("f32", "f64", "c64", "c128", "i64",
/// "bool"); ValueError naming `fn` otherwise.
DType dtype_named(const std::string& name, const std::string& fn) {
  for (DType d : {DType::F32, DType::F64, DType::C64, DType::C128, DType::I64, DType::Bool}) {
    if (name == dtype_name(d)) return d;
  }
  throw py::value_error(fn + ": unknown dtype '" + name + "'; expected f32, f64, c64, c128, i64 or bool");
}

/// The Semiring named by semiring_name ("max_plus", "min_plus", "max_times", "standard");
/// ValueError naming `fn` otherwise.
Semiring semiring_named(const std::string& name, const std::string& fn) {
  for (Semiring s : {Semiring::MaxPlus, Semiring::MinPlus, Semiring::MaxTimes, Semiring::Standard}) {
    if (name == semiring_name(s)) return s;
  }
  throw py::value_error(fn + ": unknown semiring '" + name + "'; expected \"max_plus\", \"min_plus\" or \"max_times\"");
}

std::vector<std::int64_t> axes_of(const py::object& axis, std::size_t rank) {
  std::vector<std::int64_t> axes;
  if (axis.is_none()) {
    for (std::size_t i = 0; i < rank; ++i) axes.push_back(static_cast<std::int64_t>(i));
  } else if (py::isinstance<py::int_>(axis)) {
    axes.push_back(axis.cast<std::int64_t>());
  } else {
    axes = axis.cast<std::vector<std::int64_t>>();
  }
  return axes;
}

void throw_tracer_conversion(const std::string& message) {
  PyErr_SetString(tracer_conversion_class, message.c_str());
  throw py::error_already_set();
}

py::handle tracer_conversion_error() { return tracer_conversion_class; }

void Operands::add(const py::handle& x, Slot slot) {
  if (py::isinstance<Traced>(x)) {
    const auto& t = x.cast<const Traced&>();
    if (!traced_) like_ = t;
    traced_ = true;
    if (slot == Slot::Value && !value_dtype_) value_dtype_ = t.dtype();
  } else {
    eager_ = eager_ || py::isinstance<EagerTensor>(x);
    if (slot == Slot::Value && !concrete_dtype_) concrete_dtype_ = operand_dtype(x);
  }
  seen_.push_back(type_name(x));
}

void Operands::add_list(const py::handle& xs, Slot slot) {
  if (py::isinstance<py::list>(xs) || py::isinstance<py::tuple>(xs)) {
    for (const auto& x : xs) add(x, slot);
  } else {
    add(xs, slot);
  }
}

const Traced& Operands::like() const {
  if (!like_) {
    // Runs now: any value of the calling thread's eager trace receives the constants.
    like_ = static_cast<Traced>(EagerTensor(Tensor::scalar(0.0)));
  }
  return *like_;
}

Traced Operands::get(const py::handle& x, Slot slot) const {
  if (py::isinstance<Traced>(x)) return x.cast<Traced>();
  if (py::isinstance<EagerTensor>(x)) {
    const auto& e = x.cast<const EagerTensor&>();
    // Inside a trace an eager tensor without history to keep is a constant; one that requires
    // grad cannot join: its gradient would be lost.
    if (!traced_) return static_cast<Traced>(e);
    if (e.requires_grad()) {
      throw ValueError(fn_ + ": an EagerTensor that requires grad (" + e.type().to_string() +
                       ") beside a Traced value: inside a transformed function its gradient would be lost. Pass "
                       "it as an argument of the transformed function, or its detach() to use it as a constant");
    }
    return constant(like(), e.value());
  }
  const bool is_bool = PyBool_Check(x.ptr()), is_int = PyLong_Check(x.ptr()) && !is_bool;
  const bool is_float = PyFloat_Check(x.ptr()), is_cplx = PyComplex_Check(x.ptr());
  if (!is_bool && !is_int && !is_float && !is_cplx) {
    Tensor v = to_tensor(x, fn_);
    if (traced_) return constant(like(), std::move(v));
    return static_cast<Traced>(EagerTensor(std::move(v)));
  }
  // A Python scalar: a 0-d tensor typed by the slot (module.hpp, Slot).
  const std::string what = "the " + type_name(x) + " " + std::string(py::repr(x));
  auto make = [&](Tensor v) { return traced_ ? constant(like(), std::move(v)) : static_cast<Traced>(EagerTensor(std::move(v))); };
  switch (slot) {
    case Slot::Pred:
      if (!is_bool) throw py::type_error(fn_ + ": a predicate must be a bool or a bool tensor, got " + what);
      return make(Tensor::full({}, x.cast<bool>() ? 1.0 : 0.0, DType::Bool));
    case Slot::Index:
      if (!is_bool && !is_int) throw py::type_error(fn_ + ": an index must be an integer or an integer tensor, got " + what);
      return make(i64_scalar(x, fn_));
    case Slot::Value: break;
  }
  // The dtype of the first value operand that is a tensor: a traced one, else a concrete or eager one.
  // With none (every value operand a scalar) scalars keep their Python types: f64, i64, bool, c128.
  const std::optional<DType> beside = value_dtype_ ? value_dtype_ : concrete_dtype_;
  if (!beside) {
    if (is_cplx) return make(Tensor::scalar(x.cast<c128>()));
    if (is_float) return make(Tensor::scalar(x.cast<double>()));
    if (is_int) return make(i64_scalar(x, fn_));
    return make(Tensor::full({}, x.cast<bool>() ? 1.0 : 0.0, DType::Bool));
  }
  const DType d = *beside;
  const bool floating = is_floating(d) || is_complex(d);
  if (is_cplx) {
    return make(Tensor::scalar(x.cast<c128>(), d == DType::F32 || d == DType::C64 ? DType::C64 : DType::C128));
  }
  if (is_float) return make(Tensor::scalar(x.cast<double>(), floating ? d : DType::F64));
  if (is_int && !floating) return make(i64_scalar(x, fn_));  // beside i64 or bool: exact
  if (is_bool && d == DType::Bool) return make(Tensor::full({}, x.cast<bool>() ? 1.0 : 0.0, DType::Bool));
  return make(Tensor::scalar(x.cast<double>(), d));
}

std::vector<Traced> Operands::get_list(const py::handle& xs, Slot slot) const {
  if (!py::isinstance<py::list>(xs) && !py::isinstance<py::tuple>(xs)) {
    throw py::type_error(fn_ + ": expected a list or tuple of tensors, got a " + type_name(xs));
  }
  std::vector<Traced> out;
  for (const auto& x : xs) out.push_back(get(x, slot));
  return out;
}

py::object Operands::result(py::object r) const {
  if (traced_) return r;
  if (py::isinstance<Traced>(r)) {
    const auto& t = r.cast<const Traced&>();
    return eager_ ? py::cast(EagerTensor(t)) : py::cast(eager_value(t));
  }
  if (py::isinstance<py::tuple>(r) || py::isinstance<py::list>(r)) {
    py::list out;
    for (const auto& item : r) out.append(result(py::reinterpret_borrow<py::object>(item)));
    if (py::isinstance<py::tuple>(r)) return py::tuple(out);
    return std::move(out);
  }
  return r;
}

namespace {
void collect_results(const py::handle& r, const Traced* like, std::vector<Traced>& out) {
  if (py::isinstance<Traced>(r)) {
    out.push_back(r.cast<Traced>());
    return;
  }
  if (py::isinstance<py::tuple>(r) || py::isinstance<py::list>(r)) {
    for (const auto& item : r) collect_results(item, like, out);
    return;
  }
  // A value computed without the arguments (a Tensor, an array, a scalar): a constant result, as
  // jax.jit returns one.
  if (like != nullptr && (py::isinstance<Tensor>(r) || py::isinstance<EagerTensor>(r) || py::isinstance<py::array>(r) ||
                          PyFloat_Check(r.ptr()) || PyLong_Check(r.ptr()) || PyComplex_Check(r.ptr()))) {
    if (py::isinstance<EagerTensor>(r) && r.cast<const EagerTensor&>().requires_grad()) {
      throw py::value_error("tenferro: a traced function returned an EagerTensor that requires grad; its history "
                            "belongs to the eager trace, not to the traced function (return its detach())");
    }
    out.push_back(constant(*like, to_tensor(r, "tenferro: a result of the traced function")));
    return;
  }
  throw py::type_error("tenferro: a traced function returned a " + std::string(py::str(py::type::of(r))) +
                       " among its results; expected Traced values (results of tenferro operations on the "
                       "arguments), tensors, or tuples or lists of them");
}
}  // namespace

std::vector<Traced> traced_results(const py::handle& r, const Traced* like) {
  std::vector<Traced> out;
  collect_results(r, like, out);
  return out;
}

detail::TracedFunction traced_function(py::function f) {
  return [f = std::move(f)](const std::vector<Traced>& args) {
    py::tuple t(args.size());
    for (std::size_t i = 0; i < args.size(); ++i) t[i] = py::cast(args[i]);
    return traced_results(f(*t), args.empty() ? nullptr : &args[0]);
  };
}

void bind_traced(py::module_& m) {
  // Derived from TypeError: what Python raises for a value of the wrong kind (as JAX's
  // ConcretizationTypeError). Created once and never freed: the module's functions use it.
  tracer_conversion_class = PyErr_NewExceptionWithDoc(
      "tenferro.TracerConversionError",
      "A Traced value was used where Python needs a concrete value (bool(), int(), float(), an index, a NumPy "
      "array, a transform's argument): its value is not known while tracing.",
      PyExc_TypeError, nullptr);
  if (!tracer_conversion_class) throw py::error_already_set();
  m.attr("TracerConversionError") = py::handle(tracer_conversion_class);

  py::class_<Traced> traced(m, "Traced", "A value inside a traced function: operations on it are recorded.");
  // NumPy defers to Traced: ndarray (op) Traced returns NotImplemented and Python runs Traced's
  // reflected operator; ufuncs (numpy.sin(x)) raise TypeError instead of making object arrays.
  traced.attr("__array_ufunc__") = py::none();
  traced.attr("__array_priority__") = 1000;
  traced.def_property_readonly("shape", [](const Traced& t) { return py::tuple(py::cast(t.shape())); })
      .def_property_readonly("dtype", [](const Traced& t) { return std::string(dtype_name(t.dtype())); })
      .def_property_readonly("ndim", [](const Traced& t) { return t.rank(); })
      .def("__repr__", [](const Traced& t) { return "Traced(" + t.type().to_string() + ")"; })
      // Concrete conversions: refused (see the top of this file).
      .def("__bool__", [](const Traced& t) -> bool { refuse_conversion(t, "bool() (an if, while, and, or, not)"); })
      .def("__int__", [](const Traced& t) -> std::int64_t { refuse_conversion(t, "int()"); })
      .def("__float__", [](const Traced& t) -> double { refuse_conversion(t, "float()"); })
      .def("__complex__", [](const Traced& t) -> c128 { refuse_conversion(t, "complex()"); })
      .def("__index__", [](const Traced& t) -> std::int64_t {
        refuse_conversion(t, "operator.index() (range(), indexing a Python list or a NumPy array)");
      })
      .def("__array__", [](const Traced& t, const py::args&, const py::kwargs&) -> py::object {
        refuse_conversion(t, "numpy.asarray()");
      })
      .def("__len__", [](const Traced& t) -> std::int64_t {
        if (t.rank() == 0) throw py::type_error("len() of a 0-d Traced value (" + t.type().to_string() + ")");
        return t.shape()[0];
      }, "The length of the leading axis (known while tracing).")
      .def("__iter__", [](const Traced& t) {
        if (t.rank() == 0) throw py::type_error("iteration over a 0-d Traced value (" + t.type().to_string() + ")");
        py::list rows;
        for (std::int64_t i = 0; i < t.shape()[0]; ++i) rows.append(py::cast(index(t, IndexExpr(i))));
        return rows.attr("__iter__")();
      }, "The slices along the leading axis, x[0], x[1], ... (their number is known while tracing).");
  bind_tensor_methods(m, "Traced");
  traced.attr("__hash__") = py::none();

  // Unary functions, one line each.
#define TENFERRO_PY_UNARY(name) \
  m.def(#name, lift(#name, +[](const Traced& x) { return name(x); }), py::arg("x"));
  // The functions that are one op each come from the op list (tenferro/op_list.hpp).
#define TENFERRO_PY_LIST_UNARY(X, kind, name) TENFERRO_PY_UNARY(name)
#define TENFERRO_PY_LIST_BINARY(X, kind, name) \
  m.def(#name, lift(#name, +[](const Traced& a, const Traced& b) { return name(a, b); }), py::arg("a"), py::arg("b"));
  TENFERRO_OP_LIST(TENFERRO_OP_LIST_NONE, TENFERRO_PY_LIST_UNARY, TENFERRO_PY_LIST_BINARY)
#undef TENFERRO_PY_LIST_UNARY
#undef TENFERRO_PY_LIST_BINARY
  // And the others, one line each.
  TENFERRO_PY_UNARY(sigmoid) TENFERRO_PY_UNARY(relu)
  TENFERRO_PY_UNARY(softplus) TENFERRO_PY_UNARY(stop_gradient)
  TENFERRO_PY_UNARY(ndtr) TENFERRO_PY_UNARY(log_ndtr)
  TENFERRO_PY_UNARY(ndtri) TENFERRO_PY_UNARY(sinc) TENFERRO_PY_UNARY(isnan)
  TENFERRO_PY_UNARY(isinf) TENFERRO_PY_UNARY(isfinite)
#undef TENFERRO_PY_UNARY
#define TENFERRO_PY_BINARY(name) \
  m.def(#name, lift(#name, +[](const Traced& a, const Traced& b) { return name(a, b); }), py::arg("a"), py::arg("b"));
  TENFERRO_PY_BINARY(maximum) TENFERRO_PY_BINARY(minimum)
  TENFERRO_PY_BINARY(logaddexp) TENFERRO_PY_BINARY(xlogy) TENFERRO_PY_BINARY(matmul)
  TENFERRO_PY_BINARY(add) TENFERRO_PY_BINARY(sub) TENFERRO_PY_BINARY(mul) TENFERRO_PY_BINARY(div)
  TENFERRO_PY_BINARY(pow) TENFERRO_PY_BINARY(cross_entropy)
  // Comparisons as functions (the operators <, ==, ... are the same ops): bool results.
  TENFERRO_PY_BINARY(eq) TENFERRO_PY_BINARY(ne) TENFERRO_PY_BINARY(lt) TENFERRO_PY_BINARY(le)
  TENFERRO_PY_BINARY(gt) TENFERRO_PY_BINARY(ge)
#undef TENFERRO_PY_BINARY
  // NumPy's name for pow: the same function object.
  m.attr("power") = m.attr("pow");
  m.def("clamp", lift("clamp", +[](const Traced& x, const Traced& lo, const Traced& hi) { return clamp(x, lo, hi); }),
        py::arg("x"), py::arg("lo"), py::arg("hi"));
  m.attr("clip") = m.attr("clamp");  // numpy.clip(a, a_min, a_max)
  m.def("astype", lift("astype", +[](const Traced& a, const std::string& dtype) {
    return astype(a, dtype_named(dtype, "tenferro.astype"));
  }), py::arg("x"), py::arg("dtype"), "x converted to dtype (\"f32\", \"f64\", \"c64\", \"c128\", \"i64\" or \"bool\").");
  // Ties to even; decimals as numpy.round (negative: tens, hundreds, ...).
  m.def("round", lift("round", +[](const Traced& x, int decimals) { return decimals == 0 ? round(x) : round(x, decimals); }),
        py::arg("x"), py::arg("decimals") = 0);
  // (mantissa, i64 exponent) as numpy.frexp; ldexp's exponent is an index operand (Python ints: i64).
  m.def("frexp", lift("frexp", +[](const Traced& x) { return frexp(x); }), py::arg("x"));
  m.def("ldexp", lift("ldexp", +[](const Traced& x, const Traced& e) { return ldexp(x, e); }, "vi"), py::arg("x"),
        py::arg("e"));
  // The order first, as scipy.special.polygamma and torch.polygamma.
  m.def("polygamma", lift("polygamma", +[](int n, const Traced& x) { return polygamma(n, x); }), py::arg("n"),
        py::arg("x"));
  m.def("mvlgamma", lift("mvlgamma", +[](const Traced& x, int p) { return mvlgamma(x, p); }), py::arg("x"), py::arg("p"));

  m.def("where", lift("where", +[](const Traced& p, const Traced& a, const Traced& b) { return where(p, a, b); }, "pvv"),
        py::arg("pred"), py::arg("a"), py::arg("b"));
  // Reductions: `axis` None (every axis), an int or a sequence of ints.
#define TENFERRO_PY_REDUCTION(name)                                                                           \
  m.def(#name, lift(#name, +[](const Traced& a, const py::object& axis) { return name(a, axes_of(axis, a.rank())); }), \
        py::arg("x"), py::arg("axis") = py::none());
  TENFERRO_PY_REDUCTION(sum) TENFERRO_PY_REDUCTION(mean) TENFERRO_PY_REDUCTION(max) TENFERRO_PY_REDUCTION(min)
  TENFERRO_PY_REDUCTION(logsumexp) TENFERRO_PY_REDUCTION(prod)
#undef TENFERRO_PY_REDUCTION
  // Variance and standard deviation: divided by n - correction (numpy's ddof, array API's correction).
  m.def("var", lift("var", +[](const Traced& a, const py::object& axis, double correction) {
    return var(a, axes_of(axis, a.rank()), correction);
  }), py::arg("x"), py::arg("axis") = py::none(), py::arg("correction") = 0.0);
  m.def("stddev", lift("stddev", +[](const Traced& a, const py::object& axis, double correction) {
    return stddev(a, axes_of(axis, a.rank()), correction);
  }), py::arg("x"), py::arg("axis") = py::none(), py::arg("correction") = 0.0);
  m.attr("std") = m.attr("stddev");  // numpy.std (C++ cannot name it std)
  // (values, i64 indices of their first occurrence) along one axis, as torch.max(x, dim).
  m.def("max_with_index", lift("max_with_index", +[](const Traced& a, std::int64_t axis) { return max_with_index(a, axis); }),
        py::arg("x"), py::arg("axis"));
  m.def("min_with_index", lift("min_with_index", +[](const Traced& a, std::int64_t axis) { return min_with_index(a, axis); }),
        py::arg("x"), py::arg("axis"));
  // The index (i64) of the first maximum / minimum along one axis (required: the C++ API has no
  // flattened form). An empty axis raises tf.ValueError, as NumPy raises ValueError.
#define TENFERRO_PY_ARG_REDUCTION(name)                                                                 \
  m.def(#name, lift(#name, +[](const Traced& a, std::int64_t axis) { return name(a, axis); }), py::arg("x"), \
        py::arg("axis"));
  TENFERRO_PY_ARG_REDUCTION(argmax) TENFERRO_PY_ARG_REDUCTION(argmin)
#undef TENFERRO_PY_ARG_REDUCTION
  m.def("softmax", lift("softmax", +[](const Traced& a, std::int64_t axis) { return softmax(a, axis); }), py::arg("x"),
        py::arg("axis") = -1);
  m.def("log_softmax", lift("log_softmax", +[](const Traced& a, std::int64_t axis) { return log_softmax(a, axis); }),
        py::arg("x"), py::arg("axis") = -1);
  m.def("transpose", lift("transpose", +[](const Traced& a, const py::object& perm) {
    return perm.is_none() ? transpose(a) : transpose(a, perm.cast<Axes>());
  }), py::arg("x"), py::arg("axes") = py::none());
  m.def("reshape", lift("reshape", +[](const Traced& a, const Shape& s) { return reshape(a, s); }), py::arg("x"),
        py::arg("shape"));
  m.def("broadcast_to", lift("broadcast_to", +[](const Traced& a, const Shape& s) { return broadcast_to(a, s); }),
        py::arg("x"), py::arg("shape"));
  // dot_general's dimension numbers (StableHLO's): the result axes are the batch axes, then a's
  // free axes, then b's. semiring_dot_general: the same contraction in a tropical semiring
  // ("max_plus", "min_plus", "max_times"; not differentiable), with the index of the winning
  // contracted position (row-major over a's contracting axes) from semiring_dot_general_index.
  m.def("dot_general", lift("dot_general", +[](const Traced& a, const Traced& b, const Axes& lhs_contract,
                                               const Axes& rhs_contract, const Axes& lhs_batch, const Axes& rhs_batch) {
    return dot_general(a, b, DotDims{lhs_batch, rhs_batch, lhs_contract, rhs_contract});
  }), py::arg("a"), py::arg("b"), py::kw_only(), py::arg("lhs_contract") = Axes{}, py::arg("rhs_contract") = Axes{},
     py::arg("lhs_batch") = Axes{}, py::arg("rhs_batch") = Axes{});
  m.def("semiring_dot_general", lift("semiring_dot_general", +[](const Traced& a, const Traced& b,
                                                                 const std::string& semiring, const Axes& lhs_contract,
                                                                 const Axes& rhs_contract, const Axes& lhs_batch,
                                                                 const Axes& rhs_batch) {
    return semiring_dot_general(a, b, semiring_named(semiring, "tenferro.semiring_dot_general"),
                                DotDims{lhs_batch, rhs_batch, lhs_contract, rhs_contract});
  }), py::arg("a"), py::arg("b"), py::arg("semiring"), py::kw_only(), py::arg("lhs_contract") = Axes{},
     py::arg("rhs_contract") = Axes{}, py::arg("lhs_batch") = Axes{}, py::arg("rhs_batch") = Axes{});
  m.def("semiring_dot_general_index", lift("semiring_dot_general_index", +[](const Traced& a, const Traced& b,
                                                                             const std::string& semiring,
                                                                             const Axes& lhs_contract,
                                                                             const Axes& rhs_contract,
                                                                             const Axes& lhs_batch, const Axes& rhs_batch) {
    return semiring_dot_general_index(a, b, semiring_named(semiring, "tenferro.semiring_dot_general_index"),
                                      DotDims{lhs_batch, rhs_batch, lhs_contract, rhs_contract});
  }), py::arg("a"), py::arg("b"), py::arg("semiring"), py::kw_only(), py::arg("lhs_contract") = Axes{},
     py::arg("rhs_contract") = Axes{}, py::arg("lhs_batch") = Axes{}, py::arg("rhs_batch") = Axes{});
}

}  // namespace tenferro::python
