#pragma once
// The fused expression both backends run: a straight list of primitive instructions in SSA form
// (instruction i defines register i), lowered from a prim::FusionGroup's subgraph. Composite ops
// (gelu, silu, leaky_relu, clamp, lerp, add with alpha) are expanded here, so the backends and the
// symbolic differentiation only know these primitives.
#include <cstdint>
#include <string>
#include <vector>

#include "ember/core/dtype.h"
#include "ember/core/macros.h"
#include "ember/jit/ir.h"

namespace ember::jit::fuser {

enum class Op : uint8_t {
  Input, Const,                                             // leaves: input #k / the constant k
  Neg, Exp, Log, Tanh, Sigmoid, Relu, Erf, Sqrt, Rsqrt, Abs,  // unary
  Reciprocal, Sin, Cos, Log1p, Expm1, Sign,
  Add, Sub, Mul, Div, Pow, Max, Min,                        // binary (Max/Min propagate NaN)
  Lt, Le, Gt, Ge, Eq, Ne,                                   // comparisons: 1 or 0 in the compute dtype
  Where,                                                    // a != 0 ? b : c
};
EMBER_API const char* op_name(Op op);
EMBER_API int op_arity(Op op);  // register operands (0 for leaves)

struct Instr {
  Op op = Op::Const;
  int32_t a = -1, b = -1, c = -1;  // operand registers
  int32_t input = -1;              // Input: which input
  double k = 0;                    // Const: the value
};

// Reductions end a chain: a reduced output sums (or averages) its register over the last dim or
// over every dim; all reduced outputs of one program share the mode.
enum class Reduce : uint8_t { None, LastDim, All };

struct Output {
  int32_t reg = -1;
  bool reduced = false;
  bool mean = false;     // divide the sum by the number of reduced elements
  bool keepdim = false;
  bool as_bool = false;  // a comparison read outside the group: stored as bool
};

struct Program {
  ScalarType dtype = kFloat;  // every register computes in this dtype (float32 or float64)
  int32_t num_inputs = 0;
  std::vector<Instr> code;
  std::vector<Output> outputs;
  Reduce reduce = Reduce::None;
  int64_t reduce_dim = -1;  // LastDim: the dim as the graph wrote it (-1, or ndim-1 at trace time)

  int32_t emit(Instr in) {
    code.push_back(in);
    return int32_t(code.size()) - 1;
  }
  // A canonical text form: the cache key of compiled kernels, and readable in error messages.
  EMBER_API std::string key() const;
};

// Lowers a fusion subgraph (its inputs are the group's inputs, in order). Throws for an op the
// fuser does not know (the pass only groups known ops, so that means a hand-made bad graph).
EMBER_API Program lower(const Graph& sub);

// True when fuse() may put this node in a group (before dtype and shape checks).
EMBER_API bool is_fusible_op(const Node& n);
// Broadcasts `full` with `s` in place (numpy rules); false if they do not broadcast.
bool broadcast_into(std::vector<int64_t>& full, IntArrayRef s);
EMBER_API bool is_reduction_op(const std::string& op);

// Reverse-mode derivative of `fwd`: inputs are fwd's inputs then one gradient per fwd output (a
// reduced output's gradient arrives broadcastable to the full shape, already divided by the count
// for a mean); outputs are the gradients of the inputs listed in `wrt`, at the full (broadcast)
// shape. Inputs with no path to an output get a Const 0 output.
EMBER_API Program differentiate(const Program& fwd, const std::vector<int32_t>& wrt);

// Removes instructions no output reads, renumbering the rest.
EMBER_API Program prune(const Program& p);

}  // namespace ember::jit::fuser
