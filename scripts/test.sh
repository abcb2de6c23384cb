#!/usr/bin/env bash
# Quick start, part 2: build everything and run the tests.
#   SIA_SANITIZE=1   build in build-asan with AddressSanitizer + UndefinedBehaviorSanitizer
#   SIA_BUILD_DIR    override the build directory
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
jobs=$(nproc)
if [[ "${SIA_SANITIZE:-0}" == 1 ]]; then
  dir=${SIA_BUILD_DIR:-build-asan}
  flags="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined"
  cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Debug -DSIA_WITH_GLPK=ON -DSIA_BUILD_BENCH=OFF \
        -DCMAKE_CXX_FLAGS="-O1 $flags" -DCMAKE_EXE_LINKER_FLAGS="$flags" -DCMAKE_SHARED_LINKER_FLAGS="$flags" >/dev/null
  export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
  export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
else
  dir=${SIA_BUILD_DIR:-build}
  cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Release -DSIA_WITH_GLPK=ON -DSIA_BUILD_BENCH=ON -DSIA_BUILD_PYTHON=ON >/dev/null
fi
cmake --build "$dir" -j"$jobs"
ctest --test-dir "$dir" --output-on-failure -j"$jobs"
