# sia_allocate under hardening inputs (issue 9; docs/reliability.md). Two modes:
#  - include()d from tests/CMakeLists.txt: adds the tests below;
#  - run with `cmake -P` by those tests: generates a request (KIND=big|deep|huge_number) into OUT, runs
#    PROG on it with ARGS ("a|b") and checks the exact exit status and a regex on stdout or stderr.
# The requests are generated rather than stored: a 2048-GPU round with 300 jobs is ~300 kB.

if(CMAKE_SCRIPT_MODE_FILE)
  if(KIND STREQUAL "big")
    # The paper's heterogeneous cluster x32 (2048 GPUs), 300 jobs with goodput tables.
    set(types "{\"name\": \"aws\", \"nodes\": 192, \"gpus_per_node\": 4}, {\"name\": \"rtx\", \"nodes\": 96, \"gpus_per_node\": 8}, {\"name\": \"dgx-ext\", \"nodes\": 64, \"gpus_per_node\": 8}")
    set(jobs "")
    foreach(i RANGE 299)
      math(EXPR a "${i} % 7 + 1")
      math(EXPR b "${i} % 5 + 2")
      set(gp "{\"gpu_type\": \"aws\", \"gpus\": 1, \"value\": ${a}}, {\"gpu_type\": \"aws\", \"gpus\": 4, \"value\": ${a}.5}, {\"gpu_type\": \"aws\", \"gpus\": 16, \"value\": ${a}${a}}, {\"gpu_type\": \"rtx\", \"gpus\": 2, \"value\": ${b}}, {\"gpu_type\": \"rtx\", \"gpus\": 8, \"value\": ${b}${a}}, {\"gpu_type\": \"dgx-ext\", \"gpus\": 8, \"value\": ${a}${b}}, {\"gpu_type\": \"dgx-ext\", \"gpus\": 32, \"value\": ${b}${b}${a}}")
      if(i GREATER 0)
        string(APPEND jobs ", ")
      endif()
      string(APPEND jobs "{\"id\": \"j${i}\", \"goodput\": [${gp}]}")
    endforeach()
    file(WRITE "${OUT}" "{\"cluster\": {\"gpu_types\": [${types}]}, \"jobs\": [${jobs}]}")
  elseif(KIND STREQUAL "deep")
    string(REPEAT "[" 100000 open)
    string(REPEAT "]" 100000 close)
    file(WRITE "${OUT}" "{\"cluster\": {\"gpu_types\": [{\"name\": \"A\", \"nodes\": 1, \"gpus_per_node\": 2}]}, \"jobs\": ${open}${close}}")
  elseif(KIND STREQUAL "huge_number")
    file(WRITE "${OUT}" "{\"cluster\": {\"gpu_types\": [{\"name\": \"A\", \"nodes\": 1e400, \"gpus_per_node\": 2}]}, \"jobs\": []}")
  endif()
  string(REPLACE "|" ";" ARGS "${ARGS}")
  execute_process(COMMAND "${PROG}" "${OUT}" ${ARGS} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 120)
  if(NOT "${rc}" STREQUAL "${EXPECT_RC}")
    string(SUBSTRING "${out}" 0 2000 out)
    message(FATAL_ERROR "exit status ${rc}, expected ${EXPECT_RC}\nstdout:\n${out}\nstderr:\n${err}")
  endif()
  if(DEFINED STDOUT_REGEX AND NOT out MATCHES "${STDOUT_REGEX}")
    string(SUBSTRING "${out}" 0 2000 out)
    message(FATAL_ERROR "stdout does not match '${STDOUT_REGEX}'\nstdout:\n${out}")
  endif()
  if(DEFINED STDERR_REGEX AND NOT err MATCHES "${STDERR_REGEX}")
    message(FATAL_ERROR "stderr does not match '${STDERR_REGEX}'\nstderr:\n${err}")
  endif()
  return()
endif()

if(NOT TARGET sia_allocate)
  return()
endif()

function(sia_hardening_test name kind rc)
  cmake_parse_arguments(T "" "STDOUT;STDERR" "ARGS" ${ARGN})
  set(defs -DPROG=$<TARGET_FILE:sia_allocate> -DKIND=${kind} -DEXPECT_RC=${rc}
           -DOUT=${CMAKE_CURRENT_BINARY_DIR}/hardening_${name}.json)
  if(T_ARGS)
    string(REPLACE ";" "|" _args "${T_ARGS}")
    list(APPEND defs "-DARGS=${_args}")
  endif()
  if(DEFINED T_STDOUT)
    list(APPEND defs "-DSTDOUT_REGEX=${T_STDOUT}")
  endif()
  if(DEFINED T_STDERR)
    list(APPEND defs "-DSTDERR_REGEX=${T_STDERR}")
  endif()
  add_test(NAME hardening.${name} COMMAND ${CMAKE_COMMAND} ${defs} -P ${CMAKE_CURRENT_LIST_FILE})
endfunction()

# A 2048-GPU round solved normally (native): optimal or stopped at a limit, exit 0.
sia_hardening_test(big.native big 0 ARGS --backend native --time-limit-ms 20000
                   STDOUT "^\\{\"status\":\"(optimal|feasible)\"")
# No time at all: the backend has no solution; the greedy fallback allocation is valid, marked
# fallback, status feasible (exit 0, as documented: exit 3 is for `error` and `infeasible`).
foreach(_backend cbc glpk)
  if((_backend STREQUAL "cbc" AND NOT SIA_HAS_CBC) OR (_backend STREQUAL "glpk" AND NOT SIA_HAS_GLPK))
    continue()
  endif()
  sia_hardening_test(big.${_backend}.no_time big 0 ARGS --backend ${_backend} --time-limit-ms 0
                     STDOUT "\"status\":\"feasible\".*\"fallback\":true.*no solution within its limits")
endforeach()
# Absurd inputs are rejected with exit 2 and a message naming the problem.
sia_hardening_test(deep deep 2 STDERR "nested deeper than 64")
sia_hardening_test(huge_number huge_number 2 STDERR "nodes|number")
