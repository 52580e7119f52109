#pragma once
// Internal to the Python module (_tenferro): the conversions its files share.
#include <cstring>
#include <tuple>
#include <type_traits>
#include <utility>

#include <pybind11/complex.h>
#include <pybind11/functional.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "tenferro/tenferro.hpp"

/// tenferro::Shape converts like a std::vector<int64>: from any sequence of ints, to a list.
template <>
struct pybind11::detail::type_caster<tenferro::Shape> : list_caster<tenferro::Shape, std::int64_t> {};

namespace tenferro::python {

namespace py = pybind11;

/// A new Tensor holding a copy of a NumPy array (any layout; the dtype kept, integers as i64).
/// TypeError for object arrays and dtypes tenferro has no counterpart for; ValueError for unsigned
/// values that do not fit i64. `who` names the caller in the message.
Tensor tensor_from_array(const py::array& a, const std::string& who = "tenferro");
/// A Tensor sharing the array's memory when it can (C-contiguous, aligned, native byte order, a
/// tenferro dtype), else a copy.
Tensor share_or_copy(const py::array& a, const std::string& who = "tenferro");
/// A Tensor from a Tensor (shared), a NumPy array (shared when it can be, see share_or_copy), an
/// object with __array__ or a nested sequence (copied) or a Python scalar (f64, c128 or bool).
/// A nested sequence must be regular: ShapeError (a ValueError) naming the first ragged axis
/// otherwise. A Traced value (or a sequence holding one) raises TracerConversionError (TypeError),
/// anything else that is not a tensor TypeError; `who` names the caller ("tenferro.grad argument 0").
Tensor to_tensor(const py::handle& x, const std::string& who = "tenferro");
/// The dtype a Tensor, EagerTensor or NumPy array operand has as a tensor (integer arrays: i64);
/// nothing for other objects (scalars, sequences), whose dtype follows from their values.
std::optional<DType> operand_dtype(const py::handle& x);
/// The Traced values a traced Python callable returned: one Traced, or a tuple or list of them,
/// nested tuples and lists flattened depth-first. With `like`, a concrete result (a Tensor, an
/// array, a scalar, an EagerTensor without history) becomes a constant of like's trace. TypeError
/// naming what came back otherwise.
std::vector<Traced> traced_results(const py::handle& r, const Traced* like = nullptr);
/// A C++ traced function calling the Python callable with the Traced arguments.
detail::TracedFunction traced_function(py::function f);

/// `axis` as the C++ API wants it: None (every axis of a rank-`rank` value), an int or a sequence
/// of ints.
std::vector<std::int64_t> axes_of(const py::object& axis, std::size_t rank);

/// One item of x[...] (traced_py.cpp): an int, a slice, Ellipsis, None (new axis), a Traced or an
/// array of integer indices (a constant of x's trace). TypeError for a bool.
IndexItem index_item(const Traced& x, const py::handle& k);
/// The DType named as astype names them ("f32", "f64", "c64", "c128", "i64", "bool"); ValueError
/// naming `fn` otherwise.
DType dtype_named(const std::string& name, const std::string& fn);
/// The Semiring named by semiring_name ("max_plus", "min_plus", "max_times", "standard");
/// ValueError naming `fn` otherwise.
Semiring semiring_named(const std::string& name, const std::string& fn);

/// Raises tenferro.TracerConversionError (a TypeError): a Traced value was used where Python needs
/// a concrete value (bool(), int(), float(), an index, a NumPy array, a transform's argument).
[[noreturn]] void throw_tracer_conversion(const std::string& message);
/// The Python exception class tenferro.TracerConversionError (created by bind_traced).
py::handle tracer_conversion_error();

/// What a Python scalar given for a tensor operand becomes (a 0-d constant; arrays keep their
/// dtype):
enum class Slot : char {
  Value = 'v',  ///< a value: the dtype of the call's first traced value operand (float scalars beside an
                ///< integer or bool one become f64, complex ones c64 or c128), as JAX's weak types
  Index = 'i',  ///< an index or a key: ints (and bools) become i64; other scalars are refused
  Pred = 'p',   ///< a predicate: bools become bool; other scalars are refused
};

/// The tensor operands of one call of the public function `fn`, made Traced values of one trace:
/// the single place that coerces an operand. add() every operand first, then get() each, then hand
/// the call's result to result(). The operands decide where the call runs:
/// - traced: some operand is Traced (inside a transformed function). A Traced stays as it is; a
///   Tensor, NumPy array, nested sequence, Python scalar or EagerTensor that needs no grad becomes
///   a constant of that trace (scalars typed by their Slot). The result stays Traced.
/// - eager: no operand is Traced and one is a tf.EagerTensor. Every operand joins the calling
///   thread's eager trace (tenferro/eager.hpp): the operation runs now and records what it did for
///   backward(). result() makes the call's Traced results EagerTensors.
/// - concrete: only Tensors, arrays, sequences and scalars. The operation runs now on the eager
///   trace without history; result() makes the results Tensors (NumPy reads them with asarray).
/// In every mode the same C++ function runs, so values, broadcasting and errors agree.
class Operands {
 public:
  explicit Operands(std::string fn) : fn_(std::move(fn)) {}
  void add(const py::handle& x, Slot slot = Slot::Value);
  /// Each item of a list or tuple of operands (anything else: as one operand, refused by get_list).
  void add_list(const py::handle& xs, Slot slot = Slot::Value);
  Traced get(const py::handle& x, Slot slot = Slot::Value) const;
  std::vector<Traced> get_list(const py::handle& xs, Slot slot = Slot::Value) const;
  const std::string& name() const { return fn_; }
  /// For the control-flow functions, after their operands are added: when every operand is
  /// concrete (no Traced, no EagerTensor) while this thread records a trace (a transformed
  /// function's or a body's), the call records into that trace instead of running now, so that
  /// its bodies may read that trace's values (a closure over the function's arguments).
  void record_in_active_trace();
  /// True when the call runs now (eager or concrete operands), false inside a trace.
  bool runs_now() const { return !traced_; }
  /// The call's result (a Traced, or tuples and lists of them, nested) as the mode hands it back:
  /// unchanged when traced, EagerTensors when eager, Tensors when concrete.
  py::object result(py::object r) const;

