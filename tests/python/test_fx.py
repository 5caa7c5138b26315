"""ember.fx: symbolic tracing, Graph editing and codegen, GraphModule, Interpreter/Transformer,
replace_pattern and ShapeProp. The first half runs on Ember alone; the second compares graphs and
results with torch.fx on the same small models (skipped without torch)."""
import copy
import operator

import numpy as np
import pytest

import ember
import ember.fx as fx
import ember.nn as nn
import ember.nn.functional as F
from ember.fx.passes.shape_prop import ShapeProp, TensorMetadata

try:
    import torch as _torch
    import torch.fx as _torch_fx
except ImportError:  # the comparisons below skip
    _torch = None


def wrapped_helper(x, k):
    """A module-level function that tracing records as a leaf call (fx.wrap)."""
    return x * k + len([k])


fx.wrap("wrapped_helper")
if _torch is not None:
    _torch_fx.wrap("wrapped_helper")


# ------------------------------------------------------------------ models, built for either library
def make_models(lib):
    nn_, F_ = lib.nn, lib.nn.functional

    class MLP(nn_.Module):
        def __init__(self):
            super().__init__()
            self.fc1 = nn_.Linear(8, 16)
            self.act = nn_.ReLU()
            self.fc2 = nn_.Linear(16, 4)

        def forward(self, x):
            return self.fc2(self.act(self.fc1(x)))

    class CNN(nn_.Module):
        def __init__(self):
            super().__init__()
            self.conv = nn_.Conv2d(3, 4, 3, padding=1)
            self.bn = nn_.BatchNorm2d(4)
            self.relu = nn_.ReLU()
            self.pool = nn_.MaxPool2d(2)
            self.flatten = nn_.Flatten()
            self.fc = nn_.Linear(4 * 4 * 4, 5)

        def forward(self, x):
            return self.fc(self.flatten(self.pool(self.relu(self.bn(self.conv(x))))))

    class Ops(nn_.Module):
        def __init__(self):
            super().__init__()
            self.w = nn_.Parameter(lib.randn(6, 6))
            self.register_buffer("scale", lib.ones(6))

        def forward(self, x, y):
            a = F_.relu(x) + y * 2
            b = lib.matmul(a, self.w)
            c = b.sigmoid().sum(dim=-1, keepdim=True)
            d = F_.softmax(b, dim=1) - c / 3
            e = lib.cat([d, x], dim=1)
            f = lib.flatten(e, 1).view(-1, 12)
            g = f[:, :6] * self.scale + lib.tanh(x).mean()
            return -g, abs(a) @ self.w.t()

    class Shapes(nn_.Module):
        def forward(self, x):
            n = x.shape[0]
            s = x.size(1)
            y = x.reshape(n, s // 2, 2)
            return y.permute(0, 2, 1)[0], x.dim()

    class MyLeaf(nn_.Module):
        def forward(self, x):
            return x * 3 - 1

    class WithLeaf(nn_.Module):
        def __init__(self):
            super().__init__()
            self.leaf = MyLeaf()
            self.lin = nn_.Linear(4, 4)

        def forward(self, x):
            return self.leaf(self.lin(x)) + self.leaf(x)

    class Concrete(nn_.Module):
        def forward(self, x, flag):
            if flag:
                return x + 1
            return x - 1

    class Wrapped(nn_.Module):
        def forward(self, x):
            return wrapped_helper(x, 2).relu()

    class Seq(nn_.Module):
        def __init__(self):
            super().__init__()
            self.layers = nn_.Sequential(nn_.Linear(4, 4), nn_.Tanh(), nn_.Linear(4, 2))

        def forward(self, x):
            return self.layers(x)

    return dict(MLP=MLP, CNN=CNN, Ops=Ops, Shapes=Shapes, WithLeaf=WithLeaf, Concrete=Concrete, Wrapped=Wrapped,
                Seq=Seq, MyLeaf=MyLeaf)


EM = make_models(ember)
INPUTS = {"MLP": [(5, 8)], "CNN": [(2, 3, 8, 8)], "Ops": [(3, 6), (3, 6)], "Shapes": [(3, 4)],
          "WithLeaf": [(2, 4)], "Concrete": [(2, 3)], "Wrapped": [(2, 3)], "Seq": [(3, 4)]}


class LeafTracer(fx.Tracer):
    def is_leaf_module(self, m, qualname):
        return type(m).__name__ == "MyLeaf" or super().is_leaf_module(m, qualname)


def _trace(name, models, fxmod):
    m = models[name]()
    m.eval()
    if name == "WithLeaf":
        tracer_cls = LeafTracer if fxmod is fx else _torch_leaf_tracer()
        tracer = tracer_cls()
        return m, fxmod.GraphModule(m, tracer.trace(m))
    if name == "Concrete":
        return m, fxmod.symbolic_trace(m, concrete_args={"flag": True})
    return m, fxmod.symbolic_trace(m)


def _random_inputs(name, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s).astype(np.float32) for s in INPUTS[name]]


