# CTest's package.consumer: installs the build tree BUILD_DIR into WORK_DIR/prefix, then
#   1. configures tests/consumer against the installed CMake package (find_package), builds it with
#      CXX and runs it;
#   2. compiles the same program with the flags pkg-config gives for the installed tenferro.pc
#      (static libraries: --static) and runs it.
# Any failing step fails the test with its output.
function(run_step what)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "package.consumer: ${what} failed (${rc}):\n${out}\n${err}")
  endif()
  message(STATUS "package.consumer: ${what}: ok")
  set(last_output "${out}" PARENT_SCOPE)
endfunction()

file(REMOVE_RECURSE ${WORK_DIR})
set(prefix ${WORK_DIR}/prefix)
run_step("install" ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})
run_step("configure the consumer" ${CMAKE_COMMAND} -S ${SOURCE_DIR}/tests/consumer -B ${WORK_DIR}/cmake -G Ninja
         -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=${CXX} -DCMAKE_PREFIX_PATH=${prefix})
run_step("build the consumer" ${CMAKE_COMMAND} --build ${WORK_DIR}/cmake)
run_step("run the consumer (CMake package)" ${WORK_DIR}/cmake/consumer)

set(ENV{PKG_CONFIG_PATH} ${prefix}/${LIBDIR}/pkgconfig)
run_step("pkg-config" pkg-config --static --cflags --libs tenferro)
string(STRIP "${last_output}" flags)
separate_arguments(flags UNIX_COMMAND "${flags}")
run_step("build the consumer (pkg-config)" ${CXX} -O1 ${SOURCE_DIR}/tests/consumer/main.cpp ${flags}
         -o ${WORK_DIR}/consumer_pc)
run_step("run the consumer (pkg-config)" ${WORK_DIR}/consumer_pc)

# The component tenferro::mpi, where this build installed it.
if(EXISTS ${prefix}/${LIBDIR}/cmake/tenferro/tenferroMpiTargets.cmake)
  run_step("configure the MPI consumer" ${CMAKE_COMMAND} -S ${SOURCE_DIR}/tests/consumer_mpi -B ${WORK_DIR}/mpi -G Ninja
           -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_COMPILER=${CXX} -DCMAKE_PREFIX_PATH=${prefix})
  run_step("build the MPI consumer" ${CMAKE_COMMAND} --build ${WORK_DIR}/mpi)
  set(ENV{OMPI_ALLOW_RUN_AS_ROOT} 1)
  set(ENV{OMPI_ALLOW_RUN_AS_ROOT_CONFIRM} 1)
  run_step("run the MPI consumer" ${WORK_DIR}/mpi/consumer_mpi)
endif()
