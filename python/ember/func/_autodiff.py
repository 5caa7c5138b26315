"""grad, grad_and_value, vjp, jvp, linearize, jacrev, jacfwd and hessian, built on Ember's reverse-mode
engine. Forward products (jvp, jacfwd) use the double-vjp identity J t = d/du <J^T u, t>, which works
for every op with a differentiable backward and nests, where forward-mode AD has one level.

Nesting without functorch's wrapper levels: a transform differentiates with respect to fresh leaves
(a detached copy of each input), or, when an input already requires grad because an outer transform or
the caller is tracking it, a new view of it, so its gradient counts only paths through this input.
Graphs of higher order are recorded (create_graph) only when something outside this transform can
differentiate the result, i.e. when the function's output reaches a grad-requiring leaf that is not
one of the fresh inputs; results that reach nothing outside are returned detached, as torch.func's are.
"""
import functools

from .. import _C
from .._C import _ops
from ..autograd._engine import grad as _autograd_grad
from ..autograd.grad_mode import enable_grad
from ..autograd.graph import _reached_leaves
from ._pytree import tree_flatten, tree_map, tree_unflatten
from ._vmap import _RandomnessGuard, _check_randomness

_GV = "grad_and_value(f)(*args)"
_VJP = "vjp(f, *primals)"
_JVP = "jvp(f, primals, tangents)"


def _is_tensor(x):
    return isinstance(x, _C.TensorBase)


# --- arguments ----------------------------------------------------------------------------------

def _wrap_argnum(argnum, nargs):
    if not isinstance(argnum, int):
        raise RuntimeError(f"argnum must be int, got: {type(argnum)}")
    if -nargs <= argnum < nargs:
        return argnum % nargs
    raise RuntimeError(f"Got argnum={argnum}, but only {nargs} positional inputs")


def _check_argnums(argnums, nargs):
    """argnums normalized to non-negative positions (int or tuple), with torch's errors."""
    if isinstance(argnums, int):
        return _wrap_argnum(argnums, nargs)
    if not isinstance(argnums, tuple):
        raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")
    wrapped = tuple(_wrap_argnum(a, nargs) for a in argnums)
    if not wrapped:
        raise RuntimeError("argnums must be non-empty")
    if len(set(wrapped)) != len(wrapped):
        raise RuntimeError(f"argnums elements must be unique, got {wrapped}")
    return wrapped


def _slice(args, argnums):
    return args[argnums] if isinstance(argnums, int) else tuple(args[i] for i in argnums)


def _replace(args, argnums, new):
    args = list(args)
    if isinstance(argnums, int):
        args[argnums] = new
    else:
        for i, v in zip(argnums, new):
            args[i] = v
    return tuple(args)


# --- lifting inputs and releasing results -------------------------------------------------------

def _lift(x, fresh):
    """The tensor a transform differentiates with respect to (see the module docstring)."""
    if not _is_tensor(x):
        raise ValueError(f"Thing passed to transform API must be Tensor, got {type(x)}")
    if x.requires_grad:
        return x.view_as(x)
    leaf = x.detach()
    leaf.requires_grad_(True)
    fresh.append(leaf)
    return leaf


def _reaches_outside(tensors, known):
    """Whether the graph of `tensors` reaches a grad-requiring leaf other than those in `known`."""
    nodes = []
    for t in tensors:
        if not (_is_tensor(t) and t.requires_grad):
            continue
        if t.grad_fn is None:
            if not any(t._is_same(k) for k in known):
                return True
            continue
        nodes.append(t.grad_fn)
    return any(not any(v._is_same(k) for k in known) for v in _reached_leaves(nodes))


def _release(tree, known, keep_graph):
    """Results handed back to the caller: detached unless an outer differentiation can use their graph."""
    def one(x):
        if _is_tensor(x) and x.requires_grad and not (keep_graph and _reaches_outside([x], known)):
            return x.detach()
        return x
    return tree_map(one, tree)


