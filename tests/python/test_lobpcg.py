"""torch.lobpcg: eigenpairs against LAPACK (numpy) and torch, the generalized problem, batches,
the tracker and niter, argument errors, and the gradient (B = I) against torch and gradcheck."""
import numpy as np
import pytest

import ember


def _spd(m, seed, shift=None):
    rs = np.random.RandomState(seed)
    M = rs.randn(m, m)
    return M @ M.T + (m if shift is None else shift) * np.eye(m)


@pytest.mark.parametrize("largest", [True, False])
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_eigenpairs_match_lapack(largest, dtype):
    A = _spd(30, 0)
    ember.manual_seed(0)
    E, X = ember.lobpcg(ember.tensor(A, dtype=getattr(ember, dtype)), k=3, largest=largest)
    ref = np.sort(np.linalg.eigvalsh(A))
    ref = ref[::-1][:3] if largest else ref[:3]
    tol = 1e-8 if dtype == "float64" else 2e-3
    np.testing.assert_allclose(E.numpy(), ref, rtol=tol)
    Xn = X.numpy().astype(np.float64)
    np.testing.assert_allclose(Xn.T @ Xn, np.eye(3), atol=1e-6 if dtype == "float64" else 1e-3)
    assert np.abs(A @ Xn - Xn * E.numpy()).max() < (1e-4 if dtype == "float64" else 0.5)


def test_generalized_problem_and_initial_x_and_preconditioner():
    A, B = _spd(24, 1), _spd(24, 2, shift=24.0)
    ember.manual_seed(0)
    X0 = ember.randn(24, 2, dtype=ember.float64)
    iK = ember.tensor(np.linalg.inv(A), dtype=ember.float64)
    for kw in (dict(X=X0), dict(k=2, iK=iK), dict(k=2, method="basic")):
        E, X = ember.lobpcg(ember.tensor(A), B=ember.tensor(B), **kw)
        # the generalized eigenvalues: those of L^-1 A L^-T with B = L L^T
        L = np.linalg.cholesky(B)
        Li = np.linalg.inv(L)
        ref = np.sort(np.linalg.eigvalsh(Li @ A @ Li.T))[::-1][:2]
        np.testing.assert_allclose(E.numpy(), ref, rtol=1e-7)
        Xn = X.numpy()
        np.testing.assert_allclose(Xn.T @ B @ Xn, np.eye(2), atol=1e-6)


def test_batched_and_against_torch():
    torch = pytest.importorskip("torch")
    A = np.stack([_spd(18, s) for s in range(3)]).reshape(3, 18, 18)
    ember.manual_seed(0)
    E, X = ember.lobpcg(ember.tensor(A), k=2)
    assert tuple(E.shape) == (3, 2) and tuple(X.shape) == (3, 18, 2)
    Et, _ = torch.lobpcg(torch.tensor(A), k=2)
    np.testing.assert_allclose(E.numpy(), Et.numpy(), rtol=1e-7)


def test_tracker_niter_and_force_stop():
    A = ember.tensor(_spd(30, 3))
    steps = []
    ember.lobpcg(A, k=1, tracker=lambda w: steps.append((w.ivars["istep"], float(w.tvars["rerr"][0]))))
    assert steps and steps[-1][1] < steps[0][1]
    seen = []

    def stop(w):
        seen.append(w.ivars["istep"])
        w.bvars["force_stop"] = w.ivars["istep"] >= 1
    ember.lobpcg(A, k=1, tracker=stop)
    assert seen == [0, 1]
    E1, _ = ember.lobpcg(A, k=1, niter=1)  # hard stop: an approximation
    assert E1.shape == (1,)


def test_argument_errors_match_torch():
    torch = pytest.importorskip("torch")
    for lib in (ember, torch):
        with pytest.raises(ValueError, match="smaller than 3 x"):
            lib.lobpcg(lib.eye(5, dtype=lib.float64), k=2)
        with pytest.raises(AssertionError, match="A must be square"):
            lib.lobpcg(lib.ones(4, 5, dtype=lib.float64))
        with pytest.raises(AssertionError, match="same shape"):
            lib.lobpcg(lib.eye(9, dtype=lib.float64), B=lib.eye(8, dtype=lib.float64))


def test_gradient_matches_torch_and_gradcheck():
    torch = pytest.importorskip("torch")
    A = _spd(15, 4)

    def grads(lib):
        a = lib.tensor(A, requires_grad=True)
        lib.manual_seed(0)
        E, X = lib.lobpcg(a, k=2, n=3)
        (E.sum() + (X ** 2)[:5].sum()).backward()  # sign-invariant in the eigenvectors
        return a.grad.numpy()
    np.testing.assert_allclose(grads(ember), grads(torch), atol=1e-7)

    # and the gradient through the full eigendecomposition (eigh's backward), top-2 pairs
    def loss(E, X):
        return E.sum() + (X ** 2)[:5].sum()
    a = ember.tensor(A, requires_grad=True)
    ember.manual_seed(0)
    loss(*ember.lobpcg(a, k=2, tol=1e-12)).backward()
    b = ember.tensor(A, requires_grad=True)
    w, V = ember.linalg.eigh((b + b.mT) / 2)  # lobpcg symmetrizes an A that requires grad
    loss(w[-2:], V[:, -2:]).backward()
    np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), atol=1e-6)
    B = ember.eye(15, dtype=ember.float64, requires_grad=True)
    with pytest.raises(ValueError, match="B != I"):
        ember.lobpcg(a, k=1, B=B)
