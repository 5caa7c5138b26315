"""Autograd half of the generator: from each op's `grad:` formulas in ops.yaml, a Node subclass
(`ExpBackward0`, ...) saving only what its formulas name, and the ember::op wrapper that records it.

Formula language (C++ expressions, see csrc/ember/autograd/formulas.h for helpers):
  grad / grads      gradient of the (first) output / all output gradients
  <input>           an input tensor or argument, as saved; <input>_sizes, <input>_dtype, <input>_device,
                    <input>_strides, <input>_storage_offset its metadata
  result            the op's output (result0, result1 or the declared names for tuples)
"""
import re

# schema type -> (member type, local type, how to store from the argument `x`, how to read member `m`)
SAVED = {
    "Tensor": ("autograd::SavedVariable", "Tensor", "autograd::SavedVariable({x}, false)", "{m}.unpack(self_ptr)"),
    "Tensor?": ("autograd::SavedVariable", "Tensor", "autograd::SavedVariable({x}, false)", "{m}.unpack(self_ptr)"),
    "Tensor[]": ("std::vector<autograd::SavedVariable>", "std::vector<Tensor>", "autograd::save_list({x})",
                 "autograd::unpack_list({m}, self_ptr)"),
    "Scalar": ("Scalar", "Scalar", "{x}", "{m}"),
    "Scalar?": ("std::optional<Scalar>", "std::optional<Scalar>", "{x}", "{m}"),
    "int": ("int64_t", "int64_t", "{x}", "{m}"),
    "int?": ("std::optional<int64_t>", "std::optional<int64_t>", "{x}", "{m}"),
    "int[]": ("std::vector<int64_t>", "IntArrayRef", "{x}.vec()", "IntArrayRef({m})"),
    "int[]?": ("std::optional<std::vector<int64_t>>", "OptionalIntArrayRef",
               "({x} ? std::optional<std::vector<int64_t>>({x}->vec()) : std::nullopt)",
               "({m} ? OptionalIntArrayRef(IntArrayRef(*{m})) : std::nullopt)"),
    "float": ("double", "double", "{x}", "{m}"),
    "float?": ("std::optional<double>", "std::optional<double>", "{x}", "{m}"),
    "bool": ("bool", "bool", "{x}", "{m}"),
    "bool?": ("std::optional<bool>", "std::optional<bool>", "{x}", "{m}"),
    "str": ("std::string", "std::string_view", "std::string({x})", "std::string_view({m})"),
    "str?": ("std::optional<std::string>", "std::optional<std::string_view>",
             "({x} ? std::optional<std::string>(std::string(*{x})) : std::nullopt)",
             "({m} ? std::optional<std::string_view>(*{m}) : std::nullopt)"),
    "ScalarType": ("ScalarType", "ScalarType", "{x}", "{m}"),
    "ScalarType?": ("std::optional<ScalarType>", "std::optional<ScalarType>", "{x}", "{m}"),
}


def _wrapped(x):
    return f"{x}.impl()->is_wrapped_number()"


def _pow_names():
    return [(_wrapped("self"), "PowBackward2"), (_wrapped("exponent"), "PowBackward0"), (None, "PowBackward1")]


def _upsample_names(backward):
    """interpolate's node per mode and spatial rank (one op in Ember, one per mode and rank in
    PyTorch); backward: the node of its gradient's gradient (…BackwardBackward0)."""
    suffix = "BackwardBackward0" if backward else "Backward0"
    modes = [("area", 1, "Squeeze"), ("area", 2, "AdaptiveAvgPool2D"), ("area", 3, "AdaptiveAvgPool3D")]
    for k in (1, 2, 3):
        modes += [("nearest", k, f"UpsampleNearest{k}D"), ("nearest-exact", k, f"UpsampleNearestExact{k}D")]
    modes += [("bilinear-aa", 2, "UpsampleBilinear2DAa"), ("bicubic-aa", 2, "UpsampleBicubic2DAa"),
              ("linear", 1, "UpsampleLinear1D"), ("bilinear", 2, "UpsampleBilinear2D"),
              ("bicubic", 2, "UpsampleBicubic2D"), ("trilinear", 3, "UpsampleTrilinear3D")]
    out = []
    for mode, k, name in modes:
        full = "SqueezeBackward1" if name == "Squeeze" else name + suffix
        out.append((f'mode == "{mode}" && output_size.size() == {k}', full))
    out[-1] = (None, out[-1][1])
    return out