def _close(a, b):
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(_close(x, y) for x, y in zip(a, b))
    if isinstance(a, ember.Tensor):
        return ember.allclose(a, b, rtol=1e-5, atol=1e-5)
    return a == b


# ------------------------------------------------------------------ Ember alone
@pytest.mark.parametrize("name", [n for n in INPUTS if n != "Concrete"])
def test_graph_module_matches_module(name):
    m, gm = _trace(name, EM, fx)
    args = [ember.from_numpy(a) for a in _random_inputs(name)]
    assert _close(gm(*args), m(*args))
    assert _close(fx.Interpreter(gm).run(*args), m(*args))
    gm.graph.lint()


def test_mlp_graph_and_code():
    m, gm = _trace("MLP", EM, fx)
    assert [(n.op, n.name, n.target) for n in gm.graph.nodes] == [
        ("placeholder", "x", "x"), ("call_module", "fc1", "fc1"), ("call_module", "act", "act"),
        ("call_module", "fc2", "fc2"), ("output", "output", "output")]
    assert gm.code == ("\n\n\ndef forward(self, x):\n    fc1 = self.fc1(x);  x = None\n"
                       "    act = self.act(fc1);  fc1 = None\n    fc2 = self.fc2(act);  act = None\n"
                       "    return fc2\n    ")
    assert str(gm.graph).startswith("graph():\n    %x : [num_users=1] = placeholder[target=x]")
    assert list(gm.state_dict()) == list(m.state_dict())
    assert "class MLP(ember.nn.Module)" in gm.print_readable(print_output=False)
    assert type(gm).__name__ == "MLP" and isinstance(gm, fx.GraphModule)


def test_names_and_operators():
    class M(nn.Module):
        def forward(self, x):
            a = x + 1
            b = ember.add(a, x)
            c = b.add(a)
            d = ember.relu(c).float()
            e = d.float()
            return max(1, 2), e + e, x[0:2, None]

    gm = fx.symbolic_trace(M())
    names = [n.name for n in gm.graph.nodes]
    assert names == ["x", "add", "add_1", "add_2", "relu", "float_1", "float_2", "add_3", "getitem", "output"]
    targets = {n.name: n.target for n in gm.graph.nodes}
    assert targets["add"] is operator.add and targets["add_1"] is ember.add and targets["add_2"] == "add"
    assert targets["getitem"] is operator.getitem
    assert "ember.relu(add_2)" in gm.code and "x[(slice(0, 2, None), None)]" in gm.code


def test_functional_calls_are_recorded():
    m, gm = _trace("Ops", EM, fx)
    calls = [n.target for n in gm.graph.nodes if n.op == "call_function"]
    assert F.relu in calls and F.softmax in calls and ember.matmul in calls and ember.cat in calls
    get_attrs = [n.target for n in gm.graph.nodes if n.op == "get_attr"]
    assert get_attrs == ["w", "scale"]
    # the patched functions are restored after tracing
    assert F.relu.__module__ == "ember.nn.functional" and not hasattr(F.relu, "__fx_orig__")


