# Compile options of the test directories (computegraph/tests, tidu/tests, tenferro/tests): test
# code is built for compile speed. Its own loops are references and checks; the code under test
# (the libraries, and the header templates as the libraries instantiate them) keeps the build
# type's optimization. Release builds the tests at -O1 instead of -O3 and the sanitizer presets
# (RelWithDebInfo) at -O0 instead of -O1, which takes a third to two fifths off each test file's
# compile time; the suite's run time is the libraries'.
macro(tenferro_test_directory_options)
  add_compile_options($<$<CONFIG:Release>:-O1> $<$<CONFIG:RelWithDebInfo>:-O0>)
endmacro()