# PyTorch's names for the nodes of ops that PyTorch splits into overloads (numbered in its own
# order) or computes through another op. A string, or [(C++ condition, name), ..., (None, default)]
# chosen when the op is recorded (conditions see the op's arguments, and `result` for functional
# ops). Python numbers arrive as wrapped-number tensors, PyTorch's Scalar overloads. Hand-written
# PyTorch nodes have a C++ name (name() "torch::autograd::CopyBackwards", class CopyBackwards).
TORCH_NODE_NAMES = {
    "index_fill.int_Scalar": "IndexFillBackward0", "index_fill.int_Tensor": "IndexFillBackward1",
    "masked_fill": "MaskedFillBackward0", "masked_fill.Tensor": "MaskedFillBackward1",
    "scatter": "ScatterBackward0", "scatter.value": "ScatterBackward1",
    "normal.Tensor_float": "NormalBackward1", "normal.float_Tensor": "NormalBackward2",
    "normal.Tensor_Tensor": "NormalBackward3", "random_.to": "RandomBackward1",
    "square": "PowBackward0",
    "pow": _pow_names(),
    "float_power": _pow_names(),
    "true_divide": "DivBackward0",
    "div": [("rounding_mode.has_value()", "DivBackward2"), (None, "DivBackward0")],
    "sub": [(_wrapped("self"), "RsubBackward1"), (None, "SubBackward0")],
    "fmod": [(_wrapped("other"), "FmodBackward0"), (None, "FmodBackward1")],
    "remainder": [(_wrapped("other"), "RemainderBackward0"), (None, "RemainderBackward1")],
    "clamp": [(f"(!min.defined() || {_wrapped('min')}) && (!max.defined() || {_wrapped('max')})", "ClampBackward1"),
              (None, "ClampBackward0")],
    "clamp_min": [(_wrapped("min"), "ClampMinBackward0"), (None, "ClampMinBackward1")],
    "clamp_max": [(_wrapped("max"), "ClampMaxBackward0"), (None, "ClampMaxBackward1")],
    "lerp": [(_wrapped("weight"), "LerpBackward0"), (None, "LerpBackward1")],
    "round.decimals": "RoundBackward1",
    "max": "MaxBackward1", "max.dim": "MaxBackward0", "max.other": "MaximumBackward0",
    "min": "MinBackward1", "min.dim": "MinBackward0", "min.other": "MinimumBackward0",
    "sum.dim_IntList": "SumBackward1",
    "mean": [("dim.has_value()", "MeanBackward1"), (None, "MeanBackward0")],
    "prod.dim_int": "ProdBackward1",
    "norm": "LinalgVectorNormBackward0",
    "squeeze": [("!dim.has_value()", "SqueezeBackward0"), ("dim->size() == 1", "SqueezeBackward1"),
                (None, "SqueezeBackward2")],
    "flatten": "ViewBackward0", "unflatten": "ViewBackward0", "view_as": "ViewBackward0",
    "reshape": [("result.impl()->storage() == self.impl()->storage()", "ViewBackward0"), (None, "UnsafeViewBackward0")],
    "reshape_as": [("result.impl()->storage() == self.impl()->storage()", "ViewBackward0"),
                   (None, "UnsafeViewBackward0")],
    "movedim": "PermuteBackward0", "narrow": "SliceBackward0", "expand_as": "ExpandBackward0",
    "contiguous": "CloneBackward0", "to_dtype": "ToCopyBackward0", "copy_": "ember::autograd::CopyBackwards", "fill_": "FillBackward2",
    "chunk": "SplitBackward0", "split.sizes": "SplitWithSizesBackward0",
    "bernoulli": "BernoulliBackward0", "bernoulli_.float": "BernoulliBackward2",
    "bernoulli_": [(_wrapped("p"), "BernoulliBackward2"), (None, "BernoulliBackward1")],
    "random_": [("!to.has_value()", "RandomBackward2"), (None, "RandomBackward0")],
    "max_pool_with_indices": [("kernel_size.size() == 1", "SqueezeBackward1"),
                              ("kernel_size.size() == 2", "MaxPool2DWithIndicesBackward0"),
                              (None, "MaxPool3DWithIndicesBackward0")],
    "max_pool_with_indices_backward": [("self.dim() == 5", "MaxPool3DWithIndicesBackwardBackward0"),
                                       (None, "MaxPool2DWithIndicesBackwardBackward0")],
    "relu_backward": "ThresholdBackwardBackward0",
    "adaptive_max_pool_with_indices": [("output_size.size() == 1", "SqueezeBackward1"),
                                       ("output_size.size() == 2", "AdaptiveMaxPool2DBackward0"),
                                       (None, "AdaptiveMaxPool3DBackward0")],
    # in-place view ops: PyTorch's x.t_() / unsqueeze_ / ... nodes
    "t_": "TBackward1", "unsqueeze_": "UnsqueezeBackward1", "transpose_": "TransposeBackward1",
    "as_strided_": "AsStridedBackward1",
    "squeeze_": [("!dim.has_value()", "SqueezeBackward3"), ("dim->size() == 1", "SqueezeBackward4"),
                 (None, "SqueezeBackward5")],
    "cdist": [("p == 2 && x1.numel() && x2.numel() && (compute_mode == std::string_view(\"use_mm_for_euclid_dist\") || "
               "((!compute_mode || *compute_mode == \"use_mm_for_euclid_dist_if_necessary\") && "
               "(x1.size(-2) > 25 || x2.size(-2) > 25)))", "ViewBackward0"), (None, "CdistBackward0")],
    "upsample": _upsample_names(False), "upsample_backward": _upsample_names(True),
    "elu_": "EluBackward1", "leaky_relu_": "LeakyReluBackward1", "threshold_": "ThresholdBackward1",
    "linalg_inv": "LinalgInvExBackward0", "linalg_solve": "LinalgSolveExBackward0",
    "linalg_cholesky": "LinalgCholeskyExBackward0",
    "matmul": [("self.dim() == 1 && other.dim() == 1", "DotBackward0"), ("self.dim() == 2 && other.dim() == 1",
                                                                          "MvBackward0"),
               ("self.dim() == 1 && other.dim() == 2", "SqueezeBackward4"), ("self.dim() == 2 && other.dim() == 2",
                                                                             "MmBackward0"),
               ("self.dim() == 2", "CloneBackward0"), (None, "UnsafeViewBackward0")],
}


