#!/usr/bin/env bash
# Builds a consumer project from the README's own snippets, as a user would type them:
#   - the C++ block of "## The round in C++" becomes the body of main() (its #include lines stay at the
#     top), followed by checks of the paper's Table 1 answer it states (J1 -> 4 GPUs of B, J2 -> 2 of A),
#     and it prints "sia <sia::version()>";
#   - the CMake block after "**CMake `find_package`**" becomes the tail of a CMakeLists.txt whose program
#     is the README's `my_scheduler`;
#   - the make block after "**pkg-config (plain Makefiles)**" becomes a Makefile.
# Usage: make_consumer.sh <README.md> <out-dir>
set -euo pipefail
readme=$1
out=$2
mkdir -p "$out"

# block <marker (fixed string)> <language>: the first ```<language> block after the first line containing
# the marker; fails when there is none (the README changed its headings: update this test).
block() {
  awk -v marker="$1" -v fence="\`\`\`$2" '
    !seen && index($0, marker) { seen = 1; next }
    seen && !inside && $0 == fence { inside = 1; next }
    inside && $0 == "```" { found = 1; exit }
    inside { print }
    END { if (!found) exit 1 }' "$readme" || { echo "no \`\`\`$2 block after '$1' in $readme" >&2; return 1; }
}

cpp=$(block '## The round in C++' cpp)
{
  grep -E '^#include' <<<"$cpp"
  echo '#include <sia/version.hpp>'
  echo '#include <iostream>'
  echo 'int main() {'
  grep -v -E '^#include' <<<"$cpp"
  cat <<'CPP'
  // What the README's comment states.
  const bool ok = r.decisions.size() == 2 && r.decisions[0].config && r.decisions[0].gpus == 4 &&
                  cluster.types[static_cast<std::size_t>(r.decisions[0].config->type)].name() == "B" &&
                  r.decisions[1].config && r.decisions[1].gpus == 2 &&
                  cluster.types[static_cast<std::size_t>(r.decisions[1].config->type)].name() == "A";
  std::cout << "sia " << sia::version() << (ok ? "" : ": NOT the README's answer") << '\n';
  return ok ? 0 : 1;
}
CPP
} >"$out/my_scheduler.cpp"

{
  echo 'cmake_minimum_required(VERSION 3.23)'
  echo 'project(my_scheduler LANGUAGES CXX)'
  echo 'add_executable(my_scheduler my_scheduler.cpp)'
  block '**CMake `find_package`**' cmake
} >"$out/CMakeLists.txt"

block '**pkg-config (plain Makefiles)**' make >"$out/Makefile"
