#pragma once
// torch::data::datasets: libtorch's CRTP datasets. A dataset is a value (moved into its loader);
// `.map(t)` wraps it in a MapDataset whose batches are t.apply_batch(source batch).
#include <cstddef>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "ember/data/data.h"
#include "ember/generated/ops.h"
#include "torch/data/example.h"

namespace torch::data::datasets {

template <class Source, class AppliedTransform>
class MapDataset;

// A dataset that returns whole batches for a request (by default, the indices of the batch).
template <class Self, class Batch, class BatchRequest = std::vector<size_t>>
class BatchDataset {
 public:
  using SelfType = Self;
  using BatchType = Batch;
  using BatchRequestType = BatchRequest;
  static constexpr bool is_stateful = false;

  virtual ~BatchDataset() = default;
  virtual Batch get_batch(BatchRequest request) = 0;
  // Number of examples, or nullopt when unknown.
  virtual std::optional<size_t> size() const = 0;

  template <class TransformType>
  MapDataset<Self, TransformType> map(TransformType transform) & {
    return MapDataset<Self, TransformType>(static_cast<Self&>(*this), std::move(transform));
  }
  template <class TransformType>
  MapDataset<Self, TransformType> map(TransformType transform) && {
    return MapDataset<Self, TransformType>(std::move(static_cast<Self&>(*this)), std::move(transform));
  }
};

// A dataset of single examples: get(index); a batch is the vector of its examples.
template <class Self, class SingleExample = Example<>>
class Dataset : public BatchDataset<Self, std::vector<SingleExample>> {
 public:
  using ExampleType = SingleExample;

  virtual ExampleType get(size_t index) = 0;
  std::vector<ExampleType> get_batch(std::vector<size_t> indices) override {
    std::vector<ExampleType> batch;
    batch.reserve(indices.size());
    for (size_t i : indices) batch.push_back(get(i));
    return batch;
  }
};

template <class Source, class AppliedTransform>
using MappedBatch = decltype(std::declval<AppliedTransform&>().apply_batch(
    std::declval<typename Source::BatchType>()));

template <class Source, class AppliedTransform>
class MapDataset : public BatchDataset<MapDataset<Source, AppliedTransform>, MappedBatch<Source, AppliedTransform>,
                                       typename Source::BatchRequestType> {
 public:
  using DatasetType = Source;
  using TransformType = AppliedTransform;
  using BatchType = MappedBatch<Source, AppliedTransform>;
  using BatchRequestType = typename Source::BatchRequestType;
  static constexpr bool is_stateful = Source::is_stateful;

  MapDataset(Source dataset, AppliedTransform transform)
      : dataset_(std::move(dataset)), transform_(std::move(transform)) {}

  BatchType get_batch(BatchRequestType request) override {
    return transform_.apply_batch(dataset_.get_batch(std::move(request)));
  }
  std::optional<size_t> size() const override { return dataset_.size(); }

  const Source& dataset() const noexcept { return dataset_; }
  const AppliedTransform& transform() const noexcept { return transform_; }

 private:
  Source dataset_;
  AppliedTransform transform_;
};

template <class Source, class AppliedTransform>
MapDataset<Source, AppliedTransform> map(Source dataset, AppliedTransform transform) {
  return MapDataset<Source, AppliedTransform>(std::move(dataset), std::move(transform));
}

// The rows (dim 0) of one tensor, as target-less examples.
class TensorDataset : public Dataset<TensorDataset, TensorExample> {
 public:
  explicit TensorDataset(const std::vector<ember::Tensor>& tensors) : TensorDataset(ember::stack(tensors)) {}
  explicit TensorDataset(ember::Tensor tensor) : tensor(std::move(tensor)) {
    EMBER_CHECK_KIND(this->tensor.dim() > 0, Value, "TensorDataset: a 0-dim tensor has no rows");
  }
  TensorExample get(size_t index) override { return tensor[int64_t(index)]; }
  std::optional<size_t> size() const override { return size_t(tensor.size(0)); }

  ember::Tensor tensor;
};

// MNIST-format IDX files (MNIST, Fashion-MNIST) under `root`, raw or gzipped: images float (N, 1, 28, 28)
// in [0, 1], targets int64. Ember's reader parses the files.
class MNIST : public Dataset<MNIST> {
 public:
  enum Mode { kTrain, kTest };

  explicit MNIST(const std::string& root, Mode mode = Mode::kTrain) {
    ember::data::datasets::MNIST files(root, mode == kTrain ? ember::data::datasets::MNIST::Mode::kTrain
                                                            : ember::data::datasets::MNIST::Mode::kTest);
    images_ = files.images();
    targets_ = files.targets();
    train_ = mode == kTrain;
  }

  Example<> get(size_t index) override {
    EMBER_CHECK_KIND(index < size_t(images_.size(0)), Index, "index ", index, " is out of range for a dataset of size ",
                     images_.size(0));
    return {images_[int64_t(index)], targets_[int64_t(index)]};
  }
  std::optional<size_t> size() const override { return size_t(images_.size(0)); }
  bool is_train() const noexcept { return train_; }
  const ember::Tensor& images() const { return images_; }
  const ember::Tensor& targets() const { return targets_; }

 private:
  ember::Tensor images_, targets_;
  bool train_ = true;
};

}  // namespace torch::data::datasets