def _grads(outputs, inputs, cotangents, create_graph, retain_graph=True):
    """Vector-Jacobian products of `outputs` with respect to `inputs` (zeros where unreached)."""
    pairs = [(o, c) for o, c in zip(outputs, cotangents) if o.requires_grad]
    found = [None] * len(inputs)
    if pairs:
        found = _autograd_grad([o for o, _ in pairs], inputs, [c for _, c in pairs], retain_graph=retain_graph,
                               create_graph=create_graph, allow_unused=True)
    return [g if g is not None else _ops.zeros_like(i) for g, i in zip(found, inputs)]


def _split_aux(out, has_aux, api):
    if not has_aux:
        return out, None
    if not (isinstance(out, tuple) and len(out) == 2):
        raise RuntimeError(f"{api}: output of function f should be a tuple: (output, aux) if has_aux is True")
    for a in tree_flatten(out[1])[0]:
        if not _is_tensor(a):  # aux leaves are released like outputs, so they must be tensors
            raise RuntimeError(f"Expected tensors, got unsupported type {type(a)}")
    return out


def _check_vjp_outputs(flat_out, out):
    _check_outputs(flat_out, _VJP, out)
    for o in flat_out:
        if not o.is_floating_point():
            raise RuntimeError(f"vjp(f, ...): All outputs of f must be floating-point or complex Tensors, got "
                               f"Tensor with dtype {o.dtype}")


def _check_outputs(flat_out, api, out):
    if not flat_out or (len(flat_out) == 1 and flat_out[0] is None):
        raise RuntimeError(f"{api}: Expected f to be a function that has non-empty output (got output = {out})")
    for o in flat_out:
        if not _is_tensor(o):
            raise RuntimeError(f"{api}: expected f(*primals) to return only tensors, got unsupported type {type(o)}")


# --- reverse mode -------------------------------------------------------------------------------

def _call_lifted(func, args, kwargs, argnums, has_aux, fresh, api):
    """func called with the arguments at argnums replaced by fresh grad-requiring copies (recorded in
    `fresh`): (those copies, output, aux)."""
    nums = _check_argnums(argnums, len(args))
    diff = tree_map(lambda x: _lift(x, fresh), _slice(args, nums))
    out, aux = _split_aux(func(*_replace(args, nums, diff), **kwargs), has_aux, api)
    return diff, out, aux


def grad_and_value(func, argnums=0, has_aux=False):
    """Returns a function computing (gradient of `func`'s scalar output with respect to the arguments at
    `argnums`, that output); with has_aux, func returns (output, aux) and the value part is (output, aux)."""
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        keep, fresh = _C.is_grad_enabled(), []
        with enable_grad():
            diff, out, aux = _call_lifted(func, args, kwargs, argnums, has_aux, fresh, _GV)
            if not _is_tensor(out):
                raise RuntimeError(f"{_GV}: Expected f(*args) to return a Tensor, got {type(out)}")
            if out.dim() != 0:
                raise RuntimeError(f"{_GV}: Expected f(*args) to return a scalar Tensor, got tensor with {out.dim()} "
                                   "dims. Maybe you wanted to use the vjp or jacrev APIs instead?")
            flat_diff, spec = tree_flatten(diff)
            create = keep and _reaches_outside([out], fresh)
            grads = tree_unflatten(_grads([out], flat_diff, [_ops.ones_like(out)], create), spec)
        grads, out, aux = _release((grads, out, aux), fresh, keep)
        return (grads, (out, aux)) if has_aux else (grads, out)
    return wrapper


def grad(func, argnums=0, has_aux=False):
    """Returns a function computing the gradient of `func`'s scalar output with respect to the arguments
    at `argnums` (an int or a tuple of ints); with has_aux, (gradient, aux)."""
    gv = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        grads, value = gv(*args, **kwargs)
        return (grads, value[1]) if has_aux else grads
    return wrapper


