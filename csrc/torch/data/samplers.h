#pragma once
// torch::data::samplers: the order in which a loader requests batches; reset() starts an epoch.
#include <algorithm>
#include <cstddef>
#include <optional>
#include <vector>

#include "ember/core/tensor.h"
#include "ember/generated/ops.h"

namespace torch::data::samplers {

template <class BatchRequest = std::vector<size_t>>
class Sampler {
 public:
  using BatchRequestType = BatchRequest;
  virtual ~Sampler() = default;
  // Starts over, for a dataset of `new_size` examples when given.
  virtual void reset(std::optional<size_t> new_size) = 0;
  // The next (at most) batch_size indices, or nullopt when the epoch is over.
  virtual std::optional<BatchRequest> next(size_t batch_size) = 0;
};

// An empty batch would never end the epoch.
inline void check_batch_size(size_t batch_size) {
  EMBER_CHECK_KIND(batch_size > 0, Value, "batch_size should be a positive integer value, but got batch_size=0");
}

class SequentialSampler : public Sampler<> {
 public:
  explicit SequentialSampler(size_t size) : size_(size) {}
  void reset(std::optional<size_t> new_size = std::nullopt) override {
    if (new_size) size_ = *new_size;
    index_ = 0;
  }
  std::optional<std::vector<size_t>> next(size_t batch_size) override {
    check_batch_size(batch_size);
    if (index_ >= size_) return std::nullopt;
    size_t end = std::min(size_, index_ + batch_size);
    std::vector<size_t> batch;
    batch.reserve(end - index_);
    for (; index_ < end; index_++) batch.push_back(index_);
    return batch;
  }
  size_t index() const noexcept { return index_; }

 private:
  size_t size_, index_ = 0;
};

// A new random permutation per reset, drawn from the default generator (torch::manual_seed).
class RandomSampler : public Sampler<> {
 public:
  explicit RandomSampler(int64_t size, ember::ScalarType index_dtype = ember::kLong)
      : size_(size_t(size)) {
    (void)index_dtype;  // libtorch's signature; the order does not depend on the index dtype
    reset();
  }
  void reset(std::optional<size_t> new_size = std::nullopt) override {
    if (new_size) size_ = *new_size;
    ember::Tensor perm = ember::randperm(int64_t(size_));
    const int64_t* p = perm.data_ptr<int64_t>();
    order_.assign(p, p + size_);
    index_ = 0;
  }
  std::optional<std::vector<size_t>> next(size_t batch_size) override {
    check_batch_size(batch_size);
    if (index_ >= order_.size()) return std::nullopt;
    size_t end = std::min(order_.size(), index_ + batch_size);
    std::vector<size_t> batch(order_.begin() + index_, order_.begin() + end);
    index_ = end;
    return batch;
  }
  size_t index() const noexcept { return index_; }

 private:
  size_t size_;
  std::vector<size_t> order_;
  size_t index_ = 0;
};

}  // namespace torch::data::samplers
