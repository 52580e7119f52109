// tenferro.random (tenferro/random.hpp): pure random numbers from explicit keys, and dropout.
// dtypes are named as Traced.astype names them ("f32", "f64"). Keys and data are operands as
// anywhere else (module.hpp, lift): a key may be a Tensor from random.key, or its NumPy array.
#include "module.hpp"

namespace tenferro::python {

namespace {
DType float_dtype(const std::string& name) {
  if (name == "f64") return DType::F64;
  if (name == "f32") return DType::F32;
  throw py::value_error("random: unknown dtype '" + name + "'; expected f32 or f64");
}
}  // namespace

void bind_random(py::module_& m) {
  namespace rnd = tenferro::random;
  using Dims = std::vector<std::int64_t>;
  m.def("dropout", lift("dropout", &dropout, "iv"), py::arg("key"), py::arg("x"), py::arg("p"));
  py::module_ r = m.def_submodule("random", "Pure random numbers from explicit keys (tenferro/random.hpp)");
  r.def("key", &rnd::key, py::arg("seed"), "The key (an i64[2] tensor) of a 64-bit seed.");
  r.def("split", lift("random.split", &rnd::split, "i"), py::arg("key"), py::arg("n") = 2);
  r.def("fold_in", lift("random.fold_in", &rnd::fold_in, "i"), py::arg("key"), py::arg("data"));
  r.def("bits", lift("random.bits", +[](const Traced& key, const Dims& shape) { return rnd::bits(key, shape); }, "i"),
        py::arg("key"), py::arg("shape"));
  r.def("uniform", lift("random.uniform", +[](const Traced& key, const Dims& shape, const std::string& dtype, double lo,
                                              double hi) {
    return rnd::uniform(key, shape, float_dtype(dtype), lo, hi);
  }, "i"), py::arg("key"), py::arg("shape"), py::arg("dtype") = "f64", py::arg("minval") = 0.0, py::arg("maxval") = 1.0);
  r.def("normal", lift("random.normal", +[](const Traced& key, const Dims& shape, const std::string& dtype) {
    return rnd::normal(key, shape, float_dtype(dtype));
  }, "i"), py::arg("key"), py::arg("shape"), py::arg("dtype") = "f64");
  r.def("bernoulli", lift("random.bernoulli", +[](const Traced& key, double p, const Dims& shape) {
    return rnd::bernoulli(key, p, shape);
  }, "i"), py::arg("key"), py::arg("p"), py::arg("shape"));
  r.def("categorical", lift("random.categorical", &rnd::categorical, "iv"), py::arg("key"), py::arg("logits"),
        py::arg("axis") = -1);
  r.def("permutation", lift("random.permutation", &rnd::permutation, "i"), py::arg("key"), py::arg("n"));
}

}  // namespace tenferro::python
