#!/usr/bin/env bash
# Install Ember from an existing build tree into a temporary prefix, move the prefix (the package
# must be relocatable), build examples/cpp against it out of tree with find_package(Ember), and run
# the examples briefly. Usage: scripts/build_cpp_examples.sh [BUILD_DIR]   (default: build)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
source "$root/scripts/_installed_ember.sh"

install_ember "$build" "$tmp/stage"
mv "$tmp/stage" "$tmp/prefix"
# a consumer sees only the installed headers: no source or build tree on its include path
quiet cmake -S "$root/examples/cpp" -B "$tmp/build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_PREFIX_PATH="$tmp/prefix"
quiet cmake --build "$tmp/build" -j2
if grep -rqI -e "$root/csrc" -e "$build/generated" "$tmp/build" 2>/dev/null; then
  echo "examples were compiled against the source or build tree, not the installed headers" >&2
  exit 1
fi
echo "built examples/cpp against the installed package in $tmp/prefix"

quiet "$tmp/build/autograd"
"$tmp/build/regression" --steps 400 | tail -1
data=/usr/share/datasets/fashion-mnist
if [ -e "$data/train-images-idx3-ubyte.gz" ] || [ -e "$data/train-images-idx3-ubyte" ]; then
  "$tmp/build/fashion_mnist" --epochs 1 --limit 1024 | tail -1
fi
echo "C++ examples OK"
