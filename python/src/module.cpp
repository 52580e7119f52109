// The Python module _tenferro (imported by the package tenferro, python/tenferro/__init__.py).
// tenferro's errors become Python exceptions carrying the C++ message: ShapeError and ValueError
// derive from Python's ValueError, DTypeError from TypeError, ADRuleError and the rest from
// RuntimeError (tenferro.Error). tenferro.TracerConversionError (a TypeError, traced_py.cpp) is
// raised by the module itself, for a Traced value used where Python needs a concrete one.
#include "module.hpp"
#include "tenferro/op_list.hpp"

namespace tenferro::python {

namespace {
/// A C++ message as Python users read it: the C++ spellings of options the library's messages
/// give become the keyword arguments of the Python functions.
std::string python_spelling(std::string message) {
  static const std::pair<const char*, const char*> spellings[] = {
      {"WhileOptions{.max_trips = n}", "max_trips=n (tenferro.while_loop(cond_fun, body_fun, init_val, max_trips=n))"},
      {"BackwardOptions{.retain_graph = true}", "retain_graph=True"},
  };
  for (const auto& [cpp, py] : spellings) {
    for (std::size_t at = message.find(cpp); at != std::string::npos; at = message.find(cpp, at)) {
      message.replace(at, std::strlen(cpp), py);
      at += std::strlen(py);
    }
  }
  return message;
}

}  // namespace

}  // namespace tenferro::python

PYBIND11_MODULE(_tenferro, m) {
  namespace tp = tenferro::python;
  namespace py = pybind11;
  m.doc() = "tenferro: differentiable tensor programs (C++20), Python bindings";
  // Most specific first: pybind11 tries translators in reverse order of registration.
  static py::exception<tenferro::Error> error(m, "Error", PyExc_RuntimeError);
  static py::exception<tenferro::ADRuleError> ad_error(m, "ADRuleError", error.ptr());
  static py::exception<tenferro::ShapeError> shape_error(m, "ShapeError", PyExc_ValueError);
  static py::exception<tenferro::DTypeError> dtype_error(m, "DTypeError", PyExc_TypeError);
  static py::exception<tenferro::ValueError> value_error(m, "ValueError", PyExc_ValueError);
  // The classes' documentation, with an example each (python/tests/test_doctests.py runs them).
  error.attr("__doc__") =
      "The base of tenferro's errors (a RuntimeError): ADRuleError derives from it; ShapeError, DTypeError and "
      "ValueError derive from Python's ValueError and TypeError instead, so that NumPy-style code catches them.\n\n"
      ">>> issubclass(tf.ADRuleError, tf.Error)\nTrue\n";
  ad_error.attr("__doc__") =
      "An operation has no derivative rule for the transform asked of it (a tf.Error).\n\n"
      ">>> try:\n...     tf.grad(lambda x: tf.sum(tf.while_loop(lambda c: tf.sum(c) < 10.0, lambda c: c * 2.0, x)))("
      "np.ones(2))\n... except tf.ADRuleError as e:\n...     print('max_trips=n' in str(e))\nTrue\n";
  shape_error.attr("__doc__") =
      "Operands whose shapes do not fit the operation (a ValueError), naming the operation and the shapes.\n\n"
      ">>> try:\n...     tf.matmul(np.ones((2, 3)), np.ones((2, 3)))\n... except tf.ShapeError as e:\n"
      "...     print(isinstance(e, ValueError))\nTrue\n";
  dtype_error.attr("__doc__") =
      "Operands of dtypes the operation does not take (a TypeError), naming the operation and the dtypes.\n\n"
      ">>> try:\n...     tf.exp(np.array([1, 2]))\n... except tf.DTypeError as e:\n...     print(isinstance(e, TypeError))\nTrue\n";
  value_error.attr("__doc__") =
      "Values the operation cannot take (a ValueError): an empty axis for max, a bad option, ...\n\n"
      ">>> try:\n...     tf.max(np.ones((0, 2)), 0)\n... except tf.ValueError as e:\n...     print(isinstance(e, ValueError))\nTrue\n";
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const tenferro::ShapeError& e) {
      shape_error(tp::python_spelling(e.what()).c_str());
    } catch (const tenferro::DTypeError& e) {
      dtype_error(tp::python_spelling(e.what()).c_str());
    } catch (const tenferro::ValueError& e) {
      value_error(tp::python_spelling(e.what()).c_str());
    } catch (const tenferro::ADRuleError& e) {
      ad_error(tp::python_spelling(e.what()).c_str());
    } catch (const tenferro::Error& e) {
      error(tp::python_spelling(e.what()).c_str());
    }
  });
  tp::bind_tensor(m);
  tp::bind_traced(m);
  tp::bind_eager(m);
  tp::bind_transforms(m);
  tp::bind_linalg(m);
  tp::bind_random(m);
  tp::bind_control(m);
  tp::bind_sparse(m);
  tp::bind_optim(m);
  tp::bind_einsum(m);
#ifdef TENFERRO_PYTHON_MPI
  tp::bind_distributed(m);
#endif
  // The functions bound from the op list's U, B and R entries (tenferro/op_list.hpp), which
  // tenferro/__init__.py exports by this list, so that a new entry needs no line there (M entries
  // live in tf.linalg, which is exported whole).
  py::list listed;
#define TENFERRO_PY_LISTED(X, kind, name) listed.append(#name);
  TENFERRO_OP_LIST(TENFERRO_OP_LIST_NONE, TENFERRO_PY_LISTED, TENFERRO_PY_LISTED, TENFERRO_OP_LIST_SKIP_M, TENFERRO_PY_LISTED)
#undef TENFERRO_PY_LISTED
  m.attr("_op_list_functions") = listed;
}