def torch_name(op, inplace=False):
    """The entry of TORCH_NODE_NAMES for op (inplace: for its op_ variant, key "name_", where
    PyTorch's in-place node differs, e.g. EluBackward1)."""
    key = op.name + ("." + op.overload if op.overload else "")
    if inplace and not op.is_self_inplace and key + "_" in TORCH_NODE_NAMES:
        return TORCH_NODE_NAMES[key + "_"]
    return TORCH_NODE_NAMES.get(key)


def name_statement(op, indent="  ", inplace=False):
    """Sets the node's name per call, for ops whose PyTorch name depends on the arguments."""
    spec = torch_name(op, inplace)
    if isinstance(spec, str) and spec != torch_name(op):
        return [f'{indent}node->name_ = "{spec}";']
    if not isinstance(spec, list):
        return []
    expr = f'"{spec[-1][1]}"'
    for cond, name in reversed(spec[:-1]):
        expr = f'({cond}) ? "{name}" : {expr}'
    return [f"{indent}node->name_ = {expr};"]


def camel(name):
    # PyTorch title-cases each part: log1p -> Log1P, im2col -> Im2Col, max_pool2d -> MaxPool2D
    return "".join(p.title() for p in name.split("_") if p)


def uses(formulas, name):
    return any(re.search(rf"\b{re.escape(name)}\b", f) for f in formulas)


def tensor_inputs(op):
    return [p for p in op.params if p.type in ("Tensor", "Tensor?", "Tensor[]")]


def output_names(op):
    r = op.ret
    if r.startswith("("):
        names = op.tuple_field_names() or [f"result{i}" for i in range(len(r.strip('()').split(',')))]
        return names
    return ["result"]


def assign_node_names(ops):
    counts = {}
    for op in ops:
        if op.entry.get("grad"):
            key = op.name.rstrip("_")  # bernoulli_ and bernoulli share a name family
            i = counts.get(key, 0)
            counts[key] = i + 1
            op.node = f"{op.entry.get('node', camel(key))}Backward{i}"  # node: overrides PyTorch's spelling
        else:
            op.node = None


