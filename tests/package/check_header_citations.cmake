# Public headers cite only documents that `cmake --install` installs (cmake/SiaInstall.cmake: README.md,
# LICENSE, docs/*.md and examples/requests/ under share/doc/sia, at the same relative paths as in the
# source tree). A header citing a file of ../shared or an uninstalled one sends an installed user to nothing.
#   cmake -DSRC=<sia checkout> -P check_header_citations.cmake
file(GLOB_RECURSE _headers "${SRC}/include/sia/*.hpp")
set(_bad 0)
foreach(_h IN LISTS _headers)
  file(STRINGS "${_h}" _lines REGEX "[A-Za-z0-9_.-]+\\.md")
  foreach(_line IN LISTS _lines)
    string(REGEX MATCHALL "[A-Za-z0-9_./-]+\\.md" _docs "${_line}")
    foreach(_doc IN LISTS _docs)
      if(NOT (_doc STREQUAL "README.md" OR _doc MATCHES "^docs/[A-Za-z0-9_.-]+\\.md$" OR
              _doc MATCHES "^examples/requests/[A-Za-z0-9_.-]+\\.md$") OR NOT EXISTS "${SRC}/${_doc}")
        file(RELATIVE_PATH _rel "${SRC}" "${_h}")
        message(STATUS "${_rel}: cites ${_doc}, which is not an installed document: ${_line}")
        set(_bad 1)
      endif()
    endforeach()
  endforeach()
endforeach()
if(_bad)
  message(FATAL_ERROR "cite README.md, docs/*.md or examples/requests/*.md (installed in share/doc/sia)")
endif()
message(STATUS "header citations: every cited document is installed")
