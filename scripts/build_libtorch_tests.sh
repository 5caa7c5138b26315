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
quiet cmake -S "$root/tests/libtorch" -B "$tmp/build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_PREFIX_PATH="$tmp/prefix"
quiet cmake --build "$tmp/build" -j2
# a consumer sees only the installed headers: no source or build tree on its include path
if grep -rqI -e "$root/csrc" -e "$build/generated" "$tmp/build" 2>/dev/null; then
  echo "tests/libtorch were compiled against the source or build tree, not the installed headers" >&2
  exit 1
fi
ctest --test-dir "$tmp/build" --output-on-failure
echo "libtorch-style programs OK"