def gen_node(op):
    """The Node subclass of one op."""
    grads = op.entry["grad"]
    formulas = list(grads.values())
    members, saves, unpack, releases = [], [], [], []
    for p in op.params:
        if p.type in ("Generator?", "TensorOptions"):
            continue
        if uses(formulas, p.name):
            mt, lt, store, read = SAVED[p.type]
            members.append(f"  {mt} {p.name}_;")
            unpack.append(f"    {lt} {p.name} = {read.format(m=p.name + '_')};")
            saves.append((p, "value"))
            if mt.startswith("autograd::SavedVariable"):
                releases.append(f"{p.name}_.reset();")
            elif mt.startswith("std::vector<autograd::SavedVariable>"):
                releases.append(f"for (auto& v : {p.name}_) v.reset();")
        if p.type in ("Tensor", "Tensor?") and uses(formulas, p.name + "_sizes"):
            members.append(f"  DimVector {p.name}_sizes_;")
            unpack.append(f"    IntArrayRef {p.name}_sizes = {p.name}_sizes_;")
            saves.append((p, "sizes"))
        if p.type in ("Tensor", "Tensor?") and uses(formulas, p.name + "_strides"):
            members.append(f"  DimVector {p.name}_strides_;")
            unpack.append(f"    IntArrayRef {p.name}_strides = {p.name}_strides_;")
            saves.append((p, "strides"))
        if p.type in ("Tensor", "Tensor?") and uses(formulas, p.name + "_storage_offset"):
            members.append(f"  int64_t {p.name}_storage_offset_ = 0;")
            unpack.append(f"    int64_t {p.name}_storage_offset = {p.name}_storage_offset_;")
            saves.append((p, "storage_offset"))
        if p.type in ("Tensor", "Tensor?") and uses(formulas, p.name + "_dtype"):
            members.append(f"  ScalarType {p.name}_dtype_ = kFloat;")
            unpack.append(f"    ScalarType {p.name}_dtype = {p.name}_dtype_;")
            saves.append((p, "dtype"))
        if p.type in ("Tensor", "Tensor?") and uses(formulas, p.name + "_device"):
            members.append(f"  Device {p.name}_device_;")
            unpack.append(f"    Device {p.name}_device = {p.name}_device_;")
            saves.append((p, "device"))
        if p.type == "Tensor[]" and uses(formulas, p.name + "_sizes"):
            members.append(f"  std::vector<std::vector<int64_t>> {p.name}_sizes_;")
            unpack.append(f"    const std::vector<std::vector<int64_t>>& {p.name}_sizes = {p.name}_sizes_;")
            saves.append((p, "list_sizes"))
    outs = output_names(op)
    out_saves = []
    for i, n in enumerate(outs):
        if uses(formulas, n):
            members.append(f"  autograd::SavedVariable {n}_;")
            unpack.append(f"    Tensor {n} = {n}_.unpack(self_ptr);")
            releases.append(f"{n}_.reset();")
            out_saves.append((i, n))
    op.saves, op.out_saves = saves, out_saves

    # gradient slots: one per tensor input (a Tensor[] expands to its elements)
    # head: the early return when no gradient arrived (before unpacking the saved tensors)
    head, body = [], []
    multi = len(outs) > 1 or op.ret == "Tensor[]"
    if multi:
        head.append("    bool any_ = false;\n    for (auto& g : grads) any_ = any_ || g.defined();")
        head.append("    if (!any_) return out;")
        if uses(formulas, "grad"):  # formulas over several outputs may read only grads[i]
            head.append("    const Tensor& grad = grads[0];")
    elif op.entry.get("complex") == "holomorphic":
        # an analytic op's formula g * f'(z) becomes PyTorch's g * conj(f'(z)) for complex numbers as
        # conj(formula(conj(g))): exact for formulas linear in g, as every gradient is
        head.append("    if (!grads[0].defined()) return out;\n"
                    "    const bool conj_ = is_complex(grads[0].dtype());\n"
                    "    const Tensor grad = conj_ ? grads[0].conj_physical() : grads[0];")
    else:
        head.append("    const Tensor& grad = grads[0];\n    if (!grad.defined()) return out;")
    slot = "0"
    slots = {}
    for p in tensor_inputs(op):
        slots[p.name] = slot
        f = grads.get(p.name)
        if p.type == "Tensor[]":
            if f:
                body.append(f"    {{\n      auto gs = {f};\n      for (size_t i = 0; i < gs.size(); i++)"
                            f" if (should_compute({slot} + i)) out[{slot} + i] = gs[i];\n    }}")
            slot = f"{slot} + n_{p.name}_"
            members.append(f"  size_t n_{p.name}_ = 0;")
            continue
        if f:
            body.append(f"    if (should_compute({slot})) out[{slot}] = {f};")
        slot = f"{slot} + 1" if slot != "0" else "1"
    # "input, weight, bias: f(...)" computes several gradients at once (a tuple); output_mask says
    # which of them are wanted
    for key, f in grads.items():
        if "," not in key:
            continue
        names = [k.strip() for k in key.split(",")]
        conds = " || ".join(f"should_compute({slots[n]})" for n in names)
        mask = ", ".join(f"should_compute({slots[n]})" for n in names)
        assign = "\n".join(f"      if (should_compute({slots[n]})) out[{slots[n]}] = std::get<{i}>(r_);"
                           for i, n in enumerate(names))
        body.append(f"    if ({conds}) {{\n      std::array<bool, {len(names)}> output_mask{{{mask}}};\n"
                    f"      (void)output_mask;\n      auto r_ = {f};\n{assign}\n    }}")
    release = (" ".join(releases)) if releases else ""
    conj_tail = ""
    if op.entry.get("complex") == "holomorphic" and not multi:
        conj_tail = ("\n    if (conj_)\n      for (auto& g : out)\n"
                     "        if (g.defined() && is_complex(g.dtype())) g = g.conj_physical();")
    spec = torch_name(op)
    name_expr = f'"{op.node}"'
    if spec is not None or torch_name(op, inplace=True) is not None:
        default = op.node if spec is None else spec if isinstance(spec, str) else spec[-1][1]
        members.append(f'  const char* name_ = "{default}";')
        name_expr = "name_"
    return f"""struct {op.node} : autograd::Node {{
{chr(10).join(members)}
  std::string name() const override {{ return {name_expr}; }}
  void release_variables() override {{ {release} }}
  autograd::variable_list apply(autograd::variable_list&& grads) override {{
    autograd::variable_list out(next_edges.size());
    auto self_ptr = shared_from_this();
    (void)self_ptr;
{chr(10).join(head)}
{chr(10).join(unpack)}
{chr(10).join(body)}{conj_tail}
    return out;
  }}
}};
"""


