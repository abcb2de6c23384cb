# `sia_allocate --serve` (examples/requests/README.md): rounds one after another in one process. This
# file has two modes: include()d from tests/CMakeLists.txt it adds the tests; run with `cmake -P` it
# chains three rounds of cluster64.json through --next-request, runs them in one --serve session
# with a blank line and a malformed request among them, and checks that each decision is byte for
# byte the one-round program's (timings aside), the malformed line an error object, the session going on.

if(CMAKE_SCRIPT_MODE_FILE)
  # -DPROG=sia_allocate -DREQ=cluster64.json -DOUT=dir
  file(MAKE_DIRECTORY "${OUT}")
  # The request on one line (JSON allows a space wherever the file has a line break).
  file(READ "${REQ}" text)
  string(REPLACE "\n" " " text "${text}")
  file(WRITE "${OUT}/r1.json" "${text}\n")
  foreach(k 1 2 3)
    math(EXPR next "${k} + 1")
    execute_process(COMMAND "${PROG}" "${OUT}/r${k}.json" OUTPUT_FILE "${OUT}/d${k}.json" RESULT_VARIABLE rc TIMEOUT 60)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "round ${k}: exit ${rc}")
    endif()
    execute_process(COMMAND "${PROG}" "${OUT}/r${k}.json" --next-request "${OUT}/d${k}.json" --elapsed 360
                    OUTPUT_FILE "${OUT}/r${next}.json" RESULT_VARIABLE rc TIMEOUT 60)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "--next-request after round ${k}: exit ${rc}")
    endif()
  endforeach()
  file(READ "${OUT}/r2.json" r2)
  if(NOT r2 MATCHES "\"warm_start\":")
    message(FATAL_ERROR "round 2's request carries no warm_start: the session's cache would not be tested")
  endif()
  file(READ "${OUT}/r1.json" r1)
  file(READ "${OUT}/r3.json" r3)
  foreach(r r1 r2 r3)
    string(STRIP "${${r}}" ${r})
  endforeach()
  # Lines: round 1, a blank line, round 2, a malformed request, round 3.
  file(WRITE "${OUT}/session.jsonl" "${r1}\n  \n${r2}\n{\"cluster\": \n${r3}\n")
  execute_process(COMMAND "${PROG}" --serve INPUT_FILE "${OUT}/session.jsonl" OUTPUT_VARIABLE out
                  ERROR_VARIABLE err RESULT_VARIABLE rc TIMEOUT 120)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "--serve: exit ${rc}\n${err}")
  endif()
  # One line per request: three decisions and, for the fourth line, an error (the blank line skipped).
  # (Compared as whole text: CMake's lists would split the JSON's brackets.)
  string(REGEX REPLACE "\"(solve_ms|total_ms)\":[-+0-9.eE]+" "T" out "${out}")
  string(REGEX MATCH "\\{\"error\":[^\n]*" error_line "${out}")
  if(NOT error_line MATCHES "^\\{\"error\":\\{\"exit_status\":2,\"message\":\"<stdin>#4:1:[0-9]+: malformed JSON")
    message(FATAL_ERROR "--serve: the malformed line gave\n${error_line}")
  endif()
  set(want "")
  foreach(k 1 2 0 3)
    if(k EQUAL 0)
      string(APPEND want "${error_line}\n")
      continue()
    endif()
    file(READ "${OUT}/d${k}.json" d)
    string(REGEX REPLACE "\"(solve_ms|total_ms)\":[-+0-9.eE]+" "T" d "${d}")
    string(APPEND want "${d}")
  endforeach()
  if(NOT out STREQUAL want)
    message(FATAL_ERROR "--serve's lines differ from the one-round decisions\n${out}\nexpected\n${want}")
  endif()
  if(NOT err MATCHES "sia_allocate: <stdin>#4:1:[0-9]+: malformed JSON")
    message(FATAL_ERROR "--serve: standard error does not name the malformed line\n${err}")
  endif()
  # A line over --max-request-bytes is an error of its own; the next line is read.
  file(WRITE "${OUT}/long.jsonl" "${r1}\n${r1}\n")
  execute_process(COMMAND "${PROG}" --serve --max-request-bytes 100 INPUT_FILE "${OUT}/long.jsonl"
                  OUTPUT_VARIABLE out RESULT_VARIABLE rc TIMEOUT 60)
  if(NOT rc EQUAL 0 OR NOT out MATCHES
     "^\\{\"error\":\\{\"exit_status\":2,\"message\":\"<stdin>#1: larger than 100 bytes[^\n]*\n\\{\"error\":\\{\"exit_status\":2,\"message\":\"<stdin>#2: larger than 100 bytes")
    message(FATAL_ERROR "--serve --max-request-bytes 100: exit ${rc}\n${out}")
  endif()
  message(STATUS "serve: three rounds in one session as in three")
  return()
endif()

if(TARGET sia_allocate)
  add_test(NAME program.sia_allocate.serve
           COMMAND ${CMAKE_COMMAND} -DPROG=$<TARGET_FILE:sia_allocate>
                   -DREQ=${PROJECT_SOURCE_DIR}/examples/requests/cluster64.json
                   -DOUT=${CMAKE_CURRENT_BINARY_DIR}/serve -P ${CMAKE_CURRENT_LIST_FILE})
  set_tests_properties(program.sia_allocate.serve PROPERTIES PASS_REGULAR_EXPRESSION "three rounds in one session")
  # --serve reads standard input only, and writes one line per request (no --pretty).
  sia_program_test(program.sia_allocate.serve.file sia_allocate RC 2
                   ARGS --serve ${PROJECT_SOURCE_DIR}/examples/requests/table1.json
                   STDERR "--serve reads its requests from standard input")
  sia_program_test(program.sia_allocate.serve.pretty sia_allocate RC 2 ARGS --serve --pretty STDERR "excludes")
  # An unknown --backend is found once, before any line is read: the one-round program's message,
  # once, exit 2, no error line per request (table1.json's lines would each give one).
  sia_program_test(program.sia_allocate.serve.backend sia_allocate RC 2 ARGS --serve --backend nope
                   STDIN ${PROJECT_SOURCE_DIR}/examples/requests/table1.json STDOUT_EMPTY
                   STDERR "^sia_allocate: --backend: unknown MILP backend 'nope' \\(available: [^)]*, default\\)[^a-z]*$")
endif()
