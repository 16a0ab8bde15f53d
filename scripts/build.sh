#!/usr/bin/env bash
# Configures and builds one CMake tree. Usage: scripts/build.sh BUILD_DIR [cmake -D options...]
# [-- targets...]. Uses Ninja and ccache, two jobs (the project's machines have two cores).
set -euo pipefail
cd "$(dirname "$0")/.."
dir=$1
shift
opts=()
targets=()
while [ $# -gt 0 ]; do
  if [ "$1" = "--" ]; then shift; targets=("$@"); break; fi
  opts+=("$1")
  shift
done
# Relative paths and no working-directory hashing let ccache reuse objects across
# checkouts (CI builds in a fresh clone every time).
export CCACHE_BASEDIR="$PWD"
export CCACHE_NOHASHDIR=true
cmake -S . -B "$dir" -G Ninja "${opts[@]}" >/dev/null
if [ "${#targets[@]}" -gt 0 ]; then
  cmake --build "$dir" -j2 --target "${targets[@]}"
else
  cmake --build "$dir" -j2
fi
