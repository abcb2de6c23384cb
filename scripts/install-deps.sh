#!/usr/bin/env bash
# Installs sia's build and test dependencies from Debian 12 packages, only those missing.
set -euo pipefail
PACKAGES=(
  build-essential cmake pkg-config git python3
  libeigen3-dev libboost-graph-dev nlohmann-json3-dev libnlopt-dev libcli11-dev libqhull-dev
  libtbb-dev libjemalloc-dev coinor-libcbc-dev coinor-libclp-dev coinor-libosi-dev coinor-libcoinutils-dev libglpk-dev
  doctest-dev libbenchmark-dev gnuplot-nox clang clang-format libclang-rt-14-dev libc++-14-dev libc++abi-14-dev
  python3-jsonschema
  python3-dev pybind11-dev python3-pybind11 python3-numpy python3-pytest python3-pandas python3-matplotlib
  python3-distributed python3-venv python3-pip python3-setuptools python3-wheel
)
missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]} == 0)); then
  echo "install-deps: all ${#PACKAGES[@]} packages present"
  exit 0
fi
echo "install-deps: installing ${missing[*]}"
SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
for attempt in 1 2 3; do
  if $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"; then
    exit 0
  fi
  echo "install-deps: apt-get failed (attempt $attempt), retrying" >&2
  sleep $((attempt * 5))
done
echo "install-deps: could not install ${missing[*]}" >&2
exit 1
