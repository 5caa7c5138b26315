"""The C++ frontend against the Python one: the same CNN trained from the same weights on the same
batches (build/ember_train_parity, tests/cpp/parity/train_parity.cpp) gives the same losses and
weights with every optimizer, and the checkpoint it writes loads into the Python model."""
import os
import subprocess

import pytest

import ember
from ember import nn
from ember.safetensors import load_file, save_file

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BINARY = os.path.join(os.environ.get("EMBER_BUILD_DIR", os.path.join(ROOT, "build")), "ember_train_parity")
STEPS = 6

pytestmark = pytest.mark.skipif(not os.path.exists(BINARY), reason="C++ test binary not built (cmake --build build)")


def build_model():
    return nn.Sequential(
        nn.Conv2d(1, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(64 * 7 * 7, 128), nn.ReLU(), nn.Dropout(0.25), nn.Linear(128, 10))


def make_optimizer(name, params):
    if name == "sgd":
        return ember.optim.SGD(params, lr=0.05, momentum=0.9, nesterov=True, weight_decay=1e-4)
    if name == "adam":
        return ember.optim.Adam(params, lr=1e-3)
    if name == "adamw":
        return ember.optim.AdamW(params, lr=2e-3, amsgrad=True)
    return ember.optim.RMSprop(params, lr=1e-3, momentum=0.5, centered=True)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("cpp_parity")
    ember.manual_seed(0)
    model = build_model()
    save_file({k: v.contiguous() for k, v in model.state_dict().items()}, str(d / "init.safetensors"))
    batches = {}
    for i in range(3):
        batches[f"x{i}"] = ember.randn(8, 1, 28, 28)
        batches[f"y{i}"] = ember.randint(0, 10, (8,))
    save_file(batches, str(d / "batches.safetensors"))
    return d


def python_run(d, name):
    model = build_model()
    model.load_state_dict(load_file(str(d / "init.safetensors")))
    batches = load_file(str(d / "batches.safetensors"))
    opt = make_optimizer(name, model.parameters())
    sched = ember.optim.lr_scheduler.CosineAnnealingLR(opt, T_max=4)
    ember.manual_seed(1)
    model.train()
    losses = []
    for step in range(STEPS):
        b = step % 3
        opt.zero_grad()
        loss = nn.functional.cross_entropy(model(batches[f"x{b}"]), batches[f"y{b}"])
        loss.backward()
        opt.step()
        sched.step()
        losses.append(loss.item())
    return losses, model


@pytest.mark.parametrize("name", ["sgd", "adam", "adamw", "rmsprop"])
def test_cpp_training_matches_python(files, name):
    out = files / f"cpp_{name}.safetensors"
    res = subprocess.run([BINARY, str(files / "init.safetensors"), str(files / "batches.safetensors"), name,
                          str(STEPS), str(out)], capture_output=True, text=True, timeout=120)
    assert res.returncode == 0, res.stderr
    cpp_losses = [float(v) for v in res.stdout.split()]
    py_losses, py_model = python_run(files, name)
    assert len(cpp_losses) == STEPS
    for c, p in zip(cpp_losses, py_losses):
        assert abs(c - p) <= 1e-5, (cpp_losses, py_losses)
    # the losses must move: the comparison is of a real trajectory
    assert max(py_losses) - min(py_losses) > 1e-3
    # the C++ checkpoint loads into the Python model (same names) and holds the same weights
    cpp_state = load_file(str(out))
    py_state = py_model.state_dict()
    assert sorted(cpp_state) == sorted(py_state)
    for k, v in py_state.items():
        assert (cpp_state[k] - v).abs().max().item() <= 1e-5, k
    fresh = build_model()
    fresh.load_state_dict(cpp_state)


def test_cpp_default_init_matches_python(tmp_path):
    # same seed, same random stream: the C++ layers draw their default weights exactly as Python's
    out = tmp_path / "init.safetensors"
    res = subprocess.run([BINARY, "--init", "5", str(out)], capture_output=True, text=True, timeout=60)
    assert res.returncode == 0, res.stderr
    ember.manual_seed(5)
    py_state = build_model().state_dict()
    cpp_state = load_file(str(out))
    assert sorted(cpp_state) == sorted(py_state)
    for k, v in py_state.items():
        assert cpp_state[k].dtype == v.dtype and tuple(cpp_state[k].shape) == tuple(v.shape), k
        assert (cpp_state[k] - v).abs().max().item() == 0, k
