// Python: Tensor and its exchange with NumPy.
// - Out: a Tensor exports its storage through the buffer protocol and __array_interface__
//   (numpy.asarray(t) shares memory with it; the NumPy array keeps the Tensor alive).
// - In: tenferro.from_numpy(a) and arguments of transformed functions share the array's memory
//   when it is C-contiguous, aligned, in native byte order and of a tenferro dtype (float32/64,
//   complex64/128, int64, bool); the Tensor keeps the array alive. tenferro.Tensor(a) always
//   copies (any layout, byte order or integer width), as do arguments that cannot be shared.
// - Nested sequences are walked before NumPy sees them: a ragged one is refused with a ShapeError
//   (a ValueError) naming the axis and the two items whose lengths differ, instead of reaching
//   NumPy, which would make an object array of it or raise, depending on its version.
#include <climits>

#include "module.hpp"

namespace tenferro::python {

namespace {

std::string format_of(DType d) {
  switch (d) {
    case DType::F32: return py::format_descriptor<float>::format();
    case DType::F64: return py::format_descriptor<double>::format();
    case DType::C64: return py::format_descriptor<c64>::format();
    case DType::C128: return py::format_descriptor<c128>::format();
    case DType::I64: return py::format_descriptor<std::int64_t>::format();
    case DType::Bool: return py::format_descriptor<bool>::format();
  }
  return "B";
}

std::string type_name(const py::handle& x) {
  const py::handle type = py::type::of(x);
  const std::string module = py::str(type.attr("__module__"));
  const std::string name = py::str(type.attr("__qualname__"));
  return module == "builtins" ? name : module + "." + name;
}

template <class T>
Tensor copy_array(const py::array& a, const std::string& who) {
  // forcecast: NumPy converts byte order; c_style: a contiguous copy when `a` is not one.
  auto c = py::array_t<T, py::array::c_style | py::array::forcecast>::ensure(a);
  if (!c) {
    throw py::type_error(who + ": cannot read the " + a.dtype().attr("name").cast<std::string>() + " array as " +
                         std::string(dtype_name(dtype_of_v<T>)));
  }
  Shape shape(c.shape(), c.shape() + c.ndim());
  std::vector<T> values(c.data(), c.data() + c.size());
  return Tensor::from(values, std::move(shape));
}

/// The tenferro dtype an array can be shared as, if any.
std::optional<DType> shareable_dtype(const py::array& a) {
  const py::dtype dt = a.dtype();
  const char kind = dt.kind();
  const auto size = dt.itemsize();
  if (kind == 'f' && size == 4) return DType::F32;
  if (kind == 'f' && size == 8) return DType::F64;
  if (kind == 'c' && size == 8) return DType::C64;
  if (kind == 'c' && size == 16) return DType::C128;
  if (kind == 'i' && size == 8) return DType::I64;
  if (kind == 'b' && size == 1) return DType::Bool;
  return std::nullopt;
}

/// Why `a` cannot be shared, or "" if it can.
std::string unshareable_reason(const py::array& a) {
  const int flags = py::detail::array_proxy(a.ptr())->flags;
  if (!shareable_dtype(a)) return "its dtype " + a.dtype().attr("name").cast<std::string>() + " is not one of tenferro's";
  if (!(flags & py::detail::npy_api::NPY_ARRAY_C_CONTIGUOUS_)) return "it is not C-contiguous";
  if (!(flags & py::detail::npy_api::NPY_ARRAY_ALIGNED_)) return "it is not aligned";
  if (!a.dtype().attr("isnative").cast<bool>()) return "its byte order is not the machine's";
  return "";
}

Tensor share_array(const py::array& a) {
  Shape shape(a.shape(), a.shape() + a.ndim());
  // The Tensor holds a reference to the array; dropping it takes the GIL (the last copy of the
  // Tensor may die where the GIL is not held). After the interpreter has finalized (a thread's
  // eager trace is destroyed at process exit) the reference is left: no GIL can be taken then.
  auto* ref = new py::object(a);
  std::shared_ptr<void> owner(ref, [](void* p) {
    if (!Py_IsInitialized() || _Py_IsFinalizing()) return;
    py::gil_scoped_acquire gil;
    delete static_cast<py::object*>(p);
  });
  return Tensor::wrap(TensorType{*shareable_dtype(a), std::move(shape)}, const_cast<void*>(a.data()), std::move(owner));
}


bool is_python_number(const py::handle& x) {
  return PyBool_Check(x.ptr()) || PyLong_Check(x.ptr()) || PyFloat_Check(x.ptr()) || PyComplex_Check(x.ptr());
}

std::string path_string(const std::vector<std::size_t>& path) {
  if (path.empty()) return "the top level";
  std::string s;
  for (auto i : path) s += "[" + std::to_string(i) + "]";
  return s;
}

/// The shape of one item of a nested sequence (at `path`), every sequence in it checked to be
/// regular: ShapeError at the first axis whose lengths differ, TracerConversionError for a Traced
/// value, TypeError for an item that is not a number, an array or a sequence.
std::vector<std::int64_t> nested_shape(const py::handle& x, std::vector<std::size_t>& path, const std::string& who) {
  if (py::isinstance<Traced>(x)) {
    throw_tracer_conversion(who + ": a Traced value at " + path_string(path) +
                            " of a nested sequence: a nested sequence is a concrete tensor, and a traced value "
                            "is not known while tracing; use tf.stack (or tf.concatenate) to build a tensor "
                            "of traced values");
  }
  if (is_python_number(x)) return {};
  if (py::isinstance<Tensor>(x)) {
    const Shape& s = x.cast<const Tensor&>().shape();
    return {s.begin(), s.end()};
  }
  if (py::isinstance<py::array>(x) || py::hasattr(x, "__array__")) {
    // Arrays and array-likes (NumPy scalars, torch tensors: __array__) contribute their shape.
    const py::array a = py::module_::import("numpy").attr("asarray")(x);
    if (a.dtype().kind() == 'O') {
      throw py::type_error(who + ": an object array at " + path_string(path) + " is not a tensor");
    }
    return {a.shape(), a.shape() + a.ndim()};
  }
  if (PyUnicode_Check(x.ptr()) || PyBytes_Check(x.ptr()) || !py::isinstance<py::sequence>(x)) {
    throw py::type_error(who + ": cannot make a tensor from a " + type_name(x) + " (at " + path_string(path) +
                         "); expected numbers, arrays, Tensors or nested sequences of them");
  }
  const py::sequence seq = py::reinterpret_borrow<py::sequence>(x);
  const std::size_t n = seq.size();
  std::vector<std::int64_t> first;
  for (std::size_t i = 0; i < n; ++i) {
    path.push_back(i);
    std::vector<std::int64_t> s = nested_shape(seq[i], path, who);
    path.pop_back();
    if (i == 0) {
      first = std::move(s);
      continue;
    }
    if (s == first) continue;
    // The first axis (counted in the whole tensor) where item 0 and item i differ.
    std::size_t k = 0;
    while (k < s.size() && k < first.size() && s[k] == first[k]) ++k;
    const std::size_t axis = path.size() + 1 + k;
    std::vector<std::size_t> p0 = path, pi = path;
    p0.push_back(0);
    pi.push_back(i);
    for (std::size_t j = 0; j < k; ++j) p0.push_back(0), pi.push_back(0);
    std::string why;
    if (k < s.size() && k < first.size()) {
      why = "axis " + std::to_string(axis) + " has lengths " + std::to_string(first[k]) + " and " +
            std::to_string(s[k]) + " (at " + path_string(p0) + " and " + path_string(pi) + ")";
    } else {
      const bool first_longer = k < first.size();
      why = "axis " + std::to_string(axis) + " has length " + std::to_string(first_longer ? first[k] : s[k]) + " at " +
            path_string(first_longer ? p0 : pi) + " but a scalar stands at " + path_string(first_longer ? pi : p0);
    }
    throw ShapeError(who + ": ragged nested sequence: " + why +
                     "; a tensor needs equal lengths along each axis (pad the rows, or make one tensor per row)");
  }
  first.insert(first.begin(), static_cast<std::int64_t>(n));
  return first;
}

}  // namespace

Tensor share_or_copy(const py::array& a, const std::string& who) {
  return unshareable_reason(a).empty() ? share_array(a) : tensor_from_array(a, who);
}

Tensor tensor_from_array(const py::array& a, const std::string& who) {
  const py::dtype dt = a.dtype();
  const char kind = dt.kind();
  const auto size = dt.itemsize();
  if (kind == 'f' && size == 4) return copy_array<float>(a, who);
  if (kind == 'f' && size == 8) return copy_array<double>(a, who);
  if (kind == 'c' && size == 8) return copy_array<c64>(a, who);
  if (kind == 'c' && size == 16) return copy_array<c128>(a, who);
  if (kind == 'u' && size == 8 && a.size() > 0 &&
      a.attr("max")().cast<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX)) {
    throw py::value_error(who + ": the uint64 array holds " + std::string(py::str(a.attr("max")())) +
                          ", which does not fit tenferro's integer dtype i64");
  }
  if (kind == 'i' || kind == 'u') return copy_array<std::int64_t>(a, who);
  if (kind == 'b') return copy_array<bool>(a, who);
  if (kind == 'O') {
    throw py::type_error(who + ": an object array (shape " + std::string(py::str(a.attr("shape"))) +
                         ") is not a tensor; NumPy makes them of ragged or mixed nested sequences. Expected "
                         "float32, float64, complex64, complex128, an integer or bool");
  }
  throw py::type_error(who + ": unsupported dtype " + dt.attr("name").cast<std::string>() +
                       "; expected float32, float64, complex64, complex128, an integer or bool");
}

