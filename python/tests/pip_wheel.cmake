# CTest python.pip_wheel: the pip route (README, "Python"). Builds a wheel with
# `pip wheel --no-build-isolation` from the source tree, packaging this build tree as it is
# (setup.py with TENFERRO_CMAKE_BUILD_DIR and TENFERRO_CMAKE_NO_BUILD: nothing is built), installs
# it into a second, fresh virtual environment with `pip install --no-index --no-deps` and imports it
# from that environment's interpreter, away from the build tree. Offline throughout.
#   cmake -DPYTHON=<interpreter> -DBUILD_DIR=<build> -DSOURCE_DIR=<source> -DVERSION=<project version>
#         -DWORK_DIR=<scratch> -P pip_wheel.cmake
cmake_minimum_required(VERSION 3.25)
file(REMOVE_RECURSE "${WORK_DIR}")
file(MAKE_DIRECTORY "${WORK_DIR}")
set(BUILD_VENV "${WORK_DIR}/build-venv")
set(VENV "${WORK_DIR}/venv")
set(DIST "${WORK_DIR}/dist")

# pip offline, without the user's configuration, caches or site-packages; the package comes only
# from the environment it is installed into.
set(ENV{PIP_NO_INDEX} 1)
set(ENV{PIP_CONFIG_FILE} /dev/null)
set(ENV{PIP_NO_CACHE_DIR} 1)
set(ENV{PIP_DISABLE_PIP_VERSION_CHECK} 1)
set(ENV{PIP_NO_INPUT} 1)
set(ENV{PYTHONNOUSERSITE} 1)
unset(ENV{PYTHONPATH})
unset(ENV{PIP_FIND_LINKS})

function(run what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(rc)
    message(FATAL_ERROR "${what} failed (${rc}):\n${out}\n${err}")
  endif()
  set(out "${out}" PARENT_SCOPE)
endfunction()

# Both environments see Debian's packages (setuptools' wheel for the build, NumPy for the check).
foreach(venv "${BUILD_VENV}" "${VENV}")
  run("python -m venv ${venv} (Debian: python3-venv)" "${PYTHON}" -m venv --system-site-packages "${venv}")
endforeach()

set(ENV{TENFERRO_CMAKE_BUILD_DIR} "${BUILD_DIR}")
set(ENV{TENFERRO_CMAKE_NO_BUILD} 1)
run("pip wheel" "${BUILD_VENV}/bin/python" -m pip wheel --no-build-isolation --no-deps --no-index -w "${DIST}"
    "${SOURCE_DIR}")
unset(ENV{TENFERRO_CMAKE_BUILD_DIR})
unset(ENV{TENFERRO_CMAKE_NO_BUILD})

file(GLOB wheels "${DIST}/tenferro-*.whl")
list(LENGTH wheels count)
if(NOT count EQUAL 1)
  message(FATAL_ERROR "pip wheel made ${count} wheels in ${DIST}: ${wheels}")
endif()
get_filename_component(wheel_name "${wheels}" NAME)
# Platform-specific (it holds the module), of the project version.
if(NOT wheel_name MATCHES "^tenferro-${VERSION}-cp3[0-9]+-cp3[0-9]+-linux_[a-z0-9_]+\\.whl$")
  message(FATAL_ERROR "the wheel ${wheel_name} is not tenferro-${VERSION}-cpXY-cpXY-linux_<arch>.whl")
endif()

# The wheel holds every .py file of python/tenferro, the generated _version.py and the module.
file(GLOB sources RELATIVE "${SOURCE_DIR}/python" "${SOURCE_DIR}/python/tenferro/*.py")
set(list_wheel [=[
import sys, zipfile
print("\n".join(zipfile.ZipFile(sys.argv[1]).namelist()))
]=])
run("listing the wheel" "${VENV}/bin/python" -c "${list_wheel}" "${wheels}")
string(STRIP "${out}" contents)
string(REPLACE "\n" ";" contents "${contents}")
foreach(file IN LISTS sources ITEMS tenferro/_version.py)
  if(NOT file IN_LIST contents)
    message(FATAL_ERROR "the wheel ${wheel_name} lacks ${file}: ${contents}")
  endif()
endforeach()
if(NOT contents MATCHES "(^|;)tenferro/_tenferro\\.[^;/]+\\.so(;|$)")
  message(FATAL_ERROR "the wheel ${wheel_name} lacks the module tenferro/_tenferro.*.so: ${contents}")
endif()

run("pip install of the wheel" "${VENV}/bin/python" -m pip install --no-index --no-deps "${wheels}")

set(check [=[
import sys
import numpy as np, tenferro as tf
g = tf.grad(lambda w: tf.sum(tf.exp(w)))(np.zeros(3))
assert np.allclose(np.asarray(g), 1.0), np.asarray(g)
assert tf.__version__ == sys.argv[1], (tf.__version__, sys.argv[1])
print(tf.__file__)
]=])
execute_process(COMMAND "${VENV}/bin/python" -c "${check}" "${VERSION}" WORKING_DIRECTORY "${VENV}" RESULT_VARIABLE rc
                OUTPUT_VARIABLE where ERROR_VARIABLE err)
if(rc)
  message(FATAL_ERROR "importing tenferro from the virtual environment failed:\n${err}")
endif()
string(STRIP "${where}" where)
string(FIND "${where}" "${VENV}/" at)
if(NOT at EQUAL 0)
  message(FATAL_ERROR "tenferro was imported from ${where}, not from the virtual environment ${VENV}")
endif()
message(STATUS "${wheel_name}: tenferro ${VERSION} imported from ${where}")
