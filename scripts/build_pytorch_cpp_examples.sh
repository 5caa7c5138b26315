#!/usr/bin/env bash
# Build pytorch/examples' libtorch programs (cpp/mnist, cpp/regression, cpp/autograd, cpp/dcgan)
# UNMODIFIED from their own CMakeLists.txt against an installed Ember (find_package(Torch)), run each
# briefly and check that it trains. The checkout is the user's (not part of this repository):
#   scripts/build_pytorch_cpp_examples.sh PATH/TO/pytorch-examples [--argparse DIR] [--seconds N] [--build DIR]
# --argparse: the include folder holding argparse/argparse.hpp (p-ranav/argparse), which dcgan expects
# the user to supply, as upstream does; without it dcgan is skipped. Data: the Fashion-MNIST IDX files
# of the Debian package dataset-fashion-mnist, unpacked where the programs look (./data).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
examples=${1:?usage: $0 PATH/TO/pytorch-examples [--argparse DIR] [--seconds N] [--build DIR]}
examples=$(cd "$examples" && pwd)
shift
argparse="" seconds=40 build="$root/build"
while [ $# -gt 0 ]; do
  case "$1" in
    --argparse) argparse=$(cd "$2" && pwd); shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --build) build=$(cd "$2" && pwd); shift 2 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
source "$root/scripts/_installed_ember.sh"
install_ember "$build" "$tmp/prefix"
mkdir -p "$tmp/data"
for f in train-images-idx3-ubyte train-labels-idx1-ubyte t10k-images-idx3-ubyte t10k-labels-idx1-ubyte; do
  gunzip -c "/usr/share/datasets/fashion-mnist/$f.gz" > "$tmp/data/$f"
done

status=0
for name in mnist regression autograd dcgan; do
  flags=()
  if [ $name = dcgan ]; then
    if [ -z "$argparse" ]; then echo "[$name] skipped: no --argparse include folder"; continue; fi
    flags=(-DCMAKE_CXX_FLAGS="-I$argparse")
  fi
  if ! quiet cmake -S "$examples/cpp/$name" -B "$tmp/$name" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release \
        -DCMAKE_PREFIX_PATH="$tmp/prefix" -DDOWNLOAD_MNIST=OFF "${flags[@]}" \
     || ! quiet cmake --build "$tmp/$name" -j2; then
    echo "[$name] FAILED to build"; status=1; continue
  fi
  ln -sfn "$tmp/data" "$tmp/$name/data"
  args=()
  [ $name = dcgan ] && args=(--epochs 1)
  rc=0
  (cd "$tmp/$name" && timeout "$seconds" stdbuf -o0 "./$name" "${args[@]}") > "$tmp/$name.out" 2>&1 || rc=$?
  # a program still training when the time is up (124) is fine; any other failure is not (unbuffered:
  # a killed program loses what stdio held back)
  if [ $rc -ne 0 ] && [ $rc -ne 124 ]; then
    echo "[$name] FAILED (exit $rc):"; tail -20 "$tmp/$name.out"; status=1; continue
  fi
  if python3 "$root/scripts/check_training_log.py" "$name" "$tmp/$name.out"; then :; else status=1; fi
done
exit $status
