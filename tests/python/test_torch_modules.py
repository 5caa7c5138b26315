"""The small torch modules programs import: torch.random (fork_rng), torch.functional,
torch.return_types, torch.torch_version (TorchVersion), torch.compiler (is_compiling, disable,
set_stance, reset). Checked against torch's documented behaviour, and against torch where installed."""
import importlib.util

import pytest

import ember

HAS_TORCH = importlib.util.find_spec("torch") is not None


def test_fork_rng_restores_the_global_state():
    ember.manual_seed(3)
    expected = ember.rand(4)
    ember.manual_seed(3)
    with ember.random.fork_rng():
        ember.manual_seed(123)
        inside = ember.rand(4)
    assert ember.equal(ember.rand(4), expected)
    assert not ember.equal(inside, expected)
    ember.manual_seed(3)
    with ember.random.fork_rng(enabled=False):
        ember.rand(4)
    assert not ember.equal(ember.rand(4), expected)  # disabled: the draws inside count
    ember.manual_seed(3)
    with pytest.raises(ValueError):
        with ember.random.fork_rng(devices=[]):
            ember.rand(100)
            raise ValueError("the state comes back on errors too")
    assert ember.equal(ember.rand(4), expected)
    assert ember.random.manual_seed is ember.manual_seed and ember.random.initial_seed() == 3


def test_functional_and_return_types():
    assert ember.functional.einsum is ember.einsum and ember.functional.split is ember.split
    r = ember.max(ember.tensor([[1.0, 5.0], [7.0, 2.0]]), 1)
    assert isinstance(r, ember.return_types.max) and r.values.tolist() == [5.0, 7.0]
    assert type(r).__module__ == "ember.return_types" and type(r).__name__ == "max"
    assert isinstance(ember.linalg.eigh(ember.eye(2)), ember.return_types.linalg_eigh)
    assert isinstance(ember.sort(ember.ones(3)), ember.return_types.sort)
    values, indices = ember.zeros(2), ember.zeros(2, dtype=ember.int64)
    out = ember.topk(ember.arange(5.0), 2, out=(values, indices))
    assert isinstance(out, ember.return_types.topk_out) and out.values is values
    assert ember.return_types.max in ember.return_types.all_return_types
    q, r = ember.empty(0), ember.empty(0)
    res = ember.linalg.qr(ember.eye(3), out=(q, r))
    assert isinstance(res, ember.return_types.linalg_qr_out) and res.Q is q and res.R is r


@pytest.mark.skipif(not HAS_TORCH, reason="torch not installed")
def test_return_types_cover_torchs():
    import torch
    theirs = {n for n in dir(torch.return_types) if not n.startswith("_") and isinstance(getattr(torch.return_types, n),
                                                                                        type)}
    theirs = {n for n in theirs if issubclass(getattr(torch.return_types, n), tuple)}
    ours = {n for n in dir(ember.return_types) if not n.startswith("_")}
    assert not theirs - ours
    for name in theirs & ours:
        assert getattr(torch.return_types, name).__match_args__ == getattr(ember.return_types, name).__match_args__, name


def test_version_compares_as_a_version():
    from ember.torch_version import TorchVersion
    v = ember.__version__
    assert isinstance(v, TorchVersion) and isinstance(v, str)
    assert v == "0.1.0" and v == "0.1" and v == (0, 1, 0) and v >= (0, 1) and v < "0.10" and v < (1,)
    assert TorchVersion("2.10.0") > "2.9.1" and TorchVersion("2.1.0a0") < "2.1.0" and TorchVersion("2.1.0") < "2.1.0.post1"
    assert TorchVersion("2.1.0+cu121") > "2.1.0" and TorchVersion("2.1.0.dev20230101") < "2.1.0a0"
    with pytest.raises(ValueError):
        v < "not a version"
    assert {v: 1}["0.1.0"] == 1  # hashes as its text


@pytest.mark.skipif(not HAS_TORCH, reason="torch not installed")
def test_version_order_matches_torchs():
    import torch
    from ember.torch_version import TorchVersion
    cases = ["2.1.0", "2.1", "2.1.0a1", "2.1.0b2", "2.1.0rc1", "2.1.0.dev5", "2.1.0.post1", "2.1.0+cpu", "2.10",
             "2.9.9", "1.13.1"]
    for a in cases:
        for b in cases:
            ta, ea = torch.torch_version.TorchVersion(a), TorchVersion(a)
            assert (ta < b, ta == b, ta > b) == (ea < b, ea == b, ea > b), (a, b)


def test_compiler_controls():
    seen = []

    @ember.compile
    def f(x):
        seen.append(ember.compiler.is_compiling())
        return x * 2 + 1

    x = ember.ones(3)
    f(x)
    f(x)
    assert seen == [True] and f.stats["graph_calls"] == 1  # the second call replays: no Python ran
    assert not ember.compiler.is_compiling()
    with ember.compiler.set_stance("force_eager"):
        f(x)
    assert seen == [True, False]
    ember.compiler.reset()
    f(x)
    assert f.stats["traces"] == 2
    with ember.compiler.set_stance("fail_on_recompile"):
        f(x)  # a recorded graph: fine
        with pytest.raises(RuntimeError, match="fail_on_recompile"):
            f(ember.ones(3, dtype=ember.float64))
    with ember.compiler.set_stance("eager_on_recompile"):
        assert f(ember.ones(2, dtype=ember.int64)).tolist() == [3, 3]
    with pytest.raises(RuntimeError):
        ember.compiler.set_stance("nonsense")

    calls = []

    @ember.compiler.disable
    def log(t):
        calls.append(1)
        return t + 1

    @ember.compile
    def g(t):
        return log(t) * 2

    for _ in range(3):
        assert g(x).tolist() == [4.0] * 3
    assert len(calls) == 3 and g.stats["graph_calls"] == 0  # the side effect happens every call
    assert ember.compiler.disable(reason="why")(len)([1, 2]) == 2
