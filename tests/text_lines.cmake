# Shared by the repository checks run with `cmake -P` (repo_self_contained.cmake, rule_dialect.cmake,
# include_layers.cmake): a file's text as a CMake list of its lines. List separators and brackets
# are masked first so that every line stays one list element; the masks (ASCII 1 to 4) cannot take
# part in a match of the checks' patterns. text_line_shown() restores a line as written.
string(ASCII 1 mask_backslash)
string(ASCII 2 mask_semicolon)
string(ASCII 3 mask_open)
string(ASCII 4 mask_close)

function(text_lines text out_var)
  string(REPLACE "\\" "${mask_backslash}" text "${text}")
  string(REPLACE ";" "${mask_semicolon}" text "${text}")
  string(REPLACE "[" "${mask_open}" text "${text}")
  string(REPLACE "]" "${mask_close}" text "${text}")
  string(REPLACE "\n" ";" lines "${text}")
  set(${out_var} "${lines}" PARENT_SCOPE)
endfunction()

function(text_line_shown line out_var)
  string(REPLACE "${mask_open}" "[" line "${line}")
  string(REPLACE "${mask_close}" "]" line "${line}")
  string(REPLACE "${mask_semicolon}" ";" line "${line}")
  string(REPLACE "${mask_backslash}" "\\" line "${line}")
  set(${out_var} "${line}" PARENT_SCOPE)
endfunction()

# Appends "  <rel>:<line>: <line as written>\n" to ${report_var} for every line of `text` (the
# contents of file `rel`) that matches `pattern` and not `skip` (empty: no line is skipped), and
# adds their number to ${count_var}.
function(report_matching_lines rel text pattern skip report_var count_var)
  set(report "${${report_var}}")
  set(count "${${count_var}}")
  text_lines("${text}" lines)
  set(number 0)
  foreach(line IN LISTS lines)
    math(EXPR number "${number} + 1")
    text_line_shown("${line}" shown)
    if(shown MATCHES "${pattern}" AND (skip STREQUAL "" OR NOT shown MATCHES "${skip}"))
      math(EXPR count "${count} + 1")
      string(STRIP "${shown}" shown)
      string(APPEND report "  ${rel}:${number}: ${shown}\n")
    endif()
  endforeach()
  set(${report_var} "${report}" PARENT_SCOPE)
  set(${count_var} "${count}" PARENT_SCOPE)
endfunction()
