# Install rules: headers, the four libraries, the CMake package (tenferroConfig.cmake, its version
# file, the exported targets tenferro::computegraph, tenferro::tidu, tenferro::einsum_path,
# tenferro::tenferro, and the dependency finder) and a pkg-config file.
#
#   cmake --install build/release --prefix /opt/tenferro
#   find_package(tenferro 0.1 REQUIRED)      # with CMAKE_PREFIX_PATH=/opt/tenferro
#   target_link_libraries(app PRIVATE tenferro::tenferro)
#   find_package(tenferro 0.1 REQUIRED COMPONENTS mpi)   # tenferro::mpi too (tenferro/distributed.hpp)
include(CMakePackageConfigHelpers)

set_target_properties(computegraph PROPERTIES EXPORT_NAME computegraph)
set_target_properties(tidu PROPERTIES EXPORT_NAME tidu)
set_target_properties(tenferro PROPERTIES EXPORT_NAME tenferro)

install(TARGETS computegraph tidu tenferro_einsum_path tenferro
        EXPORT tenferroTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR}
        INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
foreach(dir computegraph/include tidu/include tenferro/include)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/${dir}/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
endforeach()

set(TENFERRO_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/tenferro)
install(EXPORT tenferroTargets NAMESPACE tenferro:: DESTINATION ${TENFERRO_CMAKE_DIR})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/tenferroConfig.cmake.in
                              ${PROJECT_BINARY_DIR}/tenferroConfig.cmake INSTALL_DESTINATION ${TENFERRO_CMAKE_DIR})
# Before 1.0 a minor version may change the API: a request for 0.1 accepts 0.1.x only.
write_basic_package_version_file(${PROJECT_BINARY_DIR}/tenferroConfigVersion.cmake COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/tenferroConfig.cmake ${PROJECT_BINARY_DIR}/tenferroConfigVersion.cmake
              ${PROJECT_SOURCE_DIR}/cmake/tenferroDependencies.cmake
        DESTINATION ${TENFERRO_CMAKE_DIR})

# The optional component tenferro::mpi (find_package(tenferro COMPONENTS mpi)), where it is built:
# its library, its header and its own export set, which the package config includes on request.
if(TARGET tenferro_mpi)
  set_target_properties(tenferro_mpi PROPERTIES EXPORT_NAME mpi)
  install(TARGETS tenferro_mpi EXPORT tenferroMpiTargets
          ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
          LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
          INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/tenferro/mpi/include/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  install(EXPORT tenferroMpiTargets NAMESPACE tenferro:: DESTINATION ${TENFERRO_CMAKE_DIR})
endif()

file(RELATIVE_PATH TENFERRO_PC_TO_PREFIX ${CMAKE_INSTALL_FULL_LIBDIR}/pkgconfig ${CMAKE_INSTALL_PREFIX})
configure_file(${PROJECT_SOURCE_DIR}/cmake/tenferro.pc.in ${PROJECT_BINARY_DIR}/tenferro.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/tenferro.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
