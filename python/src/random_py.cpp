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
  m.def("dropout", lift("dropout", &dropout, "iv"), py::arg("key"), py::arg("x"), py::arg("p"),
        "x with each element zeroed with probability p and the others scaled by 1 / (1 - p) (inverted dropout).\n"
        "\n"
        "The mask is a function of the key: the same key drops the same elements.\n"
        "\n"
        ">>> y = tf.dropout(tf.random.key(0), np.ones(1000), 0.5)\n"
        ">>> sorted(set(y.numpy().tolist()))\n"
        "[0.0, 2.0]\n");
  py::module_ r = m.def_submodule("random", "Pure random numbers from explicit keys (tenferro/random.hpp)");
  r.def("key", &rnd::key, py::arg("seed"),
        "The key (an i64[2] tensor) of a 64-bit seed.\n"
        "\n"
        ">>> tf.random.key(42)\n"
        "tensor(i64[2], [0, 42])\n");
  r.def("split", lift("random.split", &rnd::split, "i"), py::arg("key"), py::arg("n") = 2,
        "n new keys derived from key, independent of each other and of key (a list of i64[2] tensors).\n"
        "\n"
        ">>> a, b = tf.random.split(tf.random.key(0))\n"
        ">>> a.shape, bool((a.numpy() != b.numpy()).any())\n"
        "((2,), True)\n");
  r.def("fold_in", lift("random.fold_in", &rnd::fold_in, "i"), py::arg("key"), py::arg("data"),
        "A new key derived from key and an integer data (a step number, a device index).\n"
        "\n"
        ">>> k = tf.random.key(0)\n"
        ">>> bool((tf.random.fold_in(k, 1).numpy() != tf.random.fold_in(k, 2).numpy()).any())\n"
        "True\n");
  r.def("bits", lift("random.bits", +[](const Traced& key, const Dims& shape) { return rnd::bits(key, shape); }, "i"),
        py::arg("key"), py::arg("shape"),
        "Random 64-bit patterns of the given shape, as i64.\n"
        "\n"
        ">>> tf.random.bits(tf.random.key(0), (2, 3)).dtype\n"
        "'i64'\n");
  r.def("uniform", lift("random.uniform", +[](const Traced& key, const Dims& shape, const std::string& dtype, double lo,
                                              double hi) {
    return rnd::uniform(key, shape, float_dtype(dtype), lo, hi);
  }, "i"), py::arg("key"), py::arg("shape"), py::arg("dtype") = "f64", py::arg("minval") = 0.0, py::arg("maxval") = 1.0,
        "Uniform numbers in [minval, maxval) of the given shape and dtype (\"f64\" or \"f32\").\n"
        "\n"
        ">>> x = tf.random.uniform(tf.random.key(0), (1000,), minval=-1.0, maxval=1.0).numpy()\n"
        ">>> bool(x.min() >= -1.0 and x.max() < 1.0)\n"
        "True\n");
  r.def("normal", lift("random.normal", +[](const Traced& key, const Dims& shape, const std::string& dtype) {
    return rnd::normal(key, shape, float_dtype(dtype));
  }, "i"), py::arg("key"), py::arg("shape"), py::arg("dtype") = "f64",
        "Standard normal numbers of the given shape and dtype (\"f64\" or \"f32\"); the same key gives the same "
        "numbers.\n"
        "\n"
        ">>> k = tf.random.key(0)\n"
        ">>> x = tf.random.normal(k, (10000,)).numpy()\n"
        ">>> bool(abs(x.mean()) < 0.05 and abs(x.std() - 1.0) < 0.05)\n"
        "True\n"
        ">>> np.array_equal(tf.random.normal(k, (3,)).numpy(), tf.random.normal(k, (3,)).numpy())\n"
        "True\n");
  r.def("bernoulli", lift("random.bernoulli", +[](const Traced& key, double p, const Dims& shape) {
    return rnd::bernoulli(key, p, shape);
  }, "i"), py::arg("key"), py::arg("p"), py::arg("shape"),
        "Bools of the given shape, each true with probability p.\n"
        "\n"
        ">>> tf.random.bernoulli(tf.random.key(0), 1.0, (3,)).numpy().tolist()\n"
        "[True, True, True]\n");
  r.def("categorical", lift("random.categorical", &rnd::categorical, "iv"), py::arg("key"), py::arg("logits"),
        py::arg("axis") = -1,
        "Indices (i64) drawn along axis with probabilities softmax(logits).\n"
        "\n"
        ">>> tf.random.categorical(tf.random.key(0), np.array([[-np.inf, 0.0, -np.inf]])).numpy().tolist()\n"
        "[1]\n");
  r.def("permutation", lift("random.permutation", &rnd::permutation, "i"), py::arg("key"), py::arg("n"),
        "A random permutation of 0, ..., n - 1 (i64).\n"
        "\n"
        ">>> sorted(tf.random.permutation(tf.random.key(0), 5).numpy().tolist())\n"
        "[0, 1, 2, 3, 4]\n");
}

}  // namespace tenferro::python
