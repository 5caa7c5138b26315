#!/usr/bin/env bash
# Sets everything up and runs the main job.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh --main
# trains the Fashion-MNIST CNN; pass --backend torch to run the identical model with PyTorch
PYTHONPATH="$PWD/python${PYTHONPATH:+:$PYTHONPATH}" python3 examples/fashion_mnist.py "$@"
