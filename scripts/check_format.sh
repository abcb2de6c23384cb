#!/usr/bin/env bash
# Format check (CI): every tracked C++ file must be as clang-format (.clang-format) leaves it.
#   bash scripts/check_format.sh         report the files that differ (exit 1 if any)
#   bash scripts/check_format.sh --fix   reformat them in place
# Generated data (src/sim/catalogue_data.cpp, written by `sia_simulate --dump-catalogue`) is exempt.
set -euo pipefail
cd "$(dirname "$0")/.."
fmt=$(command -v clang-format-14 || command -v clang-format || true)
if [[ -z "$fmt" ]]; then
  echo "check_format: clang-format not found (apt-get install clang-format)" >&2
  exit 1
fi
mapfile -t files < <(git ls-files '*.cpp' '*.hpp' | grep -v '^src/sim/catalogue_data\.cpp$')
if [[ "${1:-}" == "--fix" ]]; then
  "$fmt" -i "${files[@]}"
  exit 0
fi
bad=()
for f in "${files[@]}"; do
  if ! "$fmt" --dry-run --Werror "$f" >/dev/null 2>&1; then bad+=("$f"); fi
done
if ((${#bad[@]})); then
  printf 'check_format: not formatted: %s\n' "${bad[@]}"
  echo "check_format: run 'bash scripts/check_format.sh --fix'" >&2
  exit 1
fi
echo "check_format: ${#files[@]} files formatted"
