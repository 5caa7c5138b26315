// Graph <-> JSON and the graph file (see serialize.h and README.md).
#include "ember/jit/serialize.h"

#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>

#include "ember/core/error.h"
#include "ember/jit/interpreter.h"
#include "ember/serialize/json.h"
#include "ember/serialize/safetensors.h"

namespace ember::jit {
namespace {

constexpr int kVersion = 1;
const char* kMemoryFormats[] = {"contiguous_format", "preserve_format"};

ScalarType dtype_from_name(const std::string& name, const std::string& what) {
  for (int k = 0; k < int(ScalarType::Undefined); k++)
    if (name == dtype_name(ScalarType(k))) return ScalarType(k);
  EMBER_FAIL(Runtime, what, ": unknown dtype '", name, "'");
}

void write_ints(std::ostringstream& os, const std::vector<int64_t>& v) {
  os << '[';
  for (size_t k = 0; k < v.size(); k++) os << (k ? ", " : "") << v[k];
  os << ']';
}

void write_float(std::ostringstream& os, double f) {
  if (std::isnan(f)) os << "\"nan\"";
  else if (std::isinf(f)) os << (f > 0 ? "\"inf\"" : "\"-inf\"");
  else {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.17g", f);
    os << buf;
    if (std::string(buf).find_first_of(".eE") == std::string::npos) os << ".0";  // stays a float when read back
  }
}

void write_arg(std::ostringstream& os, const Arg& a) {
  switch (a.kind) {
    case Arg::Kind::None: os << "{\"none\": null}"; break;
    case Arg::Kind::Value: os << "{\"value\": " << a.i << "}"; break;
    case Arg::Kind::Values: os << "{\"values\": "; write_ints(os, a.ints); os << "}"; break;
    case Arg::Kind::Int: os << "{\"int\": " << a.i << "}"; break;
    case Arg::Kind::Ints: os << "{\"ints\": "; write_ints(os, a.ints); os << "}"; break;
    case Arg::Kind::Float: os << "{\"float\": "; write_float(os, a.f); os << "}"; break;
    case Arg::Kind::Bool: os << "{\"bool\": " << (a.b ? "true" : "false") << "}"; break;
    case Arg::Kind::Str: os << "{\"str\": "; json::write_string(os, a.s); os << "}"; break;
    case Arg::Kind::Dtype: os << "{\"dtype\": \"" << dtype_name(ScalarType(a.i)) << "\"}"; break;
    case Arg::Kind::Options:
      os << "{\"options\": {\"dtype\": ";
      if (a.i >= 0) os << '"' << dtype_name(ScalarType(a.i)) << '"';
      else os << "null";
      os << ", \"device\": ";
      json::write_string(os, a.s);
      os << ", \"requires_grad\": " << (a.b ? "true" : "false") << "}}";
      break;
    case Arg::Kind::MemoryFormat: os << "{\"memory_format\": \"" << kMemoryFormats[a.i] << "\"}"; break;
  }
}

void write_output(std::ostringstream& os, const OutputSpec& o) {
  if (o.kind == OutputSpec::Kind::Value) {
    os << "{\"value\": " << o.value << "}";
    return;
  }
  os << (o.kind == OutputSpec::Kind::Tuple ? "{\"tuple\": [" : "{\"list\": [");
  for (size_t k = 0; k < o.items.size(); k++) {
    if (k) os << ", ";
    write_output(os, o.items[k]);
  }
  os << "]}";
}

void write_graph(std::ostringstream& os, const Graph& g) {
  os << "{\"format\": \"ember.jit.graph\", \"version\": " << kVersion << ", \"num_values\": " << g.num_values;
  os << ",\n \"values\": [";
  for (size_t k = 0; k < g.values.size(); k++) {
    os << (k ? ", " : "") << "{\"dtype\": \"" << dtype_name(g.values[k].dtype) << "\", \"shape\": ";
    write_ints(os, g.values[k].shape);
    os << "}";
  }
  os << "],\n \"inputs\": [";
  for (size_t k = 0; k < g.inputs.size(); k++) {
    const InputSpec& in = g.inputs[k];
    os << (k ? ", " : "") << "{\"value\": " << in.value << ", \"name\": ";
    json::write_string(os, in.name);
    os << ", \"dtype\": \"" << dtype_name(in.dtype) << "\", \"shape\": ";
    write_ints(os, in.shape);
    os << ", \"requires_grad\": " << (in.requires_grad ? "true" : "false") << "}";
  }
  auto named = [&](const char* key, const std::vector<NamedTensor>& ts) {
    os << "],\n \"" << key << "\": [";
    for (size_t k = 0; k < ts.size(); k++) {
      os << (k ? ", " : "") << "{\"value\": " << ts[k].value << ", \"name\": ";
      json::write_string(os, ts[k].name);
      if (ts[k].tensor.defined() && ts[k].tensor.requires_grad()) os << ", \"requires_grad\": true";
      os << "}";
    }
  };
  named("params", g.params);
  named("constants", g.constants);
  os << "],\n \"nodes\": [";
  for (size_t k = 0; k < g.nodes.size(); k++) {
    const Node& n = g.nodes[k];
    os << (k ? ",\n  " : "\n  ") << "{\"op\": ";
    json::write_string(os, n.op);
    os << ", \"variant\": \""
       << (n.variant == Variant::Inplace ? "inplace" : n.variant == Variant::Out ? "out" : "functional")
       << "\", \"args\": [";
    for (size_t j = 0; j < n.args.size(); j++) {
      if (j) os << ", ";
      write_arg(os, n.args[j]);
    }
    os << "], \"outputs\": ";
    write_ints(os, n.outputs);
    if (n.subgraph) {
      os << ", \"subgraph\": ";
      write_graph(os, *n.subgraph);
    }
    os << "}";
  }
  os << "],\n \"output\": ";
  write_output(os, g.output);
  os << ",\n \"static_shapes\": " << (g.static_shapes ? "true" : "false") << ", \"static_shapes_reason\": ";
  json::write_string(os, g.static_shapes_reason);
  os << "}";
}

// ---------------------------------------------------------------- reading
class Reader {
 public:
  Reader(const std::map<std::string, Tensor>& tensors, const std::string& what) : tensors_(tensors), what_(what) {}

