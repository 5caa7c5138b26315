#!/usr/bin/env bash
# Sets everything up and runs all tests: the C++ suite (ctest) and the Python suite (pytest).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --test
echo "[test] C++ tests"
ctest --test-dir build --output-on-failure -j 2
echo "[test] C++ examples built out of tree against the installed package"
bash scripts/build_cpp_examples.sh build
echo "[test] libtorch-style programs built through find_package(Torch) against the installed package"
bash scripts/build_libtorch_tests.sh build
echo "[test] sanitizers: the C++ tests and a short op-fuzzing campaign under ASan + UBSan"
bash scripts/sanitize.sh cpp fuzz
echo "[test] Python tests"
PYTHONPATH="$PWD/python${PYTHONPATH:+:$PYTHONPATH}" python3 -m pytest -q -x -p no:cacheprovider tests/python "$@"
