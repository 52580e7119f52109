#pragma once
// Internal to the Python module (_tenferro): the conversions its files share.
#include <pybind11/complex.h>
#include <pybind11/functional.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "tenferro/tenferro.hpp"

namespace tenferro::python {

namespace py = pybind11;

/// A new Tensor holding a copy of a NumPy array (any layout; the dtype kept, integers as i64).
Tensor tensor_from_array(const py::array& a);
/// A Tensor sharing the array's memory when it can (C-contiguous, aligned, native byte order, a
/// tenferro dtype), else a copy.
Tensor share_or_copy(const py::array& a);
/// A Tensor from a Tensor (shared), a NumPy array (shared when it can be, see share_or_copy), an
/// object with __array__ or a nested sequence (copied) or a Python scalar (f64, c128 or bool);
/// TypeError otherwise.
Tensor to_tensor(const py::handle& x);
/// The Traced values a traced Python callable returned: one Traced, or a tuple or list of them;
/// TypeError naming what came back otherwise.
std::vector<Traced> traced_results(const py::handle& r);
/// A C++ traced function calling the Python callable with the Traced arguments.
detail::TracedFunction traced_function(py::function f);

void bind_tensor(py::module_& m);
void bind_traced(py::module_& m);
void bind_transforms(py::module_& m);
void bind_linalg(py::module_& m);
void bind_random(py::module_& m);
void bind_control(py::module_& m);
void bind_dlpack(py::module_& m, py::class_<Tensor>& tensor);

}  // namespace tenferro::python
