// The CPU's embedding entries: the range of an index tensor, and embedding_bag's validation and
// bag plan (which indices take part, their bags and slots), read on the host.
#include <algorithm>
#include <vector>

#include "ember/generated/ops.h"
#include "ember/kernels/embedding.h"

namespace ember {

namespace {

std::vector<int64_t> to_vec(const Tensor& t) {
  Tensor c = t.reshape({-1}).to(kLong).contiguous();
  const int64_t* p = static_cast<const int64_t*>(c.data_ptr());
  return std::vector<int64_t>(p, p + c.numel());
}

Tensor long_tensor(const std::vector<int64_t>& v) {
  Tensor t = empty_tensor({int64_t(v.size())}, kLong);
  std::copy(v.begin(), v.end(), static_cast<int64_t*>(t.data_ptr()));
  return t;
}

// read without recording
std::pair<int64_t, int64_t> index_range_cpu(const Tensor& indices) {
  Tensor flat = indices.reshape({-1}).to(kLong).contiguous();
  const int64_t* p = static_cast<const int64_t*>(flat.data_ptr());
  auto [lo, hi] = std::minmax_element(p, p + flat.numel());
  return {*lo, *hi};
}

EmbeddingBagPlan embedding_bag_plan_cpu(const Tensor& indices, const Tensor& offsets, int64_t num, int64_t pad,
                                        bool include_last_offset, bool with_slots) {
  const int64_t n = indices.numel();
  // bag boundaries
  std::vector<int64_t> off = to_vec(offsets);
  int64_t B = int64_t(off.size()) - (include_last_offset ? 1 : 0);
  EMBER_CHECK(B >= 0, "embedding_bag: offsets must have at least one element with include_last_offset=True");
  if (!off.empty()) {
    EMBER_CHECK(off[0] == 0, "offsets[0] has to be 0, i.e., the first sequence in the mini-batch has to start from "
                "position 0. However, got ", off[0]);
    EMBER_CHECK(off.back() <= n, "offsets[-1] can not be greater than input's length ", n, " but got offsets[-1] of ",
                off.back());
  }
  for (size_t i = 1; i < off.size(); i++)
    EMBER_CHECK(off[i - 1] <= off[i], "embedding_bag: offsets must be non-decreasing, but got offsets[", i - 1, "] = ",
                off[i - 1], " > offsets[", i, "] = ", off[i]);
  std::vector<int64_t> idx = to_vec(indices);
  for (int64_t i = 0; i < n; i++)
    EMBER_CHECK(idx[size_t(i)] >= 0 && idx[size_t(i)] < num, "Index ", i, " of input takes value ", idx[size_t(i)],
                " which is not in the valid range [0, ", num, ")");
  // the bag of each index
  std::vector<int64_t> bag_of(size_t(n), -1), bag_size(size_t(B), 0);
  for (int64_t b = 0; b < B; b++) {
    // with include_last_offset the offsets close the last bag too (its documented value is the
    // input's length); without, the last bag runs to the end of the input
    int64_t end = b + 1 < int64_t(off.size()) ? off[size_t(b) + 1] : n;
    for (int64_t i = off[size_t(b)]; i < end; i++) {
      bag_of[size_t(i)] = b;
      if (idx[size_t(i)] != pad) bag_size[size_t(b)]++;
    }
  }
  // the rows that take part: in a bag and not padding
  std::vector<int64_t> keep, keep_bag;
  for (int64_t i = 0; i < n; i++)
    if (bag_of[size_t(i)] >= 0 && idx[size_t(i)] != pad) {
      keep.push_back(i);
      keep_bag.push_back(bag_of[size_t(i)]);
    }
  EmbeddingBagPlan plan;
  plan.bags = B;
  plan.max_bag = B ? *std::max_element(bag_size.begin(), bag_size.end()) : 0;
  if (with_slots) {  // each kept row's position within its bag
    std::vector<int64_t> slot(keep.size()), fill(size_t(B), 0);
    for (size_t j = 0; j < keep.size(); j++) slot[j] = fill[size_t(keep_bag[j])]++;
    plan.keep_slot = long_tensor(slot);
  }
  plan.keep = long_tensor(keep);
  plan.keep_bag = long_tensor(keep_bag);
  plan.offset2bag = long_tensor(bag_of);
  plan.bag_size = long_tensor(bag_size);
  return plan;
}

}  // namespace

EMBER_REGISTER_KERNEL(index_range_stub, CPU, &index_range_cpu);
EMBER_REGISTER_KERNEL(embedding_bag_plan_stub, CPU, &embedding_bag_plan_cpu);

}  // namespace ember
