// Python: Tensor and its exchange with NumPy. A Tensor exports its storage through the buffer
// protocol (numpy.asarray(t) shares memory with it; the NumPy array keeps the Tensor alive);
// NumPy arrays (any layout, any of the supported dtypes) are copied into new Tensors, so a
// non-contiguous or unaligned array is accepted and never aliased.
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

}  // namespace

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
  if (py::hasattr(x, "__array__") || py::isinstance<py::array>(x) || py::isinstance<py::sequence>(x)) {
    return tensor_from_array(py::array::ensure(x));
  }
  throw py::type_error("tenferro: cannot make a tensor from " + std::string(py::str(py::type::of(x))));
}

void bind_tensor(py::module_& m) {
  py::class_<Tensor>(m, "Tensor", py::buffer_protocol(),
                     "A dense row-major tensor. numpy.asarray(t) shares its memory; Tensor(array) copies.")
      .def(py::init([](const py::handle& x) { return to_tensor(x); }), py::arg("data"))
      .def_buffer([](Tensor& t) {
        std::vector<py::ssize_t> shape(t.shape().begin(), t.shape().end()), strides;
        const auto elem = static_cast<py::ssize_t>(dtype_size(t.dtype()));
        for (auto s : row_major_strides(t.shape())) strides.push_back(static_cast<py::ssize_t>(s) * elem);
        return py::buffer_info(t.raw_data(), elem, format_of(t.dtype()), static_cast<py::ssize_t>(t.rank()),
                               shape, strides);
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
}

}  // namespace tenferro::python
