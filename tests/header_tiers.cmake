# tenferro's public headers come in tiers (docs/design.md, "Header tiers"):
#   user tier     tenferro/tenferro.hpp and what it includes: everything a program of tensors needs;
#   opt-in tiers  tenferro/custom_op.hpp, tenferro/ops/*.hpp (defining and recording ops),
#                 tenferro/program.hpp (the traced program's graph), tenferro/operand_space.hpp;
#   internal      tenferro/src (never installed).
# The user tier must not pull in the graph engine: this script compiles a file that includes only
# tenferro/tenferro.hpp, lists every header the compiler opens (-H), and fails naming each project
# header outside the user tier. The one exception is the error hierarchy's root (computegraph's
# error.hpp and tidu's ad_error.hpp, which include only the standard library): every error the
# libraries throw derives from one base, and a user catches it by the user tier's names.
#
# It also compiles every public header alone (each must include what it uses).
#
#   cmake -DSOURCE_DIR=<repository root> -DCXX=<compiler> -DWORK_DIR=<scratch dir> -P tests/header_tiers.cmake
cmake_minimum_required(VERSION 3.25)

foreach(var SOURCE_DIR CXX WORK_DIR)
  if(NOT ${var})
    message(FATAL_ERROR "header_tiers: set -D${var}=...")
  endif()
endforeach()
set(includes -I${SOURCE_DIR}/tenferro/include -I${SOURCE_DIR}/computegraph/include -I${SOURCE_DIR}/tidu/include)
file(MAKE_DIRECTORY "${WORK_DIR}")

# ---- the user tier includes no engine header ------------------------------------------------------
file(WRITE "${WORK_DIR}/user_tier.cpp" "#include \"tenferro/tenferro.hpp\"\nint main() { return 0; }\n")
execute_process(COMMAND "${CXX}" -std=c++20 -fsyntax-only -H ${includes} "${WORK_DIR}/user_tier.cpp"
                RESULT_VARIABLE rc ERROR_VARIABLE opened OUTPUT_QUIET)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "header_tiers: tenferro/tenferro.hpp does not compile alone:\n${opened}")
endif()
string(REPLACE "\n" ";" opened_lines "${opened}")
set(allowed_engine_headers computegraph/include/computegraph/error.hpp tidu/include/tidu/ad_error.hpp)
set(user_tier_count 0)
set(violations "")
foreach(line IN LISTS opened_lines)
  if(NOT line MATCHES "^\\.+ (.*)$")
    continue()
  endif()
  file(REAL_PATH "${CMAKE_MATCH_1}" path)
  if(NOT path MATCHES "^${SOURCE_DIR}/(.*)$")
    continue()  # the standard library
  endif()
  set(rel "${CMAKE_MATCH_1}")
  if(rel IN_LIST allowed_engine_headers)
    continue()
  endif()
  if(rel MATCHES "^tenferro/include/tenferro/[a-z_]+\\.hpp$" AND
     NOT rel MATCHES "/(custom_op|program|operand_space)\\.hpp$")
    math(EXPR user_tier_count "${user_tier_count} + 1")
    continue()
  endif()
  list(APPEND violations "${rel}")
endforeach()
list(REMOVE_DUPLICATES violations)
if(violations)
  list(JOIN violations "\n  " listed)
  message(FATAL_ERROR "header_tiers: the user tier (tenferro/tenferro.hpp) pulls in headers outside it:\n  ${listed}\n"
                      "Move what needs them to an opt-in header (tenferro/ops/, tenferro/program.hpp), or declare "
                      "the type without its definition.")
endif()
if(user_tier_count LESS 10)
  message(FATAL_ERROR "header_tiers: parsed only ${user_tier_count} user-tier headers from -H; the compiler's "
                      "output format changed?\n${opened}")
endif()

# ---- every public header compiles alone -----------------------------------------------------------
file(GLOB_RECURSE headers RELATIVE "${SOURCE_DIR}/tenferro/include" "${SOURCE_DIR}/tenferro/include/tenferro/*.hpp")
set(alone_failures "")
foreach(header IN LISTS headers)
  string(MAKE_C_IDENTIFIER "${header}" stem)
  file(WRITE "${WORK_DIR}/${stem}.cpp" "#include \"${header}\"\n")
  execute_process(COMMAND "${CXX}" -std=c++20 -fsyntax-only -Wall -Wextra -Werror ${includes} "${WORK_DIR}/${stem}.cpp"
                  RESULT_VARIABLE rc ERROR_VARIABLE err OUTPUT_QUIET)
  if(NOT rc EQUAL 0)
    string(SUBSTRING "${err}" 0 600 err)
    list(APPEND alone_failures "${header}: ${err}")
  endif()
endforeach()
if(alone_failures)
  list(JOIN alone_failures "\n" listed)
  message(FATAL_ERROR "header_tiers: public headers that do not compile alone:\n${listed}")
endif()
list(LENGTH headers count)
message(STATUS "header_tiers: ${user_tier_count} user-tier header inclusions checked; ${count} public headers compile alone")
