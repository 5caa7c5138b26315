"""ember.special beyond the OpInfo parity runs (opdb_special.py): the namespace is complete, values are
accurate against mpmath's arbitrary precision (where torch's own kernels are less so), and autograd
behaves as PyTorch's: no derivative for the Bessel functions, NotImplementedError where torch has none."""
import math

import pytest

import ember

S = ember.special


def test_namespace_matches_torch():
    torch = pytest.importorskip("torch")
    assert sorted(S.__all__) == sorted(torch.special.__all__)
    for name in torch.special.__all__:
        assert callable(getattr(S, name)), name


def test_aliases_are_the_same_functions():
    x = ember.tensor([0.3, 1.7, 4.2], dtype=ember.float64)
    assert ember.equal(S.psi(x), ember.digamma(x)) and ember.equal(S.gammaln(x), ember.lgamma(x))
    assert ember.equal(S.expit(x), ember.sigmoid(x)) and ember.equal(S.multigammaln(x + 2, 2), ember.mvlgamma(x + 2, 2))
    assert ember.equal(S.gammainc(x, x), ember.igamma(x, x)) and ember.equal(S.gammaincc(x, x), ember.igammac(x, x))
    assert ember.equal(S.softmax(x, 0), ember.softmax(x, 0)) and ember.equal(S.round(x, decimals=1), x.round(decimals=1))


# (ember function, mpmath reference, points): float64 results within a few ulps of the exact value
def _mp_cases(mp):
    j, y, i, k = mp.besselj, mp.bessely, mp.besseli, mp.besselk
    pts = [0.01, 0.3, 1.0, 2.5, 7.9, 13.3, 29.0, 55.5, 120.0]
    neg = [-25.0, -7.9, -1.0, -0.3] + pts
    return [
        (S.bessel_j0, lambda x: j(0, x), neg), (S.bessel_j1, lambda x: j(1, x), neg),
        (S.bessel_y0, lambda x: y(0, x), pts), (S.bessel_y1, lambda x: y(1, x), pts),
        (S.modified_bessel_i0, lambda x: i(0, x), neg), (S.modified_bessel_i1, lambda x: i(1, x), neg),
        (S.modified_bessel_k0, lambda x: k(0, x), pts), (S.modified_bessel_k1, lambda x: k(1, x), pts),
        (S.i0e, lambda x: i(0, x) * mp.exp(-abs(x)), neg + [750.0, 1e4]),
        (S.i1e, lambda x: i(1, x) * mp.exp(-abs(x)), neg + [750.0, 1e4]),
        (S.scaled_modified_bessel_k0, lambda x: k(0, x) * mp.exp(x), pts + [750.0, 1e4]),
        (S.scaled_modified_bessel_k1, lambda x: k(1, x) * mp.exp(x), pts + [750.0, 1e4]),
        (S.spherical_bessel_j0, lambda x: mp.sin(x) / x, neg + [1e-5]),
        (S.airy_ai, mp.airyai, [-20.0, -5.5, -1.0, 0.0, 0.7, 3.0, 10.0]),
        (ember.digamma, mp.digamma, [-2.5, -0.3, 0.1, 1.4616321449683622, 3.0, 1e3]),
        (ember.lgamma, lambda x: mp.log(abs(mp.gamma(x))), [-2.5, -0.3, 0.1, 1.5, 3.0, 170.0]),
        (S.erfcx, lambda x: mp.exp(x * x) * mp.erfc(x), [-5.0, -0.5, 0.0, 0.5, 3.0, 25.0, 30.0, 1e5]),
        (S.ndtri, lambda p: -mp.sqrt(2) * mp.erfinv(1 - 2 * mp.mpf(p)), [1e-30, 1e-20, 0.02, 0.5, 0.7, 0.999]),
        (S.log_ndtr, lambda x: mp.log(mp.ncdf(x)), [-1e3, -40.0, -5.0, -1.0, 0.0, 2.0, 8.0]),
        (S.ndtr, mp.ncdf, [-8.0, -1.0, 0.0, 1.5, 6.0]),
        (S.entr, lambda x: -x * mp.log(x), [0.1, 1.0, 2.5]),
        (ember.i0, lambda x: i(0, x), [-5.0, 0.5, 12.0]),
        (ember.sinc, lambda x: mp.sinpi(x) / (mp.pi * x), [-2.5, 0.1, 1.3, 1e-8]),
    ]


