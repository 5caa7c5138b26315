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
# A lent GPU machine runs one command for at most 10 minutes (and a session gets 15 minutes of device time
# in all), so every step runs under a deadline (GPU_CHECK_BUDGET seconds from the start, 560 by default),
# most important first: build, C++ CUDA tests, tests/python/cuda, bench_cuda.py, Table 1, the main job,
# Fig. 1, DDP on NCCL. A step that hangs is stopped at its share; what the budget cannot reach is listed as
# skipped. The summary table comes last (the tool returns the output's tail). Files for $OUT (at most 8):
# gpu_check.log, pytest_cuda.log (every failure in full), fig2_memory.png, profile_step_{ember,torch}.png.
# Usage: scripts/gpu_check.sh [--no-bench]
set -uo pipefail
cd "$(dirname "$0")/.."
T0=$(date +%s)
BUDGET=${GPU_CHECK_BUDGET:-560}
OUTDIR=${OUT:-/tmp/gpu_check_out}
mkdir -p "$OUTDIR"
SCRATCH=$(mktemp -d /tmp/gpu_check.XXXXXX)  # the examples' own outputs (checkpoints, traces): only some go to $OUT
LOG=$OUTDIR/gpu_check.log
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
DATA=/usr/share/datasets/fashion-mnist
[ -d "$DEPS/fashion-mnist" ] && DATA=$DEPS/fashion-mnist  # the bundle carries it (the GPU machine has no Debian package)
status=0
SUMMARY=()
# step NAME SECONDS CMD...: CMD under the smaller of SECONDS and the budget left; its outcome goes to the summary
step() {
  local name=$1 want=$2 left start rc took
  shift 2
  left=$(( T0 + BUDGET - $(date +%s) ))
  if [ "$left" -lt 20 ]; then
    SUMMARY+=("$(printf '%-34s skipped: budget spent' "$name")")
    return 1
  fi
  [ "$want" -gt "$left" ] && want=$left
  echo "[gpu_check] ---- $name (at most ${want}s)"
  start=$(date +%s)
  timeout --kill-after=10 "$want" "$@"
  rc=$?
  took=$(( $(date +%s) - start ))
  case $rc in
    0) SUMMARY+=("$(printf '%-34s ok in %ss' "$name" "$took")") ;;
    124|137) SUMMARY+=("$(printf '%-34s TIMED OUT at %ss' "$name" "$took")"); status=1 ;;
    *) SUMMARY+=("$(printf '%-34s FAILED (exit %s) in %ss' "$name" "$rc" "$took")"); status=1 ;;
  esac
  return $rc
}
summary() {
  echo "[gpu_check] ================ summary ($(( $(date +%s) - T0 ))s of ${BUDGET}s)"
  printf '  %s\n' "${SUMMARY[@]}"
  echo "[gpu_check] status $status; logs and figures in $OUTDIR"
}
trap summary EXIT
export PYTHONPATH="$PWD/python" PYTHONUNBUFFERED=1

configure() {
  cmake -S . -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DEMBER_CUDA=ON -DCMAKE_CUDA_COMPILER="$NVCC" \
        -DPython_EXECUTABLE="$(command -v $PY)" -DPython3_EXECUTABLE="$(command -v $PY)" "${HINTS[@]}"
}
step "configure" 120 configure || exit 1
step "build (_C, ember_tests)" 330 cmake --build build-gpu -j "$(nproc)" --target _C ember_tests || exit 1
step "import, device" 30 $PY -c "import ember; print('[gpu_check] ember.cuda:', ember.cuda.is_available(), ember.cuda.device_count(), ember.cuda.get_device_name())" || exit 1
if [ -x build-gpu/ember_tests ]; then
  step "C++ CUDA tests" 60 build-gpu/ember_tests --gtest_filter='Cuda*:CachingAllocator*:BackendPlugin*:Streams*'
fi
# every CUDA test, each failure in full in pytest_cuda.log; on screen one line each
TIMEOUT_ARGS=()
$PY -c "import pytest_timeout" 2>/dev/null && TIMEOUT_ARGS=(-p pytest_timeout --timeout=120)
step "tests/python/cuda" 240 $PY -m pytest -q -p no:cacheprovider tests/python/cuda -rfEs --tb=line "${TIMEOUT_ARGS[@]}" \
  --junitxml="$SCRATCH/junit.xml" -o junit_logging=all
$PY - "$SCRATCH/junit.xml" > "$OUTDIR/pytest_cuda.log" 2>/dev/null <<'PYEOF'
import sys, xml.etree.ElementTree as ET
for case in ET.parse(sys.argv[1]).getroot().iter("testcase"):
    for bad in list(case.findall("failure")) + list(case.findall("error")):
        print("=" * 20, case.get("classname"), case.get("name"))
        print(bad.text or bad.get("message"))
PYEOF
if [ "${1:-}" != "--no-bench" ]; then
  step "bench_cuda.py" 90 $PY benchmarks/bench_cuda.py
  # the paper's Table 1 (training throughput) and Fig. 2 (allocator memory), Ember vs PyTorch
  step "Table 1 (bench_cuda_training.py)" 150 $PY benchmarks/bench_cuda_training.py --steps 5 --plot "$OUTDIR/fig2_memory.png"
  for backend in ember torch; do  # the main job on the GPU, one epoch each (img/s side by side)
    step "main job, $backend" 60 bash -c "$PY examples/fashion_mnist.py --backend $backend --device cuda --epochs 1 \
      --data '$DATA' --out '$SCRATCH/fashion_mnist' 2>&1 | tr '\r' '\n' | grep -v '^epoch 1 \['; exit \${PIPESTATUS[0]}"
  done
  for backend in ember torch; do  # the paper's Fig. 1 from each library's own trace
    step "Fig. 1 profile, $backend" 45 $PY examples/profile_step.py --backend $backend --device cuda \
      --out "$SCRATCH/profile_$backend" && cp "$SCRATCH/profile_$backend/profile_step.png" "$OUTDIR/profile_step_$backend.png"
  done
  step "DDP on NCCL (world of one)" 45 $PY examples/ddp_train.py --device cuda --epochs 1 --limit 8192 --data "$DATA"
fi
[ $status -eq 0 ]
