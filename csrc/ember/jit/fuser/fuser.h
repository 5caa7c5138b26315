#pragma once
// ember::jit::fuser: fusion of elementwise chains (and the reductions that end them) in a traced
// graph (ir.h) into prim::FusionGroup nodes, and the kernels that run them.
//
//   fuse(g)                  groups fusible nodes; each group runs as one loop over memory
//   run_group(node, inputs)  runs a prim::FusionGroup on the actual inputs (any broadcastable
//                            shapes, any strides); records one autograd node whose backward is
//                            itself a fused kernel (symbolic derivative of the group)
//
// Two backends run a group: C++ generated per group and compiled with the system compiler
// (cached on disk), or a vectorizing interpreter inside libember. EMBER_FUSER=codegen|interp
// picks one; the default is codegen where a compiler is found (see README.md in this directory
// for the measurements), else interp.
#include <cstdint>
#include <optional>
#include <vector>

#include "ember/core/macros.h"
#include "ember/core/tensor.h"
#include "ember/jit/ir.h"

namespace ember::jit::fuser {

EMBER_API void fuse(Graph& g);

EMBER_API std::vector<Tensor> run_group(const Node& n, const std::vector<Tensor>& inputs);

// How run_group calls went since the process started: as one fused loop, or op by op because the
// actual shapes did not fit one loop (tests check which path ran).
struct Stats {
  uint64_t fused = 0, eager = 0;
};
EMBER_API Stats stats();

enum class Backend { Codegen, Interp };
// The backend run_group uses: set_backend's, else EMBER_FUSER's, else the default.
EMBER_API Backend backend();
EMBER_API void set_backend(std::optional<Backend> b);  // nullopt: back to EMBER_FUSER / default

// The unfused reference: the subgraph's nodes run one by one as eager ops (what run_group falls
// back to when the actual shapes do not allow one loop, e.g. an output smaller than the others).
EMBER_API std::vector<Tensor> run_subgraph_eager(const Graph& sub, const std::vector<Tensor>& inputs);

}  // namespace ember::jit::fuser
