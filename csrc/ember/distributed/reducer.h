#pragma once
// DDP's gradient reducer: parameters are grouped into buckets (in reverse registration order,
// which is roughly the order backward produces their gradients); when the last gradient of a
// bucket has been accumulated its all-reduce is queued at once, so communication runs on the
// group's thread while backward goes on. At the end of backward (an engine callback) the
// reducer waits for the buckets and writes the averaged gradients back.
#include <cstdint>
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

  // Parameter indices per bucket, in launch order.
  std::vector<std::vector<int64_t>> bucket_indices() const;
  ReducerStats stats() const;

  struct State;

 private:
  std::shared_ptr<State> s_;
};

}  // namespace ember::distributed
