// Python side of autograd: Tensor properties (requires_grad, grad, grad_fn, ...), grad_fn node
// objects, hooks, the engine entry points (run with the GIL released), grad modes, and PyNode:
// the graph node of a Python autograd.Function, whose backward calls back into Python.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <sstream>
#include <unordered_map>

#include "ember/autograd/engine.h"
#include "ember/autograd/node.h"
#include "ember/generated/ops.h"
#include "ember/sparse/sparse_tensor.h"
#include "python/arg_parser.h"
#include "python/bindings.h"

namespace nb = nanobind;
using namespace ember::autograd;

namespace ember::py {

namespace {

nb::object tensor_or_none(const Tensor& t) { return nb::steal(wrap(t)); }

// dtype names as PyTorch's messages print them: the C++ type, and the ScalarType
const char* cpp_type_name(ScalarType t) {
  static const char* n[] = {"unsigned char", "signed char", "short int", "int", "long int",
                            "c10::Half", "float", "double", "bool", "c10::BFloat16"};
  return n[int(t)];
}
const char* scalar_type_name(ScalarType t) {
  static const char* n[] = {"Byte", "Char", "Short", "Int", "Long", "Half", "Float", "Double", "Bool", "BFloat16"};
  return n[int(t)];
}

std::vector<Tensor> to_tensors(nb::handle seq) {
  std::vector<Tensor> r;
  for (nb::handle h : seq) r.push_back(h.is_none() ? Tensor() : unpack(h.ptr()));
  return r;
}

// Calls a Python hook fn(grad) -> Tensor | None, holding the GIL.
std::shared_ptr<TensorHook> make_py_hook(nb::handle fn) {
  auto ref = std::make_shared<PyRef>(fn);
  return std::make_shared<TensorHook>([ref](const Tensor& g) -> Tensor {
    nb::gil_scoped_acquire gil;
    nb::object r = nb::borrow(ref->obj)(tensor_or_none(g));
    if (r.is_none()) return Tensor();
    EMBER_CHECK_KIND(is_tensor(r.ptr()), Type, "hook should return None or a Tensor, got ", type_name(r.ptr()));
    return unpack(r.ptr());
  });
}

// ---------------------------------------------------------------- grad_fn objects
struct NodeRef {
  NodePtr node;
};

struct WeakNodeRef {
  std::weak_ptr<Node> node;
};

nb::object node_base_type;
std::unordered_map<std::string, nb::object> node_types;

nb::object wrap_node(const NodePtr& n) {
  if (!n) return nb::none();
  std::string name = n->name();
  auto it = node_types.find(name);
  if (it == node_types.end()) {
    // one Python class per node name, so type(t.grad_fn).__name__ == "MulBackward0" (a
    // hand-written node's class drops the C++ namespace: "ember::autograd::CopySlices" -> CopySlices)
    std::string cls = name.rfind("ember::autograd::", 0) == 0 ? name.substr(17) : name;
    nb::object t = nb::handle((PyObject*)&PyType_Type)(cls, nb::make_tuple(node_base_type), nb::dict());
    t.attr("__module__") = "ember.autograd.graph";
    it = node_types.emplace(name, t).first;
  }
  nb::object o = nb::inst_alloc(it->second);
  new (nb::inst_ptr<NodeRef>(o)) NodeRef{n};
  nb::inst_mark_ready(o);
  return o;
}

// ---------------------------------------------------------------- Python autograd.Function
class PyNode : public Node {
 public:
  std::shared_ptr<PyRef> ctx;  // the FunctionCtx (holds the Function class as ctx._fn_cls)
  std::string name_;
  std::vector<SavedVariable> saved;
  bool materialize_grads = true;
  std::string name() const override { return name_; }
  void release_variables() override {
    for (auto& s : saved) s.reset();
  }
  variable_list apply(variable_list&& grads) override {
    nb::gil_scoped_acquire gil;
    nb::handle c(ctx->obj);
    nb::list args;
    for (size_t i = 0; i < grads.size(); i++) {
      Tensor g = grads[i];
      if (!g.defined() && materialize_grads && i < output_meta.size()) g = zeros_for_output(i);
      args.append(tensor_or_none(g));
    }
    nb::object res;
    try {
      res = c.attr("_run_backward")(nb::tuple(args));
    } catch (nb::python_error& e) {
      throw;
    }
    variable_list out;
    if (!PyTuple_Check(res.ptr())) res = nb::make_tuple(res);
    nb::tuple t = nb::borrow<nb::tuple>(res);
    size_t n = t.size();
    // extra trailing Nones are allowed, as in PyTorch
    while (n > next_edges.size() && t[n - 1].is_none()) n--;
    EMBER_CHECK(n == next_edges.size(), "function ", name_, " returned an incorrect number of gradients (expected ",
                next_edges.size(), ", got ", n, ")");
    for (size_t i = 0; i < next_edges.size(); i++) {
      nb::handle h = t[i];
      if (h.is_none()) { out.push_back(Tensor()); continue; }
      EMBER_CHECK_KIND(is_tensor(h.ptr()), Type, "function ", name_, " returned a gradient of type ",
                       type_name(h.ptr()), " at position ", i, "; expected a Tensor or None");
      out.push_back(unpack(h.ptr()));
    }
    return out;
  }
};

// Connects a Function's outputs to a new PyNode. inputs: every forward argument (None for
// non-tensors); returns the outputs to hand back (inputs returned unchanged become aliases).
nb::tuple function_record(nb::handle ctx, nb::handle fn_name, nb::list inputs, nb::tuple outputs, nb::handle dirty,
                          nb::handle non_diff, nb::handle to_save, bool materialize) {
  auto node = std::make_shared<PyNode>();
  node->ctx = std::make_shared<PyRef>(ctx);
  node->name_ = nb::cast<std::string>(fn_name);
  node->materialize_grads = materialize;
  std::vector<Tensor> ins;
  for (nb::handle h : inputs) {
    if (!h.is_none() && is_tensor(h.ptr())) {
      const Tensor& t = unpack(h.ptr());
      ins.push_back(t);
      collect_next_edges(*node, {&t});
    } else {
      ins.push_back(Tensor());
      collect_next_edges(*node, {nullptr});
    }
  }
  auto contains = [](nb::handle seq, const Tensor& t) {
    if (seq.is_none()) return false;
    for (nb::handle h : seq)
      if (is_tensor(h.ptr()) && unpack(h.ptr()).is_same(t)) return true;
    return false;
  };
  nb::list result;
  std::vector<Tensor> outs;
  for (size_t i = 0; i < outputs.size(); i++) {
    nb::handle h = outputs[i];
    if (!is_tensor(h.ptr())) {
      result.append(h);
      outs.push_back(Tensor());
      node->output_meta.push_back({});
      continue;
    }
    Tensor t = unpack(h.ptr());
    nb::object pyout = nb::borrow(h);
    bool is_input = false;
    for (const Tensor& in : ins)
      if (in.defined() && in.is_same(t)) is_input = true;
    if (contains(non_diff, t)) {
      if (node->output_meta.size() <= i) node->output_meta.resize(i + 1);
      node->output_meta[i] = {DimVector(t.sizes()), t.dtype(), t.device()};
    } else if (contains(dirty, t)) {
      check_inplace(t, true);
      node->output_meta.resize(std::max(node->output_meta.size(), i + 1));
      if (auto* m = meta(t); m && m->is_view) rebase_history(t, node);
      else set_history(t, node, uint32_t(i));
    } else {
      if (is_input) {
        t = ember::alias(t);
        pyout = nb::steal(wrap(t));
      }
      set_history(t, node, uint32_t(i));
    }
    outs.push_back(t);
    result.append(pyout);
  }
  if (!to_save.is_none()) {
    for (nb::handle h : to_save) {
      if (h.is_none()) { node->saved.emplace_back(); continue; }
      const Tensor& t = unpack(h.ptr());
      bool is_out = false;
      for (const Tensor& o : outs)
        if (o.defined() && o.is_same(t)) is_out = true;
      node->saved.emplace_back(t, is_out);
    }
  }
  // weak: the node owns the ctx, a strong link back would make a cycle that nothing collects
  ctx.attr("_node") = nb::cast(WeakNodeRef{node});
  return nb::tuple(result);
}

}  // namespace

void bind_autograd(nb::module_& m) {
  // ---- grad_fn objects
  auto node_cls = nb::class_<NodeRef>(m, "_Node")
      .def("name", [](const NodeRef& n) { return n.node->name(); })
      .def_prop_ro("next_functions", [](const NodeRef& n) {
        nb::list l;
        for (auto& e : n.node->next_edges) l.append(nb::make_tuple(wrap_node(e.fn), e.input_nr));
        return nb::tuple(l);
      })
      .def("register_hook", [](const NodeRef& n, nb::handle fn) {
        auto ref = std::make_shared<PyRef>(fn);
        n.node->extras().post_hooks.push_back([ref](const variable_list& gin, const variable_list& gout) -> variable_list {
          nb::gil_scoped_acquire gil;
          nb::list a, b;
          for (auto& t : gin) a.append(tensor_or_none(t));
          for (auto& t : gout) b.append(tensor_or_none(t));
          nb::object r = nb::borrow(ref->obj)(nb::tuple(a), nb::tuple(b));
          if (r.is_none()) return {};
          return to_tensors(r);
        });
      })
      .def("register_prehook", [](const NodeRef& n, nb::handle fn) {
        auto ref = std::make_shared<PyRef>(fn);
        n.node->extras().pre_hooks.push_back([ref](const variable_list& gout) -> variable_list {
          nb::gil_scoped_acquire gil;
          nb::list b;
          for (auto& t : gout) b.append(tensor_or_none(t));
          nb::object r = nb::borrow(ref->obj)(nb::tuple(b));
          if (r.is_none()) return {};
          return to_tensors(r);
        });
      })
      .def_prop_ro("variable", [](const NodeRef& n) -> nb::object {
        auto* acc = dynamic_cast<AccumulateGrad*>(n.node.get());
        if (!acc) throw nb::attribute_error("'variable' is only available on AccumulateGrad nodes");
        return tensor_or_none(acc->variable);
      })
      .def("__getattr__", [](const NodeRef& n, const std::string& name) -> nb::object {
        // the node of a Python Function is also its ctx: grad_fn.saved_tensors, grad_fn.<attr>
        auto* py = dynamic_cast<PyNode*>(n.node.get());
        if (!py || name.rfind("__", 0) == 0) throw nb::attribute_error(name.c_str());
        if (name == "saved_tensors") {
          nb::list l;
          for (auto& s : py->saved) l.append(tensor_or_none(s.unpack(n.node)));
          return nb::tuple(l);
        }
        return nb::getattr(nb::handle(py->ctx->obj), name.c_str());
      })
      .def("_saved_tensors", [](const NodeRef& n) {
        auto* py = dynamic_cast<PyNode*>(n.node.get());
        EMBER_CHECK(py, "saved_tensors is only available on Python Function nodes");
        nb::list l;
        for (auto& s : py->saved) l.append(tensor_or_none(s.unpack(n.node)));
        return nb::tuple(l);
      })
      .def("__eq__", [](const NodeRef& a, nb::handle b) {
        return nb::isinstance<NodeRef>(b) && nb::cast<const NodeRef&>(b).node == a.node;
      }, nb::arg("other").none())
      .def("__hash__", [](const NodeRef& n) { return int64_t(uintptr_t(n.node.get()) >> 4); })
      .def("__repr__", [](const NodeRef& n) {
        char buf[64];
        std::snprintf(buf, sizeof(buf), " object at %p>", (void*)n.node.get());
        return "<" + n.node->name() + buf;
      });
  node_base_type = node_cls;
  nb::class_<WeakNodeRef>(m, "_WeakNode").def("_saved_tensors", [](const WeakNodeRef& w) {
    NodePtr n = w.node.lock();
    if (!n) fail_released();
    auto* py = static_cast<PyNode*>(n.get());
    nb::list l;
    for (auto& s : py->saved) l.append(tensor_or_none(s.unpack(n)));
    return nb::tuple(l);
  });

  // ---- Tensor properties
  nb::handle tcls = (PyObject*)tensor_type();
  auto getter = [](auto f) { return nb::cpp_function(f, nb::is_method()); };
  auto setter = [](auto f) { return nb::cpp_function(f, nb::is_method(), nb::arg("value").none()); };
  nb::object property = nb::module_::import_("builtins").attr("property");
  tcls.attr("requires_grad") = property(
      getter([](const Tensor& t) { return requires_grad(t); }),
      getter([](const Tensor& t, bool r) { set_requires_grad(t, r); }), nb::none(),
      "True when autograd records operations on this tensor (assignable on leaves).");
  tcls.attr("is_leaf") = property(getter([](const Tensor& t) { return is_leaf(t); }), nb::none(), nb::none(),
                                  "True for a tensor no recorded operation produced (backward fills its .grad).");
  tcls.attr("grad_fn") = property(getter([](const Tensor& t) {
    return wrap_node(ember::autograd::grad_fn(t));
  }), nb::none(), nb::none(), "The autograd node that produced this tensor, or None for a leaf.");
  tcls.attr("retains_grad") = property(getter([](const Tensor& t) {
    auto* mm = meta(t);
    return mm && mm->retained_grad != nullptr;
  }), nb::none(), nb::none(), "True when retain_grad() was called on this non-leaf tensor.");
  tcls.attr("_grad") = property(
      getter([](const Tensor& t) -> nb::object {
        auto* mm = meta(t);
        if (!mm) return nb::none();
        if (mm->retained_grad) return tensor_or_none(*mm->retained_grad);
        return tensor_or_none(mm->grad);
      }),
      setter([](const Tensor& t, nb::handle g) {
        if (g.is_none()) {
          if (auto* mm = meta(t)) {
            mm->grad = Tensor();
            if (mm->retained_grad) *mm->retained_grad = Tensor();
          }
          return;
        }
        EMBER_CHECK_KIND(is_tensor(g.ptr()), Type, "assigned grad expected to be a Tensor or None but got grad of type ",
                         type_name(g.ptr()));
        const Tensor& gt = unpack(g.ptr());
        auto want = leaf_grad_dtype(t);
        if (want && gt.dtype() != *want) {
          EMBER_FAIL(Runtime, "attempting to assign a gradient with dtype '", cpp_type_name(gt.dtype()),
                     "' to a tensor with grad_dtype '", scalar_type_name(*want), "'. The gradient must match the "
                     "tensor's grad_dtype (defaults to the tensor's dtype). You can set the tensor's grad_dtype "
                     "attribute with a specific dtype, or None to allow any dtype. Set grad_dtype with caution. "
                     "Diverging the dtypes of a tensor and its gradient may break downstream systems that assume they "
                     "match.");
        }
        if (gt.sizes() != t.sizes()) {
          std::ostringstream os;
          os << "attempting to assign a gradient of size '" << gt.sizes() << "' to a tensor of size '" << t.sizes()
             << "'. Please ensure that the gradient and the tensor are the same size";
          EMBER_FAIL(Runtime, os.str());
        }
        materialize_meta(t).grad = gt;
      }));
  tcls.attr("grad_dtype") = property(
      getter([](const Tensor& t) -> nb::object {
        EMBER_CHECK(is_leaf(t), "grad_dtype can only be accessed on leaf tensors.");
        auto d = leaf_grad_dtype(t);
        return d ? nb::borrow(wrap_dtype(*d)) : nb::none();
      }),
      setter([](const Tensor& t, nb::handle d) {
        EMBER_CHECK(is_leaf(t), "grad_dtype can only be set on leaf tensors.");
        EMBER_CHECK_KIND(d.is_none() || is_dtype(d.ptr()), Type, "grad_dtype must be a dtype or None, but got ",
                         type_name(d.ptr()));
        std::optional<ScalarType> want;
        if (!d.is_none()) want = unpack_dtype(d.ptr());
        auto& m = materialize_meta(t);
        if (want && m.grad.defined() && m.grad.dtype() != *want)
          EMBER_FAIL(Runtime, "Cannot set grad_dtype to '", scalar_type_name(*want), "' because there is already a "
                     "gradient with dtype '", cpp_type_name(m.grad.dtype()), "'. Please clear the gradient (.grad = None) "
                     "before changing grad_dtype, or ensure the new grad_dtype matches the existing gradient's dtype.");
        m.grad_dtype_set = true;
        m.grad_dtype = want;
      }), nb::none(),
      "The dtype a leaf's .grad is accumulated in: the tensor's dtype unless set; None keeps any dtype.");
  m.def("_tensor_data", [](const Tensor& t) {
    // shares storage, but not the version counter: changes through .data are invisible to autograd
    if (t.is_sparse()) {
      Tensor r = sparse::make_coo(sparse::impl_of(t).indices(), sparse::impl_of(t).values(), t.sizes(),
                                  sparse::impl_of(t).coalesced());
      return tensor_or_none(r);
    }
    Tensor r(make_intrusive<TensorImpl>(t.impl()->storage(), t.dtype(), t.sizes(), t.strides(), t.storage_offset()));
    r.impl()->set_math_bits(t.impl()->math_bits());
    return tensor_or_none(r);
  });
  m.def("_tensor_set_data", [](const Tensor& t, const Tensor& src) {
    EMBER_CHECK_KIND(!t.is_sparse() && !src.is_sparse(), NotImplemented,
                     "setting .data of or to a sparse COO tensor is not supported by Ember");
    t.impl()->set_storage(src.impl()->storage());
    t.impl()->set_dtype(src.dtype());
    t.impl()->set_sizes_and_strides(src.sizes(), src.strides(), src.storage_offset());
    t.impl()->set_math_bits(src.impl()->math_bits());
  });
  m.def("_detach", [](const Tensor& t) { return tensor_or_none(t.detach()); });
  m.def("_detach_", [](const Tensor& t) {
    if (auto* mm = meta(t)) {
      EMBER_CHECK(!mm->is_view, "Can't detach views in-place. Use detach() instead. If you are using "
                  "DistributedDataParallel (DDP) for training, and gradient_as_bucket_view is set as True, gradients "
                  "are views of DDP buckets, and hence detach_() cannot be called on these gradients. To fix this "
                  "error, please refer to the Optimizer.zero_grad() function in torch/optim/optimizer.py as the "
                  "solution.");
      mm->grad_fn.reset();
      mm->requires_grad = false;
      mm->is_view = false;
      mm->view_base = Tensor();
    }
  });
  m.def("_retain_grad", [](const Tensor& t) { t.retain_grad(); });
  m.def("_output_nr", [](const Tensor& t) {  // which output of its grad_fn t is (0 for leaves)
    ember::autograd::AutogradMeta* mm = ember::autograd::meta(t);
    return mm ? int64_t(mm->output_nr) : int64_t(0);
  }, "Which output of its grad_fn this tensor is (0 for leaves).");
  m.def("_register_hook", [](const Tensor& t, nb::handle fn) {
    EMBER_CHECK(requires_grad(t), "cannot register a hook on a tensor that doesn't require gradient");
    auto& mm = materialize_meta(t);
    auto hook = make_py_hook(fn);
    if (NodePtr gf = ember::autograd::grad_fn(t)) gf->extras().tensor_pre_hooks.push_back({mm.output_nr, hook});
    else mm.leaf_hooks.push_back(hook);
    return uintptr_t(hook.get());
  });
  m.def("_remove_hook", [](const Tensor& t, uintptr_t id) {
    auto* mm = meta(t);
    if (!mm) return;
    auto& lh = mm->leaf_hooks;
    lh.erase(std::remove_if(lh.begin(), lh.end(), [id](auto& h) { return uintptr_t(h.get()) == id; }), lh.end());
    if (NodePtr gf = ember::autograd::grad_fn(t)) {
      auto& ph = gf->extras().tensor_pre_hooks;
      ph.erase(std::remove_if(ph.begin(), ph.end(), [id](auto& h) { return uintptr_t(h.second.get()) == id; }), ph.end());
    }
  });
  m.def("_register_post_accumulate_grad_hook", [](nb::handle self, nb::handle fn) {
    const Tensor& t = unpack(self.ptr());
    EMBER_CHECK(is_leaf(t), "post accumulate grad hooks cannot be registered on non-leaf tensors");
    EMBER_CHECK(requires_grad(t), "cannot register a hook on a tensor that doesn't require gradient");
    auto ref = std::make_shared<PyRef>(fn);
    // a weak reference: the tensor's own hook must not keep the tensor alive
    auto selfref = std::make_shared<PyRef>(nb::module_::import_("weakref").attr("ref")(self));
    auto hook = std::make_shared<std::function<void(const Tensor&)>>([ref, selfref](const Tensor& v) {
      nb::gil_scoped_acquire gil;
      nb::object obj = nb::borrow(selfref->obj)();
      if (obj.is_none()) obj = tensor_or_none(v);
      nb::borrow(ref->obj)(obj);
    });
    materialize_meta(t).post_accumulate_hooks.push_back(hook);
    return uintptr_t(hook.get());
  });
  m.def("_remove_post_accumulate_grad_hook", [](const Tensor& t, uintptr_t id) {
    auto* mm = meta(t);
    if (!mm) return;
    auto& hs = mm->post_accumulate_hooks;
    hs.erase(std::remove_if(hs.begin(), hs.end(), [id](auto& h) { return uintptr_t(h.get()) == id; }), hs.end());
  });

  // ---- engine
  m.def("_set_multithreading_enabled", &autograd::set_multithreading_enabled);
  m.def("_is_multithreading_enabled", &autograd::multithreading_enabled);
  // a device worker keeps one Python thread state for its life (taken, then the GIL let go), so the hooks
  // it runs see their threading.local values from one call to the next, as on PyTorch's device threads
  autograd::set_device_thread_init(+[] {
    PyGILState_Ensure();
    PyEval_SaveThread();
  });
  m.def("_run_backward", [](nb::handle tensors, nb::handle grads, std::optional<bool> retain_graph, bool create_graph,
                            nb::handle inputs) {
    std::vector<Tensor> ts = to_tensors(tensors), gs = to_tensors(grads), ins = to_tensors(inputs);
    nb::gil_scoped_release nogil;
    backward(ts, gs, retain_graph, create_graph, ins);
  });
  m.def("_grad", [](nb::handle outputs, nb::handle inputs, nb::handle grad_outputs, std::optional<bool> retain_graph,
                    bool create_graph, bool allow_unused) {
    std::vector<Tensor> os = to_tensors(outputs), ins = to_tensors(inputs), gs = to_tensors(grad_outputs);
    std::vector<Tensor> r;
    {
      nb::gil_scoped_release nogil;
      r = grad(os, ins, gs, retain_graph, create_graph, allow_unused);
    }
    nb::list l;
    for (auto& t : r) l.append(tensor_or_none(t));
    return nb::tuple(l);
  });
  m.def("_function_record", &function_record, nb::arg("ctx"), nb::arg("name"), nb::arg("inputs"), nb::arg("outputs"),
        nb::arg("dirty").none(), nb::arg("non_diff").none(), nb::arg("to_save").none(), nb::arg("materialize"));

  // ---- forward AD
  m.def("_enter_dual_level", &enter_dual_level);
  m.def("_exit_dual_level", &exit_dual_level);
  m.def("_make_dual", [](const Tensor& t, const Tensor& tangent) {
    Tensor d = ember::alias(t);
    set_fw_grad(d, tangent);
    return tensor_or_none(d);
  });
  m.def("_unpack_dual", [](const Tensor& t) {
    Tensor tan = fw_grad(t);
    Tensor primal = make_view(t, t.sizes(), t.strides(), t.storage_offset());
    return nb::make_tuple(tensor_or_none(primal), tensor_or_none(tan));
  });

  // ---- modes
  m.def("is_grad_enabled", &grad_enabled, "True when autograd records operations (not inside no_grad).");
  m.def("_set_grad_enabled", &set_grad_enabled);
  m.def("is_inference_mode_enabled", &inference_mode_enabled, "True inside an inference_mode block.");
  m.def("_set_inference_mode", &set_inference_mode);
  m.def("is_anomaly_enabled", &anomaly_enabled);
  m.def("is_anomaly_check_nan_enabled", &anomaly_check_nan);
  m.def("_set_anomaly_enabled", &set_anomaly_enabled, nb::arg("enabled"), nb::arg("check_nan") = true);
  anomaly_hooks().stack = []() -> std::string {
    nb::gil_scoped_acquire gil;
    try {
      nb::object lines = nb::module_::import_("traceback").attr("format_stack")();
      return nb::cast<std::string>(nb::str("").attr("join")(lines));
    } catch (nb::python_error&) {
      return std::string();
    }
  };
  anomaly_hooks().report = [](const std::string& name, const std::string& stack) {
    nb::gil_scoped_acquire gil;
    std::string msg = "Error detected in " + name + ". Traceback of forward call that caused the error:\n" + stack;
    if (PyErr_WarnEx(PyExc_UserWarning, msg.c_str(), 1) < 0) PyErr_Clear();  // warnings as errors: keep the real one
  };
}

}  // namespace ember::py
