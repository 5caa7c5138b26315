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
build_against_installed "$root/examples/cpp" "$tmp/build" "$tmp/prefix" "$build"
echo "built examples/cpp against the installed package in $tmp/prefix"

quiet "$tmp/build/autograd"
"$tmp/build/regression" --steps 400 | tail -1
data=/usr/share/datasets/fashion-mnist
if [ -e "$data/train-images-idx3-ubyte.gz" ] || [ -e "$data/train-images-idx3-ubyte" ]; then
  "$tmp/build/fashion_mnist" --epochs 1 --limit 1024 | tail -1
fi
echo "C++ examples OK"
