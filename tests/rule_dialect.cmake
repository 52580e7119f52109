# Every AD rule of tenferro is written in one dialect: traced operations on a rule trace
# (tenferro/ops/rule.hpp), whose recorder infers each operation's role (docs/tenferro.md, "Writing
# a rule"). This script fails listing `file:line: <text>` for every place in the op definitions
# (tenferro/src/ops) and the rule kit (tenferro/src/ir) that records into a rule's graph by hand:
# a role written out (tidu::linear_role, OperationRole) or an op added to the builder directly
# (add_primitive, a JvpArgs/TransposeArgs builder's add). Region bodies are built with the body
# builder of regions/ and are not rules.
#
#   cmake -DSOURCE_DIR=<repository root> -P tests/rule_dialect.cmake
cmake_minimum_required(VERSION 3.25)

if(NOT SOURCE_DIR)
  get_filename_component(SOURCE_DIR "${CMAKE_CURRENT_LIST_DIR}/.." ABSOLUTE)
endif()
include("${CMAKE_CURRENT_LIST_DIR}/text_lines.cmake")

set(by_hand "linear_role[ \t]*\\(|OperationRole::|add_primitive[ \t]*\\(|[^a-z_]a\\.b\\.add[a-z_]*[ \t]*\\(")
file(GLOB_RECURSE files RELATIVE "${SOURCE_DIR}" "${SOURCE_DIR}/tenferro/src/ops/*.cpp" "${SOURCE_DIR}/tenferro/src/ops/*.hpp"
     "${SOURCE_DIR}/tenferro/src/ir/*.cpp" "${SOURCE_DIR}/tenferro/src/ir/*.hpp")
list(LENGTH files n_files)
if(n_files LESS 20)
  message(FATAL_ERROR "rule_dialect: found only ${n_files} files under tenferro/src/ops and ir; is SOURCE_DIR right?")
endif()

set(report "")
set(found 0)
foreach(rel IN LISTS files)
  file(READ "${SOURCE_DIR}/${rel}" text)
  if(text MATCHES "${by_hand}")
    report_matching_lines("${rel}" "${text}" "${by_hand}" "^[ \t]*//" report found)
  endif()
endforeach()

if(found GREATER 0)
  message(FATAL_ERROR "rule_dialect: ${found} place(s) record by hand instead of on a rule trace (tenferro/ops/rule.hpp):\n${report}")
endif()
message(STATUS "rule_dialect: ${n_files} files of tenferro/src/ops and tenferro/src/ir record only through the rule trace")
