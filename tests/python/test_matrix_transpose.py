"""Tensor.mT / mH / H / adjoint() and ember.adjoint against torch: shapes, views, errors, the 0-D
deprecation warnings, gradients."""
import warnings

import numpy as np
import pytest

import ember

torch = pytest.importorskip("torch")

CASES = [("mT", lambda t: t.mT), ("mH", lambda t: t.mH), ("H", lambda t: t.H), ("adjoint", lambda t: t.adjoint()),
         ("fn", lambda t: (ember if isinstance(t, ember.Tensor) else torch).adjoint(t))]


def _outcome(f, t):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        try:
            r = f(t)
        except RuntimeError as e:
            return "error", str(e), [str(x.message) for x in w]
    return "ok", (tuple(r.shape), np.asarray(r.tolist())), [str(x.message).split(" (Triggered")[0] for x in w]


@pytest.mark.parametrize("name,f", CASES)
@pytest.mark.parametrize("shape", [(), (3,), (2, 3), (2, 3, 4), (0, 2, 5)])
def test_matches_torch(name, f, shape):
    a = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    ours, theirs = _outcome(f, ember.tensor(a)), _outcome(f, torch.tensor(a))
    assert ours[0] == theirs[0]
    if ours[0] == "error":
        assert ours[1] == theirs[1]
    else:
        assert ours[1][0] == theirs[1][0]
        np.testing.assert_array_equal(ours[1][1], theirs[1][1])
        # torch warns once per process (TORCH_WARN_ONCE): compare when it did; Ember warns every time
        if theirs[2]:
            assert ours[2] == theirs[2]
        assert bool(ours[2]) == (shape == ())


def test_views_and_gradients():
    x = ember.arange(6.).reshape(2, 3).requires_grad_()
    y = x.mH
    (y * ember.arange(6.).reshape(3, 2)).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.arange(6.).reshape(3, 2).T)
    z = ember.zeros(2, 2)
    z.H[0, 1] = 5.0
    assert z[1, 0].item() == 5.0