def test_control_flow_errors():
    class If(nn.Module):
        def forward(self, x):
            if x.sum() > 0:
                return x
            return -x

    class Len(nn.Module):
        def forward(self, x):
            return len(x)

    class Loop(nn.Module):
        def forward(self, x):
            return [t for t in x]

    with pytest.raises(fx.proxy.TraceError):
        fx.symbolic_trace(If())
    with pytest.raises(RuntimeError, match="'len' is not supported"):
        fx.symbolic_trace(Len())
    with pytest.raises(fx.proxy.TraceError):
        fx.symbolic_trace(Loop())
    assert issubclass(fx.proxy.TraceError, ValueError)


def test_concrete_args_and_wrap():
    m, gm = _trace("Concrete", EM, fx)
    x = ember.randn(2, 3)
    assert ember.allclose(gm(x, True), x + 1)
    assert [n.op for n in gm.graph.nodes].count("placeholder") == 2
    m, gm = _trace("Wrapped", EM, fx)
    node = next(n for n in gm.graph.nodes if n.op == "call_function")
    assert node.target is wrapped_helper and node.meta.get("is_wrapped")
    assert 'ember.fx._symbolic_trace.wrap("test_fx_wrapped_helper")' in gm.code


def test_custom_leaf_module():
    m, gm = _trace("WithLeaf", EM, fx)
    assert [n.target for n in gm.graph.nodes if n.op == "call_module"] == ["lin", "leaf", "leaf"]
    assert [n.name for n in gm.graph.nodes if n.op == "call_module"] == ["lin", "leaf", "leaf_1"]
    default = fx.symbolic_trace(EM["WithLeaf"]())
    assert [n.op for n in default.graph.nodes if n.op != "placeholder"].count("call_module") == 1


def test_sequential_is_traced_through_and_state_dict_names():
    m, gm = _trace("Seq", EM, fx)
    assert [n.target for n in gm.graph.nodes if n.op == "call_module"] == ["layers.0", "layers.1", "layers.2"]
    assert list(gm.state_dict()) == list(m.state_dict())
    assert 'getattr(self.layers, "0")' in gm.code


def test_graph_editing():
    m, gm = _trace("MLP", EM, fx)
    g = gm.graph
    act = next(n for n in g.nodes if n.op == "call_module" and n.target == "act")
    with pytest.raises(RuntimeError, match="users"):
        g.erase_node(act)
    with g.inserting_after(act):
        neg = g.call_function(ember.neg, (act,))
    act.replace_all_uses_with(neg)
    neg.args = (act,)  # replace_all_uses_with rewired neg itself too
    assert neg.all_input_nodes == [act] and list(act.users) == [neg]
    assert neg.prev is act and act.next is neg
    gm.recompile()
    x = ember.randn(3, 8)
    expected = m.fc2(ember.neg(m.act(m.fc1(x))))
    assert ember.allclose(gm(x), expected)
    # a node used before it is defined fails lint
    fc1 = next(n for n in g.nodes if n.target == "fc1")
    fc1.prepend(neg)
    with pytest.raises(RuntimeError, match="used before it has been defined"):
        g.lint()
    act.append(neg)
    g.lint()
    # dead code
    with g.inserting_before(neg):
        dead = g.call_method("sum", (act,))
    assert g.eliminate_dead_code() and dead not in list(g.nodes)
    g2 = copy.deepcopy(g)
    assert [n.name for n in g2.nodes] == [n.name for n in g.nodes]
    assert ember.allclose(fx.GraphModule(gm, g2)(x), expected)


def test_proxy_graph_building_and_dict_root():
    graph = fx.Graph()
    tracer = fx.proxy.GraphAppendingTracer(graph)
    x = fx.Proxy(graph.placeholder("x"), tracer)
    w = fx.Proxy(graph.get_attr("w"), tracer)
    out = ember.tanh(ember.cat([x, w])) * 2
    graph.output(out.node)
    gm = fx.GraphModule({"w": ember.ones(2, 3)}, graph)
    assert "cat = ember.cat([x, w])" in gm.code
    assert ember.allclose(gm(ember.zeros(1, 3)), ember.tanh(ember.cat([ember.zeros(1, 3), ember.ones(2, 3)])) * 2)
    assert fx.node.map_arg((x.node, [w.node, 3]), lambda n: n.name) == ("x", ["w", 3])


