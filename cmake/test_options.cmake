# Compile options of the test directories (computegraph/tests, tidu/tests, tenferro/tests): test
# code is built for compile speed. Its own loops are references and checks; the code under test
# (the libraries, and the header templates as the libraries instantiate them) keeps the build
# type's optimization. Every preset builds the test files at -O0 (Release's would be -O3,
# RelWithDebInfo's -O1). Against -O1 that takes a quarter to a third off each test file's compile
# time (vmap_indexing_test 14.4 s -> 10.3 s, errors_test 11.8 s -> 9.8 s; at -O0 all test files of
# the release build take 220 s on two cores) and it adds under a tenth to the suite's run time,
# which is the libraries'.
#
# LIBRARY_UNDER_TEST: the directory tests a compiled library (tenferro/tests tests libtenferro),
# not header templates that its own files instantiate (computegraph's and tidu's tests). Under the
# asan preset its test files then keep AddressSanitizer but not UndefinedBehaviorSanitizer: the
# library's own files keep both, and ASan still checks every access the test code makes. UBSan's
# null, alignment and vptr checks on every pointer use of the test code doubled the size of a test
# object's code; without them a test file compiles in two thirds of the time (vmap_indexing_test:
# 19.0 s -> 12.4 s), and the 46 files of tenferro/tests in half (979 s -> 492 s on two cores).
macro(tenferro_test_directory_options)
  add_compile_options($<$<CONFIG:Release>:-O0> $<$<CONFIG:RelWithDebInfo>:-O0>)
  if(TENFERRO_SANITIZE AND "${ARGN}" STREQUAL "LIBRARY_UNDER_TEST")
    add_compile_options(-fno-sanitize=undefined)
  endif()
endmacro()
