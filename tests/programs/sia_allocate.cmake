# Smoke tests of sia_allocate (product.md §5). This file has two modes:
#  - include()d from tests/CMakeLists.txt: it adds the tests below;
#  - run with `cmake -P` by those tests: it runs the program once (stdin from a file if given) and
#    checks the exact exit status and regular expressions on stdout and stderr.

if(CMAKE_SCRIPT_MODE_FILE)
  # -DPROG=... -DARGS="a|b" [-DSTDIN=file] -DEXPECT_RC=n [-DSTDOUT_REGEX=...] [-DSTDOUT_NOT_REGEX=...]
  # [-DSTDERR_REGEX=...] [-DSTDOUT_EMPTY=1]
  string(REPLACE "|" ";" ARGS "${ARGS}")
  set(_stdin_args)
  if(DEFINED STDIN)
    set(_stdin_args INPUT_FILE "${STDIN}")
  endif()
  execute_process(COMMAND "${PROG}" ${ARGS} ${_stdin_args}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 120)
  if(NOT "${rc}" STREQUAL "${EXPECT_RC}")
    message(FATAL_ERROR "exit status ${rc}, expected ${EXPECT_RC}\nstdout:\n${out}\nstderr:\n${err}")
  endif()
  if(DEFINED STDOUT_REGEX AND NOT out MATCHES "${STDOUT_REGEX}")
    message(FATAL_ERROR "stdout does not match '${STDOUT_REGEX}'\nstdout:\n${out}\nstderr:\n${err}")
  endif()
  if(DEFINED STDERR_REGEX AND NOT err MATCHES "${STDERR_REGEX}")
    message(FATAL_ERROR "stderr does not match '${STDERR_REGEX}'\nstdout:\n${out}\nstderr:\n${err}")
  endif()
  if(DEFINED STDOUT_NOT_REGEX AND out MATCHES "${STDOUT_NOT_REGEX}")
    message(FATAL_ERROR "stdout matches '${STDOUT_NOT_REGEX}'\nstdout:\n${out}")
  endif()
  if(DEFINED STDOUT_EMPTY AND NOT out STREQUAL "")
    message(FATAL_ERROR "stdout should be empty\nstdout:\n${out}")
  endif()
  return()
endif()

if(NOT TARGET sia_allocate)
  return()
endif()

set(_sia_allocate_data ${PROJECT_SOURCE_DIR}/tests/data/allocate)
# sia_allocate_test(<name> RC <n> [ARGS ...] [STDIN file] [STDOUT regex] [STDOUT_NOT regex] [STDERR regex]
#                   [STDOUT_EMPTY])
function(sia_allocate_test name)
  sia_program_test(${name} sia_allocate ${ARGN})  # tests/programs/cli.cmake
endfunction()

# Table 1 of the paper: J1 -> (1, 4, B), J2 -> (1, 2, A), with p = 1 and p = -0.5.
set(_table1_out
    "^\\{\"status\":\"optimal\",.*\"allocations\":\\[\\{\"job\":\"J1\",\"gpu_type\":\"B\",\"nodes\":1,\"gpus\":4,.*\\{\"job\":\"J2\",\"gpu_type\":\"A\",\"nodes\":1,\"gpus\":2,.*\"unallocated\":\\[\\]")
# --verbose: the round's phases on standard error (round_log.hpp), the decision unchanged on standard output.
sia_allocate_test(sia_allocate.verbose RC 0 ARGS ${_sia_allocate_data}/table1_p1.json --verbose
                  STDOUT "^{\"status\":\"optimal\"" STDERR "^sia_allocate: problem [0-9.]+ ms \\(\\+[0-9.]+\\): 2 jobs, 5 configurations, 10 candidates.*sia_allocate: solve .*backend [a-z]+, optimal, [0-9]+ nodes.*gap.*sia_allocate: done .*optimal.*2 allocated")
sia_allocate_test(sia_allocate.table1.p_positive RC 0 ARGS ${_sia_allocate_data}/table1_p1.json STDOUT "${_table1_out}")
sia_allocate_test(sia_allocate.table1.p_negative RC 0 ARGS ${_sia_allocate_data}/table1_p_negative.json
                  STDOUT "${_table1_out}")
# Standard input, explicitly ("-") and implicitly (no file argument).
sia_allocate_test(sia_allocate.stdin.dash RC 0 ARGS - STDIN ${_sia_allocate_data}/table1_p1.json STDOUT "${_table1_out}")
sia_allocate_test(sia_allocate.stdin.implicit RC 0 STDIN ${_sia_allocate_data}/table1_p_negative.json
                  STDOUT "${_table1_out}")
# Every backend compiled in, chosen on the command line.
foreach(_backend native cbc glpk)
  if((_backend STREQUAL "cbc" AND NOT SIA_HAS_CBC) OR (_backend STREQUAL "glpk" AND NOT SIA_HAS_GLPK))
    continue()
  endif()
  sia_allocate_test(sia_allocate.backend.${_backend} RC 0
                    ARGS ${_sia_allocate_data}/table1_p1.json --backend ${_backend} --time-limit-ms 5000
                    STDOUT "\"backend\":\"${_backend}\".*\"job\":\"J1\",\"gpu_type\":\"B\",\"nodes\":1,\"gpus\":4")
