#pragma once
// DDP's gradient reducer: parameters are grouped into buckets (in reverse registration order,
// which is roughly the order backward produces their gradients); when the last gradient of a
// bucket has been accumulated its all-reduce is queued at once, so communication runs on the
// group's thread while backward goes on. At the end of backward (an engine callback) the
// reducer waits for the buckets and writes the averaged gradients back.
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "ember/distributed/process_group.h"

namespace ember::distributed {

struct ReducerOptions {
  int64_t bucket_cap_bytes = 25 * 1024 * 1024;  // torch's bucket_cap_mb = 25
  int64_t first_bucket_bytes = 1024 * 1024;     // the first bucket small: its reduce starts early
  bool find_unused_parameters = false;
};

struct ReducerStats {
  int64_t iterations = 0;
  int64_t buckets_reduced = 0;
  int64_t comm_ns = 0;     // time the group spent all-reducing buckets
  int64_t exposed_ns = 0;  // of which backward's end waited for (not hidden behind backward)
};

// One bucket as a communication hook sees it (torch.distributed.GradBucket).
struct GradBucket {
  int64_t index = 0;
  bool is_last = false;              // the last bucket of the iteration (launched last)
  Tensor buffer;                     // the bucket's local gradients back to back, not yet averaged
  std::vector<Tensor> parameters;    // in bucket order
  std::vector<int64_t> offsets;      // element offset of each parameter's gradient in buffer
  // The gradients as views of buffer, shaped like their parameters.
  std::vector<Tensor> gradients() const;
};

// A communication hook replaces a bucket's all-reduce (DDP.register_comm_hook): it is called
// when the bucket is ready, starts whatever reduction it wants, and returns a function that
// waits for it and gives the bucket's final gradients (buffer's size; any dtype, cast back).
// Unlike the built-in all-reduce, the buffer is handed over unaveraged: the hook divides.
using CommHook = std::function<std::function<Tensor()>(GradBucket&)>;

class EMBER_API Reducer {
 public:
  Reducer(std::vector<Tensor> params, ProcessGroupPtr pg, const ReducerOptions& opts = {});
  ~Reducer();
  Reducer(const Reducer&) = delete;
  Reducer& operator=(const Reducer&) = delete;

  // Arms the reducer for the backward of this forward's outputs. With find_unused_parameters the
  // graph behind `outputs` is searched and parameters outside it count as ready (zero gradient).
  // Raises when the previous armed backward did not produce every parameter's gradient.
  void prepare_for_backward(const std::vector<Tensor>& outputs);

  // Replaces the buckets' all-reduce by `hook` from the next backward on; once per reducer.
  void register_comm_hook(CommHook hook);
  // torch's built-in hooks (DDP._register_builtin_comm_hook) on this reducer's group, in C++: the
  // results of default_hooks' allreduce_hook and fp16_compress_hook without a call into Python per
  // bucket (DDP also takes this path when those Python hooks are registered on its own group).
  enum class BuiltinHook { AllReduce, Fp16Compress };
  void register_builtin_comm_hook(BuiltinHook kind);

  // Join (uneven inputs): the count of ranks the next backwards' buckets are averaged over (0, the
  // default: the group's size); and, on a rank that has joined, one backward's collectives with zero
  // gradients, whose results (the other ranks' average) become its .grad.
  void set_divisor(int64_t divisor);
  void join_shadow();

  // Parameter indices per bucket, in launch order.
  std::vector<std::vector<int64_t>> bucket_indices() const;
  ReducerStats stats() const;

  struct State;

 private:
  std::shared_ptr<State> s_;
};

}  // namespace ember::distributed
