"""gradcheck / gradgradcheck: compare analytical gradients (backward) with central finite
differences. Same defaults, checks and error messages as PyTorch's slow mode (eps=1e-6,
atol=1e-5, rtol=1e-3; failures raise GradcheckError, a RuntimeError).

Jacobians are (input.numel(), output.numel()) matrices: row k is the derivative of every output
element with respect to input element k. They are compared with allclose semantics
(|analytical - numerical| <= atol + rtol * |numerical|, NaN never close).
"""
import itertools
import warnings

from .. import _C
from .._C import _ops
from .grad_mode import no_grad
from ._engine import grad


class GradcheckError(RuntimeError):
    r"""Error raised by :func:`gradcheck` and :func:`gradgradcheck`."""


FAILED_NONDET_MSG = (
    "\n\nNOTE: If your op relies on non-deterministic operations, this failure might be expected: "
    "call gradcheck/gradgradcheck with `nondet_tol=<tol>` as a keyword argument."
)


def _as_tuple(x):
    if isinstance(x, tuple):
        return x
    if isinstance(x, list):
        return tuple(x)
    return (x,)


def _is_tensor(x):
    return isinstance(x, _C.TensorBase)


def _diff_input_indices(inputs):
    return [i for i, t in enumerate(inputs) if _is_tensor(t) and t.requires_grad]


def _differentiable_outputs(x):
    return tuple(o for o in _as_tuple(x) if _is_tensor(o) and o.requires_grad)


def _positions(shape):
    return itertools.product(*[range(s) for s in shape])


def _matrix(rows, n_rows, n_cols, dtype):
    """rows[k] is a list of n_cols floats; an ember tensor of shape (n_rows, n_cols)."""
    if n_rows == 0 or n_cols == 0:
        return _ops.zeros((n_rows, n_cols), dtype=dtype)
    return _ops.tensor(rows, dtype=dtype)


def _check_inputs(inputs):
    any_requires_grad = False
    for idx, inp in enumerate(inputs):
        if _is_tensor(inp) and inp.requires_grad:
            if inp.dtype not in (_C.float64, _C.complex128):
                warnings.warn(
                    f"Input #{idx} requires gradient and is not a double precision floating point or complex. "
                    "This check will likely fail if all the inputs are not of double precision floating point "
                    "or complex. ", stacklevel=3)
            if not all(st > 0 or sz <= 1 for st, sz in zip(inp.stride(), inp.shape)):
                raise RuntimeError(
                    f"The {idx}th input has a dimension with stride 0. gradcheck only supports inputs that are "
                    "non-overlapping to be able to compute the numerical gradients correctly. You should call "
                    ".contiguous on the input before passing it to gradcheck.")
            any_requires_grad = True
    if not any_requires_grad:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but none of them have "
                         "requires_grad=True.")


def _numerical_jacobians(func, inputs, out_mask, eps):
    """For each differentiable input: a list (one per output selected by out_mask) of Jacobians,
    by central differences. The input is perturbed through .data, so autograd's version counters
    (and any graph already built on it) are untouched."""
    result = []
    for i in _diff_input_indices(inputs):
        x = inputs[i]
        d = x.data
        cols = []  # cols[k][o]: flat list, derivative of output o w.r.t. input element k
        out_numels = None
        for pos in _positions(tuple(x.shape)):
            orig = d[pos].item() if pos else d.item()
            _poke(d, pos, orig - eps)
            lo = _eval_flat(func, inputs, out_mask)
            _poke(d, pos, orig + eps)
            hi = _eval_flat(func, inputs, out_mask)
            _poke(d, pos, orig)
            if out_numels is None:
                out_numels = [len(v) for v in lo]
            for a, b in zip(lo, hi):
                if len(a) != len(b):
                    raise GradcheckError(f"Expected `func` in gradcheck to return outputs with the same shape when "
                                         f"inputs are perturbed on index {pos}, but got: {len(a)} and {len(b)}.")
            cols.append([[(hb - ha) / (2 * eps) for ha, hb in zip(a, b)] for a, b in zip(lo, hi)])
        if out_numels is None:  # an empty input: evaluate once for the output sizes
            out_numels = [len(v) for v in _eval_flat(func, inputs, out_mask)]
        n = x.numel()
        result.append([_matrix([cols[k][o] for k in range(n)], n, out_numels[o], x.dtype)
                       for o in range(len(out_numels))])
    return result


