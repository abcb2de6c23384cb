# Options of the sia build and resolution of the optional MILP backends.
option(SIA_BUILD_TESTS "Build the tests" ${PROJECT_IS_TOP_LEVEL})
option(SIA_BUILD_EXAMPLES "Build the programs in examples/" ${PROJECT_IS_TOP_LEVEL})
option(SIA_BUILD_BENCH "Build the benchmarks (Google Benchmark)" OFF)
option(SIA_INSTALL "Generate install rules" ${PROJECT_IS_TOP_LEVEL})
# OFF: the library alone (sia::core, sia::sia, sia_allocate and the small examples), installed without the simulator.
option(SIA_BUILD_SIM "Build the trace-driven simulator sia::sim (and sia_simulate, sia_fit_profiles)" ON)
# Optional simulator dependency; the Conan and vcpkg packages pass it OFF explicitly (their simulator keeps the
# 2-D interpolation), so a package never depends on what the build machine happens to have.
# The Python package `sia` (pybind11 from Debian, built for /usr/bin/python3): python/CMakeLists.txt.
option(SIA_BUILD_PYTHON "Build the Python package sia (needs the simulator and pybind11)" OFF)
option(SIA_WITH_QHULL "Use qhull for the simulator's 3-D ground-truth interpolation (if found)" ON)
set(SIA_WITH_CBC AUTO CACHE STRING "COIN-OR CBC backend (EPL-2.0): AUTO|ON|OFF")
set(SIA_WITH_GLPK OFF CACHE STRING "GLPK backend (GPL-3.0-or-later: binaries linking it become GPL): AUTO|ON|OFF")
set_property(CACHE SIA_WITH_CBC PROPERTY STRINGS AUTO ON OFF)
set_property(CACHE SIA_WITH_GLPK PROPERTY STRINGS AUTO ON OFF)
foreach(_opt SIA_WITH_CBC SIA_WITH_GLPK)
  string(TOUPPER "${${_opt}}" _val)
  if(NOT _val MATCHES "^(AUTO|ON|OFF|TRUE|FALSE|YES|NO|1|0)$")
    message(FATAL_ERROR "${_opt} must be AUTO, ON or OFF (got '${${_opt}}')")
  endif()
endforeach()

# Sets SIA_HAS_CBC / SIA_HAS_GLPK (0/1) and creates sia_dep::cbc / sia_dep::glpk.
macro(sia_resolve_backends)
  set(SIA_HAS_CBC 0)
  set(SIA_HAS_GLPK 0)
  string(TOUPPER "${SIA_WITH_CBC}" _cbc)
  if(NOT _cbc MATCHES "^(OFF|FALSE|NO|0)$")
    if(_cbc STREQUAL "AUTO")
      find_package(SiaCbc)
    else()
      find_package(SiaCbc REQUIRED)
    endif()
    if(SiaCbc_FOUND)
      set(SIA_HAS_CBC 1)
    else()
      message(STATUS "sia: skipping the CBC backend (CBC not found)")
    endif()
  endif()
  string(TOUPPER "${SIA_WITH_GLPK}" _glpk)
  if(NOT _glpk MATCHES "^(OFF|FALSE|NO|0)$")
    if(_glpk STREQUAL "AUTO")
      find_package(SiaGlpk)
    else()
      find_package(SiaGlpk REQUIRED)
    endif()
    if(SiaGlpk_FOUND)
      set(SIA_HAS_GLPK 1)
    else()
      message(STATUS "sia: skipping the GLPK backend (GLPK not found)")
    endif()
  endif()
  message(STATUS "sia: CBC backend ${SIA_HAS_CBC}, GLPK backend ${SIA_HAS_GLPK}")
endmacro()

# Warnings on sia's own targets only (never forced on consumers).
function(sia_set_warnings target)
  if(PROJECT_IS_TOP_LEVEL AND CMAKE_CXX_COMPILER_ID MATCHES "GNU|Clang")
    target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic)
    # g++ 12 at -O2 reports -Wrestrict inside libstdc++'s std::string concatenation (GCC bug
    # 105329, a known false positive); keep the build warning-free without hiding real findings
    # elsewhere (clang and sanitizer builds still see everything).
    if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
      target_compile_options(${target} PRIVATE -Wno-restrict)
    endif()
  endif()
endfunction()

# The malloc of the long-running programs (sia_allocate, sia_simulate, scheduler_loop; include/sia/memory.hpp):
# glibc's fragments over a long run of rounds (a warm round at 100,000 GPUs 29 -> 49 ms after a hundred rounds,
# 38 with jemalloc). AUTO links jemalloc (libjemalloc-dev, BSD-2-Clause) when it is found and the build is not
# instrumented by a sanitizer (which brings its own malloc); jemalloc requires it; system keeps the C library's.
# The library itself never links an allocator: that is the program's choice.
set(SIA_PROGRAM_MALLOC AUTO CACHE STRING "malloc of the long-running programs: AUTO|jemalloc|system")
set_property(CACHE SIA_PROGRAM_MALLOC PROPERTY STRINGS AUTO jemalloc system)
if(NOT SIA_PROGRAM_MALLOC MATCHES "^(AUTO|jemalloc|system)$")
  message(FATAL_ERROR "SIA_PROGRAM_MALLOC must be AUTO, jemalloc or system (got '${SIA_PROGRAM_MALLOC}')")
endif()

# Sets SIA_PROGRAM_MALLOC_LIBRARY (empty: the C library's malloc) from SIA_PROGRAM_MALLOC.
macro(sia_resolve_program_malloc)
  set(SIA_PROGRAM_MALLOC_LIBRARY "")
  set(_sia_sanitized OFF)
  if("${CMAKE_CXX_FLAGS} ${CMAKE_EXE_LINKER_FLAGS}" MATCHES "-fsanitize=[^ ]*(address|memory|thread)")
    set(_sia_sanitized ON)
  endif()
  if(SIA_PROGRAM_MALLOC STREQUAL "jemalloc" OR (SIA_PROGRAM_MALLOC STREQUAL "AUTO" AND NOT _sia_sanitized))
    find_library(SIA_JEMALLOC_LIBRARY NAMES jemalloc)
    if(SIA_JEMALLOC_LIBRARY)
      set(SIA_PROGRAM_MALLOC_LIBRARY "${SIA_JEMALLOC_LIBRARY}")
    elseif(SIA_PROGRAM_MALLOC STREQUAL "jemalloc")
      message(FATAL_ERROR "SIA_PROGRAM_MALLOC=jemalloc, but libjemalloc was not found (Debian: libjemalloc-dev)")
    endif()
  endif()
  if(SIA_PROGRAM_MALLOC_LIBRARY)
    message(STATUS "sia: long-running programs use jemalloc (${SIA_PROGRAM_MALLOC_LIBRARY})")
  else()
    message(STATUS "sia: long-running programs use the C library's malloc")
  endif()
endmacro()

# Links `target` (a program) with the malloc sia_resolve_program_malloc() chose. Kept whatever the linker's
# --as-needed says: nothing names jemalloc, it replaces malloc by being loaded.
function(sia_link_program_malloc target)
  if(SIA_PROGRAM_MALLOC_LIBRARY)
    target_link_libraries(${target} PRIVATE "-Wl,--push-state,--no-as-needed" "${SIA_PROGRAM_MALLOC_LIBRARY}"
                                            "-Wl,--pop-state")
  endif()
endfunction()