def edges_expr(op):
    singles = [p.name for p in op.params if p.type in ("Tensor", "Tensor?")]
    lists = [p.name for p in op.params if p.type == "Tensor[]"]
    return singles, lists


def rec_expr(op):
    singles, lists = edges_expr(op)
    parts = []
    if singles:
        parts.append("autograd::any_requires_grad({" + ", ".join(f"&{n}" for n in singles) + "})")
    for n in lists:
        parts.append(f"autograd::any_requires_grad_list({n})")
    return " || ".join(parts) or "false"


def record_node(op, indent="  ", inplace=False):
    """Statements creating and filling the node before the forward runs."""
    singles, lists = edges_expr(op)
    s = [f"auto node = std::make_shared<autograd::generated::{op.node}>();"]
    # edges in parameter order; consecutive single tensors in one call (one allocation per vector)
    run = []

    def flush():
        if run:
            s.append(f"autograd::collect_next_edges(*node, {{{', '.join('&' + n for n in run)}}});")
            run.clear()
    for p in op.params:
        if p.type in ("Tensor", "Tensor?"):
            run.append(p.name)
            continue
        flush()
        if p.type == "Tensor[]":
            s.append(f"autograd::collect_next_edges_list(*node, {p.name});")
            if any(p2.name == p.name for p2 in op.params):
                s.append(f"node->n_{p.name}_ = {p.name}.size();")
    flush()
    for p, kind in op.saves:
        if kind == "value":
            store = SAVED[p.type][2].format(x=p.name)
            if inplace and p.name == "self" and p.type == "Tensor":
                # the formula needs self's value from before the in-place op
                store = "autograd::SavedVariable(self.clone(), false)"
            s.append(f"node->{p.name}_ = {store};")
        elif kind == "sizes":
            s.append(f"node->{p.name}_sizes_ = DimVector({p.name}.sizes());")
        elif kind == "dtype":
            s.append(f"node->{p.name}_dtype_ = {p.name}.dtype();")
        elif kind == "device":
            s.append(f"node->{p.name}_device_ = {p.name}.device();")
        elif kind == "strides":
            s.append(f"node->{p.name}_strides_ = DimVector({p.name}.strides());")
        elif kind == "storage_offset":
            s.append(f"node->{p.name}_storage_offset_ = {p.name}.storage_offset();")
        elif kind == "list_sizes":
            s.append(f"for (auto& t_ : {p.name}) node->{p.name}_sizes_.push_back(t_.sizes().vec());")
    return [indent + x for x in s]


