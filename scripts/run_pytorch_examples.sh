#!/usr/bin/env bash
# Runs programs of the pytorch/examples repository unmodified on Ember: a shim directory first on
# PYTHONPATH makes `import torch` give ember and `import torchvision` give ember.vision
# (scripts/torch_shim). Data is local: Fashion-MNIST's IDX files stand in for MNIST (symlinked
# into torchvision's root/MNIST/raw layout), dcgan uses --dataset fake. Each program runs briefly
# (1 epoch, --dry-run where it exists) in a scratch copy, so the checkout stays clean.
#
# Usage: scripts/run_pytorch_examples.sh [PYTORCH_EXAMPLES_DIR] [program,program,...]
#   PYTORCH_EXAMPLES_DIR defaults to $PYTORCH_EXAMPLES; programs default to all of:
#   mnist mnist_hogwild mnist_rnn mnist_forward_forward regression siamese_network vae
#   word_language_model dcgan imagenet fx
# Environment: PYTHON (python3), FASHION_MNIST (/usr/share/datasets/fashion-mnist), WLM_LINES (500),
#   WORK (scratch directory, a fresh mktemp -d by default; kept for inspecting outputs).
set -uo pipefail
REPO="$(cd "$(dirname "$0")/.." && pwd)"
EXAMPLES="${1:-${PYTORCH_EXAMPLES:-}}"
if [ -z "$EXAMPLES" ] || [ ! -d "$EXAMPLES" ]; then
  echo "usage: $0 PYTORCH_EXAMPLES_DIR [programs]  (or set PYTORCH_EXAMPLES)" >&2
  exit 2
fi
EXAMPLES="$(cd "$EXAMPLES" && pwd)"
ALL="mnist mnist_hogwild mnist_rnn mnist_forward_forward regression siamese_network vae word_language_model dcgan imagenet fx"
PROGRAMS="${2:-$ALL}"
PROGRAMS="${PROGRAMS//,/ }"
PY="${PYTHON:-python3}"
FMNIST="${FASHION_MNIST:-/usr/share/datasets/fashion-mnist}"
WORK="${WORK:-$(mktemp -d -t ember-examples.XXXXXX)}"
mkdir -p "$WORK"
export PYTHONPATH="$REPO/scripts/torch_shim:$REPO/python${PYTHONPATH:+:$PYTHONPATH}"

# torchvision's MNIST layout: <root>/MNIST/raw/{train,t10k}-{images-idx3,labels-idx1}-ubyte[.gz]
mkdir -p "$WORK/data/MNIST/raw"
for f in train-images-idx3-ubyte train-labels-idx1-ubyte t10k-images-idx3-ubyte t10k-labels-idx1-ubyte; do
  if [ -e "$FMNIST/$f.gz" ]; then ln -sf "$FMNIST/$f.gz" "$WORK/data/MNIST/raw/$f.gz"
  elif [ -e "$FMNIST/$f" ]; then ln -sf "$FMNIST/$f" "$WORK/data/MNIST/raw/$f"
  else echo "[examples] $FMNIST/$f[.gz] missing (apt-get install dataset-fashion-mnist)" >&2; exit 2
  fi
done

# A scratch copy of one example directory (outputs land there, not in the checkout).
prepare() {
  rm -rf "$WORK/$1" && cp -r "$EXAMPLES/$1" "$WORK/$1" && cd "$WORK/$1" || return 1
  ln -sfn ../data data 2>/dev/null || true  # programs that read ./data/ (mnist_forward_forward)
}

# imagenet: an ImageFolder of a few random 80x80 PNGs per class (train/ and val/), read through PIL as
# torchvision's ImageFolder does; ResNet-18 trains one epoch on it and is evaluated.
imagenet_data() {
  local dst="$WORK/imagenet-tiny"
  "$PY" - "$dst" <<'PYEOF' || return 1
import os, sys
import numpy as np
from PIL import Image
rng = np.random.default_rng(0)
for split, n in (("train", 6), ("val", 2)):
    for cls in ("n01", "n02"):
        os.makedirs(os.path.join(sys.argv[1], split, cls), exist_ok=True)
        for i in range(n):
            pixels = rng.integers(0, 256, (80, 80, 3), dtype=np.uint8)
            Image.fromarray(pixels).save(os.path.join(sys.argv[1], split, cls, f"{i}.png"))
PYEOF
  echo "$dst"
}

# word_language_model: its data/wikitext-2 ships in the repository. The first $WLM_LINES lines
# (500 by default) of each split keep the run short (the program evaluates on all of valid and
# test); if train.txt is absent (a partial checkout) the validation text stands in for it.
wlm_data() {
  local src="$EXAMPLES/word_language_model/data/wikitext-2" dst="$WORK/wikitext-2" from
  mkdir -p "$dst"
  for s in train valid test; do
    from="$src/$s.txt"; [ -e "$from" ] || from="$src/valid.txt"
    head -n "${WLM_LINES:-500}" "$from" > "$dst/$s.txt"
  done
  echo "$dst"
}

run_program() {
  case "$1" in
    mnist|mnist_hogwild|mnist_rnn|siamese_network)
      prepare "$1" && "$PY" main.py --epochs 1 --dry-run ;;
    mnist_forward_forward)
      prepare "$1" && "$PY" main.py --epochs 5 --no_accel --train_size 1000 --test_size 1000 ;;
    regression)
      prepare "$1" && "$PY" main.py --epochs 1 ;;
    vae)
      prepare "$1" && mkdir -p results && "$PY" main.py --epochs 1 ;;
    dcgan)
      prepare "$1" && "$PY" main.py --dataset fake --dry-run --imageSize 64 --batchSize 16 --outf out ;;
    fx)  # torch.fx's programs (profiling_tracer needs torch.ops; custom_tracer needs the tabulate package)
      prepare "$1" || return 1
      local progs="invert module_tracer primitive_library replace_op subgraph_rewriter_basic_use wrap_output_dynamically inline_function proxy_based_graph_creation"
      "$PY" -c "import tabulate" 2>/dev/null && progs="$progs custom_tracer"
      for prog in $progs; do
        echo "[examples] fx/$prog.py"
        "$PY" "$prog.py" || return 1
      done ;;
    imagenet)
      local images; images="$(imagenet_data)" || return 1
      prepare "$1" && "$PY" main.py -a resnet18 --epochs 1 -b 4 -j 0 -p 1 "$images" ;;
    word_language_model)
      local data; data="$(wlm_data)"
      prepare "$1" || return 1
      for model in LSTM GRU Transformer; do
        echo "[examples] word_language_model --model $model"
        "$PY" main.py --data "$data" --model "$model" --epochs 1 --dry-run || return 1
        "$PY" generate.py --data "$data" --words 50 --outf generated.txt || return 1
      done ;;
    *) echo "[examples] unknown program $1" >&2; return 2 ;;
  esac
}

passed=(); failed=()
for p in $PROGRAMS; do
  echo "[examples] ===== $p"
  start=$(date +%s)
  if (run_program "$p") > "$WORK/$p.log" 2>&1; then passed+=("$p"); status=ok; else failed+=("$p"); status=FAILED; fi
  tail -n 5 "$WORK/$p.log"
  echo "[examples] $p: $status in $(( $(date +%s) - start ))s (log: $WORK/$p.log)"
done
echo "[examples] passed: ${passed[*]:-none}"
echo "[examples] failed: ${failed[*]:-none}"
[ ${#failed[@]} -eq 0 ]
