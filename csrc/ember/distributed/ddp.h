#pragma once
// The C++ side of data-parallel training, for programs without Python: the default group from
// the environment torchrun / ember.distributed.run sets, and DDP over a module's tensors.
//
//   auto pg = ember::distributed::init_process_group();            // RANK, WORLD_SIZE, MASTER_*
//   ember::distributed::DistributedDataParallel ddp(model->parameters(), model->buffers(), pg);
//   for (...) { ddp.before_forward(); Tensor loss = ...; ddp.after_forward(); loss.backward(); opt.step(); }
#include <string>
#include <vector>

#include "ember/distributed/process_group.h"
#include "ember/distributed/reducer.h"

namespace ember::distributed {

// A Gloo group of WORLD_SIZE processes, this one RANK, meeting at MASTER_ADDR:MASTER_PORT
// (rank 0 hosts the TCPStore). Raises naming the missing variable.
EMBER_API ProcessGroupPtr init_process_group(Milliseconds timeout = Milliseconds(30 * 60 * 1000));

// root's values into every rank's tensors, one broadcast per dtype (DDP's initial state sync).
EMBER_API void broadcast_coalesced(ProcessGroup& pg, const std::vector<Tensor>& tensors, int root = 0);

class EMBER_API DistributedDataParallel {
 public:
  // Broadcasts rank 0's parameters and buffers, then reduces gradients as Python's DDP does.
  DistributedDataParallel(std::vector<Tensor> parameters, std::vector<Tensor> buffers, ProcessGroupPtr pg,
                          const ReducerOptions& opts = {});
  // Before each forward: rank 0's buffers (BatchNorm statistics) to every rank.
  void before_forward();
  // After a forward whose backward should average the gradients (skip it for no_sync steps).
  void after_forward(const std::vector<Tensor>& outputs = {});
  ProcessGroup& process_group() { return *pg_; }
  Reducer& reducer() { return *reducer_; }

 private:
  std::vector<Tensor> buffers_;
  ProcessGroupPtr pg_;
  std::unique_ptr<Reducer> reducer_;
};

}  // namespace ember::distributed
