# Compile-fail tests: each tests/static/compile_fail/<name>.cpp must compile with -DSIA_EXPECT_OK (so the
# test cannot pass on an unrelated error) and fail without it, with an error matching its EXPECT regex.
#   cmake -DCXX=<compiler> -DSRC=<file> -DFLAGS=<a;b;...> -DEXPECT=<regex> -P compile_fail.cmake
execute_process(COMMAND ${CXX} ${FLAGS} -DSIA_EXPECT_OK -fsyntax-only ${SRC} RESULT_VARIABLE ok_rc
                ERROR_VARIABLE ok_err)
if(NOT ok_rc EQUAL 0)
  message(FATAL_ERROR "the control build (-DSIA_EXPECT_OK) of ${SRC} fails:\n${ok_err}")
endif()
execute_process(COMMAND ${CXX} ${FLAGS} -fsyntax-only ${SRC} RESULT_VARIABLE rc ERROR_VARIABLE err)
if(rc EQUAL 0)
  message(FATAL_ERROR "${SRC} compiles, but must not")
endif()
if(NOT err MATCHES "${EXPECT}")
  message(FATAL_ERROR "${SRC} fails to compile, but not with '${EXPECT}':\n${err}")
endif()
message(STATUS "${SRC}: rejected as expected")
