#!/usr/bin/env bash
# The libtorch names cost nothing: examples/cpp/regression.cpp (Ember's names) and
# tests/libtorch/regression_torch.cpp (the same program through <torch/torch.h>) built against the same
# installed Ember, run alternately; prints the median wall time of each and their ratio.
#   benchmarks/bench_libtorch_compat.sh [BUILD_DIR] [ROUNDS] [STEPS]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$root/build}" && pwd)
rounds=${2:-7} steps=${3:-3000}
source "$root/scripts/_installed_ember.sh"
install_ember "$build" "$tmp/prefix"
quiet cmake -S "$root/examples/cpp" -B "$tmp/ember" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$tmp/prefix"
quiet cmake --build "$tmp/ember" --target regression
quiet cmake -S "$root/tests/libtorch" -B "$tmp/torch" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release -DCMAKE_PREFIX_PATH="$tmp/prefix"
quiet cmake --build "$tmp/torch" --target regression_torch
python3 - "$tmp/ember/regression" "$tmp/torch/regression_torch" "$rounds" "$steps" <<'PY'
import statistics, subprocess, sys, time
ember_exe, torch_exe, rounds, steps = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
times = {"ember names": [], "torch names": []}
for _ in range(rounds):
    for name, exe in (("ember names", ember_exe), ("torch names", torch_exe)):
        t = time.perf_counter()
        subprocess.run([exe, "--steps", steps], check=True, stdout=subprocess.DEVNULL, env={"OMP_NUM_THREADS": "1"})
        times[name].append(time.perf_counter() - t)
med = {k: statistics.median(v) for k, v in times.items()}
for k, v in med.items():
    print(f"{k}: {v * 1e3:.1f} ms for {steps} steps ({v / int(steps) * 1e6:.1f} us/step)")
print(f"torch names / ember names: {med['torch names'] / med['ember names']:.3f}")
PY
