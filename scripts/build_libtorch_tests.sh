#!/usr/bin/env bash
# Install Ember from an existing build tree into a temporary prefix and build tests/libtorch out of
# tree against it the way a libtorch project is built (find_package(Torch), ${TORCH_LIBRARIES}), then
# run every program. A change that breaks libtorch source compatibility fails here.
# Usage: scripts/build_libtorch_tests.sh [BUILD_DIR]   (default: build)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
source "$root/scripts/_installed_ember.sh"

install_ember "$build" "$tmp/prefix"
build_against_installed "$root/tests/libtorch" "$tmp/build" "$tmp/prefix" "$build"
ctest --test-dir "$tmp/build" --output-on-failure
echo "libtorch-style programs OK"
