#!/usr/bin/env bash
# Quick start, part 2: build everything and run the tests.
#   SIA_SANITIZE=1       build in build-asan with AddressSanitizer + UndefinedBehaviorSanitizer: clang when
#                        it is installed (it compiles this build about twice as fast as GCC), else GCC;
#                        the library at -O1, the test files at -O0 (SIA_TESTS_COMPILE_OPTIONS)
#   SIA_SANITIZE_FUZZ=1  with SIA_SANITIZE=1 and clang: also instrument for libFuzzer and build the fuzz
#                        targets in the same tree (.ci/run then fuzzes with them: no third build)
#   SIA_BUILD_DIR        override the build directory
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
jobs=$(nproc)
if [[ "${SIA_SANITIZE:-0}" == 1 ]]; then
  dir=${SIA_BUILD_DIR:-build-asan}
  sanitizers=address,undefined
  compiler=()
  fuzz=OFF
  if command -v clang++ >/dev/null 2>&1; then
    compiler=(-DCMAKE_CXX_COMPILER=clang++)
    if [[ "${SIA_SANITIZE_FUZZ:-0}" == 1 ]]; then
      sanitizers=address,undefined,fuzzer-no-link
      fuzz=ON
    fi
  elif [[ "${SIA_SANITIZE_FUZZ:-0}" == 1 ]]; then
    echo "SIA_SANITIZE_FUZZ=1 needs clang++ (libFuzzer); building without the fuzz targets" >&2
  fi
  flags="-fsanitize=$sanitizers -fno-omit-frame-pointer -fno-sanitize-recover=undefined"
  cmake -S . -B "$dir" "${compiler[@]}" -DCMAKE_BUILD_TYPE=Debug -DSIA_WITH_GLPK=ON -DSIA_BUILD_BENCH=OFF \
        -DSIA_BUILD_FUZZ=$fuzz -DSIA_TESTS_COMPILE_OPTIONS=-O0 \
        -DCMAKE_CXX_FLAGS="-O1 $flags" -DCMAKE_EXE_LINKER_FLAGS="$flags" -DCMAKE_SHARED_LINKER_FLAGS="$flags" >/dev/null
  export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
  export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
  # CBC's search in process here: fork() copies an ASan process's shadow page tables, which made this stage's
  # CBC tests 1.6x slower (a Shockwave test 64 s against 40). The Release stage tests every solve through the
  # child; here the tests of the child itself (milp.cbc.isolation.*, the fuzz regression that needs it) force
  # SIA_CBC_ISOLATION=fork.
  export SIA_CBC_ISOLATION=${SIA_CBC_ISOLATION:-off}
  # Fewer instances in the randomised and repeated tests (tests/unit/test_env.hpp): this stage looks for memory
  # errors and undefined behaviour on the code paths the Release stage runs at full count; the full counts under
  # ASan took about 980 s of this stage's tests. SIA_TEST_SHORT=0 runs them in full.
  export SIA_TEST_SHORT=${SIA_TEST_SHORT:-1}
else
  dir=${SIA_BUILD_DIR:-build}
  cmake -S . -B "$dir" -DCMAKE_BUILD_TYPE=Release -DSIA_WITH_GLPK=ON -DSIA_BUILD_BENCH=ON -DSIA_BUILD_PYTHON=ON >/dev/null
fi
cmake --build "$dir" -j"$jobs"
# A test that hangs fails after 20 minutes instead of taking the whole CI budget with it.
ctest --test-dir "$dir" --output-on-failure -j"$jobs" --timeout 1200
