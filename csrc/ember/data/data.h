#pragma once
// ember::data: datasets, transforms, samplers and a DataLoader for C++ training loops.
//   auto train = std::make_shared<data::datasets::MNIST>(root)->map(data::transforms::Normalize(0.2860, 0.3530));
//   data::DataLoader loader(train, data::DataLoaderOptions().batch_size(64).shuffle(true).workers(2));
//   for (data::Example& batch : loader) { ... batch.data, batch.target ... }
// A DataLoader's workers are threads: each builds whole batches (get + transform + collate) in
// parallel with training, and batches are delivered in sampler order.
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "ember/nn/module.h"

namespace ember::data {

// One sample, or a collated batch.
struct Example {
  Tensor data, target;
};

namespace transforms {
class Transform;
}

class EMBER_API Dataset : public std::enable_shared_from_this<Dataset> {
 public:
  virtual ~Dataset();
  virtual Example get(int64_t index) = 0;
  virtual int64_t size() const = 0;
  // This dataset with `transform` applied to every example (the dataset must be owned by a shared_ptr).
  std::shared_ptr<Dataset> map(std::shared_ptr<transforms::Transform> transform);
  template <class T, class = std::enable_if_t<std::is_base_of_v<transforms::Transform, T>>>
  std::shared_ptr<Dataset> map(T transform) {
    return map(std::shared_ptr<transforms::Transform>(std::make_shared<T>(std::move(transform))));
  }
};
using DatasetPtr = std::shared_ptr<Dataset>;

// Rows of `data` with the rows of `targets`.
class EMBER_API TensorDataset : public Dataset {
 public:
  TensorDataset(Tensor data, Tensor targets);
  Example get(int64_t index) override;
  int64_t size() const override { return data_.size(0); }
 private:
  Tensor data_, targets_;
};

namespace datasets {

// MNIST-format IDX files (MNIST, Fashion-MNIST): {train,t10k}-{images-idx3,labels-idx1}-ubyte, raw or
// .gz. Images are float32 (N, 1, 28, 28) scaled to [0, 1], targets int64 (N), as libtorch's MNIST.
class EMBER_API MNIST : public Dataset {
 public:
  enum class Mode { kTrain, kTest };
  explicit MNIST(const std::string& root, Mode mode = Mode::kTrain);
  Example get(int64_t index) override;
  int64_t size() const override { return images_.size(0); }
  bool is_train() const { return train_; }
  const Tensor& images() const { return images_; }
  const Tensor& targets() const { return targets_; }
 private:
  Tensor images_, targets_;
  bool train_;
};

// The raw contents of an unsigned-byte IDX file (gzip-compressed or not) as a uint8 tensor.
EMBER_API Tensor read_idx(const std::string& path);

}  // namespace datasets

namespace transforms {

// A per-example transform (Dataset::map).
class EMBER_API Transform {
 public:
  virtual ~Transform();
  virtual Example apply(Example example) const = 0;
};

// (data - mean) / std, one value for all channels or one per channel (dim 0 of the example).
class EMBER_API Normalize : public Transform {
 public:
  Normalize(double mean, double stddev);
  Normalize(std::vector<double> mean, std::vector<double> stddev);
  Example apply(Example example) const override;
 private:
  std::vector<double> mean_, std_;
};

class EMBER_API Lambda : public Transform {
 public:
  explicit Lambda(std::function<Example(Example)> fn);
  Example apply(Example example) const override;
 private:
  std::function<Example(Example)> fn_;
};

// Turns the examples of a batch into one Example.
class EMBER_API Collation {
 public:
  virtual ~Collation();
  virtual Example apply_batch(std::vector<Example> examples) const = 0;
};

// Stacks data and targets along a new dim 0.
class EMBER_API Stack : public Collation {
 public:
  Example apply_batch(std::vector<Example> examples) const override;
};

}  // namespace transforms

// The order in which a DataLoader visits a dataset, drawn anew every epoch.
class EMBER_API Sampler {
 public:
  virtual ~Sampler();
  virtual std::vector<int64_t> indices(int64_t size) = 0;
};

class EMBER_API SequentialSampler : public Sampler {
 public:
  std::vector<int64_t> indices(int64_t size) override;
};

// A random permutation per epoch, drawn from the default generator (ember::manual_seed), as randperm.
class EMBER_API RandomSampler : public Sampler {
 public:
  std::vector<int64_t> indices(int64_t size) override;
};

namespace detail {
// Builds tasks 0..n-1 on worker threads, at most `window` tasks ahead of the consumer; shared by
// DataLoader and the libtorch-style loader (torch/data.h), which keep each task's result in their own
// slot. build(i) runs with grad off; its exceptions reach the consumer through wait().
class EMBER_API OrderedWorkers {
 public:
  OrderedWorkers(size_t tasks, int64_t workers, size_t window, std::function<void(size_t)> build);
  ~OrderedWorkers();
  OrderedWorkers(const OrderedWorkers&) = delete;
  OrderedWorkers& operator=(const OrderedWorkers&) = delete;
  // Blocks until task `index` is built (rethrowing a worker's exception), then lets the workers move on
  // past it: call it with increasing indices, and read the task's slot after it returns.
  void wait(size_t index);
  void stop();  // joins the workers; unbuilt tasks are abandoned

 private:
  struct State;
  std::unique_ptr<State> state_;
};
}  // namespace detail

struct DataLoaderOptions {
  EMBER_ARG(int64_t, batch_size) = 1;
  EMBER_ARG(bool, shuffle) = false;    // RandomSampler when no sampler is given
  EMBER_ARG(int64_t, workers) = 0;     // 0: batches are built in the iterating thread
  EMBER_ARG(bool, drop_last) = false;
  EMBER_ARG(int64_t, prefetch_factor) = 2;  // batches in flight per worker
};

class EMBER_API DataLoader {
 public:
  DataLoader(DatasetPtr dataset, const DataLoaderOptions& options = {}, std::shared_ptr<Sampler> sampler = nullptr,
             std::shared_ptr<transforms::Collation> collate = nullptr);
  ~DataLoader();
  DataLoader(const DataLoader&) = delete;
  DataLoader& operator=(const DataLoader&) = delete;

  class EMBER_API Iterator {
   public:
    Example& operator*() { return current_; }
    Example* operator->() { return &current_; }
    Iterator& operator++();
    bool operator!=(const Iterator& other) const { return index_ != other.index_; }
    bool operator==(const Iterator& other) const { return index_ == other.index_; }
   private:
    friend class DataLoader;
    Iterator(DataLoader* loader, size_t index);
    DataLoader* loader_;
    size_t index_;
    Example current_;
  };

  // Starts an epoch (a new sampler order); a loader runs one epoch at a time.
  Iterator begin();
  Iterator end();
  size_t size() const;  // batches per epoch
  const DataLoaderOptions& options() const { return options_; }

 private:
  struct Epoch;
  Example build(const std::vector<int64_t>& indices) const;
  Example next(size_t index);
  void stop();

  DatasetPtr dataset_;
  DataLoaderOptions options_;
  std::shared_ptr<Sampler> sampler_;
  std::shared_ptr<transforms::Collation> collate_;
  std::unique_ptr<Epoch> epoch_;
};

}  // namespace ember::data
