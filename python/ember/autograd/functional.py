"""ember.autograd.functional: vjp, jvp (by the double-backward trick), jacobian, hessian."""
from .. import _C
from .._C import _ops
from ._engine import grad


def _tuple(x):
    return x if isinstance(x, tuple) else (x,)


def _prepare(inputs, create_graph):
    out = []
    for t in _tuple(inputs):
        d = t.detach()
        d.requires_grad_(True)
        out.append(d)
    return tuple(out)


def vjp(func, inputs, v=None, create_graph=False, strict=False):
    single = not isinstance(inputs, tuple)
    ins = _prepare(inputs, create_graph)
    outs = func(*ins)
    outs_t = _tuple(outs)
    vs = _tuple(v) if v is not None else tuple(_ops.ones_like(o) for o in outs_t)
    gs = grad(outs_t, ins, vs, create_graph=create_graph, allow_unused=True)
    gs = tuple(g if g is not None else _ops.zeros_like(i) for g, i in zip(gs, ins))
    outs_d = outs if create_graph else (tuple(o.detach() for o in outs_t) if isinstance(outs, tuple) else outs.detach())
    return outs_d, (gs[0] if single else gs)


def jvp(func, inputs, v=None, create_graph=False, strict=False):
    """Forward-mode product J v, computed as d/du (u^T J v) through two backward passes."""
    single = not isinstance(inputs, tuple)
    ins = _prepare(inputs, create_graph)
    outs = func(*ins)
    outs_t = _tuple(outs)
    vs = _tuple(v) if v is not None else tuple(_ops.ones_like(i) for i in ins)
    us = tuple(_ops.zeros_like(o).requires_grad_(True) for o in outs_t)
    gs = grad(outs_t, ins, us, create_graph=True, allow_unused=True)
    pairs = [(g, vv) for g, vv in zip(gs, vs) if g is not None]
    if not pairs:
        jv = tuple(_ops.zeros_like(o) for o in outs_t)
    else:
        jv = grad([p[0] for p in pairs], us, [p[1] for p in pairs], create_graph=create_graph, allow_unused=True)
        jv = tuple(j if j is not None else _ops.zeros_like(o) for j, o in zip(jv, outs_t))
    outs_d = tuple(o.detach() for o in outs_t)
    if not isinstance(outs, tuple):
        return outs_d[0], jv[0]
    return outs_d, jv


def jacobian(func, inputs, create_graph=False, strict=False, vectorize=False, strategy="reverse-mode"):
    single_in = not isinstance(inputs, tuple)
    ins = _prepare(inputs, create_graph)
    outs = func(*ins)
    single_out = not isinstance(outs, tuple)
    outs_t = _tuple(outs)
    result = []
    for o in outs_t:
        per_in = [[] for _ in ins]
        flat = o.reshape(-1)
        for j in range(flat.numel()):
            gs = grad([flat[j]], ins, retain_graph=True, create_graph=create_graph, allow_unused=True)
            for k, (g, i) in enumerate(zip(gs, ins)):
                per_in[k].append(g if g is not None else _ops.zeros_like(i))
        row = tuple(_ops.stack(p, 0).reshape(tuple(o.shape) + tuple(i.shape)) if p else
                    _ops.zeros(tuple(o.shape) + tuple(i.shape), dtype=o.dtype)
                    for p, i in zip(per_in, ins))
        result.append(row[0] if single_in else row)
    return result[0] if single_out else tuple(result)


def hessian(func, inputs, create_graph=False, strict=False, vectorize=False, outer_jacobian_strategy="reverse-mode"):
    single = not isinstance(inputs, tuple)

    def jac_fn(*ins):
        out = func(*ins)
        gs = grad([out], ins, create_graph=True, allow_unused=True)
        gs = tuple(g if g is not None else _ops.zeros_like(i) for g, i in zip(gs, ins))
        return gs[0] if single else gs

    return jacobian(jac_fn, inputs, create_graph=create_graph)
