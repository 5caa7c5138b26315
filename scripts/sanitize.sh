#!/usr/bin/env bash
# Builds Ember with AddressSanitizer + UndefinedBehaviorSanitizer in build-asan/ (allocator caches
# off, so ASan sees every block) and runs suites under it; any sanitizer report fails the run.
#   scripts/sanitize.sh                 C++ tests, the op fuzzer (EMBER_FUZZ_CALLS calls) and the Python suite
#   scripts/sanitize.sh cpp fuzz        only those (CI runs these two)
#   EMBER_FUZZ_CALLS=250000 scripts/sanitize.sh fuzz     a long campaign
set -euo pipefail
cd "$(dirname "$0")/.."
parts=("$@")
[ ${#parts[@]} -eq 0 ] && parts=(cpp fuzz python)

B=build-asan
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$PWD}"
# this build has debug info (-g), which makes ccache hash the build folder: without this, a fresh clone
# elsewhere (CI) would miss the cache for every object
export CCACHE_NOHASHDIR=1
echo "[sanitize] building $B (ASan + UBSan)"
start=$(date +%s)
mkdir -p $B
(  # one build at a time: two sanitize.sh runs side by side would share (and corrupt) ninja's state
  flock 9
  # -Werror as in the release build: with GCC 12.2 the instrumented build warns about nothing either.
  # No CUDA backend here: without a GPU its device code never runs, and its host side is plain C++
  # that the release build compiles with -Werror.
  cmake -S . -B $B -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DEMBER_SANITIZE=address,undefined -DEMBER_WERROR=ON -DEMBER_CUDA=OFF \
        -DEMBER_PYTHON_OUTPUT_DIR="$PWD/$B/ext" -DPython_EXECUTABLE="$(command -v python3)" >/dev/null
  cmake --build $B -j "$(nproc)"
) 9>"$B/.build.lock"
echo "[sanitize] build done in $(( $(date +%s) - start ))s"

# The Python package with the sanitized extension in it: a fresh copy of python/ember each run
# (EMBER_SANITIZE_PKG names another folder, so a long campaign and other runs can go side by side).
PKG=${EMBER_SANITIZE_PKG:-$B/python}
rm -rf "$PKG" && mkdir -p "$PKG" && cp -r python/ember "$PKG/"
rm -f "$PKG"/ember/_C*.so && cp $B/ext/_C*.so "$PKG/ember/"

# Python itself is not instrumented: the ASan runtime must be loaded first. Python's own allocations
# are never freed at exit, so leak checking is for the C++ tests only.
ASAN_RT=$(g++ -print-file-name=libasan.so)
UBSAN_RT=$(g++ -print-file-name=libubsan.so)
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
asan_common="abort_on_error=0:halt_on_error=1:allocator_may_return_null=1:max_allocation_size_mb=2048:detect_stack_use_after_return=0"
py_env=(env LD_PRELOAD="$ASAN_RT $UBSAN_RT" ASAN_OPTIONS="$asan_common:detect_leaks=0"
        PYTHONPATH="$(cd "$PKG" && pwd)" EMBER_SANITIZED=1 OMP_NUM_THREADS=2)

for part in "${parts[@]}"; do
  case $part in
    cpp)
      echo "[sanitize] C++ tests"
      ASAN_OPTIONS="$asan_common:detect_leaks=1" ctest --test-dir $B --output-on-failure -j 2 ;;
    fuzz)
      calls=${EMBER_FUZZ_CALLS:-4000}
      echo "[sanitize] op fuzzer: $calls calls"
      "${py_env[@]}" python3 tests/fuzz/fuzz_ops.py --calls "$calls" --seed "${EMBER_FUZZ_SEED:-0}" \
        --report "${EMBER_FUZZ_REPORT:-$B/fuzz_report.json}" ;;
    python)
      echo "[sanitize] Python suite"
      "${py_env[@]}" python3 -m pytest -q -p no:cacheprovider tests/python ;;
    *) echo "unknown part: $part (cpp, fuzz, python)"; exit 2 ;;
  esac
done
echo "[sanitize] clean: no sanitizer report"