def save_outputs(op, result_expr, indent="  "):
    s = []
    outs = output_names(op)
    for i, n in op.out_saves:
        e = result_expr if len(outs) == 1 else f"std::get<{i}>({result_expr})"
        s.append(f"{indent}node->{n}_ = autograd::SavedVariable({e}, true);")
    return s


def set_history(op, result_expr, indent="  "):
    outs = output_names(op)
    if op.ret == "Tensor[]":
        return [f"{indent}autograd::set_history({result_expr}, node);"]
    if len(outs) > 1:
        return [f"{indent}autograd::set_history(std::get<{i}>({result_expr}), node, {i});" for i in range(len(outs))]
    return [f"{indent}autograd::set_history({result_expr}, node);"]


def is_view_op(op):
    """Returns a view of self: `-> Tensor(a)`, or (unbind, split, chunk) `Tensor(a) self -> Tensor[]`
    (PyTorch spells the latter `Tensor(a -> *) self -> Tensor(a)[]`)."""
    return op.is_view or (op.ret == "Tensor[]" and any(p.name == "self" for p in op.params)
                          and "Tensor(a) self" in op.entry["func"])


def view_marks(op, var, indent="  "):
    """Outputs of view ops become differentiable views of self (see autograd/node.h)."""
    if not is_view_op(op):
        return []
    if op.ret == "Tensor[]":
        # an output that is self itself (split of an empty dim) becomes a fresh view, as in PyTorch
        return [f"{indent}for (auto& v_ : {var}) {{",
                f"{indent}  if (v_.is_same(self)) v_ = make_view(self, self.sizes(), self.strides(), self.storage_offset());",
                f"{indent}  autograd::set_view_of(v_, self, true);",
                f"{indent}}}"]
    return [f"{indent}if ({var}.impl()->storage() == self.impl()->storage() && "
            f"!{var}.is_same(self)) autograd::set_view_of({var}, self);"]


def jvp_terms(op):
    """(input name, tangent expression) pairs: explicit `jvp:` entries, or for `jvp: auto` the
    backward formula with `grad` replaced by the input's tangent (valid for elementwise ops)."""
    j = op.entry.get("jvp")
    if not j:
        return []
    if j == "auto":
        return [(k, re.sub(r"\bgrad\b", f"{k}_t", v)) for k, v in op.entry["grad"].items()]
    return list(j.items())


def jvp_block(op, indent="  "):
    terms = jvp_terms(op)
    if not terms:
        return []
    names = [k for k, _ in terms]
    s = [f"{indent}if (autograd::fw_grad_active()) {{", f"{indent}  using namespace autograd;"]
    exprs = [e for _, e in terms]
    for p in op.params:
        if p.type in ("Tensor", "Tensor?"):
            if uses(exprs, p.name + "_dtype"):
                s.append(f"{indent}  ScalarType {p.name}_dtype = {p.name}.dtype();")
            if uses(exprs, p.name + "_sizes"):
                s.append(f"{indent}  IntArrayRef {p.name}_sizes = {p.name}.sizes();")
    for n in names:
        s.append(f"{indent}  Tensor {n}_t = autograd::fw_grad({n});")
    s.append(f"{indent}  if ({' || '.join(n + '_t.defined()' for n in names)}) {{")
    s.append(f"{indent}    Tensor tan_;")
    s.append(f"{indent}    {{")
    s.append(f"{indent}    FwGradPause pause_;")
    for n, e in terms:
        s.append(f"{indent}    if ({n}_t.defined()) tan_ = autograd::fw_add(tan_, {e});")
    s.append(f"{indent}    }}")
    s.append(f"{indent}    autograd::set_fw_grad(result, tan_);")
    s.append(f"{indent}  }}\n{indent}}}")
    return s


