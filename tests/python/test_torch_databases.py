"""PyTorch's own OpInfo / OptimizerInfo samples through Ember (tools/*_sweep.py), for the ops whose every
sample agrees today: keeps those at zero differences and keeps the sweep tools working. Skips without torch
or its test extras (expecttest).

Run in a subprocess: importing torch.testing._internal changes torch's global state (it freezes the
torch.backends flags, which other parity tests set)."""
import json
import os
import subprocess
import sys

import pytest

pytest.importorskip("torch")
pytest.importorskip("expecttest")

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")

OPS = ["matmul", "masked_fill", "masked_select", "tensordot", "addmv", "addbmm", "baddbmm", "addr", "arange",
       "unique_consecutive", "nn.functional.pad", "take_along_dim", "gather", "scatter", "scatter_add",
       "corrcoef", "linalg.matrix_norm", "linalg.pinv", "linalg.vander", "nn.functional.multi_margin_loss",
       "index_add", "index_reduce", "clamp", "native_group_norm"]
FLOAT_OPS = ["nn.functional.conv_transpose2d", "nn.functional.conv_transpose3d"]  # no int64 convolution in Ember
# complex128 values and gradients (the z* LAPACK routines, conjugate transposes, complex kernels)
COMPLEX_OPS = ["linalg.inv", "linalg.det", "linalg.solve", "linalg.cholesky", "linalg.qr", "linalg.svdvals",
               "linalg.lu_factor", "linalg.lu_solve", "linalg.slogdet", "linalg.solve_triangular",
               "linalg.householder_product", "matrix_exp", "mH", "expm1", "log1p", "logcumsumexp",
               "nn.functional.conv2d", "masked.sum", "masked.softmax", "masked.var"]

_SCRIPT = r"""
import json, sys
sys.path.insert(0, sys.argv[1])
import opinfo_sweep, optim_sweep
OPS, FLOAT_OPS, COMPLEX_OPS = json.loads(sys.argv[2]), json.loads(sys.argv[3]), json.loads(sys.argv[4])
def run(names, dtypes, grad=False, variant="function"):
    ops = [o for o in opinfo_sweep.op_db if o.name in names]
    problems, counts = opinfo_sweep.sweep(ops, dtypes, grad, 60, False, variant)
    return {f"{k[0]} [{k[1]}]": v[0][1] for k, v in problems.items()}, counts["samples"], sorted({o.name for o in ops})
out = {}
for variant in ("function", "method"):
    p, n, found = run(OPS, ["float32", "float64", "int64", "bool"], variant=variant)
    q, _, _ = run(FLOAT_OPS, ["float32", "float64"], variant=variant)
    out[variant] = [dict(p, **q), n, found]
# gradients; not pinv: for non-symmetric inputs with hermitian=True Ember's keeps to the triangle read
out["grad"] = run([o for o in OPS + FLOAT_OPS if o != "linalg.pinv"], ["float64"], grad=True)
out["complex"] = run(COMPLEX_OPS, ["complex128"])
out["complex_grad"] = run(COMPLEX_OPS, ["complex128"], grad=True)
bad = []
for info in optim_sweep.optim_db:
    if info.name in ("SGD", "Adam", "AdamW"):
        for oi in info.optim_inputs_func(device="cpu", dtype=optim_sweep.torch.float64):
            msg = optim_sweep.run(info, oi, 3)
            if msg:
                bad.append(f"{info.name} {oi.kwargs}: {msg}")
out["optim"] = bad
print("RESULT" + json.dumps(out))
"""


@pytest.fixture(scope="module")
def result():
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python") + os.pathsep + os.environ.get("PYTHONPATH", ""))
    p = subprocess.run([sys.executable, "-c", _SCRIPT, os.path.join(ROOT, "tools"), json.dumps(OPS),
                        json.dumps(FLOAT_OPS), json.dumps(COMPLEX_OPS)], capture_output=True, text=True, env=env, timeout=600)
    line = [ln for ln in p.stdout.splitlines() if ln.startswith("RESULT")]
    assert p.returncode == 0 and line, p.stderr[-3000:]
    return json.loads(line[0][len("RESULT"):])


@pytest.mark.parametrize("variant", ["function", "method"])
def test_opinfo_samples_agree(result, variant):
    problems, samples, found = result[variant]
    assert found == sorted(OPS), "an op name is no longer in torch's OpInfo database"
    assert samples > 500
    assert not problems, problems


def test_opinfo_gradients_agree(result):
    problems, samples, _ = result["grad"]
    assert samples > 100
    assert not problems, problems


def test_optimizer_configurations_agree(result):
    assert not result["optim"], result["optim"]


@pytest.mark.parametrize("kind", ["complex", "complex_grad"])
def test_complex_samples_and_gradients_agree(result, kind):
    problems, samples, found = result[kind]
    assert found == sorted(COMPLEX_OPS), "an op name is no longer in torch's OpInfo database"
    assert samples > 100
    assert not problems, problems
