// DLPack exchange without copies: Tensor.__dlpack__ / __dlpack_device__ export a tensor (PyTorch's
// torch.from_dlpack, NumPy's numpy.from_dlpack read it), and tenferro.from_dlpack imports any
// object with __dlpack__ (or a "dltensor" capsule) as a Tensor over the producer's memory.
//
// The structs below are the DLPack ABI (dlpack.h, the unversioned layout of DLPack 0.x, which
// every producer still exports through __dlpack__ without a max_version): a capsule named
// "dltensor" holds a DLManagedTensor; the consumer renames it "used_dltensor" and calls its
// deleter when done. Only CPU memory is exchanged; tenferro's dtypes map to kDLFloat 32/64,
// kDLComplex 64/128, kDLInt 64 and kDLBool 8.
#include <cstring>

#include "module.hpp"

namespace tenferro::python {

namespace {

struct DLDevice {
  std::int32_t device_type;  // kDLCPU = 1
  std::int32_t device_id;
};
struct DLDataType {
  std::uint8_t code;  // kDLInt 0, kDLUInt 1, kDLFloat 2, kDLComplex 5, kDLBool 6
  std::uint8_t bits;
  std::uint16_t lanes;
};
struct DLTensor {
  void* data;
  DLDevice device;
  std::int32_t ndim;
  DLDataType dtype;
  std::int64_t* shape;
  std::int64_t* strides;  // in elements; null: row-major contiguous
  std::uint64_t byte_offset;
};
struct DLManagedTensor {
  DLTensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(DLManagedTensor* self);
};

constexpr std::int32_t kDLCPU = 1;
constexpr std::uint8_t kDLInt = 0, kDLFloat = 2, kDLComplex = 5, kDLBool = 6;

DLDataType dl_dtype(DType d) {
  switch (d) {
    case DType::F32: return {kDLFloat, 32, 1};
    case DType::F64: return {kDLFloat, 64, 1};
    case DType::C64: return {kDLComplex, 64, 1};
    case DType::C128: return {kDLComplex, 128, 1};
    case DType::I64: return {kDLInt, 64, 1};
    case DType::Bool: return {kDLBool, 8, 1};
  }
  return {kDLFloat, 64, 1};
}

std::optional<DType> dtype_of(DLDataType t) {
  if (t.lanes != 1) return std::nullopt;
  if (t.code == kDLFloat && t.bits == 32) return DType::F32;
  if (t.code == kDLFloat && t.bits == 64) return DType::F64;
  if (t.code == kDLComplex && t.bits == 64) return DType::C64;
  if (t.code == kDLComplex && t.bits == 128) return DType::C128;
  if (t.code == kDLInt && t.bits == 64) return DType::I64;
  if (t.code == kDLBool && t.bits == 8) return DType::Bool;
  return std::nullopt;
}

/// What an exported DLManagedTensor owns: a copy of the Tensor (keeping its storage alive) and
/// the shape and strides arrays the DLTensor points to.
struct Export {
  DLManagedTensor managed{};
  Tensor tensor;
  std::vector<std::int64_t> shape, strides;
};

void delete_export(DLManagedTensor* self) { delete static_cast<Export*>(self->manager_ctx); }

/// The capsule's destructor: a capsule never consumed still owns its tensor.
void capsule_destructor(PyObject* capsule) {
  if (PyCapsule_IsValid(capsule, "dltensor")) {
    auto* m = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule, "dltensor"));
    if (m != nullptr && m->deleter != nullptr) m->deleter(m);
  }
}

py::capsule export_dlpack(const Tensor& t) {
  auto* e = new Export;
  e->tensor = t;
  e->shape.assign(t.shape().begin(), t.shape().end());
  e->strides = row_major_strides(t.shape());
  e->managed.dl_tensor = DLTensor{e->tensor.raw_data(), DLDevice{kDLCPU, 0}, static_cast<std::int32_t>(t.rank()),
                                  dl_dtype(t.dtype()), e->shape.data(), e->strides.data(), 0};
  e->managed.manager_ctx = e;
  e->managed.deleter = delete_export;
  return py::reinterpret_steal<py::capsule>(PyCapsule_New(&e->managed, "dltensor", capsule_destructor));
}

