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

}  // namespace torch::data