def vjp(func, *primals, has_aux=False):
    """(func(*primals), vjp_fn[, aux]): vjp_fn(cotangents) returns the vector-Jacobian products with
    respect to every primal, as a tuple; it may be called more than once."""
    keep, fresh = _C.is_grad_enabled(), []
    with enable_grad():
        lifted = tree_map(lambda x: _lift(x, fresh), primals)
        out, aux = _split_aux(func(*lifted), has_aux, _VJP)
        flat_out, out_spec = tree_flatten(out)
        _check_vjp_outputs(flat_out, out)
    flat_in, in_spec = tree_flatten(lifted)

    def vjp_fn(cotangents, retain_graph=True, create_graph=None):
        flat_cot, cot_spec = tree_flatten(cotangents)
        if cot_spec != out_spec:
            raise RuntimeError("Expected pytree structure of cotangents to be the same as pytree structure of outputs "
                               f"to the function. cotangents: {cot_spec.pprint()}, primal output: {out_spec.pprint()}")
        keep_result = _C.is_grad_enabled() if create_graph is None else create_graph
        with enable_grad():
            create = keep_result and (any(_is_tensor(c) and c.requires_grad for c in flat_cot)
                                      or _reaches_outside(flat_out, fresh))
            grads = _grads(flat_out, flat_in, flat_cot, create, retain_graph)
        return _release(tree_unflatten(grads, in_spec), fresh, keep_result)

    out, aux = _release((out, aux), fresh, keep)
    return (out, vjp_fn, aux) if has_aux else (out, vjp_fn)


def jacrev(func, argnums=0, *, has_aux=False, chunk_size=None, _preallocate_and_copy=False):
    """Returns a function computing the Jacobian of `func` with respect to the arguments at `argnums`, one
    reverse pass per output element: for each output, a tensor of shape output.shape + input.shape
    (nested like the outputs, then like the differentiated arguments). chunk_size only bounds memory
    in torch; here rows are always computed one at a time."""
    if not (chunk_size is None or chunk_size > 0):
        raise ValueError("jacrev: `chunk_size` should be greater than 0.")

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        keep, fresh = _C.is_grad_enabled(), []
        with enable_grad():
            diff, out, aux = _call_lifted(func, args, kwargs, argnums, has_aux, fresh, _VJP)
            flat_out, out_spec = tree_flatten(out)
            _check_vjp_outputs(flat_out, out)
            flat_in, in_spec = tree_flatten(diff)
            create = keep and _reaches_outside(flat_out, fresh)
            jac = tree_unflatten([tree_unflatten(_reverse_jacobian(o, flat_in, create), in_spec) for o in flat_out],
                                 out_spec)
        jac, aux = _release((jac, aux), fresh, keep)
        return (jac, aux) if has_aux else jac
    return wrapper


def _reverse_jacobian(out, inputs, create_graph):
    """d out / d input for each input, of shape out.shape + input.shape: one backward per element of out."""
    n = out.numel()
    shapes = [tuple(out.shape) + tuple(i.shape) for i in inputs]
    if n == 0 or not out.requires_grad:
        return [_ops.zeros(s, dtype=i.dtype, device=i.device) for s, i in zip(shapes, inputs)]
    rows = [[] for _ in inputs]
    for k in range(n):
        seed = _ops.zeros(n, dtype=out.dtype, device=out.device)
        seed[k] = 1
        for row, g in zip(rows, _grads([out], inputs, [seed.reshape(tuple(out.shape))], create_graph)):
            row.append(g)
    return [_ops.stack(row, 0).reshape(s) for row, s in zip(rows, shapes)]


# --- forward products ---------------------------------------------------------------------------

class _ForwardProducts:
    """J t for the graph from `inputs` to `outputs`, for any number of tangents t: one backward pass
    g = J^T u with a symbolic cotangent u, then one backward of <g, t> with respect to u per tangent."""

    def __init__(self, outputs, inputs, fresh, strict=False):
        self.outputs, self.fresh = outputs, fresh
        self.diff = [k for k, o in enumerate(outputs) if o.requires_grad]
        if strict and len(self.diff) < len(outputs):
            raise RuntimeError("jvp(f, primals, tangents, strict=True): The output of f is independent of the "
                               "inputs. This is not allowed with strict=True.")
        self.us = [_ops.zeros_like(outputs[k]).requires_grad_(True) for k in self.diff]
        self.vjps = [None] * len(inputs)
        if self.diff:
            self.vjps = _autograd_grad([outputs[k] for k in self.diff], inputs, self.us, retain_graph=True,
                                       create_graph=True, allow_unused=True)
        # A vjp recorded without a path to u (the backward of floor, sign, comparisons, ... is a constant
        # zero) contributes nothing to J t. This relies on backward formulas being differentiable, which
        # gradgradcheck holds Ember's ops to.
        self.vjps = [g if g is not None and g.requires_grad else None for g in self.vjps]
        self.outside = _reaches_outside(outputs, fresh)

    def __call__(self, tangents, keep_graph):
        """Output tangents for input tangents (None: zero); kept differentiable if keep_graph allows."""
        result = [_ops.zeros_like(o) for o in self.outputs]
        pairs = [(g, t) for g, t in zip(self.vjps, tangents) if g is not None and t is not None]
        if pairs:
            create = keep_graph and (self.outside or any(t.requires_grad for _, t in pairs))
            jv = _autograd_grad([g for g, _ in pairs], self.us, [t for _, t in pairs], retain_graph=True,
                                create_graph=create, allow_unused=True)
            for k, j in zip(self.diff, jv):
                if j is not None:
                    result[k] = j
        return _release(result, self.fresh + self.us, keep_graph)


