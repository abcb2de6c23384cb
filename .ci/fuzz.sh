#!/usr/bin/env bash
# Builds the libFuzzer targets with clang (ASan + UBSan + libFuzzer) and runs each one for a bounded
# time on a seed corpus made from the examples and, when present, ../shared/data.
#   usage: bash .ci/fuzz.sh <source-dir> [seconds-per-target (default 60)] [build-dir]
# A build-dir configured with SIA_BUILD_FUZZ=ON (CI: the sanitizer test build of scripts/test.sh with
# SIA_SANITIZE_FUZZ=1, Debug, assertions on) is used as it is: no second build of the library.
# The targets run side by side, as many at a time as there are cores, each for the whole time.
# Exits non-zero if any target finds a crash, leak, timeout or sanitizer report.
set -euo pipefail
src=$(cd "${1:-.}" && pwd)
seconds=${2:-${SIA_FUZZ_SECONDS:-60}}
build=${3:-$src/build-fuzz}
shared="$src/../shared"
flags="-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
if grep -qs 'SIA_BUILD_FUZZ:BOOL=ON' "$build/CMakeCache.txt"; then
  echo "fuzz: the targets of $build"
else
  if [[ -f "$build/CMakeCache.txt" ]]; then  # another build (e.g. GCC's sanitizer build): not reconfigured
    echo "fuzz: $build has no fuzz targets; building them in $src/build-fuzz"
    build=$src/build-fuzz
  fi
  CXX=clang++ cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSIA_BUILD_FUZZ=ON \
    -DSIA_BUILD_TESTS=OFF -DSIA_BUILD_EXAMPLES=OFF -DSIA_BUILD_BENCH=OFF -DSIA_INSTALL=OFF -DSIA_WITH_GLPK=ON \
    -DCMAKE_CXX_FLAGS="$flags" >/dev/null
fi
cmake --build "$build" -j"$(nproc)" --target fuzz_request fuzz_workload fuzz_cluster fuzz_profiles fuzz_milp_ranges

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work"/{request,workload,cluster,profiles,milp_ranges}
cp "$src"/tests/data/allocate/*.json "$src"/examples/requests/*.json "$work/request/" 2>/dev/null || true
printf 'name,time,application,num_replicas,batch_size\ncifar10-0,0,cifar10,4,2048\nbert-1,30.5,bert,8,384\n' > "$work/workload/seed.csv"
printf 'name,time,application,num_replicas,batch_size,category\nyolov3-0,0,yolov3,4,64,rigid\n' > "$work/workload/seed2.csv"
# Inputs that once crashed a target stay in its corpus (tests/fuzz/regressions/<target>-*).
for target in request workload cluster profiles milp_ranges; do
  cp "$src"/tests/fuzz/regressions/"$target"-* "$work/$target/" 2>/dev/null || true
done
printf '{"name":"c","gpu_types":[{"name":"aws","nodes":2,"gpus_per_node":4}]}' > "$work/cluster/seed.json"
# milp_ranges: 8 bytes of seed, jobs, rounds, GPUs, weight range (10^k), then per-coefficient 10^(k-3) factors.
# Seed 64 with 13 jobs, 7 rounds, 64 GPUs and weights to 1e9 is one of the models CBC 2.10.8 crashed on.
printf '\x40\x00\x00\x00\x00\x00\x00\x00\x0c\x06\x07\x09' > "$work/milp_ranges/seed-64.bin"
printf '\x01\x00\x00\x00\x00\x00\x00\x00\x04\x02\x01\x0c\x0b\x00\x05\x0b' > "$work/milp_ranges/seed-1.bin"
if [[ -d "$shared/data/sia-artifact" ]]; then
  cp "$shared"/data/sia-artifact/workloads/philly/workload-1.csv "$work/workload/" || true
  i=0
  for f in "$shared"/data/sia-artifact/profiles/cifar10/{placements-rtx,scalability-rtx,validation-128}.csv \
           "$shared"/data/sia-artifact/seed-profiles/*.csv; do
    [[ -f "$f" ]] || continue
    case "$f" in
      *placements-*) sel='\x00' ;; *scalability-*) sel='\x01' ;; *validation-*) sel='\x02' ;; *) sel='\x03' ;;
    esac
    { printf "$sel"; head -c 4000 "$f"; } > "$work/profiles/seed-$i.csv"
    i=$((i + 1))
  done
else
  echo "fuzz: $shared/data/sia-artifact is missing; using built-in seeds only"
fi
[[ -n "$(ls -A "$work/profiles")" ]] || printf '\x00placement,local_bsz,step_time,sync_time\n1,32,0.1,0.0\n' > "$work/profiles/seed.csv"

export ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1
# CBC's search in a child process even here: libFuzzer's RSS monitor thread would otherwise keep this sanitizer
# build's searches in process (SIA_CBC_ISOLATION=auto), where CBC 2.10.8's own faults end the fuzzer. The
# monitor only sleeps and calls getrusage, so no allocator lock is held when the search forks.
export SIA_CBC_ISOLATION=fork
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# fuzz_one <target>: runs one target; its exit status in $work/fuzz_<target>.rc.
fuzz_one() {
  local target=$1 rc=0
  mkdir -p "$work/artifacts-$target"
  (cd "$work/artifacts-$target" && "$build/tests/fuzz/fuzz_$target" -max_total_time="$seconds" -timeout=10 \
     -rss_limit_mb=2048 -max_len=16384 -print_final_stats=1 "$work/$target" >"$work/fuzz_$target.log" 2>&1) || rc=$?
  echo "$rc" > "$work/fuzz_$target.rc"
}
targets=(request workload cluster profiles milp_ranges)
slots=$(nproc)
running=0
for target in "${targets[@]}"; do
  if (( running >= slots )); then wait -n || true; running=$((running - 1)); fi
  fuzz_one "$target" &
  running=$((running + 1))
done
wait
passed=0; failed=0
for target in "${targets[@]}"; do
  log="$work/fuzz_$target.log"
  if [[ "$(cat "$work/fuzz_$target.rc" 2>/dev/null)" == 0 ]]; then
    runs=$(grep -Eo 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -Eo '[0-9]+$' || echo "?")
    echo "PASS fuzz_$target: $runs executions in ${seconds}s, no findings"
    passed=$((passed + 1))
  else
    echo "FAIL fuzz_$target:"; tail -40 "$log"
    failed=$((failed + 1))
  fi
done
echo "fuzz: $passed passed, $failed failed"
[[ $failed -eq 0 ]]
