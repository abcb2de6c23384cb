# Builds tests/portability/random_dump.cpp (with the synthetic workload's sources) twice — with the
# build's compiler and standard library, and with clang++ -stdlib=libc++ — and requires identical
# output: the synthetic workload and the portable draws do not depend on the standard library.
# Arguments: -DSRC=<repo> -DBIN=<work dir> -DCXX=<compiler> -DCLANG=<clang++ or empty>
set(sources ${SRC}/tests/portability/random_dump.cpp ${SRC}/src/sim/workload.cpp ${SRC}/src/sim/csv.cpp)
set(flags -std=c++20 -O1 -I${SRC}/include -I${SRC}/src)
file(MAKE_DIRECTORY ${BIN})
function(build_and_run compiler extra out)
  execute_process(COMMAND ${compiler} ${flags} ${extra} ${sources} -o ${BIN}/${out}
                  RESULT_VARIABLE rc ERROR_VARIABLE err)
  if(rc)
    message(FATAL_ERROR "${compiler} ${extra}: build failed:\n${err}")
  endif()
  execute_process(COMMAND ${BIN}/${out} OUTPUT_VARIABLE text RESULT_VARIABLE rc)
  if(rc)
    message(FATAL_ERROR "${out} failed")
  endif()
  set(${out}_text "${text}" PARENT_SCOPE)
endfunction()
build_and_run(${CXX} "" dump_default)
if(NOT CLANG)
  message(STATUS "portable random: skipped the libc++ comparison (no clang++)")
  return()
endif()
# libc++ may be missing: then say so (the test's SKIP_REGULAR_EXPRESSION) instead of failing.
execute_process(COMMAND ${CLANG} -std=c++20 -stdlib=libc++ -x c++ -E - INPUT_FILE ${SRC}/tests/portability/has_libcxx.cpp
                RESULT_VARIABLE rc OUTPUT_QUIET ERROR_QUIET)
if(rc)
  message(STATUS "portable random: skipped the libc++ comparison (libc++ not installed)")
  return()
endif()
build_and_run(${CLANG} "-stdlib=libc++" dump_libcxx)
if(NOT dump_default_text STREQUAL dump_libcxx_text)
  file(WRITE ${BIN}/default.txt "${dump_default_text}")
  file(WRITE ${BIN}/libcxx.txt "${dump_libcxx_text}")
  message(FATAL_ERROR "the synthetic workload or the portable draws differ between standard libraries: "
                      "diff ${BIN}/default.txt ${BIN}/libcxx.txt")
endif()
string(LENGTH "${dump_default_text}" n)
message(STATUS "portable random: identical output with both standard libraries (${n} bytes)")