  std::shared_ptr<Graph> graph(const json::Json& j, int depth) {
    check(j.kind == json::Json::Obj, "a graph must be a JSON object");
    check(depth < 8, "fusion groups nest too deeply");
    const json::Json* fmt = j.find("format");
    check(fmt && fmt->kind == json::Json::Str && fmt->s == "ember.jit.graph", "not an ember.jit graph");
    int64_t version = integer(req(j, "version"));
    check(version == kVersion, "graph format version " + std::to_string(version) + " is not supported (this Ember reads " +
                                   std::to_string(kVersion) + ")");
    auto g = std::make_shared<Graph>();
    g->num_values = integer(req(j, "num_values"));
    check(g->num_values >= 0 && g->num_values < (int64_t(1) << 31), "bad num_values");
    const json::Json& values = array(req(j, "values"));
    check(int64_t(values.arr.size()) == g->num_values, "'values' does not have num_values entries");
    for (const auto& v : values.arr) g->values.push_back({dtype(req(v, "dtype")), ints(req(v, "shape"))});
    for (const auto& in : array(req(j, "inputs")).arr) {
      InputSpec s;
      s.value = integer(req(in, "value"));
      s.name = string(req(in, "name"));
      s.dtype = dtype(req(in, "dtype"));
      s.shape = ints(req(in, "shape"));
      s.requires_grad = boolean(req(in, "requires_grad"));
      g->inputs.push_back(std::move(s));
    }
    auto named = [&](const char* key, std::vector<NamedTensor>& out) {
      for (const auto& e : array(req(j, key)).arr) {
        NamedTensor t;
        t.value = integer(req(e, "value"));
        t.name = string(req(e, "name"));
        auto it = tensors_.find(t.name);
        check(it != tensors_.end(), "tensor '" + t.name + "' is missing from the file");
        t.tensor = it->second;
        if (const json::Json* rg = e.find("requires_grad"); rg != nullptr && boolean(*rg)) t.tensor.requires_grad_(true);
        out.push_back(std::move(t));
      }
    };
    named("params", g->params);
    named("constants", g->constants);
    for (const auto& jn : array(req(j, "nodes")).arr) {
      Node n;
      n.op = string(req(jn, "op"));
      std::string variant = string(req(jn, "variant"));
      check(variant == "functional" || variant == "inplace" || variant == "out", "unknown variant '" + variant + "'");
      n.variant = variant == "inplace" ? Variant::Inplace : variant == "out" ? Variant::Out : Variant::Functional;
      for (const auto& a : array(req(jn, "args")).arr) n.args.push_back(arg(a));
      n.outputs = ints(req(jn, "outputs"));
      if (const json::Json* sub = jn.find("subgraph")) n.subgraph = graph(*sub, depth + 1);
      g->nodes.push_back(std::move(n));
    }
    g->output = output(req(j, "output"), 0);
    g->static_shapes = boolean(req(j, "static_shapes"));
    g->static_shapes_reason = string(req(j, "static_shapes_reason"));
    return g;
  }

 private:
  void check(bool ok, const std::string& msg) const {
    if (!ok) EMBER_FAIL(Runtime, what_, ": invalid ember.jit graph: ", msg);
  }
  const json::Json& req(const json::Json& j, const char* key) const {
    check(j.kind == json::Json::Obj, std::string("expected an object holding '") + key + "'");
    const json::Json* v = j.find(key);
    check(v != nullptr, std::string("missing '") + key + "'");
    return *v;
  }
  const json::Json& array(const json::Json& j) const {
    check(j.kind == json::Json::Arr, "expected an array");
    return j;
  }
  int64_t integer(const json::Json& j) const {
    check(j.kind == json::Json::Int, "expected an integer");
    return j.i;
  }
  bool boolean(const json::Json& j) const {
    check(j.kind == json::Json::Bool, "expected true or false");
    return j.b;
  }
  std::string string(const json::Json& j) const {
    check(j.kind == json::Json::Str, "expected a string");
    return j.s;
  }
  double real(const json::Json& j) const {
    if (j.kind == json::Json::Int) return double(j.i);
    if (j.kind == json::Json::Float) return j.f;
    check(j.kind == json::Json::Str && (j.s == "nan" || j.s == "inf" || j.s == "-inf"), "expected a number");
    return j.s == "nan" ? NAN : j.s == "inf" ? INFINITY : -INFINITY;
  }
  std::vector<int64_t> ints(const json::Json& j) const {
    std::vector<int64_t> out;
    for (const auto& e : array(j).arr) out.push_back(integer(e));
    return out;
  }
  ScalarType dtype(const json::Json& j) const { return dtype_from_name(string(j), what_); }

