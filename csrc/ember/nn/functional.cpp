#include "ember/nn/functional.h"

namespace ember::nn::functional {

int64_t reduction_enum(const std::string& r) {
  if (r == "none") return 0;
  if (r == "mean") return 1;
  if (r == "sum") return 2;
  EMBER_FAIL(Value, r, " is not a valid value for reduction");
}

Tensor dropout(const Tensor& input, const DropoutFuncOptions& o) {
  EMBER_CHECK_KIND(o.p() >= 0 && o.p() <= 1, Value, "dropout probability has to be between 0 and 1, but got ", o.p());
  if (o.inplace()) return ember::dropout_(input, o.p(), o.training());
  return ember::dropout(input, o.p(), o.training());
}

Tensor cross_entropy(const Tensor& input, const Tensor& target, const CrossEntropyFuncOptions& o) {
  return ember::cross_entropy_loss(input, target, o.weight(), reduction_enum(o.reduction()), o.ignore_index(),
                                   o.label_smoothing());
}

Tensor nll_loss(const Tensor& input, const Tensor& target, const NLLLossFuncOptions& o) {
  return ember::nll_loss(input, target, o.weight(), reduction_enum(o.reduction()), o.ignore_index());
}

Tensor mse_loss(const Tensor& input, const Tensor& target, const MSELossFuncOptions& o) {
  return ember::mse_loss(input, target, reduction_enum(o.reduction()));
}

}  // namespace ember::nn::functional
