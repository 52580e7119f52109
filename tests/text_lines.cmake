# Shared by the repository checks run with `cmake -P` (repo_self_contained.cmake,
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
