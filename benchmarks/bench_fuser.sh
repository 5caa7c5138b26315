#!/usr/bin/env bash
# Builds bench_fuser and runs it twice on a fresh kernel cache: the first run's "first call" is
# the codegen backend's cold compile, the second run's the warm disk cache (load only).
#
#   benchmarks/bench_fuser.sh [build-dir]
set -euo pipefail
build=${1:-build}
cmake --build "$build" --target bench_fuser >/dev/null
cache=$(mktemp -d)
trap 'rm -rf "$cache"' EXIT
echo "== cold kernel cache ($cache)"
EMBER_CACHE_DIR=$cache "$build/bench_fuser"
echo "== warm kernel cache"
EMBER_CACHE_DIR=$cache "$build/bench_fuser"
