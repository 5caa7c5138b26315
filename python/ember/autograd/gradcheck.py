"""gradcheck / gradgradcheck: compare analytical gradients (backward) with central finite
differences, with PyTorch's defaults (eps=1e-6, atol=1e-5, rtol=1e-3)."""
import itertools
import warnings

from .. import _C
from .._C import _ops
from .grad_mode import no_grad


class GradcheckError(RuntimeError):
    pass


def _as_tuple(x):
    return x if isinstance(x, tuple) else (x,)


def _diff_inputs(inputs):
    return [i for i, t in enumerate(inputs) if isinstance(t, _C.TensorBase) and t.requires_grad]


def _outputs(func, inputs):
    out = _as_tuple(func(*inputs))
    return [o for o in out if isinstance(o, _C.TensorBase) and o.is_floating_point()]


def _indices(shape):
    return itertools.product(*[range(s) for s in shape])


def _numerical_jacobian(func, inputs, idx, eps):
    """J[out][k, j] = d out_flat[j] / d input_flat[k], by central differences."""
    x = inputs[idx]
    cols = []
    for pos in _indices(tuple(x.shape)):
        # perturb without recording; evaluate normally (the function may itself need autograd)
        orig = x[pos].item() if pos else x.item()
        _set(x, pos, orig - eps)
        lo = [o.detach().clone().reshape(-1).double() for o in _outputs(func, inputs)]
        _set(x, pos, orig + eps)
        hi = [o.detach().clone().reshape(-1).double() for o in _outputs(func, inputs)]
        _set(x, pos, orig)
        cols.append([(h - l) / (2 * eps) for h, l in zip(hi, lo)])
    return cols  # cols[k][out] is a flat tensor


def _set(x, pos, value):
    with no_grad():
        if pos:
            x[pos] = value
        else:
            x.fill_(value)


def _analytical_jacobian(func, inputs, diff_idx):
    """rows[out][j][input] = gradient of out_flat[j] w.r.t. the input (flat), via backward."""
    outs = _outputs(func, inputs)
    diff = [inputs[i] for i in diff_idx]
    rows = []
    for o in outs:
        per_out = []
        for j in range(o.numel()):
            go = _ops.zeros(o.numel(), dtype=o.dtype)
            go[j] = 1.0
            if not o.requires_grad:
                per_out.append([None] * len(diff))
                continue
            gs = _grad(o, diff, go.reshape(tuple(o.shape)))
            per_out.append([g.reshape(-1).double() if g is not None else None for g in gs])
        rows.append(per_out)
    return outs, rows


def _grad(o, diff, go):
    from . import grad
    return grad([o], diff, [go], retain_graph=True, allow_unused=True)


def gradcheck(func, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True, nondet_tol=0.0,
              check_undefined_grad=True, check_grad_dtypes=False, check_batched_grad=False,
              check_batched_forward_grad=False, check_forward_ad=False, check_backward_ad=True, fast_mode=False,
              masked=None):
    inputs = _as_tuple(inputs)
    diff_idx = _diff_inputs(inputs)
    if not diff_idx:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but none of the them "
                         "have requires_grad=True.")
    for i in diff_idx:
        if inputs[i].dtype is not _C.float64:
            warnings.warn(f"Input #{i} requires gradient and is not a double precision floating point. "
                          "This check will likely fail if all the inputs are not of double precision floating point.")
    outs, rows = _analytical_jacobian(func, inputs, diff_idx)
    for k, i in enumerate(diff_idx):
        num_cols = _numerical_jacobian(func, inputs, i, eps)
        x = inputs[i]
        for oi, o in enumerate(outs):
            for j in range(o.numel()):
                a_row = rows[oi][j][k]
                for col, pos in enumerate(_indices(tuple(x.shape))):
                    n = num_cols[col][oi][j].item() if num_cols[col][oi].numel() else 0.0
                    a = a_row[col].item() if a_row is not None else 0.0
                    if abs(a - n) > atol + rtol * abs(n):
                        msg = (f"Jacobian mismatch for output {oi} with respect to input {i},\n"
                               f"numerical:{n}\nanalytical:{a}\n(element {pos} of the input, {j} of the output)")
                        if raise_exception:
                            raise GradcheckError(msg)
                        return False
    return True


def gradgradcheck(func, inputs, grad_outputs=None, *, eps=1e-6, atol=1e-5, rtol=1e-3, gen_non_contig_grad_outputs=False,
                  raise_exception=True, nondet_tol=0.0, check_undefined_grad=True, check_grad_dtypes=False,
                  check_batched_grad=False, check_fwd_over_rev=False, check_rev_over_rev=True, fast_mode=False,
                  masked=False):
    inputs = _as_tuple(inputs)
    diff_idx = _diff_inputs(inputs)
    outs = _outputs(func, inputs)
    if grad_outputs is None:
        grad_outputs = tuple(_ops.randn(tuple(o.shape), dtype=o.dtype, requires_grad=True) for o in outs)
    grad_outputs = _as_tuple(grad_outputs)
    n_in = len(inputs)

    def new_func(*args):
        ins, gos = args[:n_in], args[n_in:]
        from . import grad
        outs_ = _outputs(func, ins)
        diff = [ins[i] for i in diff_idx]
        pairs = [(o, g) for o, g in zip(outs_, gos) if o.requires_grad]
        if not pairs:
            return tuple()
        gs = grad([p[0] for p in pairs], diff, [p[1] for p in pairs], create_graph=True, allow_unused=True)
        return tuple(g for g in gs if g is not None)

    return gradcheck(new_func, inputs + tuple(grad_outputs), eps=eps, atol=atol, rtol=rtol,
                     raise_exception=raise_exception)
