#!/usr/bin/env bash
# Packaging checks: install sia (static and shared) into temporary prefixes and build + run the
# consumers of tests/package/ the way users would (find_package, add_subdirectory, pkg-config,
# the Conan test_package against the plain CMake install), plus the offline recipe checks
# (conanfile.py, vcpkg manifests).
#
# Usage: bash .ci/package-tests.sh <source-dir> <work-dir>
# Environment:
#   SIA_PACKAGE_JOBS=2            parallel build jobs
#   SIA_PACKAGE_STATIC_BUILD=dir  reuse an already built static sia build tree (configured with CBC and
#                                 GLPK ON, BUILD_SHARED_LIBS OFF) instead of building one: saves a full
#                                 library build in CI, where the test build can be installed as is
# Prints one PASS/FAIL line per check and "N passed, N failed"; exits non-zero on any failure.
set -uo pipefail

if [[ $# -ne 2 ]]; then
  echo "usage: $0 <source-dir> <work-dir>" >&2
  exit 2
fi
src=$(cd "$1" && pwd) || exit 2
mkdir -p "$2" || exit 2
work=$(cd "$2" && pwd) || exit 2
jobs=${SIA_PACKAGE_JOBS:-2}
pkg="$src/tests/package"
logs="$work/logs"
mkdir -p "$logs"
generator=()
if command -v ninja >/dev/null 2>&1; then generator=(-G Ninja); fi
# Consumers are built the way a user would: Release, sia's own tests and programs off.
common=(-DCMAKE_BUILD_TYPE=Release -DSIA_BUILD_TESTS=OFF -DSIA_BUILD_EXAMPLES=OFF -DSIA_BUILD_BENCH=OFF)

passed=0
failed=0
declare -A ok=()
# check <name> <command...>: runs the command with its output in logs/<name>.log.
check() {
  local name=$1
  shift
  local t0=$SECONDS
  if "$@" >"$logs/$name.log" 2>&1; then
    echo "PASS $name ($((SECONDS - t0)) s)"
    passed=$((passed + 1))
    ok[$name]=1
  else
    echo "FAIL $name ($((SECONDS - t0)) s; log: $logs/$name.log)"
    tail -n 25 "$logs/$name.log" | sed 's/^/    | /'
    failed=$((failed + 1))
  fi
}
# requires <check> <name>: records <name> as failed when a check it depends on failed.
requires() {
  if [[ -z ${ok[$1]:-} ]]; then
    echo "FAIL $2 (not run: $1 failed)"
    failed=$((failed + 1))
    return 1
  fi
}

# --------------------------------------------------------------------------------------------
# Offline recipe checks (Conan and vcpkg cannot be installed on the project's machines)
# --------------------------------------------------------------------------------------------
# Byte-compiles in memory (python3 -m py_compile would write __pycache__ into the source tree).
check conan.py_compile python3 -B -c "import sys; [compile(open(f).read(), f, 'exec') for f in sys.argv[1:]]" \
  "$src/conanfile.py" "$src/test_package/conanfile.py"
check conan.recipe python3 -B "$pkg/check_conanfile.py" "$src" "$work/conan-exports"
check vcpkg.manifests python3 -B "$pkg/check_vcpkg.py" "$src"

# --------------------------------------------------------------------------------------------
# Install a static sia (CBC + GLPK) and a shared one (CBC only)
# --------------------------------------------------------------------------------------------
build_and_install() {  # <build-dir> <prefix> <cmake args...>
  local build=$1 prefix=$2
  shift 2
  rm -rf "$prefix"
  cmake -S "$src" -B "$build" "${generator[@]}" "${common[@]}" -DCMAKE_INSTALL_PREFIX=/nonexistent "$@" &&
    cmake --build "$build" -j"$jobs" &&
    cmake --install "$build" --prefix "$prefix"   # another prefix than configured: relocatable
}
static_prefix="$work/prefix-static"
shared_prefix="$work/prefix-shared"
if [[ -n ${SIA_PACKAGE_STATIC_BUILD:-} ]]; then
  check install.static bash -c "rm -rf '$static_prefix' && grep -q 'SIA_WITH_GLPK:STRING=ON' '$SIA_PACKAGE_STATIC_BUILD/CMakeCache.txt' && ! grep -q 'BUILD_SHARED_LIBS:BOOL=ON' '$SIA_PACKAGE_STATIC_BUILD/CMakeCache.txt' && cmake --build '$SIA_PACKAGE_STATIC_BUILD' -j$jobs && cmake --install '$SIA_PACKAGE_STATIC_BUILD' --prefix '$static_prefix'"
else
  check install.static build_and_install "$work/build-static" "$static_prefix" \
    -DBUILD_SHARED_LIBS=OFF -DSIA_WITH_CBC=ON -DSIA_WITH_GLPK=ON
fi
# The shared install is also the library alone (SIA_BUILD_SIM=OFF) with its programs (examples on).
check install.shared build_and_install "$work/build-shared" "$shared_prefix" \
  -DBUILD_SHARED_LIBS=ON -DSIA_WITH_CBC=ON -DSIA_WITH_GLPK=OFF -DSIA_BUILD_SIM=OFF -DSIA_BUILD_EXAMPLES=ON

# The installed tree: header-only build dependencies must not leak, paths must be relative.
installed_tree() {  # <prefix>
  local prefix=$1 cmakedir="$1/lib/cmake/sia"
  test -f "$cmakedir/siaConfig.cmake" && test -f "$cmakedir/FindSiaCbc.cmake" && test -f "$cmakedir/FindSiaGlpk.cmake" &&
    test -f "$prefix/include/sia/build_config.hpp" && test -f "$prefix/include/sia/round.hpp" &&
    test -f "$prefix/lib/pkgconfig/sia.pc" || { echo "missing installed files"; return 1; }
  if grep -n -E 'Boost|nlohmann' "$cmakedir"/siaTargets*.cmake; then
    echo "header-only build dependencies leak into the exported targets"
    return 1
  fi
  if grep -n -F -e "$src" -e "$work/build" "$cmakedir"/*.cmake "$prefix"/lib/pkgconfig/*.pc; then
    echo "absolute source/build paths in the installed package files"
    return 1
  fi
  # Third-party headers stay out of the public headers (only Eigen may appear there).
  if grep -rn -E '#[[:space:]]*include[[:space:]]*[<"](nlohmann/|boost/|nlopt|Cbc|Osi|Clp|Coin|coin/|coin-or/|glpk)' "$prefix/include"; then
    echo "public headers include private dependencies"
    return 1
  fi
  # The pkg-config files are well-formed and resolve (incl. Requires.private for --static).
  local pc
  for pc in "$prefix"/lib/pkgconfig/*.pc; do
    PKG_CONFIG_PATH="$prefix/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}" pkg-config --validate "$pc" &&
      PKG_CONFIG_PATH="$prefix/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}" pkg-config --static --cflags --libs "$(basename "$pc" .pc)" ||
      { echo "pkg-config rejects $pc"; return 1; }
  done
  # Backend include directories stay private: not in `pkg-config --cflags sia`, not in the exported targets.
  local cflags
  cflags=$(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --cflags sia) || return 1
  if grep -E -i 'coin|glpk' <<<"$cflags"; then
    echo "pkg-config --cflags sia leaks a backend's include directory: $cflags"
    return 1
  fi
  if grep -n -E 'INTERFACE_INCLUDE_DIRECTORIES.*(coin|glpk)' "$cmakedir"/siaTargets*.cmake; then
    echo "a backend's include directory leaks into the exported targets"
    return 1
  fi
  # The licence, and every document an installed header cites, installed under share/doc/sia.
  test -f "$prefix/share/doc/sia/LICENSE" || { echo "LICENSE not installed"; return 1; }
  local doc missing=0
  for doc in $(grep -rhoE '[A-Za-z0-9_./-]+\.md\b' "$prefix/include" | sort -u); do
    if [[ ! -f "$prefix/share/doc/sia/$doc" ]]; then
      echo "an installed header cites $doc, which is not installed (share/doc/sia/$doc):"
      grep -rn -F "$doc" "$prefix/include" | head -3
      missing=1
    fi
  done
  [[ $missing -eq 0 ]] || return 1
  # The installed programs report the package's version (when they were built).
  local version prog
  version=$(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --modversion sia) || return 1
  for prog in sia_allocate sia_simulate sia_fit_profiles; do
    if [[ -x "$prefix/bin/$prog" ]]; then
      [[ "$("$prefix/bin/$prog" --version)" == "$prog $version" ]] ||
        { echo "$prog --version: '$("$prefix/bin/$prog" --version)', package version $version"; return 1; }
    fi
  done
  test -x "$prefix/bin/sia_allocate" || { echo "sia_allocate not installed"; return 1; }
}
if requires install.static tree.static; then check tree.static installed_tree "$static_prefix"; fi
if requires install.shared tree.shared; then check tree.shared installed_tree "$shared_prefix"; fi
# SIA_BUILD_SIM=OFF: the library alone, no simulator in the install.
if requires install.shared tree.library_alone; then
  check tree.library_alone bash -c "! compgen -G '$shared_prefix/lib/libsia_sim*' && test ! -e '$shared_prefix/include/sia/sim' &&
    test ! -e '$shared_prefix/lib/pkgconfig/sia-sim.pc' && test ! -e '$shared_prefix/bin/sia_simulate' && test -x '$shared_prefix/bin/sia_allocate'"
fi

# --------------------------------------------------------------------------------------------
# Consumers
# --------------------------------------------------------------------------------------------
# cmake_consumer <project-dir> <build-dir> <run args> -- <cmake args...>: configure, build, run.
cmake_consumer() {
  local project=$1 build=$2 run_args=$3
  shift 4
  rm -rf "$build"
  cmake -S "$project" -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release "$@" &&
    cmake --build "$build" -j"$jobs" &&
    # shellcheck disable=SC2086
    "$build/table1" $run_args &&
    if [[ -x "$build/sim_link" ]]; then "$build/sim_link"; fi
}
# The simulator is a component whenever its sources are part of the tree.
sim_component=""
if compgen -G "$src/src/sim/*.cpp" >/dev/null; then sim_component=";sim"; fi
if requires install.static find_package.static; then
  check find_package.static cmake_consumer "$pkg/find_package" "$work/c-fp-static" "cbc glpk" -- \
    -DCMAKE_PREFIX_PATH="$static_prefix" -DSIA_COMPONENTS="core;sia;cbc;glpk$sim_component" -DSIA_EXPECT_LINKAGE=STATIC \
    -DSIA_EXPECT_PREFIX="$static_prefix"
fi
if requires install.shared find_package.shared; then
  check find_package.shared cmake_consumer "$pkg/find_package" "$work/c-fp-shared" "cbc" -- \
    -DCMAKE_PREFIX_PATH="$shared_prefix" -DSIA_COMPONENTS="core;sia;cbc" -DSIA_EXPECT_LINKAGE=SHARED \
    -DSIA_EXPECT_PREFIX="$shared_prefix"
fi

# Header-only use: COMPONENTS core must work without libsia's private dependencies.
if requires install.static find_package.core_only; then
  check find_package.core_only bash -c "rm -rf '$work/c-core' &&
    cmake -S '$pkg/core_only' -B '$work/c-core' ${generator[*]} -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH='$static_prefix' -DCMAKE_DISABLE_FIND_PACKAGE_NLopt=ON &&
    cmake --build '$work/c-core' && '$work/c-core/core_only'"
fi

# A backend that was not built: configure-time error naming it. Same for a misspelt component.
expect_configure_error() {  # <prefix> <components> <word the message must contain>
  local out
  rm -rf "$work/c-missing"
  if out=$(cmake -S "$pkg/find_package" -B "$work/c-missing" -DCMAKE_PREFIX_PATH="$1" -DSIA_COMPONENTS="$2" 2>&1); then
    echo "$out"
    echo "configure succeeded although components '$2' were requested"
    return 1
  fi
  echo "$out"
  # CMake wraps the message: join the lines before looking for the component's name.
  tr '\n' ' ' <<<"$out" | tr -s ' ' | grep -q -E "component\(s\): ([a-z]+, )*$3\b" ||
    { echo "the error does not name '$3'"; return 1; }
}
if requires install.shared find_package.missing_glpk; then
  check find_package.missing_glpk expect_configure_error "$shared_prefix" "core;cbc;glpk" glpk
fi
if requires install.shared find_package.missing_sim; then
  check find_package.missing_sim expect_configure_error "$shared_prefix" "core;sim" sim
fi
if requires install.static find_package.unknown_component; then
  check find_package.unknown_component expect_configure_error "$static_prefix" "core;cpbc" cpbc
fi

# The Conan test_package, built with plain CMake against the install: Conan's CMakeDeps generates
# the same package and target names (sia, sia::sia), so this checks its sources and CMakeLists.
if requires install.static test_package.cmake; then
  check test_package.cmake bash -c "rm -rf '$work/c-test-package' &&
    cmake -S '$src/test_package' -B '$work/c-test-package' ${generator[*]} -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH='$static_prefix' &&
    cmake --build '$work/c-test-package' -j$jobs && '$work/c-test-package/test_package'"
fi

pkg_config_consumer() {  # <prefix> <build-dir> [STATIC=1]
  local prefix=$1 build=$2
  shift 2
  rm -rf "$build" && mkdir -p "$build" &&
    PKG_CONFIG_PATH="$prefix/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}" make -C "$pkg/pkg_config" BUILD="$build" "$@" &&
    LD_LIBRARY_PATH="$prefix/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$build/table1" cbc
}
if requires install.static pkg_config.static; then
  check pkg_config.static pkg_config_consumer "$static_prefix" "$work/c-pc-static" STATIC=1
fi

# The README's snippets as a user types them (tests/package/readme/make_consumer.sh): its C++ round, its
# find_package lines and its pkg-config Makefile, against both installs; each prints libsia's version,
# which must be the package's.
readme_consumer() {  # <cmake|make> <prefix> <dir>
  local how=$1 prefix=$2 dir=$3 out version
  rm -rf "$dir" && bash "$pkg/readme/make_consumer.sh" "$src/README.md" "$dir" || return 1
  version=$(PKG_CONFIG_PATH="$prefix/lib/pkgconfig" pkg-config --modversion sia) || return 1
  if [[ $how == cmake ]]; then
    cmake -S "$dir" -B "$dir/build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$prefix" &&
      cmake --build "$dir/build" && out=$("$dir/build/my_scheduler") || return 1
  else
    PKG_CONFIG_PATH="$prefix/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}" make -C "$dir" my_scheduler &&
      out=$(LD_LIBRARY_PATH="$prefix/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$dir/my_scheduler") || return 1
  fi
  echo "$out"
  [[ $out == "sia $version" ]] || { echo "expected 'sia $version'"; return 1; }
}
if requires install.static readme.find_package.static; then
  check readme.find_package.static readme_consumer cmake "$static_prefix" "$work/c-readme-fp-static"
fi
if requires install.static readme.pkg_config.static; then
  check readme.pkg_config.static readme_consumer make "$static_prefix" "$work/c-readme-pc-static"
fi
if requires install.shared readme.pkg_config.shared; then
  check readme.pkg_config.shared readme_consumer make "$shared_prefix" "$work/c-readme-pc-shared"
fi

check add_subdirectory cmake_consumer "$pkg/add_subdirectory" "$work/c-subdir" "cbc" -- \
  -DSIA_SOURCE_DIR="$src" -DSIA_WITH_CBC=ON -DSIA_WITH_GLPK=OFF

echo "$passed passed, $failed failed"
[[ $failed -eq 0 ]]
