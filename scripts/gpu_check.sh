#!/usr/bin/env bash
# Builds Ember with its CUDA backend on a GPU machine and runs the GPU tests and benchmarks:
#   tests/python/cuda/ (Ember's CUDA ops against its CPU results and against PyTorch's CUDA build, the NCCL
#   backend in a world of one), the C++ CUDA and allocator tests, benchmarks/bench_cuda.py and
#   bench_cuda_training.py (Ember vs PyTorch on the same GPU: ops, Table 1, Fig. 2), the main job
#   (examples/fashion_mnist.py --device cuda) and the profiled step (examples/profile_step.py, Fig. 1)
#   with both libraries, and examples/ddp_train.py on NCCL.
# The GPU machine has CUDA, PyTorch (with nanobind, numpy, pytest, pyyaml), CMake, ninja and a
# compiler but no package registry: the other libraries come from .gpu_bundle.tar.xz, which
# scripts/gpu_bundle.sh packs on the development machine. Logs land in $OUT when it is set.
# Usage: scripts/gpu_check.sh [--no-bench]
set -uo pipefail
cd "$(dirname "$0")/.."
LOG=${OUT:-/tmp}/gpu_check.log
exec > >(tee "$LOG") 2>&1
echo "[gpu_check] $(date -u)  $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null)"
PY=${PYTHON:-python3}
DEPS=/tmp/ember_gpu_deps
if [ -f .gpu_bundle.tar.xz ]; then
  rm -rf "$DEPS" && mkdir -p "$DEPS" && tar -C "$DEPS" -xJf .gpu_bundle.tar.xz
  HINTS=(-DOPENBLAS_LIB=$DEPS/lib/libopenblas.so -DCBLAS_INCLUDE=$DEPS/include -DSLEEF_LIB=$DEPS/lib/libsleef.so
         -DSLEEF_INCLUDE=$DEPS/include -DBOOST_MATH_INCLUDE=$DEPS/include -DZLIB_ROOT=$DEPS -DGTEST_ROOT=$DEPS)
  export LD_LIBRARY_PATH=$DEPS/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
else
  echo "[gpu_check] no .gpu_bundle.tar.xz: using the system's libraries"
  HINTS=()
fi
# cuBLAS: headers and library from the NVIDIA wheels PyTorch brings (site-packages/nvidia/...); the bundle's
# headers stand in when the wheel has none, and the library is then found through LD_LIBRARY_PATH
NV_LIBS=$($PY -c "import glob, os, site; print(':'.join(sorted(set(d for s in site.getsitepackages() for d in glob.glob(os.path.join(s, 'nvidia', '*', 'lib'))))))" 2>/dev/null)
[ -n "$NV_LIBS" ] && export LD_LIBRARY_PATH=$NV_LIBS${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
if ! $PY -c "import glob, site, sys; sys.exit(not any(glob.glob(s + '/nvidia/*/include/cublas_api.h') for s in site.getsitepackages()))" \
   && [ -f "$DEPS/include/cublas/cublas_api.h" ]; then
  HINTS+=(-DCUBLAS_INCLUDE=$DEPS/include/cublas)
fi
if ! $PY -c "import glob, site, sys; sys.exit(not any(glob.glob(s + '/nvidia/*/include/nccl.h') for s in site.getsitepackages()))" \
   && [ -f "$DEPS/include/nccl/nccl.h" ]; then
  HINTS+=(-DNCCL_INCLUDE=$DEPS/include/nccl)
fi
if ! $PY -c "import glob, site, sys; sys.exit(not any(glob.glob(s + '/nvidia/*/include/cudnn.h') for s in site.getsitepackages()))" \
   && [ -f "$DEPS/include/cudnn/cudnn.h" ]; then
  HINTS+=(-DCUDNN_INCLUDE=$DEPS/include/cudnn)
fi
NVCC=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
start=$(date +%s)
cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DEMBER_CUDA=ON -DCMAKE_CUDA_COMPILER="$NVCC" \
      -DPython_EXECUTABLE="$(command -v $PY)" -DPython3_EXECUTABLE="$(command -v $PY)" "${HINTS[@]}" || exit 1
cmake --build build-gpu -j "$(nproc)" || exit 1
echo "[gpu_check] build: $(( $(date +%s) - start ))s"
status=0
if [ -x build-gpu/ember_tests ]; then
  build-gpu/ember_tests --gtest_filter='Cuda*:CachingAllocator*:BackendPlugin*:Streams*' || status=1
fi
PYTHONPATH="$PWD/python" $PY -c "import ember; print('[gpu_check] ember.cuda:', ember.cuda.is_available(), ember.cuda.device_count(), ember.cuda.get_device_name() if ember.cuda.is_available() else '')"
PYTHONPATH="$PWD/python" $PY -m pytest -q -p no:cacheprovider tests/python/cuda -rs || status=1
if [ "${1:-}" != "--no-bench" ]; then
  PYTHONPATH="$PWD/python" $PY benchmarks/bench_cuda.py || status=1
  # the paper's Table 1 (training throughput) and Fig. 2 (allocator memory), Ember vs PyTorch
  PYTHONPATH="$PWD/python" timeout 900 $PY benchmarks/bench_cuda_training.py --plot "${OUT:-/tmp}/fig2_memory.png" || status=1
  # the main job on the GPU, Ember then PyTorch (one epoch each; img/s side by side)
  for backend in ember torch; do
    PYTHONPATH="$PWD/python" timeout 600 $PY examples/fashion_mnist.py --backend $backend --device cuda --epochs 1 \
      --out "${OUT:-/tmp}/fashion_mnist_gpu" 2>&1 | tr '\r' '\n' | grep -v '^epoch 1 \[' || status=1
    # the paper's Fig. 1 from each library's own trace (host ops above, GPU kernels below)
    PYTHONPATH="$PWD/python" timeout 300 $PY examples/profile_step.py --backend $backend --device cuda \
      --out "${OUT:-/tmp}/profile_step_gpu_$backend" || status=1
  done
  # DDP over NCCL on the one GPU (a world of one)
  PYTHONPATH="$PWD/python" timeout 300 $PY examples/ddp_train.py --device cuda --epochs 1 --limit 8192 || status=1
fi
echo "[gpu_check] done, status $status"
exit $status