def _poke(d, pos, value):
    with no_grad():
        if pos:
            d[pos] = value
        else:
            d.fill_(value)


def _eval_flat(func, inputs, out_mask):
    outs = _as_tuple(func(*inputs))
    r = []
    for o, keep in zip(outs, out_mask):
        if keep:
            r.append(o.detach().reshape(-1).double().tolist())
    return r


def _analytical_jacobian(inputs, output, nondet_tol, check_grad_dtypes):
    """Jacobians of one output w.r.t. every differentiable input, by one backward per output
    element (done twice, to check that backward is deterministic)."""
    diff = [inputs[i] for i in _diff_input_indices(inputs)]

    def rows_of(out):
        m = out.numel()
        per_input = [[None] * m for _ in diff]  # per_input[k][j]: flat gradient for output element j
        sizes_ok, types_ok = True, True
        for j in range(m):
            go = _ops.zeros(m, dtype=out.dtype)
            go[j] = 1.0
            gs = grad([out], diff, [go.reshape(tuple(out.shape))], retain_graph=True, allow_unused=True)
            for k, (g, x) in enumerate(zip(gs, diff)):
                if g is None:
                    per_input[k][j] = [0.0] * x.numel()
                    continue
                if tuple(g.shape) != tuple(x.shape):
                    sizes_ok = False
                elif g.dtype is not x.dtype:
                    types_ok = False
                per_input[k][j] = g.detach().reshape(-1).double().tolist()
        jacs = []
        for k, x in enumerate(diff):
            n = x.numel()
            rows = [[per_input[k][j][r] for j in range(m)] for r in range(n)] if m else []
            jacs.append(_matrix(rows, n, m, x.dtype))
        return jacs, sizes_ok, types_ok

    j1, sizes_ok, types_ok = rows_of(output.clone())
    j2, _, _ = rows_of(output.clone())
    reentrant = not any(a.numel() and (a - b).abs().max().item() > nondet_tol for a, b in zip(j1, j2))
    if not types_ok and check_grad_dtypes:
        raise GradcheckError("Gradient has dtype mismatch")
    if not sizes_ok:
        raise GradcheckError("Analytical gradient has incorrect size")
    if not reentrant:
        raise GradcheckError(
            "Backward is not reentrant, i.e., running backward with same input and grad_output multiple times "
            "gives different values, although analytical gradient matches numerical gradient."
            f"The tolerance for nondeterminism was {nondet_tol}." + FAILED_NONDET_MSG)
    return j1


def _allclose(a, n, rtol, atol):
    if tuple(a.shape) != tuple(n.shape):
        return False
    if a.numel() == 0:
        return True
    a, n = a.double(), n.double()
    # NaN compares false, so a NaN on either side is a mismatch (like torch.allclose)
    return bool(((a - n).abs() <= atol + rtol * n.abs()).all().item())


def _test_backward_mul_by_grad_output(outputs, inputs):
    diff = [inputs[i] for i in _diff_input_indices(inputs)]
    gs = grad(list(outputs), diff, [_ops.zeros_like(o) for o in outputs], allow_unused=True)
    for gi, di in zip(gs, diff):
        if gi is None:
            continue
        if not bool(gi.eq(0).all().item()):
            raise GradcheckError("backward not multiplied by grad_output")
        if gi.dtype is not di.dtype:
            raise GradcheckError("grad is incorrect type")
        if tuple(gi.shape) != tuple(di.shape):
            raise GradcheckError("grad is incorrect size")


