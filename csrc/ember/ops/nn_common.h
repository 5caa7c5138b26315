#pragma once
// Shared helpers of the neural-network ops (ops/nn_*.cpp).
#include <cstdint>

#include "ember/core/operators.h"

namespace ember {

// PyTorch's loss reductions, the `int reduction` argument of the losses (at::Reduction).
namespace Reduction {
enum Reduction : int64_t { None = 0, Mean = 1, Sum = 2 };
}

namespace nn_detail {

inline void check_reduction(int64_t reduction) {
  EMBER_CHECK_KIND(reduction >= 0 && reduction <= 2, Value, reduction, " is not a valid value for reduction");
}

// loss.mean() / loss.sum() / loss, as PyTorch's apply_loss_reduction.
inline Tensor apply_loss_reduction(const Tensor& loss, int64_t reduction) {
  check_reduction(reduction);
  if (reduction == Reduction::Mean) return loss.mean();
  if (reduction == Reduction::Sum) return loss.sum();
  return loss;
}

// The NotImplementedError PyTorch raises for a kernel without integer support.
inline void check_floating(const Tensor& t, const char* kernel) {
  EMBER_CHECK_KIND(is_floating(t.dtype()), NotImplemented, "\"", kernel, "\" not implemented for '", t.dtype(), "'");
}

inline Tensor scalar(double v) { return scalar_to_tensor(Scalar(v)); }

}  // namespace nn_detail
}  // namespace ember
