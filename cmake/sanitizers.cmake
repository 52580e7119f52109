# ASan + UBSan for the `asan` preset. UBSan findings abort so that CTest reports them as failures.
if(TENFERRO_SANITIZE)
  add_compile_definitions(TENFERRO_SANITIZED_BUILD)
  add_compile_options(-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
endif()

# ThreadSanitizer for the `tsan` preset. Only clang++: its OpenMP runtime (LLVM's libomp) tells
# TSan about OpenMP's synchronization through the Archer tool (OMP_TOOL_LIBRARIES, set by the
# preset); g++'s libgomp cannot, and TSan would report OpenMP's own hand-offs as races.
# The buffer pool stays on (TENFERRO_SANITIZED_BUILD is not defined): its locking is under test.
option(TENFERRO_TSAN "Build with ThreadSanitizer (clang++ only)" OFF)
if(TENFERRO_TSAN)
  if(TENFERRO_SANITIZE)
    message(FATAL_ERROR "TENFERRO_TSAN and TENFERRO_SANITIZE exclude each other")
  endif()
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "TENFERRO_TSAN needs clang++ (libomp and its Archer tool), not ${CMAKE_CXX_COMPILER_ID}")
  endif()
  add_compile_options(-fsanitize=thread -fno-omit-frame-pointer)
  add_link_options(-fsanitize=thread)
endif()