def _gradcheck_helper(func, inputs, eps, atol, rtol, nondet_tol, check_grad_dtypes):
    inputs = _as_tuple(inputs)
    _check_inputs(inputs)
    func_out = _as_tuple(func(*inputs))
    outputs = _differentiable_outputs(func_out)
    if not outputs:
        # nothing is differentiable: the function must not depend on the inputs
        mask = [_is_tensor(o) and o.is_floating_point() for o in func_out]
        for per_input in _numerical_jacobians(func, inputs, mask, eps):
            for jac in per_input:
                if jac.numel() and bool(jac.ne(0).any().item()):
                    raise GradcheckError("Numerical gradient for function expected to be zero")
        return True
    mask = [_is_tensor(o) and o.requires_grad for o in func_out]
    numerical = _numerical_jacobians(func, inputs, mask, eps)  # [input][output]
    for i, o in enumerate(outputs):
        analytical = _analytical_jacobian(inputs, o, nondet_tol, check_grad_dtypes)
        for j, a in enumerate(analytical):
            n = numerical[j][i]
            if not _allclose(a, n, rtol, atol):
                raise GradcheckError(f"Jacobian mismatch for output {i:d} with respect to input {j:d},\n"
                                     f"numerical:{n}\nanalytical:{a}\n")
    _test_backward_mul_by_grad_output(outputs, inputs)
    return True


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True, nondet_tol=0.0,
              check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
              check_batched_forward_grad=False, check_forward_ad=False, check_backward_ad=True, fast_mode=False,
              masked=None):
    """Check the gradients of `func` at `inputs` (the tensors among them with requires_grad=True)
    against finite differences. Returns True, or raises GradcheckError (returns False when
    raise_exception=False). Only the backward-mode checks of PyTorch's slow mode are done."""
    if not (check_forward_ad or check_backward_ad):
        raise AssertionError("Expected at least one of check_forward_ad or check_backward_ad to be True")
    if check_batched_grad and not check_backward_ad:
        raise AssertionError("Setting check_batched_grad=True requires check_backward_ad to be True")
    if check_batched_forward_grad and not check_forward_ad:
        raise AssertionError("Setting check_batched_forward_grad=True requires check_forward_ad to be True")
    if not check_backward_ad:
        return True
    try:
        return _gradcheck_helper(func, inputs, eps, atol, rtol, nondet_tol, check_grad_dtypes)
    except GradcheckError:
        if raise_exception:
            raise
        return False


def _random_grad_output(shape, dtype, noncontiguous):
    """Uniform in [-1, 1) (both parts for a complex output); integer outputs get float64."""
    if dtype.is_complex:
        real = _C.float32 if dtype == _C.complex64 else _C.float64
        with no_grad():
            parts = [_random_grad_output(shape, real, noncontiguous).detach() for _ in range(2)]
            t = _ops.complex(*parts)
        return t.requires_grad_(True)
    if not (dtype.is_floating_point if hasattr(dtype, "is_floating_point") else True):
        dtype = _C.float64
    with no_grad():
        if noncontiguous:
            t = (_ops.rand(tuple(shape) + (2,), dtype=dtype) * 2 - 1).select(-1, 0)
        else:
            t = _ops.rand(tuple(shape), dtype=dtype) * 2 - 1
    return t.requires_grad_(True)


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3, gen_non_contig_grad_outputs=False,
                  raise_exception=True, nondet_tol=0.0, check_undefined_grad=True, check_grad_dtypes=False,
                  check_batched_grad=False, check_fwd_over_rev=False, check_rev_over_rev=True, fast_mode=False,
                  masked=False):
    """gradcheck of the gradients of `func` (w.r.t. its inputs and the grad_outputs): checks the
    backward of the backward. grad_outputs default to random values in [-1, 1)."""
    if not (check_fwd_over_rev or check_rev_over_rev):
        raise AssertionError("Expected at least one of check_fwd_over_rev or check_rev_over_rev to be True")
    inputs = _as_tuple(inputs)
    if grad_outputs is None:
        outs = _differentiable_outputs(func(*inputs))
        grad_outputs = tuple(_random_grad_output(o.shape, o.dtype, gen_non_contig_grad_outputs) for o in outs)
    else:
        grad_outputs = _as_tuple(grad_outputs)
    num_outputs = len(grad_outputs)
    diff_input_indices = {i for i, x in enumerate(inputs) if _is_tensor(x) and x.requires_grad}

    def new_func(*args):
        ins = args[:len(args) - num_outputs]
        gos = args[len(args) - num_outputs:]
        outs = _differentiable_outputs(func(*ins))
        diff = tuple(x for i, x in enumerate(ins) if i in diff_input_indices)
        if not outs:
            return ()
        gs = grad(outs, diff, gos, create_graph=True, allow_unused=True)
        return tuple(g for g in gs if g is not None)

    return gradcheck(new_func, inputs + tuple(grad_outputs), eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception, nondet_tol=nondet_tol, check_undefined_grad=check_undefined_grad,
                     check_grad_dtypes=check_grad_dtypes, check_batched_grad=check_batched_grad,
                     check_forward_ad=check_fwd_over_rev, check_backward_ad=check_rev_over_rev)
