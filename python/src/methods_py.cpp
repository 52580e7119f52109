// Python: the operators and methods that Traced, Tensor and EagerTensor share. Each is one lifted
// function (module.hpp, lift), so `a + b` records an add inside a trace, runs it eagerly with
// history when an operand is an EagerTensor, and runs it on the values when both are concrete,
// with the same broadcasting, dtype rules and errors. The reflected operators run for
// `scalar (op) x` and `ndarray (op) x`: Traced and EagerTensor make NumPy defer to them
// (__array_ufunc__ = None); a Tensor stays an array to NumPy, so `ndarray (op) Tensor` is NumPy's.
#include <deque>

#include "module.hpp"

namespace tenferro::python {

namespace {

using Axes = std::vector<std::int64_t>;

/// The names errors give the methods ("Tensor.__add__"): kept alive for the lifted functions,
/// which hold a const char*.
const char* qualified(const char* cls, const char* method) {
  static std::deque<std::string> names;
  names.push_back(std::string(cls) + "." + method);
  return names.back().c_str();
}

template <class F, class... Extra>
void def_method(py::object& cls, const char* name, F&& f, const char* doc, const Extra&... extra) {
  py::setattr(cls, name,
              py::cpp_function(std::forward<F>(f), py::name(name), py::is_method(cls),
                               py::sibling(py::getattr(cls, name, py::none())), doc, extra...));
}

}  // namespace

void bind_tensor_methods(py::module_& m, const char* cls_name) {
  py::object cls = m.attr(cls_name);
  auto q = [cls_name](const char* method) { return qualified(cls_name, method); };
#define TENFERRO_PY_BINARY_OP(dunder, rdunder, fn)                                                                  \
  def_method(cls, dunder, lift(q(dunder), +[](const Traced& a, const Traced& b) { return fn(a, b); }), "");  \
  def_method(cls, rdunder, lift(q(rdunder), +[](const Traced& a, const Traced& b) { return fn(b, a); }), "");
  TENFERRO_PY_BINARY_OP("__add__", "__radd__", add)
  TENFERRO_PY_BINARY_OP("__sub__", "__rsub__", sub)
  TENFERRO_PY_BINARY_OP("__mul__", "__rmul__", mul)
  TENFERRO_PY_BINARY_OP("__truediv__", "__rtruediv__", div)
  TENFERRO_PY_BINARY_OP("__pow__", "__rpow__", pow)
  TENFERRO_PY_BINARY_OP("__matmul__", "__rmatmul__", matmul)
#undef TENFERRO_PY_BINARY_OP
  def_method(cls, "__neg__", lift(q("__neg__"), +[](const Traced& a) { return neg(a); }), "");
  def_method(cls, "__abs__", lift(q("__abs__"), +[](const Traced& a) { return abs(a); }), "");
  // Comparisons are elementwise (bool tensors), == and != too (as NumPy's); Python reflects
  // `ndarray < x` to x.__gt__(ndarray). Defining __eq__ makes the class unhashable.
#define TENFERRO_PY_COMPARISON(dunder, fn) \
  def_method(cls, dunder, lift(q(dunder), +[](const Traced& a, const Traced& b) { return fn(a, b); }), "");
  TENFERRO_PY_COMPARISON("__lt__", lt) TENFERRO_PY_COMPARISON("__le__", le) TENFERRO_PY_COMPARISON("__gt__", gt)
  TENFERRO_PY_COMPARISON("__ge__", ge) TENFERRO_PY_COMPARISON("__eq__", eq) TENFERRO_PY_COMPARISON("__ne__", ne)
#undef TENFERRO_PY_COMPARISON
  py::setattr(cls, "__hash__", py::none());
  def_method(cls, "__getitem__", lift(q("__getitem__"), +[](const Traced& x, const py::object& key) {
    std::vector<IndexItem> items;
    if (py::isinstance<py::tuple>(key)) {
      for (const auto& k : key) items.push_back(index_item(x, k));
    } else {
      items.push_back(index_item(x, key));
    }
    return index(x, IndexExpr(std::move(items)));
  }), "NumPy-style indexing: ints, slices with steps, ..., None and one integer index array.\n"
      "\n"
      ">>> t = tf.Tensor([[1.0, 2.0], [3.0, 4.0]])\n"
      ">>> t[1, ::-1].numpy().tolist(), t[:, None].shape\n"
      "([4.0, 3.0], (2, 1, 2))\n", py::arg("key"));
  py::setattr(cls, "T", py::reinterpret_borrow<py::object>(reinterpret_cast<PyObject*>(&PyProperty_Type))(
                             py::cpp_function(lift(q("T"), +[](const Traced& a) { return transpose(a); })), py::none(),
                             py::none(),
                             "The transpose (the axes reversed).\n"
                             "\n"
                             ">>> tf.Tensor([[1.0, 2.0], [3.0, 4.0]]).T.numpy().tolist()\n"
                             "[[1.0, 3.0], [2.0, 4.0]]\n"));
  def_method(cls, "reshape", lift(q("reshape"), +[](const Traced& a, const Shape& s) { return reshape(a, s); }),
             "The same elements in the given shape (row-major).\n"
             "\n"
             ">>> tf.Tensor([[1.0, 2.0], [3.0, 4.0]]).reshape((4,)).numpy().tolist()\n"
             "[1.0, 2.0, 3.0, 4.0]\n", py::arg("shape"));
  def_method(cls, "sum", lift(q("sum"), +[](const Traced& a, const py::object& axis) {
    return sum(a, axes_of(axis, a.rank()));
  }), "tenferro.sum(self, axis).\n"
      "\n"
      ">>> tf.Tensor([[1.0, 2.0], [3.0, 4.0]]).sum(axis=0).numpy().tolist()\n"
      "[4.0, 6.0]\n", py::arg("axis") = py::none());
  def_method(cls, "mean", lift(q("mean"), +[](const Traced& a, const py::object& axis) {
    return mean(a, axes_of(axis, a.rank()));
  }), "tenferro.mean(self, axis).\n"
      "\n"
      ">>> tf.Tensor([[1.0, 2.0], [3.0, 4.0]]).mean().item()\n"
      "2.5\n", py::arg("axis") = py::none());
  def_method(cls, "astype", lift(q("astype"), +[](const Traced& a, const std::string& dtype) {
    return astype(a, dtype_named(dtype, "astype"));
  }), "tenferro.astype(self, dtype).\n"
      "\n"
      ">>> tf.Tensor([1.5, 2.5]).astype(\"i64\").dtype\n"
      "'i64'\n", py::arg("dtype"));
}

}  // namespace tenferro::python
