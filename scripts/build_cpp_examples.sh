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
  # data-parallel from C++: two processes over Gloo, replicas checked identical at the end
  "$tmp/build/ddp_train" --nproc 2 --epochs 1 --limit 2048 | tail -1
  # a model trained in Python, served from C++: identical outputs, then the test set
  PYTHONPATH="$root/python${PYTHONPATH:+:$PYTHONPATH}" python3 "$root/examples/fashion_mnist.py" --epochs 1 \
    --limit 1024 --out "$tmp/out" | grep -E "wrote .*traced|final"
  "$tmp/build/serve_traced" "$tmp/out/fashion_mnist_ember_traced.pt" \
    --check "$tmp/out/fashion_mnist_ember_probe.safetensors" | tail -2
fi
echo "C++ examples OK"
