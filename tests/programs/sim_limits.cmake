# Issue 19: hostile parameters of sia_simulate. Every option and workload/profile value has a documented range
# (include/sia/sim/limits.hpp); outside it the program exits 2 before any work with `option or file:line:
# message` — it used to hang (--interval 1e-9, --rate 1e9, --hours 1e9), run nothing with exit 0 (--interval nan,
# --interval 1e308), drop a job silently (t = 1e300) or wrap a seed (-1). The TIMEOUT guards against a hang; the
# tests assert the status and the message, never a duration.
# sia_program_test() comes from cli.cmake.
set(_lim ${CMAKE_CURRENT_BINARY_DIR}/sim_limits)
# A valid model `ok` (the same profile on the three GPU types of the default cluster) and a workload whose second
# job arrives at t = 1e300 s, past the 90-day horizon: refused at its file:line, never dropped silently.
foreach(_type aws dgx-ext rtx)
  file(WRITE ${_lim}/good/ok/placements-${_type}.csv
       "placement,local_bsz,step_time,sync_time\n1,32,0.04,0.0005\n2,32,0.05,0.01\n11,32,0.06,0.01\n")
endforeach()
file(WRITE ${_lim}/good/ok/validation-32.csv "progress,iteration,metric,grad_sqr,grad_var\n100,10,0.5,1.0,1.0\n")
file(WRITE ${_lim}/late.csv "name,time,application,num_replicas,batch_size\nok-0,0,ok,1,32\nok-1,1e300,ok,1,32\n")
file(WRITE ${_lim}/on_time.csv "name,time,application,num_replicas,batch_size\nok-0,0,ok,1,32\nok-1,600,ok,1,32\n")
# A data-parallel profile whose second row has sync_time above step_time: the fit and the simulator both refuse it
# at the same file:line (they read profiles through one loader).
file(WRITE ${_lim}/profiles/m/placements-aws.csv
     "placement,local_bsz,step_time,sync_time\n1,32,0.04,0.0005\n2,32,0.05,0.07\n11,32,0.06,0.01\n")
file(WRITE ${_lim}/m.csv "name,time,application,num_replicas,batch_size\nm-0,0,m,1,32\n")

set(_syn --policy sia --no-progress)
sia_program_test(sim_limits.interval_tiny sia_simulate RC 2 ARGS ${_syn} --interval 1e-9 STDOUT_EMPTY
                 STDERR "^sia_simulate: --interval: 1e-09 s is outside the range \\[0.001, 86400\\]")
sia_program_test(sim_limits.interval_nan sia_simulate RC 2 ARGS ${_syn} --interval nan STDOUT_EMPTY
                 STDERR "^sia_simulate: --interval: nan s is outside the range")
sia_program_test(sim_limits.interval_huge sia_simulate RC 2 ARGS ${_syn} --interval 1e308 STDOUT_EMPTY
                 STDERR "^sia_simulate: --interval: 1e\\+308 s is outside the range")
sia_program_test(sim_limits.interval_too_many_rounds sia_simulate RC 2 ARGS ${_syn} --interval 0.001 STDOUT_EMPTY
                 STDERR "^sia_simulate: --interval: .* rounds, more than 2e\\+06 .*use rounds of at least")
sia_program_test(sim_limits.rate_huge sia_simulate RC 2 ARGS ${_syn} --rate 1e9 STDOUT_EMPTY
                 STDERR "^sia_simulate: --rate: 1e.09 jobs/h is outside the range .*TB of memory")
sia_program_test(sim_limits.rate_hours_too_many_jobs sia_simulate RC 2 ARGS ${_syn} --rate 1e6 --hours 3 STDOUT_EMPTY
                 STDERR "^sia_simulate: --rate/--hours: .*about 3e\\+06 jobs, needing about .* GB of memory")
sia_program_test(sim_limits.hours_huge sia_simulate RC 2 ARGS ${_syn} --hours 1e9 STDOUT_EMPTY
                 STDERR "^sia_simulate: --hours: 1e.09 h is outside the range .0, 2160.")
