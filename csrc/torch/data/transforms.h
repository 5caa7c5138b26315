#pragma once
// torch::data::transforms: what `.map(...)` applies to a dataset's batches, as libtorch's templates.
// A Transform works per example, a BatchTransform (and a Collation such as Stack) on whole batches.
#include <functional>
#include <utility>
#include <vector>

#include "ember/data/data.h"
#include "ember/generated/ops.h"
#include "torch/data/example.h"

namespace torch::data::transforms {

template <class InputBatch, class OutputBatch>
class BatchTransform {
 public:
  using InputBatchType = InputBatch;
  using OutputBatchType = OutputBatch;
  virtual ~BatchTransform() = default;
  virtual OutputBatch apply_batch(InputBatch input_batch) = 0;
};

// A per-example transform: apply_batch applies it to each example of a batch.
template <class Input, class Output>
class Transform : public BatchTransform<std::vector<Input>, std::vector<Output>> {
 public:
  using InputType = Input;
  using OutputType = Output;
  virtual Output apply(Input input) = 0;
  std::vector<Output> apply_batch(std::vector<Input> input_batch) override {
    std::vector<Output> out;
    out.reserve(input_batch.size());
    for (auto& in : input_batch) out.push_back(apply(std::move(in)));
    return out;
  }
};

template <class Input, class Output = Input>
class Lambda : public Transform<Input, Output> {
 public:
  using FunctionType = std::function<Output(Input)>;
  explicit Lambda(FunctionType function) : function_(std::move(function)) {}
  Output apply(Input input) override { return function_(std::move(input)); }
 private:
  FunctionType function_;
};

template <class Input, class Output = Input>
class BatchLambda : public BatchTransform<Input, Output> {
 public:
  using FunctionType = std::function<Output(Input)>;
  explicit BatchLambda(FunctionType function) : function_(std::move(function)) {}
  Output apply_batch(Input input_batch) override { return function_(std::move(input_batch)); }
 private:
  FunctionType function_;
};

// A transform of an example's data tensor only (the target passes through).
template <class Target = ember::Tensor>
class TensorTransform : public Transform<Example<ember::Tensor, Target>, Example<ember::Tensor, Target>> {
 public:
  using E = Example<ember::Tensor, Target>;
  virtual ember::Tensor operator()(ember::Tensor input) = 0;
  E apply(E input) override {
    input.data = (*this)(std::move(input.data));
    return input;
  }
};

template <class Target = ember::Tensor>
class TensorLambda : public TensorTransform<Target> {
 public:
  using FunctionType = std::function<ember::Tensor(ember::Tensor)>;
  explicit TensorLambda(FunctionType function) : function_(std::move(function)) {}
  ember::Tensor operator()(ember::Tensor input) override { return function_(std::move(input)); }
 private:
  FunctionType function_;
};

// (data - mean) / stddev with one value, or one per channel (dim 0): Ember's Normalize does the work.
template <class Target = ember::Tensor>
class Normalize : public TensorTransform<Target> {
 public:
  Normalize(double mean, double stddev) : impl_(mean, stddev) {}
  Normalize(std::vector<double> mean, std::vector<double> stddev) : impl_(std::move(mean), std::move(stddev)) {}
  ember::Tensor operator()(ember::Tensor input) override {
    return impl_.apply(ember::data::Example{std::move(input), ember::Tensor()}).data;
  }
 private:
  ember::data::transforms::Normalize impl_;
};

// Turns a batch of examples (RawBatch) into one value (Batch).
template <class Batch, class RawBatch = std::vector<Batch>>
using Collation = BatchTransform<RawBatch, Batch>;

template <class T = Example<>>
struct Stack;

// Stacks data and targets along a new dim 0.
template <>
struct Stack<Example<>> : public Collation<Example<>> {
  Example<> apply_batch(std::vector<Example<>> examples) override {
    EMBER_CHECK_KIND(!examples.empty(), Value, "Stack: an empty batch");
    std::vector<ember::Tensor> data, targets;
    data.reserve(examples.size());
    targets.reserve(examples.size());
    for (auto& e : examples) {
      data.push_back(std::move(e.data));
      targets.push_back(std::move(e.target));
    }
    return {ember::stack(data), ember::stack(targets)};
  }
};

// Stacks the data of target-less examples along a new dim 0.
template <>
struct Stack<TensorExample> : public Collation<TensorExample> {
  TensorExample apply_batch(std::vector<TensorExample> examples) override {
    EMBER_CHECK_KIND(!examples.empty(), Value, "Stack: an empty batch");
    std::vector<ember::Tensor> data;
    data.reserve(examples.size());
    for (auto& e : examples) data.push_back(std::move(e.data));
    return ember::stack(data);
  }
};

}  // namespace torch::data::transforms