def _check_primals_and_tangents(flat_primals, flat_tangents):
    for name, flat in (("primals", flat_primals), ("tangents", flat_tangents)):
        if not flat:
            raise RuntimeError(f"{_JVP}: Expected {name} to contain at least one Tensor.")
        for x in flat:
            if not _is_tensor(x):
                raise RuntimeError(f"{_JVP}: Expected {name} to only contain Tensors, got {type(x)}")
    for p, t in zip(flat_primals, flat_tangents):
        _check_dual(p, t)


def _check_dual(p, t):
    if not p.is_floating_point():
        raise ValueError(f"Expected primal to be floating point or complex, but got: {p.dtype}")
    if not t.is_floating_point():
        raise ValueError(f"Expected tangent to be floating point or complex, but got: {t.dtype}")
    if tuple(t.shape) != tuple(p.shape):
        raise RuntimeError("Trying to set a forward gradient that has a different size than that of the original "
                           f"Tensor, this is not supported. Tensor is of size {list(p.shape)} while the given forward "
                           f"gradient is of size {list(t.shape)}.")


def jvp(func, primals, tangents, *, strict=False, has_aux=False):
    """(func(*primals), J tangents[, aux]): the Jacobian-vector product of func at primals (a tuple)."""
    if not isinstance(primals, tuple):
        raise RuntimeError(f"{_JVP}: Expected primals to be a tuple. E.g. it should be valid to call f(*primals).")
    flat_p, p_spec = tree_flatten(primals)
    flat_t, t_spec = tree_flatten(tangents)
    if p_spec != t_spec:
        raise RuntimeError(f"{_JVP}: Expected primals and tangents to have the same python structure. For example, "
                           "if primals is a tuple of 3 tensors, tangents also must be. Got primals with structure "
                           f"{p_spec} and tangents with structure {t_spec}")
    _check_primals_and_tangents(flat_p, flat_t)
    keep, fresh = _C.is_grad_enabled(), []
    with enable_grad():
        lifted = [_lift(p, fresh) for p in flat_p]
        out, aux = _split_aux(func(*tree_unflatten(lifted, p_spec)), has_aux, _JVP)
        flat_out, out_spec = tree_flatten(out)
        _check_outputs(flat_out, _JVP, out)
        products = _ForwardProducts(flat_out, lifted, fresh, strict)
        tangents_out = products([t.to(p.dtype) for t, p in zip(flat_t, flat_p)], keep)
        # forward-mode AD computes in the tangents' precision: a float64 tangent gives a float64 result
        wide = functools.reduce(_C.promote_types, [t.dtype for t in flat_t])
        tangents_out = [j.to(_C.promote_types(j.dtype, wide)) if j.is_floating_point() and o.requires_grad else j
                        for j, o in zip(tangents_out, flat_out)]
    out, aux = _release((out, aux), fresh, keep)
    tangents_out = tree_unflatten(tangents_out, out_spec)
    return (out, tangents_out, aux) if has_aux else (out, tangents_out)


