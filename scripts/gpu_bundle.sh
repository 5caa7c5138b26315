#!/usr/bin/env bash
# Packs what scripts/gpu_check.sh needs to build Ember on a GPU machine that has CUDA, PyTorch,
# CMake, ninja and a compiler but no package registry: this machine's OpenBLAS (OpenMP build, with
# its Fortran runtime), SLEEF, zlib and GoogleTest, and the Boost.Math headers special_math.cpp
# includes (only those: the list comes from the compiler), and Fashion-MNIST's files. Writes .gpu_bundle.tar.xz
# (git-ignored, about 38 MB) in the checkout; carry it to the GPU machine with the working tree.
# Usage: scripts/gpu_bundle.sh   (after scripts/setup.sh, which installs the Debian packages)
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=.gpu_bundle.tar.xz
STAGE=$(mktemp -d)
trap 'rm -rf "$STAGE"' EXIT
mkdir -p "$STAGE/lib" "$STAGE/include"
ML=/usr/lib/x86_64-linux-gnu
copy_lib() {  # copy_lib SRC NAME...: the resolved file under each name
  local src=$1; shift
  for n in "$@"; do cp -L "$src" "$STAGE/lib/$n"; done
}
copy_lib $ML/openblas-openmp/libopenblas.so.0 libopenblas.so.0
ln -s libopenblas.so.0 "$STAGE/lib/libopenblas.so"
copy_lib /lib/x86_64-linux-gnu/libgfortran.so.5 libgfortran.so.5
copy_lib /lib/x86_64-linux-gnu/libquadmath.so.0 libquadmath.so.0
copy_lib $ML/libsleef.so.3 libsleef.so.3
ln -s libsleef.so.3 "$STAGE/lib/libsleef.so"
copy_lib $ML/libz.so.1 libz.so.1
ln -s libz.so.1 "$STAGE/lib/libz.so"
cp $ML/libgtest.a $ML/libgtest_main.a "$STAGE/lib/"
cp /usr/include/x86_64-linux-gnu/openblas-openmp/*.h "$STAGE/include/"
cp /usr/include/x86_64-linux-gnu/sleef.h /usr/include/zlib.h /usr/include/zconf.h "$STAGE/include/"
cp -r /usr/include/gtest "$STAGE/include/"
# the Boost headers special_math.cpp pulls in, as the preprocessor lists them
[ -d build/generated ] || { echo "gpu_bundle: build first (scripts/setup.sh)"; exit 1; }
g++ -std=c++17 -M -MT x -Icsrc -Ibuild/generated csrc/ember/kernels/cpu/special_math.cpp |
  tr ' \\' '\n\n' | grep '^/usr/include/boost/' | sort -u |
  while read -r h; do
    rel=${h#/usr/include/}
    mkdir -p "$STAGE/include/$(dirname "$rel")"
    cp "$h" "$STAGE/include/$rel"
  done
# cuBLAS's headers (pip's nvidia-cublas, installed by setup.sh), in case the GPU machine's wheel lacks them
CUBLAS_H=""
for s in $(python3 -c "import site; print(' '.join(site.getsitepackages()))"); do
  for h in "$s"/nvidia/*/include/cublas_api.h; do [ -f "$h" ] && CUBLAS_H=$h && break 2; done
done
if [ -n "$CUBLAS_H" ]; then
  mkdir -p "$STAGE/include/cublas"
  cp "$(dirname "$CUBLAS_H")"/cublas*.h "$STAGE/include/cublas/"
fi
# NCCL's header (pip's nvidia-nccl-cu13), likewise
for s in $(python3 -c "import site; print(' '.join(site.getsitepackages()))"); do
  if [ -f "$s/nvidia/nccl/include/nccl.h" ]; then
    mkdir -p "$STAGE/include/nccl" && cp "$s/nvidia/nccl/include/nccl.h" "$STAGE/include/nccl/" && break
  fi
done
# cuDNN's headers (pip's nvidia-cudnn-cu13), likewise
for s in $(python3 -c "import site; print(' '.join(site.getsitepackages()))"); do
  if [ -f "$s/nvidia/cudnn/include/cudnn.h" ]; then
    mkdir -p "$STAGE/include/cudnn" && cp "$s"/nvidia/cudnn/include/cudnn*.h "$STAGE/include/cudnn/" && break
  fi
done
# Fashion-MNIST for the main job and the DDP example (the GPU machine has no Debian package; 30 MB, compressed already)
FMNIST=/usr/share/datasets/fashion-mnist
if [ -f "$FMNIST/train-images-idx3-ubyte.gz" ]; then
  mkdir -p "$STAGE/fashion-mnist" && cp "$FMNIST"/*-ubyte.gz "$STAGE/fashion-mnist/"
fi
tar -C "$STAGE" -cJf "$OUT" .
echo "[gpu_bundle] wrote $OUT ($(du -h "$OUT" | cut -f1)); carry it with the tree, then run scripts/gpu_check.sh there"
