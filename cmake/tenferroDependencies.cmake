# tenferro's link dependencies as imported targets, found the same way by the build and by the
# installed package (tenferroConfig.cmake includes this file): no absolute path is written into
# the exported targets. Debian 12: libopenblas-openmp-dev (OpenBLAS with CBLAS, OpenMP build),
# liblapacke-dev (LAPACKE, whose LAPACK calls resolve to OpenBLAS's), libsleef-dev, libc6-dev (libmvec),
# libcolpack-dev (graph colorings for sparse Jacobians and Hessians), libxsmm-dev (JIT kernels for
# small matrix products), and the compiler's OpenMP.
include(CMakeFindDependencyMacro)
find_dependency(OpenMP)

if(NOT TARGET tenferro::openblas)
  # The OpenMP build of OpenBLAS shares libgomp's thread pool with our kernels; the pthread build
  # keeps its own threads, which spin against OpenMP's on a small machine (GEMMs ran at half
  # speed between fused kernels). Debian puts it in its own directory: look there first.
  find_library(TENFERRO_OPENBLAS_LIBRARY NAMES openblas PATHS /usr/lib/x86_64-linux-gnu/openblas-openmp
               NO_DEFAULT_PATH)
  find_library(TENFERRO_OPENBLAS_LIBRARY NAMES openblas REQUIRED)
  # CBLAS's header lives in /usr/include/x86_64-linux-gnu on Debian.
  find_path(TENFERRO_CBLAS_INCLUDE_DIR cblas.h REQUIRED)
  add_library(tenferro::openblas UNKNOWN IMPORTED)
  set_target_properties(tenferro::openblas PROPERTIES IMPORTED_LOCATION "${TENFERRO_OPENBLAS_LIBRARY}"
                                                      INTERFACE_INCLUDE_DIRECTORIES "${TENFERRO_CBLAS_INCLUDE_DIR}")
endif()

if(NOT TARGET tenferro::lapacke)
  # LAPACKE's C interface. Its LAPACK symbols (dgesdd_, ...) bind to the OpenBLAS loaded above,
  # which exports the whole of LAPACK: the decompositions run on OpenBLAS's OpenMP threads.
  find_library(TENFERRO_LAPACKE_LIBRARY NAMES lapacke REQUIRED)
  find_path(TENFERRO_LAPACKE_INCLUDE_DIR lapacke.h REQUIRED)
  add_library(tenferro::lapacke UNKNOWN IMPORTED)
  set_target_properties(tenferro::lapacke PROPERTIES IMPORTED_LOCATION "${TENFERRO_LAPACKE_LIBRARY}"
                                                     INTERFACE_INCLUDE_DIRECTORIES "${TENFERRO_LAPACKE_INCLUDE_DIR}")
endif()

if(NOT TARGET tenferro::sleef)
  find_library(TENFERRO_SLEEF_LIBRARY NAMES sleef REQUIRED)
  find_path(TENFERRO_SLEEF_INCLUDE_DIR sleef.h REQUIRED)
  add_library(tenferro::sleef UNKNOWN IMPORTED)
  set_target_properties(tenferro::sleef PROPERTIES IMPORTED_LOCATION "${TENFERRO_SLEEF_LIBRARY}"
                                                   INTERFACE_INCLUDE_DIRECTORIES "${TENFERRO_SLEEF_INCLUDE_DIR}")
endif()

if(NOT TARGET tenferro::mvec)
  # glibc's libmvec (libc6-dev): the faster, 4-ULP vector math (tenferro/math_accuracy.hpp).
  find_library(TENFERRO_MVEC_LIBRARY NAMES mvec REQUIRED)
  add_library(tenferro::mvec UNKNOWN IMPORTED)
  set_target_properties(tenferro::mvec PROPERTIES IMPORTED_LOCATION "${TENFERRO_MVEC_LIBRARY}")
endif()

if(NOT TARGET tenferro::colpack)
  # ColPack: the colorings behind sparse_jacobian and sparse_hessian (tenferro/sparse.hpp).
  find_library(TENFERRO_COLPACK_LIBRARY NAMES ColPack REQUIRED)
  find_path(TENFERRO_COLPACK_INCLUDE_DIR ColPack/ColPackHeaders.h REQUIRED)
  add_library(tenferro::colpack UNKNOWN IMPORTED)
  set_target_properties(tenferro::colpack PROPERTIES IMPORTED_LOCATION "${TENFERRO_COLPACK_LIBRARY}"
                                                     INTERFACE_INCLUDE_DIRECTORIES "${TENFERRO_COLPACK_INCLUDE_DIR}")
endif()

if(NOT TARGET tenferro::xsmm)
  # libxsmm: JIT-generated kernels for the matrix products it multiplies faster than OpenBLAS
  # (src/kernels/gemm_provider.hpp). Debian ships it as a static library; products it hands back to
  # a BLAS resolve to OpenBLAS.
  find_library(TENFERRO_XSMM_LIBRARY NAMES xsmm REQUIRED)
  find_path(TENFERRO_XSMM_INCLUDE_DIR libxsmm.h REQUIRED)
  add_library(tenferro::xsmm UNKNOWN IMPORTED)
  set_target_properties(tenferro::xsmm PROPERTIES IMPORTED_LOCATION "${TENFERRO_XSMM_LIBRARY}"
                                                  INTERFACE_INCLUDE_DIRECTORIES "${TENFERRO_XSMM_INCLUDE_DIR}"
                                                  INTERFACE_LINK_LIBRARIES "tenferro::openblas;${CMAKE_DL_LIBS}")
endif()
