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
#include <map>
#include <string_view>

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

/// The docstring of the one-line function `name` below (TENFERRO_PY_UNARY, TENFERRO_PY_BINARY and
/// the op list's): a summary and an example that python/tests/test_doctests.py runs.
const char* op_doc(std::string_view name) {
  static const std::map<std::string_view, const char*> docs = {
      {"neg", "-x, elementwise.\n\n"
              ">>> tf.neg(np.array([1.0, -2.0])).numpy().tolist()\n"
              "[-1.0, 2.0]\n"},
      {"conj", "The complex conjugate, elementwise (real values unchanged).\n\n"
               ">>> tf.conj(np.array([1 + 2j])).numpy().tolist()\n"
               "[(1-2j)]\n"},
      {"real", "The real part, elementwise (a real dtype: c128 gives f64).\n\n"
               ">>> tf.real(np.array([1 + 2j])).numpy().tolist()\n"
               "[1.0]\n"},
      {"imag", "The imaginary part, elementwise (a real dtype: c128 gives f64).\n\n"
               ">>> tf.imag(np.array([1 + 2j])).numpy().tolist()\n"
               "[2.0]\n"},
      {"abs", "The absolute value, elementwise (the modulus for complex values, a real dtype).\n\n"
              ">>> tf.abs(np.array([-1.5, 2.0])).numpy().tolist()\n"
              "[1.5, 2.0]\n"},
      {"sign", "-1, 0 or 1 by the sign of x, elementwise.\n\n"
               ">>> tf.sign(np.array([-3.0, 0.0, 2.0])).numpy().tolist()\n"
               "[-1.0, 0.0, 1.0]\n"},
      {"exp", "e**x, elementwise.\n\n"
              ">>> tf.exp(np.array([0.0, 1.0])).numpy().round(4).tolist()\n"
              "[1.0, 2.7183]\n"},
      {"log", "The natural logarithm, elementwise.\n\n"
              ">>> tf.log(np.array([1.0, np.e])).numpy().round(4).tolist()\n"
              "[0.0, 1.0]\n"},
      {"sin", "The sine (radians), elementwise.\n\n"
              ">>> tf.sin(np.array([0.0, np.pi / 2])).numpy().round(4).tolist()\n"
              "[0.0, 1.0]\n"},
      {"cos", "The cosine (radians), elementwise.\n\n"
              ">>> tf.cos(np.array([0.0, np.pi])).numpy().round(4).tolist()\n"
              "[1.0, -1.0]\n"},
      {"tanh", "The hyperbolic tangent, elementwise.\n\n"
               ">>> tf.tanh(np.array([0.0, 1.0])).numpy().round(4).tolist()\n"
               "[0.0, 0.7616]\n"},
      {"sqrt", "The square root, elementwise.\n\n"
               ">>> tf.sqrt(np.array([4.0, 2.0])).numpy().round(4).tolist()\n"
               "[2.0, 1.4142]\n"},
      {"rsqrt", "1 / sqrt(x), elementwise.\n\n"
                ">>> tf.rsqrt(np.array([4.0, 0.25])).numpy().tolist()\n"
                "[0.5, 2.0]\n"},
      {"expm1", "e**x - 1, elementwise, accurate for small x.\n\n"
                ">>> tf.expm1(np.array([0.0, 1.0])).numpy().round(4).tolist()\n"
                "[0.0, 1.7183]\n"},
      {"log1p", "log(1 + x), elementwise, accurate for small x.\n\n"
                ">>> tf.log1p(np.array([0.0, np.e - 1])).numpy().round(4).tolist()\n"
                "[0.0, 1.0]\n"},
      {"tan", "The tangent (radians), elementwise.\n\n"
              ">>> tf.tan(np.array([0.0, np.pi / 4])).numpy().round(4).tolist()\n"
              "[0.0, 1.0]\n"},
      {"asin", "The inverse sine, elementwise.\n\n"
               ">>> tf.asin(np.array([0.0, 1.0])).numpy().round(4).tolist()\n"
               "[0.0, 1.5708]\n"},
      {"acos", "The inverse cosine, elementwise.\n\n"
               ">>> tf.acos(np.array([1.0, 0.0])).numpy().round(4).tolist()\n"
               "[0.0, 1.5708]\n"},
      {"atan", "The inverse tangent, elementwise.\n\n"
               ">>> tf.atan(np.array([0.0, 1.0])).numpy().round(4).tolist()\n"
               "[0.0, 0.7854]\n"},
      {"sinh", "The hyperbolic sine, elementwise.\n\n"
               ">>> tf.sinh(np.array([0.0, 1.0])).numpy().round(4).tolist()\n"
               "[0.0, 1.1752]\n"},
      {"cosh", "The hyperbolic cosine, elementwise.\n\n"
               ">>> tf.cosh(np.array([0.0, 1.0])).numpy().round(4).tolist()\n"
               "[1.0, 1.5431]\n"},
      {"asinh", "The inverse hyperbolic sine, elementwise.\n\n"
                ">>> tf.asinh(np.array([0.0, 1.0])).numpy().round(4).tolist()\n"
                "[0.0, 0.8814]\n"},
      {"acosh", "The inverse hyperbolic cosine, elementwise.\n\n"
                ">>> tf.acosh(np.array([1.0, 2.0])).numpy().round(4).tolist()\n"
                "[0.0, 1.317]\n"},
      {"atanh", "The inverse hyperbolic tangent, elementwise.\n\n"
                ">>> tf.atanh(np.array([0.0, 0.5])).numpy().round(4).tolist()\n"
                "[0.0, 0.5493]\n"},
      {"atan2", "The angle of the point (b, a), that is atan(a / b) in the right quadrant, elementwise.\n\n"
                ">>> tf.atan2(np.array([1.0, 1.0]), np.array([1.0, -1.0])).numpy().round(4).tolist()\n"
                "[0.7854, 2.3562]\n"},
      {"log2", "The base-2 logarithm, elementwise.\n\n"
               ">>> tf.log2(np.array([1.0, 8.0])).numpy().tolist()\n"
               "[0.0, 3.0]\n"},
      {"log10", "The base-10 logarithm, elementwise.\n\n"
                ">>> tf.log10(np.array([1.0, 1000.0])).numpy().round(12).tolist()\n"
                "[0.0, 3.0]\n"},
      {"exp2", "2**x, elementwise.\n\n"
               ">>> tf.exp2(np.array([0.0, 3.0])).numpy().tolist()\n"
               "[1.0, 8.0]\n"},
      {"cbrt", "The real cube root, elementwise (negative for negative x).\n\n"
               ">>> tf.cbrt(np.array([8.0, -27.0])).numpy().round(12).tolist()\n"
               "[2.0, -3.0]\n"},
      {"hypot", "sqrt(a**2 + b**2) without overflow or underflow, elementwise.\n\n"
                ">>> tf.hypot(np.array([3.0, 5.0]), np.array([4.0, 12.0])).numpy().tolist()\n"
                "[5.0, 13.0]\n"},
      {"erf", "The error function, elementwise.\n\n"
              ">>> tf.erf(np.array([0.0, 1.0])).numpy().round(4).tolist()\n"
              "[0.0, 0.8427]\n"},
      {"erfc", "1 - erf(x), elementwise, accurate for large x.\n\n"
               ">>> tf.erfc(np.array([0.0, 1.0])).numpy().round(4).tolist()\n"
               "[1.0, 0.1573]\n"},
      {"erfinv", "The inverse of erf on (-1, 1), elementwise.\n\n"
                 ">>> tf.erfinv(np.array([0.0, 0.5])).numpy().round(4).tolist()\n"
                 "[0.0, 0.4769]\n"},
      {"erfcinv", "The inverse of erfc on (0, 2), elementwise.\n\n"
                  ">>> tf.erfcinv(np.array([1.0, 0.5])).numpy().round(4).tolist()\n"
                  "[0.0, 0.4769]\n"},
      {"erfcx", "The scaled complementary error function exp(x**2) * erfc(x), elementwise.\n\n"
                ">>> tf.erfcx(np.array([0.0, 1.0])).numpy().round(4).tolist()\n"
                "[1.0, 0.4276]\n"},
      {"lgamma", "log(abs(Gamma(x))), elementwise.\n\n"
                 ">>> tf.lgamma(np.array([1.0, 5.0])).numpy().round(4).tolist()\n"
                 "[0.0, 3.1781]\n"},
      {"digamma", "The digamma function d/dx lgamma(x), elementwise.\n\n"
                  ">>> tf.digamma(np.array([1.0, 2.0])).numpy().round(4).tolist()\n"
                  "[-0.5772, 0.4228]\n"},
      {"i0", "The modified Bessel function of the first kind of order 0, elementwise.\n\n"
             ">>> tf.i0(np.array([0.0, 1.0])).numpy().round(4).tolist()\n"
             "[1.0, 1.2661]\n"},
      {"i0e", "exp(-abs(x)) * i0(x), elementwise (no overflow for large x).\n\n"
              ">>> tf.i0e(np.array([0.0, 1.0])).numpy().round(4).tolist()\n"
              "[1.0, 0.4658]\n"},
      {"i1", "The modified Bessel function of the first kind of order 1, elementwise.\n\n"
             ">>> tf.i1(np.array([0.0, 1.0])).numpy().round(4).tolist()\n"
             "[0.0, 0.5652]\n"},
      {"i1e", "exp(-abs(x)) * i1(x), elementwise (no overflow for large x).\n\n"
              ">>> tf.i1e(np.array([0.0, 1.0])).numpy().round(4).tolist()\n"
              "[0.0, 0.2079]\n"},
      {"floor", "The largest integer not above x, elementwise (same dtype).\n\n"
                ">>> tf.floor(np.array([-1.5, 1.5])).numpy().tolist()\n"
                "[-2.0, 1.0]\n"},
      {"ceil", "The smallest integer not below x, elementwise (same dtype).\n\n"
               ">>> tf.ceil(np.array([-1.5, 1.5])).numpy().tolist()\n"
               "[-1.0, 2.0]\n"},
      {"round", "x rounded to the nearest integer, ties to even (decimals: to that many decimal places, as "
                "numpy.round).\n\n"
                ">>> tf.round(np.array([0.5, 1.5, 2.7])).numpy().tolist()\n"
                "[0.0, 2.0, 3.0]\n"},
      {"trunc", "x rounded toward zero, elementwise (same dtype).\n\n"
                ">>> tf.trunc(np.array([-1.5, 1.5])).numpy().tolist()\n"
                "[-1.0, 1.0]\n"},
      {"frac", "x - trunc(x): the fractional part with x's sign, elementwise.\n\n"
               ">>> tf.frac(np.array([-1.25, 2.75])).numpy().tolist()\n"
               "[-0.25, 0.75]\n"},
      {"fmod", "The remainder of a / b with a's sign (C's fmod), elementwise.\n\n"
               ">>> tf.fmod(np.array([-5.0, 5.0]), 3.0).numpy().tolist()\n"
               "[-2.0, 2.0]\n"},
      {"remainder", "The remainder of a / b with b's sign (Python's %), elementwise.\n\n"
                    ">>> tf.remainder(np.array([-5.0, 5.0]), 3.0).numpy().tolist()\n"
                    "[1.0, 2.0]\n"},
      {"sigmoid", "The logistic function 1 / (1 + exp(-x)), elementwise.\n\n"
                  ">>> tf.sigmoid(np.array([0.0, 2.0])).numpy().round(4).tolist()\n"
                  "[0.5, 0.8808]\n"},
      {"relu", "max(x, 0), elementwise.\n\n"
               ">>> tf.relu(np.array([-1.0, 2.0])).numpy().tolist()\n"
               "[0.0, 2.0]\n"},
      {"softplus", "log(1 + exp(x)), elementwise, without overflow for large x.\n\n"
                   ">>> tf.softplus(np.array([0.0, 100.0])).numpy().round(4).tolist()\n"
                   "[0.6931, 100.0]\n"},
      {"stop_gradient", "x, with a zero derivative: transforms treat the result as a constant.\n\n"
                        ">>> tf.grad(lambda x: tf.sum(x * tf.stop_gradient(x)))(np.array([3.0])).numpy().tolist()\n"
                        "[3.0]\n"},
      {"ndtr", "The standard normal distribution function, elementwise.\n\n"
               ">>> tf.ndtr(np.array([0.0, 1.0])).numpy().round(4).tolist()\n"
               "[0.5, 0.8413]\n"},
      {"log_ndtr", "log(ndtr(x)), elementwise, accurate far in the lower tail.\n\n"
                   ">>> tf.log_ndtr(np.array([0.0, -10.0])).numpy().round(4).tolist()\n"
                   "[-0.6931, -53.2313]\n"},
      {"ndtri", "The inverse of ndtr (the standard normal quantile function), elementwise.\n\n"
                ">>> tf.ndtri(np.array([0.025, 0.975])).numpy().round(4).tolist()\n"
                "[-1.96, 1.96]\n"},
      {"sinc", "The normalized sinc, sin(pi x) / (pi x) (1 at 0), elementwise.\n\n"
               ">>> tf.sinc(np.array([0.0, 0.5])).numpy().round(4).tolist()\n"
               "[1.0, 0.6366]\n"},
      {"isnan", "Whether x is NaN, elementwise (bool).\n\n"
                ">>> tf.isnan(np.array([1.0, np.nan])).numpy().tolist()\n"
                "[False, True]\n"},
      {"isinf", "Whether x is infinite, elementwise (bool).\n\n"
                ">>> tf.isinf(np.array([1.0, -np.inf])).numpy().tolist()\n"
                "[False, True]\n"},
      {"isfinite", "Whether x is neither infinite nor NaN, elementwise (bool).\n\n"
                   ">>> tf.isfinite(np.array([1.0, np.inf, np.nan])).numpy().tolist()\n"
                   "[True, False, False]\n"},
      {"maximum", "The larger of a and b, elementwise with broadcasting.\n\n"
                  ">>> tf.maximum(np.array([1.0, 5.0]), 3.0).numpy().tolist()\n"
                  "[3.0, 5.0]\n"},
      {"minimum", "The smaller of a and b, elementwise with broadcasting.\n\n"
                  ">>> tf.minimum(np.array([1.0, 5.0]), 3.0).numpy().tolist()\n"
                  "[1.0, 3.0]\n"},
      {"logaddexp", "log(exp(a) + exp(b)) without overflow, elementwise.\n\n"
                    ">>> tf.logaddexp(np.array([0.0, 1000.0]), np.array([0.0, 1000.0])).numpy().round(4).tolist()\n"
                    "[0.6931, 1000.6931]\n"},
      {"xlogy", "a * log(b), 0 where a is 0 (even where b is 0), elementwise.\n\n"
                ">>> tf.xlogy(np.array([0.0, 2.0]), np.array([0.0, np.e])).numpy().round(4).tolist()\n"
                "[0.0, 2.0]\n"},
      {"matmul", "The matrix product a @ b, with NumPy's rules for 1-d operands and batch axes.\n\n"
                 ">>> tf.matmul(np.array([[1.0, 2.0], [3.0, 4.0]]), np.array([1.0, 1.0])).numpy().tolist()\n"
                 "[3.0, 7.0]\n"},
      {"add", "a + b, elementwise with broadcasting.\n\n"
              ">>> tf.add(np.array([1.0, 2.0]), 10.0).numpy().tolist()\n"
              "[11.0, 12.0]\n"},
      {"sub", "a - b, elementwise with broadcasting.\n\n"
              ">>> tf.sub(np.array([1.0, 2.0]), 10.0).numpy().tolist()\n"
              "[-9.0, -8.0]\n"},
      {"mul", "a * b, elementwise with broadcasting.\n\n"
              ">>> tf.mul(np.array([1.0, 2.0]), np.array([[1.0], [10.0]])).numpy().tolist()\n"
              "[[1.0, 2.0], [10.0, 20.0]]\n"},
      {"div", "a / b, elementwise with broadcasting.\n\n"
              ">>> tf.div(np.array([1.0, 3.0]), 2.0).numpy().tolist()\n"
              "[0.5, 1.5]\n"},
      {"pow", "a ** b, elementwise with broadcasting (also named power).\n\n"
              ">>> tf.pow(np.array([2.0, 3.0]), 2.0).numpy().tolist()\n"
              "[4.0, 9.0]\n"},
      {"cross_entropy", "The mean over the batch of -sum(labels * log_softmax(logits)) along the last axis; labels "
                        "are probabilities (one-hot, say) of the logits' shape.\n\n"
                        ">>> round(tf.cross_entropy(np.array([[0.0, 0.0]]), np.array([[1.0, 0.0]])).item(), 4)\n"
                        "0.6931\n"},
      {"eq", "a == b, elementwise with broadcasting (bool).\n\n"
             ">>> tf.eq(np.array([1.0, 2.0]), 2.0).numpy().tolist()\n"
             "[False, True]\n"},
      {"ne", "a != b, elementwise with broadcasting (bool).\n\n"
             ">>> tf.ne(np.array([1.0, 2.0]), 2.0).numpy().tolist()\n"
             "[True, False]\n"},
      {"lt", "a < b, elementwise with broadcasting (bool).\n\n"
             ">>> tf.lt(np.array([1.0, 2.0]), 2.0).numpy().tolist()\n"
             "[True, False]\n"},
      {"le", "a <= b, elementwise with broadcasting (bool).\n\n"
             ">>> tf.le(np.array([1.0, 2.0]), 2.0).numpy().tolist()\n"
             "[True, True]\n"},
      {"gt", "a > b, elementwise with broadcasting (bool).\n\n"
             ">>> tf.gt(np.array([1.0, 2.0]), 2.0).numpy().tolist()\n"
             "[False, False]\n"},
      {"ge", "a >= b, elementwise with broadcasting (bool).\n\n"
             ">>> tf.ge(np.array([1.0, 2.0]), 2.0).numpy().tolist()\n"
             "[False, True]\n"},
      {"sum", "The sum over axis (None: every axis; an int or a sequence of ints).\n\n"
              ">>> tf.sum(np.array([[1.0, 2.0], [3.0, 4.0]]), axis=0).numpy().tolist()\n"
              "[4.0, 6.0]\n"},
      {"mean", "The mean over axis (None: every axis; an int or a sequence of ints).\n\n"
               ">>> tf.mean(np.array([[1.0, 2.0], [3.0, 4.0]])).item()\n"
               "2.5\n"},
      {"max", "The maximum over axis (None: every axis; an int or a sequence of ints).\n\n"
              ">>> tf.max(np.array([[1.0, 2.0], [3.0, 4.0]]), axis=1).numpy().tolist()\n"
              "[2.0, 4.0]\n"},
      {"min", "The minimum over axis (None: every axis; an int or a sequence of ints).\n\n"
              ">>> tf.min(np.array([[1.0, 2.0], [3.0, 4.0]]), axis=1).numpy().tolist()\n"
              "[1.0, 3.0]\n"},
      {"logsumexp", "log(sum(exp(x))) over axis without overflow (None: every axis).\n\n"
                    ">>> round(tf.logsumexp(np.array([1000.0, 1000.0])).item(), 4)\n"
                    "1000.6931\n"},
      {"prod", "The product over axis (None: every axis; an int or a sequence of ints).\n\n"
               ">>> tf.prod(np.array([[1.0, 2.0], [3.0, 4.0]]), axis=0).numpy().tolist()\n"
               "[3.0, 8.0]\n"},
      {"argmax", "The index (i64) of the first maximum along axis.\n\n"
                 ">>> tf.argmax(np.array([[1.0, 5.0, 5.0], [7.0, 0.0, 2.0]]), 1).numpy().tolist()\n"
                 "[1, 0]\n"},
      {"argmin", "The index (i64) of the first minimum along axis.\n\n"
                 ">>> tf.argmin(np.array([[1.0, 5.0, 0.0], [7.0, 0.0, 0.0]]), 1).numpy().tolist()\n"
                 "[2, 1]\n"},
  };
  const auto it = docs.find(name);
  return it == docs.end() ? "" : it->second;
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

void Operands::record_in_active_trace() {
  if (traced_ || eager_) return;
  if (std::optional<Traced> anchor = detail::recording_anchor()) {
    traced_ = true;
    like_ = std::move(*anchor);
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
      "array, a transform's argument): its value is not known while tracing.\n"
      "\n"
      ">>> try:\n"
      "...     tf.grad(lambda x: x if x > 0.0 else -x)(1.0)\n"
      "... except tf.TracerConversionError:\n"
      "...     print(\"use tf.where or tf.cond\")\n"
      "use tf.where or tf.cond\n",
      PyExc_TypeError, nullptr);
  if (!tracer_conversion_class) throw py::error_already_set();
  m.attr("TracerConversionError") = py::handle(tracer_conversion_class);

  py::class_<Traced> traced(m, "Traced",
                            "A value inside a traced function: operations on it are recorded.\n"
                            "\n"
                            "It has a dtype and a shape, but no value while tracing.\n"
                            "\n"
                            ">>> def f(x):\n"
                            "...     print(x, x.shape, x.dtype)\n"
                            "...     return x * 2.0\n"
                            ">>> tf.jit(f)(np.ones(2)).numpy().tolist()\n"
                            "Traced(f64[2]) (2,) f64\n"
                            "[2.0, 2.0]\n");
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
  m.def(#name, lift(#name, +[](const Traced& x) { return name(x); }), py::arg("x"), op_doc(#name));
  // The functions that are one op each come from the op list (tenferro/op_list.hpp).
#define TENFERRO_PY_LIST_UNARY(X, kind, name) TENFERRO_PY_UNARY(name)
#define TENFERRO_PY_LIST_BINARY(X, kind, name) \
  m.def(#name, lift(#name, +[](const Traced& a, const Traced& b) { return name(a, b); }), py::arg("a"), py::arg("b"), \
        op_doc(#name));
  TENFERRO_OP_LIST(TENFERRO_OP_LIST_NONE, TENFERRO_PY_LIST_UNARY, TENFERRO_PY_LIST_BINARY, TENFERRO_OP_LIST_SKIP_M, TENFERRO_OP_LIST_SKIP)
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
  m.def(#name, lift(#name, +[](const Traced& a, const Traced& b) { return name(a, b); }), py::arg("a"), py::arg("b"), \
        op_doc(#name));
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
        py::arg("x"), py::arg("lo"), py::arg("hi"),
        "x limited to [lo, hi], elementwise with broadcasting (also named clip).\n"
        "\n"
        ">>> tf.clamp(np.array([-2.0, 0.5, 3.0]), 0.0, 1.0).numpy().tolist()\n"
        "[0.0, 0.5, 1.0]\n");
  m.attr("clip") = m.attr("clamp");  // numpy.clip(a, a_min, a_max)
  m.def("astype", lift("astype", +[](const Traced& a, const std::string& dtype) {
    return astype(a, dtype_named(dtype, "tenferro.astype"));
  }), py::arg("x"), py::arg("dtype"),
        "x converted to dtype (\"f32\", \"f64\", \"c64\", \"c128\", \"i64\" or \"bool\").\n"
        "\n"
        ">>> tf.astype(np.array([1.5, -2.5]), \"i64\")\n"
        "tensor(i64[2], [1, -2])\n");
  // Ties to even; decimals as numpy.round (negative: tens, hundreds, ...).
  m.def("round", lift("round", +[](const Traced& x, int decimals) { return decimals == 0 ? round(x) : round(x, decimals); }),
        py::arg("x"), py::arg("decimals") = 0);
  // (mantissa, i64 exponent) as numpy.frexp; ldexp's exponent is an index operand (Python ints: i64).
  m.def("frexp", lift("frexp", +[](const Traced& x) { return frexp(x); }), py::arg("x"),
        "(mantissa, exponent) with x = mantissa * 2**exponent and 0.5 <= abs(mantissa) < 1, as numpy.frexp (i64 "
        "exponents).\n"
        "\n"
        ">>> [t.numpy().tolist() for t in tf.frexp(np.array([8.0, 0.75]))]\n"
        "[[0.5, 0.75], [4, 0]]\n");
  m.def("ldexp", lift("ldexp", +[](const Traced& x, const Traced& e) { return ldexp(x, e); }, "vi"), py::arg("x"),
        py::arg("e"),
        "x * 2**e, elementwise (e an integer tensor or int).\n"
        "\n"
        ">>> tf.ldexp(np.array([0.5, 3.0]), np.array([4, -1])).numpy().tolist()\n"
        "[8.0, 1.5]\n");
  // The order first, as scipy.special.polygamma and torch.polygamma.
  m.def("polygamma", lift("polygamma", +[](int n, const Traced& x) { return polygamma(n, x); }), py::arg("n"),
        py::arg("x"),
        "The n-th derivative of digamma at x, elementwise (n first, as scipy.special.polygamma).\n"
        "\n"
        ">>> tf.polygamma(1, np.array([1.0])).numpy().round(4).tolist()\n"
        "[1.6449]\n");
  m.def("mvlgamma", lift("mvlgamma", +[](const Traced& x, int p) { return mvlgamma(x, p); }), py::arg("x"), py::arg("p"),
        "The log of the multivariate gamma function of dimension p, elementwise.\n"
        "\n"
        ">>> tf.mvlgamma(np.array([2.5]), 2).numpy().round(4).tolist()\n"
        "[0.857]\n");

  m.def("where", lift("where", +[](const Traced& p, const Traced& a, const Traced& b) { return where(p, a, b); }, "pvv"),
        py::arg("pred"), py::arg("a"), py::arg("b"),
        "a where pred is true, else b, elementwise with broadcasting (pred a bool tensor or bool).\n"
        "\n"
        ">>> tf.where(np.array([True, False]), np.array([1.0, 2.0]), 0.0).numpy().tolist()\n"
        "[1.0, 0.0]\n");
  // Reductions: `axis` None (every axis), an int or a sequence of ints.
#define TENFERRO_PY_REDUCTION(name)                                                                           \
  m.def(#name, lift(#name, +[](const Traced& a, const py::object& axis) { return name(a, axes_of(axis, a.rank())); }), \
        py::arg("x"), py::arg("axis") = py::none(), op_doc(#name));
  TENFERRO_PY_REDUCTION(sum) TENFERRO_PY_REDUCTION(mean) TENFERRO_PY_REDUCTION(max) TENFERRO_PY_REDUCTION(min)
  TENFERRO_PY_REDUCTION(logsumexp) TENFERRO_PY_REDUCTION(prod)
#undef TENFERRO_PY_REDUCTION
  // Variance and standard deviation: divided by n - correction (numpy's ddof, array API's correction).
  m.def("var", lift("var", +[](const Traced& a, const py::object& axis, double correction) {
    return var(a, axes_of(axis, a.rank()), correction);
  }), py::arg("x"), py::arg("axis") = py::none(), py::arg("correction") = 0.0,
        "The variance over axis, divided by n - correction (NumPy's ddof).\n"
        "\n"
        ">>> tf.var(np.array([[1.0, 2.0], [3.0, 4.0]]), axis=0).numpy().tolist()\n"
        "[1.0, 1.0]\n");
  m.def("stddev", lift("stddev", +[](const Traced& a, const py::object& axis, double correction) {
    return stddev(a, axes_of(axis, a.rank()), correction);
  }), py::arg("x"), py::arg("axis") = py::none(), py::arg("correction") = 0.0,
        "The standard deviation over axis, divided by n - correction (NumPy's ddof; also named std).\n"
        "\n"
        ">>> tf.stddev(np.array([1.0, 2.0, 3.0, 4.0]), correction=1).numpy().round(4).tolist()\n"
        "1.291\n");
  m.attr("std") = m.attr("stddev");  // numpy.std (C++ cannot name it std)
  // (values, i64 indices of their first occurrence) along one axis, as torch.max(x, dim).
  m.def("max_with_index", lift("max_with_index", +[](const Traced& a, std::int64_t axis) { return max_with_index(a, axis); }),
        py::arg("x"), py::arg("axis"),
        "(values, i64 indices of their first occurrence) of the maximum along axis, as torch.max(x, dim).\n"
        "\n"
        ">>> [t.numpy().tolist() for t in tf.max_with_index(np.array([[1.0, 5.0], [7.0, 0.0]]), 1)]\n"
        "[[5.0, 7.0], [1, 0]]\n");
  m.def("min_with_index", lift("min_with_index", +[](const Traced& a, std::int64_t axis) { return min_with_index(a, axis); }),
        py::arg("x"), py::arg("axis"),
        "(values, i64 indices of their first occurrence) of the minimum along axis, as torch.min(x, dim).\n"
        "\n"
        ">>> [t.numpy().tolist() for t in tf.min_with_index(np.array([[1.0, 5.0], [7.0, 0.0]]), 1)]\n"
        "[[1.0, 0.0], [0, 1]]\n");
  // The index (i64) of the first maximum / minimum along one axis (required: the C++ API has no
  // flattened form). An empty axis raises tf.ValueError, as NumPy raises ValueError.
#define TENFERRO_PY_ARG_REDUCTION(name)                                                                 \
  m.def(#name, lift(#name, +[](const Traced& a, std::int64_t axis) { return name(a, axis); }), py::arg("x"), \
        py::arg("axis"), op_doc(#name));
  TENFERRO_PY_ARG_REDUCTION(argmax) TENFERRO_PY_ARG_REDUCTION(argmin)
#undef TENFERRO_PY_ARG_REDUCTION
  m.def("softmax", lift("softmax", +[](const Traced& a, std::int64_t axis) { return softmax(a, axis); }), py::arg("x"),
        py::arg("axis") = -1,
        "exp(x) / sum(exp(x)) along axis, without overflow.\n"
        "\n"
        ">>> tf.softmax(np.array([0.0, np.log(3.0)])).numpy().round(4).tolist()\n"
        "[0.25, 0.75]\n");
  m.def("log_softmax", lift("log_softmax", +[](const Traced& a, std::int64_t axis) { return log_softmax(a, axis); }),
        py::arg("x"), py::arg("axis") = -1,
        "x - logsumexp(x) along axis: the log of softmax, accurate.\n"
        "\n"
        ">>> tf.log_softmax(np.array([0.0, 0.0])).numpy().round(4).tolist()\n"
        "[-0.6931, -0.6931]\n");
  m.def("transpose", lift("transpose", +[](const Traced& a, const py::object& perm) {
    return perm.is_none() ? transpose(a) : transpose(a, perm.cast<Axes>());
  }), py::arg("x"), py::arg("axes") = py::none(),
        "x with its axes permuted (axes None: reversed), as numpy.transpose.\n"
        "\n"
        ">>> tf.transpose(np.zeros((2, 3, 4)), (1, 0, 2)).shape\n"
        "(3, 2, 4)\n");
  m.def("reshape", lift("reshape", +[](const Traced& a, const Shape& s) { return reshape(a, s); }), py::arg("x"),
        py::arg("shape"),
        "x's elements (row-major) in the given shape.\n"
        "\n"
        ">>> tf.reshape(np.arange(6.0), (2, 3)).numpy().tolist()\n"
        "[[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]\n");
  m.def("broadcast_to", lift("broadcast_to", +[](const Traced& a, const Shape& s) { return broadcast_to(a, s); }),
        py::arg("x"), py::arg("shape"),
        "x broadcast to shape, with NumPy's rules.\n"
        "\n"
        ">>> tf.broadcast_to(np.array([1.0, 2.0]), (2, 2)).numpy().tolist()\n"
        "[[1.0, 2.0], [1.0, 2.0]]\n");
  // dot_general's dimension numbers (StableHLO's): the result axes are the batch axes, then a's
  // free axes, then b's. semiring_dot_general: the same contraction in a tropical semiring
  // ("max_plus", "min_plus", "max_times"; not differentiable), with the index of the winning
  // contracted position (row-major over a's contracting axes) from semiring_dot_general_index.
  m.def("dot_general", lift("dot_general", +[](const Traced& a, const Traced& b, const Axes& lhs_contract,
                                               const Axes& rhs_contract, const Axes& lhs_batch, const Axes& rhs_batch) {
    return dot_general(a, b, DotDims{lhs_batch, rhs_batch, lhs_contract, rhs_contract});
  }), py::arg("a"), py::arg("b"), py::kw_only(), py::arg("lhs_contract") = Axes{}, py::arg("rhs_contract") = Axes{},
     py::arg("lhs_batch") = Axes{}, py::arg("rhs_batch") = Axes{},
        "A general contraction (StableHLO's dot_general): the result axes are the batch axes, then a's free axes, "
        "then b's.\n"
        "\n"
        ">>> tf.dot_general(np.ones((2, 3)), np.ones((3, 4)), lhs_contract=[1], rhs_contract=[0]).shape\n"
        "(2, 4)\n");
  m.def("semiring_dot_general", lift("semiring_dot_general", +[](const Traced& a, const Traced& b,
                                                                 const std::string& semiring, const Axes& lhs_contract,
                                                                 const Axes& rhs_contract, const Axes& lhs_batch,
                                                                 const Axes& rhs_batch) {
    return semiring_dot_general(a, b, semiring_named(semiring, "tenferro.semiring_dot_general"),
                                DotDims{lhs_batch, rhs_batch, lhs_contract, rhs_contract});
  }), py::arg("a"), py::arg("b"), py::arg("semiring"), py::kw_only(), py::arg("lhs_contract") = Axes{},
     py::arg("rhs_contract") = Axes{}, py::arg("lhs_batch") = Axes{}, py::arg("rhs_batch") = Axes{},
        "dot_general in a tropical semiring (\"max_plus\", \"min_plus\" or \"max_times\"; not differentiable).\n"
        "\n"
        ">>> tf.semiring_dot_general(np.array([[0.0, 1.0]]), np.array([[2.0], [0.0]]), \"max_plus\", "
        "lhs_contract=[1], rhs_contract=[0]).numpy().tolist()\n"
        "[[2.0]]\n");
  m.def("semiring_dot_general_index", lift("semiring_dot_general_index", +[](const Traced& a, const Traced& b,
                                                                             const std::string& semiring,
                                                                             const Axes& lhs_contract,
                                                                             const Axes& rhs_contract,
                                                                             const Axes& lhs_batch, const Axes& rhs_batch) {
    return semiring_dot_general_index(a, b, semiring_named(semiring, "tenferro.semiring_dot_general_index"),
                                      DotDims{lhs_batch, rhs_batch, lhs_contract, rhs_contract});
  }), py::arg("a"), py::arg("b"), py::arg("semiring"), py::kw_only(), py::arg("lhs_contract") = Axes{},
     py::arg("rhs_contract") = Axes{}, py::arg("lhs_batch") = Axes{}, py::arg("rhs_batch") = Axes{},
        "(values, i64 index of the winning contracted position, row-major over a's contracting axes) of "
        "semiring_dot_general.\n"
        "\n"
        ">>> [t.numpy().tolist() for t in tf.semiring_dot_general_index(np.array([[0.0, 1.0]]), np.array([[2.0], "
        "[0.0]]), \"max_plus\", lhs_contract=[1], rhs_contract=[0])]\n"
        "[[[2.0]], [[0]]]\n");
}

}  // namespace tenferro::python
