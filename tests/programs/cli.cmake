# Issue 14: every program (sia_allocate, sia_simulate, sia_fit_profiles) parses its options with CLI11,
# has --version and --help (with the exit-status table), and exits by the one table of
# <sia/exit_code.hpp>: 0 done, 2 bad input, 3 not solved, 1 internal error. Each test checks the
# exact status (sia_allocate.cmake's script mode runs the program and matches its output).

# sia_program_test(<name> <target> RC <n> [ARGS ...] [STDIN file] [STDOUT regex] [STDOUT_NOT regex]
#                  [STDERR regex] [STDOUT_EMPTY]): runs <target> through sia_allocate.cmake's script mode
# (sia_allocate_test() is this for sia_allocate).
function(sia_program_test name target)
  if(NOT TARGET ${target})
    return()
  endif()
  cmake_parse_arguments(T "STDOUT_EMPTY" "RC;STDIN;STDOUT;STDOUT_NOT;STDERR" "ARGS" ${ARGN})
  string(REPLACE ";" "|" _args "${T_ARGS}")  # a list would be split into separate arguments
  set(defs -DPROG=$<TARGET_FILE:${target}> "-DARGS=${_args}" -DEXPECT_RC=${T_RC})
  if(T_STDIN)
    list(APPEND defs -DSTDIN=${T_STDIN})
  endif()
  if(T_STDOUT)
    list(APPEND defs "-DSTDOUT_REGEX=${T_STDOUT}")
  endif()
  if(T_STDOUT_NOT)
    list(APPEND defs "-DSTDOUT_NOT_REGEX=${T_STDOUT_NOT}")
  endif()
  if(T_STDERR)
    list(APPEND defs "-DSTDERR_REGEX=${T_STDERR}")
  endif()
  if(T_STDOUT_EMPTY)
    list(APPEND defs -DSTDOUT_EMPTY=1)
  endif()
  add_test(NAME ${name} COMMAND ${CMAKE_COMMAND} ${defs} -P ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/sia_allocate.cmake)
endfunction()

foreach(_prog sia_allocate sia_simulate sia_fit_profiles)
  # The package version (CMake's project version), the same string as sia::version().
  string(REPLACE "." "\\." _sia_version_re "${PROJECT_VERSION}")
  sia_program_test(cli.${_prog}.version ${_prog} RC 0 ARGS --version STDOUT "^${_prog} ${_sia_version_re}[^0-9.]*$")
  sia_program_test(cli.${_prog}.help ${_prog} RC 0 ARGS --help
                   STDOUT "--version.*Exit status: 0 done; 2 bad input.*3 not solved.*1 internal error")
  # A usage error is bad input (2), named by the program, whatever CLI11's own code for it.
  sia_program_test(cli.${_prog}.unknown_option ${_prog} RC 2 ARGS positional-arg --no-such-option STDOUT_EMPTY
                   STDERR "^${_prog}: .*--no-such-option")
endforeach()
# Values outside an option's range: 2 (CLI11 returns 105/106 on its own).
sia_program_test(cli.sia_simulate.bad_value sia_simulate RC 2 ARGS --scale 0 STDOUT_EMPTY STDERR "^sia_simulate: .*--scale")
sia_program_test(cli.sia_fit_profiles.bad_value sia_fit_profiles RC 2 ARGS some-dir --seed minus-one STDOUT_EMPTY
                 STDERR "^sia_fit_profiles: .*--seed")
sia_program_test(cli.sia_fit_profiles.missing_dir sia_fit_profiles RC 2 STDOUT_EMPTY STDERR "profiles-dir")
sia_program_test(cli.sia_allocate.bad_value sia_allocate RC 2 ARGS --time-limit-ms x STDOUT_EMPTY
                 STDERR "^sia_allocate: .*--time-limit-ms")
# Rejected inputs: 2, with the source named.
sia_program_test(cli.sia_fit_profiles.bad_dir sia_fit_profiles RC 2 ARGS ${CMAKE_CURRENT_BINARY_DIR}/no-such-profiles
                 STDOUT_EMPTY STDERR "^sia_fit_profiles: .*no-such-profiles")
sia_program_test(cli.sia_simulate.unknown_cluster sia_simulate RC 2 ARGS --cluster nowhere STDOUT_EMPTY
                 STDERR "^sia_simulate: cluster: 'nowhere'")
sia_program_test(cli.sia_simulate.experiment_without_name sia_simulate RC 2 ARGS experiment)
# Issue 14 §6: the request's size is bounded while reading: an endless input (/dev/zero, which was read
# until bad_alloc) and one over the limit are rejected with exit 2 naming the limit.
if(EXISTS /dev/zero)
  sia_program_test(cli.sia_allocate.endless_input sia_allocate RC 2 ARGS /dev/zero --max-request-bytes 100000
                   STDOUT_EMPTY STDERR "/dev/zero: the request is larger than the limit of 100000 bytes")
  sia_program_test(cli.sia_allocate.endless_input_default_limit sia_allocate RC 2 ARGS /dev/zero STDOUT_EMPTY
                   STDERR "larger than the limit of 134217728 bytes")
endif()
sia_program_test(cli.sia_allocate.over_limit sia_allocate RC 2
                 ARGS ${PROJECT_SOURCE_DIR}/examples/requests/table1.json --max-request-bytes 100 STDOUT_EMPTY
                 STDERR "table1.json: the request is larger than the limit of 100 bytes")
