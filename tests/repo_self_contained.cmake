# The repository explains itself: no file may send the reader to a design document that is not
# part of it. Design decisions live in docs/ (docs/design.md and the library pages); comments and
# docs point there by section name, or state the fact inline.
#
# Checks every file git knows of (tracked, and untracked but not ignored), or, where git or the
# work tree is unavailable, every file under SOURCE_DIR except build trees and .git, and fails
# listing file:line for each reference found.
#
#   cmake -DSOURCE_DIR=<repository root> -P tests/repo_self_contained.cmake
#
# The patterns are assembled from pieces below, so that this file does not match itself.
cmake_minimum_required(VERSION 3.25)

if(NOT SOURCE_DIR)
  get_filename_component(SOURCE_DIR "${CMAKE_CURRENT_LIST_DIR}/.." ABSOLUTE)
endif()

# ---- patterns ----------------------------------------------------------------------------------
set(sec "§")
string(CONCAT sp "sp" "ec")
string(CONCAT design "DES" "IGN\\.md")
string(CONCAT style "STY" "LE\\.md")
string(CONCAT beside "\\.\\./sha" "red")
string(CONCAT practice "[Pp]rac" "tice [0-9]+")
string(CONCAT rule "contract's ru" "le [0-9]+")
string(CONCAT arch "ad-arch" "itecture")
string(CONCAT contract "ad-con" "tract")
string(CONCAT primitives "implementing-pri" "mitives")
string(CONCAT libraries "operator-lib" "raries\\.md")
string(CONCAT paper "you-only-lin" "earize-once\\.md")
set(patterns
    "${design}" "${style}"                           # top-level design notes
    "${beside}"                                      # a folder beside the checkout
    "(^|[^A-Za-z0-9_])${sp}/"                        # a folder of that name
    "[Ss]${sp}(ification)? ${sec}"                   # numbered sections of such a document
    "${sec} ?[IVX]+([^A-Za-z]|$)"
    "[Tt]he ${sp}(ification)?([^A-Za-z_]|$)"         # "the <document>", as if it were at hand
    "[Ss]${sp}(ification)?'s"
    "${practice}" "${rule}"                          # numbered rules of such a document
    "${arch}" "${contract}" "${primitives}" "${libraries}" "${paper}")  # its file names
list(JOIN patterns "|" any)

# The check must be able to fail: each of these must be caught.
string(CONCAT probe1 "see DES" "IGN.md")
string(CONCAT probe2 "(" "${sp}" " " "${sec}" "II)")
string(CONCAT probe3 "ad-con" "tract rule 5")
string(CONCAT probe4 "lives in ../sha" "red/" "${sp}" "/")
string(CONCAT probe5 "as t" "he " "${sp}" "ification says")
foreach(probe "${probe1}" "${probe2}" "${probe3}" "${probe4}" "${probe5}")
  if(NOT probe MATCHES "${any}")
    message(FATAL_ERROR "repo_self_contained: the patterns miss '${probe}'")
  endif()
endforeach()

# ---- files -------------------------------------------------------------------------------------
set(files)
find_program(GIT git)
if(GIT)
  execute_process(COMMAND "${GIT}" -C "${SOURCE_DIR}" ls-files --cached --others --exclude-standard
                  OUTPUT_VARIABLE listing RESULT_VARIABLE git_result ERROR_QUIET)
  if(git_result EQUAL 0 AND NOT listing STREQUAL "")
    string(REPLACE ";" "\\;" listing "${listing}")
    string(REPLACE "\n" ";" files "${listing}")
  endif()
endif()
if(NOT files)
  file(GLOB_RECURSE files LIST_DIRECTORIES false RELATIVE "${SOURCE_DIR}" "${SOURCE_DIR}/*")
  list(FILTER files EXCLUDE REGEX "^(build[^/]*|\\.git)/")
endif()
list(FILTER files EXCLUDE REGEX "\\.(png|jpg|jpeg|gif|ico|pdf|gz|xz|zip|so|a|o|npy|npz)$")
list(LENGTH files file_count)
if(file_count EQUAL 0)
  message(FATAL_ERROR "repo_self_contained: no files found under ${SOURCE_DIR}")
endif()

# ---- scan --------------------------------------------------------------------------------------
include("${CMAKE_CURRENT_LIST_DIR}/text_lines.cmake")
set(found 0)
set(report "")
foreach(rel IN LISTS files)
  set(path "${SOURCE_DIR}/${rel}")
  if(NOT EXISTS "${path}" OR IS_DIRECTORY "${path}")
    continue()  # listed by git but deleted in the work tree, or a submodule
  endif()
  file(READ "${path}" text)
  if(NOT text MATCHES "${any}")
    continue()
  endif()
  # Only files with a hit are split into lines.
  report_matching_lines("${rel}" "${text}" "${any}" "" report found)
endforeach()

if(found GREATER 0)
  message(FATAL_ERROR
          "repo_self_contained: ${found} reference(s) to documents outside the repository. Point "
          "to docs/ (docs/design.md and the library pages) or state the fact inline:\n${report}")
endif()
message(STATUS "repo_self_contained: ${file_count} files, no reference to a document outside the repository")