def functional_body(op, call):
    ret = op.cpp_ret()
    factory = any(p.type == "TensorOptions" for p in op.params)
    lines = []
    if op.node is None:
        if not is_view_op(op) and not factory:
            return [f"  return {call};"]
        lines.append(f"  {ret} result = {call};")
        lines += view_marks(op, "result")
        if factory:
            lines.append("  if (options.requires_grad_) {")
            lines.append("    EMBER_CHECK(is_differentiable_dtype(result.dtype()), "
                         "\"Only Tensors of floating point and complex dtype can require gradients\");")
            lines.append("    autograd::set_requires_grad(result, true);")
            lines.append("  }")
        lines.append("  return result;")
        return lines
    jvp = jvp_block(op, "    ")
    singles, _ = edges_expr(op)
    if not jvp and singles:
        lines.append("  if (autograd::fw_grad_active()) autograd::check_no_tangents({" +
                     ", ".join(f"&{n}" for n in singles) + f'}}, "{op.name}");')
    lines.append(f"  if (!({rec_expr(op)})) {{")
    if is_view_op(op) or jvp:
        if jvp and not is_view_op(op):
            lines.append(f"    if (!autograd::fw_grad_active()) return {call};")
        if jvp:
            lines.append(f"    {ret} result;")
            lines.append(f"    {{\n      autograd::FwGradPause pause_;\n      result = {call};\n    }}")
        else:
            lines.append(f"    {ret} result = {call};")
        lines += view_marks(op, "result", "    ")
        lines += jvp
        lines.append("    return result;")
    else:
        lines.append(f"    return {call};")
    lines.append("  }")
    lines += record_node(op)
    lines.append(f"  {ret} result;")
    lines.append(f"  {{\n    autograd::AutoGradMode no_grad_(false);\n    autograd::FwGradPause pause_;\n"
                 f"    result = {call};\n  }}")
    if ret == "Tensor" and any(p.name == "self" and p.type == "Tensor" for p in op.params):
        # ops that may return their input itself (contiguous, to, ...) add no history to it
        lines.append("  if (result.is_same(self)) return result;")
    lines += view_marks(op, "result")
    lines += name_statement(op)
    lines += set_history(op, "result")
    lines += save_outputs(op, "result")
    lines += jvp_block(op)
    lines.append("  return result;")
    return lines


def inplace_body(op, call):
    """Body of op_ (or of a self-mutating entry like copy_). An in-place view op (t_, unsqueeze_,
    ...) changes only self's geometry: self (a view or not) takes the op's node as its history
    and the base's history stays as it is, where a data-modifying op rebases the base's."""
    lines = [f"  const bool rec_ = {rec_expr(op)};", "  autograd::check_inplace(self, rec_);"]
    singles, _ = edges_expr(op)
    if singles:
        lines.append("  if (autograd::fw_grad_active() && (" + " || ".join(
            f"autograd::fw_grad({n}).defined()" for n in singles) + "))")
        shown = op.name if op.name.endswith("_") else op.name + "_"
        lines.append(f'    EMBER_FAIL(NotImplemented, "forward-mode AD through the in-place op {shown} is not '
                     f'supported yet; use the out-of-place {op.name.rstrip("_")}");')
    if op.node is None:
        lines.append(f"  {call};")
        lines.append("  return self;")
        return lines
    lines.append(f"  if (!rec_) {{\n    {call};\n    return self;\n  }}")
    lines += record_node(op, inplace=True)
    lines.append(f"  {{\n    autograd::AutoGradMode no_grad_(false);\n    {call};\n  }}")
    lines += name_statement(op, inplace=True)
    lines.append("  autograd::set_history(self, node);" if op.is_view else "  autograd::rebase_history(self, node);")
    lines += save_outputs(op, "self")
    lines.append("  return self;")
    return lines


def out_body(op, call):
    singles, lists = edges_expr(op)
    ins = ", ".join(f"&{n}" for n in singles)
    lines = []
    if singles:
        lines.append(f'  autograd::check_out_no_grad({{{ins}}}, "{op.name}");')
    lines.append(f"  return {call};")
    return lines
