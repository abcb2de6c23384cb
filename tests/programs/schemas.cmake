# The JSON Schemas of sia_allocate's request and decision agree with the program
# (tests/programs/check_schemas.py). Needs a Python with jsonschema (Debian: python3-jsonschema, installed by
# scripts/install-deps.sh); CMake's Python may be another one (pyenv), so /usr/bin/python3 is tried first.
if(NOT TARGET sia_allocate)
  return()
endif()
set(_schema_python "")
find_package(Python3 COMPONENTS Interpreter QUIET)
foreach(_py /usr/bin/python3 ${Python3_EXECUTABLE})
  if(NOT _schema_python AND EXISTS "${_py}")
    execute_process(COMMAND "${_py}" -c "import jsonschema" RESULT_VARIABLE _rc OUTPUT_QUIET ERROR_QUIET)
    if(_rc EQUAL 0)
      set(_schema_python "${_py}")
    endif()
  endif()
endforeach()
if(_schema_python)
  add_test(NAME io.schemas
           COMMAND "${_schema_python}" ${CMAKE_CURRENT_LIST_DIR}/check_schemas.py ${PROJECT_SOURCE_DIR}
                   $<TARGET_FILE:sia_allocate> ${CMAKE_CURRENT_BINARY_DIR}/schemas)
else()
  add_test(NAME io.schemas COMMAND ${CMAKE_COMMAND} -E echo
                                   "SKIP: no Python with jsonschema (Debian package python3-jsonschema) was found")
endif()
set_tests_properties(io.schemas PROPERTIES SKIP_RETURN_CODE 77 SKIP_REGULAR_EXPRESSION "SKIP: ")
