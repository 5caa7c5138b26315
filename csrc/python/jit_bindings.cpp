// Python side of ember.jit: the tracer, graphs (run, JSON, files) and the hooks through which the
// Tensor type reports shape and value reads while a trace runs.
#include <nanobind/nanobind.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <optional>

#include "ember/jit/fuser/fuser.h"
#include "ember/jit/interpreter.h"
#include "ember/jit/serialize.h"
#include "ember/jit/tracer.h"
#include "python/arg_parser.h"
#include "python/bindings.h"

namespace nb = nanobind;

namespace ember::py {
namespace {

// Output nesting from Python: an int (value id), or ("tuple"|"list", [specs]).
jit::OutputSpec output_spec(nb::handle h) {
  jit::OutputSpec o;
  if (nb::isinstance<nb::int_>(h)) {
    o.value = nb::cast<int64_t>(h);
    return o;
  }
  nb::tuple t = nb::cast<nb::tuple>(h);
  std::string kind = nb::cast<std::string>(t[0]);
  o.kind = kind == "tuple" ? jit::OutputSpec::Kind::Tuple : jit::OutputSpec::Kind::List;
  for (nb::handle item : nb::cast<nb::list>(t[1])) o.items.push_back(output_spec(item));
  return o;
}

nb::object output_to_python(const jit::OutputSpec& o) {
  if (o.kind == jit::OutputSpec::Kind::Value) return nb::int_(o.value);
  nb::list items;
  for (const auto& s : o.items) items.append(output_to_python(s));
  return nb::make_tuple(o.kind == jit::OutputSpec::Kind::Tuple ? "tuple" : "list", items);
}

struct PyGraph {
  std::shared_ptr<jit::Graph> g;
};

std::vector<Tensor> tensors_of(nb::handle seq) {
  std::vector<Tensor> out;
  for (nb::handle h : seq) out.push_back(unpack(h.ptr()));
  return out;
}

nb::list wrap_all(const std::vector<Tensor>& ts) {
  nb::list l;
  for (const Tensor& t : ts) l.append(nb::steal(wrap(t)));
  return l;
}

// `with NoTrace():` nothing in the block is recorded (printing a tensor inside traced code).
struct NoTrace {
  std::optional<jit::TracePause> pause;
};

}  // namespace

void bind_jit(nb::module_& m) {
  nb::module_ j = m.def_submodule("_jit", "ember.jit's C++ half");
  nb::class_<jit::Tracer>(j, "Tracer")
      .def(nb::init<>())
      .def("add_input", [](jit::Tracer& t, nb::handle x, std::string name) { t.add_input(unpack(x.ptr()), std::move(name)); })
      .def("add_param", [](jit::Tracer& t, std::string name, nb::handle x) { t.add_param(std::move(name), unpack(x.ptr())); })
      .def("value_of", [](jit::Tracer& t, nb::handle x) { return t.value_of(unpack(x.ptr())); })
      .def_prop_ro("poisoned", &jit::Tracer::poisoned)
      .def("abort", &jit::Tracer::abort)
      .def("finish", [](jit::Tracer& t, nb::handle spec) {
        auto g = t.finish(output_spec(spec));
        jit::prepare(*g);
        return PyGraph{g};
      });

  nb::class_<PyGraph>(j, "Graph")
      .def("run", [](const PyGraph& self, nb::handle inputs) {
        std::vector<Tensor> ins = tensors_of(inputs);
        std::vector<Tensor> outs;
        {
          nb::gil_scoped_release release;
          outs = jit::run(*self.g, ins);
        }
        return wrap_all(outs);
      })
      .def("check_inputs", [](const PyGraph& self, nb::handle inputs) { jit::check_inputs(*self.g, tensors_of(inputs)); })
      .def("fused", [](const PyGraph& self) {
        // a copy with fusion groups: the traced graph itself stays as recorded (save, export)
        auto g = std::make_shared<jit::Graph>(*self.g);
        g->plan = nullptr;
        jit::fuser::fuse(*g);
        jit::prepare(*g);
        return PyGraph{g};
      })
      .def_prop_ro("num_fusion_groups", [](const PyGraph& self) {
        size_t n = 0;
        for (const auto& node : self.g->nodes) n += node.op == "prim::FusionGroup";
        return n;
      })
      .def("to_json", [](const PyGraph& self) { return jit::to_json(*self.g); })
      .def("save", [](const PyGraph& self, const std::string& path) { jit::save_graph(*self.g, path); })
      .def_prop_ro("output_spec", [](const PyGraph& self) { return output_to_python(self.g->output); })
      .def_prop_ro("static_shapes", [](const PyGraph& self) { return self.g->static_shapes; })
      .def_prop_ro("num_nodes", [](const PyGraph& self) { return self.g->nodes.size(); })
      .def_prop_ro("has_guards", [](const PyGraph& self) {
        for (const auto& n : self.g->nodes)
          if (n.op == "prim::guard_values") return true;
        return false;
      })
      .def_prop_ro("input_names", [](const PyGraph& self) {
        std::vector<std::string> names;
        for (const auto& in : self.g->inputs) names.push_back(in.name);
        return names;
      })
      .def("named_tensors", [](const PyGraph& self) {
        nb::dict d;
        for (const auto& p : self.g->params) d[nb::str(p.name.c_str())] = nb::steal(wrap(p.tensor));
        for (const auto& c : self.g->constants) d[nb::str(c.name.c_str())] = nb::steal(wrap(c.tensor));
        return d;
      })
      .def("param_names", [](const PyGraph& self) {
        std::vector<std::string> names;
        for (const auto& p : self.g->params) names.push_back(p.name);
        return names;
      })
      .def("rebind_params", [](PyGraph& self, nb::dict named) {
        // Parameters by reference again after ember.jit.load(..., module) or module.load_state_dict
        for (auto& p : self.g->params) {
          nb::str key(p.name.c_str());
          if (named.contains(key)) p.tensor = unpack(named[key].ptr());
        }
      });

  j.def("load", [](const std::string& path) { return PyGraph{jit::load_graph(path)}; });
  j.def("from_json", [](const std::string& text, nb::dict tensors) {
    std::map<std::string, Tensor> ts;
    for (auto kv : tensors) ts[nb::cast<std::string>(kv.first)] = unpack(kv.second.ptr());
    return PyGraph{jit::from_json(text, ts, "ember.jit graph")};
  });
  j.def("tracing", []() { return jit::tracing(); });
  j.def("values_read", [](nb::handle t, const char* what) { jit::on_values_read(unpack(t.ptr()), what); });
  j.def("shape_read", [](nb::handle t, const char* what) { jit::on_shape_read(unpack(t.ptr()), what); });
  j.def("untraceable", [](const std::string& why) { jit::on_untraceable(why); });
  nb::class_<NoTrace>(j, "NoTrace")
      .def(nb::init<>())
      .def("__enter__", [](NoTrace& self) { self.pause.emplace(); return &self; }, nb::rv_policy::reference)
      .def("__exit__", [](NoTrace& self, nb::args) { self.pause.reset(); });
}

}  // namespace ember::py
