#!/usr/bin/env bash
# Quick start, part 1: install what is missing, build, and run the main demo
# (sia_simulate on its embedded default: built-in models, synthetic Philly-like workload).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DSIA_WITH_GLPK=ON -DSIA_BUILD_PYTHON=ON >/dev/null
cmake --build build -j"$(nproc)" --target sia_simulate sia_quickstart sia_allocate sia_python
if [[ -x build/examples/sia_simulate ]]; then
  ./build/examples/sia_simulate "$@"
else
  ./build/examples/sia_quickstart
fi
