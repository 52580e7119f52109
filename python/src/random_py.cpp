// tenferro.random (tenferro/random.hpp): pure random numbers from explicit keys, and dropout.
// dtypes are named as Traced.astype names them ("f32", "f64").
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
  m.def("dropout", &dropout, py::arg("key"), py::arg("x"), py::arg("p"));
  py::module_ r = m.def_submodule("random", "Pure random numbers from explicit keys (tenferro/random.hpp)");
  r.def("key", &rnd::key, py::arg("seed"), "The key (an i64[2] tensor) of a 64-bit seed.");
  r.def("split", &rnd::split, py::arg("key"), py::arg("n") = 2);
  r.def("fold_in", &rnd::fold_in, py::arg("key"), py::arg("data"));
  r.def("bits", [](const Traced& key, const Dims& shape) { return rnd::bits(key, shape); }, py::arg("key"),
        py::arg("shape"));
  r.def("uniform", [](const Traced& key, const Dims& shape, const std::string& dtype, double lo, double hi) {
    return rnd::uniform(key, shape, float_dtype(dtype), lo, hi);
  }, py::arg("key"), py::arg("shape"), py::arg("dtype") = "f64", py::arg("minval") = 0.0, py::arg("maxval") = 1.0);
  r.def("normal", [](const Traced& key, const Dims& shape, const std::string& dtype) {
    return rnd::normal(key, shape, float_dtype(dtype));
  }, py::arg("key"), py::arg("shape"), py::arg("dtype") = "f64");
  r.def("bernoulli", [](const Traced& key, double p, const Dims& shape) { return rnd::bernoulli(key, p, shape); },
        py::arg("key"), py::arg("p"), py::arg("shape"));
  r.def("categorical", &rnd::categorical, py::arg("key"), py::arg("logits"), py::arg("axis") = -1);
  r.def("permutation", &rnd::permutation, py::arg("key"), py::arg("n"));
}

}  // namespace tenferro::python
