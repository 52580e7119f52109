// Python: Traced values and the functions on them. Inside a function handed to a transform
// (grad, jvp, jit, ...) the arguments are Traced; arithmetic operators and the functions below
// record operations, exactly as the C++ API does (tenferro/traced.hpp, tenferro/math.hpp,
// tenferro/einsum.hpp), with NumPy-style broadcasting and the same errors.
#include "module.hpp"

namespace tenferro::python {

namespace {

using Axes = std::vector<std::int64_t>;

/// `axis` as the C++ API wants it: None (every axis), an int or a sequence of ints.
Axes axes_of(const py::object& axis, std::size_t rank) {
  Axes axes;
  if (axis.is_none()) {
    for (std::size_t i = 0; i < rank; ++i) axes.push_back(static_cast<std::int64_t>(i));
  } else if (py::isinstance<py::int_>(axis)) {
    axes.push_back(axis.cast<std::int64_t>());
  } else {
    axes = axis.cast<Axes>();
  }
  return axes;
}

/// A scalar or tensor operand beside a Traced: a Traced stays, anything else becomes a constant
/// of `like`'s trace (scalars take like's dtype).
Traced operand(const Traced& like, const py::handle& x) {
  if (py::isinstance<Traced>(x)) return x.cast<Traced>();
  if (py::isinstance<py::int_>(x) || py::isinstance<py::float_>(x)) return full_like(like, x.cast<double>());
  return constant(like, to_tensor(x));
}

/// One item of x[...]: an int, a slice, Ellipsis, None (new axis), a Traced or an array of
/// integer indices (a constant of the trace).
IndexItem index_item(const Traced& x, const py::handle& k) {
  if (py::isinstance<py::int_>(k)) return IndexItem(k.cast<std::int64_t>());
  if (py::isinstance<py::slice>(k)) {
    auto bound = [](const py::object& b) { return b.is_none() ? RangeBound(none) : RangeBound(b.cast<std::int64_t>()); };
    const py::object step = k.attr("step");
    return IndexItem(Range{bound(k.attr("start")), bound(k.attr("stop")), step.is_none() ? 1 : step.cast<std::int64_t>()});
  }
  if (k.is(py::ellipsis())) return IndexItem(ellipsis);
  if (k.is_none()) return IndexItem(newaxis);
  if (py::isinstance<Traced>(k)) return IndexItem(k.cast<Traced>());
  return IndexItem(constant(x, to_tensor(k)));
}

}  // namespace

std::vector<Traced> traced_results(const py::handle& r) {
  if (py::isinstance<Traced>(r)) return {r.cast<Traced>()};
  if (py::isinstance<py::tuple>(r) || py::isinstance<py::list>(r)) {
    std::vector<Traced> out;
    for (const auto& item : r) {
      if (!py::isinstance<Traced>(item)) {
        throw py::type_error("tenferro: a traced function returned a " + std::string(py::str(py::type::of(item))) +
                             " among its results; expected Traced values (results of tenferro operations on "
                             "the arguments)");
      }
      out.push_back(item.cast<Traced>());
    }
    return out;
  }
  throw py::type_error("tenferro: a traced function returned a " + std::string(py::str(py::type::of(r))) +
                       "; expected a Traced value or a tuple of them");
}

detail::TracedFunction traced_function(py::function f) {
  return [f = std::move(f)](const std::vector<Traced>& args) {
    py::tuple t(args.size());
    for (std::size_t i = 0; i < args.size(); ++i) t[i] = py::cast(args[i]);
    return traced_results(f(*t));
  };
}

void bind_traced(py::module_& m) {
  py::class_<Traced> traced(m, "Traced", "A value inside a traced function: operations on it are recorded.");
  traced.def_property_readonly("shape", [](const Traced& t) { return py::tuple(py::cast(t.shape())); })
      .def_property_readonly("dtype", [](const Traced& t) { return std::string(dtype_name(t.dtype())); })
      .def_property_readonly("ndim", [](const Traced& t) { return t.rank(); })
      .def("__repr__", [](const Traced& t) { return "Traced(" + t.type().to_string() + ")"; })
      .def("__getitem__", [](const Traced& x, const py::object& key) {
        std::vector<IndexItem> items;
        if (py::isinstance<py::tuple>(key)) {
          for (const auto& k : key) items.push_back(index_item(x, k));
        } else {
          items.push_back(index_item(x, key));
        }
        return index(x, IndexExpr(std::move(items)));
      }, "NumPy-style indexing: ints, slices with steps, ..., None and one integer index array.")
      .def("__add__", [](const Traced& a, const py::object& b) { return add(a, operand(a, b)); })
      .def("__radd__", [](const Traced& a, const py::object& b) { return add(operand(a, b), a); })
      .def("__sub__", [](const Traced& a, const py::object& b) { return sub(a, operand(a, b)); })
      .def("__rsub__", [](const Traced& a, const py::object& b) { return sub(operand(a, b), a); })
      .def("__mul__", [](const Traced& a, const py::object& b) { return mul(a, operand(a, b)); })
      .def("__rmul__", [](const Traced& a, const py::object& b) { return mul(operand(a, b), a); })
      .def("__truediv__", [](const Traced& a, const py::object& b) { return div(a, operand(a, b)); })
      .def("__rtruediv__", [](const Traced& a, const py::object& b) { return div(operand(a, b), a); })
      .def("__pow__", [](const Traced& a, const py::object& b) { return pow(a, operand(a, b)); })
      .def("__rpow__", [](const Traced& a, const py::object& b) { return pow(operand(a, b), a); })
      .def("__matmul__", [](const Traced& a, const Traced& b) { return matmul(a, b); })
      .def("__neg__", [](const Traced& a) { return neg(a); })
      .def("__lt__", [](const Traced& a, const py::object& b) { return lt(a, operand(a, b)); })
      .def("__le__", [](const Traced& a, const py::object& b) { return le(a, operand(a, b)); })
      .def("__gt__", [](const Traced& a, const py::object& b) { return gt(a, operand(a, b)); })
      .def("__ge__", [](const Traced& a, const py::object& b) { return ge(a, operand(a, b)); })
      .def_property_readonly("T", [](const Traced& a) { return transpose(a); })
      .def("reshape", [](const Traced& a, const Shape& s) { return reshape(a, s); })
      .def("sum", [](const Traced& a, const py::object& axis) { return sum(a, axes_of(axis, a.rank())); },
           py::arg("axis") = py::none())
      .def("mean", [](const Traced& a, const py::object& axis) { return mean(a, axes_of(axis, a.rank())); },
           py::arg("axis") = py::none())
      .def("astype", [](const Traced& a, const std::string& dtype) {
        for (DType d : {DType::F32, DType::F64, DType::C64, DType::C128, DType::I64, DType::Bool}) {
          if (dtype == dtype_name(d)) return astype(a, d);
        }
        throw py::value_error("astype: unknown dtype '" + dtype + "'; expected f32, f64, c64, c128, i64 or bool");
      });

  // Unary functions, one line each.
#define TENFERRO_PY_UNARY(name) m.def(#name, [](const Traced& x) { return name(x); }, py::arg("x"));
  TENFERRO_PY_UNARY(exp) TENFERRO_PY_UNARY(log) TENFERRO_PY_UNARY(sin) TENFERRO_PY_UNARY(cos)
  TENFERRO_PY_UNARY(tan) TENFERRO_PY_UNARY(tanh) TENFERRO_PY_UNARY(sinh) TENFERRO_PY_UNARY(cosh)
  TENFERRO_PY_UNARY(asin) TENFERRO_PY_UNARY(acos) TENFERRO_PY_UNARY(atan) TENFERRO_PY_UNARY(asinh)
  TENFERRO_PY_UNARY(acosh) TENFERRO_PY_UNARY(atanh) TENFERRO_PY_UNARY(sqrt) TENFERRO_PY_UNARY(rsqrt)
  TENFERRO_PY_UNARY(expm1) TENFERRO_PY_UNARY(log1p) TENFERRO_PY_UNARY(log2) TENFERRO_PY_UNARY(log10)
  TENFERRO_PY_UNARY(abs) TENFERRO_PY_UNARY(sign) TENFERRO_PY_UNARY(conj) TENFERRO_PY_UNARY(real)
  TENFERRO_PY_UNARY(imag) TENFERRO_PY_UNARY(erf) TENFERRO_PY_UNARY(erfc) TENFERRO_PY_UNARY(erfinv)
  TENFERRO_PY_UNARY(lgamma) TENFERRO_PY_UNARY(digamma) TENFERRO_PY_UNARY(sigmoid) TENFERRO_PY_UNARY(relu)
  TENFERRO_PY_UNARY(softplus) TENFERRO_PY_UNARY(floor) TENFERRO_PY_UNARY(ceil) TENFERRO_PY_UNARY(stop_gradient)
#undef TENFERRO_PY_UNARY
#define TENFERRO_PY_BINARY(name) \
  m.def(#name, [](const Traced& a, const py::object& b) { return name(a, operand(a, b)); }, py::arg("a"), py::arg("b"));
  TENFERRO_PY_BINARY(maximum) TENFERRO_PY_BINARY(minimum) TENFERRO_PY_BINARY(atan2) TENFERRO_PY_BINARY(hypot)
  TENFERRO_PY_BINARY(logaddexp) TENFERRO_PY_BINARY(xlogy)
#undef TENFERRO_PY_BINARY

  m.def("matmul", [](const Traced& a, const Traced& b) { return matmul(a, b); });
  m.def("where", [](const Traced& p, const py::object& a, const py::object& b) {
    const Traced& like = py::isinstance<Traced>(a) ? a.cast<Traced>() : b.cast<Traced>();
    return where(p, operand(like, a), operand(like, b));
  });
  m.def("sum", [](const Traced& a, const py::object& axis) { return sum(a, axes_of(axis, a.rank())); }, py::arg("x"),
        py::arg("axis") = py::none());
  m.def("mean", [](const Traced& a, const py::object& axis) { return mean(a, axes_of(axis, a.rank())); },
        py::arg("x"), py::arg("axis") = py::none());
  m.def("max", [](const Traced& a, const py::object& axis) { return max(a, axes_of(axis, a.rank())); }, py::arg("x"),
        py::arg("axis") = py::none());
  m.def("min", [](const Traced& a, const py::object& axis) { return min(a, axes_of(axis, a.rank())); }, py::arg("x"),
        py::arg("axis") = py::none());
  m.def("logsumexp", [](const Traced& a, const py::object& axis) { return logsumexp(a, axes_of(axis, a.rank())); },
        py::arg("x"), py::arg("axis") = py::none());
  m.def("softmax", [](const Traced& a, std::int64_t axis) { return softmax(a, axis); }, py::arg("x"), py::arg("axis") = -1);
  m.def("log_softmax", [](const Traced& a, std::int64_t axis) { return log_softmax(a, axis); }, py::arg("x"),
        py::arg("axis") = -1);
  m.def("transpose", [](const Traced& a, const py::object& perm) {
    return perm.is_none() ? transpose(a) : transpose(a, perm.cast<Axes>());
  }, py::arg("x"), py::arg("axes") = py::none());
  m.def("reshape", [](const Traced& a, const Shape& s) { return reshape(a, s); });
  m.def("broadcast_to", [](const Traced& a, const Shape& s) { return broadcast_to(a, s); });
  m.def("einsum", [](const std::string& subscripts, const py::args& operands) {
    std::vector<Traced> xs;
    for (const auto& x : operands) xs.push_back(x.cast<Traced>());
    return einsum(subscripts, std::span<const Traced>(xs));
  }, py::arg("subscripts"));
}

}  // namespace tenferro::python