def test_accuracy_against_mpmath():
    mp = pytest.importorskip("mpmath")
    mp.mp.dps = 40
    bad = []
    for fn, ref, pts in _mp_cases(mp):
        got = fn(ember.tensor(pts, dtype=ember.float64)).tolist()
        for x, g in zip(pts, got):
            exact = float(ref(mp.mpf(x)))
            if not math.isclose(g, exact, rel_tol=1e-13, abs_tol=1e-300):
                bad.append((fn.__name__, x, g, exact))
    assert not bad, bad


def test_two_argument_accuracy_against_mpmath():
    mp = pytest.importorskip("mpmath")
    mp.mp.dps = 40
    cases = [
        (S.zeta, mp.zeta, [(2.0, 1.0), (3.0, 0.5), (1.5, 10.0), (4.0, -2.5), (7.0, 1e3)]),
        (ember.igamma, mp.gammainc, [(0.5, 0.2), (2.5, 1.5), (30.0, 25.0), (1e-3, 4.0)]),
        (ember.igammac, mp.gammainc, [(0.5, 0.2), (2.5, 1.5), (30.0, 35.0), (100.0, 150.0)]),
        (lambda n, x: ember.polygamma(int(n.item()), x), lambda n, x: mp.polygamma(int(n), x),
         [(2.0, 0.5), (3.0, 2.0), (4.0, -1.5), (1.0, 7.0)]),
    ]
    bad = []
    for fn, ref, pts in cases:
        for a, b in pts:
            got = fn(ember.tensor(a, dtype=ember.float64), ember.tensor(b, dtype=ember.float64)).item()
            if ref is mp.gammainc:
                exact = mp.gammainc(a, 0, b, regularized=True) if fn is ember.igamma else \
                    mp.gammainc(a, b, mp.inf, regularized=True)
            else:
                exact = ref(a, b)
            if not math.isclose(got, float(exact), rel_tol=1e-12):
                bad.append((a, b, got, float(exact)))
    assert not bad, bad


def test_polynomials_against_closed_forms():
    x = ember.tensor([-0.9, -0.2, 0.4, 0.95], dtype=ember.float64)
    th = ember.acos(x)
    for n in (0, 1, 4, 9, 15):  # small degrees by recurrence, higher ones by the trigonometric form
        assert ember.allclose(S.chebyshev_polynomial_t(x, n), ember.cos(n * th), atol=1e-12)
        assert ember.allclose(S.chebyshev_polynomial_u(x, n), ember.sin((n + 1) * th) / ember.sin(th), atol=1e-11)
        assert ember.allclose(S.chebyshev_polynomial_v(x, n), ember.cos((n + 0.5) * th) / ember.cos(th / 2), atol=1e-11)
        assert ember.allclose(S.chebyshev_polynomial_w(x, n), ember.sin((n + 0.5) * th) / ember.sin(th / 2), atol=1e-11)
        assert ember.allclose(S.shifted_chebyshev_polynomial_t((x + 1) / 2, n), ember.cos(n * th), atol=1e-12)
    # H_3 = 8x^3 - 12x, He_3 = x^3 - 3x, L_2 = (x^2 - 4x + 2)/2, P_3 = (5x^3 - 3x)/2
    assert ember.allclose(S.hermite_polynomial_h(x, 3), 8 * x ** 3 - 12 * x)
    assert ember.allclose(S.hermite_polynomial_he(x, 3), x ** 3 - 3 * x)
    assert ember.allclose(S.laguerre_polynomial_l(x, 2), (x * x - 4 * x + 2) / 2)
    assert ember.allclose(S.legendre_polynomial_p(x, 3), (5 * x ** 3 - 3 * x) / 2)


