# Programs on the round state (docs/round-state.md). `sia_allocate --next-request`: two rounds of the
# paper's Table 1 chained through JSON — this file has two modes: include()d from tests/CMakeLists.txt
# it adds the tests; run with `cmake -P` it runs that chain and checks it. `scheduler_loop`: 200
# rounds with arrivals, completions and node failures; the program checks capacity, failed nodes, the
# 2x rule, ages and restarts every round and prints its success line only when all hold.

if(CMAKE_SCRIPT_MODE_FILE)
  # -DPROG=sia_allocate -DREQ=table1.json -DOUT=dir
  file(MAKE_DIRECTORY "${OUT}")
  execute_process(COMMAND "${PROG}" "${REQ}" OUTPUT_FILE "${OUT}/d1.json" RESULT_VARIABLE rc TIMEOUT 60)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "round 1: exit ${rc}")
  endif()
  execute_process(COMMAND "${PROG}" "${REQ}" --next-request "${OUT}/d1.json" --elapsed 60
                  OUTPUT_FILE "${OUT}/r2.json" RESULT_VARIABLE rc TIMEOUT 60)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "--next-request: exit ${rc}")
  endif()
  file(READ "${OUT}/r2.json" r2)
  # J1 holds (1, 4, B) and J2 (1, 2, A) after round 1: 60 s older, no restart, the 2x rule's input set.
  foreach(i 0 1)
    string(JSON id GET "${r2}" jobs ${i} id)
    string(JSON age GET "${r2}" jobs ${i} age_s)
    string(JSON restarts GET "${r2}" jobs ${i} restarts)
    string(JSON type GET "${r2}" jobs ${i} current gpu_type)
    string(JSON gpus GET "${r2}" jobs ${i} current gpus)
    string(JSON ever GET "${r2}" jobs ${i} max_gpus_ever)
    set(got "${id} ${type} ${gpus} ${ever} ${age} ${restarts}")
    if(NOT (got STREQUAL "J1 B 4 4 60.0 0" OR got STREQUAL "J2 A 2 2 60.0 0"))
      message(FATAL_ERROR "next request job ${i}: ${got}\n${r2}")
    endif()
  endforeach()
  # Round 2 keeps both jobs where they are: nothing changes.
  execute_process(COMMAND "${PROG}" "${OUT}/r2.json" OUTPUT_VARIABLE d2 RESULT_VARIABLE rc TIMEOUT 60)
  if(NOT rc EQUAL 0 OR d2 MATCHES "\"changed\":true")
    message(FATAL_ERROR "round 2: exit ${rc}\n${d2}")
  endif()
  # A decision that does not belong to the request is rejected naming the field.
  file(WRITE "${OUT}/bad.json" "{\"allocations\": [], \"unallocated\": [\"J1\", \"J9\"]}")
  execute_process(COMMAND "${PROG}" "${REQ}" --next-request "${OUT}/bad.json" --elapsed 60
                  OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc TIMEOUT 60)
  if(NOT rc EQUAL 2 OR NOT err MATCHES "bad.json(:[0-9]+:[0-9]+)?: unallocated: job \"J9\" is not in the request")
    message(FATAL_ERROR "bad decision: exit ${rc}\n${err}")
  endif()
  message(STATUS "next request: round state chained")
  return()
endif()

if(TARGET sia_allocate)
  add_test(NAME program.sia_allocate.next_request
           COMMAND ${CMAKE_COMMAND} -DPROG=$<TARGET_FILE:sia_allocate>
                   -DREQ=${PROJECT_SOURCE_DIR}/examples/requests/table1.json
                   -DOUT=${CMAKE_CURRENT_BINARY_DIR}/next_request -P ${CMAKE_CURRENT_LIST_FILE})
  set_tests_properties(program.sia_allocate.next_request PROPERTIES PASS_REGULAR_EXPRESSION "round state chained")
endif()
if(TARGET scheduler_loop)
  add_test(NAME program.scheduler_loop COMMAND scheduler_loop)
  set_tests_properties(program.scheduler_loop PROPERTIES
    PASS_REGULAR_EXPRESSION "scheduler loop: 200 rounds, .* invariants hold" FAIL_REGULAR_EXPRESSION "FAILED" TIMEOUT 120)
endif()
