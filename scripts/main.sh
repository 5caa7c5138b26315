#!/usr/bin/env bash
# Sets everything up and runs the main job.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
PYTHONPATH="$PWD/python${PYTHONPATH:+:$PYTHONPATH}" python3 examples/tour.py "$@"