def test_transformer_and_interpreter_subclass():
    m, gm = _trace("Ops", EM, fx)

    class ReluToSigmoid(fx.Transformer):
        def call_function(self, target, args, kwargs):
            if target is F.relu:
                target = ember.sigmoid
            return super().call_function(target, args, kwargs)

    new = ReluToSigmoid(gm).transform()
    assert ember.sigmoid in [n.target for n in new.graph.nodes]
    x, y = ember.randn(3, 6), ember.randn(3, 6)
    a = ember.sigmoid(x) + y * 2
    assert ember.allclose(new(x, y)[1], abs(a) @ m.w.t(), atol=1e-5)

    class NegRelu(fx.Interpreter):
        def call_function(self, target, args, kwargs):
            if target is F.relu:
                return -F.relu(*args, **kwargs)
            return super().call_function(target, args, kwargs)

    out = NegRelu(gm).run(x, y)
    assert ember.allclose(out[1], abs(-F.relu(x) + y * 2) @ m.w.t(), atol=1e-5)
    env_list = [x, y]
    assert _close(fx.Interpreter(gm).boxed_run(env_list), gm(x, y)) and env_list == []


def test_replace_pattern():
    class M(nn.Module):
        def forward(self, x, w1, w2):
            m1 = ember.cat([ember.neg(w1), w2]).sum()
            m2 = ember.cat([ember.neg(w1), w2]).sum()
            return x + ember.max(m1) + ember.max(m2)

    def pattern(a1, a2):
        return ember.cat([ember.neg(a1), a2]).sum()

    def replacement(w1, w2):
        return ember.stack([w1, w2])

    gm = fx.symbolic_trace(M())
    matches = fx.replace_pattern(gm, pattern, replacement)
    assert len(matches) == 2 and all(isinstance(m, fx.subgraph_rewriter.Match) for m in matches)
    targets = [n.target for n in gm.graph.nodes if n.op == "call_function"]
    assert ember.neg not in targets and targets.count(ember.stack) == 2
    x, w1, w2 = ember.randn(3), ember.randn(3), ember.randn(3)
    assert ember.allclose(gm(x, w1, w2), x + 2 * ember.max(ember.stack([w1, w2])))
    gm.graph.lint()


def test_shape_prop():
    m, gm = _trace("CNN", EM, fx)
    x = ember.randn(2, 3, 8, 8)
    ShapeProp(gm).propagate(x)
    meta = {n.name: n.meta["tensor_meta"] for n in gm.graph.nodes if n.op != "output"}
    assert isinstance(meta["conv"], TensorMetadata)
    assert tuple(meta["conv"].shape) == (2, 4, 8, 8) and meta["pool"].shape == ember.Size([2, 4, 4, 4])
    assert meta["fc"].dtype == ember.float32 and tuple(meta["fc"].stride) == (5, 1)
    assert meta["fc"].requires_grad and meta["x"].memory_format == ember.contiguous_format


def test_print_tabular():
    gm = fx.symbolic_trace(EM["MLP"]())
    try:
        import tabulate  # noqa: F401
    except ImportError:
        with pytest.raises(ImportError):
            gm.graph.print_tabular()
    else:
        gm.graph.print_tabular()


# ------------------------------------------------------------------ compared with torch.fx
def _torch_leaf_tracer():
    class TorchLeafTracer(_torch_fx.Tracer):
        def is_leaf_module(self, m, qualname):
            return type(m).__name__ == "MyLeaf" or super().is_leaf_module(m, qualname)
    return TorchLeafTracer


# torch functions that are C builtins where Ember's are nn.functional Python functions
_TARGET_ALIASES = {"ember._C._nn.linear": "ember.nn.functional.linear"}