def test_huge_degree_returns_instead_of_looping():
    # outside [-1, 1] the recurrence overflows to inf, then NaN, and stops there
    r = S.chebyshev_polynomial_t(ember.tensor([3.0], dtype=ember.float64), 2 ** 62)
    assert math.isnan(r.item()) or math.isinf(r.item())


@pytest.mark.parametrize("name", ["bessel_j0", "bessel_y1", "modified_bessel_k0", "airy_ai", "spherical_bessel_j0",
                                  "scaled_modified_bessel_k1"])
def test_functions_without_derivative_give_outputs_without_grad(name):
    x = ember.tensor([0.5, 1.5], requires_grad=True)
    y = getattr(S, name)(x)
    assert not y.requires_grad and y.grad_fn is None  # as torch: no graph, backward raises
    with pytest.raises(RuntimeError, match="does not require grad"):
        y.sum().backward()


def test_polynomials_have_no_derivative():
    x = ember.tensor([0.5], requires_grad=True)
    assert not S.legendre_polynomial_p(x, 3).requires_grad


@pytest.mark.parametrize("call,what", [
    (lambda a, x: ember.igamma(a, x), "igamma: input"),
    (lambda a, x: ember.igammac(a, x), "igammac: input"),
    (lambda a, x: S.zeta(a, x), "zeta"),
])
def test_missing_derivatives_raise_not_implemented(call, what):
    a = ember.tensor([2.5, 3.0], dtype=ember.float64, requires_grad=True)
    x = ember.tensor([1.5, 2.0], dtype=ember.float64)
    y = call(a, x)
    assert y.requires_grad
    with pytest.raises(NotImplementedError, match=f"the derivative for '{what}' is not implemented"):
        y.sum().backward()


def test_xlogy_gradient_at_zero_is_log_y():
    x = ember.tensor([0.0, 0.0, 0.0], dtype=ember.float64, requires_grad=True)
    y = ember.tensor([2.0, 0.0, -1.0], dtype=ember.float64)
    ember.xlogy(x, y).sum().backward()
    assert x.grad.tolist()[0] == pytest.approx(math.log(2.0))
    assert x.grad.tolist()[1:] == [0.0, 0.0]  # log undefined there: torch's 0


def test_polygamma_inplace_keeps_autograd():
    torch = pytest.importorskip("torch")
    for lib in (ember, torch):
        x = lib.tensor([0.7, 1.9, 3.2], dtype=lib.float64, requires_grad=True)
        y = x * 1.0
        y.polygamma_(1)
        y.sum().backward()
        if lib is ember:
            e_val, e_grad = y.tolist(), x.grad.tolist()
        else:
            assert e_val == pytest.approx(y.tolist(), rel=1e-8)  # torch's trigamma series: ~4e-10
            assert e_grad == pytest.approx(x.grad.tolist(), rel=1e-8)


def test_reduced_float_errors_name_the_kernel():
    x = ember.tensor([0.5], dtype=ember.float16)
    with pytest.raises(NotImplementedError, match="\"erfcx_cpu\" not implemented for 'Half'"):
        S.erfcx(x)
    with pytest.raises(NotImplementedError, match="'BFloat16'"):
        S.zeta(x.to(ember.bfloat16), 2.0)
    assert S.i0e(x).dtype == ember.float16  # the ones torch has for half keep working


def test_mvlgamma_errors():
    with pytest.raises(RuntimeError, match="may not be a boolean tensor"):
        ember.mvlgamma(ember.tensor([True]), 1)
    with pytest.raises(RuntimeError, match="greater than or equal to 1"):
        ember.mvlgamma(ember.tensor([2.0]), 0)
    t = ember.tensor([3, 4])
    with pytest.raises(RuntimeError, match="can't be cast"):
        t.mvlgamma_(2)
