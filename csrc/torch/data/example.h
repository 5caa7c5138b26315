#pragma once
// torch::data::Example: one sample (or a stacked batch) of libtorch's templated data layer.
#include <utility>

#include "ember/core/tensor.h"

namespace torch::data {

template <class Data = ember::Tensor, class Target = ember::Tensor>
struct Example {
  using DataType = Data;
  using TargetType = Target;

  Example() = default;
  Example(Data data, Target target) : data(std::move(data)), target(std::move(target)) {}

  Data data;
  Target target;
};

namespace example {
using NoTarget = void;  // Example<Data, NoTarget>: an example with data only
}  // namespace example

template <class Data>
struct Example<Data, example::NoTarget> {
  using DataType = Data;
  using TargetType = example::NoTarget;

  Example() = default;
  Example(Data data) : data(std::move(data)) {}  // NOLINT: implicit, as libtorch

  operator Data&() { return data; }
  operator const Data&() const { return data; }

  Data data;
};

using TensorExample = Example<ember::Tensor, example::NoTarget>;

}  // namespace torch::data