def _target_str(node):
    s = fx.Node._pretty_print_target(node.target) if node.op == "call_function" else node.target
    if node.op == "call_function" and not isinstance(node.target, str) and type(node).__module__.startswith("torch"):
        s = _torch_fx.Node._pretty_print_target(node.target)
    s = s.replace("torch", "ember")
    return _TARGET_ALIASES.get(s, s)


def _signature(gm):
    return [(n.op, n.name, _target_str(n)) for n in gm.graph.nodes]


def _copy_weights(tm, em):
    sd = {k: ember.from_numpy(v.detach().numpy().copy()) for k, v in tm.state_dict().items()}
    em.load_state_dict(sd)


@pytest.mark.parametrize("name", list(INPUTS))
def test_same_graph_as_torch(name):
    torch = pytest.importorskip("torch")
    TM = make_models(torch)
    torch.manual_seed(0)
    tm, tgm = _trace(name, TM, _torch_fx)
    em, egm = _trace(name, EM, fx)
    assert _signature(egm) == _signature(tgm)
    _copy_weights(tm, em)
    egm = fx.GraphModule(em, egm.graph) if name != "Concrete" else fx.symbolic_trace(em, concrete_args={"flag": True})
    np_args = _random_inputs(name, seed=1)
    extra = (True,) if name == "Concrete" else ()
    t_out = tgm(*[torch.from_numpy(a) for a in np_args], *extra)
    e_out = egm(*[ember.from_numpy(a) for a in np_args], *extra)

    def cmp(t, e):
        if isinstance(t, (tuple, list)):
            assert len(t) == len(e)
            for a, b in zip(t, e):
                cmp(a, b)
        elif isinstance(t, torch.Tensor):
            np.testing.assert_allclose(e.detach().numpy(), t.detach().numpy(), rtol=1e-4, atol=1e-5)
        else:
            assert t == e

    cmp(t_out, e_out)
    # Interpreter and ShapeProp agree too
    cmp(t_out, fx.Interpreter(egm).run(*[ember.from_numpy(a) for a in np_args], *extra))
    if name != "Concrete":
        from torch.fx.passes.shape_prop import ShapeProp as TShapeProp
        TShapeProp(tgm).propagate(*[torch.from_numpy(a) for a in np_args])
        ShapeProp(egm).propagate(*[ember.from_numpy(a) for a in np_args])
        t_meta = {n.name: n.meta.get("tensor_meta") for n in tgm.graph.nodes}
        e_meta = {n.name: n.meta.get("tensor_meta") for n in egm.graph.nodes}

        def meta_cmp(t, e):
            if isinstance(t, TensorMetadata.__mro__[0]) or hasattr(t, "shape"):
                assert tuple(t.shape) == tuple(e.shape) and str(t.dtype).split(".")[-1] == str(e.dtype).split(".")[-1]
                assert t.requires_grad == e.requires_grad and tuple(t.stride) == tuple(e.stride)
            elif isinstance(t, (tuple, list)):
                for a, b in zip(t, e):
                    meta_cmp(a, b)
            else:
                assert (t is None) == (e is None)

        for k in t_meta:
            meta_cmp(t_meta[k], e_meta[k])


def test_same_code_as_torch_for_simple_programs():
    torch = pytest.importorskip("torch")

    def prog(lib):
        def f(x, y):
            return lib.exp(lib.tan(x)) + y.float() * 2, lib.add(x, y), x.add(y)
        return f

    t_code = _torch_fx.symbolic_trace(prog(torch)).code
    e_code = fx.symbolic_trace(prog(ember)).code
    assert e_code == t_code.replace("torch", "ember")


def test_replace_pattern_like_torch():
    torch = pytest.importorskip("torch")

    def build(lib, fxmod):
        class M(lib.nn.Module):
            def forward(self, x, w1, w2):
                m1 = lib.cat([lib.neg(w1), w2]).sum()
                m2 = lib.cat([lib.neg(w1), w2]).sum()
                return x + lib.max(m1) + lib.max(m2)

        gm = fxmod.symbolic_trace(M())
        fxmod.replace_pattern(gm, lambda a1, a2: lib.cat([lib.neg(a1), a2]).sum(),
                              lambda w1, w2: lib.stack([w1, w2]))
        return gm

    t, e = build(torch, _torch_fx), build(ember, fx)
    assert [(n.op, _target_str(n)) for n in e.graph.nodes] == [(n.op, _target_str(n)) for n in t.graph.nodes]