def linearize(func, *primals):
    """(func(*primals), jvp_fn): jvp_fn(*tangents) is the Jacobian-vector product at primals, reusing one
    recorded graph for every call. Outputs that are not tensors come back unchanged from jvp_fn."""
    keep, fresh = _C.is_grad_enabled(), []
    flat_p, p_spec = tree_flatten(primals)
    with enable_grad():
        lifted = [_lift(p, fresh) for p in flat_p]
        out = func(*tree_unflatten(lifted, p_spec))
        flat_out, out_spec = tree_flatten(out)
        tensor_outs = [k for k, o in enumerate(flat_out) if _is_tensor(o)]
        products = _ForwardProducts([flat_out[k] for k in tensor_outs], lifted, fresh)

    def jvp_fn(*tangents):
        flat_t, t_spec = tree_flatten(tangents)
        if t_spec != p_spec:
            raise RuntimeError(f"Expected the tangents {t_spec} to have the same argspec as the primals {p_spec}")
        for i, (t, p) in enumerate(zip(flat_t, flat_p)):
            if not _is_tensor(t):
                raise RuntimeError(f"Expected tangents to only contain Tensors, got {type(t)}")
            for what, got, want in (("shape", t.shape, p.shape), ("dtype", t.dtype, p.dtype)):
                if got != want:
                    raise RuntimeError(f"tangent:{i} with {what} {got} in flattened pytree doesn't match the {what} "
                                       f"{want} of the corresponding primal.")
        with enable_grad():
            result = list(flat_out)
            for k, j in zip(tensor_outs, products(flat_t, _C.is_grad_enabled() and keep)):
                result[k] = j
        return tree_unflatten(result, out_spec)

    return _release(out, fresh, keep), jvp_fn


def jacfwd(func, argnums=0, has_aux=False, *, randomness="error"):
    """Returns a function computing the Jacobian of `func` with respect to the arguments at `argnums`, one
    forward product per input element; same result layout as jacrev. randomness as in vmap: 'error'
    rejects a random op inside func."""
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        _check_randomness(randomness)
        nums = _check_argnums(argnums, len(args))
        flat_p, p_spec = tree_flatten(_slice(args, nums))
        for p in flat_p:
            if not _is_tensor(p):
                raise RuntimeError(f"{_JVP}: Expected primals to only contain Tensors, got {type(p)}")
            if not p.is_floating_point():
                raise ValueError(f"Expected primal to be floating point or complex, but got: {p.dtype}")
        keep, fresh = _C.is_grad_enabled(), []
        with enable_grad():
            lifted = [_lift(p, fresh) for p in flat_p]
            with _RandomnessGuard(randomness):
                out = func(*_replace(args, nums, tree_unflatten(lifted, p_spec)), **kwargs)
            out, aux = _split_aux(out, has_aux, _JVP)
            flat_out, out_spec = tree_flatten(out)
            _check_outputs(flat_out, _JVP, out)
            products = _ForwardProducts(flat_out, lifted, fresh)
            # columns[j][k]: the derivatives of output k along each element of input j
            columns = [[[] for _ in flat_out] for _ in lifted]
            for j, p in enumerate(lifted):
                n = p.numel()
                for e in range(n):
                    basis = _ops.zeros(n, dtype=p.dtype, device=p.device)
                    basis[e] = 1
                    tangents = [None] * len(lifted)
                    tangents[j] = basis.reshape(tuple(p.shape))
                    for col, d in zip(columns[j], products(tangents, keep)):
                        col.append(d)
            per_out = []
            for k, o in enumerate(flat_out):
                blocks = []
                for j, p in enumerate(lifted):
                    shape = tuple(o.shape) + tuple(p.shape)
                    cols = columns[j][k]
                    blocks.append(_ops.stack(cols, -1).reshape(shape) if cols else _ops.zeros(shape, dtype=o.dtype, device=o.device))
                per_out.append(tree_unflatten(blocks, p_spec))
            jac = tree_unflatten(per_out, out_spec)
        jac, aux = _release((jac, aux), fresh, keep)
        return (jac, aux) if has_aux else jac
    return wrapper


def hessian(func, argnums=0):
    """Returns a function computing the Hessian of `func` (scalar output) with respect to the arguments at
    `argnums`: jacfwd of jacrev."""
    return jacfwd(jacrev(func, argnums), argnums)
