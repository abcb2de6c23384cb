# Issue 14 part 6: sia_allocate's bounded input, as a user sees it: names over the length limit are
# refused with exit 2, and values given on the command line are not echoed in full.
# sia_allocate_test() comes from sia_allocate.cmake (its tests run that file's script mode).
if(NOT TARGET sia_allocate OR NOT COMMAND sia_allocate_test)
  return()
endif()

set(_io_data ${PROJECT_SOURCE_DIR}/tests/data/allocate)
# A job id of 300 bytes: refused, with its position, its length and the limit (shortened in the message).
sia_allocate_test(io.allocate.name_limit RC 2 ARGS ${_io_data}/long_job_id.json STDOUT_EMPTY
                  STDERR "long_job_id.json:[0-9]+:[0-9]+: jobs\\[1\\]\\.id: a name of 300 bytes \\(\"J+\\.\\.\\.\" \\(a string\\)\\), more than the limit of 256 bytes")
# A 5000-byte --backend: its start and its length, not the whole value.
string(REPEAT "x" 5000 _long_value)
sia_allocate_test(io.allocate.backend_not_echoed RC 2 ARGS ${_io_data}/table1_p1.json --backend ${_long_value}
                  STDOUT_EMPTY STDERR "unknown MILP backend 'x+\\.\\.\\.' \\(5000 bytes\\) \\(available: ")
# CLI11's own message about a 5000-digit number is shortened the same way.
string(REPEAT "1" 5000 _long_number)
sia_allocate_test(io.allocate.option_not_echoed RC 2 ARGS ${_io_data}/table1_p1.json --time-limit-ms ${_long_number}
                  STDOUT_EMPTY STDERR "^sia_allocate: [^\n]*\\.\\.\\. \\([0-9]+ bytes\\)\nRun with --help")
# sia_simulate's cluster files use the same reader: content errors name line and column too.
if(TARGET sia_simulate)
  add_test(NAME io.simulate.cluster_error_position
           COMMAND ${CMAKE_COMMAND} -DPROG=$<TARGET_FILE:sia_simulate>
                   "-DARGS=--cluster|${PROJECT_SOURCE_DIR}/tests/data/io/bad_cluster.json" -DEXPECT_RC=2 -DSTDOUT_EMPTY=1
                   "-DSTDERR_REGEX=bad_cluster.json:2:27: gpu_types\\[0\\]\\.nodes: must be an integer in \\[0, [0-9]+\\], got -1"
                   -P ${CMAKE_CURRENT_LIST_FILE})
endif()