def test_error_types_like_torch():
    torch = pytest.importorskip("torch")
    for lib, fxmod in ((torch, _torch_fx), (ember, fx)):
        class If(lib.nn.Module):
            def forward(self, x):
                return x if x.sum() > 0 else -x

        with pytest.raises(fxmod.proxy.TraceError):
            fxmod.symbolic_trace(If())
        gm = fxmod.symbolic_trace(make_models(lib)["MLP"]())
        with pytest.raises(RuntimeError):
            gm.graph.erase_node(next(iter(gm.graph.nodes)))


# ------------------------------------------------------------------ regressions
def _chain_model(lib):
    class Chain(lib.nn.Module):
        def forward(self, x, y):
            a = lib.relu(x + 1) * 2
            b = lib.relu(y + 1) * 2
            c = lib.relu(a + 1) * 2  # its input is the output of the first match
            return a + b + c

    return Chain()


def _chain_replace(lib, fxmod):
    gm = fxmod.symbolic_trace(_chain_model(lib))
    matches = fxmod.replace_pattern(gm, lambda x: lib.relu(x + 1) * 2, lambda x: lib.sigmoid(x) - 1)
    return gm, matches


def test_replace_pattern_chained_matches():
    gm, matches = _chain_replace(ember, fx)
    gm.graph.lint()
    x, y = ember.randn(3), ember.randn(3)
    a = ember.sigmoid(x) - 1
    assert ember.allclose(gm(x, y), a + (ember.sigmoid(y) - 1) + (ember.sigmoid(a) - 1))
    # the anchor is the pattern's node; the third match's input is the node that replaced the first
    assert len(matches) == 3 and all(m.anchor.graph is not gm.graph for m in matches)
    inputs = [next(v for k, v in m.nodes_map.items() if k.op == "placeholder") for m in matches]
    assert [n.name for n in inputs] == ["x", "y", "sub"] and all(n.graph is gm.graph for n in inputs)


def test_replace_pattern_chained_matches_like_torch():
    pytest.importorskip("torch")
    t_gm, t_matches = _chain_replace(_torch, _torch_fx)
    e_gm, e_matches = _chain_replace(ember, fx)
    assert e_gm.code == t_gm.code.replace("torch", "ember")
    assert [sorted((k.name, v.name) for k, v in m.nodes_map.items()) for m in e_matches] == \
        [sorted((k.name, v.name) for k, v in m.nodes_map.items()) for m in t_matches]


def test_dead_code_elimination_keeps_side_effects():
    class M(nn.Module):
        def forward(self, x, flag):
            return x + 1 if flag else x

    gm = fx.symbolic_trace(M(), concrete_args={"flag": True})
    g = gm.graph
    x = next(iter(g.nodes))
    with g.inserting_after(x):
        g.call_function(operator.setitem, (x, 0, 1.0))
        g.call_function(ember.rand_like, (x,))
        g.call_function(ember.neg, (x,))  # pure and unused: removed
    assert g.eliminate_dead_code()
    targets = [n.target for n in g.nodes if n.op == "call_function"]
    assert ember._assert in targets and operator.setitem in targets and ember.rand_like in targets
    assert ember.neg not in targets


