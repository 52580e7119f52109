# Project-wide warning policy: every target linking tenferro_warnings treats warnings as errors.
add_library(tenferro_warnings INTERFACE)
target_compile_options(tenferro_warnings INTERFACE
  -Wall -Wextra -Wpedantic -Werror -Wswitch-enum -Wshadow=local -Wnon-virtual-dtor)
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  # g++ 12 reports false -Wrestrict positives inside libstdc++'s std::string at -O3 (GCC bug 105329).
  target_compile_options(tenferro_warnings INTERFACE -Wno-restrict)
endif()
