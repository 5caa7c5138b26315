"""PyTorch's own OpInfo / ModuleInfo / OptimizerInfo samples through Ember (tools/*_sweep.py), for the ops
whose every sample agrees today: keeps those at zero differences and keeps the sweep tools working.
Skips without torch or its test extras (expecttest)."""
import os
import sys

import pytest

pytest.importorskip("torch")
pytest.importorskip("expecttest")
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "tools"))

import opinfo_sweep  # noqa: E402
import optim_sweep  # noqa: E402

OPS = ["matmul", "masked_fill", "masked_select", "tensordot", "addmv", "addbmm", "baddbmm", "addr", "arange",
       "unique_consecutive", "nn.functional.pad", "take_along_dim", "gather", "scatter", "scatter_add",
       "corrcoef", "linalg.matrix_norm", "linalg.pinv", "linalg.vander", "nn.functional.multi_margin_loss",
       "index_add", "index_reduce", "clamp", "native_group_norm"]
FLOAT_OPS = ["nn.functional.conv_transpose2d", "nn.functional.conv_transpose3d"]  # no int64 convolution in Ember


@pytest.mark.parametrize("variant", ["function", "method"])
def test_opinfo_samples_agree(variant):
    ops = [o for o in opinfo_sweep.op_db if o.name in OPS]
    assert len({o.name for o in ops}) == len(OPS)
    problems, counts = opinfo_sweep.sweep(ops, ["float32", "float64", "int64", "bool"], False, 60, False, variant)
    assert counts["samples"] > 500
    floats = [o for o in opinfo_sweep.op_db if o.name in FLOAT_OPS]
    more, _ = opinfo_sweep.sweep(floats, ["float32", "float64"], False, 60, False, variant)
    problems.update(more)
    assert not problems, {k: v[0] for k, v in problems.items()}


def test_opinfo_gradients_agree():
    # not pinv: for non-symmetric inputs with hermitian=True Ember's gradient keeps to the triangle read
    ops = [o for o in opinfo_sweep.op_db if o.name in OPS + FLOAT_OPS and o.name != "linalg.pinv"]
    problems, counts = opinfo_sweep.sweep(ops, ["float64"], True, 60, False)
    assert not problems, {k: v[0] for k, v in problems.items()}


def test_optimizer_configurations_agree():
    for info in optim_sweep.optim_db:
        if info.name in ("SGD", "Adam", "AdamW"):
            for oi in info.optim_inputs_func(device="cpu", dtype=optim_sweep.torch.float64):
                assert optim_sweep.run(info, oi, 3) is None, (info.name, oi.kwargs)
