# Smoke tests of the core examples: the paper's Table 1 on every backend, and a round over a
# scheduler's own job and GPU types. PASS_REGULAR_EXPRESSION ignores the exit status, so the
# programs print their success lines only when their self-checks pass.
if(TARGET sia_quickstart)
  add_test(NAME program.sia_quickstart.table1 COMMAND sia_quickstart)
  set_tests_properties(program.sia_quickstart.table1 PROPERTIES
    PASS_REGULAR_EXPRESSION "Table 1 reproduced on every backend \\(p = 1 and p = -0\\.5\\): J1 -> \\(1, 4, B\\), J2 -> \\(1, 2, A\\)"
    FAIL_REGULAR_EXPRESSION "MISMATCH" TIMEOUT 60)
endif()
if(TARGET custom_job_type)
  add_test(NAME program.custom_job_type COMMAND custom_job_type)
  set_tests_properties(program.custom_job_type PROPERTIES
    PASS_REGULAR_EXPRESSION "custom job types: round OK" FAIL_REGULAR_EXPRESSION "FAILED" TIMEOUT 60)
endif()
