#pragma once
// torch::data::make_data_loader: libtorch's loader over a dataset value and a sampler. Iterating it
// yields the dataset's batches (std::vector<Example> unmapped, one Example after Stack<>) in sampler
// order; with workers > 0, Ember's worker threads (ember::data::detail::OrderedWorkers) build batches
// ahead of the loop.
#include <cstddef>
#include <memory>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

#include "ember/data/data.h"
#include "ember/nn/module.h"
#include "torch/data/samplers.h"

namespace torch::data {

struct DataLoaderOptions {
  DataLoaderOptions() = default;
  DataLoaderOptions(size_t batch_size) : batch_size_(batch_size) {}  // NOLINT: implicit, as libtorch

  EMBER_ARG(size_t, batch_size) = 1;
  EMBER_ARG(size_t, workers) = 0;
  EMBER_ARG(std::optional<size_t>, max_jobs);  // batches in flight; 2 * workers when unset
  // Batches arrive in sampler order either way; kept so libtorch code that sets it compiles.
  EMBER_ARG(bool, enforce_ordering) = true;
  EMBER_ARG(bool, drop_last) = false;
};

template <class Dataset, class Sampler>
class StatelessDataLoader {
 public:
  using BatchType = typename Dataset::BatchType;
  using BatchRequestType = typename Sampler::BatchRequestType;

  StatelessDataLoader(Dataset dataset, Sampler sampler, DataLoaderOptions options)
      : dataset_(std::move(dataset)), sampler_(std::move(sampler)), options_(std::move(options)) {
    EMBER_CHECK_KIND(options_.batch_size() > 0, Value, "batch_size should be a positive integer value, but got batch_size=0");
  }
  ~StatelessDataLoader() { join(); }
  StatelessDataLoader(const StatelessDataLoader&) = delete;
  StatelessDataLoader& operator=(const StatelessDataLoader&) = delete;

  class Iterator {
   public:
    using iterator_category = std::input_iterator_tag;
    using value_type = BatchType;
    using difference_type = std::ptrdiff_t;
    using pointer = BatchType*;
    using reference = BatchType&;

    BatchType& operator*() { return *current_; }
    BatchType* operator->() { return &*current_; }
    Iterator& operator++() {
      current_ = loader_->next(++index_);
      return *this;
    }
    // The end iterator is a sentinel: equal to any iterator whose epoch is over.
    bool operator==(const Iterator& other) const { return done() == other.done() && (done() || index_ == other.index_); }
    bool operator!=(const Iterator& other) const { return !(*this == other); }

   private:
    friend class StatelessDataLoader;
    Iterator(StatelessDataLoader* loader, size_t index, std::optional<BatchType> current)
        : loader_(loader), index_(index), current_(std::move(current)) {}
    bool done() const { return !current_.has_value(); }
    StatelessDataLoader* loader_;
    size_t index_;
    std::optional<BatchType> current_;
  };

  // Starts an epoch: resets the sampler and (with workers) starts building batches.
  Iterator begin() {
    join();
    sampler_.reset(dataset_.size());
    requests_.clear();
    while (auto request = sampler_.next(options_.batch_size())) {
      if (options_.drop_last() && request->size() < options_.batch_size()) break;
      requests_.push_back(std::move(*request));
    }
    built_.assign(requests_.size(), std::nullopt);
    if (options_.workers() > 0) {
      size_t window = options_.max_jobs().value_or(2 * options_.workers());
      workers_ = std::make_unique<ember::data::detail::OrderedWorkers>(
          requests_.size(), int64_t(options_.workers()), window,
          [this](size_t i) { built_[i] = dataset_.get_batch(requests_[i]); });
    }
    return Iterator(this, 0, next(0));
  }
  Iterator end() { return Iterator(this, 0, std::nullopt); }

  // Stops the workers of the current epoch.
  void join() {
    if (workers_) workers_->stop();
    workers_.reset();
  }
  const DataLoaderOptions& options() const noexcept { return options_; }

 private:
  std::optional<BatchType> next(size_t index) {
    if (index >= requests_.size()) {
      join();
      return std::nullopt;
    }
    if (!workers_) return dataset_.get_batch(requests_[index]);
    workers_->wait(index);
    std::optional<BatchType> out = std::move(built_[index]);
    built_[index].reset();
    return out;
  }

  Dataset dataset_;
  Sampler sampler_;
  DataLoaderOptions options_;
  std::vector<BatchRequestType> requests_;
  std::vector<std::optional<BatchType>> built_;  // one slot per batch, filled by the workers
  std::unique_ptr<ember::data::detail::OrderedWorkers> workers_;
};

// A loader with a sampler of your choosing.
template <class Dataset, class Sampler, class = typename Sampler::BatchRequestType>
std::unique_ptr<StatelessDataLoader<Dataset, Sampler>> make_data_loader(Dataset dataset, Sampler sampler,
                                                                        DataLoaderOptions options = DataLoaderOptions()) {
  return std::make_unique<StatelessDataLoader<Dataset, Sampler>>(std::move(dataset), std::move(sampler),
                                                                  std::move(options));
}

// A loader whose Sampler (RandomSampler by default) is built from the dataset's size.
template <class Sampler = samplers::RandomSampler, class Dataset,
          class = std::enable_if_t<std::is_constructible_v<Sampler, size_t>>>
std::unique_ptr<StatelessDataLoader<Dataset, Sampler>> make_data_loader(Dataset dataset,
                                                                        DataLoaderOptions options = DataLoaderOptions()) {
  std::optional<size_t> size = dataset.size();
  EMBER_CHECK_KIND(size.has_value(), Value, "make_data_loader: the dataset's size() is unknown; pass a sampler");
  Sampler sampler(*size);
  return make_data_loader(std::move(dataset), std::move(sampler), std::move(options));
}

}  // namespace torch::data
