#pragma once
// Running a jit::Graph: the signature check, then each node in order on real tensors (so aliasing,
// in-place updates and autograd behave as they did in eager code), each value released after its
// last use.
#include <vector>

#include "ember/core/error.h"
#include "ember/core/tensor.h"
#include "ember/jit/ir.h"

namespace ember::jit {

// Resolves every node's op and computes when values die. Raises for an unknown op or a value used
// before it is defined (a graph from a file is not trusted). Idempotent.
EMBER_API void prepare(Graph& g);

// Raises RuntimeError if `inputs` do not fit the traced signature (count, dtype, rank, and the
// exact shapes when g.static_shapes).
EMBER_API void check_inputs(const Graph& g, const std::vector<Tensor>& inputs);

// Runs a prepared graph; returns the output leaves in depth-first order of g.output.
EMBER_API std::vector<Tensor> run(const Graph& g, const std::vector<Tensor>& inputs);

// The leaves of an output spec, depth first.
EMBER_API void output_leaves(const OutputSpec& spec, std::vector<int64_t>& ids);

// A prim::guard_values check failed: the traced code read tensor values that differ now.
constexpr const char* kGuardFailedPrefix = "ember.jit: guard failed: ";

}  // namespace ember::jit