Tensor import_dlpack(const py::object& x) {
  py::object capsule = x;
  if (!PyCapsule_CheckExact(x.ptr())) {
    if (!py::hasattr(x, "__dlpack__")) {
      throw py::type_error("tenferro.from_dlpack: " + std::string(py::str(py::type::of(x))) +
                           " has no __dlpack__ method and is not a DLPack capsule");
    }
    capsule = x.attr("__dlpack__")();
  }
  if (!PyCapsule_IsValid(capsule.ptr(), "dltensor")) {
    throw py::value_error("tenferro.from_dlpack: the capsule is not an unused \"dltensor\" (already consumed?)");
  }
  auto* m = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule.ptr(), "dltensor"));
  const DLTensor& d = m->dl_tensor;
  if (d.device.device_type != kDLCPU) {
    throw py::value_error("tenferro.from_dlpack: the tensor lives on device type " +
                          std::to_string(d.device.device_type) + "; tenferro reads CPU memory (device type 1) only");
  }
  const std::optional<DType> dtype = dtype_of(d.dtype);
  if (!dtype) {
    throw py::type_error("tenferro.from_dlpack: DLPack dtype (code " + std::to_string(d.dtype.code) + ", " +
                         std::to_string(d.dtype.bits) + " bits, " + std::to_string(d.dtype.lanes) +
                         " lanes); expected float32/64, complex64/128, int64 or bool");
  }
  Shape shape(d.shape, d.shape + d.ndim);
  if (d.strides != nullptr) {
    const std::vector<std::int64_t> expect = row_major_strides(shape);
    for (std::int32_t k = 0; k < d.ndim; ++k) {
      if (shape[static_cast<std::size_t>(k)] > 1 && d.strides[k] != expect[static_cast<std::size_t>(k)]) {
        throw py::value_error("tenferro.from_dlpack: the tensor of shape " + shape_to_string(shape) +
                              " has strides " + shape_to_string(Shape(d.strides, d.strides + d.ndim)) +
                              "; expected a row-major contiguous tensor (call .contiguous() on it first)");
      }
    }
  }
  void* data = static_cast<std::byte*>(d.data) + d.byte_offset;
  // The Tensor now owns the DLManagedTensor: its deleter runs when the last copy is gone, with
  // the GIL held (a Python producer's deleter may release Python objects).
  std::shared_ptr<void> owner(m, [](void* p) {
    py::gil_scoped_acquire gil;
    auto* managed = static_cast<DLManagedTensor*>(p);
    if (managed->deleter != nullptr) managed->deleter(managed);
  });
  PyCapsule_SetName(capsule.ptr(), "used_dltensor");
  return Tensor::wrap(TensorType{*dtype, std::move(shape)}, data, std::move(owner));
}

}  // namespace

void bind_dlpack(py::module_& m, py::class_<Tensor>& tensor) {
  tensor.def("__dlpack__", [](const Tensor& t, const py::object&) { return export_dlpack(t); },
             py::arg("stream") = py::none(), "A DLPack capsule over this tensor's memory (no copy).");
  tensor.def("__dlpack_device__", [](const Tensor&) { return py::make_tuple(kDLCPU, 0); });
  m.def("from_dlpack", &import_dlpack, py::arg("x"),
        "A Tensor over the memory of an object with __dlpack__ (a PyTorch tensor, a NumPy array), no copy; "
        "it must be on the CPU and row-major contiguous.\n"
        "\n"
        ">>> tf.from_dlpack(np.arange(3.0)).numpy().tolist()\n"
        "[0.0, 1.0, 2.0]\n");
}

}  // namespace tenferro::python
