#!/usr/bin/env bash
# ThreadSanitizer run of everything that uses threads: the simulator's runs (simulations side by side) and the tests
# that drive the threaded parts of the simulator, the solvers and the round. A single simulation hands work to other
# threads only in rounds large enough to pay for it (src/sim/simulator.cpp, sia_policy.cpp), which these runs rarely
# reach: sim.simulate.same_bits_with_every_hand_off takes the parallel steps and the policy's goodput filler in every
# round.
#
# Not in CI (about 25 minutes on 2 cores): ThreadSanitizer only sees the synchronisation of code it instruments, and
# Debian's libtbb is not instrumented, so every hand-over through a TBB task would be reported as a race (hundreds of
# false reports per run). This script therefore builds oneTBB itself, from Debian's own source package (the same
# version as libtbb-dev), with oneTBB's TBB_SANITIZE=thread, and runs sia against it. It needs root (apt-get) and
# the Debian source registry (deb-src), nothing else.
#   SIA_TSAN_DIR   work directory (default build-tsan): oneTBB's source and build, sia's build
# Exit status: 0 when no run reports anything, 1 otherwise (the reports are in $SIA_TSAN_DIR/logs).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
dir=$(realpath -m "${SIA_TSAN_DIR:-build-tsan}")
mkdir -p "$dir/logs" "$dir/apt/lists/partial"
jobs=$(nproc)
bash scripts/install-deps.sh

# 1. oneTBB with ThreadSanitizer, from the source package of the installed libtbb-dev (private apt lists: the
#    machine's own sources stay as they are).
version=$(dpkg-query -W -f='${Version}' libtbb-dev)
tbb_lib="$dir/tbb/lib"
if [[ ! -e "$tbb_lib/libtbb.so.12" ]]; then
  printf 'deb-src http://deb.debian.org/debian bookworm main\ndeb-src http://deb.debian.org/debian-security bookworm-security main\n' \
    > "$dir/apt/sources.list"
  apt_opts=(-o "Dir::Etc::SourceList=$dir/apt/sources.list" -o Dir::Etc::SourceParts=/dev/null
            -o "Dir::State::Lists=$dir/apt/lists")
  apt-get "${apt_opts[@]}" update >/dev/null
  (cd "$dir/apt" && apt-get "${apt_opts[@]}" source --download-only "onetbb=$version" >/dev/null)
  rm -rf "$dir/tbb-src" && mkdir -p "$dir/tbb-src"
  tar -xf "$dir"/apt/onetbb_*.orig.tar.* -C "$dir/tbb-src" --strip-components=1
  cmake -S "$dir/tbb-src" -B "$dir/tbb-build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTBB_TEST=OFF -DTBB_EXAMPLES=OFF \
        -DTBB_STRICT=OFF -DTBBMALLOC_BUILD=OFF -DTBB_SANITIZE=thread >/dev/null
  cmake --build "$dir/tbb-build" -j"$jobs" --target tbb >/dev/null
  mkdir -p "$tbb_lib"
  cp -P "$dir"/tbb-build/*/libtbb.so* "$tbb_lib/"
fi

# 2. sia with ThreadSanitizer (the headers are Debian's: the same version as the instrumented library).
flags="-fsanitize=thread -O1 -g"
cmake -S "$root" -B "$dir/sia" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSIA_WITH_GLPK=ON -DSIA_BUILD_BENCH=OFF \
      -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=thread" \
      -DCMAKE_SHARED_LINKER_FLAGS="-fsanitize=thread" >/dev/null
cmake --build "$dir/sia" -j"$jobs" --target sia_simulate sia_tests

# 3. The runs. Each must exit 0 and report nothing.
export LD_LIBRARY_PATH="$tbb_lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export TSAN_OPTIONS="halt_on_error=0 exitcode=66 ${TSAN_OPTIONS:-}"
sim="$dir/sia/examples/sia_simulate"
philly="$root/../shared/data/sia-artifact/workloads/philly/workload-1.csv"
runs=(
  "--policy sia --rate 20 --hours 48"
  "--policy sia --rate 20 --hours 24 --threads 4"
  "--policy sia --scale 4 --seed 7 --hours 12 --threads 3"
  "--policy sia --rate 20 --hours 12 --profiling oracle --threads 3"
  "--policy sia,gavel,themis,pollux --pollux-search greedy --rate 10 --hours 12 --threads 4"
)
[[ -f "$philly" ]] && runs+=("--workload $philly --policy sia,gavel,themis --threads 3") ||
  echo "skipped the Philly run: $philly is missing"
failed=0
n=0
check() {  # name, command...
  local name=$1 log="$dir/logs/$1.log"
  shift
  if "$@" >/dev/null 2>"$log" && ! grep -q 'ThreadSanitizer' "$log"; then
    echo "ok    $name"
  else
    echo "FAIL  $name ($(grep -c 'WARNING: ThreadSanitizer' "$log") reports, $log)"
    failed=1
  fi
}
for r in "${runs[@]}"; do
  n=$((n + 1))
  # shellcheck disable=SC2086  # the options are words
  check "sim-$n" "$sim" $r --no-progress
done
tests='*thread*,*two_threads*,*hand_off*,hardening.determinism.threads,round.limits.cancelled_from_another_thread,sim.runner.*,sim.scale.memoised_fitter_shared_by_threads'
check tests "$dir/sia/tests/sia_tests" -tc="$tests"
exit $failed
