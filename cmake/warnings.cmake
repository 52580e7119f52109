# Project-wide warning policy: every target linking tenferro_warnings treats warnings as errors.
add_library(tenferro_warnings INTERFACE)
target_compile_options(tenferro_warnings INTERFACE
  -Wall -Wextra -Wpedantic -Werror -Wswitch-enum -Wnon-virtual-dtor)
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  # -Wshadow=local is g++'s spelling; clang++ 14 rejects it as an unknown option (an error here).
  # g++ 12 reports false -Wrestrict positives inside libstdc++'s std::string at -O3 (GCC bug 105329).
  target_compile_options(tenferro_warnings INTERFACE -Wshadow=local -Wno-restrict)
elseif(CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  target_compile_options(tenferro_warnings INTERFACE -Wshadow-uncaptured-local)
endif()