std::optional<DType> operand_dtype(const py::handle& x) {
  if (py::isinstance<Tensor>(x)) return x.cast<const Tensor&>().dtype();
  if (py::isinstance<EagerTensor>(x)) return x.cast<const EagerTensor&>().dtype();
  if (!py::isinstance<py::array>(x)) return std::nullopt;
  const py::dtype dt = py::reinterpret_borrow<py::array>(x).dtype();
  if (const auto d = shareable_dtype(py::reinterpret_borrow<py::array>(x))) return d;
  if (dt.kind() == 'i' || dt.kind() == 'u') return DType::I64;
  if (dt.kind() == 'b') return DType::Bool;
  return std::nullopt;
}

Tensor to_tensor(const py::handle& x, const std::string& who) {
  if (py::isinstance<Tensor>(x)) return x.cast<Tensor>();
  if (py::isinstance<EagerTensor>(x)) return x.cast<const EagerTensor&>().value();
  if (py::isinstance<Traced>(x)) {
    throw_tracer_conversion(who + ": a Traced value (" + x.cast<const Traced&>().type().to_string() +
                            ") where a concrete tensor is needed: its value is not known while tracing, since it "
                            "depends on the arguments of the traced function (transforms take concrete arrays; "
                            "a transform inside a traced function cannot take its traced values)");
  }
  if (PyBool_Check(x.ptr())) return Tensor::full({}, x.cast<bool>() ? 1.0 : 0.0, DType::Bool);
  if (PyLong_Check(x.ptr()) || PyFloat_Check(x.ptr())) return Tensor::scalar(x.cast<double>());
  if (PyComplex_Check(x.ptr())) return Tensor::scalar(x.cast<c128>());
  if (py::isinstance<py::array>(x)) return share_or_copy(py::reinterpret_borrow<py::array>(x), who);
  const bool array_like = py::hasattr(x, "__array__");
  if (array_like || (py::isinstance<py::sequence>(x) && !PyUnicode_Check(x.ptr()) && !PyBytes_Check(x.ptr()))) {
    if (!array_like) {
      std::vector<std::size_t> path;
      nested_shape(x, path, who);  // refuses ragged sequences, strings and Traced items before NumPy sees them
    }
    // numpy.asarray's own errors propagate (error_already_set) instead of a null array;
    // tensor_from_array refuses object arrays.
    const py::array a = py::module_::import("numpy").attr("asarray")(x);
    return tensor_from_array(a, who);
  }
  throw py::type_error(who + ": cannot make a tensor from a " + type_name(x) +
                       "; expected a Tensor, a NumPy array, a nested sequence of numbers or a Python scalar");
}