endforeach()
# Node names, a failed node and current placements: placements are printed with node names.
sia_allocate_test(sia_allocate.placement RC 0 ARGS ${_sia_allocate_data}/placement.json --pretty
                  STDOUT "\"job\": \"running\",[^}]*\"gpu_type\": \"B\",[^}]*\"placement\": \\[[^]]*\"node\": \"b-0\"")
# One invalid job among valid ones (issue 15): exit 0, the job in `rejected` (field, reason) and in
# `unallocated` (reason "rejected"); a rejected running job is preempted; the others are scheduled.
sia_allocate_test(sia_allocate.reject_job.bad_value RC 0 ARGS ${_sia_allocate_data}/bad_goodput_value.json
                  STDOUT "\"allocations\":\\[\\{\"job\":\"J1\",\"gpu_type\":\"B\",\"nodes\":1,\"gpus\":4.*\"unallocated\":\\[\\{\"job\":\"J2\",\"reason\":\"rejected\".*\"rejected\":\\[\\{\"job\":\"J2\",\"field\":\"jobs\\[1\\]\\.goodput\\[3\\]\\.value\",\"reason\":\"must be finite and >= 0, got -1\"\\}\\]")
sia_allocate_test(sia_allocate.reject_job.kind RC 0 ARGS ${_sia_allocate_data}/one_bad_job.json
                  STDOUT "\\{\"job\":\"J1\",\"gpu_type\":\"B\",\"nodes\":1,\"gpus\":4,.*\\{\"job\":\"J3\",\"gpu_type\":\"A\",\"nodes\":1,\"gpus\":2,.*\"rejected\":\\[\\{\"job\":\"J2\",\"field\":\"jobs\\[1\\]\\.kind\",\"reason\":\"unknown job kind .*\"preempted\":\\[\"J2\"\\]")
# Rejected requests: exit 2, the field on stderr, nothing on stdout (`options.strict`: all or nothing).
sia_allocate_test(sia_allocate.reject.strict RC 2 ARGS ${_sia_allocate_data}/one_bad_job_strict.json STDOUT_EMPTY
                  STDERR "one_bad_job_strict.json:[0-9]+:[0-9]+: jobs\\[1\\]\\.kind: unknown job kind \"adaptiv\"")
sia_allocate_test(sia_allocate.reject.malformed RC 2 STDIN ${_sia_allocate_data}/bad_malformed.json STDOUT_EMPTY
                  STDERR "<stdin>:4:[0-9]+: malformed JSON")
sia_allocate_test(sia_allocate.reject.missing_file RC 2 ARGS ${_sia_allocate_data}/does-not-exist.json STDOUT_EMPTY
                  STDERR "does-not-exist.json: cannot open the request")
sia_allocate_test(sia_allocate.reject.backend RC 2 ARGS ${_sia_allocate_data}/table1_p1.json --backend nope
                  STDOUT_EMPTY STDERR "unknown MILP backend 'nope'")
sia_allocate_test(sia_allocate.reject.usage RC 2 ARGS --time-limit-ms -5 STDOUT_EMPTY)
sia_allocate_test(sia_allocate.help RC 0 ARGS --help STDOUT "sia_allocate.*--backend")
sia_allocate_test(sia_allocate.version RC 0 ARGS --version STDOUT "sia_allocate [0-9]")
# Goodput models (issue 3): allocations carry the chosen batch size.
sia_allocate_test(sia_allocate.model RC 0 ARGS ${_sia_allocate_data}/model.json
                  STDOUT "\"job\":\"bert\",[^}]*\"batch_size\":256")
# Failed nodes: a job whose configuration is gone waits again; nothing is placed on the failed node.
sia_allocate_test(sia_allocate.failed_node RC 0 ARGS ${_sia_allocate_data}/failed_node.json
                  STDOUT "\"job\":\"distributed\",\"gpu_type\":\"[AB]\"" STDOUT_NOT "A/1")
# A non-preemptible job that cannot get GPUs: exit 3, the decision is still printed.
sia_allocate_test(sia_allocate.infeasible RC 3 ARGS ${_sia_allocate_data}/infeasible.json
                  STDOUT "\"status\":\"infeasible\".*\"unmet\":\\[\"must-run\"\\]" STDERR "round status infeasible")
# No time to solve: the greedy fallback allocation is valid (status feasible, exit 0) and says so.
sia_allocate_test(sia_allocate.time_limit_zero RC 0 ARGS ${_sia_allocate_data}/model.json --time-limit-ms 0
                  STDOUT "\"status\":\"(optimal|feasible)\"")
# The example requests of examples/requests/ stay valid.
file(GLOB _sia_example_requests CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/examples/requests/*.json)
list(FILTER _sia_example_requests EXCLUDE REGEX "\\.schema\\.json$")  # the JSON Schemas (io.schemas)
foreach(_request ${_sia_example_requests})
  get_filename_component(_name ${_request} NAME_WE)
  sia_allocate_test(sia_allocate.example.${_name} RC 0 ARGS ${_request} STDOUT "^\\{\"status\":\"optimal\"")
endforeach()
sia_allocate_test(sia_allocate.reject.directory RC 2 ARGS ${_sia_allocate_data} STDOUT_EMPTY STDERR "cannot read the request")