  Arg arg(const json::Json& j) const {
    check(j.kind == json::Json::Obj && j.obj.size() == 1, "an argument must be an object with one key");
    const std::string& key = j.obj[0].first;
    const json::Json& v = j.obj[0].second;
    Arg a;
    if (key == "none") {
    } else if (key == "value") {
      a = Arg::value(integer(v));
    } else if (key == "values") {
      a.kind = Arg::Kind::Values;
      a.ints = ints(v);
    } else if (key == "int") {
      a = Arg::integer(integer(v));
    } else if (key == "ints") {
      a.kind = Arg::Kind::Ints;
      a.ints = ints(v);
    } else if (key == "float") {
      a = Arg::real(real(v));
    } else if (key == "bool") {
      a = Arg::boolean(boolean(v));
    } else if (key == "str") {
      a.kind = Arg::Kind::Str;
      a.s = string(v);
    } else if (key == "dtype") {
      a.kind = Arg::Kind::Dtype;
      a.i = int64_t(dtype(v));
    } else if (key == "options") {
      a.kind = Arg::Kind::Options;
      const json::Json& d = req(v, "dtype");
      a.i = d.kind == json::Json::Null ? -1 : int64_t(dtype(d));
      a.s = string(req(v, "device"));
      if (!a.s.empty()) (void)Device(a.s);  // validates the spelling now, not mid-run
      a.b = boolean(req(v, "requires_grad"));
    } else if (key == "memory_format") {
      a.kind = Arg::Kind::MemoryFormat;
      std::string s = string(v);
      a.i = -1;
      for (int k = 0; k < 2; k++)
        if (s == kMemoryFormats[k]) a.i = k;
      check(a.i >= 0, "unknown memory format '" + s + "'");
    } else {
      check(false, "unknown argument kind '" + key + "'");
    }
    return a;
  }

  OutputSpec output(const json::Json& j, int depth) const {
    check(j.kind == json::Json::Obj && j.obj.size() == 1 && depth < 32, "malformed output");
    OutputSpec o;
    const std::string& key = j.obj[0].first;
    if (key == "value") {
      o.value = integer(j.obj[0].second);
      return o;
    }
    check(key == "tuple" || key == "list", "malformed output");
    o.kind = key == "tuple" ? OutputSpec::Kind::Tuple : OutputSpec::Kind::List;
    for (const auto& e : array(j.obj[0].second).arr) o.items.push_back(output(e, depth + 1));
    return o;
  }

  const std::map<std::string, Tensor>& tensors_;
  const std::string& what_;
};

void collect_tensors(const Graph& g, TensorDict& out) {
  for (const auto& p : g.params) out.emplace(p.name, p.tensor);
  for (const auto& c : g.constants) out.emplace(c.name, c.tensor);
  for (const auto& n : g.nodes)  // a fusion group's tensors are its node's arguments
    EMBER_CHECK(!n.subgraph || (n.subgraph->params.empty() && n.subgraph->constants.empty()),
                "ember.jit.save: a fusion group holds its own tensors");
}

}  // namespace

std::string to_json(const Graph& g) {
  std::ostringstream os;
  write_graph(os, g);
  return os.str();
}

std::shared_ptr<Graph> from_json(const std::string& text, const TensorDict& tensors, const std::string& what) {
  json::Json doc = json::parse(text.data(), text.size(), what + ": invalid ember.jit graph JSON");
  auto g = Reader(tensors, what).graph(doc, 0);
  prepare(*g);
  return g;
}

void save_graph(const Graph& g, const std::string& path) {
  TensorDict tensors;
  collect_tensors(g, tensors);
  ember::save(tensors, path, {{"format", "ember.jit"}, {"graph", to_json(g)}});
}

std::shared_ptr<Graph> load_graph(const std::string& path) {
  StringDict meta;
  TensorDict tensors = ember::load_file(path, &meta);
  std::string fmt, graph;
  for (const auto& kv : meta) {
    if (kv.first == "format") fmt = kv.second;
    if (kv.first == "graph") graph = kv.second;
  }
  EMBER_CHECK(fmt == "ember.jit" && !graph.empty(), path,
              ": not an ember.jit graph file (a safetensors file without the ember.jit metadata)");
  return from_json(graph, tensors, path);
}

}  // namespace ember::jit