void bind_tensor(py::module_& m) {
  py::class_<Tensor> cls(m, "Tensor", py::buffer_protocol(),
                         "A dense row-major tensor.\n"
                         "\n"
                         "numpy.asarray(t) shares its memory; Tensor(array) copies; from_numpy(array) shares. "
                         "Operations on Tensors run at once and return Tensors.\n"
                         "\n"
                         ">>> t = tf.Tensor([[1.0, 2.0], [3.0, 4.0]])\n"
                         ">>> t\n"
                         "tensor(f64[2, 2], [[1, 2], [3, 4]])\n"
                         ">>> t.shape, t.dtype\n"
                         "((2, 2), 'f64')\n"
                         ">>> (t @ t.T + 1.0).numpy().tolist()\n"
                         "[[6.0, 12.0], [12.0, 26.0]]\n");
  cls.def(py::init([](const py::handle& x) {
        if (py::isinstance<Tensor>(x)) return x.cast<Tensor>();
        if (py::isinstance<py::array>(x)) {
          return tensor_from_array(py::reinterpret_borrow<py::array>(x), "tenferro.Tensor");
        }
        return to_tensor(x, "tenferro.Tensor");
      }), py::arg("data"))
      .def_buffer([](Tensor& t) {
        std::vector<py::ssize_t> shape(t.shape().begin(), t.shape().end()), strides;
        const auto elem = static_cast<py::ssize_t>(dtype_size(t.dtype()));
        for (auto s : row_major_strides(t.shape())) strides.push_back(static_cast<py::ssize_t>(s) * elem);
        return py::buffer_info(t.raw_data(), elem, format_of(t.dtype()), static_cast<py::ssize_t>(t.rank()),
                               shape, strides);
      })
      .def_property_readonly("__array_interface__", [](Tensor& t) {
        py::dict d;
        d["shape"] = py::tuple(py::cast(t.shape()));
        d["typestr"] = py::dtype(format_of(t.dtype())).attr("str");
        d["data"] = py::make_tuple(reinterpret_cast<std::uintptr_t>(t.raw_data()), false);
        d["strides"] = py::none();
        d["version"] = 3;
        return d;
      })
      .def_property_readonly("shape", [](const Tensor& t) { return py::tuple(py::cast(t.shape())); })
      .def_property_readonly("dtype", [](const Tensor& t) { return std::string(dtype_name(t.dtype())); })
      .def_property_readonly("ndim", [](const Tensor& t) { return t.rank(); })
      .def_property_readonly("data_ptr", [](Tensor& t) { return reinterpret_cast<std::uintptr_t>(t.raw_data()); })
      .def("numpy", [](py::object self) { return py::module_::import("numpy").attr("asarray")(self); },
           "A NumPy array sharing this tensor's memory.")
      .def("__repr__", [](const Tensor& t) { return to_string(t); });
  m.def("from_numpy", [](const py::array& a) {
    const std::string why = unshareable_reason(a);
    if (!why.empty()) {
      throw py::value_error("tenferro.from_numpy: cannot share the array's memory: " + why +
                            " (numpy.ascontiguousarray, or tenferro.Tensor(array) to copy)");
    }
    return share_array(a);
  }, py::arg("array"),
     "A Tensor sharing the memory of a C-contiguous, aligned, native-order NumPy array.\n"
     "\n"
     ">>> a = np.zeros(3)\n"
     ">>> t = tf.from_numpy(a)\n"
     ">>> a[0] = 5.0\n"
     ">>> t.numpy().tolist()\n"
     "[5.0, 0.0, 0.0]\n");
  bind_dlpack(m, cls);
}

}  // namespace tenferro::python