 private:
  const Traced& like() const;
  std::string fn_;
  bool traced_ = false;                   // a Traced operand was added
  bool eager_ = false;                    // an EagerTensor operand was added
  mutable std::optional<Traced> like_;    // the trace that receives the constants (traced: the first Traced)
  std::optional<DType> value_dtype_;      // the dtype of the first tensor value operand (Traced ones first)
  std::optional<DType> concrete_dtype_;   // the dtype of the first concrete or eager value operand
  std::vector<std::string> seen_;         // the operands' Python types, for the error without any
};

namespace lifting {
template <class T>
constexpr bool is_traced = std::is_same_v<std::remove_cvref_t<T>, Traced>;
template <class T>
constexpr bool is_traced_list = std::is_same_v<std::remove_cvref_t<T>, std::vector<Traced>>;
/// The Python-side type of a C++ parameter: tensor operands arrive as any Python object.
template <class T>
using param_t = std::conditional_t<is_traced<T> || is_traced_list<T>, py::object, T>;

inline Slot slot_at(const char* slots, std::size_t i) {
  return i < std::strlen(slots) ? static_cast<Slot>(slots[i]) : Slot::Value;
}

template <class R, class... A, std::size_t... I>
py::object call(const char* fn, const char* slots, R (*f)(A...), std::index_sequence<I...>, param_t<A>&... args) {
  Operands ops(std::string("tenferro.") + fn);
  auto note = [&]<class T>(const auto& arg, std::size_t i) {
    if constexpr (is_traced<T>) ops.add(arg, slot_at(slots, i));
    if constexpr (is_traced_list<T>) ops.add_list(arg, slot_at(slots, i));
  };
  (note.template operator()<A>(args, I), ...);
  auto get = [&]<class T>(auto& arg, std::size_t i) -> decltype(auto) {
    if constexpr (is_traced<T>) {
      return ops.get(arg, slot_at(slots, i));
    } else if constexpr (is_traced_list<T>) {
      return ops.get_list(arg, slot_at(slots, i));
    } else {
      return (arg);
    }
  };
  if constexpr (std::is_base_of_v<py::object, R>) {
    return ops.result(f(get.template operator()<A>(args, I)...));
  } else {
    return ops.result(py::cast(f(get.template operator()<A>(args, I)...)));
  }
}
}  // namespace lifting

/// `f` as a Python function whose tensor parameters (const Traced&, std::vector<Traced>) take any
/// operand Operands accepts: Traced values, EagerTensors, Tensors, NumPy arrays, nested sequences,
/// Python scalars; it records into a trace, runs eagerly or runs on concrete values as Operands
/// decides, and returns what Operands::result makes of f's result. slots[i] is the Slot of parameter i ('v' where `slots`
/// is shorter); `fn` names the function in errors ("linalg.solve"). Other parameters are bound as
/// pybind11 binds them. Lambdas: lift("x", +[](const Traced& a, ...) { ... }).
template <class R, class... A>
auto lift(const char* fn, R (*f)(A...), const char* slots = "") {
  return [fn, f, slots](lifting::param_t<A>... args) -> py::object {
    return lifting::call(fn, slots, f, std::index_sequence_for<A...>{}, args...);
  };
}

void bind_tensor(py::module_& m);
void bind_traced(py::module_& m);
void bind_transforms(py::module_& m);
void bind_linalg(py::module_& m);
void bind_random(py::module_& m);
void bind_control(py::module_& m);
void bind_sparse(py::module_& m);
void bind_dlpack(py::module_& m, py::class_<Tensor>& tensor);
void bind_eager(py::module_& m);
void bind_optim(py::module_& m);
void bind_einsum(py::module_& m);
/// tenferro.distributed's C++ side (distributed_py.cpp), where the component tenferro::mpi is built.
void bind_distributed(py::module_& m);
/// The operators and methods Tensor and EagerTensor share with Traced (arithmetic, comparisons,
/// indexing, .T, reshape, sum, mean, astype), bound on the class `cls` of the module (traced_py.cpp).
void bind_tensor_methods(py::module_& m, const char* cls);

}  // namespace tenferro::python
