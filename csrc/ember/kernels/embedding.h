#pragma once
// The embedding family's kernel entries (ops/nn_embedding.cpp; kernels/cpu/embedding.cpp holds the
// CPU's): the index bookkeeping whose results decide output sizes.
#include <utility>

#include "ember/core/tensor.h"
#include "ember/kernels/registry.h"

namespace ember {
using IndexRange = std::pair<int64_t, int64_t>;  // [min, max]

// embedding_bag's plan: which indices take part and where their rows go.
struct EmbeddingBagPlan {
  int64_t bags = 0, max_bag = 0;        // bag count, largest bag (without padding)
  Tensor keep, keep_bag, keep_slot;     // per taking-part index: its position, its bag, its slot in the bag
  Tensor offset2bag, bag_size;          // per index: its bag (-1: none); per bag: its size
};
}  // namespace ember

// [min, max] of an integer tensor with numel > 0
EMBER_DECLARE_STUB(index_range_stub, IndexRange, (const Tensor& indices))
// Validates offsets (first 0, non-decreasing, at most n) and indices (in [0, num)) with PyTorch's
// messages and plans the bags; `pad` is the padding index or -1; keep_slot only `with_slots`
EMBER_DECLARE_STUB(embedding_bag_plan_stub, EmbeddingBagPlan,
                   (const Tensor& indices, const Tensor& offsets, int64_t num, int64_t pad, bool include_last_offset,
                    bool with_slots))