sia_program_test(sim_limits.jobs_beyond_horizon sia_simulate RC 2 ARGS ${_syn} --jobs 100 --rate 0.01 STDOUT_EMPTY
                 STDERR "^sia_simulate: --jobs: 100 jobs at 0.01 jobs/h arrive over about 10000 h, beyond")
sia_program_test(sim_limits.jobs_and_hours sia_simulate RC 2 ARGS ${_syn} --jobs 10 --hours 2 STDOUT_EMPTY
                 STDERR "^sia_simulate: --jobs and --hours")
sia_program_test(sim_limits.seed_negative sia_simulate RC 2 ARGS ${_syn} --seed -1 STDOUT_EMPTY
                 STDERR "^sia_simulate: --seed: -1 is outside the range \\[0, 9223372036854775807\\]")
sia_program_test(sim_limits.pollux_seed_negative sia_simulate RC 2 ARGS ${_syn} --pollux-seed -1 STDOUT_EMPTY
                 STDERR "^sia_simulate: --pollux-seed: -1 is outside")
sia_program_test(sim_limits.jobs_exact sia_simulate RC 0 ARGS ${_syn} --jobs 7 --rate 20 --json
                 STDOUT "\"jobs\": 7,")
sia_program_test(sim_limits.sync_above_step_simulate sia_simulate RC 2 ARGS --policy sia --workload ${_lim}/m.csv
                 --profiles ${_lim}/profiles STDOUT_EMPTY
                 STDERR "^sia_simulate: .*placements-aws.csv:3: sync_time: 0.070000 is not below step_time 0.050000")
sia_program_test(sim_limits.sync_above_step_fit sia_fit_profiles RC 2 ARGS ${_lim}/profiles STDOUT_EMPTY
                 STDERR "^sia_fit_profiles: .*placements-aws.csv:3: sync_time: 0.070000 is not below step_time 0.050000")
sia_program_test(sim_limits.job_after_horizon sia_simulate RC 2 ARGS ${_syn} --workload ${_lim}/late.csv
                 --profiles ${_lim}/good STDOUT_EMPTY
                 STDERR "^sia_simulate: .*late.csv:3: job 'ok-1': submitted at 1e\\+300 s, outside the simulation's horizon \\[0, 7.776e\\+06\\] s")
sia_program_test(sim_limits.job_within_horizon sia_simulate RC 0 ARGS ${_syn} --workload ${_lim}/on_time.csv
                 --profiles ${_lim}/good --json STDOUT "\"completed\": 2,")
# The progress line (issue 19 part 3): on standard error with --progress even when it is not a terminal (here a
# pipe), with --json too, ending with the run's summary; nothing there by default off a terminal or with --json.
set(_five --policy sia --jobs 5 --rate 20)
sia_program_test(sim_limits.progress_forced sia_simulate RC 0 ARGS ${_five} --progress STDOUT "avg JCT h"
                 STDERR "^progress: .*5/5 jobs finished \\| [0-9]+ rounds/s \\| done in [0-9]+ s")
sia_program_test(sim_limits.progress_forced_json sia_simulate RC 0 ARGS ${_five} --json --progress
                 STDOUT "\"aggregate\"" STDERR "^progress: .*5/5 jobs finished .*done in")
sia_program_test(sim_limits.progress_json_silent sia_simulate RC 0 ARGS ${_five} --json STDOUT "\"aggregate\""
                 STDERR "^$")
sia_program_test(sim_limits.progress_pipe_silent sia_simulate RC 0 ARGS ${_five} STDOUT "avg JCT h" STDERR "^$")
foreach(_t interval_tiny interval_nan interval_huge interval_too_many_rounds rate_huge rate_hours_too_many_jobs
        hours_huge jobs_beyond_horizon jobs_and_hours seed_negative pollux_seed_negative jobs_exact
        sync_above_step_simulate sync_above_step_fit job_after_horizon job_within_horizon progress_forced
        progress_forced_json progress_json_silent progress_pipe_silent)
  if(TEST sim_limits.${_t})
    set_tests_properties(sim_limits.${_t} PROPERTIES TIMEOUT 60)
  endif()
endforeach()