def _tensor_lhs_model(lib):
    class TensorLhs(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("scale", lib.arange(4.0))
            self.table = lib.arange(12.0).reshape(3, 4)

        def forward(self, x):
            return self.scale * x, self.table[x.size(0)], self.table[1] > x, self.scale - x.sum()

    return TensorLhs()


def test_tensor_operator_with_proxy_operand():
    m = _tensor_lhs_model(ember)
    gm = fx.symbolic_trace(m)
    methods = [n.target for n in gm.graph.nodes if n.op == "call_method"]
    assert methods == ["mul", "size", "__getitem__", "gt", "sum", "sub"]
    x = ember.randn(2, 4)
    assert _close(gm(x), m(x))
    # the patch is undone after tracing
    assert "__mul__" not in vars(ember.Tensor) and "__getitem__" not in vars(ember.Tensor)
    assert (ember.ones(2) * ember.ones(2)).sum().item() == 2.0


def test_tensor_operator_with_proxy_operand_like_torch():
    pytest.importorskip("torch")
    t = _torch_fx.symbolic_trace(_tensor_lhs_model(_torch))
    e = fx.symbolic_trace(_tensor_lhs_model(ember))
    assert _signature(e) == _signature(t)
    assert e.code == t.code.replace("torch", "ember")


def test_graph_module_pickles():
    import io
    import pickle

    m, gm = _trace("CNN", EM, fx)
    x = ember.randn(2, 3, 8, 8)
    gm2 = pickle.loads(pickle.dumps(gm))
    assert isinstance(gm2, fx.GraphModule) and gm2.code == gm.code and ember.allclose(gm2(x), m(x), atol=1e-5)
    w = fx.symbolic_trace(EM["Wrapped"]())
    w2 = pickle.loads(pickle.dumps(w))
    node = next(n for n in w2.graph.nodes if n.op == "call_function")
    assert node.target is wrapped_helper and ember.allclose(w2(x), w(x))
    buf = io.BytesIO()
    ember.save(gm, buf)
    buf.seek(0)
    assert ember.allclose(ember.load(buf, weights_only=False)(x), m(x), atol=1e-5)


def _stored_functional_model(lib):
    import functools

    F_ = lib.nn.functional

    class Stored(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.act = F_.silu
            self.fns = {"relu": F_.relu, "interpolate": F_.interpolate}
            self.sm = functools.partial(F_.softmax, dim=-1)

        def forward(self, x):
            up = self.fns["interpolate"](x[None], scale_factor=2.0)
            return self.act(x) + self.fns["relu"](x) + self.sm(x), up

    return Stored()


def test_stored_references_to_functional_are_recorded():
    m = _stored_functional_model(ember)
    gm = fx.symbolic_trace(m)
    targets = [n.target for n in gm.graph.nodes if n.op == "call_function"]
    assert F.interpolate in targets and F.silu in targets and F.relu in targets and F.softmax in targets
    x = ember.randn(2, 3, 4)
    assert _close(gm(x), m(x))
    # the functions run their own code again after tracing
    assert all(f.__code__.co_filename.endswith(".py") for f in (F.silu, F.relu, F.softmax, F.interpolate))
    assert ember.allclose(F.relu(ember.tensor([-1.0, 2.0])), ember.tensor([0.0, 2.0]))


def test_stored_references_to_functional_like_torch():
    pytest.importorskip("torch")
    t = _torch_fx.symbolic_trace(_stored_functional_model(_torch))
    e = fx.symbolic_trace(_stored_functional_model(ember))
    assert _signature(e) == _signature(t)


def _tensor_to_model(lib):
    class TensorTo(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("pe", lib.arange(12.0).reshape(3, 4))

        def forward(self, x):
            return self.pe.to(x.dtype) + self.pe.type_as(x) + self.pe.to(x) + self.pe.to(x.device) * x

    return TensorTo()


def test_tensor_python_methods_with_proxy_argument():
    m = _tensor_to_model(ember)
    gm = fx.symbolic_trace(m)
    assert [n.target for n in gm.graph.nodes if n.op == "call_method"] == ["to", "type_as", "to", "to"]
    x = ember.randn(3, 4)
    assert ember.allclose(gm(x), m(x))
    assert ember.Tensor.to.__code__.co_filename.endswith(".py")


def test_tensor_python_methods_with_proxy_argument_like_torch():
    pytest.importorskip("torch")
    t = _torch_fx.symbolic_trace(_tensor_to_model(_torch))
    e = fx.symbolic_trace(_tensor_to_model(ember))
    assert _signature(e) == _signature(t) and e.code == t.code.replace("torch", "ember")
