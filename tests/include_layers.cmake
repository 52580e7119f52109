# tenferro's sources are layered: each folder of tenferro/src has one purpose, and its files may
# include only the folders below it (docs/design.md, "Code layout"). This script fails listing
# `file:line: <folder> includes <other>` for every include that runs the wrong way, and fails if
# a folder appears that the table below does not know.
#
#   cmake -DSOURCE_DIR=<repository root> -P tests/include_layers.cmake
#
# What counts as an include of a folder: `#include "<folder>/..."` (or `<...>`, or "../<folder>/...")
# where <folder> is one of tenferro/src's folders. A bare `#include "x.hpp"` names the including
# file's own folder. Public headers (tenferro/include: "tenferro/...", and the "computegraph/...",
# "tidu/..." headers) may be included from anywhere and are not checked. Files directly in
# tenferro/src (the tensor and its buffer pool) count as the layer "src" and may include none of
# the folders.
cmake_minimum_required(VERSION 3.25)

if(NOT SOURCE_DIR)
  get_filename_component(SOURCE_DIR "${CMAKE_CURRENT_LIST_DIR}/.." ABSOLUTE)
endif()
set(src_root "${SOURCE_DIR}/tenferro/src")

# ---- the table ---------------------------------------------------------------------------------
# The folders, bottom to top, and what each may include besides itself.
set(layers kernels ir regions ops exec api sparse einsum optim)
set(allowed_src "")                                    # files directly in tenferro/src
set(allowed_kernels "")                                # CPU kernels: nothing in src
set(allowed_ir kernels)                                # registry, attributes, formulas, rule kit
set(allowed_regions ir kernels)                        # bodies, derived bodies, the runner seam
set(allowed_ops regions ir kernels)                    # the op definitions
set(allowed_exec regions ir kernels)                   # executor, passes, region runner
set(allowed_api ops exec regions ir kernels)           # the user API, tracing bodies
set(allowed_sparse api ops exec regions ir kernels)    # Jacobian accumulation: sparsity, coloring, cross-country
set(allowed_einsum api ops exec regions ir kernels)    # einsum over the API
set(allowed_optim "")                                  # optimizers: the public API only

# The table itself: every arrow names a known folder and runs one way.
foreach(from IN LISTS layers)
  foreach(to IN LISTS allowed_${from})
    if(NOT to IN_LIST layers)
      message(FATAL_ERROR "include_layers: the table lets ${from} include '${to}', which is not a folder")
    endif()
    if(from IN_LIST allowed_${to})
      message(FATAL_ERROR "include_layers: the table lets ${from} and ${to} include each other")
    endif()
  endforeach()
endforeach()

# ---- the check ---------------------------------------------------------------------------------
include("${CMAKE_CURRENT_LIST_DIR}/text_lines.cmake")
set(include_line "^[ \t]*#[ \t]*include[ \t]*([\"<])([^\">]*)[\">]")

# Appends to ${violations_var} one "rel:line: <folder> includes <other>" per include of `text` (the
# contents of file `rel`, in layer `folder`) that the table does not allow; adds the number of
# includes of folders (its own included) to ${count_var}.
function(check_includes folder rel text violations_var count_var)
  set(violations "${${violations_var}}")
  set(count "${${count_var}}")
  if(NOT text MATCHES "#[ \t]*include")
    return()
  endif()
  text_lines("${text}" lines)
  set(number 0)
  foreach(line IN LISTS lines)
    math(EXPR number "${number} + 1")
    if(NOT line MATCHES "${include_line}")
      continue()
    endif()
    set(quoted "${CMAKE_MATCH_1}")
    set(path "${CMAKE_MATCH_2}")
    if(NOT path MATCHES "/")
      if(quoted STREQUAL "\"")
        math(EXPR count "${count} + 1")  # a bare name in quotes: the file's own folder
      endif()
      continue()
    endif()
    while(path MATCHES "^\\.\\.?/(.*)$")
      set(path "${CMAKE_MATCH_1}")
    endwhile()
    if(NOT path MATCHES "^([^/]+)/")
      continue()
    endif()
    set(target "${CMAKE_MATCH_1}")
    if(NOT target IN_LIST layers)
      continue()  # a public header or a library's
    endif()
    math(EXPR count "${count} + 1")
    if(NOT target STREQUAL folder AND NOT target IN_LIST allowed_${folder})
      list(APPEND violations "${rel}:${number}: ${folder} includes ${target}")
    endif()
  endforeach()
  set(${violations_var} "${violations}" PARENT_SCOPE)
  set(${count_var} "${count}" PARENT_SCOPE)
