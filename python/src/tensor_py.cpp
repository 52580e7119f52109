// Python: Tensor and its exchange with NumPy.
// - Out: a Tensor exports its storage through the buffer protocol and __array_interface__
//   (numpy.asarray(t) shares memory with it; the NumPy array keeps the Tensor alive).
// - In: tenferro.from_numpy(a) and arguments of transformed functions share the array's memory
//   when it is C-contiguous, aligned, in native byte order and of a tenferro dtype (float32/64,
//   complex64/128, int64, bool); the Tensor keeps the array alive. tenferro.Tensor(a) always
//   copies (any layout, byte order or integer width), as do arguments that cannot be shared.
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

template <class T>
Tensor copy_array(const py::array& a) {
  // forcecast: NumPy converts byte order; c_style: a contiguous copy when `a` is not one.
  auto c = py::array_t<T, py::array::c_style | py::array::forcecast>::ensure(a);
  if (!c) throw py::type_error("tenferro: cannot read the array as " + std::string(dtype_name(dtype_of_v<T>)));
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
  // Tensor may die where the GIL is not held).
  auto* ref = new py::object(a);
  std::shared_ptr<void> owner(ref, [](void* p) {
    py::gil_scoped_acquire gil;
    delete static_cast<py::object*>(p);
  });
  return Tensor::wrap(TensorType{*shareable_dtype(a), std::move(shape)}, const_cast<void*>(a.data()), std::move(owner));
}

}  // namespace

Tensor share_or_copy(const py::array& a) {
  return unshareable_reason(a).empty() ? share_array(a) : tensor_from_array(a);
}

Tensor tensor_from_array(const py::array& a) {
  const py::dtype dt = a.dtype();
  const char kind = dt.kind();
  const auto size = dt.itemsize();
  if (kind == 'f' && size == 4) return copy_array<float>(a);
  if (kind == 'f' && size == 8) return copy_array<double>(a);
  if (kind == 'c' && size == 8) return copy_array<c64>(a);
  if (kind == 'c' && size == 16) return copy_array<c128>(a);
  if (kind == 'i' || kind == 'u') return copy_array<std::int64_t>(a);
  if (kind == 'b') return copy_array<bool>(a);
  throw py::type_error("tenferro: unsupported dtype " + dt.attr("name").cast<std::string>() +
                       "; expected float32, float64, complex64, complex128, an integer or bool");
}

Tensor to_tensor(const py::handle& x) {
  if (py::isinstance<Tensor>(x)) return x.cast<Tensor>();
  if (py::isinstance<py::bool_>(x)) return Tensor::full({}, x.cast<bool>() ? 1.0 : 0.0, DType::Bool);
  if (py::isinstance<py::int_>(x) || py::isinstance<py::float_>(x)) return Tensor::scalar(x.cast<double>());
  if (PyComplex_Check(x.ptr())) return Tensor::scalar(x.cast<c128>());
  if (py::isinstance<py::array>(x)) return share_or_copy(py::reinterpret_borrow<py::array>(x));
  if (py::hasattr(x, "__array__") || py::isinstance<py::sequence>(x)) {
    return tensor_from_array(py::array::ensure(x));
  }
  throw py::type_error("tenferro: cannot make a tensor from " + std::string(py::str(py::type::of(x))));
}

void bind_tensor(py::module_& m) {
  py::class_<Tensor> cls(m, "Tensor", py::buffer_protocol(),
                         "A dense row-major tensor. numpy.asarray(t) shares its memory; Tensor(array) copies; "
                         "from_numpy(array) shares.");
  cls.def(py::init([](const py::handle& x) {
        if (py::isinstance<Tensor>(x)) return x.cast<Tensor>();
        if (py::isinstance<py::array>(x)) return tensor_from_array(py::reinterpret_borrow<py::array>(x));
        return to_tensor(x);
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
      .def("item", [](const Tensor& t) -> py::object {
        if (t.numel() != 1) throw py::value_error("Tensor.item: the tensor has " + std::to_string(t.numel()) + " elements");
        if (is_complex(t.dtype())) return py::cast(t.element(0));
        return py::cast(t.element(0).real());
      })
      .def("__repr__", [](const Tensor& t) { return to_string(t); });
  m.def("from_numpy", [](const py::array& a) {
    const std::string why = unshareable_reason(a);
    if (!why.empty()) {
      throw py::value_error("tenferro.from_numpy: cannot share the array's memory: " + why +
                            " (numpy.ascontiguousarray, or tenferro.Tensor(array) to copy)");
    }
    return share_array(a);
  }, py::arg("array"), "A Tensor sharing the memory of a C-contiguous, aligned, native-order NumPy array.");
  bind_dlpack(m, cls);
}

}  // namespace tenferro::python
