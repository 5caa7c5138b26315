#pragma once
// The graph that ember.jit.trace records and ember.compile / ember::jit::load run: a straight list
// of op calls in SSA form. Every value is a tensor; non-tensor arguments are constants baked into
// the node (an op's schema says which). Ops are named by their ops.yaml schema name ("add",
// "sum.dim_IntList", "conv2d") plus a variant, so one declaration serves eager code, the tracer,
// the interpreter and the file format. Design note: docs in csrc/ember/jit/README.md.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ember/core/tensor.h"

namespace ember::jit {

// A node argument: a value reference or a constant of one of the schema's argument types.
struct Arg {
  enum class Kind : uint8_t {
    None,     // an absent optional (Tensor? / int? / ... = None)
    Value,    // a tensor: env[id]
    Values,   // a Tensor[]: env[ids[k]]
    Int,      // int, and Scalar holding an integer
    Ints,     // int[]
    Float,    // float, and Scalar holding a floating-point number
    Bool,     // bool, and Scalar holding a bool
    Str,      // str
    Dtype,    // ScalarType: i is the ScalarType's number
    Options,  // TensorOptions: i = dtype number or -1, s = device string, b = requires_grad
    MemoryFormat,  // i is the MemoryFormat's number
  };
  Kind kind = Kind::None;
  int64_t i = 0;
  double f = 0;
  bool b = false;
  std::string s;
  std::vector<int64_t> ints;  // Ints, and the value ids of Values

  static Arg none() { return {}; }
  static Arg value(int64_t id) { Arg a; a.kind = Kind::Value; a.i = id; return a; }
  static Arg integer(int64_t v) { Arg a; a.kind = Kind::Int; a.i = v; return a; }
  static Arg real(double v) { Arg a; a.kind = Kind::Float; a.f = v; return a; }
  static Arg boolean(bool v) { Arg a; a.kind = Kind::Bool; a.b = v; return a; }
};

enum class Variant : uint8_t { Functional = 0, Inplace = 1, Out = 2 };

struct Node {
  std::string op;              // ops.yaml schema name, or "prim::..." (see below)
  Variant variant = Variant::Functional;
  std::vector<Arg> args;       // every schema parameter in schema order (out= tensors first for Out)
  std::vector<int64_t> outputs;  // value ids; a Tensor[] result has one id per element
  // prim::FusionGroup: the fused subgraph (its inputs are args, in order). Other nodes: null.
  std::shared_ptr<struct Graph> subgraph;
  // Resolved once by the interpreter: the boxed op (see registry.h). Not serialized.
  mutable const void* fn = nullptr;
};
// prim ops:
//   prim::guard_values(Value v, Value expected)  the trace read v's values into Python
//                                               (item(), bool(), tolist(), numpy()): replay
//                                               raises GuardError unless v equals expected.
//   prim::detach(Value v) -> v.detach()
//   prim::FusionGroup(args...) -> outputs       runs node.subgraph as one fused kernel.

struct InputSpec {
  int64_t value = -1;
  std::string name;
  ScalarType dtype = ScalarType::Float;
  std::vector<int64_t> shape;  // as traced
  bool requires_grad = false;
};

struct NamedTensor {
  int64_t value = -1;
  std::string name;  // parameters: the module's state_dict name; constants: "__constant_<k>"
  Tensor tensor;
};

// How outputs nest: a single value, or a tuple/list of nested outputs.
struct OutputSpec {
  enum class Kind : uint8_t { Value, Tuple, List } kind = Kind::Value;
  int64_t value = -1;
  std::vector<OutputSpec> items;
};

// What the trace saw of a value: its dtype and shape then (shapes may differ at replay unless
// static_shapes; dtypes never do, since input dtypes are part of the signature).
struct ValueInfo {
  ScalarType dtype = ScalarType::Float;
  std::vector<int64_t> shape;
};

struct Graph {
  int64_t num_values = 0;
  std::vector<ValueInfo> values;  // indexed by value id (filled by the tracer)
  std::vector<InputSpec> inputs;
  std::vector<NamedTensor> params;     // module parameters and buffers, by name
  std::vector<NamedTensor> constants;  // other tensors the trace captured
  std::vector<Node> nodes;
  OutputSpec output;
  // The trace read an input-derived tensor's shape into Python (size(), shape, numel(), len()):
  // its Python arithmetic may have baked a dimension in, so only the traced input shapes are
  // accepted. Otherwise any shape the ops accept runs (ops recompute shapes themselves).
  bool static_shapes = false;
  std::string static_shapes_reason;  // where it was read, for the error message

  // Set by jit::prepare (interpreter.h): resolved ops and value lifetimes. Not serialized.
  std::shared_ptr<const void> plan;

  int64_t new_value() {
    values.emplace_back();
    return num_values++;
  }
};

}  // namespace ember::jit
