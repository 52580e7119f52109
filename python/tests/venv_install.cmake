# CTest python.venv_install: installs the Python package into a fresh virtual environment with
# `cmake --install <build> --component python --prefix <venv>` (README, "Python") and imports it
# from the environment's interpreter, away from the build tree.
#   cmake -DPYTHON=<interpreter> -DBUILD_DIR=<build> -DVENV=<scratch venv> -P venv_install.cmake
file(REMOVE_RECURSE "${VENV}")
execute_process(COMMAND "${PYTHON}" -m venv --system-site-packages --without-pip "${VENV}" RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "python -m venv failed (${rc}); Debian: apt-get install python3-venv")
endif()
execute_process(COMMAND "${CMAKE_COMMAND}" --install "${BUILD_DIR}" --component python --prefix "${VENV}"
                RESULT_VARIABLE rc)
if(rc)
  message(FATAL_ERROR "cmake --install of the python component failed (${rc})")
endif()
set(check [=[
import numpy as np, tenferro as tf
g = tf.grad(lambda w: tf.sum(tf.exp(w)))(np.zeros(3))
assert np.allclose(np.asarray(g), 1.0), np.asarray(g)
print(tf.__file__)
]=])
execute_process(COMMAND "${VENV}/bin/python" -c "${check}" WORKING_DIRECTORY "${VENV}" RESULT_VARIABLE rc
                OUTPUT_VARIABLE where ERROR_VARIABLE err)
if(rc)
  message(FATAL_ERROR "importing tenferro from the virtual environment failed:\n${err}")
endif()
string(FIND "${where}" "${VENV}" at)
if(NOT at EQUAL 0)
  message(FATAL_ERROR "tenferro was imported from ${where}, not from the virtual environment ${VENV}")
endif()
message(STATUS "tenferro imported from ${where}")
