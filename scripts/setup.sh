#!/usr/bin/env bash
# Installs what Ember needs on a fresh Debian machine (apt + pip), then builds it in place:
# build/ holds libember.so, the C++ tests and the extension, which lands in python/ember/.
# Usage: scripts/setup.sh [--test|--main]   (--test: also pytest, torch, tensorboard, safetensors, hypothesis, pillow; --main: matplotlib)
set -euo pipefail
cd "$(dirname "$0")/.."

APT_PACKAGES=(cmake ninja-build g++ libopenblas-dev libopenblas-openmp-dev libsleef-dev libdnnl-dev libgtest-dev libgloo-dev libboost-dev zlib1g-dev ccache dataset-fashion-mnist)
missing=()
for p in "${APT_PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "[setup] apt-get install ${missing[*]}"
  SUDO=""; [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi

PY=${PYTHON:-python3}
pip_need=()
$PY -c "import nanobind" 2>/dev/null || pip_need+=("nanobind>=2.0")
$PY -c "import numpy" 2>/dev/null || pip_need+=(numpy)
$PY -c "import yaml" 2>/dev/null || pip_need+=(pyyaml)
$PY -c "import cmake" 2>/dev/null || command -v cmake >/dev/null || pip_need+=(cmake)
$PY -c "import ninja" 2>/dev/null || command -v ninja >/dev/null || pip_need+=(ninja)
# cuBLAS's headers for the CUDA backend's matrix products (NVIDIA's wheels; the libraries load at first use)
if [ -x /usr/local/cuda/bin/nvcc ] || command -v nvcc >/dev/null; then
  $PY -c "import os, site, sys; sys.exit(not any(os.path.exists(os.path.join(s, 'nvidia/cu13/include/cublas_api.h'))
                                    for s in site.getsitepackages() + [site.getusersitepackages()]))" \
    || pip_need+=(nvidia-cublas)
  $PY -c "import os, site, sys; sys.exit(not any(os.path.exists(os.path.join(s, 'nvidia/nccl/include/nccl.h'))
                                    for s in site.getsitepackages() + [site.getusersitepackages()]))" \
    || pip_need+=(nvidia-nccl-cu13)  # NCCL's headers for ember.distributed's nccl backend
  $PY -c "import os, site, sys; sys.exit(not any(os.path.exists(os.path.join(s, 'nvidia/cudnn/include/cudnn.h'))
                                    for s in site.getsitepackages() + [site.getusersitepackages()]))" \
    || pip_need+=(nvidia-cudnn-cu13)  # cuDNN's headers for the GPU convolutions
fi
if [ "${1:-}" = "--main" ]; then
  $PY -c "import matplotlib" 2>/dev/null || pip_need+=(matplotlib)  # the main job's PNG plot
  $PY -c "import PIL" 2>/dev/null || pip_need+=(pillow)  # ember.vision ImageFolder's image loader
fi
if [ "${1:-}" = "--test" ]; then
  $PY -c "import pytest" 2>/dev/null || pip_need+=(pytest)
  # torch is the oracle of the parity tests (a CPU build installed from a local file here)
  $PY -c "import torch" 2>/dev/null || pip_need+=("torch==2.13.0")
  # TensorBoard's own event reader checks ember.utils.tensorboard's files (and torch's writer needs it)
  $PY -c "import tensorboard" 2>/dev/null || pip_need+=(tensorboard)
  $PY -c "import safetensors" 2>/dev/null || pip_need+=(safetensors)
  $PY -c "import hypothesis" 2>/dev/null || pip_need+=(hypothesis)  # the op fuzzer (tests/fuzz)
  $PY -c "import PIL" 2>/dev/null || pip_need+=(pillow)  # ember.vision ImageFolder / PIL transform tests
  $PY -c "import onnx" 2>/dev/null || pip_need+=(onnx)  # ember.onnx.export's protobufs and checker
  $PY -c "import onnxruntime" 2>/dev/null || pip_need+=(onnxruntime)  # runs exported models in tests
  # torch.testing._internal (PyTorch's OpInfo/ModuleInfo databases: tools/*_sweep.py, test_torch_databases.py)
  $PY -c "import expecttest" 2>/dev/null || pip_need+=(expecttest)
fi
if [ ${#pip_need[@]} -gt 0 ]; then
  echo "[setup] pip install ${pip_need[*]}"
  $PY -m pip install -q "${pip_need[@]}"
fi

echo "[setup] building (cmake + ninja, 2 jobs)"
start=$(date +%s)
# ccache keys on relative paths below the checkout, so fresh clones in other folders hit the cache
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$PWD}"
# -DEMBER_WERROR=ON: this is CI's build, on the toolchain installed above, and stays warning-free
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release -DEMBER_WERROR=ON -DPython_EXECUTABLE="$(command -v $PY)" >/dev/null
cmake --build build -j "$(nproc)"
echo "[setup] build done in $(( $(date +%s) - start ))s"