endfunction()

# The layer of a folder name (the first component of a path under tenferro/src), or "" for one the
# table does not know.
function(layer_of name out_var)
  if(name IN_LIST layers)
    set(${out_var} "${name}" PARENT_SCOPE)
  else()
    set(${out_var} "" PARENT_SCOPE)
  endif()
endfunction()

# ---- the check must be able to fail ------------------------------------------------------------
# An op reaching into the executor, a kernel reaching up (through a relative path and angle
# brackets), and a line with brackets and semicolons before them (the line count must stay right);
# the allowed includes around them must pass.
set(sample_ops "// ops/sample.cpp [a; b]\n#include \"ir/family.hpp\"\n#include \"exec/executor.hpp\"\n#include \"tenferro/tensor.hpp\"\n#include \"local.hpp\"\n")
set(sample_kernels "#include <vector>\n\n#include \"kernels/layout.hpp\"\n#  include <../ops/x.hpp>\n#include \"computegraph/graph.hpp\"\n")
set(sample_api "#include \"exec/executor.hpp\"\n#include \"regions/bodies.hpp\"\n#include \"ops/x.hpp\"\n")
set(found "")
set(count 0)
check_includes(ops "ops/sample.cpp" "${sample_ops}" found count)
check_includes(kernels "kernels/sample.cpp" "${sample_kernels}" found count)
check_includes(api "api/sample.cpp" "${sample_api}" found count)
set(expected "ops/sample.cpp:3: ops includes exec" "kernels/sample.cpp:4: kernels includes ops")
if(NOT found STREQUAL expected OR NOT count EQUAL 8)
  message(FATAL_ERROR "include_layers: the check fails on its own samples: found '${found}' (expected "
                      "'${expected}'), ${count} includes of folders (expected 8)")
endif()
layer_of(newfolder probe)
if(NOT probe STREQUAL "")
  message(FATAL_ERROR "include_layers: an unknown folder is not detected")
endif()

# ---- the folders -------------------------------------------------------------------------------
if(NOT IS_DIRECTORY "${src_root}")
  message(FATAL_ERROR "include_layers: ${src_root} is not a folder")
endif()
file(GLOB entries LIST_DIRECTORIES true RELATIVE "${src_root}" "${src_root}/*")
set(unknown "")
foreach(entry IN LISTS entries)
  if(IS_DIRECTORY "${src_root}/${entry}")
    layer_of("${entry}" layer)
    if(layer STREQUAL "")
      list(APPEND unknown "tenferro/src/${entry}/")
    endif()
  endif()
endforeach()
if(unknown)
  list(JOIN unknown ", " unknown)
  message(FATAL_ERROR "include_layers: folders the layer table does not know: ${unknown}. Give each a "
                      "line in the table of tests/include_layers.cmake (what it may include) and in "
                      "docs/design.md's Code layout.")
endif()
foreach(layer IN LISTS layers)
  if(NOT IS_DIRECTORY "${src_root}/${layer}")
    message(FATAL_ERROR "include_layers: the table names tenferro/src/${layer}/, which does not exist")
  endif()
endforeach()

# ---- the files ---------------------------------------------------------------------------------
file(GLOB_RECURSE files LIST_DIRECTORIES false RELATIVE "${src_root}" "${src_root}/*")
list(LENGTH files file_count)
if(file_count EQUAL 0)
  message(FATAL_ERROR "include_layers: no files under ${src_root}")
endif()
set(found "")
set(count 0)
foreach(rel IN LISTS files)
  if(rel MATCHES "^([^/]+)/")
    set(folder "${CMAKE_MATCH_1}")
  else()
    set(folder src)
  endif()
  file(READ "${src_root}/${rel}" text)
  check_includes("${folder}" "tenferro/src/${rel}" "${text}" found count)
endforeach()
if(count EQUAL 0)
  message(FATAL_ERROR "include_layers: no include of a folder found in ${file_count} files; is the parser broken?")
endif()

if(found)
  list(LENGTH found n)
  list(JOIN found "\n  " report)
  message(FATAL_ERROR "include_layers: ${n} include(s) run the wrong way (docs/design.md, Code layout):\n  ${report}")
endif()
message(STATUS "include_layers: ${file_count} files, ${count} includes of folders, every one allowed")
